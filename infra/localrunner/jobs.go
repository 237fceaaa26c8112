package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/providers"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/variants"
)

// A commit of a job marker (a single-SKU stock job, a smart collection
// membership left undone) runs its jobs jobSettle later, so that a burst of
// commits is one run and a request's own membership step, which clears its
// marker, usually finishes first. The jobs also run at start (what a killed
// runner left) and every idleLook besides (what failed, and what another
// process committed); nothing polls the store more often while idle.
const (
	jobSettle = time.Second
	idleLook  = 5 * time.Second
)

// pollJob is one of the hourly fulfillment provider polls. Its mutex keeps
// a scheduled run and one asked for over HTTP from overlapping.
type pollJob struct {
	name string
	run  func(context.Context, *platform.Deps) providers.Summary
	mu   sync.Mutex
}

func (j *pollJob) runOnce(ctx context.Context, d *platform.Deps) providers.Summary {
	j.mu.Lock()
	defer j.mu.Unlock()
	start := time.Now()
	s := j.run(ctx, d)
	slog.Info("job run", "job", j.name, "providers", s.Providers, "updated", s.Updated,
		"skipped", s.Skipped, "failures", s.Failures, "duration", time.Since(start).String())
	return s
}

// pollJobs are the runner's stand-ins for the fetch-stock and
// fetch-tracking-numbers functions' schedules.
func pollJobs() []*pollJob {
	return []*pollJob{
		{name: "fetch_stock", run: providers.FetchStock},
		{name: "fetch_tracking_numbers", run: providers.FetchTrackingNumbers},
	}
}

// runJobs runs each poll every interval (the first after one interval: a
// restart does not ask every provider again) and drains the stock and
// membership jobs as their markers are committed, until ctx ends.
func runJobs(ctx context.Context, d *platform.Deps, w *store.Watched, jobs []*pollJob, interval time.Duration) {
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			every(ctx, interval, func() { j.runOnce(ctx, d) })
		}()
	}
	wg.Add(3)
	go func() {
		defer wg.Done()
		// Each commit derives its own work at once (store.Fed); what a
		// failure or a kill left pending is derived here, at start and
		// every idleLook.
		drain(ctx, nil, func() {
			if d.Feed == nil {
				return
			}
			if err := d.Feed.Drain(ctx); err != nil {
				slog.Warn("change feed drain failed", "error", err.Error())
			}
		})
	}()
	go func() {
		defer wg.Done()
		drain(ctx, w.Woken(variants.StockJobPartition), func() {
			if s := providers.RunJobs(ctx, d); s.Providers > 0 || s.Failures > 0 {
				slog.Info("stock jobs run", "asked", s.Providers, "updated", s.Updated, "failures", s.Failures)
			}
		})
	}()
	go func() {
		defer wg.Done()
		membership := smartcollections.NewService(d)
		drain(ctx, w.Woken(catalog.MembershipJobPartition), func() {
			// What a request's smart collection membership step left undone.
			if n, err := membership.RunMembershipJobs(ctx); n > 0 || err != nil {
				slog.Info("membership jobs run", "reevaluated", n, "error", fmt.Sprint(err))
			}
		})
	}()
	wg.Wait()
}

// drain runs fn at once, then jobSettle after a wake-up (later wake-ups
// before that run join it, so a steady stream of commits cannot postpone
// it) and idleLook after each run, until ctx ends.
func drain(ctx context.Context, wake <-chan struct{}, fn func()) {
	t := time.NewTimer(0)
	defer t.Stop()
	due := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-wake:
			if soon := time.Now().Add(jobSettle); soon.Before(due) {
				due = soon
				t.Reset(jobSettle)
			}
			continue
		case <-t.C:
		}
		fn()
		due = time.Now().Add(idleLook)
		t.Reset(idleLook)
	}
}

// every calls fn each interval until ctx ends; a run that takes longer
// than the interval delays the next.
func every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// jobHandler serves POST /_local/jobs/<name>: it runs the poll at once
// and answers 200 with its summary when the run is over. Like every /_local
// route it takes no token and sits behind control (control.go).
func jobHandler(d *platform.Deps, j *pollJob) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s := j.runOnce(r.Context(), d)
		httpapi.WriteJSON(w, http.StatusOK, &s)
	}
}
