package delivery_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

const demoSecret = "demo-shared-secret" // shared/seed/demo.json

// received is one request a receiver got.
type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

// receiver is a loopback webhook endpoint. fail decides, per request, the
// status to answer (0 means 200).
type receiver struct {
	*httptest.Server
	mu   sync.Mutex
	got  []received
	fail func(n int, r *http.Request) int
	wait time.Duration
}

func newReceiver(t testing.TB) *receiver {
	rc := &receiver{}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		time.Sleep(rc.wait)
		rc.mu.Lock()
		rc.got = append(rc.got, received{r.Header.Clone(), body, time.Now()})
		n := len(rc.got)
		fail := rc.fail
		rc.mu.Unlock()
		if fail != nil {
			if s := fail(n, r); s != 0 {
				w.WriteHeader(s)
				return
			}
		}
		w.WriteHeader(200)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// waitFor polls until cond holds or the deadline passes.
func waitFor(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func verifyHMAC(t *testing.T, r received, secret string) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(r.body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	if got := r.header.Get("X-Service-Hmac-Sha256"); !hmac.Equal([]byte(got), []byte(want)) {
		t.Fatalf("HMAC %q, want %q", got, want)
	}
	// A receiver written with a Shopify library reads the X-Shopify- twins.
	for _, name := range []string{"Topic", "Shop-Domain", "Webhook-Id", "Triggered-At", "Hmac-Sha256"} {
		if got, svc := r.header.Get("X-Shopify-"+name), r.header.Get("X-Service-"+name); got != svc || got == "" {
			t.Errorf("X-Shopify-%s %q, X-Service-%s %q", name, got, name, svc)
		}
	}
	if v := r.header.Get("X-Shopify-API-Version"); !admin.ValidVersion(v, time.Now()) || v == admin.UnstableVersion {
		t.Errorf("X-Shopify-API-Version %q", v)
	}
}

// pipeline runs the local runner's in-process pipeline over an env until
// the test ends or stop is called.
type pipeline struct {
	stop func()
	done sync.WaitGroup
}

func startPipeline(t *testing.T, e *apitest.Env, retryBase time.Duration, workers ...int) *pipeline {
	n := 16
	if len(workers) > 0 {
		n = workers[0]
	}
	ctx, cancel := context.WithCancel(context.Background())
	p := &pipeline{stop: cancel}
	d := api.Dispatcher(e.Deps, config.Config{RetryBase: retryBase})
	d.MaxDelay = 20 * retryBase
	p.done.Add(2)
	go func() { defer p.done.Done(); delivery.Pump(ctx, e.Deps.Store, e.Deps.Queue, nil, 20*time.Millisecond) }()
	go func() { defer p.done.Done(); delivery.Consume(ctx, e.Deps.Queue, d, n) }()
	t.Cleanup(func() { cancel(); p.done.Wait() })
	return p
}

func (p *pipeline) halt() { p.stop(); p.done.Wait() }

func subscribe(t testing.TB, e *apitest.Env, token, topic, address string, extra map[string]any) int64 {
	t.Helper()
	w := map[string]any{"topic": topic, "address": address}
	for k, v := range extra {
		w[k] = v
	}
	res := e.DoAs(token, "POST", "/admin/webhooks.json", map[string]any{"webhook": w}).Expect(t, 201)
	return int64(res.Object(t, "webhook")["id"].(float64))
}

// fire commits a notification the way a resource's write does.
func fire(t *testing.T, e *apitest.Env, topic string, payload map[string]any, opts ...outbox.Option) {
	t.Helper()
	ops, err := outbox.Notify(context.Background(), e.Deps.Store, e.Deps.IDs, e.Deps.Clock, topic, "product", payload, opts...)
	if err != nil {
		t.Fatal(err)
	}
	if err := records.Transact(context.Background(), e.Deps.Store, ops...); err != nil {
		t.Fatal(err)
	}
}

// shortVisibility makes e's delivery queue redeliver an unacked message
// after a second; call it before the pipeline starts.
func shortVisibility(t *testing.T, e *apitest.Env) {
	q, ok := e.Deps.Queue.(interface{ UseVisibility(time.Duration) })
	if !ok {
		t.Fatalf("the delivery queue %T has no UseVisibility", e.Deps.Queue)
	}
	q.UseVisibility(time.Second)
}

func TestDeliveriesAreSignedAndComplete(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t)
		subscribe(t, e, apitest.DemoToken, "products/update", rc.URL+"/hook", nil)
		startPipeline(t, e, 10*time.Millisecond)
		fire(t, e, "products/update", map[string]any{"id": 632910392, "title": "IPod Nano - 8GB"})
		waitFor(t, 10*time.Second, "the delivery", func() bool { return len(rc.requests()) == 1 })
		r := rc.requests()[0]
		if string(r.body) != `{"id":632910392,"title":"IPod Nano - 8GB"}` {
			t.Fatalf("body %s", r.body)
		}
		for h, want := range map[string]string{"Content-Type": "application/json", "X-Service-Topic": "products/update",
			"X-Service-Shop-Domain": "demo-shop.example.com"} {
			if got := r.header.Get(h); got != want {
				t.Fatalf("%s: %q, want %q", h, got, want)
			}
		}
		if r.header.Get("X-Service-Webhook-Id") == "" {
			t.Fatal("no X-Service-Webhook-Id")
		}
		if _, err := time.Parse(time.RFC3339, r.header.Get("X-Service-Triggered-At")); err != nil {
			t.Fatalf("X-Service-Triggered-At: %v", err)
		}
		verifyHMAC(t, r, demoSecret)
	}, api.Webhooks)
}

