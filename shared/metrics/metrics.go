// Package metrics writes CloudWatch metrics as embedded metric format (EMF)
// lines in the JSON log: in Lambda, CloudWatch Logs turns each line into
// metric data points, so counting costs no API call, no SDK and no
// extension on the hot path (only a log line). The metric names below are
// the ones template.yaml's alarms and docs/operations.md use; keep them in
// step.
//
// A line is a slog JSON record whose "_aws" member says which of its
// top-level members are metrics (and their units) and which dimensions:
//
//	{"time":"…","level":"INFO","msg":"metrics","_aws":{"Timestamp":1764086400000,
//	 "CloudWatchMetrics":[{"Namespace":"StoreAdmin","Dimensions":[[]],
//	 "Metrics":[{"Name":"DeliveriesSent","Unit":"Count"}]}]},"DeliveriesSent":1}
//
// Lines go to stderr through a JSON handler of their own that LOG_LEVEL does
// not filter: the alarms depend on them.
package metrics

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync/atomic"
	"time"
)

// DefaultNamespace is the namespace when METRICS_NAMESPACE is unset.
const DefaultNamespace = "StoreAdmin"

// Metric names (and their dimensions).
const (
	// Webhook deliveries: one line per attempt, no dimension for the
	// counts; DeliveryLatency by Outcome (sent, failed).
	DeliveriesSent         = "DeliveriesSent"         // answered 2xx
	DeliveriesFailed       = "DeliveriesFailed"       // anything else: no answer in 5 s, refused, not 2xx
	DeliveriesRetried      = "DeliveriesRetried"      // failed, and queued again after its backoff
	DeliveriesDeadLettered = "DeliveriesDeadLettered" // failed for the 19th time: kept for redelivery
	DeliveryLatency        = "DeliveryLatency"        // milliseconds of the request, by Outcome

	// Fulfillment provider polls, by Job (fetch_stock,
	// fetch_tracking_numbers, fetch_stock_sku): one line per run.
	ProviderPolls    = "ProviderPolls"    // runs
	ProviderUpdates  = "ProviderUpdates"  // variants or fulfillments changed
	ProviderFailures = "ProviderFailures" // failed requests and writes

	// Theme zip imports: one line per finished job.
	ThemeImportsDone   = "ThemeImportsDone"   // the theme is ready
	ThemeImportsFailed = "ThemeImportsFailed" // refused (its reason on the theme) or failed 5 times

	// Call-limit 429s, by AppId.
	CallLimited = "CallLimited"

	// Changes the local change feed parked after their derivation kept
	// failing (store.Fed), by Partition: one line per change parked.
	ChangesParked = "ChangesParked"
)

// Dimension names.
const (
	Outcome = "Outcome"
	Job     = "Job"
	AppID   = "AppId"
	// Partition is the partition of a record whose change was parked.
	Partition = "Partition"
)

// Units (CloudWatch's names).
const (
	Count        = "Count"
	Milliseconds = "Milliseconds"
)

// A Metric is one value of a line.
type Metric struct {
	Name  string
	Unit  string
	Value float64
}

// A Dimension is one dimension's value.
type Dimension struct{ Name, Value string }

// A Set is one directive of a line: its metrics, published under its
// dimensions (none: the metrics have no dimension). The names of a line's
// metrics and dimensions must differ: they share the top level.
type Set struct {
	Dimensions []Dimension
	Metrics    []Metric
	// Total also records the metrics without the dimensions, for an alarm
	// on their sum over every dimension value.
	Total bool
}

// Recorder writes the lines. The composition root makes one per process
// (platform.Deps.Metrics) and hands it to what counts; a nil Recorder
// writes nothing.
type Recorder struct {
	namespace string
	logger    atomic.Pointer[slog.Logger]
}

// New returns a Recorder writing to w under namespace ("" is
// DefaultNamespace): api.Open gives METRICS_NAMESPACE's, which
// template.yaml makes the stack's own.
func New(w io.Writer, namespace string) *Recorder {
	if namespace == "" {
		namespace = DefaultNamespace
	}
	r := &Recorder{namespace: namespace}
	r.logger.Store(slog.New(slog.NewJSONHandler(w, nil)))
	return r
}

// SetOutput sends r's lines to w (tests read them) and returns a function
// that restores the previous output.
func (r *Recorder) SetOutput(w io.Writer) (restore func()) {
	prev := r.logger.Swap(slog.New(slog.NewJSONHandler(w, nil)))
	return func() { r.logger.Store(prev) }
}

