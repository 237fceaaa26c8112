package api_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
)

// An uninstall served by one instance: another instance that keeps tokens
// for auth.TokenTTL (Lambda's) refuses the app's token, REST and GraphQL,
// once that long has passed by the service's clock; a router that reads
// the token on every call (the local runner's) refuses it at once.
func TestUninstallRevokesWithinTheBound(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Unix(1_800_000_000, 0))
		groups := []api.Group{api.Redirects, api.Webhooks, api.GraphQL}
		lambda := func() http.Handler { return api.Handler(&api.Deps{Deps: e.Deps, TokenTTL: auth.TokenTTL}, groups...) }
		revoker, other := lambda(), lambda()
		local := api.Handler(&api.Deps{Deps: e.Deps}, groups...)
		do := func(h http.Handler, method, path, body string) int {
			req := httptest.NewRequest(method, path, strings.NewReader(body))
			req.Header.Set("X-Service-Access-Token", apitest.DemoToken)
			req.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			return w.Code
		}
		rest := func(h http.Handler) int { return do(h, "GET", "/web/redirects/count.json", "") }
		graphql := func(h http.Handler) int {
			return do(h, "POST", "/admin/graphql.json", `{"query":"{ shop { name } }"}`)
		}
		for _, h := range []http.Handler{revoker, other, local} {
			if rest(h) != 200 || graphql(h) != 200 {
				t.Fatalf("before the uninstall: %d %d", rest(h), graphql(h))
			}
		}
		clk.Advance(200 * time.Millisecond)
		if code := do(revoker, "DELETE", "/admin/api_permissions/current.json", ""); code != 200 {
			t.Fatalf("uninstall: %d", code)
		}
		if rest(local) != 401 || graphql(local) != 401 {
			t.Fatalf("read on every call, at once: %d %d", rest(local), graphql(local))
		}
		clk.Advance(auth.TokenTTL - 200*time.Millisecond)
		for _, h := range []http.Handler{revoker, other} {
			if rest(h) != 401 || graphql(h) != 401 {
				t.Fatalf("%v after the cached read: %d %d", auth.TokenTTL, rest(h), graphql(h))
			}
		}
	})
}
