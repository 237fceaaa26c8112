package oauth

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

func TestParseScopes(t *testing.T) {
	for in, want := range map[string]string{
		"":             "",
		" , ,":         "",
		"read_content": "read_content",
		"read_content, write_content,read_products": "write_content,read_products",
		"write_orders,read_orders,write_orders":     "write_orders",
	} {
		got, err := ParseScopes(in)
		if err != nil || strings.Join(got, ",") != want {
			t.Errorf("ParseScopes(%q) = %v, %v; want %q", in, got, err, want)
		}
	}
	for in, named := range map[string]string{
		"read_bananas":                "read_bananas",
		"read_content write_products": "read_content write_products",
		"read_content,\tread_orders":  "\tread_orders",
	} {
		_, err := ParseScopes(in)
		if e, ok := err.(*admin.Error); !ok || !strings.Contains(e.Fields["scope"][0], named) {
			t.Errorf("ParseScopes(%q) = %v, want it refused naming %q", in, err, named)
		}
	}
}

func TestRedirectRules(t *testing.T) {
	app := admin.App{RedirectURLs: []string{"https://app.example.com", "http://localhost:3000/auth/"}}
	for uri, ok := range map[string]bool{
		"https://app.example.com":                   true,
		"https://app.example.com/auth/callback?x=1": true,
		"https://app.example.com?x=1":               true,
		"http://localhost:3000/auth/callback":       true,
		"http://localhost:3000/auth":                false,
		"http://localhost:3000/other":               false,
		"https://app.example.com.evil.net/":         false,
		"https://app.example.com:8443/":             false,
		"https://app.example.com@evil.net/":         false,
		"https://app.example.com/a/../../evil":      false,
		"https://app.example.com/a/%2e%2e/evil":     false,
		"https://app.example.com/#frag":             false,
		"https://app.example.com/ x":                false,
		"http://app.example.com/":                   false,
		"javascript:alert(1)":                       false,
		"":                                          false,
	} {
		if got := app.AllowsRedirect(uri); got != ok {
			t.Errorf("AllowsRedirect(%q) = %v, want %v", uri, got, ok)
		}
	}
}

// Message encodes as the Node library's URLSearchParams does (space as
// %20) and leaves the values Shopify documents as they are.
func TestMessage(t *testing.T) {
	q := url.Values{"timestamp": {"1337178173"}, "shop": {"demo-shop.example.com"}, "code": {"0907a61c0c8d55e99db179b68161bc00"},
		"state": {"a b+c/é"}, "hmac": {"x"}, "signature": {"y"}}
	want := "code=0907a61c0c8d55e99db179b68161bc00&shop=demo-shop.example.com&state=a%20b%2Bc%2F%C3%A9&timestamp=1337178173"
	var pairs [][2]string
	for k, vs := range q {
		pairs = append(pairs, [2]string{k, vs[0]})
	}
	if got := Message(pairs); got != want {
		t.Errorf("Message = %q, want %q", got, want)
	}
	// Shopify's documented example: its hmac over its parameters and secret.
	doc := url.Values{"code": {"0907a61c0c8d55e99db179b68161bc00"}, "shop": {"some-shop.myshopify.com"}, "state": {"0.6784241404160823"},
		"timestamp": {"1337178173"}}
	if got := Sign(doc, "hush"); got != "700e2dadb827fcc8609e9d5ce208b2e9cdaab9df07390d2cbca10d7c328fc4bf" {
		t.Errorf("Sign = %s", got)
	}
}

func TestFormToken(t *testing.T) {
	key := []byte("k")
	r := Request{ClientID: "a", Scope: "read_content", RedirectURI: "https://app.example.com/cb", State: "s"}
	shown := time.Unix(1_800_000_000, 0)
	tok := FormToken(key, &r, shown)
	if !FormTokenValid(key, &r, tok, shown.Add(FormTTL)) || FormTokenValid(key, &r, tok, shown.Add(FormTTL+time.Second)) {
		t.Error("the token's life is not FormTTL")
	}
	other := r
	other.Scope = "write_content"
	if FormTokenValid(key, &other, tok, shown) || FormTokenValid([]byte("other"), &r, tok, shown) || FormTokenValid(key, &r, "x.y", shown) {
		t.Error("a token for another request or key is valid")
	}
}

