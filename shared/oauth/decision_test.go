package oauth_test

import (
	"context"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// ownerHash is the configured hash of secret, with few iterations: the
// race detector makes each one slow.
func ownerHash(secret string) string {
	salt := []byte("0123456789abcdef")
	key, _ := pbkdf2.Key(sha256.New, secret, salt, 1000, 32)
	enc := base64.RawStdEncoding
	return "pbkdf2-sha256$1000$" + enc.EncodeToString(salt) + "$" + enc.EncodeToString(key)
}

// configure rewrites the Install Demo app's record as the seed would give
// it access_scopes.
func configure(t *testing.T, e *apitest.Env, scopes ...string) {
	t.Helper()
	var rec admin.App
	it, err := records.Get(context.Background(), e.Deps.Store, auth.AppKey(1009), &rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.AccessScopes = scopes
	if err := e.Deps.Store.Transact(context.Background(), store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1,
		Data: records.Encode(rec)}, store.IfVersion, it.Version)); err != nil {
		t.Fatal(err)
	}
}

func tokenOf(t *testing.T, e *apitest.Env, code string) string {
	t.Helper()
	tok, _ := exchange(e, code).Expect(t, 200).JSON(t)["access_token"].(string)
	return tok
}

func perUser(scope string) url.Values {
	q := ask(scope)
	q.Set("grant_options[]", "per-user")
	return q
}

// refused: the page (and its install form) is a 400 error page naming
// what, and sends the owner nowhere.
func refused(t *testing.T, e *apitest.Env, q url.Values, what string) {
	t.Helper()
	res := e.DoAs("", "GET", "/admin/oauth/authorize?"+q.Encode(), nil).Expect(t, 400)
	if body := strings.ReplaceAll(string(res.Body), "&#39;", "'"); res.Header.Get("Location") != "" || !strings.Contains(body, what) {
		t.Errorf("%v: the error page does not say %q:\n%s", q, what, res.Body)
	}
}

// Finding 1: only the shop's owner approves scopes. With an owner's secret
// configured (AWS) the page asks for it and Install refuses without it;
// with none configured in AWS nothing can be approved; locally the page
// says its user is the owner. An app asks only for what its configuration
// lists, or, installed with none listed, for what it holds.
func TestOnlyTheOwnerApproves(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		res := e.DoAs("", "GET", "/admin/oauth/authorize?"+ask("read_content").Encode(), nil).Expect(t, 200)
		if !strings.Contains(string(res.Body), `id="local-owner"`) || strings.Contains(string(res.Body), "owner_secret") {
			t.Errorf("the local page does not say its user is the owner:\n%s", res.Body)
		}

		e.Change(func(d *platform.Deps) { d.Owner = platform.Owner{SecretHash: ownerHash("correct horse battery")} })
		res = e.DoAs("", "GET", "/admin/oauth/authorize?"+ask("read_content").Encode(), nil).Expect(t, 200)
		if !strings.Contains(string(res.Body), `type="password" id="owner_secret" name="owner_secret"`) || strings.Contains(string(res.Body), "local-owner") {
			t.Errorf("the page does not ask for the owner's secret:\n%s", res.Body)
		}
		v := page(t, e, ask("read_content"))
		for _, secret := range []string{"", "wrong horse battery"} {
			v.Set("owner_secret", secret)
			if res := form(e, "/admin/oauth/authorize/install", v).Expect(t, 403); res.Header.Get("Location") != "" ||
				!strings.Contains(string(res.Body), "Only the shop&#39;s owner can approve an app") {
				t.Errorf("owner secret %q: %v %s", secret, res.Header, res.Body)
			}
		}
		if n := codes(t, e); n != 0 {
			t.Fatalf("%d codes issued without the owner", n)
		}
		v.Set("owner_secret", "correct horse battery")
		loc, _ := url.Parse(form(e, "/admin/oauth/authorize/install", v).Expect(t, 302).Header.Get("Location"))
		token := tokenOf(t, e, loc.Query().Get("code"))

		// The probe: the installed app (read_content, nothing configured)
		// asks for five write scopes on its own page: refused by name, with
		// or without the owner, and nothing changes.
		greedy := ask("write_orders,write_customers,write_products,write_themes,write_content")
		refused(t, e, greedy, "scope asks for scopes beyond those granted, and the app's configuration lists none: write_orders, write_customers, write_products, write_themes, write_content")
		v = url.Values{}
		for k, vs := range greedy {
			v[k] = vs
		}
		v.Set("csrf_token", "x")
		v.Set("owner_secret", "correct horse battery")
		form(e, "/admin/oauth/authorize/install", v).Expect(t, 400)
		e.DoAs(token, "POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "x"}}).Expect(t, 403)

		// Configured scopes bound every grant; within them the owner approves more.
		configure(t, e, "write_content", "read_products")
		refused(t, e, ask("read_content,write_orders"), "scope asks for scopes the app's configuration does not list: write_orders")
		v = page(t, e, ask("read_products"))
		v.Set("owner_secret", "correct horse battery")
		loc, _ = url.Parse(form(e, "/admin/oauth/authorize/install", v).Expect(t, 302).Header.Get("Location"))
		tok := exchange(e, loc.Query().Get("code")).Expect(t, 200).JSON(t)
		if tok["access_token"] != token || tok["scope"] != "read_content,read_products" {
			t.Errorf("re-authorization answered %v", tok)
		}

		// In AWS with no owner's secret configured, nothing is approved.
		e.Change(func(d *platform.Deps) { d.Owner = platform.Owner{} })
		v = page(t, e, ask("write_content"))
		if res := form(e, "/admin/oauth/authorize/install", v).Expect(t, 403); !strings.Contains(string(res.Body), "OWNER_SECRET_HASH") {
			t.Errorf("no owner configured: %s", res.Body)
		}
	}, groups...)
}

