package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
)

// These tests run the real runner binary: what `make run` starts.

var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "localrunner")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "localrunner")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type runner struct {
	cmd    *exec.Cmd
	url    string
	mu     sync.Mutex
	stderr bytes.Buffer
	done   chan error
}

var addrRe = regexp.MustCompile(`"addr":"(http://127\.0\.0\.1:\d+)"`)

// start runs the binary with PORT=0 and waits until /healthz answers.
func start(t *testing.T, env ...string) *runner {
	t.Helper()
	r := &runner{cmd: exec.Command(binary), done: make(chan error, 1)}
	r.cmd.Env = append(os.Environ(), append([]string{"PORT=0", "STORE=embedded"}, env...)...)
	pipe, _ := r.cmd.StderrPipe()
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			r.mu.Lock()
			r.stderr.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			if m := addrRe.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
		r.done <- r.cmd.Wait()
	}()
	t.Cleanup(func() { r.cmd.Process.Kill() })
	select {
	case r.url = <-urls:
	case err := <-r.done:
		t.Fatalf("runner exited: %v\n%s", err, r.log())
	case <-time.After(30 * time.Second):
		t.Fatalf("runner did not start:\n%s", r.log())
	}
	res, err := http.Get(r.url + "/healthz")
	if err != nil || res.StatusCode != 200 {
		t.Fatalf("healthz: %v %v", res, err)
	}
	body, _ := io.ReadAll(res.Body)
	if strings.TrimSpace(string(body)) != `{"status":"ok"}` {
		t.Fatalf("healthz body %s", body)
	}
	return r
}

func (r *runner) log() string { r.mu.Lock(); defer r.mu.Unlock(); return r.stderr.String() }

func (r *runner) do(t *testing.T, token, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
	req.Header.Set("X-Service-Access-Token", token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var v map[string]any
	json.NewDecoder(res.Body).Decode(&v)
	return res.StatusCode, v
}

// advance moves the runner's clock forward by d (POST /_local/clock):
// what a client waits for happens without the test waiting.
func (r *runner) advance(t *testing.T, d time.Duration) {
	t.Helper()
	if status, body := r.do(t, "", "POST", "/_local/clock", fmt.Sprintf(`{"advance_seconds":%g}`, d.Seconds())); status != 200 {
		t.Fatalf("advance %v: %d %v", d, status, body)
	}
}

// stop sends sig and waits for the exit.
func (r *runner) stop(t *testing.T, sig syscall.Signal) error {
	t.Helper()
	r.cmd.Process.Signal(sig)
	select {
	case err := <-r.done:
		return err
	case <-time.After(40 * time.Second):
		t.Fatal("runner did not exit")
		return nil
	}
}

const demoToken = "demo-app-token-0123456789abcdef"

func TestDemoShopSurvivesKill9AndStopsCleanly(t *testing.T) {
	data := t.TempDir()
	r := start(t, "DATA_DIR="+data)
	if !strings.Contains(r.log(), demoToken) {
		t.Fatalf("the demo token is not printed:\n%s", r.log())
	}
	status, body := r.do(t, demoToken, "POST", "/web/redirects.json", `{"redirect":{"path":"/durable","target":"/x"}}`)
	if status != 201 {
		t.Fatalf("create: %d %v", status, body)
	}
	if status, _ := r.do(t, "", "GET", "/web/redirects.json", ""); status != 401 {
		t.Fatalf("no token: %d", status)
	}
	// An acknowledged write survives kill -9.
	r.stop(t, syscall.SIGKILL)
	r = start(t, "DATA_DIR="+data)
	if strings.Contains(r.log(), demoToken) {
		t.Fatal("the demo shop was loaded again into a store that has one")
	}
	status, body = r.do(t, demoToken, "GET", "/web/redirects.json?path=/durable", "")
	if status != 200 || len(body["redirects"].([]any)) != 1 {
		t.Fatalf("after kill -9: %d %v", status, body)
	}
	// SIGTERM: a clean exit that releases the store for the next start.
	if err := r.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("SIGTERM exit: %v\n%s", err, r.log())
	}
	start(t, "DATA_DIR="+data)
}

