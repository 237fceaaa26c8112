package delivery_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/metrics/metricstest"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Each attempt writes a metric line: a 500 is a failure that is retried,
// the 200 after it a delivery sent, each with its latency by outcome.
func TestAttemptMetrics(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rec := metricstest.Capture(t, e.Deps.Metrics)
		rc := newReceiver(t)
		rc.fail = func(n int, _ *http.Request) int {
			if n == 1 {
				return 500
			}
			return 0
		}
		subscribe(t, e, apitest.DemoToken, "products/update", rc.URL, nil)
		startPipeline(t, e, 10*time.Millisecond)
		fire(t, e, "products/update", map[string]any{"id": 1})
		waitFor(t, 30*time.Second, "two metric lines", func() bool { return len(rec.With(t, metrics.DeliveriesSent)) == 2 })

		lines := rec.With(t, metrics.DeliveriesSent)
		for name, want := range map[string]float64{metrics.DeliveriesSent: 1, metrics.DeliveriesFailed: 1,
			metrics.DeliveriesRetried: 1, metrics.DeliveriesDeadLettered: 0} {
			if got := metricstest.Sum(lines, name); got != want {
				t.Errorf("%s %v, want %v", name, got, want)
			}
		}
		if n := len(rec.With(t, metrics.DeliveryLatency, metrics.Outcome, "failed")); n != 1 {
			t.Errorf("%d latencies of failed attempts, want 1", n)
		}
		sent := rec.With(t, metrics.DeliveryLatency, metrics.Outcome, "sent")
		if len(sent) != 1 || sent[0][metrics.DeliveryLatency].(float64) <= 0 {
			t.Errorf("latency of the sent attempt: %v", sent)
		}
	}, api.Webhooks)
}

// The 19th failure is counted as dead-lettered, not retried. (The message
// is handed to the dispatcher as on its 19th receive: 18 real failures
// first would only test the queue.)
func TestDeadLetterMetric(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rec := metricstest.Capture(t, e.Deps.Metrics)
		rc := newReceiver(t)
		rc.fail = func(int, *http.Request) int { return 503 }
		subscribe(t, e, apitest.DemoToken, "products/delete", rc.URL, nil)
		fire(t, e, "products/delete", map[string]any{"id": 9})
		ctx := context.Background()
		markers, _, err := e.Deps.Store.Query(ctx, store.Query{PK: outbox.Partition})
		if err != nil || len(markers) != 1 {
			t.Fatalf("outbox: %d markers, %v", len(markers), err)
		}
		id, err := records.ParseIDSK(markers[0].SK)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := delivery.FanOutMany(ctx, e.Deps.Store, e.Deps.Queue, []int64{id}); err != nil {
			t.Fatal(err)
		}
		msgs, err := e.Deps.Queue.Receive(ctx, 1, 5*time.Second)
		if err != nil || len(msgs) != 1 {
			t.Fatalf("received %d messages, %v", len(msgs), err)
		}
		d := api.Dispatcher(e.Deps, config.Config{})
		for _, c := range []struct {
			attempt int
			retried bool
		}{{delivery.MaxAttempts - 1, true}, {delivery.MaxAttempts, false}} {
			attempt, retried := c.attempt, c.retried
			m := msgs[0]
			m.Attempt = attempt
			if got := delivery.Handle(ctx, e.Deps.Queue, d, m); got != retried {
				t.Fatalf("attempt %d: retry %v, want %v", attempt, got, retried)
			}
		}
		lines := rec.With(t, metrics.DeliveriesFailed)
		for name, want := range map[string]float64{metrics.DeliveriesSent: 0, metrics.DeliveriesFailed: 2,
			metrics.DeliveriesRetried: 1, metrics.DeliveriesDeadLettered: 1} {
			if got := metricstest.Sum(lines, name); got != want {
				t.Errorf("%s %v, want %v", name, got, want)
			}
		}
	}, api.Webhooks)
}
