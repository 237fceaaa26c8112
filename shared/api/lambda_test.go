package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
)

// Every function's handler, fed its events/ samples through api-proxy, must
// answer what the local runner (all groups on one handler) answers to the
// same requests.
func TestLambdaHandlersMatchLocalRunner(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			for _, g := range api.Groups {
				t.Run(g.Name, func(t *testing.T) {
					files, _ := filepath.Glob(filepath.Join("..", "..", "events", g.Name, "*.json"))
					if len(files) == 0 {
						t.Fatalf("events/%s has no samples", g.Name)
					}
					sort.Strings(files)
					lambdaEnv := apitest.New(t, s.Open(t), g)
					proxy := httpadapter.NewV2(lambdaEnv.Handler).ProxyWithContext
					runner := apitest.New(t, s.Open(t), api.Groups...).Handler
					for _, f := range files {
						raw, err := os.ReadFile(f)
						if err != nil {
							t.Fatal(err)
						}
						var ev events.APIGatewayV2HTTPRequest
						if err := json.Unmarshal(raw, &ev); err != nil {
							t.Fatalf("%s: %v", f, err)
						}
						got, err := proxy(context.Background(), ev)
						if err != nil {
							t.Fatalf("%s: proxy: %v", f, err)
						}
						want := serve(runner, &ev)
						if got.StatusCode != want.Code {
							t.Errorf("%s: Lambda %d, runner %d: %s", filepath.Base(f), got.StatusCode, want.Code, got.Body)
						}
						if ct := got.Headers["Content-Type"]; !strings.HasPrefix(ct, "application/json") {
							t.Errorf("%s: Lambda Content-Type %q", filepath.Base(f), ct)
						}
						if a, b := normalize(t, got.Body), normalize(t, want.Body.String()); !reflect.DeepEqual(a, b) {
							t.Errorf("%s: Lambda answered %s, runner %s", filepath.Base(f), got.Body, want.Body)
						}
					}
				})
			}
		})
	}
}

// serve replays an API Gateway event as a plain HTTP request.
func serve(h http.Handler, ev *events.APIGatewayV2HTTPRequest) *httptest.ResponseRecorder {
	target := ev.RawPath
	if ev.RawQueryString != "" {
		target += "?" + ev.RawQueryString
	}
	req := httptest.NewRequest(ev.RequestContext.HTTP.Method, target, strings.NewReader(ev.Body))
	for k, v := range ev.Headers {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

var timestamp = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$`)

// normalize blanks what legitimately differs between two runs: assigned
// ids and the current time.
func normalize(t *testing.T, body string) any {
	var v any
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("not JSON: %s", body)
	}
	var walk func(any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case float64:
			if x > 1<<40 {
				return "<id>"
			}
		case string:
			if timestamp.MatchString(x) {
				return "<time>"
			}
		}
		return v
	}
	return walk(v)
}