// Every scope an app may ask for says on the page what it reaches.
func TestEveryScopeIsDescribed(t *testing.T) {
	for _, s := range admin.Scopes {
		if scopeTexts[s] == "" {
			t.Errorf("scope %s has no text for the authorization page", s)
		}
	}
	if got := Describe([]string{"read_themes", "write_orders"}); got[0].Text != "View themes and their files" ||
		got[1].Text != "View and change orders and their transactions" {
		t.Errorf("Describe = %v", got)
	}
}

// Past MaxOnline live per-user tokens, a grant revokes the oldest; expired
// ones leave the list.
func TestOnlineTokensBounded(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	rec := admin.App{ID: 1, Online: []admin.OnlineToken{{Hash: "expired", ExpiresAt: now.Unix()}}}
	for i := range MaxOnline {
		rec.Online = append(rec.Online, admin.OnlineToken{Hash: "h" + strconv.Itoa(i), ExpiresAt: now.Unix() + 60})
	}
	ops, tok := grant(&rec, &Code{AppID: 1, PerUser: true, Scopes: []string{"read_content"}}, nil, now, false)
	if len(rec.Online) != MaxOnline || rec.Online[0].Hash != "h1" || !strings.HasPrefix(tok.AccessToken, "shpua_") {
		t.Fatalf("online tokens %d, first %v", len(rec.Online), rec.Online[0])
	}
	if len(ops) != 2 || ops[0].TargetKey().SK != "h0" {
		t.Errorf("ops %v: want h0 revoked and the new token put", ops)
	}
}

// Names sort as ICU's root collation does (Node's localeCompare): case
// only breaks ties, punctuation before digits before letters, a prefix
// first. TestCollateAsNode checks random names against node itself.
func TestCollate(t *testing.T) {
	names := []string{"Zeta", "alpha", "b", "B", "a1", "a-", "a_", "aa", "aA", "Aa", "a", "A", "_x", "1"}
	slices.SortFunc(names, Collate)
	if got := strings.Join(names, " "); got != "_x 1 a A a_ a- a1 aa aA Aa alpha b B Zeta" {
		t.Errorf("sorted %s", got)
	}
}

// The redirect_uri's query is kept byte for byte, and the hmac signs the
// callback's query as URLSearchParams reads it: a repeated name by its last
// value, a stray % as it is, + as a space, a name alone as empty.
func TestSignedKeepsTheQuery(t *testing.T) {
	params := url.Values{"code": {"c0de"}, "state": {"a b&c"}}
	for _, c := range []struct{ uri, kept, message string }{
		{"https://a.example.com/cb", "https://a.example.com/cb?", "code=c0de&state=a%20b%26c"},
		{"https://a.example.com/cb?x=1/%zz", "https://a.example.com/cb?x=1/%zz&", "code=c0de&state=a%20b%26c&x=1%2F%25zz"},
		{"https://a.example.com/cb?x=a;b", "https://a.example.com/cb?x=a;b&", "code=c0de&state=a%20b%26c&x=a%3Bb"},
		{"https://a.example.com/cb?x", "https://a.example.com/cb?x&", "code=c0de&state=a%20b%26c&x="},
		{"https://a.example.com/cb?Zeta=1&alpha=2", "https://a.example.com/cb?Zeta=1&alpha=2&", "alpha=2&code=c0de&state=a%20b%26c&Zeta=1"},
		{"https://a.example.com/cb?a=1&a=2", "https://a.example.com/cb?a=1&a=2&", "a=2&code=c0de&state=a%20b%26c"},
		{"https://a.example.com/cb?", "https://a.example.com/cb?", "code=c0de&state=a%20b%26c"},
		{"https://a.example.com/cb?p=a+b%2B", "https://a.example.com/cb?p=a+b%2B&", "code=c0de&p=a%20b%2B&state=a%20b%26c"},
	} {
		got := Signed(c.uri, params, "k")
		want := c.kept + "code=c0de&state=a%20b%26c&hmac="
		if !strings.HasPrefix(got, want) {
			t.Errorf("Signed(%q) = %q, want it to start %q", c.uri, got, want)
		}
		m := hmac.New(sha256.New, []byte("k"))
		m.Write([]byte(c.message))
		if mac := hex.EncodeToString(m.Sum(nil)); !strings.HasSuffix(got, "hmac="+mac) {
			t.Errorf("Signed(%q) = %q, want the hmac of %q", c.uri, got, c.message)
		}
	}
}

