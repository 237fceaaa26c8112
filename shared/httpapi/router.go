// Package httpapi implements the HTTP conventions once (docs/openapi.yaml's introduction): the
// .json routing, authentication and scopes, request ids, JSON bodies and
// errors, paging, fields and date filters. Resource packages declare Routes
// and call these helpers; they never write headers or error bodies themselves.
package httpapi

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/idempotency"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/ratelimit"
)

// HandlerFunc serves one route. It writes its success response with
// WriteJSON (or a helper built on it) and returns failures as errors.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one endpoint: Path is the public path with its .json suffix and
// {name} wildcards, as in the spec and in docs/openapi.yaml.
type Route struct {
	Method  string
	Path    string
	Scope   admin.Scope
	Handler HandlerFunc
	// MaxBody overrides DefaultMaxBody for requests with large payloads.
	MaxBody int64
	// Page marks a page for a person in a browser (the charge confirmation
	// page): Path is whole and never ends in .json, no token is asked for,
	// no scope checked and no call spent, the body is capped at MaxPageBody
	// (or MaxBody)
	// and every answer carries PageHeaders. The handler answers with
	// WritePage or SeeOther; its errors are the JSON errors of every route.
	Page bool
	// Public marks a route that serves files to anyone (a theme's assets/
	// files): no token, no scope, no call limit, and a path that need not
	// end in .json. Such routes answer files, not the API's JSON, and are
	// not operations of docs/openapi.yaml. Every other route keeps every
	// check.
	Public bool
	// Metered marks a route that meters its callers itself (GraphQL, by
	// query cost): it keeps the token and scope checks, and spends no call
	// of the REST bucket.
	Metered bool
}

// DefaultSlowRequest is how long a request may take before the router logs
// it at warning level, unless the Router's SlowRequest says otherwise.
const DefaultSlowRequest = time.Second

// DefaultMaxBody is the request body limit unless a route sets its own.
const DefaultMaxBody = 1 << 20

// Identity resolves who is calling and for which shop.
type Identity interface {
	// AppByToken returns the app holding token, or an error with code
	// EUNAUTHORIZED when there is none.
	AppByToken(ctx context.Context, token string) (*admin.App, error)
	Shop(ctx context.Context) (*admin.Shop, error)
	// CursorKey returns the shop's key for signing page_info cursors: the
	// same in every process serving the shop.
	CursorKey(ctx context.Context) ([]byte, error)
}

// TokenHeader carries the access token (matched in any case, as all headers are).
const TokenHeader = "X-Service-Access-Token"

// CallLimitHeader tells a client how full its bucket is: "<used>/<bucket>".
const CallLimitHeader = "X-Service-Shop-Api-Call-Limit"

// Router serves a set of routes under the conventions.
type Router struct {
	// pages serves the page routes, public the Public ones (matched before
	// anything else); both are built on first use, and nil without such
	// routes. publicWords are the Public routes' second segments, which a
	// request's path must spell for public to be asked (so that a function
	// with a Public route builds its ServeMux only for a request that may
	// be for it), nil when some Public route's first two are not literal.
	pages, public func() *http.ServeMux
	publicWords   map[string]bool
	// shards hold the other routes by their path's second segment (the
	// "redirects" of /web/redirects/{id}.json), which a request's path must
	// spell to match one; each builds its muxes on the first request for
	// it. A cold start then registers only the patterns it needs:
	// ServeMux records each pattern's caller as it registers it, and every
	// group's patterns took ShopifyPathsFunction milliseconds. When some
	// route's first two segments are not both literal, every route is in
	// one shard, "" (oneShard).
	shards   map[string]*shard
	oneShard bool
	// tailWords are the last segments of the routes whose path ends in a
	// word (/web/redirects/count, /web/blogs/{blog_id}/articles/count): a
	// request ending in one is asked of its shard's tails before a
	// wildcard route of another method can take the word for an id.
	tailWords map[string]bool
	identity  Identity
	limiter   ratelimit.Limiter
	clock     clock.Clock // which API versions exist (shopify.go)
	routes    []Route
	// Base gives the public base URL of a request ("https://api.example.com"),
	// which BaseURL hands to handlers for the absolute URLs they answer;
	// "" (or a nil Base) makes those URLs relative. The composition root
	// sets it from configuration, never from the request's Host.
	Base func(*http.Request) string
	// Keys keeps the Idempotency-Keys of writes and their answers; nil
	// serves writes without looking at the header.
	Keys *idempotency.Keeper
	// Metrics counts the calls refused for the call limit.
	Metrics *metrics.Recorder
	// SlowRequest is how long a request may take before it is logged at
	// warning level with its route and duration (at debug level every
	// request is); 0 is DefaultSlowRequest.
	SlowRequest time.Duration
	// Logger takes what the router logs: failed requests, call-limit
	// warnings, the debug request line. nil is slog.Default() (the
	// process's, set once at start-up); a test gives its own rather than
	// swapping the process's.
	Logger *slog.Logger
}

