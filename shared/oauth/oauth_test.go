package oauth_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/oauth"
	"github.com/storeadmin/adminapi/shared/store"
)

// The demo seed's app that is known but not installed (shared/seed/demo.json).
const (
	clientID = "install-demo-api-key"
	secret   = "install-demo-shared-secret"
	callback = "http://localhost:3000/auth/callback"
)

var groups = []api.Group{api.OAuth, api.Pages, api.ScriptTags, api.Webhooks, api.Events}

func form(e *apitest.Env, path string, v url.Values) *apitest.Response {
	e.T.Helper()
	return e.DoWith(http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, "POST", path, v.Encode())
}

func ask(scope string) url.Values {
	return url.Values{"client_id": {clientID}, "scope": {scope}, "redirect_uri": {callback}, "state": {"nonce-123"}}
}

// page shows the authorization page of q and returns its form's fields.
func page(t *testing.T, e *apitest.Env, q url.Values) url.Values {
	t.Helper()
	res := e.DoAs("", "GET", "/admin/oauth/authorize?"+q.Encode(), nil).Expect(t, 200)
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindSubmatch(res.Body)
	if m == nil {
		t.Fatalf("no form on the page: %s", res.Body)
	}
	v := url.Values{}
	for k, vs := range q {
		v[k] = vs
	}
	v.Set("csrf_token", string(m[1]))
	return v
}

// install shows the page, clicks Install and returns the redirect's query.
func install(t *testing.T, e *apitest.Env, q url.Values) url.Values {
	t.Helper()
	res := form(e, "/admin/oauth/authorize/install", page(t, e, q)).Expect(t, 302)
	loc, err := url.Parse(res.Header.Get("Location"))
	want, _ := url.Parse(q.Get("redirect_uri"))
	if err != nil || loc.Scheme+loc.Host+loc.Path != want.Scheme+want.Host+want.Path {
		t.Fatalf("install redirected to %q", res.Header.Get("Location"))
	}
	return loc.Query()
}

func exchange(e *apitest.Env, code string) *apitest.Response {
	return e.DoAs("", "POST", "/admin/oauth/access_token", map[string]string{"client_id": clientID, "client_secret": secret, "code": code})
}

// rawHMAC is the hmac as Shopify documents it, written independently of the
// service: the other parameters sorted, k=v joined by &.
func rawHMAC(q url.Values, key string) string {
	var parts []string
	for k := range q {
		if k != "hmac" {
			parts = append(parts, k+"="+q.Get(k))
		}
	}
	sort.Strings(parts)
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(strings.Join(parts, "&")))
	return hex.EncodeToString(m.Sum(nil))
}

func codes(t *testing.T, e *apitest.Env) int {
	t.Helper()
	items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: oauth.CodeKey("x").PK})
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