// A 500 is retried with backoff under the same delivery id until it succeeds;
// the delivery log shows every attempt.
func TestFailuresAreRetriedWithTheSameID(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t)
		rc.fail = func(n int, _ *http.Request) int {
			if n <= 2 {
				return 500
			}
			return 0
		}
		id := subscribe(t, e, apitest.DemoToken, "products/update", rc.URL, nil)
		startPipeline(t, e, 50*time.Millisecond)
		fire(t, e, "products/update", map[string]any{"id": 1})
		waitFor(t, 10*time.Second, "three attempts", func() bool { return len(rc.requests()) == 3 })
		got := rc.requests()
		for _, r := range got[1:] {
			if r.header.Get("X-Service-Webhook-Id") != got[0].header.Get("X-Service-Webhook-Id") {
				t.Fatal("a retry changed X-Service-Webhook-Id")
			}
		}
		if gap := got[2].at.Sub(got[1].at); gap < 90*time.Millisecond {
			t.Fatalf("second retry after %v: no backoff", gap)
		}
		var attempts []any
		waitFor(t, 5*time.Second, "the log", func() bool {
			attempts = e.Do("GET", fmt.Sprintf("/admin/webhooks/%d/deliveries.json", id), nil).Expect(t, 200).List(t, "deliveries")
			return len(attempts) == 3
		})
		newest := attempts[0].(map[string]any)
		if newest["response_status"] != 200.0 || newest["attempt"] != 3.0 || newest["error"] != nil {
			t.Fatalf("newest attempt %v", newest)
		}
		if oldest := attempts[2].(map[string]any); oldest["response_status"] != 500.0 || oldest["error"] == nil {
			t.Fatalf("oldest attempt %v", oldest)
		}
		e.DoAs(apitest.ReadOnlyToken, "GET", fmt.Sprintf("/admin/webhooks/%d/deliveries.json", id), nil).Expect(t, 404)
	}, api.Webhooks)
}

func TestFormatsFieldsAndMetafields(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rcJSON, rcXML := newReceiver(t), newReceiver(t)
		subscribe(t, e, apitest.DemoToken, "products/create", rcJSON.URL, map[string]any{
			"fields": []string{"id", "title"}, "metafield_namespaces": []string{"inventory"}})
		subscribe(t, e, apitest.DemoToken, "products/create", rcXML.URL, map[string]any{"format": "xml"})
		// A metafield owned by the product, in the layout the metafields resource serves.
		err := e.Deps.Store.Transact(context.Background(), store.Put(store.Item{
			PK: "metafield", SK: records.IDSK(77), GSI1PK: "metafield#owner#product#5", GSI1SK: records.IDSK(77), Version: 1,
			Data: []byte(`{"id":77,"namespace":"inventory","key":"warehouse","value":25,"value_type":"integer","owner_id":5,"owner_resource":"product"}`),
		}, store.IfAbsent, 0))
		if err != nil {
			t.Fatal(err)
		}
		startPipeline(t, e, 10*time.Millisecond)
		fire(t, e, "products/create", map[string]any{"id": 5, "title": "A & B", "vendor": "V", "body_html": nil,
			"variants": []any{map[string]any{"id": 6, "price": "1.00"}}}, outbox.MetafieldsOf("product", 5))
		waitFor(t, 10*time.Second, "both deliveries", func() bool { return len(rcJSON.requests()) == 1 && len(rcXML.requests()) == 1 })
		j := string(rcJSON.requests()[0].body)
		if !strings.Contains(j, `"title":"A \u0026 B"`) && !strings.Contains(j, `"title":"A & B"`) || strings.Contains(j, "vendor") ||
			!strings.Contains(j, `"namespace":"inventory"`) {
			t.Fatalf("json body %s", j)
		}
		x := rcXML.requests()[0]
		if x.header.Get("Content-Type") != "application/xml" {
			t.Fatalf("xml content type %q", x.header.Get("Content-Type"))
		}
		for _, want := range []string{"<product>", `<body-html nil="true"/>`, "<title>A &amp; B</title>", `<variants type="array"><variant>`, `<id type="integer">5</id>`} {
			if !strings.Contains(string(x.body), want) {
				t.Fatalf("xml lacks %s: %s", want, x.body)
			}
		}
		verifyHMAC(t, x, demoSecret)
	}, api.Webhooks)
}

