package oauth_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
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

const shopDomain = "demo-shop.example.com"

func post(e *apitest.Env, body map[string]any) *apitest.Response {
	return e.DoAs("", "POST", "/admin/oauth/access_token", body)
}

func grantBody(extra map[string]any) map[string]any {
	b := map[string]any{"client_id": clientID, "client_secret": secret}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

// codeOf authorizes q and returns the code: through the page, or
// straight back for an installed app asking for scopes it holds.
func codeOf(t *testing.T, e *apitest.Env, q url.Values) string {
	t.Helper()
	res := e.DoAs("", "GET", "/admin/oauth/authorize?"+q.Encode(), nil)
	if res.Status == 302 {
		loc, err := url.Parse(res.Header.Get("Location"))
		if err != nil {
			t.Fatal(err)
		}
		return loc.Query().Get("code")
	}
	return install(t, e, q).Get("code")
}

// expiringInstall installs Install Demo with expiring=1 and returns the
// answer.
func expiringInstall(t *testing.T, e *apitest.Env, scope string) map[string]any {
	t.Helper()
	code := codeOf(t, e, ask(scope))
	return post(e, grantBody(map[string]any{"code": code, "expiring": "1"})).Expect(t, 200).JSON(t)
}

func refresh(e *apitest.Env, token string) *apitest.Response {
	return post(e, grantBody(map[string]any{"grant_type": "refresh_token", "refresh_token": token}))
}

// oauthError checks an answer in Shopify's OAuth shape.
func oauthError(t *testing.T, res *apitest.Response, status int, code, mentions string) {
	t.Helper()
	m := res.Expect(t, status).JSON(t)
	if m["error"] != code || !strings.Contains(m["error_description"].(string), mentions) || len(m) != 2 {
		t.Errorf("answer %v, want %s naming %q", m, code, mentions)
	}
}

// clean checks that no item of the store holds any of tokens in clear.
func clean(t *testing.T, e *apitest.Env, tokens ...string) {
	t.Helper()
	for _, pk := range []string{"token", "app"} {
		items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: pk})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			for _, tok := range tokens {
				if strings.Contains(string(it.Data), tok) || strings.Contains(it.SK, tok) {
					t.Fatalf("%s/%s holds a token in clear", it.PK, it.SK)
				}
			}
		}
	}
}

// appTokens counts the token items holding app id's record.
func appTokens(t *testing.T, e *apitest.Env, id int64) int {
	t.Helper()
	items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: "token"})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range items {
		var a admin.App
		if records.Decode(&it, &a) == nil && a.ID == id {
			n++
		}
	}
	return n
}

// An expiring offline token: the answer's fields, expiry by the service's
// clock, rotation, the previous refresh token good until the new access
// token is first used (a retry answered the same pair), then refused; an
// uninstall revokes them all.
func TestExpiringOfflineTokens(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		tok := expiringInstall(t, e, "read_content")
		access, _ := tok["access_token"].(string)
		refresh1, _ := tok["refresh_token"].(string)
		if !strings.HasPrefix(access, "shpat_") || !strings.HasPrefix(refresh1, "shprt_") || tok["expires_in"] != 3600.0 ||
			tok["refresh_token_expires_in"] != 7776000.0 || tok["scope"] != "read_content" || tok["associated_user"] != nil || len(tok) != 5 {
			t.Fatalf("expiring answer %v", tok)
		}
		e.DoAs(access, "GET", "/web/pages.json", nil).Expect(t, 200)
		if n := appTokens(t, e, 1009); n != 1 {
			t.Errorf("%d tokens of the app after an expiring install, want the expiring one alone", n)
		}
		clk.Advance(oauth.AccessTTL)
		e.DoAs(access, "GET", "/web/pages.json", nil).Expect(t, 401)

		// Rotation: a new pair; the access token it replaces is revoked.
		next := refresh(e, refresh1).Expect(t, 200).JSON(t)
		access2, refresh2 := next["access_token"].(string), next["refresh_token"].(string)
		if access2 == access || refresh2 == refresh1 || next["expires_in"] != 3600.0 || next["scope"] != "read_content" || next["refresh_token_expires_in"] == nil {
			t.Fatalf("refresh answer %v", next)
		}
		// The answer was lost: the previous refresh token, again, is
		// answered the same pair while it is unused.
		clk.Advance(10 * time.Second)
		again := refresh(e, refresh1).Expect(t, 200).JSON(t)
		if again["access_token"] != access2 || again["refresh_token"] != refresh2 || again["expires_in"] != 3590.0 {
			t.Fatalf("retry answered %v, want the same pair", again)
		}
		e.DoAs(access2, "GET", "/web/pages.json", nil).Expect(t, 200) // its first use
		oauthError(t, refresh(e, refresh1), 400, "invalid_grant", "refresh_token")
		clean(t, e, access, refresh1, access2, refresh2)

		// The current one rotates on.
		third := refresh(e, refresh2).Expect(t, 200).JSON(t)
		access3, refresh3 := third["access_token"].(string), third["refresh_token"].(string)
		e.DoAs(access2, "GET", "/web/pages.json", nil).Expect(t, 401)
		e.DoAs(access3, "GET", "/web/pages.json", nil).Expect(t, 200)
		oauthError(t, refresh(e, "shprt_00000000000000000000000000000000"), 400, "invalid_grant", "refresh_token")

		// A refresh token past its life by the service's clock.
		clk.Advance(oauth.RefreshTTL)
		oauthError(t, refresh(e, refresh3), 400, "invalid_grant", "has expired")

		// An uninstall revokes the access token and every refresh token.
		tok = expiringInstall(t, e, "read_content") // a new pair on the install
		access, refresh1 = tok["access_token"].(string), tok["refresh_token"].(string)
		e.DoAs(access, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.DoAs(access, "GET", "/web/pages.json", nil).Expect(t, 401)
		oauthError(t, refresh(e, refresh1), 400, "invalid_grant", "refresh_token")
		if n := appTokens(t, e, 1009); n != 0 {
			t.Errorf("%d tokens of the app after the uninstall", n)
		}
	}, groups...)
}