// An app known to the shop installs: the page, Install, the signed redirect,
// the exchange, REST calls with the granted scopes and no others, the
// install in the events log; then uninstall, and a reinstall that issues a
// new token while the old one stays revoked.
func TestInstallUninstallReinstall(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		q := install(t, e, ask("read_content, write_script_tags,read_content,read_script_tags"))
		if q.Get("shop") != "demo-shop.example.com" || q.Get("state") != "nonce-123" || q.Get("host") != oauth.Host("demo-shop.example.com") ||
			q.Get("code") == "" || q.Get("timestamp") == "" {
			t.Fatalf("redirect query %v", q)
		}
		if got := q.Get("hmac"); got != rawHMAC(q, secret) {
			t.Fatalf("hmac %s, want %s", got, rawHMAC(q, secret))
		}
		tok := exchange(e, q.Get("code")).Expect(t, 200).JSON(t)
		token, _ := tok["access_token"].(string)
		if tok["scope"] != "read_content,write_script_tags" || !strings.HasPrefix(token, "shpat_") || len(tok) != 2 {
			t.Fatalf("token answer %v", tok)
		}
		scopes := e.DoAs(token, "GET", "/admin/oauth/access_scopes.json", nil).Expect(t, 200).List(t, "access_scopes")
		if len(scopes) != 2 || scopes[0].(map[string]any)["handle"] != "read_content" || scopes[1].(map[string]any)["handle"] != "write_script_tags" {
			t.Errorf("access scopes %v", scopes)
		}
		e.DoAs(token, "GET", "/web/pages.json", nil).Expect(t, 200)
		e.DoAs(token, "POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "x"}}).Expect(t, 403)
		exchange(e, q.Get("code")).Expect(t, 400) // used once

		// Nothing of the token is stored in clear.
		items, _, _ := e.Deps.Store.Query(context.Background(), store.Query{PK: "token"})
		for _, it := range items {
			if strings.Contains(string(it.Data), token) || strings.Contains(it.SK, token) {
				t.Fatal("the token is stored in clear")
			}
		}

		e.DoAs(token, "POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{
			"topic": "app/uninstalled", "address": "https://hooks.example.com/install-demo"}}).Expect(t, 201)
		e.DoAs(token, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.DoAs(token, "GET", "/admin/oauth/access_scopes.json", nil).Expect(t, 401)

		q2 := install(t, e, ask("read_content"))
		token2, _ := exchange(e, q2.Get("code")).Expect(t, 200).JSON(t)["access_token"].(string)
		if token2 == "" || token2 == token {
			t.Fatalf("reinstall token %q (first %q)", token2, token)
		}
		e.DoAs(token, "GET", "/web/pages.json", nil).Expect(t, 401)
		e.DoAs(token2, "GET", "/web/pages.json", nil).Expect(t, 200)
		e.DoAs(token2, "GET", "/web/script_tags.json", nil).Expect(t, 403)

		evs := e.Do("GET", "/com/events.json?filter=App", nil).Expect(t, 200).List(t, "events")
		var seen []string
		for _, ev := range evs {
			m := ev.(map[string]any)
			if m["subject_id"] != 1009.0 || m["author"] != "Install Demo" {
				t.Errorf("event %v", m)
			}
			seen = append(seen, m["verb"].(string)+": "+m["message"].(string))
		}
		want := "installed: Install Demo was installed. uninstalled: Install Demo was uninstalled. installed: Install Demo was installed."
		if strings.Join(seen, " ") != want {
			t.Errorf("events %q, want %q", seen, want)
		}
	}, groups...)
}

// The page: who asks for what, no script, a strict policy, no framing, a
// form token; the decline tells the app nothing and keeps no code.
func TestPageAndDecline(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		q := ask("write_products")
		q.Set("state", `<script>alert(1)</script>`)
		res := e.DoAs("", "GET", "/admin/oauth/authorize?"+q.Encode(), nil).Expect(t, 200)
		body := string(res.Body)
		for _, want := range []string{`<span id="app">Install Demo</span>`, `<span id="shop">Demo Shop</span>`, "<li><code>write_products</code>: View and change products, variants and collections</li>", `name="csrf_token"`} {
			if !strings.Contains(body, want) {
				t.Errorf("page lacks %s:\n%s", want, body)
			}
		}
		if strings.Contains(body, "<script") {
			t.Errorf("page has a script:\n%s", body)
		}
		csp := res.Header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "frame-ancestors 'none'") ||
			!strings.Contains(csp, "form-action 'self' http://localhost:3000") || strings.Contains(csp, "script-src") {
			t.Errorf("CSP %q", csp)
		}
		if res.Header.Get("X-Frame-Options") != "DENY" || res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("headers %v", res.Header)
		}

		v := page(t, e, ask("write_products"))
		forged := url.Values{}
		for k, vs := range v {
			forged[k] = vs
		}
		forged.Set("scope", "write_products,write_themes") // not what the owner saw
		form(e, "/admin/oauth/authorize/install", forged).Expect(t, 403)
		form(e, "/admin/oauth/authorize/decline", forged).Expect(t, 403)
		res = form(e, "/admin/oauth/authorize/decline", v).Expect(t, 200)
		if res.Header.Get("Location") != "" || !strings.Contains(string(res.Body), "was not installed") {
			t.Errorf("decline answered %v %s", res.Header, res.Body)
		}
		if n := codes(t, e); n != 0 {
			t.Errorf("%d codes after a decline", n)
		}
		if n := e.Do("GET", "/com/events/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 0.0 {
			t.Errorf("%v events after a decline", n)
		}
	}, groups...)
}

