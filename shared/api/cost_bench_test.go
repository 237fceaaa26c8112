package api_test

// BenchmarkCost counts what each kind of call costs in DynamoDB, against
// DynamoDB Local (dynamotest.Meter: read units as DynamoDB Local reports
// them, write units computed from item sizes, the indexes' included), and
// prices it with API Gateway and Lambda beside the least the call could
// cost (its floor). `make bench` runs it with DYNAMODB_ENDPOINT set; the
// table in docs/operations.md is its output. Skipped without the emulator.
//
//	DYNAMODB_ENDPOINT=... go test -run '^$' -bench BenchmarkCost -benchtime 20x ./shared/api/

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue/storequeue"
	"github.com/storeadmin/adminapi/shared/ratelimit"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
)

// US East on-demand list prices, USD per million.
const (
	priceRU      = 0.125
	priceWU      = 0.625
	priceHTTPAPI = 1.00
	priceSQS     = 0.40
	// A Lambda invocation: the request and 20 ms at 256 MB, arm64.
	priceLambda = 0.20 + 0.020*0.25*13.3334
)

// costKind is one kind of call: setup makes its environment, prep (not
// counted) what one call needs, call makes the call. floorRU and floorWU
// are the least the call could cost in DynamoDB: what it must read and the
// record it writes, once, outside a transaction; base is what it costs
// besides DynamoDB.
type costKind struct {
	name             string
	base             float64
	floorRU, floorWU float64
	events           float64 // events the call logs: the total's floor has a 1-WU write for each
	groups           []api.Group
	topic            string // subscribed to by a loopback receiver, when set
	prep             func(b *testing.B, r *costRun, i int) string
	call             func(b *testing.B, r *costRun, i int, arg string)
	// instances, when set, serves the calls (r.lambda) as that many warm
	// Lambda instances do, taking turns: each its own token cache
	// (auth.TokenTTL) and its own claims on the app's call bucket
	// (ratelimit.Shared), on one table. The app is busy: Shopify Plus's
	// plan (400 calls, 20 a second), called at its sustained rate, the
	// service's clock moving step (1/20 s unless set) before each call.
	instances int
	step      time.Duration
}

// costRun is one kind's environment: a seeded, metered DynamoDB Local
// table serving its groups as in Lambda (derived work left to the stream),
// its delivery queue kept apart (SQS in AWS, not DynamoDB).
type costRun struct {
	e       *apitest.Env
	meter   *dynamotest.Meter
	d       *delivery.Dispatcher
	changes *changeLog
	// lambda are the instances of a kind with instances set, clock their
	// service's clock; e's own handler (no call limit, no token cache)
	// makes what the calls need.
	lambda []http.Handler
	clock  *clock.Fixed
}

// warm is how many calls are made before the counted ones: 100 through
// instances, none otherwise.
func (k costKind) warm() int {
	if k.instances == 0 {
		return 0
	}
	return 100
}

// plusPlan is Shopify Plus's REST call plan.
var plusPlan = admin.RatePlan{Bucket: 400, LeakPerSecond: 20}

// serveAs makes a call to the instance whose turn i is, as token.
func (r *costRun) serveAs(token string, i int, method, path string) int {
	req := httptest.NewRequest(method, path, nil)
	req.Header.Set("X-Service-Access-Token", token)
	w := httptest.NewRecorder()
	r.lambda[i%len(r.lambda)].ServeHTTP(w, req)
	return w.Code
}

// lambdaCall is a kind's call through the instances: advance the clock,
// then method path as the demo app, answered want.
func lambdaCall(token, path string, want int) func(b *testing.B, r *costRun, i int, arg string) {
	return func(b *testing.B, r *costRun, i int, arg string) {
		if arg != "" {
			path = arg
		}
		if code := r.serveAs(token, i, "GET", path); code != want {
			b.Fatalf("GET %s: %d, want %d", path, code, want)
		}
	}
}

// startLambda builds k's instances over r's table, with the demo app on
// Shopify Plus's plan.
func startLambda(b *testing.B, r *costRun, k costKind) {
	r.clock = r.e.FixClock(time.Unix(1_800_000_000, 0))
	ctx := context.Background()
	raw := r.meter.Unmetered()
	key := auth.TokenKey(auth.HashToken(apitest.DemoToken))
	var app admin.App
	it, err := records.Get(ctx, raw, key, &app)
	if err != nil {
		b.Fatal(err)
	}
	app.RateLimit = &plusPlan
	if err := raw.Transact(ctx, store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1, Data: records.Encode(app)}, store.IfVersion, it.Version)); err != nil {
		b.Fatal(err)
	}
	for range k.instances {
		d := &api.Deps{Deps: r.e.Deps, Limiter: ratelimit.NewShared(r.e.Deps.Store, r.clock.Now), TokenTTL: auth.TokenTTL}
		r.lambda = append(r.lambda, api.Handler(d, k.groups...))
	}
}