func TestSeedFileIsLoadedIdempotently(t *testing.T) {
	data := t.TempDir()
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(seedFile, []byte(`{"shop":{"id":7,"name":"S","domain":"s.example.com","iana_timezone":"Europe/Paris"},
		"apps":[{"id":9,"name":"A","access_token":"seeded-token-abcdefghijkl","scopes":["write_content"]}],
		"products":[{"id":5,"title":"P","variants":[{"id":6,"price":"1.00"}]}]}`), 0o600)
	r := start(t, "DATA_DIR="+data, "SEED_FILE="+seedFile)
	if status, _ := r.do(t, "seeded-token-abcdefghijkl", "GET", "/web/redirects/count.json", ""); status != 200 {
		t.Fatalf("seeded token: %d", status)
	}
	if status, _ := r.do(t, demoToken, "GET", "/web/redirects/count.json", ""); status != 401 {
		t.Fatalf("demo token works with a seed file: %d", status)
	}
	if status, _ := r.do(t, "seeded-token-abcdefghijkl", "GET", "/web/script_tags.json", ""); status != 403 {
		t.Fatalf("scope not enforced: %d", status)
	}
	r.stop(t, syscall.SIGTERM)
	r = start(t, "DATA_DIR="+data, "SEED_FILE="+seedFile)
	if !strings.Contains(r.log(), `"written":0`) {
		t.Fatalf("the second load wrote items:\n%s", r.log())
	}
}

func TestMalformedSeedStopsStartup(t *testing.T) {
	data := t.TempDir()
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(seedFile, []byte(`{"shop":{"id":7,"domain":"s.example.com"},
		"apps":[{"id":9,"name":"A","access_token":"seeded-token-abcdefghijkl","scopes":[]}],
		"products":[{"id":5,"title":"P"},{"id":"five","title":"Q"}]}`), 0o600)
	cmd := exec.Command(binary)
	cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+data, "SEED_FILE="+seedFile)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("started with a malformed seed file")
	}
	if !strings.Contains(string(out), "products[1]") {
		t.Fatalf("the message does not name the bad record: %s", out)
	}
	// Nothing was written: with the file fixed the store still lacks the first product... and everything else.
	os.WriteFile(seedFile, []byte(`{"shop":{"id":7,"domain":"s.example.com"},"apps":[]}`), 0o600)
	r := start(t, "DATA_DIR="+data, "SEED_FILE="+seedFile)
	if !strings.Contains(r.log(), `"already_present":0`) {
		t.Fatalf("the failed load left items behind:\n%s", r.log())
	}
}

