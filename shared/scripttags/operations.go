package scripttags

import (
	"context"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the script tag operations: plain functions of a context and
// typed input, used by the handlers. Each works on the calling app's tags
// (admin.AppFrom).
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock}
}

// Filter is the list and count filters, each served by keys
// (records.Plan): src by GSI1, updated_at by the tags' updated_at entries,
// created_at and since_id by id.
type Filter struct {
	Src string
	dates.Stamps
}

func (f *Filter) source(appID, sinceID int64) (store.Query, records.Matcher) {
	p := records.Plan{All: store.Query{PK: Partition(appID)}, Created: f.Created, SinceID: sinceID}
	if f.Src != "" {
		p.Keyed = append(p.Keyed, records.Keyed{Query: store.Query{Index: store.GSI1, PK: srcIndexKey(appID, f.Src)}})
	}
	if !f.Updated.Empty() {
		p.Keyed = append(p.Keyed, records.Timed(Partition(appID), "updated_at", f.Updated))
	}
	return p.Read(func(it *store.Item) (bool, error) {
		var t ScriptTag
		if err := records.Decode(it, &t); err != nil {
			return false, err
		}
		return t.ID > sinceID && (f.Src == "" || t.Src == f.Src) && f.Stamps.Contains(t.CreatedAt.Time, t.UpdatedAt.Time), nil
	})
}

// List returns the window of the app's matching tags after sinceID, and
// where it lies: in id order, or in updated_at order for that range.
func (s Service) List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]ScriptTag, records.Span, error) {
	q, match := f.source(admin.AppFrom(ctx).ID, sinceID)
	return records.Spanned[ScriptTag](records.ListWindow(ctx, s.Store, q, match, w))
}

// Count counts the app's matching tags (unfiltered: its counter).
func (s Service) Count(ctx context.Context, f Filter) (int, error) {
	appID := admin.AppFrom(ctx).ID
	q, match := f.source(appID, 0)
	return records.CountOf(ctx, s.Store, Partition(appID), q, match)
}

// Get returns one of the app's tags; another app's is admin.NotFound.
func (s Service) Get(ctx context.Context, id int64) (ScriptTag, error) {
	var t ScriptTag
	_, err := records.Get(ctx, s.Store, key(admin.AppFrom(ctx).ID, id), &t)
	return t, err
}

// Create adds a tag to the app's partition; its entries and count are the
// change feed's (Derive).
func (s Service) Create(ctx context.Context, in *Input) (ScriptTag, error) {
	appID := admin.AppFrom(ctx).ID
	var t ScriptTag
	if err := in.apply(&t, true); err != nil {
		return t, err
	}
	_, err := records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		t.ID = id
		// created_at is the id's second, so that created_at ranges are id ranges.
		t.CreatedAt = admin.Time{Time: ids.Time(id)}
		t.UpdatedAt = t.CreatedAt
		it := t.item(appID, 1)
		records.Stamp(ctx, &it, id)
		return []store.Op{store.Put(it, store.IfAbsent, 0)}, nil
	})
	return t, err
}

// Update changes one of the app's tags.
func (s Service) Update(ctx context.Context, id int64, in *Input) (ScriptTag, error) {
	appID := admin.AppFrom(ctx).ID
	var t ScriptTag
	err := records.Update(ctx, s.Store, key(appID, id), func(it *store.Item) ([]store.Op, error) {
		if err := records.Decode(it, &t); err != nil {
			return nil, err
		}
		if err := in.apply(&t, false); err != nil {
			return nil, err
		}
		t.UpdatedAt = admin.At(s.Clock.Now())
		put := records.PutNext(t.item(appID, it.Version))
		records.Stamp(ctx, &put.Item, s.IDs.Next())
		return []store.Op{put}, nil
	})
	return t, err
}

// Delete removes one of the app's tags, with its tomb saying who did; its
// entries and count are the change feed's.
func (s Service) Delete(ctx context.Context, id int64) error {
	appID := admin.AppFrom(ctx).ID
	return records.Update(ctx, s.Store, key(appID, id), func(it *store.Item) ([]store.Op, error) {
		ops, _ := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		return ops, nil
	})
}

// DeleteAllOfApp deletes every script tag of an app (uninstall, schema
// ScriptTag), a transaction per page of its partition; the change feed
// removes each one's entries and counts it down, as for every removal.
func DeleteAllOfApp(ctx context.Context, st store.Store, appID int64) error {
	// A page is a third of a transaction: each tag's delete, and, where the
	// local feed runs over DynamoDB Local (the tests), the two pending
	// images of its removal (store.Feed), which DynamoDB counts.
	const perPage = store.MaxTransactItems / 3
	for {
		items, _, err := st.Query(ctx, store.Query{PK: Partition(appID), Limit: perPage})
		if err != nil || len(items) == 0 {
			return err
		}
		ops := make([]store.Op, 0, len(items))
		for i := range items {
			ops = append(ops, store.Delete(items[i].Key(), store.Always, 0))
		}
		if err := records.Transact(ctx, st, ops...); err != nil {
			return err
		}
	}
}

// Derive is the change feed's work for a change to a script tag
// (store.Deriver): its updated_at entry and its app's count. Script tags
// log no event and fire no webhook.
func Derive(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	old, next, err := records.DecodeChange[ScriptTag](c)
	if err != nil {
		return nil, err
	}
	appID, err := appOf(c.Key().PK)
	if err != nil {
		return nil, err
	}
	switch {
	case old == nil:
		return append(records.IndexOps(c.New, nil, next.entries(appID)), records.CountOp(Partition(appID), 1)), nil
	case next == nil:
		return append(records.IndexOps(nil, old.entries(appID), nil), records.CountOp(Partition(appID), -1)), nil
	}
	return records.IndexOps(c.New, old.entries(appID), next.entries(appID)), nil
}