// A redirect_uri whose query the callback could not carry as it is, or the
// libraries could not read back alike, is refused on the page.
func TestRedirectQueryRefused(t *testing.T) {
	for uri, want := range map[string]string{
		"https://a.example.com/cb?state=x":   "must not have state",
		"https://a.example.com/cb?hmac=1":    "must not have hmac",
		"https://a.example.com/cb?%C3%A9=1":  "printable ASCII",
		"https://a.example.com/cb?x%01=1":    "printable ASCII",
		"https://a.example.com/cb?x=%C3%28":  "UTF-8",
		"https://a.example.com/cb?x=%C3%A9":  "",
		"https://a.example.com/cb?a=1&a=2&b": "",
	} {
		err := CheckRedirectQuery(uri)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.(*admin.Error).Fields["redirect_uri"][0], want)) {
			t.Errorf("CheckRedirectQuery(%q) = %v, want %q", uri, err, want)
		}
	}
}

// What an authorization may grant: configured scopes bound every offline
// grant; an installed app without them only what it holds; a per-user
// grant needs the install and stays within it; scopes held need no page.
func TestGrantRules(t *testing.T) {
	base := admin.App{RedirectURLs: []string{"https://a.example.com/"}}
	installed := base
	installed.TokenHash, installed.Scopes = "h", []string{"write_content", "read_products"}
	configured := installed
	configured.AccessScopes = []string{"write_content", "write_products"}
	fresh := base
	fresh.AccessScopes = []string{"read_content"}
	for _, c := range []struct {
		name    string
		app     admin.App
		scope   string
		perUser bool
		grant   string
		approve bool
		refused string
	}{
		{"not installed, nothing configured: the owner decides", base, "write_orders,read_content", false, "write_orders,read_content", true, ""},
		{"not installed, configured", fresh, "write_content", false, "", false, "does not list: write_content"},
		{"installed, nothing configured, more", installed, "write_orders,write_customers", false, "", false, "lists none: write_orders, write_customers"},
		{"installed, held scopes: no page", installed, "read_content", false, "write_content,read_products", false, ""},
		{"installed, configured, more", configured, "write_products", false, "write_content,write_products", true, ""},
		{"installed, configured, beyond", configured, "write_orders", false, "", false, "does not list: write_orders"},
		{"per-user, not installed", base, "read_content", true, "", false, "per-user needs the app installed"},
		{"per-user, beyond the app's", installed, "write_products", true, "", false, "not granted: write_products"},
		{"per-user, within", installed, "read_content", true, "read_content", true, ""},
	} {
		r := Request{ClientID: "c", Scope: c.scope, RedirectURI: "https://a.example.com/cb"}
		if c.perUser {
			r.GrantOption = PerUser
		}
		app := c.app
		got, approve, err := r.Grant(&app)
		if c.refused != "" {
			if e, ok := err.(*admin.Error); !ok || !strings.Contains(fmt.Sprint(e.Fields), c.refused) {
				t.Errorf("%s: %v, want refused naming %q", c.name, err, c.refused)
			}
			continue
		}
		if err != nil || strings.Join(got, ",") != c.grant || approve != c.approve {
			t.Errorf("%s: %v %v %v, want %s %v", c.name, got, approve, err, c.grant, c.approve)
		}
	}
}

