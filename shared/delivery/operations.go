package delivery

import (
	"context"
	"errors"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Log is the delivery log's operations, for the calling app (admin.AppFrom):
// the attempts of one of its webhooks, and a dead-lettered delivery queued
// again. Another app's webhook is admin.NotFound.
type Log struct {
	Store store.Store
	// Queue takes a redelivered message (the delivery queue).
	Queue queue.Queue
}

func newLog(d *platform.Deps) Log { return Log{Store: d.Store, Queue: d.Queue} }

// Attempts returns the window of the webhook's logged attempts, newest
// first (ascending from sinceID when given), and where it lies: one Query
// of the webhook's attempt partition.
func (l Log) Attempts(ctx context.Context, webhookID, sinceID int64, w records.Window) ([]Attempt, records.Span, error) {
	if _, err := webhooks.Lookup(ctx, l.Store, admin.AppFrom(ctx).ID, webhookID); err != nil {
		return nil, records.Span{}, err
	}
	q := store.Query{PK: AttemptPartition(webhookID), Desc: true}
	if sinceID > 0 {
		q = store.Query{PK: AttemptPartition(webhookID), After: records.IDSK(sinceID)}
	}
	return records.Spanned[Attempt](records.ListWindow(ctx, l.Store, q, nil, w))
}

// Redeliver queues a dead-lettered delivery of the webhook again, as a
// fresh first attempt under the same delivery id, then forgets the dead
// letter. The message is sent before the dead letter is deleted: a crash
// between the two leaves a dead letter that a second redeliver sends again
// (receivers de-duplicate on the delivery id), never a lost delivery.
func (l Log) Redeliver(ctx context.Context, webhookID int64, deliveryID string) error {
	if _, err := webhooks.Lookup(ctx, l.Store, admin.AppFrom(ctx).ID, webhookID); err != nil {
		return err
	}
	k := DeadLetterKey(webhookID, deliveryID)
	it, err := l.Store.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return admin.NotFound
	}
	if err != nil {
		return err
	}
	if err := l.Queue.Send(ctx, it.Data); err != nil {
		return err
	}
	return l.Store.Transact(ctx, store.Delete(k, store.Always, 0))
}