// After MaxAttempts failures a delivery is dead-lettered; redeliver sends it again.
func TestDeadLetterAndRedeliver(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t)
		healthy := false
		var mu sync.Mutex
		rc.fail = func(int, *http.Request) int {
			mu.Lock()
			defer mu.Unlock()
			if healthy {
				return 0
			}
			return 503
		}
		id := subscribe(t, e, apitest.DemoToken, "products/delete", rc.URL, nil)
		startPipeline(t, e, time.Millisecond)
		fire(t, e, "products/delete", map[string]any{"id": 9})
		// A bound, not a wait: 19 attempts are 19 claims and transactions,
		// which a loaded DynamoDB Local has taken over 30 s to answer.
		waitFor(t, 90*time.Second, "all attempts", func() bool { return len(rc.requests()) == delivery.MaxAttempts })
		var last map[string]any
		waitFor(t, 5*time.Second, "the dead letter", func() bool {
			l := e.Do("GET", fmt.Sprintf("/admin/webhooks/%d/deliveries.json?limit=1", id), nil).Expect(t, 200).List(t, "deliveries")
			last = l[0].(map[string]any)
			return last["dead_lettered"] == true
		})
		time.Sleep(200 * time.Millisecond)
		if n := len(rc.requests()); n != delivery.MaxAttempts {
			t.Fatalf("%d attempts after the dead letter", n)
		}
		mu.Lock()
		healthy = true
		mu.Unlock()
		path := fmt.Sprintf("/admin/webhooks/%d/deliveries/%s/redeliver.json", id, last["delivery_id"])
		e.Do("POST", path, nil).Expect(t, 200)
		waitFor(t, 10*time.Second, "the redelivery", func() bool { return len(rc.requests()) == delivery.MaxAttempts+1 })
		if got := rc.requests()[delivery.MaxAttempts].header.Get("X-Service-Webhook-Id"); got != last["delivery_id"] {
			t.Fatalf("redelivery id %s, want %s", got, last["delivery_id"])
		}
		e.Do("POST", path, nil).Expect(t, 404) // no longer dead-lettered
	}, api.Webhooks)
}

// A slow receiver does not hold up deliveries to others: the fast one gets
// its delivery before the slow one has answered any (a receiver counts a
// request when it answers; the slow one answers after 8 s, past the
// client's DeliveryTimeout).
func TestSlowReceiverDoesNotDelayOthers(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		slow, fast := newReceiver(t), newReceiver(t)
		slow.wait = 8 * time.Second
		for range 5 {
			subscribe(t, e, apitest.DemoToken, "products/update", slow.URL+"/"+fmt.Sprint(time.Now().UnixNano()), nil)
		}
		subscribe(t, e, apitest.DemoToken, "products/update", fast.URL, nil)
		startPipeline(t, e, 10*time.Millisecond)
		fire(t, e, "products/update", map[string]any{"id": 1})
		waitFor(t, 30*time.Second, "the fast delivery", func() bool { return len(fast.requests()) == 1 })
		if n := len(slow.requests()); n > 0 {
			t.Fatalf("the fast delivery came after %d slow answers", n)
		}
	}, api.Webhooks)
}

