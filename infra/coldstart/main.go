// Command coldstart measures the Lambda functions' cold starts against a
// hello-world bootstrap (infra/coldstart/hello), side by side: it builds
// each function as Lambda runs it (linux, lambda.norpc, stripped), serves a
// fake Lambda Runtime API on loopback, and times each binary from exec to
// the answer of its first invocation: an API Gateway request without a
// token, which every route answers 401 before any store call, so what is
// timed is the process start, package init, api.Open and handler
// construction, and one request through the router. Rounds interleave the
// binaries in a shuffled order, so a busy moment of the machine falls on
// all of them; the report is each binary's median over the hello world's.
//
//	go run ./infra/coldstart [-rounds 30] [-max 1.15] [function dirs...]
//
// make bench runs it; -max makes a ratio above it fail the run.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// event is the first invocation: a GET of a route's path without a token.
const event = `{"version":"2.0","routeKey":"$default","rawPath":"/web/redirects/count.json","rawQueryString":"",` +
	`"headers":{"host":"api.example.com"},"requestContext":{"accountId":"1","apiId":"a","domainName":"api.example.com",` +
	`"http":{"method":"GET","path":"/web/redirects/count.json","protocol":"HTTP/1.1","sourceIp":"127.0.0.1","userAgent":"coldstart"},` +
	`"requestId":"r","routeKey":"$default","stage":"$default","time":"27/Nov/2026:00:00:00 +0000","timeEpoch":1795737600000},"isBase64Encoded":false}`

func main() {
	rounds := flag.Int("rounds", 30, "interleaved rounds")
	limit := flag.Float64("max", 0, "fail when a function's median exceeds this multiple of the hello world's (0: report only)")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 {
		dirs = []string{"functions/redirects", "functions/metafields", "functions/collections", "functions/shopify-paths"}
	}
	tmp, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	bins := map[string]string{"hello": build(tmp, "infra/coldstart/hello")}
	names := []string{"hello"}
	for _, d := range dirs {
		bins[filepath.Base(d)] = build(tmp, d)
		names = append(names, filepath.Base(d))
	}

	rt := newRuntime()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	go func() { _ = http.Serve(ln, rt) }() // ends with the process
	times := map[string][]time.Duration{}
	for range *rounds {
		order := slices.Clone(names)
		rand.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		for _, n := range order {
			d, err := rt.invoke(bins[n], ln.Addr().String())
			if err != nil {
				log.Fatalf("%s: %v", n, err)
			}
			times[n] = append(times[n], d)
		}
	}
	base := median(times["hello"])
	failed := false
	fmt.Printf("%-20s %10s %6s\n", "binary", "median", "ratio")
	for _, n := range names {
		m := median(times[n])
		ratio := float64(m) / float64(base)
		fmt.Printf("%-20s %10s %6.2f\n", n, m.Round(10*time.Microsecond), ratio)
		if *limit > 0 && ratio > *limit {
			failed = true
		}
	}
	if failed {
		fmt.Printf("coldstart: a function's median start is over %.2fx the hello world's\n", *limit)
		os.Exit(1)
	}
}

// build compiles dir as Lambda runs it (for this machine's architecture).
func build(tmp, dir string) string {
	out := filepath.Join(tmp, strings.ReplaceAll(dir, "/", "_"))
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags", "-s -w", "-o", out, "./"+dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("build %s: %v\n%s", dir, err, b)
	}
	return out
}

// runtime is the fake Lambda Runtime API: it hands out one event per
// process and reports when its answer came back.
type runtime struct {
	mu   sync.Mutex
	done chan answer
}

type answer struct {
	at   time.Time
	body string
	err  bool
}

func newRuntime() *runtime { return &runtime{done: make(chan answer, 1)} }

func (rt *runtime) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == "GET" && strings.HasSuffix(r.URL.Path, "/runtime/invocation/next"):
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", "req-1")
		h.Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(time.Minute).UnixMilli()))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:1:function:coldstart")
		_, _ = io.WriteString(w, event)
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/response"):
		b, _ := io.ReadAll(r.Body)
		rt.done <- answer{at: time.Now(), body: string(b)}
		w.WriteHeader(http.StatusAccepted)
	case r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/error"):
		b, _ := io.ReadAll(r.Body)
		rt.done <- answer{at: time.Now(), body: string(b), err: true}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

// invoke starts bin, waits for its first answer and stops it.
func (rt *runtime) invoke(bin, addr string) (time.Duration, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	cmd := exec.Command(bin)
	cmd.Env = []string{"AWS_LAMBDA_RUNTIME_API=" + addr, "AWS_LAMBDA_FUNCTION_NAME=coldstart", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "TABLE_NAME=coldstart", "AWS_EC2_METADATA_DISABLED=true",
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case a := <-rt.done:
		if a.err {
			return 0, fmt.Errorf("the first invocation failed: %s\n%s", a.body, stderr.String())
		}
		return a.at.Sub(start), nil
	case <-time.After(20 * time.Second):
		return 0, fmt.Errorf("no answer in 20 s\n%s", stderr.String())
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
