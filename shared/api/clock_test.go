package api_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wallTime lists the files of shared/ that may read the machine's clock,
// each with its reason: none of them is a time the service records, shows
// or decides by. Everything else reads the service's clock (a Clock field
// set from platform.Deps.Clock, or a clock parameter), which the local
// runner and tests can move.
var wallTime = map[string]string{
	"clock/clock.go":                    "the service's clock itself: System and Offset start from the machine's",
	"store/feed.go":                     "a process's pending changes sort after an earlier process's: an order, not the service's time",
	"metrics/metrics.go":                "CloudWatch timestamps metric lines with the machine's time",
	"httpapi/page.go":                   "a page's duration, for the request log",
	"httpapi/router.go":                 "a request's duration, for the request log: how long it really took",
	"auth/auth.go":                      "how long a process keeps the shop record cached",
	"delivery/dispatch.go":              "a delivery's latency, for its metric",
	"queue/storequeue/storequeue.go":    "how long a receive waits for messages",
	"queue/sqsqueue/sqsqueue.go":        "how long a receive waits for messages",
	"queue/sqsqueue/sqssend/sqssend.go": "SigV4 signs a request with the time it is sent, which AWS checks against its own",
	"queue/queuetest/queuetest.go":      "the queue conformance suite's waits",
	"store/storetest/storetest.go":      "the store conformance suite's waits",
}

// No domain code reads wall time (issue 27): a timestamp, an expiry or a
// schedule read from the machine could not be moved by the local runner's
// clock or a test's.
func TestDomainCodeReadsTheServiceClock(t *testing.T) {
	wall := regexp.MustCompile(`\btime\.(Now|Since|Until)\(`)
	found := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		rel = filepath.ToSlash(rel)
		if wall.Match(src) {
			found[rel] = true
			if _, ok := wallTime[rel]; !ok {
				t.Errorf("shared/%s reads the machine's clock: read the service's (its Clock field or a clock parameter), or list the file in wallTime with its reason", rel)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range wallTime {
		if !found[rel] {
			t.Errorf("wallTime lists shared/%s, which no longer reads the machine's clock: remove it", rel)
		}
	}
}
