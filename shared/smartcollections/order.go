package smartcollections

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// OrderInput is what PUT smart_collections/{id}/order takes (Shopify's
// SmartCollection.order): a sort order, and for a manual one the products
// to put first, in that order.
type OrderInput struct {
	SortOrder *string
	Products  []int64
}

// Order sets the collection's sort order (as an update of it does: event,
// notification) and, with products, their manual positions: the products
// given take positions 1 to n in that order, the other members follow in
// the order they had. Products must be members, each once, and the
// resulting sort order manual (422 naming products). The positions are
// written first, in transactions of at most 90 members, each on the
// condition that the member is still one (a member leaving meanwhile makes
// them be computed again), then the collection's update: its updated_at
// and notification follow the new order.
func (s Service) Order(ctx context.Context, id int64, o OrderInput) (SmartCollection, error) {
	c, err := s.Get(ctx, id)
	if err != nil {
		return SmartCollection{}, err
	}
	var v admin.Validation
	sortOrder := c.SortOrder
	if o.SortOrder != nil {
		if !slices.Contains(collection.SortOrders, *o.SortOrder) {
			v.Add("sort_order", admin.MsgNotInList)
		}
		sortOrder = *o.SortOrder
	}
	if len(o.Products) > 0 && sortOrder != "manual" {
		v.Add("products", "can be ordered only when sort_order is manual")
	}
	if err := v.Err(); err != nil {
		return SmartCollection{}, err
	}
	if len(o.Products) > 0 {
		if err := s.position(ctx, id, o.Products); err != nil {
			return SmartCollection{}, err
		}
	}
	return s.Update(ctx, id, &Input{Input: collection.Input{SortOrder: &sortOrder}})
}

// position renumbers the collection's members: products first, in order.
func (s Service) position(ctx context.Context, id int64, products []int64) error {
	return records.Retry(ctx, func() (bool, error) {
		var ms []Member
		err := scan(ctx, s.Store, MemberPartition(id), func(it *store.Item) error {
			var m Member
			err := records.Decode(it, &m)
			ms = append(ms, m)
			return err
		})
		if err != nil {
			return false, err
		}
		member := make(map[int64]bool, len(ms))
		for _, m := range ms {
			member[m.ProductID] = true
		}
		rank := make(map[int64]int, len(products))
		for i, p := range products {
			if _, dup := rank[p]; dup {
				return false, admin.Invalid("products", fmt.Sprintf("names product %d more than once", p))
			}
			if !member[p] {
				return false, admin.Invalid("products", fmt.Sprintf("product %d is not in this collection", p))
			}
			rank[p] = i
		}
		slices.SortStableFunc(ms, func(a, b Member) int {
			ra, oka := rank[a.ProductID]
			rb, okb := rank[b.ProductID]
			switch {
			case oka && okb:
				return cmp.Compare(ra, rb)
			case oka:
				return -1
			case okb:
				return 1
			}
			return cmp.Or(cmp.Compare(a.Position, b.Position), cmp.Compare(a.ProductID, b.ProductID))
		})
		now := admin.At(s.Clock.Now())
		var ops []store.Op
		for i := range ms {
			if m := &ms[i]; m.Position != int64(i+1) {
				m.Position, m.UpdatedAt = int64(i+1), now
				ops = append(ops, store.Put(m.item(), store.IfPresent, 0))
			}
		}
		err = records.TransactBatches(ctx, s.Store, ops)
		return store.FailedOnAny(err, ops), err // a member left meanwhile
	})
}
