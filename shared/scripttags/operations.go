package scripttags

import (
	"context"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the script tag operations: plain functions of a context and
// typed input, used by the handlers. Each works on the calling app's tags
// (admin.AppFrom).
type Service struct{ *platform.Deps }

// Filter is the list and count filters: Src narrows the app's partition
// through GSI1, the date ranges are checked on each record read.
type Filter struct {
	Src string
	dates.Stamps
}

func (f *Filter) query(appID, sinceID int64) store.Query {
	q := store.Query{PK: Partition(appID)}
	if f.Src != "" {
		q = store.Query{Index: store.GSI1, PK: srcIndexKey(appID, f.Src)}
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return q
}

func (f *Filter) matcher() records.Matcher {
	if f.Stamps.Empty() {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		var t ScriptTag
		if err := records.Decode(it, &t); err != nil {
			return false, err
		}
		return f.Stamps.Contains(t.CreatedAt.Time, t.UpdatedAt.Time), nil
	}
}

// List returns the window of the app's matching tags in id order after
// sinceID, and where it lies.
func (s Service) List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]ScriptTag, records.Span, error) {
	return records.Spanned[ScriptTag](records.ListWindow(ctx, s.Store, f.query(admin.AppFrom(ctx).ID, sinceID), f.matcher(), w))
}

// Count counts the app's matching tags (unfiltered: its counter).
func (s Service) Count(ctx context.Context, f Filter) (int, error) {
	appID := admin.AppFrom(ctx).ID
	return records.CountOf(ctx, s.Store, Partition(appID), f.query(appID, 0), f.matcher())
}

// Get returns one of the app's tags; another app's is admin.NotFound.
func (s Service) Get(ctx context.Context, id int64) (ScriptTag, error) {
	var t ScriptTag
	_, err := records.Get(ctx, s.Store, key(admin.AppFrom(ctx).ID, id), &t)
	return t, err
}

// Create adds a tag to the app's partition.
func (s Service) Create(ctx context.Context, in *Input) (ScriptTag, error) {
	appID := admin.AppFrom(ctx).ID
	var t ScriptTag
	if err := in.apply(&t, true); err != nil {
		return t, err
	}
	t.CreatedAt = admin.Now()
	t.UpdatedAt = t.CreatedAt
	_, err := records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		t.ID = id
		return []store.Op{
			store.Put(t.item(appID, 1), store.IfAbsent, 0),
			records.CountOp(Partition(appID), 1),
		}, nil
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
		t.UpdatedAt = admin.Now()
		return []store.Op{records.PutNext(t.item(appID, it.Version))}, nil
	})
	return t, err
}

// Delete removes one of the app's tags in one round trip: the delete only
// succeeds if the caller's tag exists.
func (s Service) Delete(ctx context.Context, id int64) error {
	appID := admin.AppFrom(ctx).ID
	err := records.Transact(ctx, s.Store,
		store.Delete(key(appID, id), store.IfPresent, 0),
		records.CountOp(Partition(appID), -1))
	if store.FailedOp(err) == 0 {
		return admin.NotFound
	}
	return err
}

// DeleteAllOfApp deletes every script tag of an app (uninstall, §2.13),
// a transaction per page of its partition.
func DeleteAllOfApp(ctx context.Context, st store.Store, appID int64) error {
	for {
		items, _, err := st.Query(ctx, store.Query{PK: Partition(appID), Limit: store.MaxTransactItems - 1})
		if err != nil || len(items) == 0 {
			return err
		}
		ops := make([]store.Op, 0, len(items)+1)
		for i := range items {
			ops = append(ops, store.Delete(items[i].Key(), store.Always, 0))
		}
		ops = append(ops, records.CountOp(Partition(appID), -int64(len(items))))
		if err := records.Transact(ctx, st, ops...); err != nil {
			return err
		}
	}
}
