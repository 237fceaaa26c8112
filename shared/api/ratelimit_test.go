package api_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
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

// frozenClock is a test clock that moves only when told.
type frozenClock struct{ ns atomic.Int64 }

func (c *frozenClock) now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *frozenClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// handlers returns n handlers over one store, each with its own limiter, as
// n Lambda instances (shared) or one local runner (memory, n = 1) would be.
func limitedHandlers(t *testing.T, st store.Store, shared bool, n int, clock *frozenClock) []http.Handler {
	t.Helper()
	return limitedHandlersOf(apitest.New(t, st, api.Redirects), st, shared, n, clock)
}

// limitedHandlersOf is limitedHandlers over e's dependencies.
func limitedHandlersOf(e *apitest.Env, st store.Store, shared bool, n int, clock *frozenClock) []http.Handler {
	var out []http.Handler
	for range n {
		d := api.Deps{Deps: e.Deps}
		if shared {
			d.Limiter = &ratelimit.Shared{Store: st, Now: clock.now}
		} else {
			d.Limiter = &ratelimit.Memory{Now: clock.now}
		}
		out = append(out, api.Handler(&d, api.Redirects))
	}
	return out
}

func call(h http.Handler, token string) *httptest.ResponseRecorder {
	req := httptest.NewRequest("GET", "/web/redirects/count.json", nil)
	req.Header.Set("X-Service-Access-Token", token)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// 60 calls at once by one app: exactly 40 pass and 20 are 429, whichever
// instance serves them (the clock stands still: claims can hold room but
// never add any); a second later 2 more pass; another app's bucket is its
// own.
func TestCallLimitHoldsAcrossInstances(t *testing.T) {
	for _, s := range apitest.Stores {
		for _, mode := range []struct {
			name      string
			shared    bool
			instances int
		}{{"shared", true, 3}, {"memory", false, 1}} {
			t.Run(s.Name+"/"+mode.name, func(t *testing.T) {
				clock := &frozenClock{}
				clock.advance(time.Duration(time.Now().UnixNano()))
				hs := limitedHandlers(t, s.Open(t), mode.shared, mode.instances, clock)
				var ok, limited atomic.Int64
				var wg sync.WaitGroup
				var bad atomic.Value
				// 12 calls in flight at a time, spread over the instances:
				// concurrent enough to race on the bucket, and within what
				// DynamoDB Local (one SQLite lock) serves without timing out
				// a write, which the limiter would count as an unreachable
				// store and let through.
				inFlight := make(chan struct{}, 12)
				for i := range 60 {
					wg.Go(func() {
						inFlight <- struct{}{}
						defer func() { <-inFlight }()
						w := call(hs[i%len(hs)], apitest.DemoToken)
						switch w.Code {
						case 200:
							ok.Add(1)
						case 429:
							limited.Add(1)
							if w.Header().Get("Retry-After") != "0.5" || w.Header().Get("X-Service-Shop-Api-Call-Limit") != "40/40" ||
								w.Body.String() != `{"errors":"Exceeded 2 calls per second for api client. Reduce request rates to resume uninterrupted service."}`+"\n" {
								bad.Store(w.Header().Get("Retry-After") + " " + w.Body.String())
							}
						default:
							bad.Store(w.Body.String())
						}
					})
				}
				wg.Wait()
				if ok.Load() != 40 || limited.Load() != 20 || bad.Load() != nil {
					t.Fatalf("%d passed, %d limited (want 40 and 20); odd answer: %v", ok.Load(), limited.Load(), bad.Load())
				}
				if w := call(hs[0], apitest.ReadOnlyToken); w.Code != 200 || w.Header().Get("X-Service-Shop-Api-Call-Limit") != "1/40" {
					t.Fatalf("another app: %d %q", w.Code, w.Header().Get("X-Service-Shop-Api-Call-Limit"))
				}
				clock.advance(time.Second)
				for i := range 3 {
					// One instance: the calls a second frees go to the
					// first claim that asks (ratelimit.LeaseTime states
					// what claims of several instances allow).
					w := call(hs[0], apitest.DemoToken)
					if want := []int{200, 200, 429}[i]; w.Code != want {
						t.Fatalf("after 1 s, call %d: %d, want %d", i+1, w.Code, want)
					}
				}
				clock.advance(500 * time.Millisecond)
				if w := call(hs[len(hs)-1], apitest.DemoToken); w.Code != 200 || w.Header().Get("X-Service-Shop-Api-Call-Limit") != "40/40" {
					t.Fatalf("after Retry-After: %d %q", w.Code, w.Header().Get("X-Service-Shop-Api-Call-Limit"))
				}
			})
		}
	}
}

// The header is on every authenticated answer, errors included; a call
// without a valid token spends nothing and carries no header.
func TestCallLimitHeaderOnEveryAuthenticatedAnswer(t *testing.T) {
	clock := &frozenClock{}
	clock.advance(time.Duration(time.Now().UnixNano()))
	h := limitedHandlers(t, apitest.OpenEmbedded(t), false, 1, clock)[0]
	for i, path := range []string{"/web/redirects.json", "/web/redirects/1.json", "/web/redirects.json?limit=0"} {
		req := httptest.NewRequest("GET", path, nil)
		req.Header.Set("X-Service-Access-Token", apitest.DemoToken)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if got, want := w.Header().Get("X-Service-Shop-Api-Call-Limit"), []string{"1/40", "2/40", "3/40"}[i]; got != want {
			t.Errorf("%s (%d): header %q, want %q", path, w.Code, got, want)
		}
		// Shopify's clients pace themselves by their own header name.
		if got := w.Header().Get("X-Shopify-Shop-Api-Call-Limit"); got != w.Header().Get("X-Service-Shop-Api-Call-Limit") {
			t.Errorf("%s: X-Shopify-Shop-Api-Call-Limit %q", path, got)
		}
	}
	if w := call(h, "not-a-token-of-anyone-here"); w.Code != 401 || w.Header().Get("X-Service-Shop-Api-Call-Limit") != "" {
		t.Errorf("unauthenticated: %d %q", w.Code, w.Header().Get("X-Service-Shop-Api-Call-Limit"))
	}
	// A call the app's scopes do not allow is authenticated: it counts.
	req := httptest.NewRequest("POST", "/web/redirects.json", strings.NewReader(`{"redirect":{"path":"/a","target":"/b"}}`))
	req.Header.Set("X-Service-Access-Token", apitest.ReadOnlyToken)
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	if w.Code != 403 || w.Header().Get("X-Service-Shop-Api-Call-Limit") != "1/40" {
		t.Errorf("out of scope: %d %q", w.Code, w.Header().Get("X-Service-Shop-Api-Call-Limit"))
	}
}

// brokenLimiter stands for a bucket the store cannot reach.
type brokenLimiter struct{}

func (brokenLimiter) Take(context.Context, *admin.App) (ratelimit.Decision, error) {
	return ratelimit.Decision{}, errors.New("throttled")
}

// A bucket that cannot be read lets calls through rather than failing them.
func TestCallLimitUnavailableLetsCallsThrough(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Redirects)
	d := api.Deps{Deps: e.Deps, Limiter: brokenLimiter{}}
	if w := call(api.Handler(&d, api.Redirects), apitest.DemoToken); w.Code != 200 {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
}