// expiring arrives as the string '0' or '1' (Shopify's libraries), a
// number, or in a form; anything else is a 400 naming it. '0' is the
// non-expiring token.
func TestExpiringParameter(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		code := install(t, e, ask("read_content")).Get("code")
		res := post(e, grantBody(map[string]any{"code": code, "expiring": "yes"})).Expect(t, 400)
		if !strings.Contains(string(res.Body), "expiring") {
			t.Errorf("bad expiring: %s", res.Body)
		}
		tok := post(e, grantBody(map[string]any{"code": code, "expiring": "0"})).Expect(t, 200).JSON(t)
		if tok["refresh_token"] != nil || tok["expires_in"] != nil {
			t.Errorf("expiring '0' answered %v", tok)
		}
		code = codeOf(t, e, ask("read_content"))
		tok = post(e, grantBody(map[string]any{"code": code, "expiring": 1})).Expect(t, 200).JSON(t)
		if tok["refresh_token"] == nil {
			t.Errorf("expiring 1 answered %v", tok)
		}
		code = codeOf(t, e, ask("read_content"))
		v := url.Values{"client_id": {clientID}, "client_secret": {secret}, "code": {code}, "expiring": {"1"}}
		if tok = form(e, "/admin/oauth/access_token", v).Expect(t, 200).JSON(t); tok["refresh_token"] == nil {
			t.Errorf("a form's expiring=1 answered %v", tok)
		}
		// The refresh grant as a form too.
		v = url.Values{"client_id": {clientID}, "client_secret": {secret}, "grant_type": {"refresh_token"}, "refresh_token": {tok["refresh_token"].(string)}}
		form(e, "/admin/oauth/access_token", v).Expect(t, 200)
		oauthError(t, post(e, grantBody(map[string]any{"grant_type": "password"})), 400, "unsupported_grant_type", "grant_type")
		oauthError(t, refresh(e, ""), 400, "invalid_request", "refresh_token is required")
		oauthError(t, post(e, map[string]any{"client_id": clientID, "client_secret": "wrong", "grant_type": "refresh_token", "refresh_token": "x"}),
			401, "invalid_client", "client_secret")
	}, groups...)
}