// Finding 2: a per-user grant needs the app installed, asks only for what
// it holds, and dies with an uninstall: a code issued before it is
// refused after it, a fresh flow after it is refused, and an uninstall
// racing an exchange never leaves a token alive.
func TestPerUserGrantsFollowTheInstall(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		refused(t, e, perUser("read_content"), "grant_options[] per-user needs the app installed on the shop first")

		offline := tokenOf(t, e, install(t, e, ask("read_content,write_script_tags")).Get("code"))
		refused(t, e, perUser("write_orders"), "scope asks for scopes the app was not granted: write_orders")
		online := tokenOf(t, e, install(t, e, perUser("read_content,read_script_tags")).Get("code"))
		e.DoAs(online, "GET", "/web/script_tags.json", nil).Expect(t, 200)

		early := install(t, e, perUser("read_content")).Get("code")
		e.DoAs(offline, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.DoAs(online, "GET", "/web/pages.json", nil).Expect(t, 401)
		if res := exchange(e, early).Expect(t, 400); !strings.Contains(string(res.Body), "before the app was uninstalled") {
			t.Errorf("a code from before the uninstall: %s", res.Body)
		}
		refused(t, e, perUser("read_content"), "per-user needs the app installed")

		// The race, round after round: whichever commits first, no per-user
		// token outlives the uninstall.
		for round := range 8 {
			q := ask("read_content")
			q.Set("state", "round-"+strconv.Itoa(round))
			offline := tokenOf(t, e, install(t, e, q).Get("code"))
			code := install(t, e, perUser("read_content")).Get("code")
			var wg sync.WaitGroup
			var got *apitest.Response
			wg.Add(2)
			go func() { defer wg.Done(); got = exchange(e, code) }()
			go func() {
				defer wg.Done()
				e.DoAs(offline, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
			}()
			wg.Wait()
			if got.Status == 200 {
				tok, _ := got.JSON(t)["access_token"].(string)
				e.DoAs(tok, "GET", "/web/pages.json", nil).Expect(t, 401)
			} else {
				got.Expect(t, 400)
			}
		}
	}, groups...)
}

