package delivery_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// benchPipeline is the local runner's pipeline on the embedded store, as
// infra/localrunner wires it (outbox pump woken on commit, looking every
// 5 s besides; 64 deliveries in hand), with loopback receivers that
// note when each change arrived.
type benchPipeline struct {
	e    *apitest.Env
	ctx  context.Context
	sent sync.Map // change id → time.Time, just before its commit

	mu        sync.Mutex
	latencies []time.Duration
	arrived   chan struct{}
}

func newBenchPipeline(b *testing.B) *benchPipeline {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.Webhooks)
	watched := store.Watch(e.Deps.Store, outbox.Partition)
	e.Change(func(d *platform.Deps) { d.Store = watched })
	p := &benchPipeline{e: e, arrived: make(chan struct{}, 1<<20)}
	ctx, cancel := context.WithCancel(context.Background())
	p.ctx = ctx
	var running sync.WaitGroup
	b.Cleanup(func() { cancel(); running.Wait() }) // before the store closes
	d := api.Dispatcher(e.Deps, config.Config{})
	running.Add(2)
	go func() {
		defer running.Done()
		delivery.Pump(ctx, e.Deps.Store, e.Deps.Queue, watched.Woken(outbox.Partition), 5*time.Second)
	}()
	go func() { defer running.Done(); delivery.Consume(ctx, e.Deps.Queue, d, 64) }()
	return p
}

// receiver subscribes a loopback receiver to orders/create; delay, when
// set, holds each request (a slow receiver) and its arrivals are not
// counted.
func (p *benchPipeline) receiver(b *testing.B, delay time.Duration) {
	release := make(chan struct{})
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-release:
			}
			return
		}
		var body struct{ ID int }
		if err := json.NewDecoder(r.Body).Decode(&body); err == nil {
			if t, ok := p.sent.Load(body.ID); ok {
				p.mu.Lock()
				p.latencies = append(p.latencies, time.Since(t.(time.Time)))
				p.mu.Unlock()
			}
		}
		p.arrived <- struct{}{}
	}))
	b.Cleanup(rc.Close)
	b.Cleanup(func() { close(release) }) // first: lets held requests end
	p.e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{"topic": "orders/create", "address": rc.URL + "/" + fmt.Sprint(time.Now().UnixNano())}}).Expect(b, 201)
}

// change commits one orders/create notification, as a resource's write does.
func (p *benchPipeline) change(b *testing.B, id int) {
	p.sent.Store(id, time.Now())
	ops, err := outbox.Notify(p.ctx, p.e.Deps.Store, p.e.Deps.IDs, p.e.Deps.Clock, "orders/create", "order", map[string]any{"id": id})
	if err == nil {
		err = records.Transact(p.ctx, p.e.Deps.Store, ops...)
	}
	if err != nil {
		b.Error(err)
	}
}

// await waits for n arrivals; a pipeline that stops delivering fails.
func (p *benchPipeline) await(b *testing.B, n int) {
	for range n {
		select {
		case <-p.arrived:
		case <-time.After(30 * time.Second):
			b.Fatal("deliveries stopped arriving")
		}
	}
}

// report adds deliveries/s (n in elapsed) and the change-to-delivery p50
// and p99.
func (p *benchPipeline) report(b *testing.B, n int, elapsed time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	slices.Sort(p.latencies)
	b.ReportMetric(float64(n)/elapsed.Seconds(), "deliveries/s")
	if len(p.latencies) > 0 {
		b.ReportMetric(float64(p.latencies[len(p.latencies)/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(p.latencies[len(p.latencies)*99/100].Microseconds())/1000, "p99-ms")
	}
}

// burstWriters commit a burst's changes, as that many API requests at once.
const burstWriters = 8

// BenchmarkLocalPipeline measures the local runner's pipeline on the
// embedded store: b.N changes committed at once by burstWriters writers,
// each delivered to one loopback receiver, drained as fast as it goes.
// deliveries/s counts from the first commit to the last arrival; p50-ms and
// p99-ms are the change-to-delivery times within the burst (so mostly the
// wait behind the changes before it).
func BenchmarkLocalPipeline(b *testing.B) {
	p := newBenchPipeline(b)
	p.receiver(b, 0)
	b.ResetTimer()
	start := time.Now()
	var next atomic.Int64
	var writers sync.WaitGroup
	for range burstWriters {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
				p.change(b, i)
			}
		}()
	}
	writers.Wait()
	p.await(b, b.N)
	elapsed := time.Since(start)
	b.StopTimer()
	p.report(b, b.N, elapsed)
}

// Steady offer of BenchmarkLocalPipelineSteady.
const (
	steadyRate     = 500 // changes per second
	steadySeconds  = 3
	steadyPerRound = steadyRate * steadySeconds
)

// BenchmarkLocalPipelineSteady offers changes at a steady 500 a second for
// 3 seconds (each started on schedule, whether or not the ones before have
// committed) and reports the change-to-delivery p50-ms and p99-ms. One
// op is one such run.
func BenchmarkLocalPipelineSteady(b *testing.B) {
	p := newBenchPipeline(b)
	p.receiver(b, 0)
	b.ResetTimer()
	start := time.Now()
	n := steadyPerRound * b.N
	offer(b, p, 0, n, steadyRate)
	p.await(b, n)
	elapsed := time.Since(start)
	b.StopTimer()
	p.report(b, n, elapsed)
}

// offer commits changes from, from+1, ... (n of them) at rate a second,
// each in its own goroutine at its time, and returns once all committed.
func offer(b *testing.B, p *benchPipeline, from, n, rate int) {
	var commits sync.WaitGroup
	t := time.NewTicker(time.Second / time.Duration(rate))
	defer t.Stop()
	for i := range n {
		if i > 0 {
			<-t.C
		}
		commits.Add(1)
		go func() { defer commits.Done(); p.change(b, from+i) }()
	}
	commits.Wait()
}

// BenchmarkLocalPipelineSlowReceiver runs the steady offer with ten
// receivers subscribed, one of which holds every request for 5 s (it
// times out: every attempt at it fails and is retried later). It reports
// the deliveries to the nine others: deliveries/s and the change-to-
// delivery p50-ms and p99-ms, to compare with BenchmarkLocalPipelineSteady.
func BenchmarkLocalPipelineSlowReceiver(b *testing.B) {
	p := newBenchPipeline(b)
	p.receiver(b, delivery.DeliveryTimeout)
	for range 9 {
		p.receiver(b, 0)
	}
	const rate = 100 // changes a second: 1,000 deliveries a second, 900 of them to fast receivers
	b.ResetTimer()
	start := time.Now()
	n := rate * steadySeconds * b.N
	offer(b, p, 0, n, rate)
	p.await(b, 9*n)
	elapsed := time.Since(start)
	b.StopTimer()
	p.report(b, 9*n, elapsed)
}
