// Package collects serves /com/collects (docs/openapi.yaml: schema Collect, the
// Collects operations): the links of products to custom collections. It also owns
// the collect item layout, which the custom collections endpoints use to link
// products on create and to remove a deleted collection's links.
//
// Items:
//   - collect/<id>, GSI1 collection#<collection id>#collect/<id> (a
//     collection's collects in creation order), GSI2
//     product#<product id>#collect/<collection id> (a product's collections).
//   - collect#guard#<collection id>/<product id>, Data {"id": collect id}:
//     one collect per product and collection, written in the collect's
//     transaction; its partition is also the strongly consistent list of a
//     collection's collects that a collection delete removes.
//   - count#collect: the sharded count of all collects, the change feed's
//     (Derive): a collect created by its endpoint is stamped
//     (records.Stamp); those a custom collection's create links are
//     counted by that change; every removal of a collect, a clean-up's
//     too, is counted down.
//
// Every collect create and delete changes the collection's products_count
// (and a create its collect_seq) in the same transaction, exact in the
// request, so the collection's single read is one GetItem.
//
// Smart collections keep their memberships (package smartcollections);
// they are listed here as read-only collects, read through that package's
// exported reads.
package collects

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
)

// Collect is the stored and returned record.
type Collect struct {
	ID           int64      `json:"id"`
	CollectionID int64      `json:"collection_id"`
	ProductID    int64      `json:"product_id"`
	Featured     bool       `json:"featured"`
	Position     int64      `json:"position"`
	SortValue    string     `json:"sort_value"`
	CreatedAt    admin.Time `json:"created_at"`
	UpdatedAt    admin.Time `json:"updated_at"`
}

// Messages beyond the contract's own validation messages.
const (
	MsgUnknown   = "does not exist"
	MsgDuplicate = "already exists in this collection"
)

var errSmart = admin.Errorf(admin.EFORBIDDEN, "Cannot add products to a smart collection")

// Partition holds every collect by id (and names their count).
const Partition = "collect"

// Key addresses a collect.
func Key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

// CollectionIndex is the GSI1 partition of a custom collection's collects.
func CollectionIndex(collectionID int64) string {
	return "collection#" + strconv.FormatInt(collectionID, 10) + "#collect"
}

// ProductIndex is the GSI2 partition of a product's collects, sorted by
// collection id.
func ProductIndex(productID int64) string {
	return "product#" + strconv.FormatInt(productID, 10) + "#collect"
}

// GuardKey is the item keeping one collect per collection and product.
func GuardKey(collectionID, productID int64) store.Key {
	return store.Key{PK: guardPartition(collectionID), SK: records.IDSK(productID)}
}

func guardPartition(collectionID int64) string {
	return "collect#guard#" + strconv.FormatInt(collectionID, 10)
}

// Filter is the list and count filters of the Collects operations: a product's
// collects, a collection's, or the one of both (0: not given).
type Filter struct{ ProductID, CollectionID int64 }

// fromMember is a smart collection membership shown as a read-only collect.
func fromMember(m *smartcollections.Member) Collect {
	return Collect{
		ID: m.ID, CollectionID: m.CollectionID, ProductID: m.ProductID, Position: m.Position,
		SortValue: SortValue(m.Position), CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt,
	}
}

func fromMembers(ms []smartcollections.Member) []Collect {
	out := make([]Collect, len(ms))
	for i := range ms {
		out[i] = fromMember(&ms[i])
	}
	return out
}

// SortValue is a position zero-padded to 10 digits (schema Collect).
func SortValue(position int64) string { return fmt.Sprintf("%010d", position) }

// New is a collect of a product in a collection at a position.
func New(id, collectionID, productID, position int64, now admin.Time) Collect {
	return Collect{
		ID: id, CollectionID: collectionID, ProductID: productID, Position: position,
		SortValue: SortValue(position), CreatedAt: now, UpdatedAt: now,
	}
}

