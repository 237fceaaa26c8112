package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// expressApp is infra/shopify_app_express/app.cjs, running, with the
// cookies a browser would keep for it.
type expressApp struct {
	t         *testing.T
	url       string
	cookies   map[string]*http.Cookie
	client    *http.Client
	clockFile string // the app's clock offset: service_clock.cjs reads it
}

// startExpressApp runs infra/shopify_app_express/app.cjs (with env added)
// with service_clock.cjs preloaded, and returns it and the file its fetch
// reads the runner's address from, for the test to write once the runner
// has started.
func startExpressApp(t *testing.T, node, install, dir string, env ...string) (*expressApp, string) {
	t.Helper()
	script, _ := filepath.Abs(filepath.Join("..", "shopify_app_express", "app.cjs"))
	preload, _ := filepath.Abs(filepath.Join("..", "shopify_app_express", "service_clock.cjs"))
	serviceFile, clockFile := filepath.Join(dir, "service_url"), filepath.Join(dir, "clock_offset")
	port := startNodeApp(t, node, script, append([]string{"NODE_PATH=" + filepath.Join(install, "node_modules"),
		"NODE_OPTIONS=--require=" + preload, "CLOCK_OFFSET_FILE=" + clockFile, "SERVICE_URL_FILE=" + serviceFile,
		"API_KEY=" + nodeAppKey, "API_SECRET=" + nodeAppSecret, "SCOPES=read_content", "SHOP_DOMAIN=demo-shop.example.com"}, env...))
	return &expressApp{t: t, url: "http://127.0.0.1:" + port, cookies: map[string]*http.Cookie{}, clockFile: clockFile,
		client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}, serviceFile
}

// followClock sets the app's clock to the runner's: the offset GET
// /_local/clock answers, written (by a rename) where service_clock.cjs
// reads it at every reading of Date. The harness's clock, as fake timers
// are: the package is not touched.
func (a *expressApp) followClock(r *runner) {
	a.t.Helper()
	status, body := r.do(a.t, "", "GET", "/_local/clock", "")
	offset, ok := body["offset_seconds"].(float64)
	if status != 200 || !ok {
		a.t.Fatalf("the runner's clock: %d %v", status, body)
	}
	tmp := a.clockFile + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatFloat(offset, 'f', -1, 64)), 0o600); err != nil {
		a.t.Fatal(err)
	}
	if err := os.Rename(tmp, a.clockFile); err != nil {
		a.t.Fatal(err)
	}
}

// get requests the app (or, for the shop's https origin, the runner) as a
// browser would, keeping cookies and following no redirect.
func (a *expressApp) get(target string) (*http.Response, string) {
	a.t.Helper()
	return a.do(target, nil)
}

// do is get with header added: App Bridge's fetch sends the session token
// as Authorization: Bearer.
func (a *expressApp) do(target string, header http.Header) (*http.Response, string) {
	a.t.Helper()
	req, _ := http.NewRequest("GET", target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	req.Header.Set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36")
	if strings.HasPrefix(target, a.url) {
		for _, c := range a.cookies {
			req.AddCookie(&http.Cookie{Name: c.Name, Value: c.Value})
		}
	}
	res, err := a.client.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if strings.HasPrefix(target, a.url) {
		for _, c := range res.Cookies() {
			a.cookies[c.Name] = c
		}
	}
	return res, string(body)
}

// expressState is GET /_test/state's answer.
type expressState struct {
	Received []struct {
		Topic string `json:"topic"`
		Shop  string `json:"shop"`
	} `json:"received"`
	Grants   []expressGrant   `json:"grants"`
	Sessions []expressSession `json:"sessions"`
}

// expressGrant is a token request the package made, as the app's fetch
// saw it go to the runner and come back.
type expressGrant struct {
	GrantType          string `json:"grant_type"`
	RequestedTokenType string `json:"requested_token_type"`
	Expiring           string `json:"expiring"`
	Status             int    `json:"status"`
}

// expressSession is a session of the package's stock storage.
type expressSession struct {
	ID           string    `json:"id"`
	AccessToken  string    `json:"access_token"`
	Online       bool      `json:"online"`
	Expires      time.Time `json:"expires"`
	RefreshToken string    `json:"refresh_token"`
}

func (a *expressApp) state(wait string) expressState {
	a.t.Helper()
	_, body := a.get(a.url + "/_test/state?wait=" + url.QueryEscape(wait))
	var s expressState
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		a.t.Fatalf("state %s: %v", body, err)
	}
	return s
}