// One receiver that holds every request it gets among ten does not hold
// up the other nine: it never has more than PerReceiver requests at once,
// so the workers it cannot have deliver to the others, and they get every
// delivery of a burst. (Before, all of Consume's workers ended up waiting
// on it.) No slot of the slow receiver can be freed before its first
// request times out, so the test counts the requests that reached it in
// that time: a slow store makes it slower, never wrong.
func TestSlowReceiverAmongTen(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		release := make(chan struct{})
		var mu sync.Mutex
		var arrivals []time.Time
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
			select { // until the client gives up (DeliveryTimeout)
			case <-release:
			case <-r.Context().Done():
			}
		}))
		t.Cleanup(slow.Close)
		t.Cleanup(func() { close(release) }) // first: lets held requests end
		subscribe(t, e, apitest.DemoToken, "orders/create", slow.URL, nil)
		fast := make([]*receiver, 9)
		for i := range fast {
			fast[i] = newReceiver(t)
			subscribe(t, e, apitest.DemoToken, "orders/create", fast[i].URL, nil)
		}
		// Fewer workers than slow messages, so that without the limit
		// every worker could end up waiting on the slow receiver.
		workers, changes := delivery.PerReceiver+4, 40
		if strings.HasSuffix(t.Name(), "dynamodb") {
			changes = workers + 2 // DynamoDB Local is slow on a busy machine
		}
		startPipeline(t, e, time.Hour, workers)
		for i := range changes {
			fire(t, e, "orders/create", map[string]any{"id": i + 1})
		}
		waitFor(t, 3*time.Minute, "every delivery to the fast receivers", func() bool {
			for _, rc := range fast {
				if len(rc.requests()) < changes {
					return false
				}
			}
			return true
		})
		mu.Lock()
		defer mu.Unlock()
		if len(arrivals) == 0 {
			t.Fatal("the slow receiver got no request")
		}
		// Less the time a request takes to reach the receiver after
		// its timeout starts; a second is plenty.
		window := arrivals[0].Add(delivery.DeliveryTimeout - time.Second)
		held := 0
		for _, at := range arrivals {
			if at.Before(window) {
				held++
			}
		}
		if held > delivery.PerReceiver {
			t.Fatalf("the slow receiver held %d requests at once, want at most %d", held, delivery.PerReceiver)
		}
	}, api.Webhooks)
}

// Stopping the dispatcher mid-batch loses nothing: unacked messages come back.
func TestNothingLostWhenStoppedMidBatch(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		shortVisibility(t, e)
		rc := newReceiver(t)
		rc.wait = 200 * time.Millisecond
		subscribe(t, e, apitest.DemoToken, "orders/create", rc.URL, nil)
		const n = 20
		for i := range n {
			fire(t, e, "orders/create", map[string]any{"id": i + 1})
		}
		p := startPipeline(t, e, 10*time.Millisecond)
		waitFor(t, 10*time.Second, "the first deliveries", func() bool { return len(rc.requests()) >= 3 })
		p.halt()
		startPipeline(t, e, 10*time.Millisecond)
		ids := map[string]bool{}
		waitFor(t, 30*time.Second, "every delivery", func() bool {
			for _, r := range rc.requests() {
				ids[string(r.body)] = true
			}
			return len(ids) == n
		})
	}, api.Webhooks)
}

// Uninstall delivers app/uninstalled signed with the app's secret, revokes
// the token and deletes the app's webhooks and script tags.
func TestUninstall(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rc, other := newReceiver(t), newReceiver(t)
		subscribe(t, e, apitest.DemoToken, "app/uninstalled", rc.URL, nil)
		subscribe(t, e, apitest.ReadOnlyToken, "app/uninstalled", other.URL, nil)
		subscribe(t, e, apitest.DemoToken, "orders/create", rc.URL+"/orders", nil)
		e.Do("POST", "/web/script_tags.json", map[string]any{"script_tag": map[string]any{"event": "onload", "src": "https://x.example.com/a.js"}}).Expect(t, 201)
		startPipeline(t, e, 10*time.Millisecond)

		e.Do("DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.Do("GET", "/admin/webhooks.json", nil).Expect(t, 401)
		waitFor(t, 10*time.Second, "app/uninstalled", func() bool { return len(rc.requests()) == 1 })
		r := rc.requests()[0]
		if r.header.Get("X-Service-Topic") != "app/uninstalled" || !strings.Contains(string(r.body), `"domain":"demo-shop.example.com"`) {
			t.Fatalf("delivery %v %s", r.header, r.body)
		}
		verifyHMAC(t, r, demoSecret)
		time.Sleep(200 * time.Millisecond)
		if len(other.requests()) != 0 {
			t.Fatal("another app's app/uninstalled webhook fired")
		}
		for _, pk := range []string{"webhook#app#1001", "script_tag#app#1001"} {
			items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: pk})
			if err != nil || len(items) != 0 {
				t.Fatalf("%s: %d items left (%v)", pk, len(items), err)
			}
		}
		if n := e.DoAs(apitest.ReadOnlyToken, "GET", "/admin/webhooks/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 1.0 {
			t.Fatalf("the other app's webhooks: %v", n)
		}
	}, api.Webhooks, api.ScriptTags)
}

