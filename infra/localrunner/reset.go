package main

import (
	"net/http"

	"github.com/storeadmin/adminapi/shared/faults"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/ratelimit"
	"github.com/storeadmin/adminapi/shared/store"
)

// resetHandler serves POST /_local/reset: the shop back to exactly what
// the seed made, so that each of an app developer's tests starts from a
// known shop. Every item goes (records made since, queued deliveries and
// jobs, logs, the clock's offset, call-limit buckets kept in the store),
// the seed is loaded again (deleted seeded records and uninstalled apps'
// tokens come back), the clock is the machine's again and the in-process
// call-limit buckets are emptied; ids follow the clock again. API requests
// wait while it runs (gate), so none sees the shop half reset. Work in flight when it runs (a delivery
// being sent) may leave a trace: reset between tests, not during one.
//
// Injected faults (FAULT_RATE) pause while it runs: like start-up, the
// seed loads clean.
func resetHandler(cfg config.Config, deps *api.Deps, local store.Local, off *clock.Offset, injector *faults.Injector) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if local == nil {
			localError(w, http.StatusNotImplemented, `"this store cannot be reset"`)
			return
		}
		ctx := r.Context()
		injector.Stop()
		defer injector.Start()
		if err := local.Wipe(ctx); err != nil {
			localError(w, http.StatusInternalServerError, `"the store could not be emptied"`)
			return
		}
		off.Reset()
		deps.IDs.Reset()
		if m, ok := deps.Limiter.(*ratelimit.Memory); ok {
			m.Reset()
		}
		if err := loadSeed(ctx, cfg, deps.Store, deps.Clock); err != nil {
			localError(w, http.StatusInternalServerError, `"the seed could not be loaded"`)
			return
		}
		if _, err := api.Reindex(ctx, deps.Store); err != nil {
			localError(w, http.StatusInternalServerError, `"the indexes could not be rebuilt"`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte("{}\n"))
	}
}
