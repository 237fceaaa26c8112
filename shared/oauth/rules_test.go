package oauth

import (
	"net/url"
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
	if got := Message(q); got != want {
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
	ops, tok := grant(&rec, &Code{AppID: 1, PerUser: true, Scopes: []string{"read_content"}}, now)
	if len(rec.Online) != MaxOnline || rec.Online[0].Hash != "h1" || !strings.HasPrefix(tok.AccessToken, "shpua_") {
		t.Fatalf("online tokens %d, first %v", len(rec.Online), rec.Online[0])
	}
	if len(ops) != 2 || ops[0].TargetKey().SK != "h0" {
		t.Errorf("ops %v: want h0 revoked and the new token put", ops)
	}
}
