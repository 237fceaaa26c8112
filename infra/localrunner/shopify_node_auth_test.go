package main

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/storeadmin/adminapi/shared/browsertest"
	"github.com/storeadmin/adminapi/shared/seed"
)

// The app the test installs: known to the seed, not installed.
const (
	nodeAppKey    = "node-auth-api-key"
	nodeAppSecret = "node-auth-shared-secret-0123"
	nodeAppScopes = "read_content,write_script_tags"
)

// Shopify's official Node library (@shopify/shopify-api 15.0.0, pinned in
// infra/shopify_node, npm ci'd by make shopify-node) installs an
// app on the runner, on both stores, in a real browser: its own
// auth.begin() sends chromium to the runner's authorization page, the test
// clicks Install, the runner redirects to the library's auth.callback(),
// which checks the hmac, the timestamp and the state cookie and exchanges
// the code; the app then calls REST with its new token. Then a per-user
// (online) install, and a decline. The library reaches the runner for the
// seed's shop domain through its domainTransformations, over TLS: the test
// puts a TLS-terminating proxy in front of the runner and hands Node its
// certificate (NODE_EXTRA_CA_CERTS). make test sets SHOPIFY_NODE to the
// library's install; without it (or chromium, or node) the test is
// skipped, unless REQUIRE_EMULATORS asks for every check.
func TestShopifyNodeAuth(t *testing.T) {
	install := os.Getenv("SHOPIFY_NODE")
	node, nodeErr := exec.LookPath("node")
	_, chromiumErr := os.Stat(browsertest.Path)
	if missing := map[bool]string{install == "": "SHOPIFY_NODE is not set (make shopify-node, then make shopify-node-path)",
		nodeErr != nil: "node is missing", chromiumErr != nil: browsertest.Path + " is missing"}[true]; missing != "" {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal(missing)
		}
		t.Skip(missing)
	}
	app, err := filepath.Abs(filepath.Join("..", "shopify_node", "app.cjs"))
	if err != nil {
		t.Fatal(err)
	}
	forEachStore(t, func(t *testing.T, storeEnv []string) {
		began := time.Now()
		dir := t.TempDir()
		// The proxy's address first: the app maps the shop domain to it.
		proxyLn, serviceHost := listen443(t)
		certFile, keyFile := selfSigned(t, dir, serviceHost)
		appPort := startNodeApp(t, node, app, []string{
			"NODE_PATH=" + filepath.Join(install, "node_modules"), "NODE_EXTRA_CA_CERTS=" + certFile, "TLS_CERT=" + certFile, "TLS_KEY=" + keyFile,
			"API_KEY=" + nodeAppKey, "API_SECRET=" + nodeAppSecret, "SCOPES=" + nodeAppScopes,
			"SHOP_DOMAIN=demo-shop.example.com", "SERVICE_HOST=" + serviceHost,
		})
		appURL := "https://127.0.0.1:" + appPort

		// The demo shop and the app, known but not installed, whose
		// redirect URL is the app's callback.
		seedFile := nodeAuthSeed(t, dir, appURL)
		r := start(t, append(storeEnv, "SEED_FILE="+seedFile)...)
		target, _ := url.Parse(r.url)
		proxy := &http.Server{Handler: &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) { pr.SetURL(target) }},
			ReadHeaderTimeout: 10 * time.Second}
		go proxy.ServeTLS(proxyLn, certFile, keyFile)
		defer proxy.Close()

		ctx := browser(t)
		// Before the install: once installed, the app asking again for
		// its scopes goes straight back, with no page.
		tamperedHMACIsRefused(t, ctx, r, appURL)

		declineLeavesOwnerOnService(t, ctx, appURL, serviceHost)

		got, shot := offlineInstall(t, ctx, r, appURL, serviceHost)

		onlineInstall(t, ctx, appURL, got)

		reinstallKeepsToken(t, ctx, appURL, got)

		if os.Getenv("WRITE_SCREENSHOT") != "" && t.Name() == "TestShopifyNodeAuth/embedded" {
			if err := os.WriteFile(filepath.Join("..", "..", "docs", "app-authorization.png"), shot, 0o644); err != nil {
				t.Fatal(err)
			}
		}

		// The install is in the events log, once (the online grant is no install).
		if status, body := r.do(t, demoToken, "GET", "/com/events.json?filter=App", ""); status != 200 || len(body["events"].([]any)) != 1 {
			t.Errorf("App events: %d %v", status, body)
		}
		t.Logf("the library's install flow, online and declined, in chromium: %.1f s", time.Since(began).Seconds())
	})
}