// The fulfillment provider polls, asked for over HTTP: POST
// /_local/jobs/<name> runs the poll and answers its summary.
func TestProviderJobEndpoints(t *testing.T) {
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wh/fetch_stock.json":
			w.Write([]byte(`{"RUN-1": 42, "NOPE": 1}`))
		case "/wh/fetch_tracking_numbers.json":
			w.Write([]byte(`{"tracking_numbers": {"#1001": "TN-1001"}, "message": "ok", "success": true}`))
		default:
			http.NotFound(w, r)
		}
	}))
	defer provider.Close()
	const token = "provider-token-abcdefghijkl"
	data := t.TempDir()
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(seedFile, []byte(`{"shop":{"id":7,"name":"S","domain":"s.example.com"},
		"apps":[{"id":9,"name":"A","access_token":"`+token+`","scopes":["write_fulfillments","write_products"]}],
		"products":[{"id":5,"title":"P","variants":[{"id":6,"sku":"RUN-1","inventory_management":"runner-wh","inventory_quantity":1}]}],
		"orders":[{"id":10,"name":"#1001","fulfillments":[{"id":11,"status":"success","service":"runner-wh","tracking_number":null}]}]}`), 0o600)
	env := []string{"DATA_DIR=" + data, "SEED_FILE=" + seedFile, "POLL_INTERVAL=1h"}
	r := start(t, env...)

	status, body := r.do(t, token, "POST", "/admin/fulfillment_services.json",
		`{"fulfillment_service":{"name":"Runner WH","callback_url":"`+provider.URL+`/wh","inventory_management":true,"tracking_support":true}}`)
	if s, _ := body["fulfillment_service"].(map[string]any); status != 201 || s["handle"] != "runner-wh" {
		t.Fatalf("create service: %d %v", status, body)
	}

	status, body = r.do(t, "", "POST", "/_local/jobs/fetch_stock", "")
	if status != 200 || body["providers"] != 1.0 || body["updated"] != 1.0 || body["skipped"] != 1.0 || body["failures"] != 0.0 {
		t.Fatalf("fetch_stock: %d %v", status, body)
	}
	status, body = r.do(t, token, "GET", "/com/variants/6.json", "")
	if v, _ := body["variant"].(map[string]any); status != 200 || v["inventory_quantity"] != 42.0 {
		t.Errorf("variant after fetch_stock: %d %v", status, body)
	}
	// An admin change asks the provider for the SKU in the background (the
	// runner drains the stock jobs a second after one is committed); the response does not wait.
	status, body = r.do(t, token, "PUT", "/com/variants/6.json", `{"variant":{"inventory_quantity":3}}`)
	if v, _ := body["variant"].(map[string]any); status != 200 || v["inventory_quantity"] != 3.0 {
		t.Fatalf("admin change: %d %v", status, body)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		_, body = r.do(t, token, "GET", "/com/variants/6.json", "")
		if v, _ := body["variant"].(map[string]any); v["inventory_quantity"] == 42.0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the single-SKU request did not restore the stock: %v\n%s", body, r.log())
		}
	}

	status, body = r.do(t, "", "POST", "/_local/jobs/fetch_tracking_numbers", "")
	if status != 200 || body["providers"] != 1.0 || body["updated"] != 1.0 || body["failures"] != 0.0 {
		t.Fatalf("fetch_tracking_numbers: %d %v", status, body)
	}
	// Asked again: nothing left to ask, nothing changes.
	status, body = r.do(t, "", "POST", "/_local/jobs/fetch_tracking_numbers", "")
	if status != 200 || body["providers"] != 0.0 || body["updated"] != 0.0 {
		t.Fatalf("fetch_tracking_numbers again: %d %v", status, body)
	}

	// A browser's cross-site request is refused.
	req, _ := http.NewRequest("POST", r.url+"/_local/jobs/fetch_stock", nil)
	req.Header.Set("Origin", "https://evil.example")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusForbidden {
		t.Errorf("with an Origin header: %d", res.StatusCode)
	}
}

// A client that stalls mid-body loses its connection after the read timeout
// instead of holding it for good; unclean paths are 404 JSON, not redirects.
func TestStalledBodyAndUncleanPaths(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir())
	for _, p := range []string{"//web/redirects.json", "/web/comments/%2e%2e.json", "/web/./redirects.json", "/healthz/../web/redirects.json",
		"/web/themes/1099511627774/assets", "/web/themes/1099511627774/assets/", "/web/redirects.json/", "/healthz/"} {
		req, _ := http.NewRequest("GET", r.url+p, nil)
		req.URL.Opaque = p // send the path exactly as written
		req.Header.Set("X-Service-Access-Token", demoToken)
		res, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 404 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || !json.Valid(body) {
			t.Errorf("%s: %d %s %s", p, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
	}

	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /web/redirects.json HTTP/1.1\r\nHost: x\r\nX-Service-Access-Token: %s\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"redire", demoToken)
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	io.Copy(io.Discard, conn) // returns when the server closes the connection
	if waited := time.Since(start); waited > 20*time.Second {
		t.Fatalf("stalled connection held for %v", waited)
	}
}