// Finding 3: a re-authorization answers the same offline token (Shopify:
// only an uninstall revokes it), with no page for scopes the app holds; a
// seeded token stays valid beside the one a re-authorization issues, and
// an uninstall revokes both.
func TestReauthorizationKeepsTheToken(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		first := tokenOf(t, e, install(t, e, ask("read_content")).Get("code"))
		res := e.DoAs("", "GET", "/admin/oauth/authorize?"+ask("read_content").Encode(), nil).Expect(t, 302)
		loc, _ := url.Parse(res.Header.Get("Location"))
		if loc.Query().Get("hmac") != rawHMAC(loc.Query(), secret) || loc.Query().Get("state") != "nonce-123" {
			t.Fatalf("straight back to %s", loc)
		}
		tok := exchange(e, loc.Query().Get("code")).Expect(t, 200).JSON(t)
		if tok["access_token"] != first || tok["scope"] != "read_content" {
			t.Fatalf("re-authorization answered %v, want %s", tok, first)
		}
		e.DoAs(first, "GET", "/web/pages.json", nil).Expect(t, 200)
		if n := e.Do("GET", "/com/events/count.json?filter=App", nil).Expect(t, 200).JSON(t)["count"]; n != 1.0 {
			t.Errorf("%v App events, want the install's alone", n)
		}

		e.DoAs(first, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		again := tokenOf(t, e, install(t, e, ask("read_content")).Get("code"))
		if again == first {
			t.Error("a reinstall after an uninstall answered the revoked token")
		}
		e.DoAs(first, "GET", "/web/pages.json", nil).Expect(t, 401)

		// The Demo App's token came from the seed.
		demo := url.Values{"client_id": {"demo-app-api-key"}, "scope": {"write_content"}, "redirect_uri": {callback}, "state": {"s"}}
		res = e.DoAs("", "GET", "/admin/oauth/authorize?"+demo.Encode(), nil).Expect(t, 302)
		loc, _ = url.Parse(res.Header.Get("Location"))
		issued, _ := e.DoAs("", "POST", "/admin/oauth/access_token", map[string]string{"client_id": "demo-app-api-key",
			"client_secret": "demo-shared-secret", "code": loc.Query().Get("code")}).Expect(t, 200).JSON(t)["access_token"].(string)
		res = e.DoAs("", "GET", "/admin/oauth/authorize?"+demo.Encode(), nil).Expect(t, 302)
		loc, _ = url.Parse(res.Header.Get("Location"))
		if second := e.DoAs("", "POST", "/admin/oauth/access_token", map[string]string{"client_id": "demo-app-api-key",
			"client_secret": "demo-shared-secret", "code": loc.Query().Get("code")}).Expect(t, 200).JSON(t)["access_token"]; second != issued {
			t.Errorf("second re-authorization answered %v, want %s", second, issued)
		}
		e.Do("GET", "/web/pages.json", nil).Expect(t, 200)
		e.DoAs(issued, "GET", "/web/pages.json", nil).Expect(t, 200)
		e.DoAs(issued, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.Do("GET", "/web/pages.json", nil).Expect(t, 401)
		e.DoAs(issued, "GET", "/web/pages.json", nil).Expect(t, 401)
	}, groups...)
}

// Finding 6: the callback's timestamp is the app's time (the machine's),
// so that a library's 90-second tolerance holds after the service's clock
// moved; the code still expires by the service's clock.
func TestCallbackTimestampIsTheAppsTime(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now().Add(30 * 24 * time.Hour))
		q := install(t, e, ask("read_content"))
		ts, err := strconv.ParseInt(q.Get("timestamp"), 10, 64)
		if d := time.Since(time.Unix(ts, 0)); err != nil || d < -90*time.Second || d > 90*time.Second {
			t.Errorf("timestamp %s is %v from the machine's clock", q.Get("timestamp"), d)
		}
		clk.Advance(10 * time.Minute)
		exchange(e, q.Get("code")).Expect(t, 400)
	}, groups...)
}