// Item is the collect's item.
func (c *Collect) Item() store.Item {
	return store.Item{
		PK: Partition, SK: records.IDSK(c.ID),
		GSI1PK: CollectionIndex(c.CollectionID), GSI1SK: records.IDSK(c.ID),
		GSI2PK: ProductIndex(c.ProductID), GSI2SK: records.IDSK(c.CollectionID),
		Version: 1, Data: records.Encode(c),
	}
}

// LinkOps are the writes of a new collect: its item and its guard (failing
// when the product is already in the collection). The collection's
// numbers are the caller's: they depend on how it read them. A collect
// linked by its own request is stamped as the request's change (Link:
// records.Stamp), so the change feed counts it (Derive); those a custom
// collection's create links are not: that change counts them
// (customcollections.Derive, from the collection's products_count), in
// one op, and their creates pass the feed without work.
func LinkOps(c *Collect) []store.Op {
	g := GuardKey(c.CollectionID, c.ProductID)
	return []store.Op{
		store.Put(c.Item(), store.IfAbsent, 0),
		store.Put(store.Item{PK: g.PK, SK: g.SK, Version: 1, Data: records.Encode(guard{c.ID})}, store.IfAbsent, 0),
	}
}

// unlinkOps are the writes removing a collect (its first op fails when the
// collect is gone already), without the collection's numbers; the count is
// the change feed's.
func unlinkOps(id, collectionID, productID int64) []store.Op {
	return []store.Op{
		store.Delete(Key(id), store.IfPresent, 0),
		store.Delete(GuardKey(collectionID, productID), store.Always, 0),
	}
}

// Derive is the change feed's work for a change to a collect
// (store.Deriver): the count of all collects, when one comes or goes.
// Collects log no event and fire no webhook.
func Derive(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	switch {
	case c.Old == nil:
		return []store.Op{records.CountOp(Partition, 1)}, nil
	case c.New == nil:
		return []store.Op{records.CountOp(Partition, -1)}, nil
	}
	return nil, nil
}

type guard struct {
	ID int64 `json:"id"`
}

// DeleteOfCollection removes every collect of a deleted collection. It reads
// the collection's guard partition (a consistent read of the table, so it
// sees every collect committed before the collection's delete) and deletes
// in batches; a collect deleted meanwhile by its own endpoint is skipped
// (the change feed counts each removal once).
func DeleteOfCollection(ctx context.Context, st store.Store, collectionID int64) error {
	items, err := records.List(ctx, st, store.Query{PK: guardPartition(collectionID)}, nil, 0, 1<<31-1)
	if err != nil {
		return err
	}
	var groups [][]store.Op
	for i := range items {
		var g guard
		if err := records.Decode(&items[i], &g); err != nil {
			return err
		}
		pid, err := records.ParseIDSK(items[i].SK)
		if err != nil {
			return err
		}
		groups = append(groups, unlinkOps(g.ID, collectionID, pid))
	}
	// Two ops each, and, where the local feed runs over DynamoDB Local (the
	// tests), the two pending images of each removal (store.Feed), which
	// DynamoDB counts.
	const perBatch = store.MaxTransactItems / 4
	for len(groups) > 0 {
		batch := groups[:min(len(groups), perBatch)]
		for len(batch) > 0 {
			var ops []store.Op
			for _, g := range batch {
				ops = append(ops, g...)
			}
			err := records.Transact(ctx, st, ops...)
			if err == nil {
				break
			}
			// That collect is gone already: drop it and commit the others.
			failed, _ := store.FailedKey(err)
			gone := slices.IndexFunc(batch, func(g []store.Op) bool { return g[0].TargetKey() == failed })
			if gone < 0 {
				return err
			}
			batch = append(batch[:gone:gone], batch[gone+1:]...)
		}
		groups = groups[min(len(groups), perBatch):]
	}
	return nil
}
