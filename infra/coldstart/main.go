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
//	go run ./infra/coldstart [-rounds 30] [-max 1.15] [function dirs or binaries...]
//
// Without arguments it measures every API function.
//
// make bench runs it; -max makes a ratio above it fail the run. An argument
// that is a file is taken as a binary already built (say, from another
// commit, built as build does), to compare with this tree's in one run.
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

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/platform"
)

// event is the first invocation: method path without a token.
func event(method, path string) string {
	return fmt.Sprintf(`{"version":"2.0","routeKey":"$default","rawPath":%q,"rawQueryString":"",`+
		`"headers":{"host":"api.example.com"},"requestContext":{"accountId":"1","apiId":"a","domainName":"api.example.com",`+
		`"http":{"method":%q,"path":%q,"protocol":"HTTP/1.1","sourceIp":"127.0.0.1","userAgent":"coldstart"},`+
		`"requestId":"r","routeKey":"$default","stage":"$default","time":"27/Nov/2026:00:00:00 +0000","timeEpoch":1795737600000},"isBase64Encoded":false}`,
		path, method, path)
}

// firstRequest is what a binary is sent: a route of its own group (the
// first that is neither a page nor public, wildcards as 1), which answers
// 401 before any store call and builds what serving the route needs; for
// shopify-paths a route in Shopify's versioned form, the only form API
// Gateway sends it. A binary of no group (the hello world) gets
// /web/redirects/count.json.
func firstRequest(name string) (method, path string) {
	shopify := name == "shopify-paths"
	for _, g := range api.Groups {
		if g.Name != name && !(shopify && g.Name == api.Redirects.Name) {
			continue
		}
		for _, r := range g.Routes(&platform.Deps{}) {
			if r.Page || r.Public {
				continue
			}
			segs := strings.Split(r.Path, "/")
			for i, s := range segs {
				if strings.HasPrefix(s, "{") {
					segs[i] = "1" + s[strings.IndexByte(s, '}')+1:]
				}
			}
			path := strings.Join(segs, "/")
			if shopify {
				path = "/admin/api/" + admin.LatestVersion(time.Now()) + "/" + strings.Join(segs[2:], "/")
			}
			return r.Method, path
		}
	}
	return http.MethodGet, "/web/redirects/count.json"
}

func main() {
	rounds := flag.Int("rounds", 30, "interleaved rounds")
	limit := flag.Float64("max", 0, "fail when a function's median exceeds this multiple of the hello world's (0: report only)")
	flag.Parse()
	dirs := flag.Args()
	if len(dirs) == 0 { // every API function
		for _, g := range api.Groups {
			dirs = append(dirs, "functions/"+g.Name)
		}
		dirs = append(dirs, "functions/shopify-paths")
	}
	tmp, err := os.MkdirTemp("", "coldstart")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	bins := map[string]string{"hello": build(tmp, "infra/coldstart/hello")}
	events := map[string]string{"hello": event(firstRequest("hello"))}
	names := []string{"hello"}
	for _, d := range dirs {
		name := filepath.Base(d)
		if fi, err := os.Stat(d); err == nil && fi.Mode().IsRegular() {
			name = d
			if bins[name], err = filepath.Abs(d); err != nil {
				log.Fatal(err)
			}
		} else {
			bins[name] = build(tmp, d)
		}
		names = append(names, name)
		events[name] = event(firstRequest(filepath.Base(d)))
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
			d, body, err := rt.invoke(bins[n], events[n], ln.Addr().String())
			if err != nil {
				log.Fatalf("%s: %v", n, err)
			}
			if n != "hello" && !strings.Contains(body, `"statusCode":401`) {
				log.Fatalf("%s: the first request was not answered 401 (the route's own answer before any store call): %s", n, body)
			}
			times[n] = append(times[n], d)
		}
	}
	base := median(times["hello"])
	failed := false
	width := 20
	for _, n := range names {
		width = max(width, len(n))
	}
	fmt.Printf("%-*s %10s %6s\n", width, "binary", "median", "ratio")
	for _, n := range names {
		m := median(times[n])
		ratio := float64(m) / float64(base)
		fmt.Printf("%-*s %10s %6.2f\n", width, n, m.Round(10*time.Microsecond), ratio)
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
	mu   sync.Mutex // one invocation at a time
	done chan answer
	// The running binary's event and request id, and whether its one
	// event was handed out: a process asking for a second waits, as in
	// Lambda, rather than answer it into the next binary's measurement.
	// Each process's runtime API address has its request id as a path
	// prefix, so that a request of a stopped process arriving late is
	// told from the running one's.
	emu    sync.Mutex
	event  string
	id     string
	handed bool
	n      int
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
		rt.emu.Lock()
		event, id, handed := rt.event, rt.id, rt.handed
		current := strings.HasPrefix(r.URL.Path, "/"+id+"/")
		rt.handed = rt.handed || current
		rt.emu.Unlock()
		if handed || !current {
			<-r.Context().Done() // until the process is stopped
			return
		}
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", id)
		h.Set("Lambda-Runtime-Deadline-Ms", fmt.Sprint(time.Now().Add(time.Minute).UnixMilli()))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:1:function:coldstart")
		_, _ = io.WriteString(w, event)
	case r.Method == "POST" && (strings.HasSuffix(r.URL.Path, "/response") || strings.HasSuffix(r.URL.Path, "/error")):
		b, _ := io.ReadAll(r.Body)
		at := time.Now()
		rt.emu.Lock()
		current := strings.HasPrefix(r.URL.Path, "/"+rt.id+"/") && strings.Contains(r.URL.Path, "/invocation/"+rt.id+"/")
		rt.emu.Unlock()
		if current {
			rt.done <- answer{at: at, body: string(b), err: strings.HasSuffix(r.URL.Path, "/error")}
		}
		w.WriteHeader(http.StatusAccepted)
	default:
		http.NotFound(w, r)
	}
}

// invoke starts bin, waits for its first answer and stops it.
func (rt *runtime) invoke(bin, event, addr string) (time.Duration, string, error) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	rt.emu.Lock()
	rt.n++
	rt.event, rt.id, rt.handed = event, fmt.Sprintf("req-%d", rt.n), false
	addr += "/" + rt.id
	rt.emu.Unlock()
	cmd := exec.Command(bin)
	cmd.Env = []string{"AWS_LAMBDA_RUNTIME_API=" + addr, "AWS_LAMBDA_FUNCTION_NAME=coldstart", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=x", "AWS_SECRET_ACCESS_KEY=x", "TABLE_NAME=coldstart", "AWS_EC2_METADATA_DISABLED=true",
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	select {
	case a := <-rt.done:
		if a.err {
			return 0, "", fmt.Errorf("the first invocation failed: %s\n%s", a.body, stderr.String())
		}
		return a.at.Sub(start), a.body, nil
	case <-time.After(20 * time.Second):
		return 0, "", fmt.Errorf("no answer in 20 s\n%s", stderr.String())
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