func TestBackoffSpansTwoDays(t *testing.T) {
	var total time.Duration
	for a := 1; a < delivery.MaxAttempts; a++ {
		d := delivery.Backoff(10*time.Second, a)
		if a > 1 && d < delivery.Backoff(10*time.Second, a-1) {
			t.Fatalf("backoff shrinks at attempt %d", a)
		}
		if d > 12*time.Hour {
			t.Fatalf("backoff %v beyond SQS's 12 h visibility", d)
		}
		total += d
	}
	if total < 47*time.Hour || total > 49*time.Hour {
		t.Fatalf("19 attempts span %v, want about 48 h", total)
	}
	if delivery.Backoff(10*time.Second, 1) != 10*time.Second || delivery.Backoff(10*time.Second, 2) != 20*time.Second {
		t.Fatal("backoff does not start at the base and double")
	}
}

// A webhook whose deliveries have failed for 48 hours of the service's
// clock is removed: the clock is stepped past them, not waited for.
func TestWebhookFailingForTwoDaysIsRemoved(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		rc := newReceiver(t)
		rc.fail = func(int, *http.Request) int { return 500 }
		id := subscribe(t, e, apitest.DemoToken, "orders/create", rc.URL, nil)
		startPipeline(t, e, 10*time.Millisecond)
		fire(t, e, "orders/create", map[string]any{"id": 1})
		waitFor(t, 10*time.Second, "failing attempts", func() bool { return len(rc.requests()) >= 2 })
		if e.Do("GET", fmt.Sprintf("/admin/webhooks/%d.json", id), nil).Status != 200 {
			t.Fatal("the webhook was removed before 48 hours of failures")
		}
		clk.Advance(delivery.RetryWindow + time.Minute)
		waitFor(t, 10*time.Second, "the webhook's removal", func() bool {
			return e.Do("GET", fmt.Sprintf("/admin/webhooks/%d.json", id), nil).Status == 404
		})
		n := len(rc.requests())
		time.Sleep(300 * time.Millisecond) // no attempt may follow the removal
		if got := len(rc.requests()); got != n {
			t.Fatalf("%d attempts after removal", got-n)
		}
	}, api.Webhooks)
}

// A notification whose stream record was lost is picked up by the sweep
// that runs with later stream batches.
func TestSweepSendsForgottenNotifications(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t)
		subscribe(t, e, apitest.DemoToken, "orders/create", rc.URL, nil)
		old, err := outbox.Notify(context.Background(), e.Deps.Store, e.Deps.IDs, e.Deps.Clock, "orders/create", "order", map[string]any{"id": 1})
		if err != nil {
			t.Fatal(err)
		}
		// Back-date it past SweepAge: its id (the markers' sort key) is time-ordered.
		oldID := ids.At(time.Now().Add(-delivery.SweepAge - time.Minute))
		old[0].Item.SK, old[1].Item.SK = records.IDSK(oldID), records.IDSK(oldID)
		old[0].Item.Data = []byte(strings.Replace(string(old[0].Item.Data), `"id":`, fmt.Sprintf(`"id":%d,"was":`, oldID), 1))
		fresh, err := outbox.Notify(context.Background(), e.Deps.Store, e.Deps.IDs, e.Deps.Clock, "orders/create", "order", map[string]any{"id": 2})
		if err != nil {
			t.Fatal(err)
		}
		if err := records.Transact(context.Background(), e.Deps.Store, append(old, fresh...)...); err != nil {
			t.Fatal(err)
		}
		if err := delivery.Sweep(context.Background(), e.Deps.Store, e.Deps.Queue, e.Deps.Clock, 10); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go delivery.Consume(ctx, e.Deps.Queue, api.Dispatcher(e.Deps, config.Config{}), 4)
		waitFor(t, 10*time.Second, "the swept delivery", func() bool { return len(rc.requests()) == 1 })
		time.Sleep(200 * time.Millisecond)
		if got := rc.requests(); len(got) != 1 || string(got[0].body) != `{"id":1}` {
			t.Fatalf("swept %d deliveries (the fresh one is the stream's)", len(got))
		}
	}, api.Webhooks)
}