// Concurrent refreshes with one refresh token: every one is answered the
// same pair (one rotates, the others find its token previous and unused),
// so no token is lost or doubled; a refresh racing an uninstall leaves no
// token alive.
func TestRefreshConcurrent(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		tok := expiringInstall(t, e, "read_content")
		const n = 6
		answers := make(chan map[string]any, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers <- refresh(e, tok["refresh_token"].(string)).Expect(t, 200).JSON(t)
			}()
		}
		wg.Wait()
		close(answers)
		pairs := map[string]bool{}
		var access string
		for a := range answers {
			access = a["access_token"].(string)
			pairs[access+" "+a["refresh_token"].(string)] = true
		}
		if len(pairs) != 1 {
			t.Fatalf("%d pairs from concurrent refreshes, want one: %v", len(pairs), pairs)
		}
		if got := appTokens(t, e, 1009); got != 1 {
			t.Errorf("%d tokens of the app, want 1", got)
		}
		e.DoAs(tok["access_token"].(string), "GET", "/web/pages.json", nil).Expect(t, 401)

		// Concurrent first uses and a replay of the previous refresh token:
		// once used, the replay is refused, whatever the order.
		var uses sync.WaitGroup
		for range 3 {
			uses.Add(1)
			go func() {
				defer uses.Done()
				e.DoAs(access, "GET", "/web/pages.json", nil).Expect(t, 200)
			}()
		}
		uses.Wait()
		oauthError(t, refresh(e, tok["refresh_token"].(string)), 400, "invalid_grant", "refresh_token")

		// A refresh racing the uninstall: whichever commits second sees
		// the other; nothing of the app's tokens stays.
		var current string
		for p := range pairs {
			current = strings.Fields(p)[1]
		}
		var race sync.WaitGroup
		var refreshed, uninstalled int
		race.Add(2)
		go func() {
			defer race.Done()
			refreshed = refresh(e, current).Status
		}()
		go func() {
			defer race.Done()
			uninstalled = e.DoAs(access, "DELETE", "/admin/api_permissions/current.json", nil).Status
		}()
		race.Wait()
		got := appTokens(t, e, 1009)
		switch {
		case uninstalled == 200 && refreshed == 400 && got == 0: // the uninstall first
		case refreshed == 200 && uninstalled == 401 && got == 1: // the refresh first: it revoked the caller's token
		default:
			t.Errorf("refresh %d, uninstall %d, %d tokens left", refreshed, uninstalled, got)
		}
	}, groups...)
}

// session is a session token of Install Demo as App Bridge would give
// it, changed by change.
func session(change func(c *oauth.SessionClaims), key string) string {
	c := oauth.NewSessionClaims(shopDomain, clientID, 1, time.Now())
	if change != nil {
		change(&c)
	}
	return oauth.SignSession(c, key)
}

func tokenExchange(e *apitest.Env, subject, requested string, extra map[string]any) *apitest.Response {
	b := grantBody(map[string]any{"grant_type": oauth.GrantTokenExchange, "subject_token": subject,
		"subject_token_type": oauth.TokenTypeID, "requested_token_type": requested})
	for k, v := range extra {
		b[k] = v
	}
	return post(e, b)
}

