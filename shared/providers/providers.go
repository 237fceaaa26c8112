// Package providers calls the fulfillment services' callback endpoints
// (docs/openapi.yaml: the Fulfillment services operations): the hourly
// fetch_stock of every SKU a service manages (FetchStock), the single-SKU
// fetch_stock when a managed variant is created or changed in the admin (RunJobs,
// FetchStockOne) and the hourly fetch_tracking_numbers of the completed
// fulfillments still without a tracking number (FetchTrackingNumbers).
//
// Every call goes through the shared outbound client (10 s in total, a
// size cap, private destinations refused unless allowed). Providers are
// asked concurrently, at most Concurrency at a time, so a slow one never
// holds up the others, and after a failed request a provider is not asked
// again in the same run. An answer is applied entry by entry: an entry
// that is not a valid stock level or tracking number, or names a SKU or
// order the service was not asked about, is skipped; a request that fails
// or an answer that cannot be read at all changes nothing. Both are logged
// and counted in the run's Summary.
//
// What is read: the services (fulfillmentservices.All, one Query), a
// service's managed variants (GSI2 catalog.ManagedIndex(handle)), its
// untracked fulfillments (GSI1 parents.UntrackedPartition(handle)) and the
// stock job markers (partition variants.StockJobPartition).
package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/platform"
)

// Limits of a run.
const (
	// Concurrency bounds the providers asked at once.
	Concurrency = 8
	// MaxAnswer caps the size of a provider's answer.
	MaxAnswer = 5 << 20
	// BatchSize is the most order names asked in one fetch_tracking_numbers.
	BatchSize = 50
	// maxErrors bounds Summary.Errors.
	maxErrors = 50
	// maxExamples bounds the SKUs or names quoted in one error line.
	maxExamples = 5
)

// Summary is what one run did. It is the JSON answer of the local runner's
// /_local/jobs endpoints and the result of the scheduled functions.
type Summary struct {
	// Providers is the number of services asked (requests made, for jobs).
	Providers int `json:"providers"`
	// Updated counts the variants or fulfillments changed.
	Updated int `json:"updated"`
	// Skipped counts answer entries not applied: unknown SKUs or order
	// names, and values that are not a valid stock level or tracking number.
	Skipped int `json:"skipped"`
	// Failures counts failed requests (no answer in time, refused, not 2xx,
	// unreadable answer) and writes that failed.
	Failures int `json:"failures"`
	// Errors says what failed or was skipped, at most 50 lines.
	Errors []string `json:"errors"`
}

// tally is a run's Summary as its goroutines fill it in.
type tally struct {
	mu      sync.Mutex
	s       Summary
	metrics *metrics.Recorder
}

// result is the finished Summary (Errors an array, never null).
func (t *tally) result() Summary {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := t.s
	if out.Errors == nil {
		out.Errors = []string{}
	}
	return out
}

// done is the finished Summary of a run of job, recorded as a metric.
func (t *tally) done(ctx context.Context, job string) Summary {
	s := t.result()
	t.metrics.ProviderPoll(ctx, job, s.Updated, s.Failures)
	return s
}

func (t *tally) add(f func(s *Summary)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f(&t.s)
}

// note records an error line (beyond maxErrors only the counts grow).
func (t *tally) note(format string, args ...any) {
	line := fmt.Sprintf(format, args...)
	t.add(func(s *Summary) {
		switch {
		case len(s.Errors) < maxErrors:
			s.Errors = append(s.Errors, line)
		case len(s.Errors) == maxErrors:
			s.Errors = append(s.Errors, "(more errors not listed)")
		}
	})
}

// fail records a failure of service handle.
func (t *tally) fail(ctx context.Context, job, handle string, err error) {
	slog.WarnContext(ctx, "providers: "+job+" failed", "service", handle, "error", err.Error())
	t.add(func(s *Summary) { s.Failures++ })
	t.note("%s: %s", handle, err.Error())
}

