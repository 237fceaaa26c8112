package variants

import (
	"context"
	"slices"

	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// OfProducts returns the variants of each product of pids in position
// order (a product with none has none), for a page of products read at
// once (GraphQL's products with their variants): the products' variant
// orders with Queries of the range of the order partition from the least
// product id to the greatest, and their variants with Queries of the
// range of the variant partition that holds their ids, each range read
// for at most a bounded number of items beyond the ones wanted; what a
// range could not settle within that is read item by item (GetItems,
// records.Parallel). A page of products in id order is exactly such a
// range, and the variants made with their products lie close together,
// so a page of 50 products with their variants is a few Queries, not 100.
// One product is read as List reads it: its order and its variants'
// index. The products themselves are not read: the caller has them.
func (s Service) OfProducts(ctx context.Context, pids []int64) (map[int64][]catalog.Variant, error) {
	out := make(map[int64][]catalog.Variant, len(pids))
	switch len(pids) {
	case 0:
		return out, nil
	case 1: // one product: its order and its variants' index, as List
		order, _, err := catalog.GetOrder(ctx, s.Store, pids[0])
		if err != nil {
			return nil, err
		}
		vs, err := s.variantsOf(ctx, pids[0], order)
		out[pids[0]] = vs
		return out, err
	}
	items, rest, err := rangeRead(ctx, s.Store, catalog.OrderPartition, pids, spare(len(pids)))
	if err != nil {
		return nil, err
	}
	orders := make(map[int64]catalog.Order, len(pids))
	for id, it := range items {
		var o catalog.Order
		if err := records.Decode(&it, &o); err != nil {
			return nil, err
		}
		orders[id] = o
	}
	late := make([]catalog.Order, len(rest))
	err = records.Parallel(ctx, len(rest), func(ctx context.Context, i int) (err error) {
		late[i], _, err = catalog.GetOrder(ctx, s.Store, rest[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, id := range rest {
		orders[id] = late[i]
	}
	var vids []int64
	for _, o := range orders {
		vids = append(vids, o.IDs...)
	}
	byID := make(map[int64]catalog.Variant, len(vids))
	if len(vids) > 0 {
		vitems, vrest, err := rangeRead(ctx, s.Store, catalog.VariantPartition, vids, spare(len(vids)))
		if err != nil {
			return nil, err
		}
		for id, it := range vitems {
			v, err := catalog.DecodeVariant(&it)
			if err != nil {
				return nil, err
			}
			byID[id] = v
		}
		if err := s.getAll(ctx, vrest, byID); err != nil {
			return nil, err
		}
	}
	for _, pid := range pids {
		vs := []catalog.Variant{}
		for _, id := range orders[pid].IDs {
			if v, ok := byID[id]; ok && v.ProductID == pid {
				v.Position = len(vs) + 1
				vs = append(vs, v)
			}
		}
		out[pid] = vs
	}
	return out, nil
}

// spare is how many items a range read of n wanted ones may read: twice
// as many, and a page more.
func spare(n int) int { return 2*n + 100 }

// rangeRead reads the items of partition pk whose ids are among ids with
// Queries of the key range from the least id to the greatest, reading at
// most budget items in all. It returns the items found by id and the ids
// the budget left unsettled (beyond the last key read), which the caller
// reads one by one; an id settled and not found has no item.
func rangeRead(ctx context.Context, st store.Store, pk string, ids []int64, budget int) (map[int64]store.Item, []int64, error) {
	sorted := slices.Clone(ids)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	found := make(map[int64]store.Item, len(sorted))
	q := store.Query{PK: pk, After: records.IDSK(sorted[0] - 1), Before: records.IDSK(sorted[len(sorted)-1] + 1)}
	read, last, done := 0, int64(0), false
	for !done && read < budget {
		q.Limit = min(budget-read, 1000)
		items, next, err := st.Query(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		read += len(items)
		for _, it := range items {
			id, err := records.ParseIDSK(it.SK)
			if err != nil {
				return nil, nil, err
			}
			last = id
			if _, ok := slices.BinarySearch(sorted, id); ok {
				found[id] = it
			}
		}
		done, q.Cursor = next == "", next
	}
	var rest []int64
	if !done {
		for _, id := range sorted {
			if _, ok := found[id]; !ok && id > last {
				rest = append(rest, id)
			}
		}
	}
	return found, rest, nil
}