// What the page refuses, as an error page that sends the owner nowhere: an
// unknown client_id, a redirect_uri outside the app's, unknown scopes (by
// name); and a form shown too long ago.
func TestAuthorizeRefuses(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct {
			change func(url.Values)
			want   string
		}{
			{func(q url.Values) { q.Set("client_id", "nobody") }, "client_id is not the client_id of an app of this shop"},
			{func(q url.Values) { q.Del("client_id") }, "client_id is required"},
			{func(q url.Values) { q.Set("redirect_uri", "https://evil.example.com/auth/callback") }, "redirect_uri is not one of the app"},
			{func(q url.Values) { q.Set("redirect_uri", "http://localhost:3000.evil.example.com/") }, "redirect_uri is not one of the app"},
			{func(q url.Values) { q.Set("redirect_uri", "http://localhost:3000/a/../../evil") }, "redirect_uri is not one of the app"},
			{func(q url.Values) { q.Set("redirect_uri", "http://user@localhost:3000/") }, "redirect_uri is not one of the app"},
			{func(q url.Values) { q.Set("scope", "read_products,read_bananas,write_everything") }, "scope has unknown scopes: read_bananas, write_everything"},
			{func(q url.Values) { q.Set("grant_options[]", "forever") }, "grant_options[] must be per-user or empty"},
		} {
			q := ask("read_products")
			c.change(q)
			res := e.DoAs("", "GET", "/admin/oauth/authorize?"+q.Encode(), nil).Expect(t, 400)
			if res.Header.Get("Location") != "" || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") ||
				!strings.Contains(strings.ReplaceAll(string(res.Body), "&#39;", "'"), c.want) || strings.Contains(string(res.Body), "<form") {
				t.Errorf("%v: %d %v\n%s", q, res.Status, res.Header, res.Body)
			}
			// The install form refuses them the same way, before its token.
			v := url.Values{}
			for k, vs := range q {
				v[k] = vs
			}
			v.Set("csrf_token", "x")
			if res := form(e, "/admin/oauth/authorize/install", v).Expect(t, 400); res.Header.Get("Location") != "" {
				t.Errorf("install of %v redirected", q)
			}
		}
		clk := e.FixClock(time.Now())
		v := page(t, e, ask("read_products"))
		clk.Advance(oauth.FormTTL + time.Second)
		form(e, "/admin/oauth/authorize/install", v).Expect(t, 403)
	}, groups...)
}

// The exchange refuses a wrong secret, an unknown or replayed code, a code
// of another app, and a code past its life by the service's clock.
func TestExchangeRefuses(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		code := install(t, e, ask("read_products")).Get("code")
		e.DoAs("", "POST", "/admin/oauth/access_token", map[string]string{"client_id": clientID, "client_secret": "wrong", "code": code}).Expect(t, 400)
		e.DoAs("", "POST", "/admin/oauth/access_token", map[string]string{"client_id": "demo-app-api-key", "client_secret": "demo-shared-secret", "code": code}).Expect(t, 400)
		for _, body := range []string{`{"client_secret":"x","code":"y"}`, `{"client_id":"install-demo-api-key","code":"y"}`, `{"client_id":"install-demo-api-key","client_secret":"install-demo-shared-secret"}`} {
			res := e.DoAs("", "POST", "/admin/oauth/access_token", body).Expect(t, 400)
			if !strings.Contains(string(res.Body), "is required") {
				t.Errorf("%s: %s", body, res.Body)
			}
		}
		e.DoAs("", "POST", "/admin/oauth/access_token", `%zz`).Expect(t, 400)
		e.DoAs("", "POST", "/admin/oauth/access_token", `{"code": 5}`).Expect(t, 422)
		exchange(e, "not-a-code").Expect(t, 400)

		clk.Advance(oauth.CodeTTL)
		if res := exchange(e, code).Expect(t, 400); !strings.Contains(string(res.Body), "has expired") {
			t.Errorf("expired code: %s", res.Body)
		}

		// A fresh code, as a form (the Ruby and Python libraries), works once.
		code = install(t, e, ask("read_products")).Get("code")
		v := url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}}
		form(e, "/admin/oauth/access_token", v).Expect(t, 200)
		form(e, "/admin/oauth/access_token", v).Expect(t, 400)
	}, groups...)
}

