package oauth_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/oauth"
)

// callback is one install's redirect, and whether every library should
// verify it (plain names and values) or Shopify's Node library alone.
type issued struct {
	url   string
	plain bool
}

// hostile installs with states and redirect_uri queries a probe used, and
// with the service's clock a month ahead, and returns the callbacks.
func hostile(t *testing.T, e *apitest.Env) []issued {
	var out []issued
	add := func(redirect, state string, plain bool) {
		t.Helper()
		q := ask("read_content")
		q.Set("redirect_uri", redirect)
		q.Set("state", state)
		res := form(e, "/admin/oauth/authorize/install", page(t, e, q)).Expect(t, 302)
		loc := res.Header.Get("Location")
		if !strings.HasPrefix(loc, redirect) {
			t.Errorf("%s: the callback %s does not keep it byte for byte", redirect, loc)
		}
		out = append(out, issued{loc, plain})
	}
	add("http://localhost:3000/auth/callback", "nonce-123", true)
	add("http://localhost:3000/auth/callback?shop_hint=demo", "0.6784241404160823", true)
	for _, state := range []string{"a b", "a+b&c=d", "ü/é?#%", `"'<>`, "%zz", "a;b", "=&=", strings.Repeat("x", 1024)} {
		add("http://localhost:3000/auth/callback", state, false)
	}
	for _, query := range []string{"Zeta=1&alpha=2", "a=1&a=2", "x=1/%zz", "x=a;b", "x", "p=a+b%2B", "_=1&A=2&a=3&1=4&B=5",
		"", "x=%C3%A9", `'q'="v"<>`, "x=&=y&&", "~=1&$=2&[]=3"} {
		add("http://localhost:3000/auth/callback?"+query, "nonce-123", false)
	}
	e.FixClock(time.Now().Add(30 * 24 * time.Hour))
	add("http://localhost:3000/auth/callback", "after-a-clock-advance", true)
	return out
}

// run feeds the callbacks to a verifier, one JSON line each, and returns
// its answers.
func run(t *testing.T, cmd *exec.Cmd, cbs []issued) []map[string]any {
	t.Helper()
	var in bytes.Buffer
	for _, cb := range cbs {
		line, _ := json.Marshal(map[string]string{"url": cb.url, "secret": secret})
		in.Write(append(line, '\n'))
	}
	cmd.Stdin = &in
	raw, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %v %s", cmd.Args, err, raw)
	}
	var out []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		out = append(out, m)
	}
	if len(out) != len(cbs) {
		t.Fatalf("%d answers for %d callbacks", len(out), len(cbs))
	}
	return out
}

func need(t *testing.T, env string) string {
	v := os.Getenv(env)
	if v == "" {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal(env + " is not set (make test sets it)")
		}
		t.Skip(env + " is not set: the library is installed by make test")
	}
	return v
}

// Findings 4, 5 and 6: every callback the page issues, with hostile states
// and redirect_uri queries and after the service's clock moved a month,
// verifies with Shopify's Node library, unmodified, as its auth.callback()
// reads it; the plain ones verify with its Python library too (the
// documented method is rawHMAC, in TestInstallUninstallReinstall).
func TestCallbacksVerifyWithShopifyNode(t *testing.T) {
	install := need(t, "SHOPIFY_NODE")
	node, err := exec.LookPath("node")
	if err != nil {
		t.Fatal(err)
	}
	script, _ := filepath.Abs(filepath.Join("..", "..", "infra", "shopify_node", "verify_callback.cjs"))
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		cbs := hostile(t, e)
		cmd := exec.Command(node, script)
		cmd.Env = append(os.Environ(), "NODE_PATH="+filepath.Join(install, "node_modules"))
		for i, got := range run(t, cmd, cbs) {
			if got["valid"] != true {
				t.Errorf("the Node library refuses %s: %v", cbs[i].url, got)
			}
		}
	}, groups...)
}

// The plain callbacks verify with Shopify's Python library (ShopifyAPI's
// Session.validate_params, which checks the hmac and the timestamp).
func TestCallbacksVerifyWithShopifyPython(t *testing.T) {
	python := need(t, "SHOPIFY_CLIENT_PYTHON")
	const verify = `
import json, sys, urllib.parse, shopify
for line in sys.stdin:
    c = json.loads(line)
    shopify.Session.setup(api_key="x", secret=c["secret"])
    params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(c["url"]).query, keep_blank_values=True))
    print(json.dumps({"valid": bool(shopify.Session.validate_params(params))}))
`
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var plain []issued
		for _, cb := range hostile(t, e) {
			if cb.plain {
				plain = append(plain, cb)
			}
		}
		for i, got := range run(t, exec.Command(python, "-c", verify), plain) {
			if got["valid"] != true {
				t.Errorf("the Python library refuses %s", plain[i].url)
			}
		}
		// And the documented method.
		for _, cb := range plain {
			u, _ := url.Parse(cb.url)
			if q := u.Query(); q.Get("hmac") != rawHMAC(q, secret) {
				t.Errorf("the documented method refuses %s", cb.url)
			}
		}
	}, groups...)
}

// Collate sorts printable ASCII names as node's localeCompare does (the
// order Shopify's Node library signs callback parameters in): random
// names, sorted by both, agree.
func TestCollateAsNode(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal(err)
		}
		t.Skip("node is missing")
	}
	r := rand.New(rand.NewPCG(1, 2))
	names := make([]string, 400)
	for i := range names {
		b := make([]byte, 1+r.IntN(6))
		for j := range b {
			b[j] = byte(' ' + r.IntN(95))
			if r.IntN(3) > 0 { // mostly letters, which case decides between
				b[j] = "aAbBzZ_-09"[r.IntN(10)]
			}
		}
		names[i] = string(b)
	}
	in, _ := json.Marshal(names)
	cmd := exec.Command(node, "-e", `let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const a=JSON.parse(s);a.sort((x,y)=>x.localeCompare(y));process.stdout.write(JSON.stringify(a))})`)
	cmd.Stdin = bytes.NewReader(in)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	if err := json.Unmarshal(out, &want); err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(names)
	slices.SortStableFunc(got, oauth.Collate)
	for i := range got {
		if got[i] != want[i] && oauth.Collate(got[i], want[i]) != 0 {
			t.Fatalf("at %d: Collate puts %q, node %q", i, got[i], want[i])
		}
	}
}
