package api_test

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
)

// Work at package init lands on every Lambda cold start. The shopify-paths
// function links every package the API functions use, and webhook-dispatch
// the SQS client's adapter; this builds both and reads GODEBUG=inittrace=1
// for the module's own packages: each may allocate at most a few KB at
// init (tables a literal needs), never compile a pattern, parse a template
// or decode a file (build those on first use). Bytes are counted, not
// timed, so the test cannot flake.
func TestNoWorkAtInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds function binaries")
	}
	for _, fn := range []string{"shopify-paths", "webhook-dispatch"} {
		t.Run(fn, func(t *testing.T) { checkInit(t, fn) })
	}
}

func checkInit(t *testing.T, fn string) {
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if out, err := exec.Command("go", "build", "-o", bin, "../../functions/"+fn).CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A refused FAULT_RATE stops it in config.FromEnv, after every init ran.
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1", "FAULT_RATE=2", "AWS_LAMBDA_FUNCTION_NAME=init-test")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	const perPackage, total = 8 << 10, 24 << 10
	sum, seen := 0, 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init github.com/storeadmin/adminapi/shared/x @1.2 ms, 0.01 ms clock, 328 bytes, 4 allocs
		f := strings.Fields(sc.Text())
		if len(f) < 10 || f[0] != "init" || !strings.HasPrefix(f[1], "github.com/storeadmin/adminapi/") {
			continue
		}
		bytes, err := strconv.Atoi(f[7])
		if err != nil {
			t.Fatalf("unreadable inittrace line %q", sc.Text())
		}
		seen++
		sum += bytes
		if bytes > perPackage {
			t.Errorf("%s allocates %d bytes at init (at most %d): build it on first use", f[1], bytes, perPackage)
		}
	}
	if seen == 0 {
		t.Fatalf("no inittrace lines for the module's packages:\n%s", stderr.String())
	}
	if sum > total {
		t.Errorf("the module's packages allocate %d bytes at init, at most %d", sum, total)
	}
	t.Logf("%d packages, %d bytes at init", seen, sum)
}

// The SQS client's packages cost a cold start (their init, and the
// binary's size), so only the functions that consume an SQS event source
// (and retry or ack its messages) link them, through sqsqueue.Open; the
// other functions template.yaml gives a queue URL only send, with
// sqssend.Open; api.Open refuses a queue URL, so each of those opens its
// deps with api.OpenWith. go list tells what each function links, as
// sam.mk builds it.
func TestSQSLinkedOnlyWhereQueued(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	root := repoRoot(t)
	tmpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	mk := loadSAMFunctions(t, filepath.Join(root, "infra", "sam.mk"))
	cmd := exec.Command("go", "list", "-tags", "lambda.norpc", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./functions/...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		deps[f[0]] = f[1:]
	}
	const module, sqs = "github.com/storeadmin/adminapi/", "github.com/aws/aws-sdk-go-v2/service/sqs"
	for id, dir := range mk {
		fn := tmpl.functions[id]
		if fn == nil {
			continue // TestTemplate reports it
		}
		queued := slices.ContainsFunc(fn.env, func(v string) bool { return strings.HasSuffix(v, "_QUEUE_URL") })
		consumes := slices.ContainsFunc(fn.sources, func(s sourceEvent) bool { return s.typ == "SQS" })
		d, ok := deps[module+dir]
		if !ok {
			t.Errorf("go list did not list %s", dir)
			continue
		}
		links, sends := slices.Contains(d, sqs), slices.Contains(d, module+"shared/queue/sqsqueue/sqssend")
		switch {
		case consumes && !links:
			t.Errorf("%s (%s) consumes an SQS queue but links no SQS client: open its deps with api.OpenWith(ctx, cfg, sqsqueue.Open)", id, dir)
		case !consumes && links:
			t.Errorf("%s (%s) consumes no SQS queue yet links the SQS client (%s), which slows its cold start: send with sqssend.Open", id, dir, sqs)
		case queued && !sends:
			t.Errorf("%s (%s) has a queue URL but links no SQS sender: open its deps with api.OpenWith(ctx, cfg, sqssend.Open)", id, dir)
		}
	}
}

// api.Open, which links no SQS client, refuses a queue URL before it opens
// anything: a function given one must be built with api.OpenWith.
func TestOpenRefusesQueueURLWithoutSQS(t *testing.T) {
	for _, cfg := range []config.Config{{QueueURL: "https://sqs.example/1/d"}, {ThemeImportQueueURL: "https://sqs.example/1/t"}} {
		cfg.Store, cfg.DataDir = "embedded", t.TempDir()
		if d, err := api.Open(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "QUEUE_URL is set") {
			if d != nil {
				d.Store.Close()
			}
			t.Errorf("api.Open with %+v: %v, want the queue URL refused", cfg, err)
		}
		if _, err := os.Stat(filepath.Join(cfg.DataDir, "store.db")); err == nil {
			t.Errorf("api.Open opened the store before refusing the queue URL")
		}
	}
}

// A group's function links only its own group's code: api.Groups and
// each Group stay data the linker sees whole (no slice in Group), so it
// drops the groups a function does not name. When they did not, every
// function's binary was as large as shopify-paths' (19.2 MB, every group)
// instead of 12.6 MB, and its cold start slower with it.
func TestGroupFunctionLinksOnlyItsGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("builds function binaries")
	}
	size := func(fn string) int64 {
		bin := filepath.Join(t.TempDir(), fn)
		if out, err := exec.Command("go", "build", "-tags", "lambda.norpc", "-ldflags", "-s -w", "-o", bin, "../../functions/"+fn).CombinedOutput(); err != nil {
			t.Fatalf("go build: %v\n%s", err, out)
		}
		fi, err := os.Stat(bin)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	one, all := size("redirects"), size("shopify-paths")
	if one*10 > all*8 {
		t.Errorf("functions/redirects is %d bytes, shopify-paths (every group) %d: it links other groups", one, all)
	}
	t.Logf("redirects %d bytes, shopify-paths %d", one, all)
}