// log is the router's logger.
func (rt *Router) log() *slog.Logger {
	if rt.Logger != nil {
		return rt.Logger
	}
	return slog.Default()
}

// NewRouter builds the handler for routes. Every route requires a token,
// and every authenticated call spends one call of the app's bucket (a nil
// limiter lets every call through). clk is the service's clock.
func NewRouter(identity Identity, limiter ratelimit.Limiter, clk clock.Clock, routes []Route) *Router {
	rt := &Router{shards: map[string]*shard{}, tailWords: map[string]bool{},
		identity: identity, limiter: limiter, clock: clk, routes: routes}
	api := make([]*Route, 0, len(routes))
	var pages, public []*Route
	for i := range routes {
		route := &routes[i] // the routes are the router's (Routes), never changed
		if route.Page {
			if strings.HasSuffix(route.Path, ".json") || route.Scope != admin.ScopeNone {
				panic(fmt.Sprintf("httpapi: page %s ends in .json or has a scope", route.Path))
			}
			pages = append(pages, route)
			continue
		}
		if route.Public {
			if route.Method != http.MethodGet {
				panic(fmt.Sprintf("httpapi: public route %s %s: only GET routes may be public", route.Method, route.Path))
			}
			public = append(public, route)
			continue
		}
		pattern, ok := strings.CutSuffix(route.Path, ".json")
		if !ok {
			panic(fmt.Sprintf("httpapi: route %s does not end in .json", route.Path))
		}
		if headWord(pattern) == "" {
			rt.oneShard = true
		}
		if last := tailWord(pattern); last != "" {
			rt.tailWords[last] = true
		}
		api = append(api, route)
	}
	for _, route := range api {
		key := rt.shardKey(strings.TrimSuffix(route.Path, ".json"))
		sh := rt.shards[key]
		if sh == nil {
			sh = &shard{}
			rt.shards[key] = sh
		}
		sh.routes = append(sh.routes, route)
	}
	if pages != nil {
		rt.pages = sync.OnceValue(func() *http.ServeMux {
			mux := http.NewServeMux()
			rt.handle(mux, "/", notServed(mux))
			for _, route := range pages {
				rt.handle(mux, route.Method+" "+route.Path, rt.wrapPage(route))
			}
			return mux
		})
	}
	if public != nil {
		rt.publicWords = map[string]bool{}
		for _, route := range public {
			word := headWord(route.Path)
			if word == "" {
				rt.publicWords = nil
				break
			}
			rt.publicWords[word] = true
		}
		rt.public = sync.OnceValue(func() *http.ServeMux {
			mux := http.NewServeMux()
			for _, route := range public {
				rt.handle(mux, route.Method+" "+route.Path, rt.wrapPublic(route))
			}
			return mux
		})
	}
	return rt
}