// changeLog commits through the metered store and keeps what the table's
// stream would carry of each change to a deriving record (its images; the
// one before read unmetered), so that the change feed's work is counted
// apart.
type changeLog struct {
	store.Store
	raw     store.Store
	ds      store.Derivers
	clock   clock.Clock
	changes []store.Change
}

func (l *changeLog) Transact(ctx context.Context, ops ...store.Op) error {
	changes, err := l.ds.ChangesOf(ctx, l.raw, ops)
	if err != nil {
		return err
	}
	if err := l.Store.Transact(ctx, ops...); err != nil {
		return err
	}
	l.changes = append(l.changes, changes...)
	return nil
}

// derive applies the logged changes as the change-feed function does.
func (l *changeLog) derive(b *testing.B) {
	for _, c := range l.changes {
		if err := l.ds.ApplyOnce(context.Background(), l.Store, c, l.clock.Now()); err != nil {
			b.Fatal(err)
		}
	}
	l.changes = l.changes[:0]
}

func BenchmarkCost(b *testing.B) {
	dynamotest.Endpoint(b) // skips without DYNAMODB_ENDPOINT
	for _, k := range costKinds {
		b.Run(k.name, func(b *testing.B) { runCost(b, k) })
	}
}

func runCost(b *testing.B, k costKind) {
	st, m := dynamotest.OpenMetered(b)
	r := &costRun{e: apitest.New(b, st, k.groups...), meter: m}
	r.changes = &changeLog{Store: st, raw: m.Unmetered(), ds: api.Derivers(), clock: r.e.Deps.Clock}
	r.e.Change(func(d *platform.Deps) { api.UseStore(d, r.changes, false) })
	r.e.Change(func(d *platform.Deps) { d.Queue = storequeue.New(apitest.OpenEmbedded(b), api.DeliveryQueue) })
	r.e.Change(func(d *platform.Deps) { d.Metrics = metrics.New(io.Discard, "") })
	r.d = api.Dispatcher(r.e.Deps, config.Config{})
	if k.topic != "" {
		rc := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
		b.Cleanup(rc.Close)
		r.e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{"topic": k.topic, "address": rc.URL + "/hook"}}).Expect(b, http.StatusCreated)
	}
	if k.instances > 0 {
		startLambda(b, r, k)
	}
	step := k.step
	if step == 0 {
		step = time.Duration(float64(time.Second) / plusPlan.LeakPerSecond)
	}
	var total, derived dynamotest.Usage
	i := 0
	// Warm instances: their token caches and claims as a steady stream of
	// calls leaves them, before anything is counted.
	for ; i < k.warm(); i++ {
		arg := k.prep(b, r, i+1)
		if r.clock != nil && step > 0 {
			r.clock.Advance(step)
		}
		k.call(b, r, i+1, arg)
		r.changes.derive(b)
	}
	warm := i
	for b.Loop() {
		i++
		b.StopTimer()
		arg := k.prep(b, r, i)
		r.changes.derive(b)
		if r.clock != nil && step > 0 {
			r.clock.Advance(step)
		}
		m.Take()
		b.StartTimer()
		k.call(b, r, i, arg)
		b.StopTimer()
		if i == warm+1 && testing.Verbose() {
			b.Logf("%s: write units of one call: %v", k.name, m.Detail())
		}
		u := m.Take()
		total.Calls += u.Calls
		total.RU += u.RU
		total.WU += u.WU
		// The change feed's work for the call, counted apart.
		r.changes.derive(b)
		if i == warm+1 && testing.Verbose() {
			b.Logf("%s: write units of its derived work: %v", k.name, m.Detail())
		}
		u = m.Take()
		derived.RU += u.RU
		derived.WU += u.WU
		b.StartTimer()
	}
	reportCost(b, k, total, derived, float64(i-warm))
}