// An app built with Shopify's @shopify/shopify-app-express 8.0.2, as its
// Express template builds one, runs unmodified against the runner on both
// stores: it installs (auth.begin, the authorization page, auth.callback
// with expiring tokens), its after-auth step registers its APP_UNINSTALLED
// webhook through the GraphQL Admin API (reading its subscriptions with the
// EventBridge and Pub/Sub fragments, then webhookSubscriptionCreate), an
// authenticated route reads the shop through its GraphQL client (after the
// package's own shopifyAppShopName check), and once the runner's clock (and
// the app's, which follows it) passed the hour, the package refreshes its
// expiring token before the route runs: the route still answers, the
// refresh token rotated, and the runner refuses the replaced one. An
// uninstall's app/uninstalled delivery passes processWebhooks and the
// package deletes the shop's session from its stock storage.
func TestShopifyAppExpress(t *testing.T) {
	node, install := expressTools(t)
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		dir := t.TempDir()
		app, serviceFile := startExpressApp(t, node, install, dir)
		r := start(t, append(storeEnv, "LOG_LEVEL=debug", "SEED_FILE="+nodeAuthSeed(t, dir, app.url+"/api"))...)
		if err := os.WriteFile(serviceFile, []byte(r.url), 0o600); err != nil {
			t.Fatal(err)
		}

		expressInstall(t, app, r)
		s := app.state("")
		if len(s.Sessions) != 1 || s.Sessions[0].ID != "offline_demo-shop.example.com" || s.Sessions[0].RefreshToken == "" || s.Sessions[0].Expires.IsZero() {
			t.Fatalf("sessions after the install: %+v\nrunner:\n%s", s, r.log())
		}
		if want := []expressGrant{{GrantType: "authorization_code", Expiring: "1", Status: 200}}; !slices.Equal(s.Grants, want) {
			t.Errorf("grants of the install %+v, want %+v", s.Grants, want)
		}
		before := s.Sessions[0]
		status, body := r.do(t, before.AccessToken, "GET", "/admin/webhooks.json", "")
		hooks, _ := body["webhooks"].([]any)
		if status != 200 || len(hooks) != 1 || hooks[0].(map[string]any)["topic"] != "app/uninstalled" ||
			hooks[0].(map[string]any)["address"] != app.url+"/api/webhooks" {
			t.Fatalf("the app's webhooks after the install: %d %v\nrunner:\n%s", status, body, r.log())
		}

		res, shop := app.get(app.url + "/api/shop?shop=demo-shop.example.com")
		if res.StatusCode != 200 || !strings.Contains(shop, `"name":"Demo Shop"`) {
			t.Fatalf("the authenticated route: %d %s", res.StatusCode, shop)
		}

		// An hour and a minute of the runner's clock, and the app's with
		// it: the package finds its token expired, refreshes it (the
		// runner answers the refresh grant), checks the new one with
		// shopifyAppShopName, and the route answers. The browser's clock
		// did not move, so it still sends the session cookie.
		r.advance(t, time.Hour+time.Minute)
		app.followClock(r)
		res, shop = app.get(app.url + "/api/shop?shop=demo-shop.example.com")
		if res.StatusCode != 200 || !strings.Contains(shop, `"name":"Demo Shop"`) {
			t.Fatalf("the authenticated route after an hour: %d %q %s\nrunner:\n%s", res.StatusCode, res.Header.Get("Location"), shop, r.log())
		}
		s = app.state("")
		if want := []expressGrant{{GrantType: "authorization_code", Expiring: "1", Status: 200}, {GrantType: "refresh_token", Status: 200}}; !slices.Equal(s.Grants, want) {
			t.Errorf("grants after an hour %+v, want %+v", s.Grants, want)
		}
		if len(s.Sessions) != 1 {
			t.Fatalf("sessions after the refresh: %+v", s.Sessions)
		}
		after := s.Sessions[0]
		if after.ID != before.ID || after.AccessToken == before.AccessToken || after.RefreshToken == "" || after.RefreshToken == before.RefreshToken ||
			after.Expires.Sub(before.Expires) < time.Hour {
			t.Errorf("the refreshed session %+v, the installed one %+v: want both tokens rotated, an hour more", after, before)
		}
		// The runner: the replaced access token is revoked, and the new one
		// was used, so the replaced refresh token is refused.
		if status, body := r.do(t, before.AccessToken, "GET", "/admin/webhooks.json", ""); status != 401 {
			t.Errorf("the replaced access token: %d %v", status, body)
		}
		if status, body := r.do(t, "", "POST", "/admin/oauth/access_token", `{"client_id":"`+nodeAppKey+`","client_secret":"`+nodeAppSecret+
			`","grant_type":"refresh_token","refresh_token":"`+before.RefreshToken+`"}`); status != 400 || body["error"] != "invalid_grant" {
			t.Errorf("the replaced refresh token: %d %v", status, body)
		}

		if status, body := r.do(t, after.AccessToken, "DELETE", "/admin/api_permissions/current.json", ""); status != 200 {
			t.Fatalf("uninstall: %d %v", status, body)
		}
		s = app.state("app/uninstalled")
		if len(s.Received) != 1 || s.Received[0].Shop != "demo-shop.example.com" || len(s.Sessions) != 0 {
			t.Errorf("after the uninstall: %+v\nrunner:\n%s", s, r.log())
		}
		noTokenLogged(t, r, before.AccessToken, before.RefreshToken, after.AccessToken, after.RefreshToken)
	})
}