// The "_aws" member, as EMF specifies it.
type metadata struct {
	Timestamp         int64       `json:"Timestamp"`
	CloudWatchMetrics []directive `json:"CloudWatchMetrics"`
}

type directive struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []definition `json:"Metrics"`
}

type definition struct {
	Name string `json:"Name"`
	Unit string `json:"Unit"`
}

// Emit writes one line with the sets' metrics.
func (r *Recorder) Emit(ctx context.Context, sets ...Set) {
	if r == nil {
		return
	}
	md := metadata{Timestamp: time.Now().UnixMilli(), CloudWatchMetrics: make([]directive, 0, len(sets))}
	attrs := make([]slog.Attr, 0, 4)
	attrs = append(attrs, slog.Any("_aws", &md))
	ns := r.namespace
	for _, s := range sets {
		d := directive{Namespace: ns, Dimensions: [][]string{make([]string, 0, len(s.Dimensions))}}
		for _, dim := range s.Dimensions {
			d.Dimensions[0] = append(d.Dimensions[0], dim.Name)
			attrs = append(attrs, slog.String(dim.Name, dim.Value))
		}
		if s.Total {
			d.Dimensions = append(d.Dimensions, []string{})
		}
		for _, m := range s.Metrics {
			d.Metrics = append(d.Metrics, definition{m.Name, m.Unit})
			attrs = append(attrs, slog.Float64(m.Name, m.Value))
		}
		md.CloudWatchMetrics = append(md.CloudWatchMetrics, d)
	}
	r.logger.Load().LogAttrs(ctx, slog.LevelInfo, "metrics", attrs...)
}

// An Attempt is how one delivery attempt ended.
type Attempt int

const (
	Sent         Attempt = iota // the receiver answered 2xx
	Retried                     // it failed, and the message comes back
	DeadLettered                // it failed for the last time
	Removed                     // it failed, and the webhook was removed after 48 hours of failures
)

// Delivery records one delivery attempt and how long it took.
func (r *Recorder) Delivery(ctx context.Context, a Attempt, latency time.Duration) {
	outcome := "failed"
	if a == Sent {
		outcome = "sent"
	}
	r.Emit(ctx,
		Set{Metrics: []Metric{
			{DeliveriesSent, Count, one(a == Sent)},
			{DeliveriesFailed, Count, one(a != Sent)},
			{DeliveriesRetried, Count, one(a == Retried)},
			{DeliveriesDeadLettered, Count, one(a == DeadLettered)},
		}},
		Set{Dimensions: []Dimension{{Outcome, outcome}}, Metrics: []Metric{
			{DeliveryLatency, Milliseconds, float64(latency.Microseconds()) / 1000},
		}})
}

// ProviderPoll records one run of a provider job.
func (r *Recorder) ProviderPoll(ctx context.Context, job string, updated, failures int) {
	r.Emit(ctx, Set{Dimensions: []Dimension{{Job, job}}, Metrics: []Metric{
		{ProviderPolls, Count, 1},
		{ProviderUpdates, Count, float64(updated)},
		{ProviderFailures, Count, float64(failures)},
	}})
}

// ThemeImport records a finished theme import: done, or failed.
func (r *Recorder) ThemeImport(ctx context.Context, done bool) {
	r.Emit(ctx, Set{Metrics: []Metric{
		{ThemeImportsDone, Count, one(done)},
		{ThemeImportsFailed, Count, one(!done)},
	}})
}

// CallLimit records a call refused with 429 because the app's bucket was
// full.
func (r *Recorder) CallLimit(ctx context.Context, appID int64) {
	r.Emit(ctx, Set{Dimensions: []Dimension{{AppID, strconv.FormatInt(appID, 10)}}, Metrics: []Metric{
		{CallLimited, Count, 1},
	}})
}

// ChangeParked records a change of a record of partition that the change
// feed parked (locally the store's feed, in AWS the change-feed function),
// by partition and in total (the ChangesParkedAlarm's).
func (r *Recorder) ChangeParked(ctx context.Context, partition string) {
	r.Emit(ctx, Set{Dimensions: []Dimension{{Partition, partition}}, Total: true, Metrics: []Metric{
		{ChangesParked, Count, 1},
	}})
}

func one(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