// reportCost reports a kind's usage over n calls: the call's, priced and
// over its floor, its derived work's, and both over the total's floor.
func reportCost(b *testing.B, k costKind, total, derived dynamotest.Usage, n float64) {
	ru, wu := total.RU/n, total.WU/n
	usd := k.base + ru*priceRU + wu*priceWU
	floor := k.base + k.floorRU*priceRU + k.floorWU*priceWU
	b.ReportMetric(float64(total.Calls)/n, "calls/op")
	b.ReportMetric(ru, "RU/op")
	b.ReportMetric(wu, "WU/op")
	b.ReportMetric(usd, "USD/M")
	b.ReportMetric(usd/floor, "x-floor")
	// Derived work: the change-feed function's DynamoDB units per call.
	b.ReportMetric(derived.RU/n, "feed-RU/op")
	b.ReportMetric(derived.WU/n, "feed-WU/op")
	// The call and its derived work together, over the call's floor and a
	// 1-WU write per event it logs. The change-feed function's invocation
	// is priced at a tenth per change (a batch of 10 changes; bursts batch
	// more, a lone change is a whole one); its fan-out and delivery are
	// webhook_delivery's.
	feed := derived.RU/n*priceRU + derived.WU/n*priceWU
	if derived.WU > 0 {
		feed += priceLambda / 10
	}
	b.ReportMetric((usd+feed)/(floor+k.events*priceWU), "total-x-floor")
}

func noPrep(*testing.B, *costRun, int) string { return "" }

// readKinds are the reads, each through one Lambda instance and through
// two taking turns: a GET of one record (floor: its GetItem), a list of 50
// (the Query of its 51 items, 3 read units), a count (the Query of the 8
// count shards, 1), a 429 (nothing) and a 401 (the token's GetItem).
func readKinds() []costKind {
	var kinds []costKind
	base := priceHTTPAPI + priceLambda
	for _, n := range []int{1, 2} {
		suffix := fmt.Sprintf("_lambda%d", n)
		kinds = append(kinds,
			costKind{name: "get_redirect" + suffix, base: base, floorRU: 1, groups: []api.Group{api.Redirects}, instances: n,
				prep: func(b *testing.B, r *costRun, i int) string {
					return redirectOf(b, r.e, fmt.Sprintf("/cost-read-%d", i))
				},
				call: lambdaCall(apitest.DemoToken, "", http.StatusOK)},
			costKind{name: "list_redirects_50" + suffix, base: base, floorRU: 3, groups: []api.Group{api.Redirects}, instances: n,
				prep: func(b *testing.B, r *costRun, i int) string {
					for j := 0; i == 1 && j < 51; j++ {
						redirectOf(b, r.e, fmt.Sprintf("/cost-list-%d", j))
					}
					return ""
				},
				call: lambdaCall(apitest.DemoToken, "/web/redirects.json?limit=50", http.StatusOK)},
			costKind{name: "count_redirects" + suffix, base: base, floorRU: 1, groups: []api.Group{api.Redirects}, instances: n,
				prep: func(b *testing.B, r *costRun, i int) string {
					if i == 1 {
						redirectOf(b, r.e, "/cost-count")
					}
					return ""
				},
				call: lambdaCall(apitest.DemoToken, "/web/redirects/count.json", http.StatusOK)},
			// A full bucket (the clock stands still): refused before any work.
			costKind{name: "get_429" + suffix, base: base, groups: []api.Group{api.Redirects}, instances: n, step: -1,
				prep: func(b *testing.B, r *costRun, i int) string {
					// Until every instance has refused (the others' claims
					// spent too).
					for j, refused := 0, 0; i == 1 && refused < n; j++ {
						if r.serveAs(apitest.DemoToken, j, "GET", "/web/redirects/count.json") == http.StatusTooManyRequests {
							refused++
						} else {
							refused = 0
						}
					}
					return ""
				},
				call: lambdaCall(apitest.DemoToken, "/web/redirects/count.json", http.StatusTooManyRequests)},
			// A token no app holds: its lookup is the least it costs.
			costKind{name: "get_401" + suffix, base: base, floorRU: 1, groups: []api.Group{api.Redirects}, instances: n,
				prep: noPrep,
				call: lambdaCall("not-a-token-of-this-shop-0123456789", "/web/redirects/count.json", http.StatusUnauthorized)},
		)
	}
	return kinds
}