// skip records skipped entries of one kind, quoting a few of them.
func (t *tally) skip(ctx context.Context, job, handle, what string, keys []string) {
	if len(keys) == 0 {
		return
	}
	slog.WarnContext(ctx, "providers: "+job+": entries skipped", "service", handle, "reason", what, "count", len(keys), "examples", examples(keys))
	t.add(func(s *Summary) { s.Skipped += len(keys) })
	t.note("%s: %d %s (%s)", handle, len(keys), what, examples(keys))
}

func examples(keys []string) string {
	quoted := make([]string, 0, maxExamples)
	for _, k := range keys[:min(len(keys), maxExamples)] {
		quoted = append(quoted, fmt.Sprintf("%q", k))
	}
	if len(keys) > maxExamples {
		quoted = append(quoted, "…")
	}
	return strings.Join(quoted, ", ")
}

// loadShop reads the shop record (its domain is the shop parameter).
func loadShop(ctx context.Context, d *platform.Deps) (*admin.Shop, error) {
	shop, err := auth.ReadShop(ctx, d.Store)
	if err != nil {
		return nil, fmt.Errorf("providers: reading the shop: %w", err)
	}
	return shop, nil
}

// errProvider marks a request that failed or an answer that could not be
// read: the provider's fault, not the store's.
var errProvider = errors.New("provider failed")

// ProviderError reports whether err is a provider's failure (as opposed to
// a failed store read or write).
func ProviderError(err error) bool { return errors.Is(err, errProvider) }

type providerErr struct{ msg string }

func (e *providerErr) Error() string        { return e.msg }
func (e *providerErr) Is(target error) bool { return target == errProvider }

func providerError(format string, args ...any) error {
	return &providerErr{msg: fmt.Sprintf(format, args...)}
}

// call makes one GET <callback_url>/<action>.<format>?<query> and returns
// the answer's body: 2xx within outbound's limits and MaxAnswer bytes.
func call(ctx context.Context, d *platform.Deps, svc *fulfillmentservices.FulfillmentService, action string, query url.Values) ([]byte, error) {
	if svc.CallbackURL == nil {
		return nil, providerError("no callback_url")
	}
	format := svc.Format
	if format != "xml" {
		format = "json"
	}
	u := strings.TrimRight(*svc.CallbackURL, "/") + "/" + action + "." + format + "?" + query.Encode()
	ctx, cancel := context.WithTimeout(ctx, outbound.TotalTimeout)
	defer cancel()
	status, body, err := d.Outbound.Send(ctx, outbound.Request{Method: "GET", URL: u, Header: [][2]string{{"Accept", "application/" + format}}}, MaxAnswer)
	if errors.Is(err, outbound.ErrInvalidRequest) {
		return nil, providerError("invalid callback_url: %v", err)
	}
	if err != nil {
		return nil, providerError("%s.%s: %s", action, format, describe(err))
	}
	if status < 200 || status > 299 {
		return nil, providerError("%s.%s: the provider answered %d", action, format, status)
	}
	return body, nil
}

// describe says briefly why a request failed.
func describe(err error) string {
	var ue *url.Error
	switch {
	case errors.Is(err, outbound.ErrRefused):
		return "destination refused"
	case errors.Is(err, outbound.ErrTooLarge):
		return fmt.Sprintf("answer larger than %d bytes", MaxAnswer)
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ue) && ue.Timeout():
		return fmt.Sprintf("no answer within %s", outbound.TotalTimeout)
	case errors.Is(err, context.Canceled):
		return "run cancelled"
	case ue != nil:
		return "connection failed: " + ue.Err.Error()
	}
	return err.Error()
}

// each runs fn for every service, at most Concurrency at a time, and waits.
func each(svcs []fulfillmentservices.FulfillmentService, fn func(svc *fulfillmentservices.FulfillmentService)) {
	sem := make(chan struct{}, Concurrency)
	var wg sync.WaitGroup
	for i := range svcs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			fn(&svcs[i])
		}()
	}
	wg.Wait()
}
