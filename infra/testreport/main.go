// Command testreport reads `go test -json` on stdin and prints what a
// person wants of a long test run: one line per package as go test prints
// it, the whole output of every failed test (and of a package that failed
// outside its tests), and at the end where the time went: packages by
// group, and the slowest tests. make test (infra/test.sh) pipes its Go
// tests through it; it exits 1 when anything failed.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type key struct{ pkg, test string }

// module is dropped from package paths in the report.
const module = "github.com/storeadmin/adminapi/"

func main() {
	failed, err := report(os.Stdin, os.Stdout, 10)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

type timing struct {
	name    string
	seconds float64
}

func report(in io.Reader, out io.Writer, slowest int) (failed bool, err error) {
	output := map[key][]string{} // kept until the test passes
	var packages, tests []timing
	dec := json.NewDecoder(bufio.NewReaderSize(in, 1<<20))
	for {
		var e event
		if err := dec.Decode(&e); err == io.EOF {
			break
		} else if err != nil {
			return true, err
		}
		k := key{e.Package, e.Test}
		switch e.Action {
		case "build-output": // a package that does not compile
			fmt.Fprint(out, e.Output)
		case "output":
			output[k] = append(output[k], e.Output)
		case "pass", "skip":
			delete(output, k)
			if e.Test == "" {
				if e.Action == "pass" {
					packages = append(packages, timing{e.Package, e.Elapsed})
					fmt.Fprintf(out, "ok  \t%s\t%.1fs\n", e.Package, e.Elapsed)
				}
			} else if e.Action == "pass" && !strings.Contains(e.Test, "/") {
				tests = append(tests, timing{strings.TrimPrefix(e.Package, module) + " " + e.Test, e.Elapsed})
			}
		case "fail":
			failed = true
			for _, line := range output[k] {
				fmt.Fprint(out, line)
			}
			delete(output, k)
			if e.Test == "" {
				packages = append(packages, timing{e.Package, e.Elapsed})
				fmt.Fprintf(out, "FAIL\t%s\t%.1fs\n", e.Package, e.Elapsed)
			}
		}
	}
	summarize(out, packages, tests, slowest)
	return failed, nil
}

// groups name the package groups of the summary, first match wins.
var groups = []struct{ name, prefixes string }{
	{"storage and queues", "shared/store shared/queue"},
	{"pipelines (delivery, providers)", "shared/delivery shared/providers"},
	{"composition (api, local runner, mains)", "shared/api infra functions"},
	{"conventions and platform", "shared/admin shared/dates shared/records shared/handles shared/publishing shared/events shared/images shared/catalog shared/parents shared/ratelimit shared/outbox shared/httpapi shared/outbound shared/ids shared/platform shared/seed shared/metrics shared/auth shared/config shared/textile shared/apitest shared/emulatortest"},
	{"resources", "shared"},
}

func groupOf(pkg string) string {
	pkg = strings.TrimPrefix(pkg, module)
	for _, g := range groups {
		for _, p := range strings.Fields(g.prefixes) {
			if pkg == p || strings.HasPrefix(pkg, p+"/") {
				return g.name
			}
		}
	}
	return "other"
}

func summarize(out io.Writer, packages, tests []timing, slowest int) {
	if len(packages) == 0 {
		return
	}
	type total struct {
		n       int
		seconds float64
		slowest timing
	}
	byGroup := map[string]*total{}
	for _, p := range packages {
		g := groupOf(p.name)
		t := byGroup[g]
		if t == nil {
			t = &total{}
			byGroup[g] = t
		}
		t.n++
		t.seconds += p.seconds
		if p.seconds >= t.slowest.seconds {
			t.slowest = p
		}
	}
	names := make([]string, 0, len(byGroup))
	for g := range byGroup {
		names = append(names, g)
	}
	sort.Strings(names)
	fmt.Fprintf(out, "\nGo test packages by group (each package's own time; several run at once):\n")
	fmt.Fprintf(out, "  %-40s %8s %8s  %s\n", "group", "packages", "seconds", "slowest")
	for _, g := range names {
		t := byGroup[g]
		fmt.Fprintf(out, "  %-40s %8d %8.0f  %s (%.0f s)\n", g, t.n, t.seconds, strings.TrimPrefix(t.slowest.name, module), t.slowest.seconds)
	}
	slices.SortFunc(tests, func(a, b timing) int {
		switch {
		case a.seconds > b.seconds:
			return -1
		case a.seconds < b.seconds:
			return 1
		}
		return strings.Compare(a.name, b.name)
	})
	fmt.Fprintf(out, "\nSlowest tests:\n")
	for _, t := range tests[:min(slowest, len(tests))] {
		fmt.Fprintf(out, "  %8s  %s\n", time.Duration(t.seconds*float64(time.Second)).Round(100*time.Millisecond), t.name)
	}
}
