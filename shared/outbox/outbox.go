// Package outbox is the writing side of webhook notifications (docs/openapi.yaml:
// schema WebhookTopic): a change that fires a topic puts a notification and an
// outbox marker in its own transaction (Notify: one line in the resource's write),
// so no notification is lost or sent for a change that did not commit. The
// delivery package reads them back: the table's stream (AWS) or the local pump
// carries each marker to the fan-out.
//
// Items: notification/<id> (payload, kept NotificationTTL so retries can
// read it) and outbox/<id> (marker until fanned out).
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Notification is one firing of a topic.
type Notification struct {
	ID    int64  `json:"id"`
	Topic string `json:"topic"`
	// Resource names the payload's root element in XML (e.g. "product").
	Resource string          `json:"resource"`
	Payload  json.RawMessage `json:"payload"`
	// OwnerResource and OwnerID name the payload's metafield owner, for
	// webhooks with metafield_namespaces.
	OwnerResource string     `json:"owner_resource,omitempty"`
	OwnerID       int64      `json:"owner_id,omitempty"`
	AppID         int64      `json:"app_id,omitempty"` // only this app's webhooks (app/uninstalled)
	TriggeredAt   admin.Time `json:"triggered_at"`
	// Clock is the topic's subscription clock read before the change
	// committed (Clock): only webhooks whose subscription tick is
	// at most this get the notification. Absent in notifications written
	// before clocks existed, which go to every subscriber.
	Clock *int64 `json:"clock,omitempty"`
	// Webhooks, when set, are the subscribers, copied as they were at the
	// change (a JSON array of webhooks of AppID about to be deleted, as the
	// webhooks package writes them; the fan-out sets their AppID, which
	// their JSON lacks) and sent to without reading the topic's subscribers.
	Webhooks json.RawMessage `json:"webhooks,omitempty"`
}

// NotificationTTL outlives the retry window of every delivery.
const NotificationTTL = 72 * time.Hour

const (
	notificationPartition = "notification"
	// Partition holds a marker per notification not yet fanned out.
	Partition = "outbox"
)

// NotificationKey addresses a notification.
func NotificationKey(id int64) store.Key {
	return store.Key{PK: notificationPartition, SK: records.IDSK(id)}
}

// Option refines a notification.
type Option func(*Notification)

// MetafieldsOf names the payload's metafield owner.
func MetafieldsOf(resource string, id int64) Option {
	return func(n *Notification) { n.OwnerResource, n.OwnerID = resource, id }
}

// OnlyApp restricts delivery to one app's webhooks.
func OnlyApp(appID int64) Option { return func(n *Notification) { n.AppID = appID } }

// ToWebhooks fixes the subscribers: copies of ws (the webhooks package's
// records, as JSON), webhooks of one app (appID) that the change deletes
// right after, so that the fan-out, however late, still finds them. Their
// size counts toward the notification item's 400 KB.
func ToWebhooks(appID int64, ws any) Option {
	return func(n *Notification) { n.AppID, n.Webhooks = appID, records.Encode(ws) }
}

// Notify returns the writes that fire topic with payload (the resource
// object, marshalled as its response shows it). Put them in the change's
// transaction: no notification without its change, and none lost. It reads
// the topic's subscription clock (one GetItem), so call it while building
// the transaction, not ahead of time: the webhooks that subscribe after the
// read do not get this notification. clk dates the notification and its
// expiry.
func Notify(ctx context.Context, st store.Store, gen *ids.Generator, clk clock.Clock, topic, resource string, payload any, opts ...Option) ([]store.Op, error) {
	tick, err := Clock(ctx, st, topic)
	if err != nil {
		return nil, err
	}
	now := clk.Now()
	n := Notification{ID: gen.Next(), Topic: topic, Resource: resource, Payload: records.Encode(payload), TriggeredAt: admin.At(now), Clock: &tick}
	for _, o := range opts {
		o(&n)
	}
	return n.ops(now), nil
}

// StampClock stores on it (a record's item a request stamped, records.Stamp)
// the subscription clock of topic as read now, before the commit: the
// notification the change feed derives (OfChange) goes to the webhooks
// subscribed by then. One GetItem.
func StampClock(ctx context.Context, st store.Store, it *store.Item, topic string) error {
	tick, err := Clock(ctx, st, topic)
	if err != nil {
		return err
	}
	it.Nums[store.ClockNum] = tick
	return nil
}

// OfChange returns the writes that fire topic for a request's change to a
// record (c, its item, or a removal's tomb, stamped by records.Stamp and
// StampClock): the
// notification's id is the change's, so it is dated when the change
// committed, and it goes to the webhooks subscribed by then. The change
// feed calls it. Another process may have drawn the same id for another
// change (about once in 2^21 pairs drawn in one second) and taken the
// notification's key: a later attempt of the derivation (c.Attempt) takes
// another id of the same second, at random, as ids does.
func OfChange(c store.Change, topic, resource string, payload any, opts ...Option) []store.Op {
	it := c.Stamped()
	tick := it.Nums[store.ClockNum]
	id := it.Nums[store.ChangeNum]
	at := ids.Time(id)
	if c.Attempt > 0 {
		id = ids.At(at) | rand.Int64N(1<<21)
	}
	n := Notification{ID: id, Topic: topic, Resource: resource, Payload: records.Encode(payload), TriggeredAt: admin.At(at), Clock: &tick}
	for _, o := range opts {
		o(&n)
	}
	ops := n.ops(at)
	// The marker says when it was written, so that the sweep leaves alone
	// one derived late, whose own stream record is still on its way.
	ops[1].Item.Nums = map[string]int64{WrittenNum: c.At.Unix()}
	return ops
}

// WrittenNum is the number of an outbox marker the change feed derived
// that holds when it was written (Unix seconds).
const WrittenNum = "written"

func (n *Notification) ops(now time.Time) []store.Op {
	expires := now.Add(NotificationTTL).Unix()
	k := NotificationKey(n.ID)
	return []store.Op{
		store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(n), ExpiresAt: expires}, store.IfAbsent, 0),
		store.Put(store.Item{PK: Partition, SK: k.SK, Version: 1, Data: []byte("{}"), ExpiresAt: expires}, store.IfAbsent, 0),
	}
}

// The subscription clock orders subscriptions against changes: a webhook
// subscribing to a topic takes a tick (Tick) before its own write, a change
// firing the topic reads the clock (Clock) while building its transaction,
// and a notification goes to the webhooks whose tick is at most what its
// change read. It lives here, beside Notify, because both sides of that
// order meet here; the webhooks package takes ticks.

// clockKey addresses a topic's subscription clock.
func clockKey(topic string) store.Key { return store.Key{PK: "webhook#clock", SK: topic} }

const clockNum = "n"

// Clock reads a topic's subscription clock: the last tick a subscription to
// the topic took (0 before the first). One GetItem.
func Clock(ctx context.Context, st store.Store, topic string) (int64, error) {
	it, err := st.Get(ctx, clockKey(topic))
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return it.Nums[clockNum], nil
}

// Tick advances a topic's subscription clock and returns the new value: a
// webhook subscribing to the topic stores it (before its own write, so
// every change that reads the clock after this sees a value at least as
// large). A tick whose webhook is never written is only a skipped value.
func Tick(ctx context.Context, st store.Store, topic string) (int64, error) {
	it, err := st.Add(ctx, clockKey(topic), store.Always, map[string]int64{clockNum: 1})
	if err != nil {
		return 0, err
	}
	return it.Nums[clockNum], nil
}