// shard is the routes of one second segment, and their muxes and Shopify
// forms (shopify.go), each built when first needed: a group's function,
// which API Gateway sends only its own paths, never needs the forms.
type shard struct {
	routes             []*Route
	muxOnce, aliasOnce sync.Once
	muxes              *muxes
	aliases            *aliases
}

// headWord is a route path's second segment when its first two are
// literal, "" when either is a wildcard or missing.
func headWord(path string) string {
	root, word := segment(path, 0), segment(path, 1)
	if root == "" || strings.Contains(root, "{") || strings.Contains(word, "{") {
		return ""
	}
	return word
}

// tailWord is a pattern's last segment when it is literal, else "".
func tailWord(pattern string) string {
	if last := pattern[strings.LastIndexByte(pattern, '/')+1:]; !strings.Contains(last, "{") {
		return last
	}
	return ""
}

// muxes are a shard's tables (match.go): mux serves its routes; tails
// holds those whose path ends in a word (see tailWords).
type muxes struct{ mux, tails table }

func (rt *Router) build(routes []*Route) *muxes {
	m := &muxes{}
	for _, route := range routes {
		pattern := strings.TrimSuffix(route.Path, ".json")
		m.mux.add(route.Method, pattern, rt.wrap(route))
		if tailWord(pattern) != "" {
			m.tails.add(route.Method, pattern, http.NotFoundHandler())
		}
	}
	return m
}

// serveAPI serves r on the shard's routes: 405 with Allow when its path is
// served with other methods, 404 for an unknown path. Neither needs a
// token, as an unknown path never did.
func serveAPI(t table, w http.ResponseWriter, r *http.Request) {
	if e := t.match(r.Method, r.URL.Path); e != nil {
		e.serve(w, r)
		return
	}
	if allow := allowedIn(t, r.URL.Path); len(allow) > 0 {
		notAllowed(w, r, allow)
		return
	}
	Error(w, r, admin.NotFound)
}

// shardKey is the key of the shard that may serve path (a route's or a
// request's, without .json).
func (rt *Router) shardKey(path string) string {
	if rt.oneShard {
		return ""
	}
	return segment(path, 1)
}

// muxesFor returns the muxes of the shard that may serve path (without
// .json), nil when no route can.
func (rt *Router) muxesFor(path string) *muxes {
	sh := rt.shards[rt.shardKey(path)]
	if sh == nil {
		return nil
	}
	sh.muxOnce.Do(func() { sh.muxes = rt.build(sh.routes) })
	return sh.muxes
}

// segment returns path's i-th segment ("" when it has none).
func segment(path string, i int) string {
	rest := strings.TrimPrefix(path, "/")
	for ; i > 0; i-- {
		_, rest, _ = strings.Cut(rest, "/")
	}
	seg, _, _ := strings.Cut(rest, "/")
	return seg
}

// routed marks the handlers registered on the router's muxes, so that
// matches can tell them from the answers ServeMux makes up itself.
type routed struct{ http.Handler }

func (rt *Router) handle(mux *http.ServeMux, pattern string, h http.Handler) {
	mux.Handle(pattern, routed{h})
}

// matches reports whether r is for a route of mux (or its catch-all):
// whatever else ServeMux finds for it is its own answer, such as a 307
// from /tree to /tree/ with an HTML body, which this API never gives.
func matches(mux *http.ServeMux, r *http.Request) bool {
	h, _ := mux.Handler(r)
	_, ok := h.(routed)
	return ok
}

// serve serves r on mux, or answers the 404 JSON of an unknown path.
func serve(mux *http.ServeMux, w http.ResponseWriter, r *http.Request) {
	if !matches(mux, r) {
		Error(w, r, admin.NotFound)
		return
	}
	mux.ServeHTTP(w, r)
}

