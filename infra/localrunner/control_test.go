package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// No request the runner sends out (a trigger, a webhook delivery, a
// receiver's redirect) reaches its own /_local routes, however the address
// spells loopback: its outbound client marks every request it sends, every
// redirect hop too, and the control routes refuse the mark. Deliveries to
// the developer's own loopback receivers still arrive.
func TestOutboundRequestsNeverReachTheControls(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir())
	port := r.url[strings.LastIndex(r.url, ":")+1:]
	r.advance(t, time.Hour)
	status, body := r.do(t, demoToken, "POST", "/web/pages.json", `{"page":{"title":"Still here"}}`)
	if status != 201 {
		t.Fatalf("page: %d %v", status, body)
	}
	page := fmt.Sprintf("/web/pages/%d.json", int64(body["page"].(map[string]any)["id"].(float64)))

	var received atomic.Int32
	hops := make(chan string, 64)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path == "/hooks" {
			received.Add(1)
			w.WriteHeader(200)
			return
		}
		// Any receiver may answer with a redirect to the controls.
		hops <- req.URL.Path
		http.Redirect(w, req, "http://127.0.0.1:"+port+req.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer receiver.Close()

	var targets []string
	for _, host := range []string{"127.0.0.1", "localhost", "LOCALHOST", "0.0.0.0", "[::ffff:127.0.0.1]", "127.1", "2130706433"} {
		for _, path := range []string{"/_local/reset", "/_local/clock", "/_local/jobs/fetch_stock", "/_local/%72eset", "//_local/reset"} {
			targets = append(targets, "http://"+host+":"+port+path)
		}
	}
	targets = append(targets, receiver.URL+"/_local/reset", receiver.URL+"/_local/jobs/fetch_stock")
	for _, target := range targets {
		status, body := r.do(t, demoToken, "POST", "/_local/webhooks/trigger", `{"topic":"shop/update","address":"`+target+`"}`)
		if got, _ := body["status"].(float64); status == 200 && got >= 200 && got < 300 {
			t.Errorf("%s: the runner's own request was answered %v", target, got)
		}
	}
	// An app/uninstalled webhook whose receiver redirects to the controls,
	// then the uninstall: the delivery follows the redirect, is refused.
	status, body = r.do(t, demoToken, "POST", "/admin/webhooks.json",
		`{"webhook":{"topic":"app/uninstalled","address":"`+receiver.URL+`/_local/reset?uninstalled"}}`)
	if status != 201 {
		t.Fatalf("webhook: %d %v", status, body)
	}
	for len(hops) > 0 {
		<-hops
	}
	if status, _ := r.do(t, demoToken, "DELETE", "/admin/api_permissions/current.json", ""); status != 200 {
		t.Fatalf("uninstall: %d", status)
	}
	select {
	case <-hops:
	case <-time.After(20 * time.Second):
		t.Fatal("the app/uninstalled delivery never came")
	}
	// The redirected request has been sent; a reset it caused would hold
	// the API until done, so these reads see its effect if there was one.
	if _, clock := r.do(t, "", "GET", "/_local/clock", ""); clock["offset_seconds"].(float64) < 3600 {
		t.Fatalf("the clock was reset: %v", clock)
	}
	if status, _ := r.do(t, "read-only-token-0123456789abcdef", "GET", page, ""); status != 200 {
		t.Errorf("the page made before: %d (the shop was reset)", status)
	}

	// The developer's own loopback receiver still gets its deliveries.
	if status, body := r.do(t, "read-only-token-0123456789abcdef", "POST", "/_local/webhooks/trigger",
		`{"topic":"shop/update","address":"`+receiver.URL+`/hooks"}`); status != 200 || body["status"] != 200.0 || received.Load() != 1 {
		t.Errorf("a delivery to a loopback receiver: %d %v (received %d)", status, body, received.Load())
	}
}

// /_local answers only requests whose Host is the runner's own address
// (a page on a rebound name sends its own), and no browser's.
func TestControlsAnswerOnlyTheirOwnHost(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir())
	port := r.url[strings.LastIndex(r.url, ":")+1:]
	for host, want := range map[string]int{
		"127.0.0.1:" + port: 200, "localhost:" + port: 200, "[::1]:" + port: 200,
		"attacker.example": 421, "attacker.example:" + port: 421, "127.0.0.1": 421, "127.0.0.1:1": 421,
	} {
		req, _ := http.NewRequest("GET", r.url+"/_local/clock", nil)
		req.Host = host
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Host %s: %d, want %d", host, res.StatusCode, want)
		}
	}
	req, _ := http.NewRequest("GET", r.url+"/_local/clock", nil)
	req.Header.Set("Origin", "http://127.0.0.1:"+port)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Errorf("with an Origin: %v %v", res, err)
	}
}