// The same package as an embedded app with the token exchange strategy
// (isEmbeddedApp, future.tokenExchange, online tokens, and the template's
// afterAuth registering webhooks), installed as Shopify-managed
// installation leaves one (by the seed), driven with session tokens the
// runner mints (POST /_local/session_token) as App Bridge gives them: a
// page load without one gets App Bridge's bounce; one with ?id_token=
// makes the package exchange it for an expiring offline token and the
// user's online token, register its webhook, and read the shop through
// its GraphQL client with the online token; a fetch with Authorization:
// Bearer finds that session again; another app's session token is refused
// by the package itself, with App Bridge's retry header; an uninstall
// removes both sessions.
func TestShopifyAppExpressEmbedded(t *testing.T) {
	node, install := expressTools(t)
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		dir := t.TempDir()
		app, serviceFile := startExpressApp(t, node, install, dir, "EMBEDDED=1")
		r := start(t, append(storeEnv, "LOG_LEVEL=debug", "SEED_FILE="+installedSeed(t, dir, app.url+"/api"))...)
		if err := os.WriteFile(serviceFile, []byte(r.url), 0o600); err != nil {
			t.Fatal(err)
		}
		var minted []string
		mint := func(clientID string) string {
			t.Helper()
			status, body := r.do(t, "", "POST", "/_local/session_token", `{"client_id":"`+clientID+`"}`)
			tok, _ := body["session_token"].(string)
			if status != 200 || tok == "" {
				t.Fatalf("session token: %d %v", status, body)
			}
			minted = append(minted, tok)
			return tok
		}
		const route = "/api/shop?shop=demo-shop.example.com&host=YWRtaW4uc2hvcGlmeS5jb20vc3RvcmUvZGVtbw&embedded=1"

		res, page := app.get(app.url + route)
		if res.StatusCode != 200 || !strings.Contains(page, `data-api-key="`+nodeAppKey+`"`) || !strings.Contains(page, "app-bridge.js") {
			t.Fatalf("a page load without a session token: %d %s", res.StatusCode, page)
		}

		res, shop := app.get(app.url + route + "&id_token=" + mint(nodeAppKey))
		if res.StatusCode != 200 || !strings.Contains(shop, `"name":"Demo Shop"`) || !strings.Contains(shop, `"online":true`) {
			t.Fatalf("the route with ?id_token: %d %s\nrunner:\n%s", res.StatusCode, shop, r.log())
		}
		s := app.state("")
		exchanges := []expressGrant{
			{GrantType: "urn:ietf:params:oauth:grant-type:token-exchange", RequestedTokenType: "urn:shopify:params:oauth:token-type:offline-access-token", Expiring: "1", Status: 200},
			{GrantType: "urn:ietf:params:oauth:grant-type:token-exchange", RequestedTokenType: "urn:shopify:params:oauth:token-type:online-access-token", Expiring: "1", Status: 200},
		}
		if !slices.Equal(s.Grants, exchanges) {
			t.Errorf("grants %+v, want %+v", s.Grants, exchanges)
		}
		sessions := map[string]expressSession{}
		for _, x := range s.Sessions {
			sessions[x.ID] = x
		}
		offline, online := sessions["offline_demo-shop.example.com"], sessions["demo-shop.example.com_1"]
		if len(sessions) != 2 || offline.Online || offline.RefreshToken == "" || offline.Expires.IsZero() || !online.Online || online.AccessToken == "" {
			t.Fatalf("sessions after the exchange: %+v", s.Sessions)
		}
		for _, tok := range []string{offline.AccessToken, online.AccessToken} {
			if status, body := r.do(t, tok, "GET", "/admin/oauth/access_scopes.json", ""); status != 200 {
				t.Errorf("a token of the exchange: %d %v", status, body)
			}
		}
		status, body := r.do(t, offline.AccessToken, "GET", "/admin/webhooks.json", "")
		hooks, _ := body["webhooks"].([]any)
		if status != 200 || len(hooks) != 1 || hooks[0].(map[string]any)["topic"] != "app/uninstalled" ||
			hooks[0].(map[string]any)["address"] != app.url+"/api/webhooks" {
			t.Errorf("the webhooks afterAuth registered: %d %v", status, body)
		}

		bearer := func(tok string) http.Header { return http.Header{"Authorization": {"Bearer " + tok}} }
		res, shop = app.do(app.url+"/api/shop", bearer(mint(nodeAppKey)))
		if res.StatusCode != 200 || !strings.Contains(shop, `"name":"Demo Shop"`) || len(app.state("").Grants) != len(exchanges) {
			t.Errorf("a fetch with Authorization: Bearer: %d %s (the session found again, no exchange)", res.StatusCode, shop)
		}
		res, body2 := app.do(app.url+"/api/shop", bearer(mint("demo-app-api-key")))
		if res.StatusCode != 401 || res.Header.Get("X-Shopify-Retry-Invalid-Session-Request") != "1" {
			t.Errorf("another app's session token: %d %q %s", res.StatusCode, res.Header.Get("X-Shopify-Retry-Invalid-Session-Request"), body2)
		}

		if status, body := r.do(t, offline.AccessToken, "DELETE", "/admin/api_permissions/current.json", ""); status != 200 {
			t.Fatalf("uninstall: %d %v", status, body)
		}
		if s = app.state("app/uninstalled"); len(s.Received) != 1 || len(s.Sessions) != 0 {
			t.Errorf("after the uninstall: %+v", s)
		}
		noTokenLogged(t, r, append(minted, offline.AccessToken, offline.RefreshToken, online.AccessToken)...)
	})
}