var costKinds = append(readKinds(), []costKind{
	{name: "get_redirect", base: priceHTTPAPI + priceLambda, floorRU: 1, groups: []api.Group{api.Redirects},
		prep: func(b *testing.B, r *costRun, i int) string {
			return redirectOf(b, r.e, fmt.Sprintf("/cost-get-%d", i))
		},
		call: func(b *testing.B, r *costRun, _ int, path string) { r.e.Do("GET", path, nil).Expect(b, http.StatusOK) }},
	{name: "create_redirect", base: priceHTTPAPI + priceLambda, floorWU: 1, groups: []api.Group{api.Redirects},
		prep: noPrep,
		call: func(b *testing.B, r *costRun, i int, _ string) { redirectOf(b, r.e, fmt.Sprintf("/cost-create-%d", i)) }},
	{name: "delete_redirect", base: priceHTTPAPI + priceLambda, floorRU: 1, floorWU: 1, groups: []api.Group{api.Redirects},
		prep: func(b *testing.B, r *costRun, i int) string {
			return redirectOf(b, r.e, fmt.Sprintf("/cost-delete-%d", i))
		},
		call: func(b *testing.B, r *costRun, _ int, path string) {
			r.e.Do("DELETE", path, nil).Expect(b, http.StatusOK)
		}},
	{name: "update_page_body", base: priceHTTPAPI + priceLambda, floorRU: 1, floorWU: 1, events: 1, groups: []api.Group{api.Pages},
		prep: func(b *testing.B, r *costRun, i int) string {
			p := r.e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": fmt.Sprintf("Cost %d", i), "body_html": "<p>Before.</p>"}}).Expect(b, http.StatusCreated)
			return fmt.Sprintf("/web/pages/%d.json", int64(p.Object(b, "page")["id"].(float64)))
		},
		call: func(b *testing.B, r *costRun, i int, path string) {
			r.e.Do("PUT", path, map[string]any{"page": map[string]any{"body_html": fmt.Sprintf("<p>After %d.</p>", i)}}).Expect(b, http.StatusOK)
		}},
	{name: "create_custom_collection_subscribed", base: priceHTTPAPI + priceLambda, floorWU: 1, events: 1,
		groups: []api.Group{api.Collections, api.Webhooks}, topic: "collections/create",
		prep: noPrep,
		call: func(b *testing.B, r *costRun, i int, _ string) { collectionOf(b, r.e, fmt.Sprintf("Cost %d", i)) }},
	// A delivery: the fan-out of one notification, then its one message
	// delivered (a batch of 1). Base: the Lambda invocation and the SQS
	// requests (send, receive, delete).
	{name: "webhook_delivery", base: priceLambda + 3*priceSQS, floorRU: 1, floorWU: 1,
		groups: []api.Group{api.Collections, api.Webhooks}, topic: "collections/create",
		prep: func(b *testing.B, r *costRun, i int) string {
			collectionOf(b, r.e, fmt.Sprintf("Delivered %d", i))
			r.changes.derive(b) // its notification
			return strconv.FormatInt(lastNotification(b, r.e), 10)
		},
		call: func(b *testing.B, r *costRun, _ int, arg string) {
			ctx := context.Background()
			nid, _ := strconv.ParseInt(arg, 10, 64)
			if err := delivery.FanOut(ctx, r.e.Deps.Store, r.e.Deps.Queue, nid); err != nil {
				b.Fatal(err)
			}
			ms, err := r.e.Deps.Queue.Receive(ctx, 1, time.Second)
			if err != nil || len(ms) != 1 {
				b.Fatalf("receive: %d messages, %v", len(ms), err)
			}
			if retry := delivery.Handle(ctx, r.e.Deps.Queue, r.d, ms[0]); retry {
				b.Fatal("delivery failed")
			}
		}},
}...)

func redirectOf(b *testing.B, e *apitest.Env, path string) string {
	r := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": path, "target": "/target"}}).Expect(b, http.StatusCreated)
	return fmt.Sprintf("/web/redirects/%d.json", int64(r.Object(b, "redirect")["id"].(float64)))
}

func collectionOf(b *testing.B, e *apitest.Env, title string) {
	e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": title}}).Expect(b, http.StatusCreated)
}

// lastNotification is the id of the newest outbox marker.
func lastNotification(b *testing.B, e *apitest.Env) int64 {
	items, _, err := store.Innermost(e.Deps.Store).Query(context.Background(), store.Query{PK: outbox.Partition, Desc: true, Limit: 1})
	if err != nil || len(items) == 0 {
		b.Fatalf("no outbox marker: %v", err)
	}
	id, err := records.ParseIDSK(items[0].SK)
	if err != nil {
		b.Fatal(err)
	}
	return id
}