// A client that paces itself by the call-limit header makes 200 calls
// without a 429; the same loop unpaced meets 429s, and a retry after their
// Retry-After passes. The client's waits are steps of the runner's clock.
func TestCallLimitPacing(t *testing.T) {
	const token = "paced-token-abcdefghijklmnop"
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(seedFile, []byte(`{"shop":{"id":7,"name":"S","domain":"s.example.com"},
		"apps":[{"id":9,"name":"A","access_token":"`+token+`","scopes":["read_content"],"rate_limit":{"bucket":10,"leak_per_second":40}}]}`), 0o600)
	r := start(t, "DATA_DIR="+t.TempDir(), "SEED_FILE="+seedFile)
	get := func() *http.Response {
		req, _ := http.NewRequest("GET", r.url+"/web/redirects/count.json", nil)
		req.Header.Set("X-Service-Access-Token", token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res
	}
	// Paced: when the bucket is nearly full, wait for one call to leak out.
	for i := range 200 {
		res := get()
		if res.StatusCode != 200 {
			t.Fatalf("paced call %d: %d", i+1, res.StatusCode)
		}
		var used, size int
		if _, err := fmt.Sscanf(res.Header.Get("X-Service-Shop-Api-Call-Limit"), "%d/%d", &used, &size); err != nil || size != 10 {
			t.Fatalf("call-limit header %q", res.Header.Get("X-Service-Shop-Api-Call-Limit"))
		}
		if used >= size-1 {
			r.advance(t, time.Second/40) // wait for one call to leak out, on the service's clock
		}
	}
	r.advance(t, time.Second/4) // let the bucket drain
	limited := 0
	for i := range 200 {
		res := get()
		if res.StatusCode == 200 {
			continue
		}
		if res.StatusCode != 429 {
			t.Fatalf("unpaced call %d: %d", i+1, res.StatusCode)
		}
		limited++
		wait, err := time.ParseDuration(res.Header.Get("Retry-After") + "s")
		if err != nil || wait <= 0 || wait > time.Second {
			t.Fatalf("Retry-After %q", res.Header.Get("Retry-After"))
		}
		r.advance(t, wait)
		if res := get(); res.StatusCode != 200 {
			t.Fatalf("retry after %v: %d", wait, res.StatusCode)
		}
	}
	if limited == 0 {
		t.Fatal("200 unpaced calls were never limited")
	}
}

// An app uninstalled through the API stays uninstalled when the runner
// restarts with the same SEED_FILE (the seed only ever adds what was never
// there), and a seeded variant deleted through the API stays deleted: on
// the embedded store and on DynamoDB (STORE=dynamodb, as infra/import
// loads it).
func TestUninstalledAppStaysUninstalledAcrossRestarts(t *testing.T) {
	const gone, stays = "uninstalled-token-abcdefghijkl", "remaining-token-abcdefghijkl"
	seedFile := filepath.Join(t.TempDir(), "seed.json")
	os.WriteFile(seedFile, []byte(`{"shop":{"id":7,"name":"S","domain":"s.example.com"},
		"apps":[{"id":9,"name":"A","access_token":"`+gone+`","scopes":["write_content"]},
		        {"id":10,"name":"B","access_token":"`+stays+`","scopes":["write_products"]}],
		"products":[{"id":5,"title":"P","variants":[{"id":6,"option1":"S"},{"id":8,"option1":"M"}]}]}`), 0o600)
	for _, s := range []struct {
		name string
		env  func(t *testing.T) []string
	}{
		{"embedded", func(t *testing.T) []string { return []string{"DATA_DIR=" + t.TempDir()} }},
		{"dynamodb", func(t *testing.T) []string {
			return []string{"DATA_DIR=" + t.TempDir(), "STORE=dynamodb", "TABLE_NAME=" + dynamotest.NewTable(t),
				"AWS_ENDPOINT_URL=" + dynamotest.Endpoint(t)}
		}},
	} {
		t.Run(s.name, func(t *testing.T) {
			env := append(s.env(t), "SEED_FILE="+seedFile)
			r := start(t, env...)
			if status, body := r.do(t, gone, "DELETE", "/admin/api_permissions/current.json", ""); status != 200 {
				t.Fatalf("uninstall: %d %v", status, body)
			}
			if status, body := r.do(t, stays, "DELETE", "/com/products/5/variants/6.json", ""); status != 200 {
				t.Fatalf("delete variant: %d %v", status, body)
			}
			if status, _ := r.do(t, gone, "GET", "/web/pages.json", ""); status != 401 {
				t.Fatalf("after uninstall: %d", status)
			}
			for restart := range 2 {
				if err := r.stop(t, syscall.SIGTERM); err != nil {
					t.Fatalf("SIGTERM exit: %v\n%s", err, r.log())
				}
				r = start(t, env...)
				if status, _ := r.do(t, gone, "GET", "/web/pages.json", ""); status != 401 {
					t.Fatalf("restart %d: the uninstalled app's token answers %d", restart+1, status)
				}
				if status, _ := r.do(t, stays, "GET", "/com/variants/6.json", ""); status != 404 {
					t.Fatalf("restart %d: the deleted variant answers %d", restart+1, status)
				}
				if status, body := r.do(t, stays, "GET", "/com/products/5/variants/count.json", ""); status != 200 || body["count"] != 1.0 {
					t.Fatalf("restart %d: variants count %d %v", restart+1, status, body)
				}
				if !strings.Contains(r.log(), `"written":0`) {
					t.Fatalf("restart %d: the seed wrote items:\n%s", restart+1, r.log())
				}
			}
		})
	}
}

// raw sends a request exactly as written on a new connection and reads
// the answer.
func (r *runner) raw(t *testing.T, request string) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(bytes.NewReader(body))
	return res
}

