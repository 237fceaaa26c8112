package pages

import (
	"context"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the page operations: plain functions of a context and typed
// input, used by the handlers. Changes are logged as the calling app
// (admin.AppFrom).
type Service struct{ *platform.Deps }

// Filter is the list and count filters of §4.4: a handle names at most one
// page, found through its guard; the others are checked on each page read.
type Filter struct {
	Title, Handle string
	publishing.Filter
}

func (f *Filter) matches(p *Page) bool {
	return (f.Title == "" || p.Title == f.Title) && (f.Handle == "" || p.Handle == f.Handle) &&
		f.Filter.Matches(p.CreatedAt, p.UpdatedAt, p.PublishedAt)
}

func (f *Filter) empty() bool { return f.Title == "" && f.Handle == "" && f.Filter.Empty() }

// List returns the matching pages in id order after sinceID, skipping
// offset and returning at most limit.
func (s Service) List(ctx context.Context, f Filter, sinceID int64, offset, limit int) ([]Page, error) {
	if f.Handle != "" {
		id, err := handles.Owner(ctx, s.Store, HandleNamespace, f.Handle)
		if err != nil || id == 0 || id <= sinceID || offset > 0 {
			return nil, err
		}
		var p Page
		if _, err := records.Get(ctx, s.Store, key(id), &p); err != nil {
			if admin.ErrorCode(err) == admin.ENOTFOUND {
				return nil, nil
			}
			return nil, err
		}
		if !f.matches(&p) {
			return nil, nil
		}
		return []Page{p}, nil
	}
	q := store.Query{PK: partition}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	var match records.Matcher
	if !f.empty() {
		match = func(it *store.Item) (bool, error) {
			var p Page
			if err := records.Decode(it, &p); err != nil {
				return false, err
			}
			return f.matches(&p), nil
		}
	}
	items, err := records.List(ctx, s.Store, q, match, offset, limit)
	if err != nil {
		return nil, err
	}
	return records.DecodeAll[Page](items)
}

// Count counts the matching pages: unfiltered, the partition's counter.
func (s Service) Count(ctx context.Context, f Filter) (int, error) {
	if f.empty() {
		return records.Count(ctx, s.Store, partition)
	}
	pages, err := s.List(ctx, f, 0, 0, 1<<31-1)
	return len(pages), err
}

// Get returns one page.
func (s Service) Get(ctx context.Context, id int64) (Page, error) {
	var p Page
	_, err := records.Get(ctx, s.Store, key(id), &p)
	return p, err
}

// Create adds a page, authored by the calling app: the page, its handle
// claim (handles.Create), count, metafields and Page create event in one
// transaction.
func (s Service) Create(ctx context.Context, in *Input) (Page, error) {
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	now := admin.Now()
	p := Page{ShopID: shop.ID, Author: app.Name, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(&p, true); err != nil {
		return p, err
	}
	p.PublishedAt, _ = publishing.Apply(admin.Time{}, in.Published, nil, true, now)
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	_, _, err := handles.Create(ctx, s.Store, s.IDs, HandleNamespace, explicit, p.Title, func(id int64, handle string) ([]store.Op, error) {
		p.ID, p.Handle = id, handle
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerPage, id, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops := []store.Op{store.Put(p.item(1), store.IfAbsent, 0), records.CountOp(partition, 1)}
		ops = append(ops, mops...)
		return append(ops, events.Ops(events.New(s.IDs, p.subject(), events.Create, "", app.Name))...), nil
	})
	return p, err
}

// Update changes a page: a new handle moves its claim, and the event is
// published, unpublished or update as the change of published state says.
func (s Service) Update(ctx context.Context, id int64, in *Input) (Page, error) {
	app := admin.AppFrom(ctx)
	var p Page
	claimAt := -1
	err := records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		if err := records.Decode(it, &p); err != nil {
			return nil, err
		}
		oldHandle := p.Handle
		if err := in.apply(&p, false); err != nil {
			return nil, err
		}
		now := admin.Now()
		var change publishing.Change
		p.PublishedAt, change = publishing.Apply(p.PublishedAt, in.Published, nil, false, now)
		p.UpdatedAt = now
		if in.Handle != nil {
			p.Handle = *in.Handle
		}
		ops := []store.Op{records.PutNext(p.item(it.Version))}
		if p.Handle != oldHandle {
			claimAt = len(ops)
			ops = append(ops, handles.Claim(HandleNamespace, p.Handle, p.ID), handles.Release(HandleNamespace, oldHandle))
		}
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerPage, p.ID, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		return append(ops, events.Ops(events.New(s.IDs, p.subject(), events.UpdateVerb(change), "", app.Name))...), nil
	})
	if claimAt > 0 && store.FailedOp(err) == claimAt {
		return p, admin.Invalid("handle", admin.MsgTaken)
	}
	return p, err
}

// Delete removes a page with its handle claim and count in one transaction
// with its Page destroy event, then its metafields, as many transactions as
// they need.
func (s Service) Delete(ctx context.Context, id int64) error {
	app := admin.AppFrom(ctx)
	err := records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		var p Page
		if err := records.Decode(it, &p); err != nil {
			return nil, err
		}
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			handles.Release(HandleNamespace, p.Handle),
			records.CountOp(partition, -1),
		}
		return append(ops, events.Ops(events.New(s.IDs, p.subject(), events.Destroy, "", app.Name))...), nil
	})
	if err != nil {
		return err
	}
	mops, err := metafields.DeleteOwnerOps(ctx, s.Store, metafields.OwnerPage, id)
	if err != nil {
		return err
	}
	return records.TransactBatches(ctx, s.Store, mops)
}
