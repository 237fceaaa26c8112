package collects

import (
	"cmp"
	"context"
	"errors"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/customcollections/collection"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/ids"
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

type input struct {
	ProductID    *int64 `json:"product_id"`
	CollectionID *int64 `json:"collection_id"`
}

// maxAttempts bounds the retries of a create that lost its collection's
// version to concurrent collect writes (each round, one of them wins).
const maxAttempts = 50

// create links a product to a custom collection at the end of its manual
// order.
//
// Positions come from the collection's collect_seq number: the create reads
// the collection item (number and version), writes position collect_seq+1,
// and in the same transaction adds 1 to collect_seq and products_count on
// the condition that the collection's version is still the one read. Two
// concurrent creates that read the same collect_seq cannot both commit (the
// first bumps the version), and the loser reads again and takes the next
// position; so positions are distinct and, unlike a counter bumped outside
// the transaction, a create that fails (a duplicate) uses none up. The
// guard in the same transaction makes a concurrent second link of the same
// product fail, whichever commits first.
func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var v admin.Validation
	if in.ProductID == nil || *in.ProductID <= 0 {
		v.Add("product", admin.MsgBlank)
	}
	if in.CollectionID == nil || *in.CollectionID <= 0 {
		v.Add("collection", admin.MsgBlank)
	}
	if err := v.Err(); err != nil {
		return err
	}
	pid, cid := *in.ProductID, *in.CollectionID
	coll, err := h.readCollection(ctx, cid)
	switch {
	case admin.ErrorCode(err) == admin.ENOTFOUND:
		if _, err := h.Store.Get(ctx, collection.SmartKey(cid)); err == nil {
			return errSmart
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		v.Add("collection", MsgUnknown)
	case err != nil:
		return err
	}
	if pid > ids.Max {
		v.Add("product", MsgUnknown)
	} else if _, err := catalog.GetProduct(ctx, h.Store, pid); admin.ErrorCode(err) == admin.ENOTFOUND {
		v.Add("product", MsgUnknown)
	} else if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	now := admin.Now()
	for attempt := 1; ; attempt++ {
		c := New(h.IDs.Next(), cid, pid, coll.Nums[collection.CollectSeq]+1, now)
		const collectAt, guardAt, collectionAt = 0, 1, 3
		ops := append(LinkOps(&c), store.Op{
			Kind: store.OpAdd, Key: coll.Key(), Cond: store.IfVersion, Version: coll.Version,
			Deltas: map[string]int64{collection.ProductsCount: 1, collection.CollectSeq: 1},
		})
		err := records.Transact(ctx, h.Store, ops...)
		switch store.FailedOp(err) {
		case -1:
			if err != nil {
				return err
			}
			present(&c, admin.ShopFrom(ctx))
			return httpapi.WriteOne(w, http.StatusCreated, wrapper, &c, nil)
		case guardAt:
			return admin.Invalid("product_id", MsgDuplicate)
		case collectAt: // another process drew the same id: draw again
		case collectionAt:
			// Another write to the collection came first: read it again.
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			if coll, err = h.readCollection(ctx, cid); admin.ErrorCode(err) == admin.ENOTFOUND {
				return admin.Invalid("collection", MsgUnknown) // deleted meanwhile
			} else if err != nil {
				return err
			}
		default:
			return err
		}
		if attempt >= maxAttempts {
			return err
		}
	}
}

func (h handler) readCollection(ctx context.Context, id int64) (store.Item, error) {
	if id > ids.Max {
		return store.Item{}, admin.NotFound
	}
	it, err := h.Store.Get(ctx, collection.Key(id))
	if errors.Is(err, store.ErrNotFound) {
		return it, admin.NotFound
	}
	return it, err
}

// backoff waits a little before retry attempt (1-based), with full jitter,
// so that many concurrent creates do not retry in lockstep.
func backoff(ctx context.Context, attempt int) error {
	d := min(2*time.Millisecond<<min(attempt, 10), 200*time.Millisecond)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(rand.N(d)):
		return nil
	}
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