// nodeAuthSeed writes the demo seed with the app added to dir and
// returns its path.
func nodeAuthSeed(t *testing.T, dir, appURL string) string {
	t.Helper()
	var file map[string]any
	if err := json.Unmarshal(seed.Demo, &file); err != nil {
		t.Fatal(err)
	}
	file["apps"] = append(file["apps"].([]any), map[string]any{"id": 1010, "name": "Node Auth App", "api_key": nodeAppKey,
		"shared_secret": nodeAppSecret, "redirect_urls": []string{appURL + "/auth/callback"}})
	raw, _ := json.Marshal(file)
	seedFile := filepath.Join(dir, "seed.json")
	if err := os.WriteFile(seedFile, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	return seedFile
}

// nodeAuthResult is what the Node app answers after an install.
type nodeAuthResult struct {
	Shop                string   `json:"shop"`
	Scope               string   `json:"scope"`
	Expires             string   `json:"expires"`
	TokenPrefix         string   `json:"token_prefix"`
	TokenSHA256         string   `json:"token_sha256"`
	Online              bool     `json:"online"`
	Pages               *int     `json:"pages"`
	ScriptTags          int      `json:"script_tags"`
	AccessScopes        []string `json:"access_scopes"`
	AssociatedUserEmail string   `json:"associated_user_email"`
}

// offlineInstall: begin, the page, Install, the callback, REST calls;
// it returns the app's answer and the authorization page's screenshot.
func offlineInstall(t *testing.T, ctx context.Context, r *runner, appURL, serviceHost string) (nodeAuthResult, []byte) {
	t.Helper()
	var appName, scopes, pageURL, result string
	var shot []byte
	if err := chromedp.Run(ctx,
		chromedp.Navigate(appURL+"/auth?shop=demo-shop.example.com"),
		chromedp.WaitVisible("#install", chromedp.ByID),
		chromedp.Location(&pageURL),
		chromedp.Text("#app", &appName, chromedp.ByID),
		chromedp.Text("#scopes", &scopes, chromedp.ByID),
		chromedp.FullScreenshot(&shot, 100), // 100: PNG
		chromedp.Click("#install", chromedp.ByID),
		chromedp.WaitVisible("#result, #error", chromedp.ByQuery),
		chromedp.Text("#result, #error", &result, chromedp.ByQuery),
	); err != nil {
		t.Fatalf("%v\nrunner:\n%s", err, r.log())
	}
	if !strings.HasPrefix(pageURL, "https://"+serviceHost+"/admin/oauth/authorize?") || appName != "Node Auth App" ||
		!strings.Contains(scopes, "read_content") || !strings.Contains(scopes, "write_script_tags") {
		t.Errorf("authorization page at %s shows app %q scopes %q", pageURL, appName, scopes)
	}
	var got nodeAuthResult
	if err := json.Unmarshal([]byte(result), &got); err != nil {
		t.Fatalf("the app answered %q", result)
	}
	if got.Shop != serviceHost || got.Scope != nodeAppScopes || got.Online || got.TokenPrefix != "shpat_" || got.Pages == nil || got.ScriptTags != 1 ||
		strings.Join(got.AccessScopes, ",") != nodeAppScopes {
		t.Errorf("offline install: %s", result)
	}
	return got, shot
}

// onlineInstall: a per-user token, with its expiry and its user; got is
// the offline install's answer, read over.
func onlineInstall(t *testing.T, ctx context.Context, appURL string, got nodeAuthResult) {
	t.Helper()
	result := ""
	if err := chromedp.Run(ctx,
		chromedp.Navigate(appURL+"/auth?shop=demo-shop.example.com&online=1"),
		chromedp.WaitVisible("#per-user", chromedp.ByID),
		chromedp.Click("#install", chromedp.ByID),
		chromedp.WaitVisible("#result, #error", chromedp.ByQuery),
		chromedp.Text("#result, #error", &result, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	got.AccessScopes, got.Pages = nil, nil
	if err := json.Unmarshal([]byte(result), &got); err != nil {
		t.Fatalf("the app answered %q", result)
	}
	if expires, err := time.Parse(time.RFC3339, got.Expires); !got.Online || got.TokenPrefix != "shpua_" || err != nil ||
		expires.Before(time.Now().Add(23*time.Hour)) || got.AssociatedUserEmail != "owner@demo-shop.example.com" || got.Pages == nil || got.ScriptTags != 2 ||
		strings.Join(got.AccessScopes, ",") != nodeAppScopes {
		t.Errorf("online install: %s", result)
	}
}

// reinstallKeepsToken: the app runs auth.begin() again for the scopes it
// holds; the runner sends the browser straight back with a code (no page,
// as Shopify), and the library's callback gets the same offline token.
func reinstallKeepsToken(t *testing.T, ctx context.Context, appURL string, first nodeAuthResult) {
	t.Helper()
	result := ""
	if err := chromedp.Run(ctx,
		chromedp.Navigate(appURL+"/auth?shop=demo-shop.example.com"),
		chromedp.WaitVisible("#result, #error", chromedp.ByQuery),
		chromedp.Text("#result, #error", &result, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	var got nodeAuthResult
	if err := json.Unmarshal([]byte(result), &got); err != nil {
		t.Fatalf("the app answered %q", result)
	}
	if got.Online || got.TokenSHA256 == "" || got.TokenSHA256 != first.TokenSHA256 || got.Scope != nodeAppScopes || got.ScriptTags != 3 {
		t.Errorf("reinstall: %s, want the token of %+v", result, first)
	}
}

// tamperedHMACIsRefused: the library refuses a callback whose hmac was
// tampered with.
func tamperedHMACIsRefused(t *testing.T, ctx context.Context, r *runner, appURL string) {
	t.Helper()
	// A tampered hmac: the library refuses the callback (the code is
	// the runner's, the state cookie the browser's).
	var form map[string]string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(appURL+"/auth?shop=demo-shop.example.com"),
		chromedp.WaitVisible("#install", chromedp.ByID),
		chromedp.Evaluate(`Object.fromEntries(new FormData(document.querySelector("form[action='authorize/install']")))`, &form),
	); err != nil {
		t.Fatal(err)
	}
	values := url.Values{}
	for k, v := range form {
		values.Set(k, v)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := client.PostForm(r.url+"/admin/oauth/authorize/install", values)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != http.StatusFound || err != nil {
		t.Fatalf("install: %d %q", res.StatusCode, res.Header.Get("Location"))
	}
	q := loc.Query()
	q.Set("hmac", strings.Repeat("0", 64))
	loc.RawQuery = q.Encode()
	result := ""
	if err := chromedp.Run(ctx,
		chromedp.Navigate(loc.String()),
		chromedp.WaitVisible("#result, #error", chromedp.ByQuery),
		chromedp.Text("#result, #error", &result, chromedp.ByQuery),
	); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(result, "Invalid OAuth callback") {
		t.Errorf("a tampered hmac: the app answered %q", result)
	}
}

// declineLeavesOwnerOnService: on Decline the owner stays on the
// service; the app hears nothing.
func declineLeavesOwnerOnService(t *testing.T, ctx context.Context, appURL, serviceHost string) {
	t.Helper()
	// Decline: the owner stays on the service; the app hears nothing.
	var declined, pageURL string
	if err := chromedp.Run(ctx,
		chromedp.Navigate(appURL+"/auth?shop=demo-shop.example.com"),
		chromedp.WaitVisible("#decline", chromedp.ByID),
		chromedp.Click("#decline", chromedp.ByID),
		chromedp.WaitVisible("#declined", chromedp.ByID),
		chromedp.Text("#declined", &declined, chromedp.ByID),
		chromedp.Location(&pageURL),
	); err != nil {
		t.Fatal(err)
	}
	if declined != "Node Auth App was not installed" || !strings.HasPrefix(pageURL, "https://"+serviceHost+"/") {
		t.Errorf("decline: %q at %s", declined, pageURL)
	}
}

// listen443 listens on port 443 of a loopback address of its own
// (127.0.0.2 to 127.0.0.254, any of which reaches this machine): the
// library calls the shop's host without a port. Binding it needs root (or
// CAP_NET_BIND_SERVICE), as make test and CI run.
func listen443(t *testing.T) (net.Listener, string) {
	t.Helper()
	var err error
	for range 20 {
		n, _ := rand.Int(rand.Reader, big.NewInt(253))
		host := fmt.Sprintf("127.0.0.%d", n.Int64()+2)
		var ln net.Listener
		if ln, err = net.Listen("tcp", host+":443"); err == nil {
			return ln, host
		}
	}
	if os.Getenv("REQUIRE_EMULATORS") == "" {
		t.Skipf("port 443 of a loopback address cannot be bound (the test needs root): %v", err)
	}
	t.Fatalf("port 443 of a loopback address cannot be bound (the test needs root): %v", err)
	return nil, ""
}

// selfSigned writes a certificate for 127.0.0.1 and host (its own issuer,
// so that Node can trust it as a CA) and its key.
func selfSigned(t *testing.T, dir, host string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP(host)}, DNSNames: []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// startNodeApp runs infra/shopify_node/app.cjs and returns the port it
// listens on; its output is logged when the test fails.
func startNodeApp(t *testing.T, node, app string, env []string) string {
	t.Helper()
	cmd := exec.Command(node, app)
	cmd.Env = append(os.Environ(), env...)
	stdout, _ := cmd.StdoutPipe()
	var mu sync.Mutex
	var stderr strings.Builder
	cmd.Stderr = writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return stderr.Write(p) })
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			mu.Lock()
			t.Logf("node app stderr:\n%s", stderr.String())
			mu.Unlock()
		}
	})
	ports := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`^listening (\d+)$`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				ports <- m[1]
			}
		}
	}()
	select {
	case p := <-ports:
		return p
	case <-time.After(30 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the node app did not start:\n%s", stderr.String())
		return ""
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// browser starts chromium for the test with the test's own certificate
// accepted and a browser's user agent (the library answers a headless one
// as a bot).
func browser(t *testing.T) context.Context {
	return browsertest.Start(t,
		chromedp.Flag("ignore-certificate-errors", true),
		chromedp.UserAgent("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"))
}