// The hmac signs every other parameter: a changed one no longer verifies
// (what the app's library checks), and the app's secret is its key.
func TestHMACDetectsTampering(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		q := install(t, e, ask("read_products"))
		if oauth.Sign(q, secret) != q.Get("hmac") || oauth.Sign(q, "another-secret") == q.Get("hmac") {
			t.Fatalf("hmac %s does not verify under the app's secret alone", q.Get("hmac"))
		}
		for _, k := range []string{"code", "shop", "state", "timestamp", "host"} {
			tampered := url.Values{}
			for name, vs := range q {
				tampered[name] = vs
			}
			tampered.Set(k, q.Get(k)+"0")
			if oauth.Sign(tampered, secret) == q.Get("hmac") || rawHMAC(tampered, secret) == q.Get("hmac") {
				t.Errorf("changing %s keeps the hmac valid", k)
			}
		}
		// A redirect_uri with a query of its own keeps it, signed too.
		q2 := ask("read_products")
		q2.Set("redirect_uri", "http://localhost:3000/cb?shop_hint=a%20b")
		got := install(t, e, q2)
		if got.Get("shop_hint") != "a b" || oauth.Sign(got, secret) != got.Get("hmac") {
			t.Errorf("redirect %v", got)
		}
	}, groups...)
}

// Concurrent exchanges of one code: exactly one gets a token.
func TestExchangeConcurrent(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		code := install(t, e, ask("read_content")).Get("code")
		const n = 6
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- exchange(e, code).Status
			}()
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for s := range statuses {
			got[s]++
		}
		if got[200] != 1 || got[400] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 400", got, n-1)
		}
		if n := codes(t, e); n != 0 {
			t.Errorf("%d codes left", n)
		}
	}, groups...)
}

// A per-user grant answers as Shopify's online tokens did and expires by
// the service's clock; the app's own token is untouched.
func TestPerUser(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		offline := exchange(e, install(t, e, ask("read_content")).Get("code")).Expect(t, 200).JSON(t)["access_token"].(string)
		q := ask("read_content")
		q.Set("grant_options[]", "per-user")
		res := e.DoAs("", "GET", "/admin/oauth/authorize?"+q.Encode(), nil).Expect(t, 200)
		if !strings.Contains(string(res.Body), `id="per-user"`) {
			t.Errorf("the page does not say the access is per user:\n%s", res.Body)
		}
		tok := exchange(e, install(t, e, q).Get("code")).Expect(t, 200).JSON(t)
		user, _ := tok["associated_user"].(map[string]any)
		if tok["expires_in"] != 86399.0 || tok["associated_user_scope"] != "read_content" || tok["scope"] != "read_content" ||
			!strings.HasPrefix(tok["access_token"].(string), "shpua_") || user["email"] != "owner@demo-shop.example.com" || user["account_owner"] != true {
			t.Fatalf("per-user answer %v", tok)
		}
		online := tok["access_token"].(string)
		e.DoAs(online, "GET", "/web/pages.json", nil).Expect(t, 200)
		clk.Advance(oauth.OnlineTTL)
		e.DoAs(online, "GET", "/web/pages.json", nil).Expect(t, 401)

		// An uninstall revokes the app's per-user tokens with its own.
		e.DoAs(offline, "GET", "/web/pages.json", nil).Expect(t, 200)
		q.Set("state", "again")
		online = exchange(e, install(t, e, q).Get("code")).Expect(t, 200).JSON(t)["access_token"].(string)
		e.DoAs(online, "GET", "/web/pages.json", nil).Expect(t, 200)
		e.DoAs(offline, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.DoAs(online, "GET", "/web/pages.json", nil).Expect(t, 401)
	}, groups...)
}
