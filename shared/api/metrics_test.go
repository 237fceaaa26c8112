package api_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/metrics/metricstest"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store"
)

// A call refused with 429 writes a CallLimited line for its app; calls
// that pass write none.
func TestCallLimitMetric(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			st := s.Open(t)
			e := apitest.New(t, st, api.Redirects)
			rec := metricstest.Capture(t, e.Deps.Metrics)
			clock := &frozenClock{}
			clock.advance(time.Duration(time.Now().UnixNano()))
			h := limitedHandlersOf(e, st, true, 1, clock)[0]
			for range 40 {
				if w := call(h, apitest.DemoToken); w.Code != 200 {
					t.Fatalf("call within the bucket: %d", w.Code)
				}
			}
			if n := len(rec.With(t, metrics.CallLimited)); n != 0 {
				t.Fatalf("%d CallLimited lines before any 429", n)
			}
			for range 2 {
				if w := call(h, apitest.DemoToken); w.Code != 429 {
					t.Fatalf("call past the bucket: %d", w.Code)
				}
			}
			if got := metricstest.Sum(rec.With(t, metrics.CallLimited, metrics.AppID, "1001"), metrics.CallLimited); got != 2 {
				t.Errorf("CallLimited for app 1001: %v, want 2", got)
			}
		})
	}
}

// A page change whose derivation always fails is parked after
// store.MaxDeriveTries drains with a ChangesParked line for its partition;
// meanwhile other pages' changes are derived at once, and once it is
// parked the page's later changes go on.
func TestParkedChangeMetric(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rec := metricstest.Capture(t, e.Deps.Metrics)
		derive := e.Deps.Derivers[pages.Partition]
		e.Change(func(d *platform.Deps) {
			d.Derivers = api.Derivers()
			d.Derivers[pages.Partition] = func(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
				if c.New != nil && strings.Contains(string(c.New.Data), "poisoned body") {
					return nil, errors.New("this change cannot be derived")
				}
				return derive(ctx, st, c)
			}
			api.UseStore(d, store.Innermost(d.Store), true)
		})
		poison := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "poison", "body_html": "poisoned body"}}).Expect(t, 201).Object(t, "page")
		e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "fine"}}).Expect(t, 201)
		if got := e.Do("GET", "/web/pages/count.json?title=fine", nil).Expect(t, 200).JSON(t)["count"]; got != 1.0 {
			t.Fatalf("another page's count behind a failing change: %v", got)
		}
		for range store.MaxDeriveTries {
			e.Deps.Feed.Drain(t.Context())
		}
		if got := metricstest.Sum(rec.With(t, metrics.ChangesParked, metrics.Partition, pages.Partition), metrics.ChangesParked); got != 1 {
			t.Fatalf("ChangesParked for %s: %v, want 1", pages.Partition, got)
		}
		e.Do("PUT", fmt.Sprintf("/web/pages/%d.json", int64(poison["id"].(float64))), map[string]any{"page": map[string]any{"title": "cured", "body_html": "cured"}}).Expect(t, 200)
		if got := e.Do("GET", "/web/pages/count.json?title=cured", nil).Expect(t, 200).JSON(t)["count"]; got != 1.0 {
			t.Errorf("the parked page's later change: count by its title %v, want 1", got)
		}
	}, api.Pages)
}