// Token exchange: a session token for an online token, the install's
// offline token, or an expiring one; the hostile session tokens and
// scopes are refused in Shopify's shape.
func TestTokenExchange(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		// Not installed yet: installing is the owner's decision.
		oauthError(t, tokenExchange(e, session(nil, secret), oauth.TokenTypeOffline, nil), 400, "invalid_grant", "not installed")
		offline := tokenOf(t, e, install(t, e, ask("read_content,write_script_tags")).Get("code"))

		on := tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, map[string]any{"expiring": "0"}).Expect(t, 200).JSON(t)
		user, _ := on["associated_user"].(map[string]any)
		if !strings.HasPrefix(on["access_token"].(string), "shpua_") || on["expires_in"] != 86399.0 || on["scope"] != "read_content,write_script_tags" ||
			user["id"] != 1.0 || user["account_owner"] != true {
			t.Fatalf("online answer %v", on)
		}
		e.DoAs(on["access_token"].(string), "GET", "/web/pages.json", nil).Expect(t, 200)
		narrow := tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, map[string]any{"scope": "read_content"}).Expect(t, 200).JSON(t)
		if narrow["scope"] != "read_content" {
			t.Errorf("narrowed online answer %v", narrow)
		}
		e.DoAs(narrow["access_token"].(string), "GET", "/web/script_tags.json", nil).Expect(t, 403)

		off := tokenExchange(e, session(nil, secret), oauth.TokenTypeOffline, nil).Expect(t, 200).JSON(t)
		if off["access_token"] != offline || off["scope"] != "read_content,write_script_tags" || off["associated_user"] != nil || len(off) != 2 {
			t.Errorf("offline answer %v, want the install's token %s", off, offline)
		}
		exp := tokenExchange(e, session(nil, secret), oauth.TokenTypeOffline, map[string]any{"expiring": "1"}).Expect(t, 200).JSON(t)
		if exp["refresh_token"] == nil || exp["expires_in"] != 3600.0 || exp["scope"] != "read_content,write_script_tags" {
			t.Fatalf("expiring offline answer %v", exp)
		}
		e.DoAs(exp["access_token"].(string), "GET", "/web/script_tags.json", nil).Expect(t, 200)
		refresh(e, exp["refresh_token"].(string)).Expect(t, 200)
		e.DoAs(offline, "GET", "/web/pages.json", nil).Expect(t, 200) // still valid: no migration

		// Hostile session tokens.
		for name, c := range map[string]struct {
			token, mentions string
		}{
			"wrong aud":      {session(func(c *oauth.SessionClaims) { c.Aud = "demo-app-api-key" }, secret), "aud"},
			"expired":        {session(func(c *oauth.SessionClaims) { c.Exp = time.Now().Add(-time.Minute).Unix() }, secret), "has expired"},
			"not yet valid":  {session(func(c *oauth.SessionClaims) { c.Nbf = time.Now().Add(time.Minute).Unix() }, secret), "nbf"},
			"another secret": {session(nil, "demo-shared-secret"), "not signed with the app's secret"},
			"another shop":   {session(func(c *oauth.SessionClaims) { c.Dest = "https://other-shop.myshopify.com" }, secret), "dest"},
			"another iss":    {session(func(c *oauth.SessionClaims) { c.Iss = "https://other-shop.myshopify.com/admin" }, secret), "iss"},
			"another user":   {session(func(c *oauth.SessionClaims) { c.Sub = "42" }, secret), "sub"},
			"no jti":         {session(func(c *oauth.SessionClaims) { c.Jti = "" }, secret), "jti"},
			"not a jwt":      {"abc.def", "not a JWT"},
			"alg none":       {"eyJhbGciOiJub25lIn0." + strings.Split(session(nil, secret), ".")[1] + ".", "HS256"},
		} {
			res := tokenExchange(e, c.token, oauth.TokenTypeOnline, nil)
			if res.Status != 400 {
				t.Errorf("%s: %d %s", name, res.Status, res.Body)
				continue
			}
			oauthError(t, res, 400, "invalid_subject_token", c.mentions)
		}
		// Scopes the app does not hold, or that do not exist.
		oauthError(t, tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, map[string]any{"scope": "read_content,write_products"}),
			400, "invalid_scope", "write_products")
		oauthError(t, tokenExchange(e, session(nil, secret), oauth.TokenTypeOffline, map[string]any{"scope": "write_themes"}),
			400, "invalid_scope", "write_themes")
		oauthError(t, tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, map[string]any{"scope": "read_bananas"}),
			400, "invalid_scope", "read_bananas")
		// Missing or wrong fields, named.
		oauthError(t, tokenExchange(e, session(nil, secret), "", nil), 400, "invalid_request", "requested_token_type")
		oauthError(t, tokenExchange(e, "", oauth.TokenTypeOnline, nil), 400, "invalid_request", "subject_token is required")
		oauthError(t, tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, map[string]any{"subject_token_type": "jwt"}), 400, "invalid_request", "subject_token_type")
		oauthError(t, tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, map[string]any{"expiring": "2"}), 400, "invalid_request", "expiring")
		oauthError(t, tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, map[string]any{"client_id": "nobody"}), 401, "invalid_client", "client_id")
		// Another app's session token, exchanged with that app's credentials,
		// is not Install Demo's: aud names Install Demo.
		oauthError(t, tokenExchange(e, session(nil, "demo-shared-secret"), oauth.TokenTypeOnline,
			map[string]any{"client_id": "demo-app-api-key", "client_secret": "demo-shared-secret"}), 400, "invalid_subject_token", "aud")
	}, groups...)
}