// After a reset, ids (and the created_at they carry) follow the reset
// clock; after an advance, ids keep increasing.
func TestResetBringsIdsBackToTheClock(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir())
	create := func() (int64, time.Time) {
		t.Helper()
		status, body := r.do(t, demoToken, "POST", "/web/pages.json", `{"page":{"title":"Timed"}}`)
		if status != 201 {
			t.Fatalf("page: %d %v", status, body)
		}
		p := body["page"].(map[string]any)
		at, err := time.Parse(time.RFC3339, p["created_at"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return int64(p["id"].(float64)), at
	}
	before, _ := create()
	r.advance(t, 10*24*time.Hour)
	ahead, aheadAt := create()
	if ahead <= before || time.Until(aheadAt) < 9*24*time.Hour {
		t.Fatalf("after an advance: id %d (before %d), created_at %v", ahead, before, aheadAt)
	}
	if status, _ := r.do(t, "", "POST", "/_local/reset", ""); status != 200 {
		t.Fatalf("reset: %d", status)
	}
	id, at := create()
	if d := time.Until(at); d > time.Minute || d < -time.Minute {
		t.Errorf("created_at after the reset: %v, %v from now", at, d)
	}
	if id >= ahead {
		t.Errorf("id after the reset %d, not below the ids of the clock that ran ahead (%d)", id, ahead)
	}
	next, _ := create()
	if next <= id {
		t.Errorf("ids after the reset do not increase: %d then %d", id, next)
	}
	status, body := r.do(t, demoToken, "GET", fmt.Sprintf("/web/pages.json?created_at_max=%s", time.Now().Add(time.Minute).UTC().Format(time.RFC3339)), "")
	if pages, _ := body["pages"].([]any); status != 200 || len(pages) < 2 {
		t.Errorf("created_at_max=now after the reset: %d %v", status, body)
	}
}

// A reset is atomic to concurrent clients: a seeded token is never refused.
func TestResetLooksAtomic(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir(), "RATE_LIMIT=off")
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var calls, refused atomic.Int32
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				req, _ := http.NewRequest("GET", r.url+"/web/pages/count.json", nil)
				req.Header.Set("X-Service-Access-Token", demoToken)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				calls.Add(1)
				if res.StatusCode != 200 {
					refused.Add(1)
				}
			}
		}()
	}
	for range 5 {
		if status, _ := r.do(t, "", "POST", "/_local/reset", ""); status != 200 {
			t.Errorf("reset: %d", status)
		}
	}
	close(stop)
	wg.Wait()
	if refused.Load() != 0 || calls.Load() == 0 {
		t.Errorf("%d of %d calls during resets were not 200", refused.Load(), calls.Load())
	}
}

// Encoded slashes and backslashes name no route, in any path form; an
// encoded dot is the dot it stands for (RFC 3986).
func TestEncodedSeparatorsAreNotFound(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir())
	get := func(p string) int {
		req, _ := http.NewRequest("GET", r.url+p, nil)
		req.URL.Opaque = p // send the path exactly as written
		req.Header.Set("X-Service-Access-Token", demoToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	for _, p := range []string{"/admin%2fpages.json", "/admin/api/2024-01%2fpages.json", "/admin/api/2024-01%2Fpages.json",
		"/web%2Fpages.json", "/web/pages%5c.json", "/admin%5Cpages.json", "/_local%2fclock"} {
		if status := get(p); status != 404 {
			t.Errorf("%s: %d, want 404", p, status)
		}
	}
	for _, p := range []string{"/admin/api/2024-01/pages%2ejson", "/web/pages%2Ejson"} {
		if status := get(p); status != 200 {
			t.Errorf("%s: %d, want 200 (the same URL as with a plain dot)", p, status)
		}
	}
}

// URL fields accept what the document's patterns accept; lengths count
// the text as sent; a keyed request is the same request whatever the order
// of its JSON keys; a decorated return URL carries one charge_id.
func TestInputsTheDocumentRefuses(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir())
	for _, c := range []struct{ path, body, field string }{
		{"/web/script_tags.json", `{"script_tag":{"event":"onload","src":"https://*/a.js"}}`, "src"},
		{"/web/script_tags.json", `{"script_tag":{"event":"onload","src":"https://a*b.example/a.js"}}`, "src"},
		{"/web/script_tags.json", `{"script_tag":{"event":"onload","src":"https://x.example:99999/a.js"}}`, "src"},
		{"/admin/recurring_application_charges.json", `{"recurring_application_charge":{"name":"P","price":"1.00","return_url":"https://-bad-.example/"}}`, "return_url"},
		{"/admin/recurring_application_charges.json", `{"recurring_application_charge":{"name":"P","price":"1.00","return_url":"https://a..b.example/"}}`, "return_url"},
		{"/web/pages.json", `{"page":{"title":"\u2003\u2003` + strings.Repeat("t", 254) + `"}}`, "title"},
	} {
		status, body := r.do(t, demoToken, "POST", c.path, c.body)
		if errs, _ := body["errors"].(map[string]any); status != 422 || errs[c.field] == nil {
			t.Errorf("%s: %d %v, want 422 naming %s", c.body, status, body, c.field)
		}
	}

	keyed := func(body string) *http.Response {
		req, _ := http.NewRequest("POST", r.url+"/web/redirects.json", strings.NewReader(body))
		req.Header.Set("X-Service-Access-Token", demoToken)
		req.Header.Set("Idempotency-Key", "reordered-1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	first := keyed(`{"redirect":{"path":"/keyed","target":"/t"}}`)
	first.Body.Close()
	again := keyed(` { "redirect" : { "target" : "/t", "path" : "/keyed" } } `)
	again.Body.Close()
	if first.StatusCode != 201 || again.StatusCode != 201 || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("the same body with its keys reordered: %d then %d %v", first.StatusCode, again.StatusCode, again.Header)
	}

	status, body := r.do(t, demoToken, "POST", "/admin/recurring_application_charges.json",
		`{"recurring_application_charge":{"name":"P","price":"1.00","return_url":"https://app.example/back?charge_id=5&x=1"}}`)
	if status != 201 {
		t.Fatalf("charge: %d %v", status, body)
	}
	c := body["recurring_application_charge"].(map[string]any)
	want := fmt.Sprintf("https://app.example/back?x=1&charge_id=%d", int64(c["id"].(float64)))
	if c["decorated_return_url"] != want {
		t.Errorf("decorated_return_url %v, want %s", c["decorated_return_url"], want)
	}
}