// createCollection creates a custom collection through the API: a change
// firing collections/create.
func createCollection(t *testing.T, e *apitest.Env, title string) {
	t.Helper()
	e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": title}}).Expect(t, 201)
}

// onlyLater checks that a receiver got exactly one delivery, of the
// collection named "Later".
func onlyLater(t *testing.T, name string, rc *receiver) {
	t.Helper()
	got := rc.requests()
	if len(got) != 1 || !strings.Contains(string(got[0].body), `"title":"Later"`) {
		bodies := make([]string, len(got))
		for i := range got {
			bodies[i] = string(got[i].body)
		}
		t.Fatalf("%s got %d deliveries, want only the later collection: %v", name, len(got), bodies)
	}
}

// A webhook gets only the changes committed after it subscribed, however
// late the outbox is pumped: a collection created before the webhook is not
// delivered to it, one created after is. The same holds for a webhook moved
// to the topic after the change; a webhook deleted before the fan-out gets
// nothing.
func TestWebhookGetsOnlyChangesCommittedAfterItSubscribed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		created, moved, deleted := newReceiver(t), newReceiver(t), newReceiver(t)
		deletedID := subscribe(t, e, apitest.DemoToken, "collections/create", deleted.URL, nil)
		movedID := subscribe(t, e, apitest.DemoToken, "collections/update", moved.URL, nil)

		createCollection(t, e, "Earlier")
		subscribe(t, e, apitest.DemoToken, "collections/create", created.URL, nil)
		e.Do("PUT", fmt.Sprintf("/admin/webhooks/%d.json", movedID), map[string]any{"webhook": map[string]any{"topic": "collections/create"}}).Expect(t, 200)
		e.Do("DELETE", fmt.Sprintf("/admin/webhooks/%d.json", deletedID), nil).Expect(t, 200)

		startPipeline(t, e, 10*time.Millisecond) // the outbox is read only now
		createCollection(t, e, "Later")
		waitFor(t, 10*time.Second, "the later collection", func() bool {
			return len(created.requests()) >= 1 && len(moved.requests()) >= 1
		})
		time.Sleep(300 * time.Millisecond)
		onlyLater(t, "the webhook created after the first collection", created)
		onlyLater(t, "the webhook moved to the topic after the first collection", moved)
		if n := len(deleted.requests()); n != 0 {
			t.Fatalf("the deleted webhook got %d deliveries", n)
		}
	}, api.Webhooks, api.Collections)
}

// getCounter counts the Gets of each key.
type getCounter struct {
	store.Store
	mu   sync.Mutex
	gets map[store.Key]int
}

func (c *getCounter) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.mu.Lock()
	c.gets[k]++
	c.mu.Unlock()
	return c.Store.Get(ctx, k)
}

// The messages of one batch (a Lambda event, one Receive) read their
// notification and app once, however many webhooks they go to.
func TestBatchReadsEachNotificationOnce(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t)
		for i := range 10 {
			subscribe(t, e, apitest.DemoToken, "orders/create", fmt.Sprintf("%s/%d", rc.URL, i), nil)
		}
		fire(t, e, "orders/create", map[string]any{"id": 1})
		items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: outbox.Partition})
		if err != nil || len(items) != 1 {
			t.Fatalf("outbox: %v, %v", items, err)
		}
		nid, _ := records.ParseIDSK(items[0].SK)
		if err := delivery.FanOut(t.Context(), e.Deps.Store, e.Deps.Queue, nid); err != nil {
			t.Fatal(err)
		}
		var msgs []queue.Message
		for len(msgs) < 10 {
			got, err := e.Deps.Queue.Receive(t.Context(), queue.MaxReceive, time.Second)
			if err != nil || len(got) == 0 {
				t.Fatalf("received %d of 10: %v", len(msgs), err)
			}
			msgs = append(msgs, got...)
		}
		counter := &getCounter{Store: e.Deps.Store, gets: map[store.Key]int{}}
		d := api.Dispatcher(e.Deps, config.Config{})
		d.Store = counter
		batch := delivery.NewBatch()
		var wg sync.WaitGroup
		for _, m := range msgs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if out, err := d.Deliver(t.Context(), batch, m); err != nil || out.Retry {
					t.Errorf("deliver: %+v, %v", out, err)
				}
			}()
		}
		wg.Wait()
		if n := len(rc.requests()); n != 10 {
			t.Fatalf("%d deliveries, want 10", n)
		}
		if n := counter.gets[outbox.NotificationKey(nid)]; n != 1 {
			t.Fatalf("the notification was read %d times, want once", n)
		}
	}, api.Webhooks)
}

