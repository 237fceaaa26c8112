package api_test

import (
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/metrics/metricstest"
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
