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
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/providers"
	"github.com/storeadmin/adminapi/shared/themes"
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

// The samples of the functions that serve no route (events/webhook-dispatch,
// events/change-feed, for `sam local invoke`) decode into their event types
// and are handled without a batch item failure: a message for a webhook that
// does not exist is dropped, and so is the outbox marker of a notification
// that does not exist.
func TestEventSourceSamples(t *testing.T) {
	read := func(t *testing.T, path string, v any) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join("..", "..", "events", path))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(strings.NewReader(string(raw)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("events/%s: %v", path, err)
		}
	}
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			ctx := context.Background()
			env := apitest.New(t, s.Open(t))

			var batch events.SQSEvent
			read(t, "webhook-dispatch/sqs-batch.json", &batch)
			if len(batch.Records) != 1 || batch.Records[0].Attributes["ApproximateReceiveCount"] != "1" {
				t.Fatalf("sqs-batch.json: want one record received once, got %+v", batch.Records)
			}
			var m delivery.Message
			if err := json.Unmarshal([]byte(batch.Records[0].Body), &m); err != nil || m.DeliveryID == "" || m.WebhookID == 0 {
				t.Fatalf("sqs-batch.json: body is not a delivery message (%v): %s", err, batch.Records[0].Body)
			}
			sqsResp, err := delivery.SQSHandler(env.Deps.Queue, api.Dispatcher(env.Deps, config.Config{}))(ctx, batch)
			if err != nil || len(sqsResp.BatchItemFailures) > 0 {
				t.Errorf("webhook-dispatch: failures %+v, error %v", sqsResp.BatchItemFailures, err)
			}

			var feed events.DynamoDBEvent
			read(t, "change-feed/stream-insert.json", &feed)
			if len(feed.Records) != 1 || feed.Records[0].EventName != "INSERT" || feed.Records[0].Change.Keys["PK"].String() != outbox.Partition {
				t.Fatalf("stream-insert.json: want one INSERT of an outbox marker, got %+v", feed.Records)
			}
			feedResp, err := delivery.StreamHandler(env.Deps)(ctx, feed)
			if err != nil || len(feedResp.BatchItemFailures) > 0 {
				t.Errorf("change-feed: failures %+v, error %v", feedResp.BatchItemFailures, err)
			}
			if msgs, err := env.Deps.Queue.Receive(ctx, 10, 0); err != nil || len(msgs) > 0 {
				t.Errorf("change-feed queued %d messages (error %v), want none", len(msgs), err)
			}

			// The hourly polls on their schedule events: no service, nothing asked.
			for name, poll := range map[string]func(context.Context, *platform.Deps) providers.Summary{
				"fetch-stock": providers.FetchStock, "fetch-tracking-numbers": providers.FetchTrackingNumbers} {
				var tick events.EventBridgeEvent
				read(t, name+"/schedule.json", &tick)
				sum, err := providers.ScheduleHandler(env.Deps, poll)(ctx, tick)
				if err != nil || sum.Providers != 0 || sum.Failures != 0 {
					t.Errorf("%s: summary %+v, error %v", name, sum, err)
				}
			}
			// A theme import of a theme that does not exist is settled.
			var imports events.SQSEvent
			read(t, "theme-import/sqs-batch.json", &imports)
			importResp, err := themes.SQSHandler(env.Deps)(ctx, imports)
			if err != nil || len(importResp.BatchItemFailures) > 0 {
				t.Errorf("theme-import: failures %+v, error %v", importResp.BatchItemFailures, err)
			}
			// A single-SKU job for a variant no service manages is settled without a request.
			var jobs events.DynamoDBEvent
			read(t, "provider-jobs/stream-insert.json", &jobs)
			jobResp, err := providers.StreamHandler(env.Deps)(ctx, jobs)
			if err != nil || len(jobResp.BatchItemFailures) > 0 {
				t.Errorf("provider-jobs: failures %+v, error %v", jobResp.BatchItemFailures, err)
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
