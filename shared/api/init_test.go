package api_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Work at package init lands on every Lambda cold start. The shopify-paths
// function links every package the functions use; this builds it and reads
// GODEBUG=inittrace=1 for the module's own packages: each may allocate at
// most a few KB at init (tables a literal needs), never compile a pattern,
// parse a template or decode a file (build those on first use). Bytes are
// counted, not timed, so the test cannot flake.
func TestNoWorkAtInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a function binary")
	}
	bin := filepath.Join(t.TempDir(), "bootstrap")
	if out, err := exec.Command("go", "build", "-o", bin, "../../functions/shopify-paths").CombinedOutput(); err != nil {
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
