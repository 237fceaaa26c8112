package pages

import (
	"context"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the page operations: plain functions of a context and typed
// input, used by the handlers. Changes are logged as the calling app
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

// Filter is the list and count filters of the Pages operations. A handle names at
// most one page, found through its guard; every other filter is served by a key
// range of the page partition or of one of its index entries (source).
type Filter struct {
	Title, Handle string
	publishing.Filter
}

func (f *Filter) matches(p *Page) bool {
	return (f.Title == "" || p.Title == f.Title) && (f.Handle == "" || p.Handle == f.Handle) &&
		f.Filter.Matches(p.CreatedAt, p.UpdatedAt, p.PublishedAt)
}

// source is the query a list or count of f reads, the most selective the
// filters allow (records.Plan): the title's entries, then an updated_at or
// published_at range (in that time's order), then the published state's
// entries, then the pages themselves. match checks what the keys leave
// unchecked; it is nil when they answer f exactly, so that a page of a
// single filter reads limit+1 entries. refs says the source holds Ref
// entries: a page of them reads each page it lists (records.ListSource).
func (f *Filter) source(sinceID int64) (q store.Query, match records.Matcher, refs bool) {
	p := records.Plan{All: store.Query{PK: partition}, Created: f.Created, SinceID: sinceID}
	if f.Title != "" {
		p.Keyed = append(p.Keyed, records.Exact(partition, "title", f.Title))
	}
	f.Filter.Keyed(&p, partition, true, func(published bool) store.Query { return store.Query{PK: statePartition(published)} })
	for i := range p.Keyed {
		p.Keyed[i].Ref = true // every page entry is a Ref (entries)
	}
	q, match = p.Read(func(it *store.Item) (bool, error) {
		var p Page
		if err := records.Decode(it, &p); err != nil {
			return false, err
		}
		return p.ID > sinceID && f.matches(&p), nil
	})
	return q, match, p.Refs()
}

// List returns the window of the matching pages after sinceID and where it
// lies: in id order, or in updated_at or published_at order when that
// range is the filter read (source).
func (s Service) List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Page, records.Span, error) {
	if f.Handle != "" {
		p, err := s.byHandle(ctx, f)
		if err != nil || p == nil || p.ID <= sinceID || w.Offset > 0 || w.Cursor.Key != "" {
			return nil, records.Span{}, err
		}
		return []Page{*p}, records.Span{}, nil
	}
	q, match, refs := f.source(sinceID)
	return records.Spanned[Page](records.ListSource(ctx, s.Store, q, match, refs, w))
}

// byHandle is the page a handle filter names, if it passes the others.
func (s Service) byHandle(ctx context.Context, f Filter) (*Page, error) {
	id, err := handles.Owner(ctx, s.Store, HandleNamespace, f.Handle)
	if err != nil || id == 0 {
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
	return &p, nil
}

// Count counts the matching pages: a counter when the filter is one of the
// counted partitions whole (all pages, a title, a published state), else
// the keys of the source's range, reading page data only where a filter is
// left for the matcher.
func (s Service) Count(ctx context.Context, f Filter) (int, error) {
	if f.Handle != "" {
		p, err := s.byHandle(ctx, f)
		if p == nil {
			return 0, err
		}
		return 1, nil
	}
	q, match, refs := f.source(0)
	if refs && match != nil {
		return records.CountSource(ctx, s.Store, q, match, refs)
	}
	return records.CountOf(ctx, s.Store, q.PK, q, match)
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
	p := Page{ShopID: shop.ID, Author: app.Name}
	if err := in.apply(&p, true); err != nil {
		return p, err
	}
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	_, _, err := handles.Create(ctx, s.Store, s.IDs, HandleNamespace, explicit, p.Title, func(id int64, handle string) ([]store.Op, error) {
		p.ID, p.Handle = id, handle
		// created_at is the id's second, so that created_at ranges are id ranges.
		now := admin.Time{Time: ids.Time(id)}
		p.CreatedAt, p.UpdatedAt = now, now
		p.PublishedAt, _ = publishing.Apply(admin.Time{}, in.Published, nil, true, now)
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerPage, id, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		it := p.item(1)
		records.Stamp(ctx, &it, s.IDs.Next())
		return append([]store.Op{store.Put(it, store.IfAbsent, 0)}, mops...), nil
	})
	return p, err
}

// Update changes a page: a new handle moves its claim, and the event is
// published, unpublished or update as the change of published state says.
func (s Service) Update(ctx context.Context, id int64, in *Input) (Page, error) {
	var p Page
	var claim store.Key // the handle or guard the change claims, if any
	err := records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		if err := records.Decode(it, &p); err != nil {
			return nil, err
		}
		oldHandle := p.Handle
		if err := in.apply(&p, false); err != nil {
			return nil, err
		}
		now := admin.At(s.Clock.Now())
		p.PublishedAt, _ = publishing.Apply(p.PublishedAt, in.Published, nil, false, now)
		p.UpdatedAt = now
		if in.Handle != nil {
			p.Handle = *in.Handle
		}
		next := p.item(it.Version + 1)
		records.Stamp(ctx, &next, s.IDs.Next())
		ops := []store.Op{store.Put(next, store.IfVersion, it.Version)}
		if p.Handle != oldHandle {
			claimOp := handles.Claim(HandleNamespace, p.Handle, p.ID)
			claim = claimOp.TargetKey()
			ops = append(ops, claimOp, handles.Release(HandleNamespace, oldHandle))
		}
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerPage, p.ID, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		return append(ops, mops...), nil
	})
	if store.FailedOn(err, claim) {
		return p, admin.Invalid("handle", admin.MsgTaken)
	}
	return p, err
}

// Delete removes a page with its handle claim in one transaction; its
// count, entries, destroy event and the clean-up of its metafields
// (CleanUp) are the change feed's.
func (s Service) Delete(ctx context.Context, id int64) error {
	return records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		var p Page
		if err := records.Decode(it, &p); err != nil {
			return nil, err
		}
		// Its tomb says who deleted it: its event is the change feed's.
		ops, _ := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		return append(ops, handles.Release(HandleNamespace, p.Handle)), nil
	})
}