// Paging links and confirmation_url are on PUBLIC_BASE_URL, else on the
// runner's own address, whatever Host header or absolute-form request
// target a client sends; a token header sent twice is 401.
func TestAbsoluteURLsAreOnTheBaseURL(t *testing.T) {
	for _, base := range []string{"https://shop-api.example.net", ""} {
		env := []string{"DATA_DIR=" + t.TempDir()}
		if base != "" {
			env = append(env, "PUBLIC_BASE_URL="+base+"/")
		}
		r := start(t, env...)
		if base == "" {
			base = r.url
		}
		for _, p := range []string{"/a", "/b"} {
			if code, v := r.do(t, demoToken, "POST", "/web/redirects.json", `{"redirect":{"path":"`+p+`","target":"/t"}}`); code != 201 {
				t.Fatalf("create: %d %v", code, v)
			}
		}
		for _, target := range []string{"/web/redirects.json?limit=1", "http://evil.example/web/redirects.json?limit=1"} {
			res := r.raw(t, "GET "+target+" HTTP/1.1\r\nHost: evil.example\r\nX-Forwarded-Host: evil.example\r\nX-Forwarded-Proto: http\r\n"+
				"X-Service-Access-Token: "+demoToken+"\r\nConnection: close\r\n\r\n")
			if link := res.Header.Get("Link"); res.StatusCode != 200 || !strings.HasPrefix(link, "<"+base+"/web/redirects.json?limit=1&page_info=") {
				t.Errorf("GET %s: %d Link %q, want it on %s", target, res.StatusCode, link, base)
			}
		}
		charge := `{"recurring_application_charge":{"name":"P","price":1,"return_url":"https://app.example.com/"}}`
		res := r.raw(t, fmt.Sprintf("POST http://evil.example/admin/recurring_application_charges.json HTTP/1.1\r\nHost: evil.example\r\n"+
			"X-Service-Access-Token: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", demoToken, len(charge), charge))
		var out map[string]map[string]any
		json.NewDecoder(res.Body).Decode(&out)
		if u, _ := out["recurring_application_charge"]["confirmation_url"].(string); res.StatusCode != 201 || !strings.HasPrefix(u, base+"/admin/recurring_application_charges/") {
			t.Errorf("confirmation_url %q, want it on %s", u, base)
		}
		res = r.raw(t, "GET /web/redirects.json HTTP/1.1\r\nHost: x\r\nX-Service-Access-Token: "+demoToken+
			"\r\nX-Service-Access-Token: bogus\r\nConnection: close\r\n\r\n")
		if body, _ := io.ReadAll(res.Body); res.StatusCode != 401 || !json.Valid(body) {
			t.Errorf("two tokens: %d %s", res.StatusCode, body)
		}
	}
}

// A PUBLIC_BASE_URL that is not an origin stops startup.
func TestMalformedBaseURLStopsStartup(t *testing.T) {
	for _, v := range []string{"api.example.com", "https://api.example.com/v1", "https://api.example.com?x", "ftp://api.example.com", "https://bücher.example"} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a runner that started is killed
		defer cancel()
		cmd := exec.CommandContext(ctx, binary)
		cmd.Env = append(os.Environ(), "PORT=0", "DATA_DIR="+t.TempDir(), "PUBLIC_BASE_URL="+v)
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "PUBLIC_BASE_URL") {
			t.Errorf("PUBLIC_BASE_URL=%s: %v %s", v, err, out)
		}
	}
}

