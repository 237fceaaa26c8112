package httpapi

import (
	"fmt"
	"math/bits"
	"net/http"
	"strings"
)

// table matches a shard's routes as ServeMux would (whole-segment {name}
// wildcards; of the patterns matching a request the most specific, literal
// where the others have a wildcard; a GET pattern serves HEAD) without
// ServeMux's cost in a cold start: ServeMux checks each pattern it is given
// against the others and records its caller's line (runtime.Caller, whose
// first call reads the binary's line tables), 0.2 ms of a function's first
// request. The patterns ServeMux would refuse together are looked for by
// CheckRoutes, in the tests, not at each start.
type table []*entry

type entry struct {
	method string   // "" serves every method
	segs   []string // the pattern's segments: a literal, or "" for a wildcard
	names  []string // the wildcards' names, by segment
	wild   uint64   // bit i: segment i is a wildcard
	h      http.Handler
}

// add adds the pattern method path (method "" for any) served by h.
func (t *table) add(method, path string, h http.Handler) {
	segs := strings.Split(strings.TrimPrefix(path, "/"), "/")
	if len(segs) > 64 {
		panic(fmt.Sprintf("httpapi: pattern %s has over 64 segments", path))
	}
	e := &entry{method: method, segs: segs, names: make([]string, len(segs)), h: h}
	for i, s := range segs {
		name, wild := strings.CutPrefix(s, "{")
		if wild {
			name, wild = strings.CutSuffix(name, "}")
		}
		if !wild && strings.ContainsAny(s, "{}") || wild && (name == "" || name == "$" || strings.HasSuffix(name, "...") || strings.ContainsAny(name, "{}")) {
			panic(fmt.Sprintf("httpapi: pattern %s: only whole-segment {name} wildcards are matched", path))
		}
		if wild {
			e.segs[i], e.names[i] = "", name
			e.wild |= 1 << i
		}
	}
	*t = append(*t, e)
}

// match returns the entry serving method at path (a clean path), nil when
// none does.
func (t table) match(method, path string) *entry {
	var best *entry
	n := strings.Count(path, "/")
	for _, e := range t {
		if len(e.segs) != n || e.method != "" && e.method != method && (e.method != http.MethodGet || method != http.MethodHead) {
			continue
		}
		if e.matches(path) && (best == nil || e.moreSpecific(best, method)) {
			best = e
		}
	}
	return best
}

func (e *entry) matches(path string) bool {
	rest := path[1:]
	for i, lit := range e.segs {
		seg, after, _ := strings.Cut(rest, "/")
		if e.wild&(1<<i) == 0 && seg != lit || seg == "" { // as ServeMux, a wildcard takes no empty segment
			return false
		}
		rest = after
	}
	return true
}

// moreSpecific reports whether e beats o, both matching a request for
// method: e's wildcards are among o's (and fewer), or they are the same and
// e names the method itself (a HEAD pattern over a GET one).
func (e *entry) moreSpecific(o *entry, method string) bool {
	if e.wild != o.wild {
		return e.wild&^o.wild == 0
	}
	return e.method == method && o.method != method
}

// serve serves r (whose path e matches) with e's handler, its wildcards'
// values set as ServeMux sets them.
func (e *entry) serve(w http.ResponseWriter, r *http.Request) {
	if e.wild != 0 {
		rest := r.URL.Path[1:]
		for _, name := range e.names {
			seg, after, _ := strings.Cut(rest, "/")
			if name != "" {
				r.SetPathValue(name, seg)
			}
			rest = after
		}
	}
	e.h.ServeHTTP(w, r)
}

// allowedIn returns the methods path is served with in t: those of the
// fewest wildcards (see allowed).
func allowedIn(t table, path string) []string {
	var allow []string
	fewest := -1
	for _, m := range methods {
		e := t.match(m, path)
		if e == nil {
			continue
		}
		switch n := bits.OnesCount64(e.wild); {
		case fewest == -1 || n < fewest:
			allow, fewest = []string{m}, n
		case n == fewest:
			allow = append(allow, m)
		}
	}
	return allow
}

// CheckRoutes returns the error ServeMux gives for routes that cannot be
// served together (a pattern twice; two that both match some request with
// neither the more specific), which the router, matching routes itself,
// never looks for; nil when there is none. Their Shopify forms are checked
// likewise.
func CheckRoutes(routes []Route) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	api, pages, public := http.NewServeMux(), http.NewServeMux(), http.NewServeMux()
	var shopify []*Route
	for i := range routes {
		r := &routes[i]
		switch {
		case r.Page:
			pages.Handle(r.Method+" "+r.Path, http.NotFoundHandler())
		case r.Public:
			public.Handle(r.Method+" "+r.Path, http.NotFoundHandler())
		default:
			api.Handle(r.Method+" "+strings.TrimSuffix(r.Path, ".json"), http.NotFoundHandler())
			shopify = append(shopify, r)
		}
	}
	a := buildAliases(shopify)
	for _, t := range []table{a.byMethod, a.byPath} {
		mux := http.NewServeMux()
		for _, e := range t {
			pattern := "/" + strings.Join(e.segs, "/")
			if e.wild != 0 {
				segs := make([]string, len(e.segs))
				for i := range segs {
					segs[i] = e.segs[i]
					if e.names[i] != "" {
						segs[i] = "{" + e.names[i] + "}"
					}
				}
				pattern = "/" + strings.Join(segs, "/")
			}
			if e.method != "" {
				pattern = e.method + " " + pattern
			}
			mux.Handle(pattern, http.NotFoundHandler())
		}
	}
	return nil
}
