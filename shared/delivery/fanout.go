package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strconv"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Message is one delivery of one notification to one webhook, as queued.
type Message struct {
	DeliveryID     string `json:"delivery_id"`
	NotificationID int64  `json:"notification_id"`
	WebhookID      int64  `json:"webhook_id"`
	AppID          int64  `json:"app_id"`
	// Snapshot is the webhook as it was when queued, for webhooks deleted
	// before their last delivery (those of an uninstalled app).
	Snapshot *webhooks.Webhook `json:"snapshot,omitempty"`
}

// DeliveryID is the same for every retry and every re-fan-out of one
// notification to one webhook: receivers can de-duplicate on it.
func DeliveryID(notificationID, webhookID int64) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(notificationID, 10) + ":" + strconv.FormatInt(webhookID, 10)))
	return hex.EncodeToString(sum[:16])
}

// FanOut queues one message per webhook subscribed to the notification's
// topic when its change committed, then removes its outbox marker. Webhooks
// subscribed since (a subscription tick above the notification's clock) are
// skipped, however late the fan-out runs; webhooks deleted since are not
// read (or, if the index still shows them, dropped by the dispatcher). Run
// twice (a crash between the two steps), it queues the same deliveries
// again under the same ids.
func FanOut(ctx context.Context, st store.Store, q queue.Queue, notificationID int64) error {
	var n Notification
	if _, err := records.Get(ctx, st, NotificationKey(notificationID), &n); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return dropMarker(ctx, st, notificationID) // expired: nothing left to send
		}
		return err
	}
	subs, err := webhooks.Subscribers(ctx, st, n.Topic)
	if err != nil {
		return err
	}
	var bodies [][]byte
	for i := range subs {
		if n.AppID != 0 && subs[i].AppID != n.AppID {
			continue
		}
		if n.Clock != nil && !subs[i].SubscribedBy(*n.Clock) {
			continue // subscribed after the change
		}
		m := Message{DeliveryID: DeliveryID(n.ID, subs[i].ID), NotificationID: n.ID, WebhookID: subs[i].ID, AppID: subs[i].AppID}
		if n.AppID != 0 {
			m.Snapshot = &subs[i]
		}
		b, _ := json.Marshal(&m)
		bodies = append(bodies, b)
	}
	if len(bodies) > 0 {
		if err := q.Send(ctx, bodies...); err != nil {
			return err
		}
	}
	return dropMarker(ctx, st, notificationID)
}

func dropMarker(ctx context.Context, st store.Store, id int64) error {
	return st.Transact(ctx, store.Delete(store.Key{PK: OutboxPartition, SK: records.IDSK(id)}, store.Always, 0))
}

// Pump fans out notifications from the outbox partition until ctx ends: the
// local runner's stand-in for the table stream. Markers are durable, so a
// restart resumes where it stopped.
func Pump(ctx context.Context, st store.Store, q queue.Queue, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		items, _, err := st.Query(ctx, store.Query{PK: OutboxPartition, Limit: 100})
		if err != nil && ctx.Err() == nil {
			slog.Error("outbox read failed", "error", err.Error())
		}
		for _, it := range items {
			id, err := records.ParseIDSK(it.SK)
			if err == nil {
				err = FanOut(ctx, st, q, id)
			}
			if err != nil && ctx.Err() == nil {
				slog.Error("fan-out failed", "notification", it.SK, "error", err.Error())
			}
		}
		if len(items) == 100 {
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// SweepAge is how old an outbox marker must be before Sweep fans it out:
// older than any stream delivery still in flight.
const SweepAge = 5 * time.Minute

// Sweep fans out outbox markers older than SweepAge, at most max of them:
// notifications whose stream record was dropped after the change feed's
// retries ran out. Marker sort keys are ids, and ids are time-ordered, so
// this is one Query of the old end of the partition.
func Sweep(ctx context.Context, st store.Store, q queue.Queue, max int) error {
	items, _, err := st.Query(ctx, store.Query{PK: OutboxPartition, Before: records.IDSK(ids.At(time.Now().Add(-SweepAge))), Limit: max})
	if err != nil {
		return err
	}
	for _, it := range items {
		id, err := records.ParseIDSK(it.SK)
		if err != nil {
			continue
		}
		if err := FanOut(ctx, st, q, id); err != nil {
			return err
		}
	}
	return nil
}
