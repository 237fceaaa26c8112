package collects

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/customcollections/collection"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the collect endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/collects.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/collects/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/collects/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/collects.json", Scope: s, Handler: h.create},
		{Method: "DELETE", Path: "/com/collects/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "collect", "collects"

// Messages beyond part 7.
const (
	MsgUnknown   = "does not exist"
	MsgDuplicate = "already exists in this collection"
)

var errSmart = admin.Errorf(admin.EFORBIDDEN, "Cannot add products to a smart collection")

type filter struct{ productID, collectionID int64 }

func parseFilter(q url.Values) (filter, error) {
	var f filter
	var err error
	if f.productID, err = httpapi.ParseIDParam(q, "product_id"); err != nil {
		return f, err
	}
	f.collectionID, err = httpapi.ParseIDParam(q, "collection_id")
	return f, err
}

// isCustom reports whether a custom collection has the id.
func (h handler) isCustom(ctx context.Context, id int64) (bool, error) {
	_, err := h.Store.Get(ctx, collection.Key(id))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// find lists the matching collects in the filter's order: a collection's by
// id (creation), a product's by collection id; a smart collection's
// memberships appear as read-only collects.
func (h handler) find(ctx context.Context, f filter, sinceID int64, offset, limit int) ([]Collect, error) {
	q := store.Query{PK: Partition}
	var match records.Matcher
	switch {
	case f.collectionID != 0 && f.productID != 0:
		c, err := h.lookupPair(ctx, f.collectionID, f.productID)
		if err != nil || c == nil || c.ID <= sinceID || offset > 0 {
			return nil, err
		}
		return []Collect{*c}, nil
	case f.productID != 0:
		all, err := h.ofProduct(ctx, f.productID)
		if err != nil {
			return nil, err
		}
		all = slices.DeleteFunc(all, func(c Collect) bool { return c.ID <= sinceID })
		return all[min(offset, len(all)):min(offset+limit, len(all))], nil
	case f.collectionID != 0:
		custom, err := h.isCustom(ctx, f.collectionID)
		if err != nil {
			return nil, err
		}
		if !custom {
			q = store.Query{PK: smartMembers(f.collectionID)}
			if sinceID > 0 {
				match = func(it *store.Item) (bool, error) {
					c, err := decodeMember(it)
					return c.ID > sinceID, err
				}
			}
			items, err := records.List(ctx, h.Store, q, match, offset, limit)
			if err != nil {
				return nil, err
			}
			return decodeMembers(items)
		}
		q = store.Query{Index: store.GSI1, PK: CollectionIndex(f.collectionID)}
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	items, err := records.List(ctx, h.Store, q, nil, offset, limit)
	if err != nil {
		return nil, err
	}
	return records.DecodeAll[Collect](items)
}

// lookupPair finds the collect (or smart membership) of a product in a
// collection: GetItems of the guard and the collect, or of the membership.
func (h handler) lookupPair(ctx context.Context, collectionID, productID int64) (*Collect, error) {
	var g guard
	_, err := records.Get(ctx, h.Store, GuardKey(collectionID, productID), &g)
	if err == nil {
		var c Collect
		if _, err := records.Get(ctx, h.Store, Key(g.ID), &c); err != nil {
			if admin.ErrorCode(err) == admin.ENOTFOUND {
				return nil, nil
			}
			return nil, err
		}
		return &c, nil
	}
	if admin.ErrorCode(err) != admin.ENOTFOUND {
		return nil, err
	}
	it, err := h.Store.Get(ctx, store.Key{PK: smartMembers(collectionID), SK: records.IDSK(productID)})
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	c, err := decodeMember(&it)
	return &c, err
}

// ofProduct reads a product's collects and smart memberships (one Query of
// each index partition), by collection id.
func (h handler) ofProduct(ctx context.Context, productID int64) ([]Collect, error) {
	items, err := records.List(ctx, h.Store, store.Query{Index: store.GSI2, PK: ProductIndex(productID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	out, err := records.DecodeAll[Collect](items)
	if err != nil {
		return nil, err
	}
	members, err := records.List(ctx, h.Store, store.Query{Index: store.GSI2, PK: smartProductIndex(productID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	ms, err := decodeMembers(members)
	if err != nil {
		return nil, err
	}
	out = append(out, ms...)
	slices.SortStableFunc(out, func(a, b Collect) int { return cmp.Compare(a.CollectionID, b.CollectionID) })
	return out, nil
}

// decodeMember reads a smart collection membership as a collect.
func decodeMember(it *store.Item) (Collect, error) {
	var c Collect
	if err := records.Decode(it, &c); err != nil {
		return c, err
	}
	c.Featured, c.SortValue = false, SortValue(c.Position)
	return c, nil
}

func decodeMembers(items []store.Item) ([]Collect, error) {
	out := make([]Collect, len(items))
	for i := range items {
		var err error
		if out[i], err = decodeMember(&items[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func present(c *Collect, shop *admin.Shop) {
	loc := shop.Location()
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.In(loc), c.UpdatedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	list, err := h.find(r.Context(), f, pg.SinceID, pg.Offset(), pg.Limit)
	if err != nil {
		return err
	}
	for i := range list {
		present(&list[i], shop)
	}
	return httpapi.WriteList(w, plural, list, pg.Fields)
}

// count reads a custom collection's products_count, counts a smart
// collection's or a product's index partitions, or the count shards.
func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	var n int
	switch {
	case f.collectionID != 0 && f.productID != 0:
		var c *Collect
		c, err = h.lookupPair(ctx, f.collectionID, f.productID)
		if c != nil {
			n = 1
		}
	case f.productID != 0:
		var a, b int
		a, err = h.Store.Count(ctx, store.Query{Index: store.GSI2, PK: ProductIndex(f.productID)})
		if err == nil {
			b, err = h.Store.Count(ctx, store.Query{Index: store.GSI2, PK: smartProductIndex(f.productID)})
		}
		n = a + b
	case f.collectionID != 0:
		var it store.Item
		it, err = h.Store.Get(ctx, collection.Key(f.collectionID))
		switch {
		case err == nil:
			n = int(it.Nums[collection.ProductsCount])
		case errors.Is(err, store.ErrNotFound):
			n, err = h.Store.Count(ctx, store.Query{PK: smartMembers(f.collectionID)})
		}
	default:
		n, err = records.Count(ctx, h.Store, Partition)
	}
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var c Collect
	if _, err := records.Get(r.Context(), h.Store, Key(id), &c); err != nil {
		return err
	}
	present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &c, httpapi.ParseFields(r.URL.Query()))
}

// create links a product to a custom collection (Link).
func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	c, err := Link(r.Context(), h.Store, h.IDs, in)
	if err != nil {
		return err
	}
	present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &c, nil)
}

// delete removes the collect and decrements its collection's products_count
// in one transaction (or removes only the collect when the collection is
// being deleted meanwhile).
func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var c Collect
	if _, err := records.Get(ctx, h.Store, Key(id), &c); err != nil {
		return err
	}
	ops := append(unlinkOps(c.ID, c.CollectionID, c.ProductID),
		store.Add(collection.Key(c.CollectionID), store.IfPresent, map[string]int64{collection.ProductsCount: -1}))
	const collectAt, collectionAt = 0, 3
	err = records.Transact(ctx, h.Store, ops...)
	if store.FailedOp(err) == collectionAt {
		err = records.Transact(ctx, h.Store, ops[:collectionAt]...)
	}
	if store.FailedOp(err) == collectAt {
		return admin.NotFound // deleted meanwhile
	}
	if err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