// methods are those a path may be served with; GET routes serve HEAD too.
var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// notServed answers what no route of mux matched: 405 with Allow when the
// path is served with other methods, 404 for an unknown path. Neither needs
// a token, as an unknown path never did.
func notServed(mux *http.ServeMux) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if allow := allowed(mux, r); len(allow) > 0 {
			notAllowed(w, r, allow)
			return
		}
		Error(w, r, admin.NotFound)
	}
}

func notAllowed(w http.ResponseWriter, r *http.Request, allow []string) {
	w.Header().Set("Allow", strings.Join(allow, ", "))
	Error(w, r, admin.MethodNotAllowed)
}

// allowed returns the methods r's path is served with, asked of mux itself
// so that wildcards match as they do for the routes. A path that a route
// names whole (/web/redirects/count) is that route's alone: the methods of a
// wildcard route that also matches it (/web/redirects/{id}) are not its own.
func allowed(mux *http.ServeMux, r *http.Request) []string {
	var allow []string
	fewest := -1
	for _, m := range methods {
		probe := *r
		probe.Method = m
		h, pattern := mux.Handler(&probe)
		if _, ok := h.(routed); !ok || pattern == "/" {
			continue
		}
		switch n := strings.Count(pattern, "{"); {
		case fewest == -1 || n < fewest:
			allow, fewest = []string{m}, n
		case n == fewest:
			allow = append(allow, m)
		}
	}
	return allow
}

// shadowed answers 405 when r's path is one a route names in words, but r
// matched a wildcard route of another method (PUT /web/redirects/count
// matches PUT /web/redirects/{id}, yet the path is GET's count; so does
// PUT /com/countries/1/provinces/count). Only a path ending in a route's
// word asks the tails mux, once; its methods are probed only when it is
// shadowed or unknown.
func (rt *Router) shadowed(m *muxes, w http.ResponseWriter, r *http.Request) bool {
	if !rt.tailWords[r.URL.Path[strings.LastIndexByte(r.URL.Path, '/')+1:]] || m.tails.match(r.Method, r.URL.Path) != nil {
		return false
	}
	allow := allowedIn(m.tails, r.URL.Path)
	if len(allow) == 0 || slices.Contains(allow, r.Method) {
		return false
	}
	notAllowed(w, r, allow)
	return true
}

// Routes returns the routes served, for documentation and template checks.
func (rt *Router) Routes() []Route { return rt.routes }

func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := newRequestID()
	w.Header().Set("X-Request-Id", id)
	ctx := admin.WithRequestID(r.Context(), id)
	if rt.Base != nil {
		ctx = context.WithValue(ctx, baseCtxKey{}, rt.Base(r))
	}
	r = r.WithContext(ctx)
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				panic(p)
			}
			writeError(rt.log(), w, r, fmt.Errorf("panic: %v\n%s", p, debug.Stack()))
		}
	}()
	if encodedSeparator(r.URL) {
		Error(w, r, admin.NotFound)
		return
	}
	r, ok := rt.shopifyForm(w, r)
	if !ok {
		return
	}
	if rt.public != nil && (rt.publicWords == nil || rt.publicWords[segment(r.URL.Path, 1)]) &&
		Clean(r.URL.Path) && matches(rt.public(), r) {
		rt.public().ServeHTTP(w, r) // ServeHTTP sets the path values
		return
	}
	stripped, isJSON := strings.CutSuffix(r.URL.Path, ".json")
	if !isJSON && rt.pages != nil && Clean(r.URL.Path) {
		// Only the page routes answer paths without .json; every API
		// route stays behind the token.
		serve(rt.pages(), w, r)
		return
	}
	if !isJSON || !Clean(stripped) {
		Error(w, r, admin.NotFound)
		return
	}
	// Route on the path without .json so that {id} wildcards are whole segments.
	r2 := new(http.Request)
	*r2 = *r
	u := *r.URL
	u.Path, u.RawPath = stripped, ""
	r2.URL = &u
	m := rt.muxesFor(stripped)
	if m == nil {
		Error(w, r2, admin.NotFound) // no route has its second segment
		return
	}
	if rt.shadowed(m, w, r2) {
		return
	}
	serveAPI(m.mux, w, r2)
}