// A notification the change feed derived late (its change's id is past
// SweepAge, its marker just written) is its own stream record's to fan
// out: the sweep leaves it, so it is not delivered twice.
func TestSweepLeavesALateDerivedNotification(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		rc := newReceiver(t)
		subscribe(t, e, apitest.DemoToken, "orders/create", rc.URL, nil)
		oldID := ids.At(e.Deps.Clock.Now().Add(-delivery.SweepAge - time.Minute))
		it := store.Item{PK: "order", SK: records.IDSK(1), Version: 1, Data: []byte("{}"), Nums: map[string]int64{store.ChangeNum: oldID, store.ClockNum: 1 << 40}}
		ops := outbox.OfChange(store.Change{New: &it, At: e.Deps.Clock.Now()}, "orders/create", "order", map[string]any{"id": 1})
		if err := records.Transact(ctx, store.Innermost(e.Deps.Store), ops...); err != nil {
			t.Fatal(err)
		}
		if err := delivery.Sweep(ctx, e.Deps.Store, e.Deps.Queue, e.Deps.Clock, 10); err != nil {
			t.Fatal(err)
		}
		if msgs, err := e.Deps.Queue.Receive(ctx, 10, 0); err != nil || len(msgs) != 0 {
			t.Fatalf("the sweep queued %d deliveries (error %v) of a marker written now", len(msgs), err)
		}
		marker, _, err := store.Innermost(e.Deps.Store).Query(ctx, store.Query{PK: outbox.Partition})
		if err != nil || len(marker) != 1 {
			t.Fatalf("markers %v (error %v), want the late one kept for its stream record", marker, err)
		}
	}, api.Webhooks)
}

// The change-feed function sweeps at most once a SweepEvery per instance,
// not with every batch: a busy stream does not pay a Query each time.
func TestStreamHandlerSweepsOncePerInterval(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Webhooks)
	clk := e.FixClock(time.Now())
	ctx := context.Background()
	rc := newReceiver(t)
	subscribe(t, e, apitest.DemoToken, "orders/create", rc.URL, nil)
	handle := delivery.StreamHandler(e.Deps)
	forget := func(n int) { // a notification whose stream record was lost
		ops, err := outbox.Notify(ctx, e.Deps.Store, e.Deps.IDs, e.Deps.Clock, "orders/create", "order", map[string]any{"id": n})
		if err != nil {
			t.Fatal(err)
		}
		old := ids.At(clk.Now().Add(-delivery.SweepAge - time.Minute))
		ops[0].Item.SK, ops[1].Item.SK = records.IDSK(old+int64(n)), records.IDSK(old+int64(n))
		if err := records.Transact(ctx, e.Deps.Store, ops...); err != nil {
			t.Fatal(err)
		}
	}
	queued := func() int {
		ms, err := e.Deps.Queue.Receive(ctx, 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			if err := e.Deps.Queue.Ack(ctx, m); err != nil {
				t.Fatal(err)
			}
		}
		return len(ms)
	}
	forget(1)
	if _, err := handle(ctx, lambdaevents.DynamoDBEvent{}); err != nil || queued() != 1 {
		t.Fatal("the first batch did not sweep")
	}
	forget(2)
	if _, err := handle(ctx, lambdaevents.DynamoDBEvent{}); err != nil || queued() != 0 {
		t.Fatal("a batch within SweepEvery of the last sweep swept again")
	}
	clk.Advance(delivery.SweepEvery)
	if _, err := handle(ctx, lambdaevents.DynamoDBEvent{}); err != nil || queued() != 1 {
		t.Fatal("a batch SweepEvery after the last sweep did not sweep")
	}
}
