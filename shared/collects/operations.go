package collects

import (
	"context"
	"errors"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/customcollections/collection"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
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
func Link(ctx context.Context, st store.Store, gen *ids.Generator, in Input) (Collect, error) {
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
		if _, err := st.Get(ctx, collection.SmartKey(cid)); err == nil {
			return Collect{}, errSmart
		} else if !errors.Is(err, store.ErrNotFound) {
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
	now := admin.Now()
	var c Collect
	err = records.Retry(ctx, func() (bool, error) {
		c = New(gen.Next(), cid, pid, coll.Nums[collection.CollectSeq]+1, now)
		const collectAt, guardAt, collectionAt = 0, 1, 3
		ops := append(LinkOps(&c), store.Op{
			Kind: store.OpAdd, Key: coll.Key(), Cond: store.IfVersion, Version: coll.Version,
			Deltas: map[string]int64{collection.ProductsCount: 1, collection.CollectSeq: 1},
		})
		err := records.Transact(ctx, st, ops...)
		switch store.FailedOp(err) {
		case guardAt:
			return false, admin.Invalid("product_id", MsgDuplicate)
		case collectAt: // another process drew the same id: draw again
			return true, err
		case collectionAt:
			// Another write to the collection came first: read it again.
			if coll, err = readCollection(ctx, st, cid); admin.ErrorCode(err) == admin.ENOTFOUND {
				return false, admin.Invalid("collection", MsgUnknown) // deleted meanwhile
			} else if err != nil {
				return false, err
			}
			return true, &store.ConditionError{Index: collectionAt}
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

// EachCollectionOf calls fn with the id of every custom collection holding
// the product, in collection id order from after the given id: one paged
// Query of the product's index partition. fn may return records.Stop.
func EachCollectionOf(ctx context.Context, st store.Store, productID, after int64, fn func(collectionID int64) error) error {
	q := store.Query{Index: store.GSI2, PK: ProductIndex(productID)}
	if after > 0 {
		q.After = records.IDSK(after)
	}
	return records.Each(ctx, st, q, func(it *store.Item) error {
		var c Collect
		if err := records.Decode(it, &c); err != nil {
			return err
		}
		return fn(c.CollectionID)
	})
}
