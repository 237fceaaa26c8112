package providers_test

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/metrics/metricstest"
	"github.com/storeadmin/adminapi/shared/providers"
)

// Each poll writes one metric line by job: the run, what it changed, what
// failed.
func TestPollMetrics(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		rec := metricstest.Capture(t, e.Deps.Metrics)
		f := newFake(t)
		f.route("/ok/fetch_stock.json", 200, `{"SKU-OK": 5}`)
		f.route("/down/fetch_stock.json", 500, `{}`)
		ok := service(t, e, map[string]any{"name": "Up", "callback_url": f.srv.URL + "/ok", "inventory_management": true})
		down := service(t, e, map[string]any{"name": "Down", "callback_url": f.srv.URL + "/down", "inventory_management": true})
		variant(t, e, "OK", "SKU-OK", ok, 0)
		variant(t, e, "DOWN", "SKU-DOWN", down, 0)
		providers.RunJobs(t.Context(), e.Deps) // the creates' single-SKU jobs
		providers.FetchStock(t.Context(), e.Deps)
		providers.FetchTrackingNumbers(t.Context(), e.Deps) // no service with tracking: a run that asks nobody
		providers.RunJobs(t.Context(), e.Deps)              // no jobs left: no line

		for _, c := range []struct {
			job                      string
			polls, updates, failures float64
		}{
			{"fetch_stock_sku", 1, 1, 1},
			{"fetch_stock", 1, 0, 1}, // SKU-OK already at 5
			{"fetch_tracking_numbers", 1, 0, 0},
		} {
			lines := rec.With(t, metrics.ProviderPolls, metrics.Job, c.job)
			for name, want := range map[string]float64{metrics.ProviderPolls: c.polls, metrics.ProviderUpdates: c.updates, metrics.ProviderFailures: c.failures} {
				if got := metricstest.Sum(lines, name); got != want {
					t.Errorf("%s %s: %v, want %v", c.job, name, got, want)
				}
			}
		}
	})
}