// noTokenLogged checks that the runner's log, at debug level, holds none
// of tokens (access, refresh and session tokens), whole or their secret
// part (a JWT's signature).
func noTokenLogged(t *testing.T, r *runner, tokens ...string) {
	t.Helper()
	log := r.log()
	if !strings.Contains(log, "/admin/oauth/") {
		t.Fatalf("the runner logged no token request: the check would see nothing\n%s", log)
	}
	for _, tok := range tokens {
		parts := strings.Split(tok, ".")
		if secret := parts[len(parts)-1]; tok == "" || strings.Contains(log, tok) || strings.Contains(log, secret) {
			t.Errorf("the runner's log holds a token (%.6s…) or is blank", tok)
		}
	}
}

// expressTools finds node and the package's install (make
// shopify-app-express, SHOPIFY_APP_EXPRESS), or skips.
func expressTools(t *testing.T) (node, install string) {
	t.Helper()
	install = os.Getenv("SHOPIFY_APP_EXPRESS")
	node, nodeErr := exec.LookPath("node")
	if install == "" || nodeErr != nil {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal("SHOPIFY_APP_EXPRESS is not set or node is missing (make shopify-app-express)")
		}
		t.Skip("SHOPIFY_APP_EXPRESS is not set (make shopify-app-express, then make shopify-app-express-path)")
	}
	return node, install
}

// installedSeed is nodeAuthSeed with the app installed, holding
// read_content, as Shopify-managed installation leaves an app before its
// first page load.
func installedSeed(t *testing.T, dir, appURL string) string {
	t.Helper()
	path := nodeAuthSeed(t, dir, appURL)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file map[string]any
	if err := json.Unmarshal(raw, &file); err != nil {
		t.Fatal(err)
	}
	apps := file["apps"].([]any)
	last := apps[len(apps)-1].(map[string]any)
	last["access_token"], last["scopes"] = "node-auth-seeded-token-0123456789", []string{"read_content"}
	raw, _ = json.Marshal(file)
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

var csrfRe = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// expressInstall plays the merchant: the app's /api/auth, the runner's
// page and Install (or straight back when the app holds its scopes), and
// the callback, which the package completes and redirects to the app's
// root.
func expressInstall(t *testing.T, app *expressApp, r *runner) {
	t.Helper()
	res, _ := app.get(app.url + "/api/auth?shop=demo-shop.example.com")
	authorize, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != 302 || authorize.Host != "demo-shop.example.com" {
		t.Fatalf("/api/auth: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	res, page := app.get(r.url + authorize.RequestURI())
	callback := res.Header.Get("Location")
	if res.StatusCode == 200 {
		m := csrfRe.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("the page has no form: %s", page)
		}
		form := authorize.Query()
		form.Set("csrf_token", m[1])
		post, err := app.client.PostForm(r.url+"/admin/oauth/authorize/install", form)
		if err != nil {
			t.Fatal(err)
		}
		post.Body.Close()
		callback = post.Header.Get("Location")
	}
	if !strings.HasPrefix(callback, app.url+"/api/auth/callback?") {
		t.Fatalf("the callback %q", callback)
	}
	res, body := app.get(callback)
	if res.StatusCode != 302 || !strings.HasPrefix(res.Header.Get("Location"), "/?shop=demo-shop.example.com") {
		t.Fatalf("the callback: %d %s %s\nrunner:\n%s", res.StatusCode, res.Header.Get("Location"), body, r.log())
	}
}
