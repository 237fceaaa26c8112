package oauth_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/oauth"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// nodeApp is infra/shopify_node/token_grants.cjs, running.
type nodeApp struct {
	t   *testing.T
	url string
}

// startNodeApp runs the script against e's handler (served on loopback)
// and points Install Demo's redirect URL at it.
func startNodeApp(t *testing.T, e *apitest.Env, install string) *nodeApp {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { e.Handler.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	script, _ := filepath.Abs(filepath.Join("..", "..", "infra", "shopify_node", "token_grants.cjs"))
	cmd := exec.Command(node, script)
	cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(install, "node_modules"), "SERVICE_URL="+srv.URL,
		"SHOP_DOMAIN="+shopDomain, "API_KEY="+clientID, "API_SECRET="+secret, "SCOPES=read_content")
	cmd.Stderr = os.Stderr
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	port, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if err != nil || !ok {
		t.Fatalf("the app printed %q: %v", line, err)
	}
	app := &nodeApp{t, "http://127.0.0.1:" + port}

	var rec admin.App
	it, err := records.Get(context.Background(), e.Deps.Store, auth.AppKey(1009), &rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.RedirectURLs = []string{app.url + "/"}
	if err := e.Deps.Store.Transact(context.Background(), store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1,
		Data: records.Encode(rec)}, store.IfVersion, it.Version)); err != nil {
		t.Fatal(err)
	}
	return app
}

// call posts body to the app's path and returns its JSON answer.
func (a *nodeApp) call(path string, body any) map[string]any {
	a.t.Helper()
	raw, _ := json.Marshal(body)
	res, err := http.Post(a.url+path, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(res.Body).Decode(&v); err != nil {
		a.t.Fatalf("%s: %v", path, err)
	}
	return v
}

// session is the library's session from an answer; it fails the test on
// an error.
func (a *nodeApp) session(v map[string]any) map[string]any {
	a.t.Helper()
	s, ok := v["session"].(map[string]any)
	if !ok {
		a.t.Fatalf("the library failed: %v", v)
	}
	return s
}

// installExpiring plays the browser: the app's auth.begin, the page,
// Install, and the callback to the app, whose auth.callback asks for an
// expiring token; it returns the library's session.
func (a *nodeApp) installExpiring(e *apitest.Env) map[string]any {
	t := a.t
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(u string, cookies []*http.Cookie) *http.Response {
		req, _ := http.NewRequest("GET", u, nil)
		req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
		for _, c := range cookies {
			req.AddCookie(c)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	begin := get(a.url+"/auth?shop="+shopDomain, nil)
	begin.Body.Close()
	authorize, err := url.Parse(begin.Header.Get("Location"))
	if err != nil || begin.StatusCode != 302 || authorize.Host != shopDomain || authorize.Path != "/admin/oauth/authorize" {
		t.Fatalf("auth.begin answered %d %q", begin.StatusCode, begin.Header.Get("Location"))
	}
	res := form(e, "/admin/oauth/authorize/install", page(t, e, authorize.Query())).Expect(t, 302)
	cb := get(res.Header.Get("Location"), begin.Cookies())
	defer cb.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(cb.Body).Decode(&v); err != nil {
		t.Fatal(err)
	}
	return a.session(v)
}

// Shopify's Node library (15.0.0), unmodified, gets every kind of token
// from the service: auth.begin/auth.callback with expiring tokens,
// auth.refreshToken after the service's clock passed the hour,
// auth.tokenExchange for online and offline tokens, expiring or not, and
// auth.migrateToExpiringToken; its GraphQL client reads the shop with
// each, and a refused refresh reaches it as the HTTP error it throws.
func TestShopifyNodeTokenGrants(t *testing.T) {
	install := need(t, "SHOPIFY_NODE")
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		app := startNodeApp(t, e, install)
		works := func(token string) {
			t.Helper()
			if got := app.call("/shop", map[string]any{"token": token}); got["name"] != "Demo Shop" {
				t.Errorf("the library's GraphQL client with %s…: %v", token[:6], got)
			}
		}

		s := app.installExpiring(e)
		if s["isOnline"] != false || s["refreshToken"] == nil || s["refreshTokenExpires"] == nil || s["expires"] == nil || s["scope"] != "read_content" {
			t.Fatalf("the callback's session %v", s)
		}
		works(s["accessToken"].(string))

		clk.Advance(oauth.AccessTTL)
		e.DoAs(s["accessToken"].(string), "GET", "/web/pages.json", nil).Expect(t, 401)
		r := app.session(app.call("/refresh", map[string]any{"refresh_token": s["refreshToken"]}))
		if r["accessToken"] == s["accessToken"] || r["refreshToken"] == s["refreshToken"] || r["refreshTokenExpires"] == nil {
			t.Fatalf("refreshed session %v", r)
		}
		works(r["accessToken"].(string))
		if got := app.call("/refresh", map[string]any{"refresh_token": s["refreshToken"]}); got["status"] != 400.0 {
			t.Errorf("a replaced refresh token, through the library: %v", got)
		}

		mint := func() string {
			return oauth.SignSession(oauth.NewSessionClaims(shopDomain, clientID, 1, time.Now()), secret)
		}
		on := app.session(app.call("/exchange", map[string]any{"session_token": mint(), "online": true}))
		info, _ := on["onlineAccessInfo"].(map[string]any)
		user, _ := info["associated_user"].(map[string]any)
		if on["isOnline"] != true || user["id"] != 1.0 || on["expires"] == nil {
			t.Errorf("online session %v", on)
		}
		works(on["accessToken"].(string))

		off := app.session(app.call("/exchange", map[string]any{"session_token": mint(), "online": false, "expiring": false}))
		if off["isOnline"] != false || off["refreshToken"] != nil || off["expires"] != nil {
			t.Errorf("non-expiring offline session %v", off)
		}
		works(off["accessToken"].(string))
		exp := app.session(app.call("/exchange", map[string]any{"session_token": mint(), "online": false, "expiring": true}))
		if exp["refreshToken"] == nil || exp["expires"] == nil {
			t.Errorf("expiring offline session %v", exp)
		}
		works(exp["accessToken"].(string))

		m := app.session(app.call("/migrate", map[string]any{"token": off["accessToken"]}))
		if m["refreshToken"] == nil || m["expires"] == nil || m["scope"] != "read_content" {
			t.Errorf("migrated session %v", m)
		}
		works(m["accessToken"].(string))
		e.DoAs(off["accessToken"].(string), "GET", "/web/pages.json", nil).Expect(t, 401)
	}, append(groups, api.GraphQL)...)
}
