// Command localrunner serves every resource group on one loopback port over
// the embedded store (or DynamoDB with STORE=dynamodb): `make run`.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"gopkg.in/yaml.v3"

	adminapi "github.com/storeadmin/adminapi"
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/faults"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/variants"
)

// deliveryWorkers is how many deliveries the runner has in hand at once
// (at most delivery.PerReceiver of them to one receiver).
const deliveryWorkers = 64

func main() {
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

func run() error {
	cfg, err := config.FromEnv()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// The service's time: the machine's, moved forward by POST
	// /_local/clock; its offset is restored from the store below.
	runnerClock := &clock.Offset{}
	cfg.Clock = runnerClock
	api.SetupLogging(cfg)
	deps, err := api.OpenWith(ctx, cfg, sqsqueue.Open)
	if err != nil {
		return err
	}
	defer deps.Store.Close()
	controlStore := deps.Store // the clock's own reads and writes, never faulted
	if err := restoreClock(ctx, controlStore, runnerClock); err != nil {
		return err
	}
	resettable, _ := store.Innermost(deps.Store).(store.Local) // both stores are; the reset needs it
	// FAULT_RATE: that fraction of store and queue calls fail as DynamoDB
	// and SQS do on a bad minute, once the seed is in (faults.Start below).
	var injector *faults.Injector
	if cfg.FaultRate > 0 {
		injector = faults.New(cfg.FaultRate)
		api.InjectFaults(deps.Deps, injector)
	}
	watched := watchCommits(deps.Deps, injector)
	if err := loadSeed(ctx, cfg, deps.Store, deps.Clock); err != nil {
		return err
	}
	// A store an earlier version wrote gets this version's index keys and
	// entries before anything is served (once per IndexVersion).
	if rebuilt, err := api.Reindex(ctx, deps.Store); err != nil {
		return err
	} else if rebuilt {
		slog.Info("index rebuilt", "version", api.IndexVersion)
	}

	injector.Start()
	if injector != nil {
		slog.Warn("faults injected", "fault_rate", cfg.FaultRate)
	}

	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", cfg.Port))
	if err != nil {
		return err
	}
	// Absolute URLs in answers are on the configured base, else on the
	// address listened on (with PORT=0, the port picked), never on a
	// request's Host.
	if deps.BaseURL == "" {
		deps.BaseURL = "http://" + ln.Addr().String()
	}

	openapi, err := openAPIJSON()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /openapi.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(openapi)
	})
	var resets gate
	mux.Handle("/", resets.shared(api.Handler(deps, api.Groups...)))
	// The test controls, behind one guard (control.go) for every /_local path.
	local := http.NewServeMux()
	local.Handle("GET /_local/clock", clockHandler(controlStore, runnerClock))
	local.Handle("POST /_local/clock", clockHandler(controlStore, runnerClock))
	local.Handle("POST /_local/reset", resets.exclusive(resetHandler(cfg, deps, resettable, runnerClock, injector)))
	local.Handle("POST /_local/webhooks/trigger", resets.shared(triggerHandler(deps)))
	local.Handle("POST /_local/session_token", resets.shared(sessionTokenHandler(deps.Deps)))
	// The fulfillment provider polls: on POLL_INTERVAL, and at once on
	// POST /_local/jobs/<name> (local runner only).
	jobs := pollJobs()
	for _, j := range jobs {
		local.Handle("POST /_local/jobs/"+j.name, resets.shared(jobHandler(deps.Deps, j)))
	}
	local.HandleFunc("/_local/", func(w http.ResponseWriter, r *http.Request) { httpapi.Error(w, r, admin.NotFound) })
	mux.Handle("/_local/", control(listenerPort(ln), local))

	// The webhook pipeline, in process: the outbox pump fans notifications
	// out to the delivery queue, the consumer delivers them. Both keep their
	// state in the store, so a restart resumes them. Beside them run the
	// provider polls and the single-SKU stock jobs.
	pipeline, stopPipeline := context.WithCancel(context.Background())
	var pipelineDone sync.WaitGroup
	pipelineDone.Add(4)
	go func() {
		defer pipelineDone.Done()
		themes.NewService(deps.Deps).ConsumeImports(pipeline)
	}()
	go func() {
		defer pipelineDone.Done()
		delivery.Pump(pipeline, deps.Store, deps.Queue, watched.Woken(outbox.Partition), idleLook)
	}()
	go func() {
		defer pipelineDone.Done()
		delivery.Consume(pipeline, deps.Queue, api.Dispatcher(deps.Deps, cfg), deliveryWorkers)
	}()
	go func() {
		defer pipelineDone.Done()
		runJobs(pipeline, deps.Deps, watched, jobs, cfg.PollInterval)
	}()
	defer func() { stopPipeline(); pipelineDone.Wait() }()

	// ReadTimeout bounds a whole request, body included: a client that stalls
	// mid-body must not hold a connection for good. The runner listens on
	// loopback and bodies are at most a few MB, so 10 s is generous.
	srv := &http.Server{
		Handler:           httpapi.RejectUnclean(mux),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       10 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	slog.Info("listening", "addr", "http://"+ln.Addr().String(), "base_url", deps.BaseURL, "store", cfg.Store)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Stop accepting, let requests in flight finish, then close the store (deferred).
	slog.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// watchCommits makes every commit of d's store wake the in-process worker
// following its partition (store.Watch): a notification's outbox marker
// wakes the pump, a job marker its jobs, so an idle runner does not poll
// its store (the workers look every few seconds besides, for what another
// process committed). The watch sits beneath the request layers and the
// change feed, so the feed's derived notifications wake the pump too, and
// above the fault injector (in, when set), so a call that failed wakes no
// one.
func watchCommits(d *platform.Deps, in *faults.Injector) *store.Watched {
	base := store.Innermost(d.Store)
	if in != nil {
		base = in.Store(base)
	}
	w := store.Watch(base, outbox.Partition, catalog.MembershipJobPartition, variants.StockJobPartition)
	api.UseStore(d, w, d.Feed != nil)
	return w
}

// loadSeed loads SEED_FILE, or the demo shop into an empty store, dating
// what the file leaves undated by the runner's clock.
func loadSeed(ctx context.Context, cfg config.Config, st store.Store, clk clock.Clock) error {
	if cfg.SeedFile != "" {
		data, err := os.ReadFile(cfg.SeedFile)
		if err != nil {
			return err
		}
		_, sum, err := seed.Load(ctx, st, clk, data, api.SeedChecks...)
		if err != nil {
			return err
		}
		slog.Info("seed loaded", "file", cfg.SeedFile, "written", sum.Written, "already_present", sum.Skipped)
		return nil
	}
	if _, err := st.Get(ctx, auth.ShopKey); err == nil {
		return nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	f, _, err := seed.Load(ctx, st, clk, seed.Demo)
	if err != nil {
		return err
	}
	for _, a := range f.Apps {
		// The demo tokens are public (they are in the repository); real tokens are never printed.
		if a.AccessToken != "" {
			fmt.Fprintf(os.Stderr, "demo app %q: X-Service-Access-Token: %s\n", a.Name, a.AccessToken)
		} else {
			fmt.Fprintf(os.Stderr, "demo app %q: not installed; install it through OAuth with client_id %s (docs/oauth.md)\n", a.Name, a.APIKey)
		}
	}
	return nil
}

func openAPIJSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(adminapi.OpenAPI, &doc); err != nil {
		return nil, fmt.Errorf("docs/openapi.yaml: %w", err)
	}
	return json.Marshal(doc)
}
