package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/faults"
	"github.com/storeadmin/adminapi/shared/ratelimit"
	"github.com/storeadmin/adminapi/shared/seed"
)

// noScopeToken is an app installed without any scope, for 403 on reads.
const noScopeToken = "no-scope-token-0123456789abcdef"

type M = map[string]any

type scenario struct {
	t    *testing.T
	env  *apitest.Env
	doc  *openAPI
	seen map[*operation]map[string]bool
}

func TestOpenAPIScenario(t *testing.T) {
	doc := loadOpenAPI(t)
	env := apitest.New(t, apitest.OpenEmbedded(t), api.Groups...)
	noScopeApp := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"apps": [{"id": 1003, "name": "No Scope App", "access_token": "` + noScopeToken + `", "shared_secret": "no-scope-secret", "scopes": []}]}`
	if _, _, err := seed.Load(context.Background(), env.Deps.Store, env.Deps.Clock, []byte(noScopeApp)); err != nil {
		t.Fatal(err)
	}
	s := &scenario{t: t, env: env, doc: doc, seen: map[*operation]map[string]bool{}}

	t.Run("redirects", s.redirects)
	t.Run("script_tags", s.scriptTags)
	t.Run("events", s.events) // before pages: it counts the events it records
	t.Run("pages", s.pages)
	t.Run("blogs", s.blogs) // after pages: it counts Article and Comment events only
	t.Run("webhooks", s.webhooks)
	t.Run("collections", s.collections) // custom and smart collections, collects
	t.Run("variants", s.variants)       // after collections: its smart collection follows the prices
	t.Run("fulfillment_services", s.fulfillmentServices)
	t.Run("billing", s.billing)
	t.Run("transactions", s.transactions)
	t.Run("themes", s.themes)
	t.Run("countries", s.countries)
	t.Run("metafields", s.metafields)
	t.Run("addresses", s.addresses)
	t.Run("saved_searches", s.savedSearches) // after addresses: bob's default has moved
	t.Run("oauth", s.oauth)
	t.Run("graphql", s.graphql)
	s.t = t
	s.checkUnservedPaths()
	s.checkEmptyParameters()
	s.checkCallLimit()
	s.checkStoreUnavailable()
	s.checkEveryStatusSeen()
}

// checkUnservedPaths: paths the router does not serve are 404 with the
// documented body.
func (s *scenario) checkUnservedPaths() {
	t := s.t
	for _, p := range []string{"/web/redirects", "/web/nothing.json", "/web/redirects/1/extra.json"} {
		res := s.env.Do("GET", p, nil)
		if res.Status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, res.Status)
		}
		s.checkBody("GET "+p, s.doc.schema("NotFoundError"), res, false)
	}
}

// checkEmptyParameters: a parameter given empty is 400 naming it on every
// operation, before any work (so any id will do).
func (s *scenario) checkEmptyParameters() {
	t := s.t
	for _, op := range s.doc.ops {
		if isPage(op) {
			continue
		}
		target := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(op.path, "1")
		res := s.do(demoToken, op.method, target+"?fields=", nil, http.StatusBadRequest)
		if errs, _ := res.JSON(t)["errors"].(map[string]any); errs["fields"] == nil {
			t.Errorf("%s %s?fields=: 400 does not name fields: %s", op.method, target, res.Body)
		}
	}
}

// checkCallLimit: with the demo app's bucket full, every operation is 429
// with the documented body and headers, before any work.
func (s *scenario) checkCallLimit() {
	t := s.t
	full := api.Deps{Deps: s.env.Deps}
	frozen := time.Now()
	full.Limiter = &ratelimit.Memory{Now: func() time.Time { return frozen }}
	handler := s.env.Handler
	s.env.Handler = api.Handler(&full, api.Groups...)
	for range admin.DefaultRatePlan.Bucket {
		s.env.Do("GET", "/web/redirects/count.json", nil)
	}
	for _, op := range s.doc.ops {
		if isPage(op) || op.obj["x-cost-metered"] == true {
			continue // a page spends no call; GraphQL spends its cost points
		}
		target := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(op.path, "1")
		res := s.do(demoToken, op.method, target, nil, http.StatusTooManyRequests)
		if res.Header.Get("Retry-After") == "" || res.Header.Get("X-Service-Shop-Api-Call-Limit") != "40/40" {
			t.Errorf("%s %s: 429 headers %v", op.method, target, res.Header)
		}
	}
	s.env.Handler = handler
}

// checkStoreUnavailable: with every store and queue call failing, every
// operation is 503 with Retry-After and the documented body, never 500.
func (s *scenario) checkStoreUnavailable() {
	t := s.t
	handler := s.env.Handler
	faulty := *s.env.Deps
	in := faults.New(1)
	api.InjectFaults(&faulty, in)
	s.env.Handler = api.Handler(&api.Deps{Deps: &faulty}, api.Groups...)
	in.Start()
	for _, op := range s.doc.ops {
		target := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(op.path, "1")
		var body any
		if isPage(op) && op.method == http.MethodPost {
			body = "authenticity_token=x"
		}
		if res := s.do(demoToken, op.method, target, body, http.StatusServiceUnavailable); res.Header.Get("Retry-After") != "1" {
			t.Errorf("%s %s: 503 headers %v", op.method, target, res.Header)
		}
	}
	s.env.Handler = handler
}

// checkEveryStatusSeen: every operation had a success and every documented
// error but 500.
func (s *scenario) checkEveryStatusSeen() {
	t := s.t
	for _, op := range s.doc.ops {
		responses, _ := op.obj["responses"].(map[string]any)
		for _, status := range sortedKeys(responses) {
			if status == "500" || status == "default" {
				continue
			}
			if !s.seen[op][status] {
				t.Errorf("%s %s (%s): documented status %s was never exercised", op.method, op.path, op.id, status)
			}
		}
	}
}

// do sends a request, requires status want and checks the exchange against
// the document. body is nil, a string sent as is, or a value sent as JSON.
func (s *scenario) do(token, method, target string, body any, want int) *apitest.Response {
	s.t.Helper()
	res := s.env.DoAs(token, method, target, body)
	where := method + " " + target
	if res.Status != want {
		s.t.Errorf("%s: status %d, want %d: %s", where, res.Status, want, res.Body)
	}
	u, err := url.Parse(target)
	if err != nil {
		s.t.Fatal(err)
	}
	op, pathVals := s.doc.find(method, u.Path)
	if op == nil {
		s.t.Errorf("%s: no operation in docs/openapi.yaml", where)
		return res
	}
	if s.seen[op] == nil {
		s.seen[op] = map[string]bool{}
	}
	status := strconv.Itoa(res.Status)
	s.seen[op][status] = true
	success := res.Status >= 200 && res.Status < 300

	// A request the service accepts must be one the document allows.
	if success {
		s.checkRequest(where, op, pathVals, u.Query(), body)
	}

	responses, _ := op.obj["responses"].(map[string]any)
	r, ok := responses[status]
	if !ok {
		r, ok = responses["default"]
	}
	if !ok {
		s.t.Errorf("%s: status %d is not documented for %s (%s): %s", where, res.Status, op.path, op.id, res.Body)
		return res
	}
	resp := s.doc.deref(r)
	s.checkBody(where, schemaOf(resp["content"]), res, success && !u.Query().Has("fields"))
	return res
}

func (s *scenario) checkBody(where string, schema any, res *apitest.Response, whole bool) {
	s.t.Helper()
	ct := res.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		s.t.Errorf("%s: Content-Type %q, want application/json", where, ct)
	}
	x := decodeJSON(res.Body)
	if err, ok := x.(error); ok {
		s.t.Errorf("%s: body is not JSON (%v): %s", where, err, res.Body)
		return
	}
	if schema == nil {
		s.t.Errorf("%s: status %d has no documented schema", where, res.Status)
		return
	}
	v := &validator{doc: s.doc, whole: whole}
	if errs := v.validate(schema, x, "$"); len(errs) > 0 {
		s.t.Errorf("%s: status %d body does not match the document:\n  %s\nbody: %s", where, res.Status, strings.Join(errs, "\n  "), res.Body)
	}
}

func (s *scenario) checkRequest(where string, op *operation, pathVals map[string]string, query url.Values, body any) {
	s.t.Helper()
	v := &validator{doc: s.doc}
	param := func(in, name string) map[string]any {
		for _, p := range op.params {
			if p["in"] == in && p["name"] == name {
				return p
			}
		}
		return nil
	}
	check := func(in, name, value string) {
		p := param(in, name)
		if p == nil {
			s.t.Errorf("%s: %s parameter %q is not documented", where, in, name)
			return
		}
		var x any = value
		if t := fmt.Sprint(p["schema"].(map[string]any)["type"]); (t == "integer" || t == "number") && json.Valid([]byte(value)) {
			x = json.Number(value)
		}
		if errs := v.validate(p["schema"], x, in+" "+name); len(errs) > 0 {
			s.t.Errorf("%s: accepted a value the document forbids: %s", where, strings.Join(errs, "; "))
		}
	}
	for name, val := range pathVals {
		check("path", name, val)
	}
	for _, name := range sortedKeys(query) {
		for _, val := range query[name] {
			check("query", name, val)
		}
	}
	rb := s.doc.deref(op.obj["requestBody"])
	switch {
	case rb == nil && body != nil:
		s.t.Errorf("%s: sent a body, the document has none", where)
	case rb != nil && body == nil:
		if rb["required"] == true {
			s.t.Errorf("%s: succeeded without the required body", where)
		}
	case rb != nil:
		var b []byte
		if str, ok := body.(string); ok {
			b = []byte(str)
		} else {
			b, _ = json.Marshal(body)
		}
		if errs := v.validate(schemaOf(rb["content"]), decodeJSON(b), "request"); len(errs) > 0 {
			s.t.Errorf("%s: accepted a body the document forbids:\n  %s", where, strings.Join(errs, "\n  "))
		}
	}
}

// id returns the id of the resource under wrapper of a response.
func (s *scenario) id(res *apitest.Response, wrapper string) int64 {
	s.t.Helper()
	f, _ := res.Object(s.t, wrapper)["id"].(float64)
	if f <= 0 {
		s.t.Fatalf("no id in %s", res.Body)
	}
	return int64(f)
}

func (s *scenario) wantFields(res *apitest.Response, fields ...string) {
	s.t.Helper()
	if res.Status != http.StatusUnprocessableEntity {
		return
	}
	errs, _ := res.JSON(s.t)["errors"].(map[string]any)
	for _, f := range fields {
		if _, ok := errs[f]; !ok {
			s.t.Errorf("422 does not name %q: %s", f, res.Body)
		}
	}
}

func (s *scenario) wantLen(res *apitest.Response, key string, n int) {
	s.t.Helper()
	if res.Status == http.StatusOK {
		if got := len(res.List(s.t, key)); got != n {
			s.t.Errorf("%d %s, want %d: %s", got, key, n, res.Body)
		}
	}
}

func (s *scenario) wantCount(res *apitest.Response, n int) {
	s.t.Helper()
	if res.Status == http.StatusOK {
		if got, _ := res.JSON(s.t)["count"].(float64); int(got) != n {
			s.t.Errorf("count %v, want %d", got, n)
		}
	}
}

const (
	demoToken = apitest.DemoToken
	roToken   = apitest.ReadOnlyToken
	noToken   = ""
	badToken  = "unknown-token-0123456789abcdef"
)

// itoa writes an id into a query or path.
func itoa(n int64) string { return strconv.FormatInt(n, 10) }
