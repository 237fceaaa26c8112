package httpapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
)

// Shopify's clients (shopify-api-node, the Python ShopifyAPI, go-shopify,
// …) call every route of the API this one paraphrases at
// /admin/api/{version}/<path>.json, and older ones at /admin/<path>.json,
// where <path> is the route without its root (/web/pages/1.json is
// /admin/api/2024-01/pages/1.json). The router serves both forms by
// rewriting the path to the route's own before anything else reads it, so
// that every check, answer and event is the route's; only the Link header
// of a list names the form the client called.

// Header names as Shopify's clients send and read them.
const (
	ShopifyTokenHeader     = "X-Shopify-Access-Token"
	ShopifyCallLimitHeader = "X-Shopify-Shop-Api-Call-Limit"
	ShopifyVersionHeader   = "X-Shopify-API-Version"
)

// aliases finds the route a Shopify-form path names: its rest (the path
// without root and .json) is looked up with the method first, then without,
// so that a path served for other methods answers 405 like the route's own.
type aliases struct{ byMethod, byPath table }

// roots are the roots ("admin", "com", "web") a rest pattern is served at,
// in route order. As a handler it is only looked up, never served.
type roots struct{ names []string }

func (*roots) ServeHTTP(http.ResponseWriter, *http.Request) {}

// buildAliases makes the aliases of a shard's routes.
func buildAliases(routes []*Route) *aliases {
	a := &aliases{}
	methodRoots, pathRoots := map[string]*roots{}, map[string]*roots{} // by pattern, while building
	for _, route := range routes {
		a.add(route.Method, route.Path, methodRoots, pathRoots)
	}
	return a
}

// aliasesFor returns the aliases that may serve rest (a path without its
// root and .json, "/pages/1"): its shard's, nil when no route can.
func (rt *Router) aliasesFor(rest string) *aliases {
	key := ""
	if !rt.oneShard {
		key = segment(rest, 0)
	}
	sh := rt.shards[key]
	if sh == nil {
		return nil
	}
	sh.aliasOnce.Do(func() { sh.aliases = buildAliases(sh.routes) })
	return sh.aliases
}

// add records a route's path ("/web/pages/{id}.json"), finding the roots
// of its patterns so far in methodRoots and pathRoots.
func (a *aliases) add(method, path string, methodRoots, pathRoots map[string]*roots) {
	root, rest, ok := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	if !ok {
		return
	}
	rest = "/" + strings.TrimSuffix(rest, ".json")
	for _, m := range []struct {
		t      *table
		byKey  map[string]*roots
		method string
	}{{&a.byMethod, methodRoots, method}, {&a.byPath, pathRoots, ""}} {
		key := m.method + " " + rest
		rs := m.byKey[key]
		if rs == nil {
			rs = &roots{}
			m.byKey[key] = rs
			m.t.add(m.method, rest, rs)
		}
		rs.names = append(rs.names, root)
	}
}

// root returns the root to serve method rest at ("" for none): prefer when
// it serves rest for method, else the first root that does, else the
// first that serves rest for another method.
func (a *aliases) root(method, rest, prefer string) string {
	if a == nil {
		return ""
	}
	for _, t := range []table{a.byMethod, a.byPath} {
		if e := t.match(method, rest); e != nil {
			rs := e.h.(*roots)
			for _, name := range rs.names {
				if name == prefer {
					return name
				}
			}
			return rs.names[0]
		}
	}
	return ""
}

// servedAt reports whether some route serves rest at root, for any method.
func (a *aliases) servedAt(rest, root string) bool {
	if a == nil {
		return false
	}
	e := a.byPath.match(http.MethodGet, rest)
	return e != nil && slices.Contains(e.h.(*roots).names, root)
}

// servesOwn reports whether a route of the router's own serves method at
// path (without .json): the spec's /admin routes, found without building
// the aliases, which a function then never needs.
func (rt *Router) servesOwn(method, path string) bool {
	m := rt.muxesFor(path)
	if m == nil {
		return false
	}
	return m.mux.match(method, path) != nil
}

// calledForm is what a rewritten request was called as: its prefix
// ("/admin/api/2024-01/") in place of the route's ("/web/").
type calledForm struct{ called, canonical string }

// calledFormCtxKey carries how the request was called (its Shopify form),
// so that its Link URLs are written the same way.
type calledFormCtxKey struct{}

// shownPath is path (a route's own) as the client called it.
func shownPath(ctx context.Context, path string) string {
	if f, ok := ctx.Value(calledFormCtxKey{}).(calledForm); ok {
		if rest, ok := strings.CutPrefix(path, f.canonical); ok {
			return f.called + rest
		}
	}
	return path
}

// shopifyForm rewrites a Shopify-form request to its route's path; it
// answers (and returns false) a versioned path of an unknown version or
// route with the 404 JSON of an unknown path. Other requests pass as they
// came: the spec's own /admin routes are served at their own paths.
func (rt *Router) shopifyForm(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	p := r.URL.Path
	if !strings.HasPrefix(p, "/admin/") || !Clean(p) {
		return r, true
	}
	called, rest, version := "/admin/", strings.TrimPrefix(p, "/admin"), ""
	if after, ok := strings.CutPrefix(p, "/admin/api/"); ok {
		v, tail, _ := strings.Cut(after, "/")
		if !admin.ValidVersion(v, rt.clock.Now()) || tail == "" {
			Error(w, r, admin.NotFound)
			return r, false
		}
		called, rest, version = "/admin/api/"+v+"/", "/"+tail, v
	}
	stripped, ok := strings.CutSuffix(rest, ".json")
	if version == "" && (!ok || rt.servesOwn(r.Method, "/admin"+stripped) || rt.aliasesFor(stripped).servedAt(stripped, "admin")) {
		// A path the spec serves at /admin keeps its meaning, every method
		// included (PUT /admin/countries/{id}.json stays 405): only paths
		// it does not serve there are Shopify's unversioned form.
		return r, true
	}
	root := ""
	if ok {
		root = rt.aliasesFor(stripped).root(r.Method, stripped, "admin")
	}
	if root == "" {
		Error(w, r, admin.NotFound)
		return r, false
	}
	if version == "" {
		version = admin.LatestVersion(rt.clock.Now())
	}
	w.Header().Set(ShopifyVersionHeader, version)
	canonical := "/" + root + "/"
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = canonical+strings.TrimPrefix(rest, "/"), ""
	r2.URL = &u
	return r2.WithContext(context.WithValue(r.Context(), calledFormCtxKey{}, calledForm{called, canonical})), true
}
