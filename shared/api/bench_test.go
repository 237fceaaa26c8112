package api_test

// Benchmarks of full requests through the handler (routing, authentication,
// scopes, request ids, JSON bodies) on the embedded store, and of the same
// GET over an in-memory store, which leaves the cost of the conventions
// alone. `make bench` runs them beside a loopback load run (infra/bench.sh):
//
//	go test -run '^$' -bench . -benchmem ./shared/api/

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/ratelimit"
	"github.com/storeadmin/adminapi/shared/store"
)

// sink is a ResponseWriter that keeps the status and discards the body, so
// that the figures are the handler's and not a recorder's.
type sink struct {
	h    http.Header
	code int
	n    int
}

func (s *sink) Header() http.Header { return s.h }
func (s *sink) WriteHeader(code int) {
	if s.code == 0 {
		s.code = code
	}
}
func (s *sink) Write(b []byte) (int, error) {
	if s.code == 0 {
		s.code = http.StatusOK
	}
	s.n += len(b)
	return len(b), nil
}
func (s *sink) reset() { clear(s.h); s.code, s.n = 0, 0 }

func newSink() *sink { return &sink{h: make(http.Header)} }

// request builds a request carrying the demo app's token.
func request(method, path string, body io.Reader) *http.Request {
	req := httptest.NewRequest(method, path, body)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Access-Token", apitest.DemoToken)
	return req
}

// benchGet serves the same GET b.N times. The request is built once: the
// router copies it before changing anything, so it can be served again.
func benchGet(b *testing.B, h http.Handler, path string) {
	b.Helper()
	req := request("GET", path, nil)
	w := newSink()
	h.ServeHTTP(w, req)
	if w.code != http.StatusOK {
		b.Fatalf("GET %s: status %d", path, w.code)
	}
	b.ReportAllocs()
	for b.Loop() {
		w.reset()
		h.ServeHTTP(w, req)
		if w.code != http.StatusOK {
			b.Fatalf("GET %s: status %d", path, w.code)
		}
	}
	b.ReportMetric(float64(w.n), "B/resp")
}

// createRedirect creates a redirect through the handler and returns its path.
func createRedirect(b *testing.B, e *apitest.Env, path string) string {
	b.Helper()
	rd := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": path, "target": "/target"}}).
		Expect(b, http.StatusCreated).Object(b, "redirect")
	return fmt.Sprintf("/web/redirects/%d.json", int64(rd["id"].(float64)))
}

func BenchmarkRedirectGet(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.Redirects)
	benchGet(b, e.Handler, createRedirect(b, e, "/bench-get"))
}

func BenchmarkRedirectList50(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.Redirects)
	for i := range 60 {
		createRedirect(b, e, fmt.Sprintf("/bench-list-%d", i))
	}
	if n := len(e.Do("GET", "/web/redirects.json", nil).Expect(b, http.StatusOK).List(b, "redirects")); n != 50 {
		b.Fatalf("list returned %d redirects, want 50", n)
	}
	benchGet(b, e.Handler, "/web/redirects.json")
}

func BenchmarkRedirectCreate(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.Redirects)
	w := newSink()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		w.reset()
		body := `{"redirect":{"path":"/bench-create-` + strconv.Itoa(i) + `","target":"https://example.com/x"}}`
		e.Handler.ServeHTTP(w, request("POST", "/web/redirects.json", strings.NewReader(body)))
		if w.code != http.StatusCreated {
			b.Fatalf("create %d: status %d", i, w.code)
		}
	}
}

func BenchmarkArticleCreate(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.Blogs)
	w := newSink()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		w.reset()
		body := `{"article":{"title":"Bench article ` + strconv.Itoa(i) + `","body_html":"<p>Benchmarked.</p>","tags":"bench, news"}}`
		e.Handler.ServeHTTP(w, request("POST", "/web/blogs/241253187/articles.json", strings.NewReader(body)))
		if w.code != http.StatusCreated {
			b.Fatalf("create %d: status %d", i, w.code)
		}
	}
}

func BenchmarkScriptTagGet(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.ScriptTags)
	tag := e.Do("POST", "/web/script_tags.json", map[string]any{"script_tag": map[string]any{"event": "onload", "src": "https://example.com/bench.js"}}).
		Expect(b, http.StatusCreated).Object(b, "script_tag")
	benchGet(b, e.Handler, fmt.Sprintf("/web/script_tags/%d.json", int64(tag["id"].(float64))))
}

// BenchmarkRedirectGetNoStorage is BenchmarkRedirectGet over memStore: the
// figure is the cost of the conventions (routing, the token lookup's hash and
// decode, scope check, request id, JSON out) without storage. Target: at most
// 50 µs per request, reported as us/req.
func BenchmarkRedirectGetNoStorage(b *testing.B) {
	e := apitest.New(b, newMemStore(), api.Redirects)
	benchGet(b, e.Handler, createRedirect(b, e, "/bench-get"))
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1e3, "us/req")
}

// memStore is a minimal map-backed store.Store: enough of the table (no
// secondary indexes, no expiry) for seeding, the token lookup and the
// redirect routes. It is not a second implementation to test against.
type memStore struct {
	mu    sync.RWMutex
	items map[store.Key]store.Item
}

var _ store.Store = (*memStore)(nil)

func newMemStore() *memStore { return &memStore{items: map[store.Key]store.Item{}} }

func (m *memStore) Get(_ context.Context, k store.Key) (store.Item, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	it, ok := m.items[k]
	if !ok {
		return store.Item{}, store.ErrNotFound
	}
	return it, nil
}

