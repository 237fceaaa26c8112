package providers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/variants"
)

// jobPage is how many stock job markers one read takes; jobPages bounds
// the reads of one RunJobs, so changes made while it runs cannot keep it
// going forever.
const (
	jobPage  = 100
	jobPages = 10
)

// RunJobs drains the stock job markers variants writes when a managed
// variant is created or changed in the admin (variants.StockJobPartition):
// for each, the single-SKU fetch_stock (FetchStockOne), Concurrency at a
// time, then the marker is deleted unless it was written again meanwhile
// (its Version is checked), in which case the next run asks again. A job
// is tried once: a failed request is logged and counted, and the hourly
// FetchStock catches up. The local runner calls it a second after a job
// is committed (and every few seconds); in AWS StreamHandler does when the
// table's stream shows a new marker.
func RunJobs(ctx context.Context, d *platform.Deps) Summary {
	const job = "fetch_stock (one SKU)"
	t := tally{metrics: d.Metrics}
	var (
		shop *admin.Shop
		svcs []fulfillmentservices.FulfillmentService
	)
	for page := 0; page < jobPages; page++ {
		items, _, err := d.Store.Query(ctx, store.Query{PK: variants.StockJobPartition, Limit: jobPage})
		if err != nil {
			t.fail(ctx, job, "(jobs)", fmt.Errorf("reading the stock jobs: %w", err))
			break
		}
		if len(items) == 0 {
			break
		}
		if shop == nil {
			if shop, svcs, err = setup(ctx, d, func(s *fulfillmentservices.FulfillmentService) bool { return s.InventoryManagement }); err != nil {
				t.fail(ctx, job, "(all services)", err)
				break
			}
			ctx = admin.WithShop(ctx, shop)
		}
		sem := make(chan struct{}, Concurrency)
		var wg sync.WaitGroup
		for i := range items {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer func() { <-sem; wg.Done() }()
				runJob(ctx, d, shop, svcs, &items[i], &t)
			}()
		}
		wg.Wait()
		if len(items) < jobPage {
			break
		}
	}
	if s := t.result(); s.Providers == 0 && s.Failures == 0 {
		return s // nothing to do: no metric (the local runner looks often)
	}
	return t.done(ctx, "fetch_stock_sku")
}

// runJob runs one marker's job and deletes the marker as read.
func runJob(ctx context.Context, d *platform.Deps, shop *admin.Shop, svcs []fulfillmentservices.FulfillmentService, it *store.Item, t *tally) {
	const job = "fetch_stock (one SKU)"
	id, err := records.ParseIDSK(it.SK)
	if err == nil {
		var asked, changed bool
		asked, changed, err = stockOne(ctx, d, shop, svcs, id)
		t.add(func(s *Summary) {
			if asked {
				s.Providers++
			}
			if changed {
				s.Updated++
			}
		})
	}
	if err != nil {
		t.fail(ctx, job, fmt.Sprintf("variant %d", id), err)
	}
	err = d.Store.Transact(ctx, store.Delete(it.Key(), store.IfVersion, it.Version))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		slog.WarnContext(ctx, "providers: deleting a stock job failed", "job", it.SK, "error", err.Error())
	}
}

// StreamHandler is the AWS path of the jobs a committed change leaves
// markers for: a function on the table's stream whose event filter passes
// INSERT and MODIFY records of variants.StockJobPartition and
// catalog.MembershipJobPartition keys.
//   - A stock marker runs RunJobs, which drains every stock marker (this
//     batch's and any left behind), so none is reported as failed: a job
//     that fails is logged, and the hourly FetchStock catches up.
//   - A membership marker runs smartcollections.Service.RunMembershipJobs, which
//     drains every membership marker; when it fails, the batch's membership
//     records are reported as failed, so the stream retries them (and after
//     its retries they go to the dead-letter queue), and a marker stays
//     until its product is up to date.
func StreamHandler(d *platform.Deps) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var stock bool
		var membership []events.DynamoDBBatchItemFailure
		for _, r := range ev.Records {
			if r.EventName != string(events.DynamoDBOperationTypeInsert) && r.EventName != string(events.DynamoDBOperationTypeModify) {
				continue
			}
			switch r.Change.Keys["PK"].String() {
			case variants.StockJobPartition:
				stock = true
			case catalog.MembershipJobPartition:
				membership = append(membership, events.DynamoDBBatchItemFailure{ItemIdentifier: r.Change.SequenceNumber})
			}
		}
		if stock {
			s := RunJobs(ctx, d)
			slog.InfoContext(ctx, "providers: stock jobs run", "asked", s.Providers, "updated", s.Updated, "failures", s.Failures)
		}
		if len(membership) > 0 {
			n, err := smartcollections.NewService(d).RunMembershipJobs(ctx)
			if err != nil {
				slog.WarnContext(ctx, "smart collection membership jobs failed; the stream retries them", "reevaluated", n, "error", err.Error())
				return events.DynamoDBEventResponse{BatchItemFailures: membership}, nil
			}
		}
		return events.DynamoDBEventResponse{}, nil
	}
}

// ScheduleHandler is the handler of a scheduled function (an EventBridge
// schedule, rate(1 hour)) running poll: FetchStock or FetchTrackingNumbers.
// It returns the run's Summary; it fails (so the invocation is retried)
// only when the run could not start at all: nothing was asked and
// something failed, e.g. the services could not be read.
func ScheduleHandler(d *platform.Deps, poll func(context.Context, *platform.Deps) Summary) func(context.Context, events.EventBridgeEvent) (Summary, error) {
	return func(ctx context.Context, ev events.EventBridgeEvent) (Summary, error) {
		s := poll(ctx, d)
		slog.InfoContext(ctx, "providers: scheduled run", "event", ev.ID, "providers", s.Providers,
			"updated", s.Updated, "skipped", s.Skipped, "failures", s.Failures)
		if s.Providers == 0 && s.Failures > 0 {
			return s, fmt.Errorf("providers: the run failed: %s", strings.Join(s.Errors, "; "))
		}
		return s, nil
	}
}