// Clean reports whether a request path is in its one canonical spelling: no
// empty, "." or ".." segments (decoded, so %2e%2e counts). ServeMux would
// answer the others with a 307 and an HTML body; this API answers 404 JSON.
func Clean(p string) bool {
	if p == "" || p[0] != '/' {
		return false
	}
	for _, seg := range strings.Split(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// encodedSeparator reports whether a request path spells a slash or a
// backslash percent-encoded (%2F, %5C): decoded, it would name another
// route than a proxy rule keyed on the raw path sees, so no route answers it.
func encodedSeparator(u *url.URL) bool {
	raw := u.RawPath
	if raw == "" { // set only when the path holds escapes its decoding loses
		return false
	}
	for i := 0; i+2 < len(raw); i++ {
		if raw[i] == '%' && (raw[i+1] == '2' && (raw[i+2] == 'f' || raw[i+2] == 'F') ||
			raw[i+1] == '5' && (raw[i+2] == 'c' || raw[i+2] == 'C')) {
			return true
		}
	}
	return false
}

// RejectUnclean answers every request whose path is not Clean, or spells a
// separator percent-encoded, with the 404 JSON of an unknown path, before a
// ServeMux can redirect it; the local runner puts it in front of its own mux.
func RejectUnclean(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !Clean(r.URL.Path) || encodedSeparator(r.URL) {
			Error(w, r, admin.NotFound)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (rt *Router) wrap(route *Route) http.Handler {
	max := route.MaxBody
	if max == 0 {
		max = DefaultMaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ctx, err := rt.authorize(w, r, route)
		if err == nil {
			if r.ContentLength > max {
				err = errTooLarge
			} else {
				r.Body = http.MaxBytesReader(w, r.Body, max)
				if r.Method == http.MethodGet {
					ctx = context.WithValue(ctx, identityCtxKey{}, rt.identity) // WritePaged signs with it
				}
				r = r.WithContext(ctx)
				if r.URL.RawQuery != "" {
					err = checkQuery(r.URL.Query())
				}
				if err == nil && r.Method == http.MethodGet {
					r, err = expandPageInfo(ctx, r, rt.identity)
				}
				if err == nil {
					err = rt.serveRoute(w, r, route)
				}
			}
		}
		if err != nil {
			writeError(rt.log(), w, r, err)
		}
		rt.logRequest(ctx, r.Method, route, start)
	})
}

// logRequest logs a served request: at warning level when it took
// SlowRequest or longer (by the machine's clock: how long it really took,
// whatever the service's clock did meanwhile), else at debug level.
func (rt *Router) logRequest(ctx context.Context, method string, route *Route, start time.Time) {
	took, slow := time.Since(start), rt.SlowRequest
	if slow == 0 {
		slow = DefaultSlowRequest
	}
	switch {
	case took >= slow:
		rt.log().WarnContext(ctx, "slow request", "request_id", admin.RequestID(ctx), "method", method,
			"route", route.Path, "duration", took)
	case rt.log().Enabled(ctx, slog.LevelDebug):
		rt.log().DebugContext(ctx, "request", "request_id", admin.RequestID(ctx), "method", method,
			"route", route.Path, "duration", took)
	}
}

// checkQuery answers a query parameter given without a value (?limit=,
// ?updated_at_min=) or given twice (?src=a&src=b) with 400 naming it:
// taking it for absent would list what the client did not ask for, no
// parameter has an empty meaning, and only a name ending in [] is a list by
// repetition (address_ids[]=1&address_ids[]=2; other lists are
// comma-separated, ids=1,2), so a second value is never silently dropped.
func checkQuery(q url.Values) error {
	first, msg := "", ""
	for name, values := range q {
		bad := ""
		switch {
		case slices.Contains(values, ""):
			bad = "must not be empty"
		case len(values) > 1 && !strings.HasSuffix(name, "[]"):
			bad = "must be given once"
		}
		if bad != "" && (msg == "" || name < first) {
			first, msg = name, bad // the least name: the same answer every time
		}
	}
	if msg == "" {
		return nil
	}
	return admin.BadParam(first, msg)
}

// wrapPublic serves a Public route: no token, no bucket, no body, and
// FileHeaders on every answer.
func (rt *Router) wrapPublic(route *Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for k, v := range FileHeaders {
			w.Header().Set(k, v)
		}
		if err := route.Handler(w, r); err != nil {
			writeError(rt.log(), w, r, err)
		}
	})
}

// limit spends one call of the app's bucket and says so in the call-limit
// header; a full bucket is 429 with Retry-After, before any work is done.
// A bucket that cannot be read or written lets the call through (logged):
// pacing must not take the API down with it.
func (rt *Router) limit(ctx context.Context, w http.ResponseWriter, app *admin.App) error {
	if rt.limiter == nil {
		return nil
	}
	d, err := rt.limiter.Take(ctx, app)
	if err != nil {
		rt.log().WarnContext(ctx, "call limit unavailable; call let through",
			"request_id", admin.RequestID(ctx), "app_id", app.ID, "error", err.Error())
		return nil
	}
	w.Header().Set(CallLimitHeader, d.Header())
	w.Header().Set(ShopifyCallLimitHeader, d.Header())
	if !d.Allowed {
		rt.Metrics.CallLimit(ctx, app.ID)
		w.Header().Set("Retry-After", d.RetryAfterHeader())
		return d.Err(app.Plan())
	}
	return nil
}

// authorize authenticates the token, spends a call of the app's bucket and
// checks the scope; the context it returns carries the app and the shop.
func (rt *Router) authorize(w http.ResponseWriter, r *http.Request, route *Route) (context.Context, error) {
	ctx := r.Context()
	token, ok := RequestToken(r.Header)
	if !ok {
		return ctx, admin.Unauthorized
	}
	app, err := rt.identity.AppByToken(ctx, token)
	if err != nil {
		return ctx, err
	}
	if !route.Metered {
		if err := rt.limit(ctx, w, app); err != nil {
			return ctx, err
		}
	}
	write := r.Method != http.MethodGet && r.Method != http.MethodHead
	if !app.Allows(route.Scope, write) {
		return ctx, admin.ScopeRequired(route.Scope, write)
	}
	shop, err := rt.identity.Shop(ctx)
	if err != nil {
		return ctx, err
	}
	return admin.WithShop(admin.WithApp(ctx, app), shop), nil
}

// RequestToken is the access token a request presents: in
// X-Service-Access-Token or in X-Shopify-Access-Token (as Shopify's clients
// send it), each at most once, and the same in both when both are sent.
// With two different ones, which one a proxy, the Lambda adapter (which
// splits API Gateway's comma-joined values) or the router would pick is a
// guess, so none is taken.
func RequestToken(h http.Header) (string, bool) {
	token := ""
	for _, name := range []string{TokenHeader, ShopifyTokenHeader} {
		switch values := h.Values(name); {
		case len(values) > 1:
			return "", false
		case len(values) == 1:
			if values[0] == "" || token != "" && values[0] != token {
				return "", false
			}
			token = values[0]
		}
	}
	return token, token != ""
}

// newRequestID is 96 random bits from math/rand/v2 (ChaCha8, seeded by the
// runtime from the kernel): as unique as crypto/rand's, all a request id
// needs, without crypto/rand's first read (its getrandom state, about
// 0.1 ms) in each cold start's first request.
func newRequestID() string {
	var b [12]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint32(b[8:], rand.Uint32())
	return hex.EncodeToString(b[:])
}
