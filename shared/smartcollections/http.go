package smartcollections

import (
	"context"
	"errors"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the smart collection endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/smart_collections.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/smart_collections/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/smart_collections.json", Scope: s, Handler: h.create, MaxBody: images.MaxBody},
		{Method: "PUT", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.update, MaxBody: images.MaxBody},
		{Method: "DELETE", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "smart_collection", "smart_collections"

// Webhook topics of §6.1 and the payload's resource name.
const (
	TopicCreate = "collections/create"
	TopicUpdate = "collections/update"
	TopicDelete = "collections/delete"
	resource    = "collection"
)

// filter is the list and count filters of §4.6/§4.7.
type filter struct {
	title, handle string
	productID     int64
	publishing.Filter
}

func parseFilter(q url.Values, shop *admin.Shop) (filter, error) {
	f := filter{title: q.Get("title"), handle: q.Get("handle")}
	var err error
	if f.productID, err = httpapi.ParseIDParam(q, "product_id"); err != nil {
		return f, err
	}
	if f.Filter, err = publishing.ParseFilter(q, shop.Location()); err != nil {
		return f, err
	}
	f.Created = dates.Range{} // collections have no created_at (§2.7)
	return f, nil
}

func (f *filter) matches(c *SmartCollection) bool {
	return (f.title == "" || c.Title == f.title) && (f.handle == "" || c.Handle == f.handle) &&
		f.Filter.Matches(admin.Time{}, c.UpdatedAt, c.PublishedAt)
}

func (f *filter) empty() bool {
	return f.title == "" && f.handle == "" && f.productID == 0 && f.Filter.Empty()
}

func (f *filter) matcher() records.Matcher {
	if f.empty() {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		r, err := decode(it)
		if err != nil {
			return false, err
		}
		return f.matches(&r.SmartCollection), nil
	}
}

// find lists the matching collections in id order. A handle names at most
// one collection, found through its guard (it may be a custom collection's,
// then nothing is found); product_id reads the product's memberships
// (GSI2) and each of those collections; otherwise the partition is read.
func (h handler) find(ctx context.Context, f *filter, sinceID int64, offset, limit int) ([]SmartCollection, error) {
	var ids []int64
	switch {
	case f.handle != "":
		id, err := handles.Owner(ctx, h.Store, HandleNamespace, f.handle)
		if err != nil || id == 0 || id <= sinceID || offset > 0 {
			return nil, err
		}
		if f.productID != 0 {
			if _, err := h.Store.Get(ctx, MemberKey(id, f.productID)); errors.Is(err, store.ErrNotFound) {
				return nil, nil
			} else if err != nil {
				return nil, err
			}
		}
		ids = []int64{id}
	case f.productID != 0:
		q := store.Query{Index: store.GSI2, PK: ProductMembersIndex(f.productID)}
		if sinceID > 0 {
			q.After = records.IDSK(sinceID)
		}
		err := scanQuery(ctx, h.Store, q, func(it *store.Item) error {
			id, err := records.ParseIDSK(it.GSI2SK)
			if err == nil {
				ids = append(ids, id)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	default:
		q := store.Query{PK: Partition}
		if sinceID > 0 {
			q.After = records.IDSK(sinceID)
		}
		items, err := records.List(ctx, h.Store, q, f.matcher(), offset, limit)
		if err != nil {
			return nil, err
		}
		out := make([]SmartCollection, 0, len(items))
		for i := range items {
			r, err := decode(&items[i])
			if err != nil {
				return nil, err
			}
			out = append(out, r.SmartCollection)
		}
		return out, nil
	}
	var out []SmartCollection
	for _, id := range ids {
		c, err := Lookup(ctx, h.Store, id)
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			continue // a custom collection's handle, or a collection being deleted
		}
		if err != nil {
			return nil, err
		}
		if !f.matches(c) {
			continue
		}
		if offset > 0 {
			offset--
			continue
		}
		out = append(out, *c)
		if len(out) == limit {
			break
		}
	}
	return out, nil
}

// scanQuery reads every page of q.
func scanQuery(ctx context.Context, st store.Store, q store.Query, fn func(it *store.Item) error) error {
	q.Limit = scanPage
	return records.Each(ctx, st, q, fn)
}

func present(c *SmartCollection, shop *admin.Shop) {
	loc := shop.Location()
	c.UpdatedAt, c.PublishedAt = c.UpdatedAt.In(loc), c.PublishedAt.In(loc)
	if c.Image != nil {
		img := *c.Image
		img.CreatedAt = img.CreatedAt.In(loc)
		c.Image = &img
	}
	if c.Rules == nil {
		c.Rules = []Rule{}
	}
}

// presented is a copy of c as responses and webhook payloads show it.
func presented(c *SmartCollection, shop *admin.Shop) *SmartCollection {
	out := *c
	present(&out, shop)
	return &out
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
	list, err := h.find(r.Context(), &f, pg.SinceID, pg.Offset(), pg.Limit)
	if err != nil {
		return err
	}
	for i := range list {
		present(&list[i], shop)
	}
	return httpapi.WriteList(w, plural, list, pg.Fields)
}

// count takes every filter of the list but paging and fields.
func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(ctx))
	if err != nil {
		return err
	}
	var n int
	switch {
	case f.empty():
		n, err = records.Count(ctx, h.Store, Partition)
	case f.handle != "" || f.productID != 0:
		var list []SmartCollection
		list, err = h.find(ctx, &f, 0, 0, 1<<31-1)
		n = len(list)
	default:
		n, err = records.CountMatching(ctx, h.Store, store.Query{PK: Partition}, f.matcher())
	}
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

// get is one GetItem: the count is an atomic number of the same item.
func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	c, err := Lookup(r.Context(), h.Store, id)
	if err != nil {
		return err
	}
	present(c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, c, httpapi.ParseFields(r.URL.Query()))
}

// refreshCount reads the collection's count after its membership was recomputed.
func (h handler) refreshCount(ctx context.Context, c *SmartCollection) error {
	it, err := h.Store.Get(ctx, Key(c.ID))
	if err != nil {
		return err
	}
	c.ProductsCount = it.Nums[CountNum]
	return nil
}

// create commits a new collection (with its handle, rules, image chunks,
// event and notification), then computes its membership.
func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	now := admin.Now()
	rec := record{
		SmartCollection: SmartCollection{PublishedScope: "global", SortOrder: DefaultSortOrder, UpdatedAt: now, Rules: []Rule{}},
		RulesVersion:    1,
	}
	_, img, err := in.apply(&rec, true)
	if err != nil {
		return err
	}
	var imageOps []store.Op
	newImage := images.Updater{Client: h.Outbound, IDs: h.IDs, Shop: shop, Change: img}
	if imageOps, err = newImage.Apply(ctx, h.Store, &rec.Image, &rec.ImageFile); err != nil {
		return err
	}
	rec.PublishedAt, _ = publishing.Apply(admin.Time{}, in.Published, nil, true, now)
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	_, _, err = handles.Create(ctx, h.Store, h.IDs, HandleNamespace, explicit, rec.Title, func(id int64, handle string) ([]store.Op, error) {
		rec.ID, rec.Handle = id, handle
		ops := []store.Op{
			store.Put(rec.item(1, 0), store.IfAbsent, 0),
			records.CountOp(Partition, 1),
			rulesPut(id, rec.Rules, rec.Disjunctive, 1),
		}
		ops = append(ops, imageOps...)
		ops = append(ops, events.Ops(events.New(h.IDs, rec.Subject(), events.Create, "", app.Name))...)
		nops, err := outbox.Notify(ctx, h.Store, h.IDs, TopicCreate, resource, presented(&rec.SmartCollection, shop))
		if err != nil {
			return nil, err
		}
		return append(ops, nops...), nil
	})
	if err != nil {
		return err
	}
	if len(rec.Rules) > 0 {
		if err := recompute(ctx, h.Store, h.IDs, rec.ID, ruleSet{rec.Rules, rec.Disjunctive}, 1, 0); err != nil {
			return err
		}
		if err := h.refreshCount(ctx, &rec.SmartCollection); err != nil {
			return err
		}
	}
	present(&rec.SmartCollection, shop)
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &rec.SmartCollection, nil)
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
	var rec record
	var rulesChanged bool
	// A new image is resolved (downloaded) once, even if the write is retried.
	image := images.Updater{Client: h.Outbound, IDs: h.IDs, Shop: shop}
	claimAt := -1
	err = records.Update(ctx, h.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if rec, err = decode(it); err != nil {
			return nil, err
		}
		old := rec
		var img images.Change
		if rulesChanged, img, err = in.apply(&rec, false); err != nil {
			return nil, err
		}
		image.Change = img
		fileOps, err := image.Apply(ctx, h.Store, &rec.Image, &rec.ImageFile)
		if err != nil {
			return nil, err
		}
		now := admin.Now()
		var change publishing.Change
		rec.PublishedAt, change = publishing.Apply(rec.PublishedAt, in.Published, nil, false, now)
		rec.UpdatedAt = now
		if in.Handle != nil {
			rec.Handle = *in.Handle
		}
		if rulesChanged {
			rec.RulesVersion++
		}
		// The count is carried over as read: a membership change since moved
		// the version, and this write starts over.
		ops := []store.Op{records.PutNext(rec.item(it.Version, it.Nums[CountNum]))}
		claimAt = -1
		if rec.Handle != old.Handle {
			claimAt = len(ops)
			ops = append(ops, handles.Claim(HandleNamespace, rec.Handle, rec.ID), handles.Release(HandleNamespace, old.Handle))
		}
		if rulesChanged {
			ops = append(ops, rulesPut(rec.ID, rec.Rules, rec.Disjunctive, rec.RulesVersion))
		}
		ops = append(ops, fileOps...)
		ops = append(ops, events.Ops(events.New(h.IDs, rec.Subject(), events.UpdateVerb(change), "", app.Name))...)
		nops, err := outbox.Notify(ctx, h.Store, h.IDs, TopicUpdate, resource, presented(&rec.SmartCollection, shop))
		if err != nil {
			return nil, err
		}
		return append(ops, nops...), nil
	})
	if claimAt > 0 && store.FailedOp(err) == claimAt {
		return admin.Invalid("handle", admin.MsgTaken)
	}
	if err != nil {
		return err
	}
	if rulesChanged {
		if err := recompute(ctx, h.Store, h.IDs, rec.ID, ruleSet{rec.Rules, rec.Disjunctive}, rec.RulesVersion, rec.ProductsCount); err != nil {
			return err
		}
		if err := h.refreshCount(ctx, &rec.SmartCollection); err != nil {
			return err
		}
	}
	present(&rec.SmartCollection, shop)
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &rec.SmartCollection, nil)
}