func TestParseFlag(t *testing.T) {
	for _, c := range []struct {
		in   any
		want Flag
	}{
		{nil, Flag{}}, {"", Flag{}}, {"0", Flag{}}, {"1", Flag{Set: true}}, {0.0, Flag{}}, {1.0, Flag{Set: true}},
		{true, Flag{Set: true}}, {false, Flag{}}, {"true", Flag{Set: true}},
		{"2", Flag{Bad: true}}, {2.0, Flag{Bad: true}}, {"yes", Flag{Bad: true}}, {[]any{}, Flag{Bad: true}},
	} {
		if got := ParseFlag(c.in); got != c.want {
			t.Errorf("ParseFlag(%#v) = %+v, want %+v", c.in, got, c.want)
		}
	}
}

// The tokens of an expiring grant differ by kind, generation, nonce and
// app, and carry Shopify's prefixes.
func TestDerived(t *testing.T) {
	key := []byte("k")
	seen := map[string]bool{}
	for _, tok := range []string{Derived(key, "access", 1, "n", 1), Derived(key, "refresh", 1, "n", 1), Derived(key, "access", 1, "n", 2),
		Derived(key, "access", 1, "m", 1), Derived(key, "access", 2, "n", 1), Derived([]byte("j"), "access", 1, "n", 1)} {
		if seen[tok] {
			t.Errorf("%s made twice", tok)
		}
		seen[tok] = true
	}
	if !strings.HasPrefix(Derived(key, "access", 1, "n", 1), "shpat_") || !strings.HasPrefix(Derived(key, "refresh", 1, "n", 1), "shprt_") {
		t.Error("prefixes")
	}
	if again := Derived([]byte("k"), "access", 1, "n", 1); again != Derived(key, "access", 1, "n", 1) {
		t.Error("not deterministic")
	}
}

// A session token verifies within its times (Leeway either side) and
// only with every claim right.
func TestVerifySession(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	good := NewSessionClaims("shop.example.com", "cid", 1, now)
	if _, err := VerifySession(SignSession(good, "s"), "s", "cid", "shop.example.com", now); err != nil {
		t.Fatal(err)
	}
	at := func(d time.Duration) time.Time { return now.Add(d) }
	for name, c := range map[string]struct {
		change func(c *SessionClaims)
		secret string
		now    time.Time
		ok     bool
	}{
		"within the leeway after exp": {nil, "s", at(SessionTTL + Leeway - time.Second), true},
		"past exp and the leeway":     {nil, "s", at(SessionTTL + Leeway), false},
		"within the leeway before":    {nil, "s", at(-Leeway), true},
		"before nbf and the leeway":   {nil, "s", at(-Leeway - time.Second), false},
		"another secret":              {nil, "t", now, false},
		"aud":                         {func(c *SessionClaims) { c.Aud = "x" }, "s", now, false},
		"dest":                        {func(c *SessionClaims) { c.Dest = "https://x.example.com" }, "s", now, false},
		"iss":                         {func(c *SessionClaims) { c.Iss = "https://shop.example.com" }, "s", now, false},
		"no sid":                      {func(c *SessionClaims) { c.Sid = "" }, "s", now, false},
		"no iat":                      {func(c *SessionClaims) { c.Iat = 0 }, "s", now, false},
	} {
		claims := good
		if c.change != nil {
			c.change(&claims)
		}
		secret := "s"
		_, err := VerifySession(SignSession(claims, secret), c.secret, "cid", "shop.example.com", c.now)
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", name, err)
		}
		if err != nil && !strings.HasPrefix(err.Error(), "invalid_subject_token: subject_token ") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
