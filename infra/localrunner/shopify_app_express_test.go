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
	"strings"
	"testing"
	"time"
)

// expressApp is infra/shopify_app_express/app.cjs, running, with the
// cookies a browser would keep for it.
type expressApp struct {
	t       *testing.T
	url     string
	cookies map[string]*http.Cookie
	client  *http.Client
}

// get requests the app (or, for the shop's https origin, the runner) as a
// browser would, keeping cookies and following no redirect.
func (a *expressApp) get(target string) (*http.Response, string) {
	a.t.Helper()
	req, _ := http.NewRequest("GET", target, nil)
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
	Sessions []struct {
		ID           string `json:"id"`
		AccessToken  string `json:"access_token"`
		Online       bool   `json:"online"`
		Expires      string `json:"expires"`
		RefreshToken bool   `json:"refresh_token"`
	} `json:"sessions"`
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
// package's own shopifyAppShopName check), an uninstall's app/uninstalled
// delivery passes processWebhooks and the package deletes the shop's
// session from its stock storage. After the runner's clock passes the hour
// the token is refused with a 401, which the package answers by sending the
// merchant through OAuth again.
func TestShopifyAppExpress(t *testing.T) {
	install := os.Getenv("SHOPIFY_APP_EXPRESS")
	node, nodeErr := exec.LookPath("node")
	if install == "" || nodeErr != nil {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal("SHOPIFY_APP_EXPRESS is not set or node is missing (make shopify-app-express)")
		}
		t.Skip("SHOPIFY_APP_EXPRESS is not set (make shopify-app-express, then make shopify-app-express-path)")
	}
	script, _ := filepath.Abs(filepath.Join("..", "shopify_app_express", "app.cjs"))
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		dir := t.TempDir()
		target := filepath.Join(dir, "service_url")
		port := startNodeApp(t, node, script, []string{"NODE_PATH=" + filepath.Join(install, "node_modules"), "SERVICE_URL_FILE=" + target,
			"API_KEY=" + nodeAppKey, "API_SECRET=" + nodeAppSecret, "SCOPES=read_content", "SHOP_DOMAIN=demo-shop.example.com"})
		app := &expressApp{t: t, url: "http://127.0.0.1:" + port, cookies: map[string]*http.Cookie{},
			client: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
		r := start(t, append(storeEnv, "SEED_FILE="+nodeAuthSeed(t, dir, app.url+"/api"))...)
		if err := os.WriteFile(target, []byte(r.url), 0o600); err != nil {
			t.Fatal(err)
		}

		expressInstall(t, app, r)
		s := app.state("")
		if len(s.Sessions) != 1 || s.Sessions[0].ID != "offline_demo-shop.example.com" || !s.Sessions[0].RefreshToken || s.Sessions[0].Expires == "" {
			t.Fatalf("sessions after the install: %+v\nrunner:\n%s", s, r.log())
		}
		token := s.Sessions[0].AccessToken
		status, body := r.do(t, token, "GET", "/admin/webhooks.json", "")
		hooks, _ := body["webhooks"].([]any)
		if status != 200 || len(hooks) != 1 || hooks[0].(map[string]any)["topic"] != "app/uninstalled" ||
			hooks[0].(map[string]any)["address"] != app.url+"/api/webhooks" {
			t.Fatalf("the app's webhooks after the install: %d %v\nrunner:\n%s", status, body, r.log())
		}

		res, shop := app.get(app.url + "/api/shop?shop=demo-shop.example.com")
		if res.StatusCode != 200 || !strings.Contains(shop, `"name":"Demo Shop"`) {
			t.Fatalf("the authenticated route: %d %s", res.StatusCode, shop)
		}

		// An hour of the runner's clock: the package, judging expiry by its
		// own clock, still sends the token, gets a 401 and sends the
		// merchant through OAuth again.
		r.advance(t, time.Hour)
		res, _ = app.get(app.url + "/api/shop?shop=demo-shop.example.com")
		if loc := res.Header.Get("Location"); res.StatusCode != 302 || !strings.HasPrefix(loc, "/api/auth?shop=demo-shop.example.com") {
			t.Errorf("after an hour: %d %q", res.StatusCode, loc)
		}
		expressInstall(t, app, r) // straight back: the scopes are held
		token = app.state("").Sessions[0].AccessToken

		if status, body := r.do(t, token, "DELETE", "/admin/api_permissions/current.json", ""); status != 200 {
			t.Fatalf("uninstall: %d %v", status, body)
		}
		s = app.state("app/uninstalled")
		if len(s.Received) != 1 || s.Received[0].Shop != "demo-shop.example.com" || len(s.Sessions) != 0 {
			t.Errorf("after the uninstall: %+v\nrunner:\n%s", s, r.log())
		}
	})
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