// POST /_local/clock moves the service's time forward, end to end: a charge
// left pending reads expired after 48 hours of it, new records carry the
// advanced time, the advance survives a restart, and it never runs back.
func TestClockAdvances(t *testing.T) {
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		clockAdvances(t, storeEnv)
	})
}

// forEachStore runs fn with the runner's environment for each store: the
// embedded one in a fresh directory, and a fresh DynamoDB Local table.
func forEachStore(t *testing.T, fn func(t *testing.T, storeEnv []string)) {
	t.Run("embedded", func(t *testing.T) { fn(t, []string{"DATA_DIR=" + t.TempDir()}) })
	t.Run("dynamodb", func(t *testing.T) {
		endpoint := dynamotest.Endpoint(t)
		fn(t, []string{"STORE=dynamodb", "AWS_ENDPOINT_URL=" + endpoint, "TABLE_NAME=" + dynamotest.NewTable(t), "DATA_DIR=" + t.TempDir()})
	})
}

func clockAdvances(t *testing.T, storeEnv []string) {
	r := start(t, storeEnv...)
	status, body := r.do(t, "", "GET", "/_local/clock", "")
	if status != 200 || body["offset_seconds"] != 0.0 {
		t.Fatalf("clock at start: %d %v", status, body)
	}
	status, body = r.do(t, demoToken, "POST", "/admin/recurring_application_charges.json",
		`{"recurring_application_charge":{"name":"Plan","price":10,"return_url":"https://app.example.com/back"}}`)
	charge, _ := body["recurring_application_charge"].(map[string]any)
	if status != 201 || charge["status"] != "pending" {
		t.Fatalf("charge: %d %v", status, body)
	}
	path := fmt.Sprintf("/admin/recurring_application_charges/%d.json", int64(charge["id"].(float64)))

	for in, field := range map[string]string{`{"advance_seconds":0}`: "advance_seconds", `{"advance_seconds":-5}`: "advance_seconds",
		`{"advance_seconds":"soon"}`: "advance_seconds", `{}`: "advance_seconds", `{"advance_seconds":1e-12}`: "advance_seconds",
		`{"advance_seconds":1e300}`: "advance_seconds"} {
		if status, body := r.do(t, "", "POST", "/_local/clock", in); status != 422 || body["errors"].(map[string]any)[field] == nil {
			t.Errorf("%s: %d %v, want 422 naming %s", in, status, body, field)
		}
	}
	status, body = r.do(t, "", "POST", "/_local/clock", `{"advance_seconds":172800}`)
	if status != 200 || body["offset_seconds"] != 172800.0 {
		t.Fatalf("advance: %d %v", status, body)
	}
	now, err := time.Parse(time.RFC3339, body["now"].(string))
	if err != nil || time.Until(now) < 47*time.Hour {
		t.Fatalf("now %v after a 48-hour advance (%v)", body["now"], err)
	}
	if _, body := r.do(t, demoToken, "GET", path, ""); body["recurring_application_charge"].(map[string]any)["status"] != "expired" {
		t.Fatalf("after 48 hours: %v", body)
	}
	_, body = r.do(t, demoToken, "POST", "/web/pages.json", `{"page":{"title":"Later"}}`)
	if created, _ := time.Parse(time.RFC3339, fmt.Sprint(body["page"].(map[string]any)["created_at"])); time.Until(created) < 47*time.Hour {
		t.Fatalf("a record made after the advance: %v", body)
	}
	// A browser's request is refused: no page elsewhere moves the clock.
	req, _ := http.NewRequest("POST", r.url+"/_local/clock", strings.NewReader(`{"advance_seconds":1}`))
	req.Header.Set("Origin", "https://evil.example")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Fatalf("with an Origin header: %v %v", res, err)
	}

	if err := r.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("stop: %v", err)
	}
	r = start(t, storeEnv...)
	if status, body := r.do(t, "", "GET", "/_local/clock", ""); status != 200 || body["offset_seconds"] != 172800.0 {
		t.Fatalf("after a restart: %d %v", status, body)
	}
}

