package collects

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
)

// Input is the body of a collect create.
type Input struct {
	ProductID    *int64 `json:"product_id"`
	CollectionID *int64 `json:"collection_id"`
}

// Link links a product to a custom collection at the end of its manual
// order.
//
// Positions come from the collection's collect_seq number: Link reads the
// collection item (number and version), writes position collect_seq+1, and
// in the same transaction adds 1 to collect_seq and products_count on the
// condition that the collection's version is still the one read. Two
// concurrent links that read the same collect_seq cannot both commit (the
// first bumps the version), and the loser reads again and takes the next
// position; so positions are distinct and, unlike a counter bumped outside
// the transaction, a link that fails (a duplicate) uses none up. The guard
// in the same transaction makes a concurrent second link of the same
// product fail, whichever commits first.
func Link(ctx context.Context, st store.Store, gen *ids.Generator, clk clock.Clock, in Input) (Collect, error) {
	var v admin.Validation
	if in.ProductID == nil || *in.ProductID <= 0 {
		v.Add("product", admin.MsgBlank)
	}
	if in.CollectionID == nil || *in.CollectionID <= 0 {
		v.Add("collection", admin.MsgBlank)
	}
	if err := v.Err(); err != nil {
		return Collect{}, err
	}
	pid, cid := *in.ProductID, *in.CollectionID
	coll, err := readCollection(ctx, st, cid)
	switch {
	case admin.ErrorCode(err) == admin.ENOTFOUND:
		if _, err := smartcollections.Lookup(ctx, st, cid); err == nil {
			return Collect{}, errSmart
		} else if admin.ErrorCode(err) != admin.ENOTFOUND {
			return Collect{}, err
		}
		v.Add("collection", MsgUnknown)
	case err != nil:
		return Collect{}, err
	}
	if _, err := catalog.GetProduct(ctx, st, pid); admin.ErrorCode(err) == admin.ENOTFOUND {
		v.Add("product", MsgUnknown)
	} else if err != nil {
		return Collect{}, err
	}
	if err := v.Err(); err != nil {
		return Collect{}, err
	}
	now := admin.At(clk.Now())
	var c Collect
	err = records.Retry(ctx, func() (bool, error) {
		c = New(gen.Next(), cid, pid, coll.Nums[collection.CollectSeq]+1, now)
		ops := LinkOps(&c)
		records.Stamp(ctx, &ops[0].Item, c.ID) // the change feed counts it (Derive)
		ops = append(ops, store.Op{
			Kind: store.OpAdd, Key: coll.Key(), Cond: store.IfVersion, Version: coll.Version,
			Deltas: map[string]int64{collection.ProductsCount: 1, collection.CollectSeq: 1},
		})
		err := records.Transact(ctx, st, ops...)
		failed, _ := store.FailedKey(err)
		switch {
		case err == nil:
		case failed == GuardKey(cid, pid):
			return false, admin.Invalid("product_id", MsgDuplicate)
		case failed == Key(c.ID): // another process drew the same id: draw again
			return true, err
		case failed == collection.Key(cid):
			// Another write to the collection came first: read it again.
			if coll, err = readCollection(ctx, st, cid); admin.ErrorCode(err) == admin.ENOTFOUND {
				return false, admin.Invalid("collection", MsgUnknown) // deleted meanwhile
			} else if err != nil {
				return false, err
			}
			return true, &store.ConditionError{Key: failed}
		}
		return false, err
	})
	return c, err
}

func readCollection(ctx context.Context, st store.Store, id int64) (store.Item, error) {
	it, err := st.Get(ctx, collection.Key(id))
	if errors.Is(err, store.ErrNotFound) {
		return it, admin.NotFound
	}
	return it, err
}

