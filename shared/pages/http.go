package pages

import (
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the page endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeContent
	return []httpapi.Route{
		{Method: "GET", Path: "/web/pages.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/pages/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/pages/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/pages.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/pages/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/web/pages/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "page", "pages"

// filter is the list and count filters of §4.4.
type filter struct {
	title, handle string
	publishing.Filter
}

func parseFilter(q url.Values, shop *admin.Shop) (filter, error) {
	f := filter{title: q.Get("title"), handle: q.Get("handle")}
	var err error
	f.Filter, err = publishing.ParseFilter(q, shop.Location())
	return f, err
}

func (f *filter) matches(p *Page) bool {
	return (f.title == "" || p.Title == f.title) && (f.handle == "" || p.Handle == f.handle) &&
		f.Filter.Matches(p.CreatedAt, p.UpdatedAt, p.PublishedAt)
}

func (f *filter) empty() bool { return f.title == "" && f.handle == "" && f.Filter.Empty() }

// find lists the matching pages. A handle names at most one page, found
// through its guard; other filters are checked on each page read.
func (h handler) find(r *http.Request, f *filter, sinceID int64, offset, limit int) ([]Page, error) {
	ctx := r.Context()
	if f.handle != "" {
		id, err := handles.Owner(ctx, h.Store, HandleNamespace, f.handle)
		if err != nil || id == 0 || id <= sinceID || offset > 0 {
			return nil, err
		}
		var p Page
		if _, err := records.Get(ctx, h.Store, key(id), &p); err != nil {
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
	items, err := records.List(ctx, h.Store, q, match, offset, limit)
	if err != nil {
		return nil, err
	}
	return records.DecodeAll[Page](items)
}

func present(p *Page, shop *admin.Shop) {
	loc := shop.Location()
	p.CreatedAt, p.UpdatedAt, p.PublishedAt = p.CreatedAt.In(loc), p.UpdatedAt.In(loc), p.PublishedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	pages, err := h.find(r, &f, pg.SinceID, pg.Offset(), pg.Limit)
	if err != nil {
		return err
	}
	for i := range pages {
		present(&pages[i], shop)
	}
	return httpapi.WriteList(w, plural, pages, pg.Fields)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(ctx))
	if err != nil {
		return err
	}
	if f.empty() {
		n, err := records.Count(ctx, h.Store, partition)
		if err != nil {
			return err
		}
		return httpapi.WriteCount(w, n)
	}
	pages, err := h.find(r, &f, 0, 0, 1<<31-1)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, len(pages))
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var p Page
	if _, err := records.Get(r.Context(), h.Store, key(id), &p); err != nil {
		return err
	}
	present(&p, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &p, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	now := admin.Now()
	p := Page{ShopID: shop.ID, Author: app.Name, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(&p, true); err != nil {
		return err
	}
	p.PublishedAt, _ = publishing.Apply(admin.Time{}, in.Published, nil, true, now)
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	_, _, err := handles.Create(ctx, h.Store, h.IDs, HandleNamespace, explicit, p.Title, func(id int64, handle string) ([]store.Op, error) {
		p.ID, p.Handle = id, handle
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerPage, id, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops := []store.Op{store.Put(p.item(1), store.IfAbsent, 0), records.CountOp(partition, 1)}
		ops = append(ops, mops...)
		return append(ops, events.Ops(events.New(h.IDs, p.subject(), events.Create, "", app.Name))...), nil
	})
	if err != nil {
		return err
	}
	present(&p, shop)
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &p, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var p Page
	claimAt := -1
	err = records.Update(ctx, h.Store, key(id), func(it *store.Item) ([]store.Op, error) {
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
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerPage, p.ID, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		return append(ops, events.Ops(events.New(h.IDs, p.subject(), events.UpdateVerb(change), "", app.Name))...), nil
	})
	if claimAt > 0 && store.FailedOp(err) == claimAt {
		return admin.Invalid("handle", admin.MsgTaken)
	}
	if err != nil {
		return err
	}
	present(&p, shop)
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &p, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	err = records.Update(ctx, h.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		var p Page
		if err := records.Decode(it, &p); err != nil {
			return nil, err
		}
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			handles.Release(HandleNamespace, p.Handle),
			records.CountOp(partition, -1),
		}
		return append(ops, events.Ops(events.New(h.IDs, p.subject(), events.Destroy, "", app.Name))...), nil
	})
	if err != nil {
		return err
	}
	// The page's metafields go after it, as many transactions as they need.
	mops, err := metafields.DeleteOwnerOps(ctx, h.Store, metafields.OwnerPage, id)
	if err != nil {
		return err
	}
	if err := records.TransactBatches(ctx, h.Store, mops); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
