package webhooks

import (
	"context"
	"errors"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the webhook operations: plain functions of a context and
// typed input, used by the handlers. Each works on the calling app's
// webhooks (admin.AppFrom); the functions below them (Lookup, Remove,
// Subscribers, DeleteAllOfApp) serve the dispatcher and app uninstall.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// Outbound fetches what a user names by URL.
	Outbound *outbound.Client
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, Outbound: d.Outbound}
}

// Filter is the list and count filters, each served by keys
// (records.Plan): address by GSI2, topic and updated_at by the webhooks'
// entries, created_at and since_id by id.
type Filter struct {
	Address, Topic string
	dates.Stamps
}

func (f *Filter) source(appID, sinceID int64) (store.Query, records.Matcher) {
	p := records.Plan{All: store.Query{PK: Partition(appID)}, Created: f.Created, SinceID: sinceID}
	if f.Address != "" {
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{Index: store.GSI2, PK: addressIndexKey(appID, f.Address)}})
	}
	if f.Topic != "" {
		p.Keyed = append(p.Keyed, records.Exact(Partition(appID), "topic", f.Topic))
	}
	if !f.Updated.Empty() {
		p.Keyed = append(p.Keyed, records.Timed(Partition(appID), "updated_at", f.Updated))
	}
	return p.Read(func(it *store.Item) (bool, error) {
		w, err := decode(it)
		if err != nil {
			return false, err
		}
		return w.ID > sinceID && (f.Address == "" || w.Address == f.Address) && (f.Topic == "" || w.Topic == f.Topic) &&
			f.Stamps.Contains(w.CreatedAt.Time, w.UpdatedAt.Time), nil
	})
}

// List returns the window of the app's matching webhooks in id order after
// sinceID, and where it lies.
func (s Service) List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Webhook, records.Span, error) {
	q, match := f.source(admin.AppFrom(ctx).ID, sinceID)
	items, span, err := records.ListWindow(ctx, s.Store, q, match, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	out := make([]Webhook, len(items))
	for i := range items {
		if out[i], err = decode(&items[i]); err != nil {
			return nil, records.Span{}, err
		}
	}
	return out, span, nil
}

// Count counts the app's matching webhooks: unfiltered or by topic, a
// counter; else the keys of the source's range.
func (s Service) Count(ctx context.Context, f Filter) (int, error) {
	q, match := f.source(admin.AppFrom(ctx).ID, 0)
	return records.CountOf(ctx, s.Store, q.PK, q, match)
}

// Get returns one of the app's webhooks; another app's is admin.NotFound.
func (s Service) Get(ctx context.Context, id int64) (*Webhook, error) {
	return Lookup(ctx, s.Store, admin.AppFrom(ctx).ID, id)
}

// Create subscribes the app to a topic: it ticks the topic's clock, then
// writes the webhook, stamped (records.Stamp), with its topic+address
// guard (address: for this topic has already been taken) in one
// transaction; its entries and counts are the change feed's (Derive).
func (s Service) Create(ctx context.Context, in *Input) (Webhook, error) {
	app := admin.AppFrom(ctx)
	wh := Webhook{AppID: app.ID}
	if err := in.apply(app, &wh, true, s.Outbound.Refuses); err != nil {
		return wh, err
	}
	var err error
	var claim store.Key // the handle or guard the change claims, if any
	if wh.Subscribed, err = outbox.Tick(ctx, s.Store, wh.Topic); err != nil {
		return wh, err
	}
	_, err = records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		wh.ID = id
		// created_at is the id's second, so that created_at ranges are id ranges.
		wh.CreatedAt = admin.Time{Time: ids.Time(id)}
		wh.UpdatedAt = wh.CreatedAt
		it := wh.item(1)
		records.Stamp(ctx, &it, id)
		claimOp := wh.guardOp()
		claim = claimOp.TargetKey()
		return []store.Op{store.Put(it, store.IfAbsent, 0), claimOp}, nil
	})
	if store.FailedOn(err, claim) {
		return wh, admin.Invalid("address", MsgAddressTaken)
	}
	return wh, err
}

// Update changes one of the app's webhooks; a move to another topic is a new
// subscription (a tick of the new topic's clock), and a new topic or
// address moves the guard in the same transaction.
func (s Service) Update(ctx context.Context, id int64, in *Input) (Webhook, error) {
	app := admin.AppFrom(ctx)
	var wh Webhook
	var claim store.Key // the handle or guard the change claims, if any
	err := records.Update(ctx, s.Store, key(app.ID, id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if wh, err = decode(it); err != nil {
			return nil, err
		}
		oldGuard, oldTopic := guardKey(wh.AppID, wh.Topic, wh.Address), wh.Topic
		if err := in.apply(app, &wh, false, s.Outbound.Refuses); err != nil {
			return nil, err
		}
		if wh.Topic != oldTopic { // a new subscription: changes of the new topic from now on
			if wh.Subscribed, err = outbox.Tick(ctx, s.Store, wh.Topic); err != nil {
				return nil, err
			}
		}
		wh.UpdatedAt = admin.At(s.Clock.Now())
		put := records.PutNext(wh.item(it.Version))
		records.Stamp(ctx, &put.Item, s.IDs.Next())
		ops := []store.Op{put}
		if guardKey(wh.AppID, wh.Topic, wh.Address) != oldGuard {
			claimOp := wh.guardOp()
			claim = claimOp.TargetKey()
			ops = append(ops, claimOp, store.Delete(oldGuard, store.Always, 0))
		}
		return ops, nil
	})
	if store.FailedOn(err, claim) {
		return wh, admin.Invalid("address", MsgAddressTaken)
	}
	return wh, err
}