func (m *memStore) Query(_ context.Context, q store.Query) ([]store.Item, string, error) {
	if q.Index != store.Table {
		return nil, "", fmt.Errorf("memStore: index %q not supported", q.Index)
	}
	m.mu.RLock()
	var out []store.Item
	for k, it := range m.items {
		if k.PK == q.PK && strings.HasPrefix(k.SK, q.SKPrefix) &&
			(q.After == "" || k.SK > q.After) && (q.Before == "" || k.SK < q.Before) {
			out = append(out, it)
		}
	}
	m.mu.RUnlock()
	slices.SortFunc(out, func(a, b store.Item) int { return strings.Compare(a.SK, b.SK) })
	if q.Desc {
		slices.Reverse(out)
	}
	if q.Cursor != "" { // the cursor is the sort key of the last item returned
		last, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil {
			return nil, "", err
		}
		i := slices.IndexFunc(out, func(it store.Item) bool {
			if q.Desc {
				return it.SK < string(last)
			}
			return it.SK > string(last)
		})
		if i < 0 {
			i = len(out)
		}
		out = out[i:]
	}
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
		return out, base64.RawURLEncoding.EncodeToString([]byte(out[len(out)-1].SK)), nil
	}
	return out, "", nil
}

func (m *memStore) Count(ctx context.Context, q store.Query) (int, error) {
	q.Limit, q.Cursor = 0, ""
	items, _, err := m.Query(ctx, q)
	return len(items), err
}

func (m *memStore) Transact(_ context.Context, ops ...store.Op) error {
	if err := store.Validate(ops); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range ops {
		op := &ops[i]
		old, ok := m.items[op.TargetKey()]
		if (op.Cond == store.IfAbsent && ok) || (op.Cond == store.IfPresent && !ok) ||
			(op.Cond == store.IfVersion && (!ok || old.Version != op.Version)) {
			return &store.ConditionError{Key: op.TargetKey()}
		}
	}
	for i := range ops {
		op := &ops[i]
		k := op.TargetKey()
		switch op.Kind {
		case store.OpPut:
			m.items[k] = op.Item
		case store.OpDelete:
			delete(m.items, k)
		case store.OpAdd:
			it, ok := m.items[k]
			if !ok {
				it = store.Item{PK: k.PK, SK: k.SK}
			}
			nums := make(map[string]int64, len(it.Nums)+len(op.Deltas))
			for n, v := range it.Nums {
				nums[n] = v
			}
			for n, d := range op.Deltas {
				nums[n] += d
			}
			it.Nums = nums
			it.Version++
			m.items[k] = it
		}
	}
	return nil
}

func (m *memStore) Add(ctx context.Context, k store.Key, c store.Cond, deltas map[string]int64) (store.Item, error) {
	if err := m.Transact(ctx, store.Add(k, c, deltas)); err != nil {
		if store.FailedOn(err, k) {
			return store.Item{}, store.ErrConditionFailed
		}
		return store.Item{}, err
	}
	return m.Get(ctx, k)
}

func (m *memStore) Close() error { return nil }

// BenchmarkRedirectGetRateLimited is BenchmarkRedirectGet with the call
// limit on, so that the difference is the limiter's cost: memory is the
// local runner's (a map under a mutex), shared the Lambdas' (one
// conditional write of the app's bucket item per call). The clock moves a
// second per call, so the bucket never fills and every call is let through.
func BenchmarkRedirectGetRateLimited(b *testing.B) {
	for _, mode := range []string{"memory", "shared"} {
		b.Run(mode, func(b *testing.B) {
			st := apitest.OpenEmbedded(b)
			e := apitest.New(b, st, api.Redirects)
			path := createRedirect(b, e, "/bench-get")
			var tick atomic.Int64
			tick.Store(time.Now().UnixNano())
			now := func() time.Time { return time.Unix(0, tick.Add(int64(time.Second))) }
			d := api.Deps{Deps: e.Deps}
			if mode == "memory" {
				d.Limiter = &ratelimit.Memory{Now: now}
			} else {
				d.Limiter = &ratelimit.Shared{Store: st, Now: now}
			}
			benchGet(b, api.Handler(&d, api.Redirects), path)
		})
	}
}

// BenchmarkHandlerConstruction is the part of a cold start the code owns
// (after the runtime and api.Open): building one group's router, as each
// group's function does, every group's, and every group's as
// ShopifyPathsFunction does (api.Lazy, which builds only the groups of the
// request's path), then its first request (a GET without a token: 401), which builds the
// muxes of the routes it may match (and, in Shopify's form, their aliases).
func BenchmarkHandlerConstruction(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b))
	d := &api.Deps{Deps: e.Deps}
	shopify := "/admin/api/" + admin.LatestVersion(time.Now()) + "/pages/count.json"
	eager := func(groups ...api.Group) http.Handler { return api.Handler(d, groups...) }
	for _, c := range []struct {
		name, path string
		handler    func(...api.Group) http.Handler
		groups     []api.Group
	}{
		{"one group", "/web/pages/count.json", eager, []api.Group{api.Pages}},
		{"every group", "/web/pages/count.json", eager, api.Groups},
		{"every group, Shopify's form", shopify, eager, api.Groups},
		{"every group lazily, Shopify's form", shopify, func(groups ...api.Group) http.Handler { return api.Lazy(d, groups...) }, api.Groups},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				w := &sink{h: http.Header{}}
				c.handler(c.groups...).ServeHTTP(w, httptest.NewRequest(http.MethodGet, c.path, nil))
				if w.code != http.StatusUnauthorized {
					b.Fatalf("GET %s: %d, want 401", c.path, w.code)
				}
			}
		})
	}
}
