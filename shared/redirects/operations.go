package redirects

import (
	"context"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the redirect operations: plain functions of a context and
// typed input, used by the handlers.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs}
}

// Filter is the path and target filters of List and Count. Path is compared
// as stored (NormalizePath); "" means no filter.
type Filter struct{ Path, Target string }

// query is the partition a list reads: all redirects, or those of a target.
func (f Filter) query(sinceID int64) store.Query {
	q := store.Query{PK: partition}
	if f.Target != "" {
		q = store.Query{Index: store.GSI1, PK: targetIndexKey + f.Target}
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return q
}

// byPath finds the redirect of a path through its guard: two GetItems.
func (s Service) byPath(ctx context.Context, path string) (*Redirect, error) {
	var g guard
	if _, err := records.Get(ctx, s.Store, pathKey(path), &g); err != nil {
		return nil, err
	}
	var r Redirect
	if _, err := records.Get(ctx, s.Store, key(g.ID), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// List returns the window of the matching redirects in id order after
// sinceID, and where it lies. A path names at most one redirect, found
// through its guard; a target reads its GSI1 partition.
func (s Service) List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Redirect, records.Span, error) {
	if f.Path != "" {
		rd, err := s.byPath(ctx, f.Path)
		switch {
		case admin.ErrorCode(err) == admin.ENOTFOUND:
		case err != nil:
			return nil, records.Span{}, err
		case rd.ID > sinceID && (f.Target == "" || rd.Target == f.Target) && w.Offset == 0 && w.Cursor.Key == "":
			return []Redirect{*rd}, records.Span{}, nil
		}
		return nil, records.Span{}, nil
	}
	return records.Spanned[Redirect](records.ListWindow(ctx, s.Store, f.query(sinceID), nil, w))
}

// Count counts the matching redirects: a path's guard, a target's index
// partition, or the counter of all.
func (s Service) Count(ctx context.Context, f Filter) (int, error) {
	if f.Path != "" {
		rd, err := s.byPath(ctx, f.Path)
		switch {
		case admin.ErrorCode(err) == admin.ENOTFOUND:
			return 0, nil
		case err != nil:
			return 0, err
		case f.Target != "" && rd.Target != f.Target:
			return 0, nil
		}
		return 1, nil
	}
	return records.CountOf(ctx, s.Store, partition, f.query(0), nil)
}

// Get returns one redirect.
func (s Service) Get(ctx context.Context, id int64) (Redirect, error) {
	var rd Redirect
	_, err := records.Get(ctx, s.Store, key(id), &rd)
	return rd, err
}

// Create adds a redirect; its path guard, written in the same transaction,
// makes a second redirect of the path fail (path: has already been taken).
// The count follows from the change feed (Derive).
func (s Service) Create(ctx context.Context, in *Input) (Redirect, error) {
	var rd Redirect
	if err := in.apply(&rd, true); err != nil {
		return rd, err
	}
	_, err := records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		rd.ID = id
		it := rd.item(1)
		records.Stamp(ctx, &it, id) // the feed counts it (Derive)
		return []store.Op{store.Put(it, store.IfAbsent, 0), pathGuard(rd.Path, id)}, nil
	})
	if store.FailedOn(err, pathKey(rd.Path)) {
		return rd, admin.Invalid("path", admin.MsgTaken)
	}
	return rd, err
}

// Update changes a redirect; a new path moves its guard in the same
// transaction.
func (s Service) Update(ctx context.Context, id int64, in *Input) (Redirect, error) {
	var rd Redirect
	err := records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		if err := records.Decode(it, &rd); err != nil {
			return nil, err
		}
		oldPath := rd.Path
		if err := in.apply(&rd, false); err != nil {
			return nil, err
		}
		ops := []store.Op{records.PutNext(rd.item(it.Version))}
		if rd.Path != oldPath {
			ops = append(ops, pathGuard(rd.Path, id), store.Delete(pathKey(oldPath), store.Always, 0))
		}
		return ops, nil
	})
	if store.FailedOn(err, pathKey(rd.Path)) {
		return rd, admin.Invalid("path", admin.MsgTaken)
	}
	return rd, err
}

// Delete removes a redirect with its path guard; the feed counts it.
func (s Service) Delete(ctx context.Context, id int64) error {
	return records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		var rd Redirect
		if err := records.Decode(it, &rd); err != nil {
			return nil, err
		}
		return []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			store.Delete(pathKey(rd.Path), store.Always, 0),
		}, nil
	})
}

// Derive is the change feed's work for a change to a redirect
// (store.Deriver): its count, when it comes or goes.
func Derive(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	switch {
	case c.Old == nil:
		return []store.Op{records.CountOp(partition, 1)}, nil
	case c.New == nil:
		return []store.Op{records.CountOp(partition, -1)}, nil
	}
	return nil, nil
}