// Delete removes one of the app's webhooks with its guard, and its tomb
// saying who did (records.Remove); its entries and counts are the change
// feed's.
func (s Service) Delete(ctx context.Context, id int64) error {
	return remove(ctx, s.Store, admin.AppFrom(ctx).ID, id, func(it *store.Item) []store.Op {
		ops, _ := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		return ops
	})
}

// Lookup reads one webhook of an app; another app's id or an unknown one is
// admin.NotFound.
func Lookup(ctx context.Context, st store.Store, appID, id int64) (*Webhook, error) {
	it, err := st.Get(ctx, key(appID, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, admin.NotFound
	}
	if err != nil {
		return nil, err
	}
	w, err := decode(&it)
	if err != nil {
		return nil, err
	}
	return &w, nil
}

// Subscribers returns every app's webhooks of a topic, in id order, with
// AppID filled: one Query of GSI1 (paged).
func Subscribers(ctx context.Context, st store.Store, topic string) ([]Webhook, error) {
	var out []Webhook
	err := records.Each(ctx, st, store.Query{Index: store.GSI1, PK: TopicPartition(topic), Limit: 500}, func(it *store.Item) error {
		w, err := decode(it)
		out = append(out, w)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// deleteBatch webhooks per transaction: the webhook and its guard, and,
// where the local feed runs over DynamoDB Local (the tests), the two
// pending images of its removal (store.Feed), which DynamoDB counts.
const deleteBatch = store.MaxTransactItems / 4

// DeleteAllOfApp deletes every webhook of an app with its guard (app
// uninstall). It reads the partition a batch at a time, deleting each batch
// in one transaction; a webhook changed meanwhile is read again. The change
// feed removes each one's entries and counts it down, as for every
// removal, so the app's count shards come to zero and stay.
func DeleteAllOfApp(ctx context.Context, st store.Store, appID int64) error {
	part := Partition(appID)
	return records.Retry(ctx, func() (bool, error) {
		for {
			items, _, err := st.Query(ctx, store.Query{PK: part, Limit: deleteBatch})
			if err != nil || len(items) == 0 {
				return false, err
			}
			ops := make([]store.Op, 0, 2*len(items))
			for i := range items {
				w, err := decode(&items[i])
				if err != nil {
					return false, err
				}
				ops = append(ops,
					store.Delete(items[i].Key(), store.IfVersion, items[i].Version),
					store.Delete(guardKey(appID, w.Topic, w.Address), store.Always, 0))
			}
			if err := records.Transact(ctx, st, ops...); err != nil {
				return errors.Is(err, store.ErrConditionFailed), err // a webhook changed meanwhile: read again
			}
		}
	})
}

// Remove deletes one webhook of an app with its guard (admin.NotFound if
// there is none): the dispatcher giving up on a webhook whose deliveries
// failed for 48 hours (no request's: no tomb). The change feed removes its
// entries and counts it down.
func Remove(ctx context.Context, st store.Store, appID, id int64) error {
	return remove(ctx, st, appID, id, func(it *store.Item) []store.Op {
		return []store.Op{store.Delete(it.Key(), store.IfVersion, it.Version)}
	})
}

// remove deletes one webhook of an app with its guard: deletion is the
// webhook's delete (conditioned on its version), and a tomb when a
// request removes it.
func remove(ctx context.Context, st store.Store, appID, id int64, deletion func(it *store.Item) []store.Op) error {
	return records.Update(ctx, st, key(appID, id), func(it *store.Item) ([]store.Op, error) {
		wh, err := decode(it)
		if err != nil {
			return nil, err
		}
		return append(deletion(it), store.Delete(guardKey(appID, wh.Topic, wh.Address), store.Always, 0)), nil
	})
}

// Derive is the change feed's work for a change to a webhook
// (store.Deriver): its topic and updated_at entries, and its app's counts
// (all, and by topic). Webhooks log no event and fire no notification.
func Derive(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	decodeOf := func(it *store.Item) (*Webhook, error) {
		if it == nil {
			return nil, nil
		}
		w, err := decode(it)
		return &w, err
	}
	old, err := decodeOf(c.Old)
	if err != nil {
		return nil, err
	}
	next, err := decodeOf(c.New)
	if err != nil {
		return nil, err
	}
	switch {
	case old == nil:
		return append(records.IndexOps(c.New, nil, next.entries()), records.CountOp(Partition(next.AppID), 1)), nil
	case next == nil:
		return append(records.IndexOps(nil, old.entries(), nil), records.CountOp(Partition(old.AppID), -1)), nil
	}
	return records.IndexOps(c.New, old.entries(), next.entries()), nil
}
