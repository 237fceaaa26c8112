package webhooks

import (
	"context"
	"errors"
	"fmt"

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
// writes the webhook with its topic+address guard (address: for this topic
// has already been taken) and count in one transaction.
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
		ops := records.WriteOps(wh.item(0), 0, nil, wh.entries())
		claimOp := wh.guardOp()
		claim = claimOp.TargetKey()
		return append(ops, claimOp, records.CountOp(Partition(app.ID), 1)), nil
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
		old := wh
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
		ops := records.WriteOps(wh.item(0), it.Version, old.entries(), wh.entries())
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

// Delete removes one of the app's webhooks (Remove).
func (s Service) Delete(ctx context.Context, id int64) error {
	return Remove(ctx, s.Store, admin.AppFrom(ctx).ID, id)
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

// deleteBatch webhooks per transaction: the webhook, its guard, its two
// entries and its topic's count, plus the partition's count (records.Transact
// folds the counts of one partition into one op).
const deleteBatch = (store.MaxTransactItems - 1) / 5

// DeleteAllOfApp deletes every webhook of an app with its guard, then the
// app's count shards (app uninstall). It reads the partition a batch at a
// time, deleting each batch in one transaction; a webhook changed meanwhile
// is read again.
func DeleteAllOfApp(ctx context.Context, st store.Store, appID int64) error {
	part := Partition(appID)
	tries := 0
	return records.Retry(ctx, func() (bool, error) {
		tries++
		for {
			items, _, err := st.Query(ctx, store.Query{PK: part, Limit: deleteBatch})
			if err != nil || len(items) == 0 {
				if err != nil {
					return false, err
				}
				break
			}
			ops := make([]store.Op, 0, 2*len(items)+1)
			for i := range items {
				w, err := decode(&items[i])
				if err != nil {
					return false, err
				}
				ops = append(ops,
					store.Delete(items[i].Key(), store.IfVersion, items[i].Version),
					store.Delete(guardKey(appID, w.Topic, w.Address), store.Always, 0))
				ops = append(ops, records.IndexOps(nil, w.entries(), nil)...)
			}
			ops = append(ops, records.CountOp(part, -int64(len(items))))
			if err := records.Transact(ctx, st, ops...); err != nil {
				return errors.Is(err, store.ErrConditionFailed), err // a webhook changed meanwhile: read again
			}
		}
		// The partition is empty: remove the count shards, unless a create
		// slipped in (the shards then sum to more than zero, or one of them
		// moved before the delete).
		shards, _, err := st.Query(ctx, store.Query{PK: "count#" + part}) // records' shard partition
		if err != nil || len(shards) == 0 {
			return false, err
		}
		sum := int64(0)
		ops := make([]store.Op, 0, len(shards))
		for i := range shards {
			sum += shards[i].Nums["n"]
			ops = append(ops, store.Delete(shards[i].Key(), store.IfVersion, shards[i].Version))
		}
		if sum != 0 && tries < 3 {
			return true, fmt.Errorf("webhooks: app %d subscribed again while its webhooks were deleted", appID)
		}
		err = st.Transact(ctx, ops...)
		return errors.Is(err, store.ErrConditionFailed), err
	})
}

// Remove deletes one webhook of an app with its guard (admin.NotFound if
// there is none): the DELETE endpoint, and the dispatcher giving up on a
// webhook whose deliveries failed for 48 hours.
func Remove(ctx context.Context, st store.Store, appID, id int64) error {
	return records.Update(ctx, st, key(appID, id), func(it *store.Item) ([]store.Op, error) {
		wh, err := decode(it)
		if err != nil {
			return nil, err
		}
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			store.Delete(guardKey(appID, wh.Topic, wh.Address), store.Always, 0),
			records.CountOp(Partition(appID), -1),
		}
		return append(ops, records.IndexOps(nil, wh.entries(), nil)...), nil
	})
}