// Migration: the install's non-expiring offline token for an expiring
// one, once; the old token is revoked.
func TestMigrateToExpiring(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		offline := tokenOf(t, e, install(t, e, ask("read_content")).Get("code"))
		migrate := func(subject string, expiring any) *apitest.Response {
			return post(e, grantBody(map[string]any{"grant_type": oauth.GrantTokenExchange, "subject_token": subject,
				"subject_token_type": oauth.TokenTypeOffline, "requested_token_type": oauth.TokenTypeOffline, "expiring": expiring}))
		}
		oauthError(t, migrate(offline, "0"), 400, "invalid_request", "expiring")
		oauthError(t, migrate("shpat_not-the-token", "1"), 400, "invalid_subject_token", "not the app's non-expiring offline token")
		tok := migrate(offline, "1").Expect(t, 200).JSON(t)
		if tok["refresh_token"] == nil || tok["expires_in"] != 3600.0 || tok["scope"] != "read_content" {
			t.Fatalf("migration answer %v", tok)
		}
		e.DoAs(offline, "GET", "/web/pages.json", nil).Expect(t, 401)
		e.DoAs(tok["access_token"].(string), "GET", "/web/pages.json", nil).Expect(t, 200)
		oauthError(t, migrate(offline, "1"), 400, "invalid_subject_token", "not the app's non-expiring offline token")
		clean(t, e, tok["access_token"].(string), tok["refresh_token"].(string))

		// A later non-expiring re-authorization issues a new token, never
		// the migrated one.
		again := tokenOf(t, e, codeOf(t, e, ask("read_content")))
		if again == offline {
			t.Error("the migrated token was answered again")
		}
		e.DoAs(offline, "GET", "/web/pages.json", nil).Expect(t, 401)
		e.DoAs(again, "GET", "/web/pages.json", nil).Expect(t, 200)

		// The seeded Demo App migrates its seeded token.
		seeded := "demo-app-token-0123456789abcdef"
		res := post(e, map[string]any{"client_id": "demo-app-api-key", "client_secret": "demo-shared-secret", "grant_type": oauth.GrantTokenExchange,
			"subject_token": seeded, "subject_token_type": oauth.TokenTypeOffline, "requested_token_type": oauth.TokenTypeOffline, "expiring": "1"})
		e.DoAs(res.Expect(t, 200).JSON(t)["access_token"].(string), "GET", "/web/pages.json", nil).Expect(t, 200)
		e.DoAs(seeded, "GET", "/web/pages.json", nil).Expect(t, 401)
	}, groups...)
}

// makePublic marks Install Demo public, as the seed's "public" would.
func makePublic(t *testing.T, e *apitest.Env) {
	t.Helper()
	var rec admin.App
	it, err := records.Get(context.Background(), e.Deps.Store, auth.AppKey(1009), &rec)
	if err != nil {
		t.Fatal(err)
	}
	rec.Public = true
	if err := e.Deps.Store.Transact(context.Background(), store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1,
		Data: records.Encode(rec)}, store.IfVersion, it.Version)); err != nil {
		t.Fatal(err)
	}
}

// The 2027 rule: once the service's clock passes 2027-01-01, a public
// app's non-expiring offline token gets the invalid-token answer on REST
// and GraphQL (Shopify invalidates them); its expiring and online tokens
// work, and a custom app's non-expiring token too.
func TestPublicAppsNonExpiringTokensEnd2027(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		makePublic(t, e)
		clk := e.FixClock(admin.NonExpiringDeadline.Add(-2 * time.Hour))
		offline := tokenOf(t, e, install(t, e, ask("read_content")).Get("code"))
		exp := tokenExchange(e, session(nil, secret), oauth.TokenTypeOffline, map[string]any{"expiring": "1"}).Expect(t, 200).JSON(t)
		graphql := func(token string) *apitest.Response {
			return e.DoWith(http.Header{"X-Shopify-Access-Token": {token}, "Content-Type": {"application/json"}}, "POST",
				"/admin/api/2026-07/graphql.json", map[string]any{"query": "query shopifyAppShopName { shop { name } }"})
		}
		e.DoAs(offline, "GET", "/web/pages.json", nil).Expect(t, 200)
		graphql(offline).Expect(t, 200)

		clk.Advance(2 * time.Hour) // 2027-01-01T00:00:00Z
		for _, res := range []*apitest.Response{e.DoAs(offline, "GET", "/web/pages.json", nil), graphql(offline)} {
			if res.Status != 401 || !strings.Contains(string(res.Body), "[API] Invalid API key or access token") {
				t.Errorf("after the deadline: %d %s", res.Status, res.Body)
			}
		}
		// Its expiring token (refreshed: an hour passed) works, and an
		// online one.
		next := refresh(e, exp["refresh_token"].(string)).Expect(t, 200).JSON(t)
		e.DoAs(next["access_token"].(string), "GET", "/web/pages.json", nil).Expect(t, 200)
		graphql(next["access_token"].(string)).Expect(t, 200)
		on := tokenExchange(e, session(nil, secret), oauth.TokenTypeOnline, nil).Expect(t, 200).JSON(t)
		e.DoAs(on["access_token"].(string), "GET", "/web/pages.json", nil).Expect(t, 200)
		// A custom app is exempt.
		e.DoAs("demo-app-token-0123456789abcdef", "GET", "/web/pages.json", nil).Expect(t, 200)
		graphql("demo-app-token-0123456789abcdef").Expect(t, 200)
		// Migrating is still possible after the deadline.
		post(e, grantBody(map[string]any{"grant_type": oauth.GrantTokenExchange, "subject_token": offline,
			"subject_token_type": oauth.TokenTypeOffline, "requested_token_type": oauth.TokenTypeOffline, "expiring": "1"})).Expect(t, 200)
	}, append(groups, api.GraphQL)...)
}
