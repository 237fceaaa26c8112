// Package apitest drives resource groups end to end through their HTTP
// handler, on the embedded store and on DynamoDB Local, for tests.
package apitest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/faults"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue/storequeue"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
)

// Tokens of the demo seed's apps (shared/seed/demo.json).
const (
	DemoToken     = "demo-app-token-0123456789abcdef"  // every write scope
	ReadOnlyToken = "read-only-token-0123456789abcdef" // read_content, read_script_tags
)

// BaseURL is the public base URL an Env's handler is configured with (as
// PUBLIC_BASE_URL configures a process's): absolute URLs in answers start
// with it, whatever Host a request names.
const BaseURL = "https://admin-api.example.com"

// Env is a seeded store and the handler of some groups over it.
type Env struct {
	T       testing.TB
	Deps    *platform.Deps
	Handler http.Handler
	// Reads counts the items the store's reads return (Deps.Store is it),
	// for tests of what a request costs.
	Reads  *ReadCounter
	groups []api.Group
}

// FixClock makes the service's time a clock that stands at start and moves
// only when the test advances it (created_at from ids too), and serves the
// groups over it: a test steps time instead of sleeping.
func (e *Env) FixClock(start time.Time) *clock.Fixed {
	c := clock.NewFixed(start)
	e.Change(func(d *platform.Deps) { d.Clock, d.IDs = c, ids.NewClock(c.Now) })
	return c
}

// Change changes the dependencies and serves the groups anew over them:
// the operations take what they use from Deps when the handler is built,
// so a change made to Deps afterwards would not reach them.
func (e *Env) Change(f func(d *platform.Deps)) {
	f(e.Deps)
	e.Deps.Store = checked(e.T, e.Deps.Store)
	e.Handler = api.Handler(&api.Deps{Deps: e.Deps}, e.groups...)
}

// OpenEmbedded returns a fresh embedded store in a temporary directory.
func OpenEmbedded(t testing.TB) store.Store {
	st, err := boltstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Stores lists the two store implementations every storage-dependent test runs on.
var Stores = []struct {
	Name string
	Open func(testing.TB) store.Store
}{
	{"embedded", OpenEmbedded},
	{"dynamodb", dynamotest.Open},
}

// New seeds st with the demo shop and serves groups over it. As api.Open
// does, it wires smart collection membership to variant changes
// (Deps.ProductChanged); a test may replace the hook (Change).
func New(t testing.TB, st store.Store, groups ...api.Group) *Env {
	t.Helper()
	loadDemo(t, st)
	rc := &ReadCounter{Store: st}
	d := api.NewDeps(rc, storequeue.New(rc, api.DeliveryQueue), outbound.New(true), clock.System{})
	d.BaseURL = BaseURL
	d.Store = checked(t, d.Store)
	return &Env{T: t, Deps: d, Handler: api.Handler(&api.Deps{Deps: d}, groups...), Reads: rc, groups: groups}
}

// ForEachStore runs fn once per store, each with a freshly seeded Env.
func ForEachStore(t *testing.T, fn func(t *testing.T, e *Env), groups ...api.Group) {
	for _, s := range Stores {
		t.Run(s.Name, func(t *testing.T) {
			fn(t, New(t, s.Open(t), groups...))
		})
	}
}

// SetApp installs an app holding token with exactly scopes, or changes
// the scopes of an installed one (its token and app records, as the seed
// writes them): the demo seed has only an app with every scope and one
// with read_content and read_script_tags.
func (e *Env) SetApp(id int64, token string, scopes ...string) {
	e.T.Helper()
	app := admin.App{ID: id, Name: "Test App", TokenHash: auth.HashToken(token), SharedSecret: "test-secret", Scopes: scopes}
	data := records.Encode(app)
	tk, ak := auth.TokenKey(app.TokenHash), auth.AppKey(id)
	err := e.Deps.Store.Transact(context.Background(),
		store.Put(store.Item{PK: tk.PK, SK: tk.SK, Version: 1, Data: data}, store.Always, 0),
		store.Put(store.Item{PK: ak.PK, SK: ak.SK, Version: 1, Data: data}, store.Always, 0))
	if err != nil {
		e.T.Fatal(err)
	}
}

// Response is a recorded response.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a generic value, failing the test if it is not JSON.
func (r *Response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Fatalf("response %d is not a JSON object: %v\n%s", r.Status, err, r.Body)
	}
	return v
}

// Object returns the object under key of a JSON object body.
func (r *Response) Object(t testing.TB, key string) map[string]any {
	t.Helper()
	v, ok := r.JSON(t)[key].(map[string]any)
	if !ok {
		t.Fatalf("response has no %q object: %s", key, r.Body)
	}
	return v
}

// List returns the array under key of a JSON object body.
func (r *Response) List(t testing.TB, key string) []any {
	t.Helper()
	v, ok := r.JSON(t)[key].([]any)
	if !ok {
		t.Fatalf("response has no %q array: %s", key, r.Body)
	}
	return v
}

// Do sends a request with the demo app's token. body may be nil, a string
// (sent as is) or a value (sent as JSON).
func (e *Env) Do(method, path string, body any) *Response {
	return e.DoAs(DemoToken, method, path, body)
}

// DoAs sends a request with the given token ("" sends none).
func (e *Env) DoAs(token, method, path string, body any) *Response {
	e.T.Helper()
	return e.DoWith(http.Header{"X-Service-Access-Token": {token}}, method, path, body)
}

// DoKeyed sends a request with the demo app's token and an
// Idempotency-Key.
func (e *Env) DoKeyed(key, method, path string, body any) *Response {
	e.T.Helper()
	return e.DoWith(http.Header{"X-Service-Access-Token": {DemoToken}, "Idempotency-Key": {key}}, method, path, body)
}

// DoWith sends a request with the given headers (an empty token header is
// not sent).
func (e *Env) DoWith(header http.Header, method, path string, body any) *Response {
	e.T.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		buf, err := json.Marshal(b)
		if err != nil {
			e.T.Fatal(err)
		}
		rd = bytes.NewReader(buf)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	for name, values := range header {
		if len(values) != 1 || values[0] != "" {
			req.Header[name] = values
		}
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	return &Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

// Expect fails the test unless the response has the status.
func (r *Response) Expect(t testing.TB, status int) *Response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

// Link returns the URL of the rel relation of a response's Link header
// (scheme and host dropped, so that it can be sent to the Env), "" when
// there is none.
func (r *Response) Link(rel string) string {
	for _, part := range strings.Split(r.Header.Get("Link"), ",") {
		target, params, ok := strings.Cut(strings.TrimSpace(part), ";")
		if !ok || strings.TrimSpace(params) != `rel="`+rel+`"` {
			continue
		}
		target = strings.TrimSuffix(strings.TrimPrefix(target, "<"), ">")
		if u, err := url.Parse(target); err == nil {
			return u.RequestURI()
		}
	}
	return ""
}

// IDs returns the ids of the records of a list body under key.
func (r *Response) IDs(t testing.TB, key string) []int64 {
	t.Helper()
	var out []int64
	for _, v := range r.List(t, key) {
		m, _ := v.(map[string]any)
		id, _ := m["id"].(float64)
		out = append(out, int64(id))
	}
	return out
}

// InjectFaults serves the groups over the store and queues failing rate
// of their calls, as DynamoDB and SQS fail, once the injector returned is
// started (api.InjectFaults).
func (e *Env) InjectFaults(rate float64) *faults.Injector {
	in := faults.New(rate)
	e.Change(func(d *platform.Deps) { api.InjectFaults(d, in) })
	return in
}
