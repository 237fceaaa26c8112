package customcollections

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/collects"
	"github.com/storeadmin/adminapi/shared/customcollections/collection"
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

// Routes returns the custom collection endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/custom_collections.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/custom_collections/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/custom_collections/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/custom_collections.json", Scope: s, Handler: h.create, MaxBody: images.MaxBody},
		{Method: "PUT", Path: "/com/custom_collections/{id}.json", Scope: s, Handler: h.update, MaxBody: images.MaxBody},
		{Method: "DELETE", Path: "/com/custom_collections/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "custom_collection", "custom_collections"

// Webhook topics and the payload's resource name (§6.1).
const (
	TopicCreate = "collections/create"
	TopicUpdate = "collections/update"
	TopicDelete = "collections/delete"
	resource    = "collection"
)

// filter is the list and count filters of §4.6.
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
	f.Filter, err = publishing.ParseFilter(q, shop.Location())
	return f, err
}

// matches checks the filters read from the collection itself.
func (f *filter) matches(r *collection.Record) bool {
	return (f.title == "" || r.Title == f.title) && (f.handle == "" || r.Handle == f.handle) &&
		f.Filter.Matches(r.CreatedAt, r.UpdatedAt, r.PublishedAt)
}

func (f *filter) empty() bool {
	return f.title == "" && f.handle == "" && f.productID == 0 && f.Filter.Empty()
}

// lookup reads a collection; nil when there is none.
func (h handler) lookup(ctx context.Context, id int64) (*collection.Record, error) {
	var r collection.Record
	if _, err := records.Get(ctx, h.Store, collection.Key(id), &r); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return nil, nil
		}
		return nil, err
	}
	return &r, nil
}

// find lists the matching collections in id order. A handle names at most
// one collection, found through its guard; product_id reads the product's
// collects (one Query of its index partition, sorted by collection id) and
// each of their collections; other filters are checked on each collection read.
func (h handler) find(ctx context.Context, f *filter, sinceID int64, offset, limit int) ([]collection.Collection, error) {
	if f.handle != "" {
		id, err := handles.Owner(ctx, h.Store, collection.HandleNamespace, f.handle)
		if err != nil || id == 0 || id <= sinceID || offset > 0 {
			return nil, err
		}
		r, err := h.lookup(ctx, id) // nil for a smart collection's handle
		if err != nil || r == nil || !f.matches(r) {
			return nil, err
		}
		if f.productID != 0 {
			if in, err := collects.Linked(ctx, h.Store, id, f.productID); err != nil || !in {
				return nil, err
			}
		}
		return []collection.Collection{r.Collection}, nil
	}
	if f.productID != 0 {
		var out []collection.Collection
		err := collects.EachCollectionOf(ctx, h.Store, f.productID, sinceID, func(collectionID int64) error {
			r, err := h.lookup(ctx, collectionID)
			if err != nil || r == nil || !f.matches(r) {
				return err
			}
			if offset > 0 {
				offset--
				return nil
			}
			if out = append(out, r.Collection); len(out) == limit {
				return records.Stop
			}
			return nil
		})
		if err != nil && err != records.Stop {
			return nil, err
		}
		return out, nil
	}
	q := store.Query{PK: collection.Partition}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	var match records.Matcher
	if !f.empty() {
		match = func(it *store.Item) (bool, error) {
			var r collection.Record
			if err := records.Decode(it, &r); err != nil {
				return false, err
			}
			return f.matches(&r), nil
		}
	}
	items, err := records.List(ctx, h.Store, q, match, offset, limit)
	if err != nil {
		return nil, err
	}
	recs, err := records.DecodeAll[collection.Record](items)
	if err != nil {
		return nil, err
	}
	out := make([]collection.Collection, len(recs))
	for i := range recs {
		out[i] = recs[i].Collection
	}
	return out, nil
}

// present moves the timestamps into the shop's time zone.
func present(c *collection.Collection, shop *admin.Shop) {
	loc := shop.Location()
	c.UpdatedAt, c.PublishedAt = c.UpdatedAt.In(loc), c.PublishedAt.In(loc)
	if c.Image != nil {
		img := *c.Image
		img.CreatedAt = img.CreatedAt.In(loc)
		c.Image = &img
	}
}

// shown is the collection as responses and webhook payloads show it.
func shown(r *collection.Record, shop *admin.Shop) *collection.Collection {
	c := r.Collection
	present(&c, shop)
	return &c
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop := admin.ShopFrom(ctx)
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	list, err := h.find(ctx, &f, pg.SinceID, pg.Offset(), pg.Limit)
	if err != nil {
		return err
	}
	for i := range list {
		present(&list[i], shop)
	}
	return httpapi.WriteList(w, plural, list, pg.Fields)
}

// count takes every filter of the list (handle too).
func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(ctx))
	if err != nil {
		return err
	}
	if f.empty() {
		n, err := records.Count(ctx, h.Store, collection.Partition)
		if err != nil {
			return err
		}
		return httpapi.WriteCount(w, n)
	}
	list, err := h.find(ctx, &f, 0, 0, 1<<31-1)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, len(list))
}

