package delivery

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqsevent"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
)

// SQSHandler is the webhook-dispatch function: it attempts each message of
// a batch and reports those to retry as batch item failures (their
// visibility already set to the backoff), so SQS deletes only the settled
// ones. Deliveries of one batch run concurrently and read each notification
// and app once (Batch).
func SQSHandler(q queue.Queue, d *Dispatcher) func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
	return func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		var resp events.SQSEventResponse
		retry := make([]bool, len(ev.Records))
		done := make(chan struct{}, len(ev.Records))
		batch := NewBatch() // one read of each notification and app
		for i := range ev.Records {
			go func() {
				defer func() { done <- struct{}{} }()
				out, err := d.Deliver(ctx, batch, sqsevent.FromLambda(ev.Records[i]))
				switch {
				case err != nil:
					slog.Error("delivery attempt failed", "message", ev.Records[i].MessageId, "error", err.Error())
					retry[i] = true
				case out.Retry:
					retry[i] = true
					if err := q.Retry(ctx, sqsevent.FromLambda(ev.Records[i]), out.After); err != nil {
						slog.Error("delivery retry failed", "message", ev.Records[i].MessageId, "error", err.Error())
					}
				}
			}()
		}
		for range ev.Records {
			<-done
		}
		for i, r := range ev.Records {
			if retry[i] {
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
			}
		}
		return resp, nil
	}
}

// StreamHandler is the change-feed function. For each record of the
// table's stream, in order: a change to a record of a deriving partition
// has its derived work applied once (store.Derivers.ApplyOnce: index
// entries, counts, events, notifications); an outbox marker's insert has
// its notification fanned out to the delivery queue. The first failed
// record is reported by sequence number, so the stream retries from it and
// nothing after it is skipped. clk tells which markers Sweep picks up and
// dates the derived work's markers.
func StreamHandler(d *platform.Deps) func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	st, q, clk, ds := d.Store, d.Queue, d.Clock, d.Derivers
	var lastSweep atomic.Int64 // this instance's last sweep, Unix nanoseconds
	return func(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		var resp events.DynamoDBEventResponse
		fail := func(seq string, err error) {
			slog.Error("change feed failed", "sequence", seq, "error", err.Error())
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: seq})
		}
		// The batch's notifications are fanned out together (one read of
		// each topic's subscribers, full SendMessageBatch calls), up to the
		// first record that failed.
		var ids []int64
		var seqs []string
		var bad error
		badSeq := ""
		for i := range ev.Records {
			r := &ev.Records[i]
			pk := r.Change.Keys["PK"].String()
			if ds.Derives(pk) {
				c, err := dynamostore.ChangeOf(r)
				if err == nil {
					// A change that keeps failing is parked with its images,
					// so the shard's other changes go on; only unavailability
					// is retried by the stream.
					err = ds.ApplyOrPark(ctx, st, c, clk.Now(), func(k store.Key, _ error) { d.Metrics.ChangeParked(ctx, k.PK) })
				}
				if err != nil {
					bad, badSeq = err, r.Change.SequenceNumber
					break
				}
				continue
			}
			if r.EventName != string(events.DynamoDBOperationTypeInsert) {
				continue
			}
			if pk == store.CleanUpPartition { // a removed owner's clean-up
				if err := d.CleanUps.Run(ctx, st, store.Key{PK: pk, SK: r.Change.Keys["SK"].String()}); err != nil {
					bad, badSeq = err, r.Change.SequenceNumber
					break
				}
				continue
			}
			if pk != outbox.Partition {
				continue
			}
			id, err := records.ParseIDSK(r.Change.Keys["SK"].String())
			if err != nil {
				bad, badSeq = err, r.Change.SequenceNumber
				break
			}
			seqs = append(seqs, r.Change.SequenceNumber)
			ids = append(ids, id)
		}
		if len(ids) > 0 {
			if done, err := FanOutMany(ctx, st, q, ids); err != nil {
				fail(seqs[done], err)
				return resp, nil
			}
		}
		if bad != nil {
			fail(badSeq, bad)
			return resp, nil
		}
		// An instance also picks up, at most once a SweepEvery, a few
		// markers whose stream records were given up on, so no notification
		// stays unsent while changes go on, and a busy stream does not pay
		// a Query with every batch.
		if now := clk.Now(); now.Sub(time.Unix(0, lastSweep.Load())) >= SweepEvery {
			lastSweep.Store(now.UnixNano())
			if err := Sweep(ctx, st, q, clk, 10); err != nil {
				slog.Warn("outbox sweep failed", "error", err.Error())
			}
		}
		return resp, nil
	}
}

// SweepEvery is how often an instance of the change-feed function sweeps.
const SweepEvery = time.Minute
