package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbox"
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
// topic when its change committed (or per webhook the notification names,
// outbox.ToWebhooks), then removes its outbox marker. Webhooks
// subscribed since (a subscription tick above the notification's clock) are
// skipped, however late the fan-out runs; webhooks deleted since are not
// read (or, if the index still shows them, dropped by the dispatcher). Run
// twice (a crash between the two steps), it queues the same deliveries
// again under the same ids.
func FanOut(ctx context.Context, st store.Store, q queue.Queue, notificationID int64) error {
	_, err := FanOutMany(ctx, st, q, []int64{notificationID})
	return err
}

// FanOutMany fans out several notifications as FanOut does one, sharing
// the work: one read of each topic's subscribers, the messages of all in
// one Send (SQS batches of ten, or one store transaction per 100), then
// the markers deleted concurrently (single-item deletes, which the
// embedded store commits together). It returns how many notifications,
// from the first, were fanned out and their markers removed; on an error
// the rest were not, or only partly (their markers stay, so they are
// fanned out again later, under the same delivery ids).
func FanOutMany(ctx context.Context, st store.Store, q queue.Queue, notificationIDs []int64) (done int, err error) {
	subs := map[string][]webhooks.Webhook{}
	var bodies [][]byte
	n := 0
	var stopped error
	for _, id := range notificationIDs {
		b, err := messages(ctx, st, id, subs)
		if err != nil {
			stopped = err
			break
		}
		bodies = append(bodies, b...)
		n++
	}
	if len(bodies) > 0 {
		if err := q.Send(ctx, bodies...); err != nil {
			return 0, err
		}
	}
	if done, err := dropMarkers(ctx, st, notificationIDs[:n]); err != nil {
		return done, err
	}
	return n, stopped
}

// messages returns the queue messages of one notification; subs caches
// the subscribers of each topic for one fan-out.
func messages(ctx context.Context, st store.Store, notificationID int64, subs map[string][]webhooks.Webhook) ([][]byte, error) {
	var n outbox.Notification
	if _, err := records.Get(ctx, st, outbox.NotificationKey(notificationID), &n); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return nil, nil // expired: nothing left to send
		}
		return nil, err
	}
	list, ok := subs[n.Topic]
	switch {
	case n.Webhooks != nil: // fixed at the change: the webhooks may be gone
		list = nil
		if err := json.Unmarshal(n.Webhooks, &list); err != nil {
			return nil, err
		}
		for i := range list {
			list[i].AppID = n.AppID // not part of the webhooks' JSON
		}
	case !ok:
		var err error
		if list, err = webhooks.Subscribers(ctx, st, n.Topic); err != nil {
			return nil, err
		}
		subs[n.Topic] = list
	}
	var bodies [][]byte
	for i := range list {
		if n.AppID != 0 && list[i].AppID != n.AppID {
			continue
		}
		if n.Clock != nil && !list[i].SubscribedBy(*n.Clock) {
			continue // subscribed after the change
		}
		m := Message{DeliveryID: DeliveryID(n.ID, list[i].ID), NotificationID: n.ID, WebhookID: list[i].ID, AppID: list[i].AppID}
		if n.AppID != 0 {
			m.Snapshot = &list[i]
		}
		b, _ := json.Marshal(&m)
		bodies = append(bodies, b)
	}
	return bodies, nil
}

// markerDeletes bounds the marker deletes in flight at once.
const markerDeletes = 16

// dropMarkers deletes the markers of ids and returns how many, from the
// first, are gone, with the first error.
func dropMarkers(ctx context.Context, st store.Store, ids []int64) (int, error) {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	slots := make(chan struct{}, markerDeletes)
	for i, id := range ids {
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			errs[i] = st.Transact(ctx, store.Delete(store.Key{PK: outbox.Partition, SK: records.IDSK(id)}, store.Always, 0))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return i, err
		}
	}
	return len(ids), nil
}

// pumpPage is how many markers Pump fans out at once.
const pumpPage = 100

// Pump fans out notifications from the outbox partition until ctx ends: the
// local runner's stand-in for the table stream. Markers are durable, so a
// restart resumes where it stopped. It looks at once when wake receives
// (store.Watched: a commit wrote a marker), after a failed look within
// pumpRetry, and otherwise every idle (for what another process
// committed): an idle runner does not poll its store.
func Pump(ctx context.Context, st store.Store, q queue.Queue, wake <-chan struct{}, idle time.Duration) {
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		items, _, err := st.Query(ctx, store.Query{PK: outbox.Partition, Limit: pumpPage})
		if err != nil && ctx.Err() == nil {
			slog.Error("outbox read failed", "error", err.Error())
		}
		ids := make([]int64, 0, len(items))
		for _, it := range items {
			id, err := records.ParseIDSK(it.SK)
			if err != nil {
				slog.Error("unreadable outbox marker", "marker", it.SK)
				continue
			}
			ids = append(ids, id)
		}
		if len(ids) > 0 {
			done, ferr := FanOutMany(ctx, st, q, ids)
			if ferr != nil && ctx.Err() == nil {
				slog.Error("fan-out failed", "notification", ids[done], "error", ferr.Error())
				err = ferr
			}
		}
		if len(items) == pumpPage && err == nil {
			continue
		}
		wait := idle
		if err != nil {
			wait = min(idle, pumpRetry)
		}
		t.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-wake:
		}
	}
}

// pumpRetry is how soon Pump looks again after a failed look or fan-out.
const pumpRetry = 100 * time.Millisecond

// SweepAge is how old an outbox marker must be before Sweep fans it out:
// older than any stream delivery still in flight.
const SweepAge = 5 * time.Minute

// Sweep fans out outbox markers older than SweepAge, at most max of them:
// notifications whose stream record was dropped after the change feed's
// retries ran out. A marker the change feed derived counts its age from
// when it was written (outbox.WrittenNum), not from its change's id: a
// change derived after a lag is fanned out by its own stream record, not
// a second time by the sweep. Marker sort keys are ids, and ids are time-ordered, so
// this is one Query of the old end of the partition; clk tells the age.
func Sweep(ctx context.Context, st store.Store, q queue.Queue, clk clock.Clock, max int) error {
	items, _, err := st.Query(ctx, store.Query{PK: outbox.Partition, Before: records.IDSK(ids.At(clk.Now().Add(-SweepAge))), Limit: max})
	if err != nil {
		return err
	}
	ids := make([]int64, 0, len(items))
	young := clk.Now().Add(-SweepAge).Unix()
	for _, it := range items {
		if it.Nums[outbox.WrittenNum] > young {
			continue // derived late: its own stream record fans it out
		}
		if id, err := records.ParseIDSK(it.SK); err == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	_, err = FanOutMany(ctx, st, q, ids)
	return err
}