// POST /_local/reset puts the shop back to what the seed made, end to end:
// a record made since is gone, a seeded record deleted since is back, an
// uninstalled app's token works again, the clock is the machine's again.
func TestResetReturnsTheSeededShop(t *testing.T) {
	forEachStore(t, resetReturnsTheSeededShop)
}

func resetReturnsTheSeededShop(t *testing.T, storeEnv []string) {
	const readOnly = "read-only-token-0123456789abcdef"
	r := start(t, storeEnv...)
	count := func() float64 {
		_, body := r.do(t, demoToken, "GET", "/com/products/632910392/variants/count.json", "")
		return body["count"].(float64)
	}
	seeded := count()
	status, body := r.do(t, demoToken, "POST", "/web/pages.json", `{"page":{"title":"Made in a test"}}`)
	if status != 201 {
		t.Fatalf("page: %d %v", status, body)
	}
	page := fmt.Sprintf("/web/pages/%d.json", int64(body["page"].(map[string]any)["id"].(float64)))
	if status, _ := r.do(t, demoToken, "DELETE", "/com/products/632910392/variants/808950810.json", ""); status != 200 || count() != seeded-1 {
		t.Fatalf("delete a seeded variant: %d", status)
	}
	if status, _ := r.do(t, readOnly, "DELETE", "/admin/api_permissions/current.json", ""); status != 200 {
		t.Fatalf("uninstall: %d", status)
	}
	r.do(t, "", "POST", "/_local/clock", `{"advance_seconds":3600}`)

	if status, body := r.do(t, "", "POST", "/_local/reset", ""); status != 200 || len(body) != 0 {
		t.Fatalf("reset: %d %v", status, body)
	}
	if status, _ := r.do(t, demoToken, "GET", page, ""); status != 404 {
		t.Errorf("a page made before the reset: %d, want 404", status)
	}
	if n := count(); n != seeded {
		t.Errorf("variants after the reset: %v, want %v", n, seeded)
	}
	if status, _ := r.do(t, readOnly, "GET", "/web/pages/count.json", ""); status != 200 {
		t.Errorf("the uninstalled app's token after the reset: %d, want 200", status)
	}
	if _, body := r.do(t, "", "GET", "/_local/clock", ""); body["offset_seconds"] != 0.0 {
		t.Errorf("clock after the reset: %v", body)
	}
	req, _ := http.NewRequest("POST", r.url+"/_local/reset", nil)
	req.Header.Set("Origin", "https://evil.example")
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 403 {
		t.Fatalf("reset with an Origin header: %v %v", res, err)
	}
}

// POST /_local/webhooks/trigger sends one signed delivery of any topic to
// any address, as the calling app would receive it, without a webhook.
func TestTriggerSendsASignedDelivery(t *testing.T) {
	forEachStore(t, triggerSendsASignedDelivery)
}