// get answers the collection with products_count: one GetItem.
func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	it, err := h.Store.Get(ctx, collection.Key(id))
	if errors.Is(err, store.ErrNotFound) {
		return admin.NotFound
	}
	if err != nil {
		return err
	}
	rec, err := collection.Decode(&it)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, shown(&rec, admin.ShopFrom(ctx)), httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	now := admin.Now()
	rec := collection.Record{
		Collection: collection.Collection{PublishedScope: collection.PublishedScope, SortOrder: collection.DefaultSortOrder, UpdatedAt: now},
		CreatedAt:  now,
	}
	img, err := in.apply(&rec, true)
	if err != nil {
		return err
	}
	linked, err := products(ctx, h.Store, in.Collects)
	if err != nil {
		return err
	}
	rec.PublishedAt, _ = publishing.Apply(admin.Time{}, in.Published, nil, true, now)
	var imageOps []store.Op
	newImage := images.Updater{Client: h.Outbound, IDs: h.IDs, Shop: shop, Change: img}
	if imageOps, err = newImage.Apply(ctx, h.Store, &rec.Image, &rec.ImageFile); err != nil {
		return err
	}
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	n := int64(len(linked))
	rec.ProductsCount = &n
	_, _, err = handles.Create(ctx, h.Store, h.IDs, collection.HandleNamespace, explicit, rec.Title, func(id int64, handle string) ([]store.Op, error) {
		rec.ID, rec.Handle = id, handle
		// The linked products take positions 1..n, so collect_seq starts at n.
		item := rec.Item(1, map[string]int64{collection.ProductsCount: n, collection.CollectSeq: n})
		if len(item.Data) > records.MaxData {
			return nil, admin.Invalid("body_html", "is too long (the collection may take at most 350 KB stored)")
		}
		ops := []store.Op{store.Put(item, store.IfAbsent, 0), records.CountOp(collection.Partition, 1)}
		for i, pid := range linked {
			c := collects.New(h.IDs.Next(), id, pid, int64(i+1), now)
			ops = append(ops, collects.LinkOps(&c)...)
		}
		ops = append(ops, imageOps...)
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerCustomCollection, id, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		ops = append(ops, events.Ops(events.New(h.IDs, subject(&rec.Collection), events.Create, "", app.Name))...)
		nops, err := outbox.Notify(ctx, h.Store, h.IDs, TopicCreate, resource, shown(&rec, shop),
			outbox.MetafieldsOf(metafields.OwnerCustomCollection, id))
		if err != nil {
			return nil, err
		}
		ops = append(ops, nops...)
		if !fits(ops, 1) { // handles.Create adds the claim
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, shown(&rec, shop), nil)
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
	var rec collection.Record
	// A new image is resolved (downloaded) once, even if the write is retried.
	image := images.Updater{Client: h.Outbound, IDs: h.IDs, Shop: shop}
	claimAt := -1
	err = records.Update(ctx, h.Store, collection.Key(id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if rec, err = collection.Decode(it); err != nil {
			return nil, err
		}
		old := rec
		img, err := in.apply(&rec, false)
		if err != nil {
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
		// The numbers go back as read: the version condition fails if a
		// collect changed them since.
		put := records.PutNext(rec.Item(it.Version, it.Nums))
		if len(put.Item.Data) > records.MaxData {
			return nil, admin.Invalid("body_html", "is too long (the collection may take at most 350 KB stored)")
		}
		ops := []store.Op{put}
		claimAt = -1
		if rec.Handle != old.Handle {
			claimAt = len(ops)
			ops = append(ops, handles.Claim(collection.HandleNamespace, rec.Handle, rec.ID), handles.Release(collection.HandleNamespace, old.Handle))
		}
		ops = append(ops, fileOps...)
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerCustomCollection, rec.ID, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		ops = append(ops, events.Ops(events.New(h.IDs, subject(&rec.Collection), events.UpdateVerb(change), "", app.Name))...)
		nops, err := outbox.Notify(ctx, h.Store, h.IDs, TopicUpdate, resource, shown(&rec, shop),
			outbox.MetafieldsOf(metafields.OwnerCustomCollection, rec.ID))
		if err != nil {
			return nil, err
		}
		ops = append(ops, nops...)
		if !fits(ops, 0) {
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if claimAt > 0 && store.FailedOp(err) == claimAt {
		return admin.Invalid("handle", admin.MsgTaken)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, shown(&rec, shop), nil)
}

// delete removes the collection, its handle, count, image file and
// metafields in one transaction (the image and metafields in further ones
// when they do not fit), then its collects.
func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var rest []store.Op
	err = records.Update(ctx, h.Store, collection.Key(id), func(it *store.Item) ([]store.Op, error) {
		rec, err := collection.Decode(it)
		if err != nil {
			return nil, err
		}
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			handles.Release(collection.HandleNamespace, rec.Handle),
			records.CountOp(collection.Partition, -1),
		}
		ops = append(ops, events.Ops(events.New(h.IDs, subject(&rec.Collection), events.Destroy, "", app.Name))...)
		nops, err := outbox.Notify(ctx, h.Store, h.IDs, TopicDelete, resource, map[string]int64{"id": rec.ID})
		if err != nil {
			return nil, err
		}
		ops = append(ops, nops...)
		extra, err := images.DeleteFileOps(ctx, h.Store, rec.ImageFile)
		if err != nil {
			return nil, err
		}
		mops, err := metafields.DeleteOwnerOps(ctx, h.Store, metafields.OwnerCustomCollection, rec.ID)
		if err != nil {
			return nil, err
		}
		extra = append(extra, mops...)
		if all := append(slices.Clip(ops), extra...); fits(all, 0) {
			rest = nil
			return all, nil
		}
		rest = extra
		return ops, nil
	})
	if err != nil {
		return err
	}
	// Its collects and leftovers go after it: their collection is gone, so
	// removing them later is harmless, and each removal is idempotent.
	if err := collects.DeleteOfCollection(ctx, h.Store, id); err != nil {
		return err
	}
	if err := records.TransactBatches(ctx, h.Store, rest); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