// delete removes the collection, its handle, rules, event and notification
// in one transaction; its membership items and image file go after it
// (idempotent deletes, as many transactions as they need).
func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var fileID int64
	err = records.Update(ctx, h.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		rec, err := decode(it)
		if err != nil {
			return nil, err
		}
		fileID = rec.ImageFile
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			handles.Release(HandleNamespace, rec.Handle),
			records.CountOp(Partition, -1),
			store.Delete(rulesKey(id), store.Always, 0),
		}
		ops = append(ops, events.Ops(events.New(h.IDs, rec.Subject(), events.Destroy, "", app.Name))...)
		nops, err := outbox.Notify(ctx, h.Store, h.IDs, TopicDelete, resource, presented(&rec.SmartCollection, shop))
		if err != nil {
			return nil, err
		}
		return append(ops, nops...), nil
	})
	if err != nil {
		return err
	}
	rest, err := deleteMembersOps(ctx, h.Store, id)
	if err != nil {
		return err
	}
	fops, err := images.DeleteFileOps(ctx, h.Store, fileID)
	if err != nil {
		return err
	}
	mops, err := metafields.DeleteOwnerOps(ctx, h.Store, metafields.OwnerSmartCollection, id)
	if err != nil {
		return err
	}
	if err := records.TransactBatches(ctx, h.Store, append(append(rest, fops...), mops...)); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
