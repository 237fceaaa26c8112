package main

import (
	"net/http"
	"strings"
	"testing"
)

// POST /_local/session_token mints a session token as App Bridge would,
// which the exchange takes: an online token for the seeded Demo App, and
// after a clock advance still (the token is issued at the app's clock). A
// blank or unknown client_id and a user who is not the owner are 400
// naming the field; a browser's request is refused by the guard.
func TestSessionTokenRoute(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir())
	mint := func(body string) (int, map[string]any) { return r.do(t, "", "POST", "/_local/session_token", body) }
	exchange := func(tok string) (int, map[string]any) {
		return r.do(t, "", "POST", "/admin/oauth/access_token", `{"client_id":"demo-app-api-key","client_secret":"demo-shared-secret",`+
			`"grant_type":"urn:ietf:params:oauth:grant-type:token-exchange","subject_token":"`+tok+`",`+
			`"subject_token_type":"urn:ietf:params:oauth:token-type:id_token","requested_token_type":"urn:shopify:params:oauth:token-type:online-access-token"}`)
	}
	status, body := mint(`{"client_id":"demo-app-api-key"}`)
	tok, _ := body["session_token"].(string)
	if status != 200 || strings.Count(tok, ".") != 2 || body["expires_at"] == nil {
		t.Fatalf("mint: %d %v", status, body)
	}
	if status, body := exchange(tok); status != 200 || !strings.HasPrefix(body["access_token"].(string), "shpua_") {
		t.Fatalf("exchange: %d %v", status, body)
	}
	r.advance(t, 48*3600e9)
	_, body = mint(`{"client_id":"demo-app-api-key","user_id":1}`)
	if status, body := exchange(body["session_token"].(string)); status != 200 {
		t.Fatalf("exchange after a clock advance: %d %v", status, body)
	}
	for _, c := range []struct{ body, field string }{
		{`{}`, "client_id"}, {`{"client_id":"nobody"}`, "client_id"}, {`{"client_id":"demo-app-api-key","user_id":42}`, "user_id"},
	} {
		if status, body := mint(c.body); status != 400 || body["errors"].(map[string]any)[c.field] == nil {
			t.Errorf("%s: %d %v", c.body, status, body)
		}
	}
	req, _ := http.NewRequest("POST", r.url+"/_local/session_token", strings.NewReader(`{"client_id":"demo-app-api-key"}`))
	req.Header.Set("Origin", "https://evil.example.com")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Errorf("a browser's request: %v %v", res, err)
	} else {
		res.Body.Close()
	}
}