// Linked reports whether the product is in the custom collection: one GetItem
// of the pair's guard.
func Linked(ctx context.Context, st store.Store, collectionID, productID int64) (bool, error) {
	_, err := st.Get(ctx, GuardKey(collectionID, productID))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// CollectionsOf returns the window w of the ids of the custom collections
// holding the product that keep accepts, in collection id order from after
// the given id, and where it lies: one paged Query of the product's index
// partition, whose sort key is the collection id.
func CollectionsOf(ctx context.Context, st store.Store, productID, after int64, keep func(collectionID int64) (bool, error), w records.Window) ([]int64, records.Span, error) {
	q := store.Query{Index: store.GSI2, PK: ProductIndex(productID)}
	if after > 0 {
		q.After = records.IDSK(after)
	}
	items, span, err := records.ListWindow(ctx, st, q, func(it *store.Item) (bool, error) {
		id, err := records.ParseIDSK(it.GSI2SK)
		if err != nil {
			return false, err
		}
		return keep(id)
	}, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	out := make([]int64, len(items))
	for i := range items {
		out[i], _ = records.ParseIDSK(items[i].GSI2SK)
	}
	return out, span, nil
}

// Service holds the collect operations: plain functions of a context and
// typed input (Link, the create, is also a function of the store).
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

// isCustom reports whether a custom collection has the id.
func (s Service) isCustom(ctx context.Context, id int64) (bool, error) {
	_, err := s.Store.Get(ctx, collection.Key(id))
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// List returns the window of the matching collects after sinceID, and
// where it lies, in the filter's order: a collection's by id (creation), a
// product's by collection id; a smart collection's memberships appear as
// read-only collects. A collection and a product name at most one collect
// (a page without neighbours); a product's collects and smart memberships
// are read whole (one Query of each index partition) and paged in memory,
// a cursor's key being the collection id.
func (s Service) List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Collect, records.Span, error) {
	q := store.Query{PK: Partition}
	switch {
	case f.CollectionID != 0 && f.ProductID != 0:
		c, err := s.lookupPair(ctx, f.CollectionID, f.ProductID)
		if err != nil || c == nil || c.ID <= sinceID || w.Offset > 0 || w.Cursor.Key != "" {
			return nil, records.Span{}, err
		}
		return []Collect{*c}, records.Span{}, nil
	case f.ProductID != 0:
		all, err := s.ofProduct(ctx, f.ProductID)
		if err != nil {
			return nil, records.Span{}, err
		}
		all = slices.DeleteFunc(all, func(c Collect) bool { return c.ID <= sinceID })
		page, span := records.SliceWindow(all, func(c *Collect) string { return records.IDSK(c.CollectionID) }, w)
		return page, span, nil
	case f.CollectionID != 0:
		custom, err := s.isCustom(ctx, f.CollectionID)
		if err != nil {
			return nil, records.Span{}, err
		}
		if !custom {
			ms, span, err := smartcollections.Members(ctx, s.Store, f.CollectionID, sinceID, w)
			if err != nil {
				return nil, records.Span{}, err
			}
			return fromMembers(ms), span, nil
		}
		q = store.Query{Index: store.GSI1, PK: CollectionIndex(f.CollectionID)}
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return records.Spanned[Collect](records.ListWindow(ctx, s.Store, q, nil, w))
}

// lookupPair finds the collect (or smart membership) of a product in a
// collection: GetItems of the guard and the collect, or of the membership.
func (s Service) lookupPair(ctx context.Context, collectionID, productID int64) (*Collect, error) {
	var g guard
	_, err := records.Get(ctx, s.Store, GuardKey(collectionID, productID), &g)
	if err == nil {
		var c Collect
		if _, err := records.Get(ctx, s.Store, Key(g.ID), &c); err != nil {
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
	m, err := smartcollections.MemberOf(ctx, s.Store, collectionID, productID)
	if err != nil || m == nil {
		return nil, err
	}
	c := fromMember(m)
	return &c, nil
}

// ofProduct reads a product's collects and smart memberships (one Query of
// each index partition), by collection id.
func (s Service) ofProduct(ctx context.Context, productID int64) ([]Collect, error) {
	items, err := records.List(ctx, s.Store, store.Query{Index: store.GSI2, PK: ProductIndex(productID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	out, err := records.DecodeAll[Collect](items)
	if err != nil {
		return nil, err
	}
	ms, err := smartcollections.MembershipsOf(ctx, s.Store, productID)
	if err != nil {
		return nil, err
	}
	out = append(out, fromMembers(ms)...)
	slices.SortStableFunc(out, func(a, b Collect) int { return cmp.Compare(a.CollectionID, b.CollectionID) })
	return out, nil
}

// Count reads a custom collection's products_count, counts a smart
// collection's or a product's index partitions, or the count shards.
func (s Service) Count(ctx context.Context, f Filter) (int, error) {
	switch {
	case f.CollectionID != 0 && f.ProductID != 0:
		c, err := s.lookupPair(ctx, f.CollectionID, f.ProductID)
		if c != nil {
			return 1, err
		}
		return 0, err
	case f.ProductID != 0:
		a, err := s.Store.Count(ctx, store.Query{Index: store.GSI2, PK: ProductIndex(f.ProductID)})
		if err != nil {
			return 0, err
		}
		b, err := smartcollections.CountMembershipsOf(ctx, s.Store, f.ProductID)
		return a + b, err
	case f.CollectionID != 0:
		it, err := s.Store.Get(ctx, collection.Key(f.CollectionID))
		switch {
		case err == nil:
			return int(it.Nums[collection.ProductsCount]), nil
		case errors.Is(err, store.ErrNotFound):
			return smartcollections.CountMembers(ctx, s.Store, f.CollectionID)
		}
		return 0, err
	default:
		return records.Count(ctx, s.Store, Partition)
	}
}

// Get returns one collect.
func (s Service) Get(ctx context.Context, id int64) (Collect, error) {
	var c Collect
	_, err := records.Get(ctx, s.Store, Key(id), &c)
	return c, err
}

// Create links a product to a custom collection (Link).
func (s Service) Create(ctx context.Context, in Input) (Collect, error) {
	return Link(ctx, s.Store, s.IDs, s.Clock, in)
}

// Delete removes the collect, with its tomb saying who did, and decrements
// its collection's products_count in one transaction (or removes only the
// collect when the collection is being deleted meanwhile); the count of
// all collects is the change feed's.
func (s Service) Delete(ctx context.Context, id int64) error {
	var c Collect
	it, err := records.Get(ctx, s.Store, Key(id), &c)
	if err != nil {
		return err
	}
	removal, _ := records.Remove(ctx, &it, s.IDs.Next(), s.Clock.Now())
	unlink := append(removal, store.Delete(GuardKey(c.CollectionID, c.ProductID), store.Always, 0))
	ops := append(slices.Clip(unlink),
		store.Add(collection.Key(c.CollectionID), store.IfPresent, map[string]int64{collection.ProductsCount: -1}))
	err = records.Transact(ctx, s.Store, ops...)
	if store.FailedOn(err, collection.Key(c.CollectionID)) {
		err = records.Transact(ctx, s.Store, unlink...)
	}
	if store.FailedOn(err, Key(c.ID)) {
		return admin.NotFound // deleted meanwhile
	}
	return err
}
