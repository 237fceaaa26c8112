package delivery_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/records"
)

// BenchmarkLocalPipeline measures the local runner's pipeline on the
// embedded store: deliveries per second to a loopback receiver, and the
// latency from the committed change to its arrival (p50, p99).
func BenchmarkLocalPipeline(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.Webhooks)
	var mu sync.Mutex
	var latencies []time.Duration
	arrived := make(chan struct{}, 1<<16)
	sent := map[int]time.Time{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ ID int }
		if err := json.NewDecoder(r.Body).Decode(&body); err == nil {
			mu.Lock()
			latencies = append(latencies, time.Since(sent[body.ID]))
			mu.Unlock()
		}
		arrived <- struct{}{}
	}))
	defer rc.Close()
	e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{"topic": "orders/create", "address": rc.URL}}).Expect(b, 201)

	ctx, cancel := context.WithCancel(context.Background())
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }() // before the store closes
	d := api.Dispatcher(e.Deps, config.Config{})
	running.Add(2)
	go func() { defer running.Done(); delivery.Pump(ctx, e.Deps.Store, e.Deps.Queue, 20*time.Millisecond) }()
	go func() { defer running.Done(); delivery.Consume(ctx, e.Deps.Queue, d, 16) }()

	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		mu.Lock()
		sent[i] = time.Now()
		mu.Unlock()
		ops, err := delivery.Notify(ctx, e.Deps.Store, e.Deps.IDs, "orders/create", "order", map[string]any{"id": i})
		if err != nil {
			b.Fatal(err)
		}
		if err := records.Transact(ctx, e.Deps.Store, ops...); err != nil {
			b.Fatal(err)
		}
	}
	for range b.N {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			b.Fatal("deliveries stopped arriving")
		}
	}
	elapsed := time.Since(start)
	b.StopTimer()
	mu.Lock()
	defer mu.Unlock()
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	if len(latencies) > 0 {
		b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(latencies[len(latencies)*99/100].Microseconds())/1000, "p99-ms")
	}
}