func triggerSendsASignedDelivery(t *testing.T, storeEnv []string) {
	type got struct {
		header http.Header
		body   []byte
	}
	received := make(chan got, 4)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		received <- got{r.Header.Clone(), b}
		w.WriteHeader(202)
	}))
	defer receiver.Close()
	r := start(t, storeEnv...)

	status, body := r.do(t, demoToken, "POST", "/_local/webhooks/trigger", `{"topic":"orders/create","address":"`+receiver.URL+`/hooks"}`)
	if status != 200 || body["status"] != 202.0 || body["delivery_id"] == "" {
		t.Fatalf("trigger: %d %v", status, body)
	}
	d := <-received
	mac := hmac.New(sha256.New, []byte("demo-shared-secret"))
	mac.Write(d.body)
	if d.header.Get("X-Service-Hmac-Sha256") != base64.StdEncoding.EncodeToString(mac.Sum(nil)) {
		t.Errorf("the delivery is not signed with the app's secret: %v", d.header)
	}
	if d.header.Get("X-Service-Topic") != "orders/create" || d.header.Get("X-Service-Webhook-Id") != body["delivery_id"] ||
		d.header.Get("X-Service-Shop-Domain") == "" || d.header.Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", d.header)
	}
	var order map[string]any
	if err := json.Unmarshal(d.body, &order); err != nil || order["id"] == nil || order["line_items"] == nil {
		t.Errorf("payload %s (%v)", d.body, err)
	}

	status, _ = r.do(t, demoToken, "POST", "/_local/webhooks/trigger", `{"topic":"products/update","address":"`+receiver.URL+`","format":"xml"}`)
	if d := <-received; status != 200 || !bytes.HasPrefix(d.body, []byte("<?xml")) || !bytes.Contains(d.body, []byte("<product>")) ||
		d.header.Get("Content-Type") != "application/xml" {
		t.Errorf("xml: %d %s", status, d.body)
	}
	for _, c := range []struct {
		token, body string
		status      int
		field       string
	}{
		{demoToken, `{"topic":"orders/nope","address":"` + receiver.URL + `"}`, 422, "topic"},
		{demoToken, `{"topic":"orders/create","address":"file:///etc/passwd"}`, 422, "address"},
		{demoToken, `{"topic":"orders/create","address":"` + receiver.URL + `","format":"yaml"}`, 422, "format"},
		{"", `{"topic":"orders/create","address":"` + receiver.URL + `"}`, 401, ""},
		{"read-only-token-0123456789abcdef", `{"topic":"orders/create","address":"` + receiver.URL + `"}`, 403, ""},
	} {
		status, body := r.do(t, c.token, "POST", "/_local/webhooks/trigger", c.body)
		errs, _ := body["errors"].(map[string]any)
		if status != c.status || c.field != "" && errs[c.field] == nil {
			t.Errorf("%s: %d %v, want %d naming %q", c.body, status, body, c.status, c.field)
		}
	}
	select {
	case d := <-received:
		t.Errorf("a refused trigger was delivered: %s", d.body)
	default:
	}
}

// TestFaultRateAnswersNo500: with FAULT_RATE=0.1 a client that retries
// 503s under its Idempotency-Keys never sees a 500, and each of its
// creates is there once.
func TestFaultRateAnswersNo500(t *testing.T) {
	r := start(t, "DATA_DIR="+t.TempDir(), "FAULT_RATE=0.1", "RATE_LIMIT=off")
	if !strings.Contains(r.log(), `"fault_rate":0.1`) {
		t.Fatalf("the runner does not say faults are injected:\n%s", r.log())
	}
	send := func(key, method, path, body string) (int, map[string]any) {
		for range 30 {
			req, _ := http.NewRequest(method, r.url+path, strings.NewReader(body))
			req.Header.Set("X-Service-Access-Token", demoToken)
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			json.NewDecoder(res.Body).Decode(&v)
			res.Body.Close()
			switch {
			case res.StatusCode == 503 && res.Header.Get("Retry-After") != "":
				continue
			case res.StatusCode >= 500:
				t.Fatalf("%s %s: %d %v", method, path, res.StatusCode, v)
			}
			return res.StatusCode, v
		}
		t.Fatalf("%s %s: still unavailable after 30 tries", method, path)
		return 0, nil
	}
	for i := range 60 {
		path := fmt.Sprintf("/faulty/%d", i)
		status, v := send(fmt.Sprintf("create-%d", i), "POST", "/web/redirects.json", `{"redirect":{"path":"`+path+`","target":"/t"}}`)
		if status == 409 {
			continue // applied, its answer lost: the count below still holds
		}
		if status != 201 {
			t.Fatalf("create: %d %v", status, v)
		}
		id := int64(v["redirect"].(map[string]any)["id"].(float64))
		if i%3 == 0 {
			if status, v := send(fmt.Sprintf("delete-%d", i), "DELETE", fmt.Sprintf("/web/redirects/%d.json", id), ""); status != 200 && status != 409 {
				t.Fatalf("delete: %d %v", status, v)
			}
			continue
		}
		if status, v := send("", "GET", "/web/redirects.json?path="+path, ""); status != 200 || len(v["redirects"].([]any)) != 1 {
			t.Fatalf("%s: %d %v, want the one redirect", path, status, v)
		}
	}
}
