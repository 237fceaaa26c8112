package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/seed"
)

const publicAppToken = "public-app-token-0123456789abcdef"

// An app the seed marks "public": true is tested against 2027-01-01 today
// by advancing the runner's clock: its seeded non-expiring offline token
// answers until the runner's clock passes the deadline, then gets
// Shopify's invalid-token 401 on REST and GraphQL; the seed's custom Demo
// App is exempt; and the public app can still migrate to an expiring token,
// which works.
func TestPublicAppDeadlineByTheRunnersClock(t *testing.T) {
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		r := start(t, append(storeEnv, "SEED_FILE="+publicAppSeed(t, t.TempDir()))...)
		rest := func(token string) (int, string) {
			return shopifyRequest(t, r, token, "GET", "/admin/api/2026-07/pages.json", "")
		}
		graphql := func(token string) (int, string) {
			return shopifyRequest(t, r, token, "POST", "/admin/api/2026-07/graphql.json", `{"query":"query shopifyAppShopName { shop { name } }"}`)
		}
		for _, tok := range []string{publicAppToken, demoToken} {
			if status, body := rest(tok); status != 200 {
				t.Fatalf("REST before the deadline: %d %s", status, body)
			}
			if status, body := graphql(tok); status != 200 || !strings.Contains(body, "Demo Shop") {
				t.Fatalf("GraphQL before the deadline: %d %s", status, body)
			}
		}

		if d := time.Until(admin.NonExpiringDeadline); d > 0 {
			r.advance(t, d+time.Minute)
		}
		for name, call := range map[string]func(string) (int, string){"REST": rest, "GraphQL": graphql} {
			if status, body := call(publicAppToken); status != 401 || !strings.Contains(body, "[API] Invalid API key or access token") {
				t.Errorf("%s with the public app's token after the deadline: %d %s", name, status, body)
			}
			if status, body := call(demoToken); status != 200 {
				t.Errorf("%s with the custom app's token after the deadline: %d %s", name, status, body)
			}
		}

		status, body := r.do(t, "", "POST", "/admin/oauth/access_token", `{"client_id":"public-app-api-key","client_secret":"public-app-shared-secret",`+
			`"grant_type":"urn:ietf:params:oauth:grant-type:token-exchange","subject_token":"`+publicAppToken+`",`+
			`"subject_token_type":"urn:shopify:params:oauth:token-type:offline-access-token",`+
			`"requested_token_type":"urn:shopify:params:oauth:token-type:offline-access-token","expiring":"1"}`)
		migrated, _ := body["access_token"].(string)
		if status != 200 || migrated == "" || body["refresh_token"] == nil {
			t.Fatalf("migration after the deadline: %d %v", status, body)
		}
		if status, body := graphql(migrated); status != 200 {
			t.Errorf("the migrated token: %d %s", status, body)
		}
	})
}

// publicAppSeed writes the demo seed with an installed public app added
// to dir and returns its path.
func publicAppSeed(t *testing.T, dir string) string {
	t.Helper()
	var file map[string]any
	if err := json.Unmarshal(seed.Demo, &file); err != nil {
		t.Fatal(err)
	}
	file["apps"] = append(file["apps"].([]any), map[string]any{"id": 1011, "name": "Public App", "api_key": "public-app-api-key",
		"shared_secret": "public-app-shared-secret", "redirect_urls": []string{"https://public-app.example.com/"}, "access_token": publicAppToken, "scopes": []string{"read_content"}, "public": true})
	raw, _ := json.Marshal(file)
	path := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// shopifyRequest is a request as Shopify's clients send one, with
// X-Shopify-Access-Token; it answers the status and the body.
func shopifyRequest(t *testing.T, r *runner, token, method, path, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	req.Header.Set("X-Shopify-Access-Token", token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}
