package variants

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the variant operations: plain functions of a context and
// typed input, used by the handlers, the provider polls and the seed.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// ProductChanged follows a product's variant changes (smart collection membership).
	ProductChanged func(ctx context.Context, productID int64) error
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, ProductChanged: d.ProductChanged}
}

// List returns the window of a product's variants in position order after
// sinceID, and where it lies. A product's variants (at most
// catalog.MaxVariants) are read whole and paged in memory; a cursor's key is
// a position, so a page_info continues after the position its page ended
// at (a variant moved or deleted meanwhile moves the rest with it).
func (s Service) List(ctx context.Context, pid, sinceID int64, w records.Window) ([]catalog.Variant, records.Span, error) {
	if _, err := catalog.GetProduct(ctx, s.Store, pid); err != nil {
		return nil, records.Span{}, err
	}
	order, _, err := catalog.GetOrder(ctx, s.Store, pid)
	if err != nil {
		return nil, records.Span{}, err
	}
	vs, err := s.variantsOf(ctx, pid, order)
	if err != nil {
		return nil, records.Span{}, err
	}
	vs = slices.DeleteFunc(vs, func(v catalog.Variant) bool { return v.ID <= sinceID })
	page, span := records.SliceWindow(vs, positionKey, w)
	return page, span, nil
}

// positionKey is a variant's sort key in its product's list: its position.
func positionKey(v *catalog.Variant) string { return records.IDSK(int64(v.Position)) }

// Count returns how many variants a product has: its order item's length.
func (s Service) Count(ctx context.Context, pid int64) (int, error) {
	if _, err := catalog.GetProduct(ctx, s.Store, pid); err != nil {
		return 0, err
	}
	order, _, err := catalog.GetOrder(ctx, s.Store, pid)
	if err != nil {
		return 0, err
	}
	return len(order.IDs), nil
}

// Get returns one variant with its position.
//
// pid, when not 0, is the product a path names (Shopify's clients read and
// update a variant at /products/{product_id}/variants/{id}): a variant of
// another product is then not found.
func (s Service) Get(ctx context.Context, pid, id int64) (catalog.Variant, error) {
	v, _, err := s.getVariant(ctx, id)
	if err != nil {
		return v, err
	}
	if pid != 0 && v.ProductID != pid {
		return catalog.Variant{}, admin.NotFound
	}
	order, _, err := catalog.GetOrder(ctx, s.Store, v.ProductID)
	if err != nil {
		return v, err
	}
	v.Position = order.Position(v.ID)
	return v, nil
}

// Update changes a variant: an inventory_quantity_adjustment alone is an
// atomic add (adjust); anything else a compare-and-set of the variant and
// its product's state (modify).
// pid, when not 0, is the product the path names, as for Get; a variant's
// product never changes, so checking it first is enough.
func (s Service) Update(ctx context.Context, pid, id int64, in *Input) (catalog.Variant, error) {
	if pid != 0 {
		v, _, err := s.getVariant(ctx, id)
		if err != nil {
			return v, err
		}
		if v.ProductID != pid {
			return catalog.Variant{}, admin.NotFound
		}
	}
	if in.InventoryQuantityAdjustment != nil && *in.InventoryQuantityAdjustment != 0 && !in.hasOtherChanges() {
		return s.adjust(ctx, id, in)
	}
	v, _, err := s.modify(ctx, id, in, appOrigin(ctx))
	return v, err
}

// Create adds a variant to a product: the product's variant order item,
// conditioned on its version, is what concurrent creates race on (and what
// keeps the 100-variant limit), with the variant, its option claim, count,
// metafields, the Product event and products/update in one transaction.
func (s Service) Create(ctx context.Context, pid int64, in *Input) (catalog.Variant, error) {
	p, err := catalog.GetProduct(ctx, s.Store, pid)
	if err != nil {
		return catalog.Variant{}, err
	}
	now := admin.At(s.Clock.Now())
	v := catalog.Variant{ProductID: pid, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(&v, true); err != nil {
		return catalog.Variant{}, err
	}
	switch {
	case in.InventoryQuantityAdjustment != nil: // relative to nothing
		v.InventoryQuantity = *in.InventoryQuantityAdjustment
	case in.InventoryQuantity != nil:
		v.InventoryQuantity = *in.InventoryQuantity
	}
	v.OldInventoryQuantity = v.InventoryQuantity
	if err := s.checkImage(ctx, pid, v.ImageID); err != nil {
		return catalog.Variant{}, err
	}
	for attempt := 0; ; attempt++ {
		order, version, err := catalog.GetOrder(ctx, s.Store, pid)
		if err != nil {
			return catalog.Variant{}, err
		}
		if len(order.IDs) >= catalog.MaxVariants {
			return catalog.Variant{}, admin.Invalid("base", MsgTooMany)
		}
		vs, err := s.variantsOf(ctx, pid, order)
		if err != nil {
			return catalog.Variant{}, err
		}
		if err := s.checkUnique(ctx, &v, vs); err != nil {
			return catalog.Variant{}, err
		}
		v.ID = s.IDs.Next()
		pos := len(order.IDs) + 1
		if in.Position != nil {
			pos = min(*in.Position, pos)
		}
		next := catalog.Order{IDs: insertAt(order.IDs, v.ID, pos)}
		v.Position = pos
		vs = slices.Insert(vs, min(pos-1, len(vs)), v)
		renumber(vs)
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerVariant, v.ID, in.Metafields, now)
		if err != nil {
			return catalog.Variant{}, err
		}
		// The order first: its condition is what concurrent creates race on.
		ops := []store.Op{
			catalog.PutOrder(pid, next, version),
			store.Put(v.Item(1), store.IfAbsent, 0),
			claim(&v),
			records.CountOp(catalog.VariantPartition, 1),
		}
		ops = append(ops, mops...)
		cops, err := s.changeOps(ctx, p, vs, admin.AppFrom(ctx).Name)
		if err != nil {
			return catalog.Variant{}, err
		}
		ops = append(ops, cops...)
		ops = append(ops, stockJob(s.Clock, s.IDs, &v)...)
		mark, markOp := s.membershipMark(pid)
		err = records.Transact(ctx, s.Store, append(ops, markOp...)...)
		if err == nil {
			s.productChanged(ctx, pid, mark)
			return v, nil
		}
		if store.FailedOn(err, claimKey(&v)) {
			return catalog.Variant{}, errDuplicate(&v)
		}
		if !retry(ctx, err, attempt) {
			return catalog.Variant{}, err
		}
	}
}

// Delete removes a product's variant with its order entry, option claim,
// count and metafields; the variants after it move up.
func (s Service) Delete(ctx context.Context, pid, id int64) error {
	p, err := catalog.GetProduct(ctx, s.Store, pid)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		v, it, err := s.getVariant(ctx, id)
		if err != nil {
			return err
		}
		if v.ProductID != pid {
			return admin.NotFound
		}
		order, version, err := catalog.GetOrder(ctx, s.Store, pid)
		if err != nil {
			return err
		}
		// Positions come from the order: those after the variant move up.
		next := catalog.Order{IDs: slices.DeleteFunc(slices.Clone(order.IDs), func(x int64) bool { return x == id })}
		vs, err := s.variantsOf(ctx, pid, next)
		if err != nil {
			return err
		}
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			catalog.PutOrder(pid, next, version),
			release(&v),
			records.CountOp(catalog.VariantPartition, -1),
		}
		cops, err := s.changeOps(ctx, p, vs, admin.AppFrom(ctx).Name)
		if err != nil {
			return err
		}
		ops = append(ops, cops...)
		mark, markOp := s.membershipMark(pid)
		err = records.Transact(ctx, s.Store, append(ops, markOp...)...)
		if err == nil {
			s.productChanged(ctx, pid, mark)
			break
		}
		if !retry(ctx, err, attempt) {
			return err
		}
	}
	// The variant's metafields go after it, as many transactions as they need.
	records.AfterCommit(ctx, "variant's metafields", func() error {
		mops, err := metafields.DeleteOwnerOps(ctx, s.Store, metafields.OwnerVariant, id)
		if err != nil {
			return err
		}
		return records.TransactBatches(ctx, s.Store, mops)
	})
	return nil
}

const (
	wrapper, plural = "variant", "variants"
	topic           = "products/update"
)

// getVariant reads one variant (without its position); admin.NotFound if
// there is none.
func (s Service) getVariant(ctx context.Context, id int64) (catalog.Variant, store.Item, error) {
	it, err := s.Store.Get(ctx, catalog.VariantKey(id))
	if errors.Is(err, store.ErrNotFound) {
		return catalog.Variant{}, it, admin.NotFound
	}
	if err != nil {
		return catalog.Variant{}, it, err
	}
	v, err := catalog.DecodeVariant(&it)
	return v, it, err
}

// variantsOf reads the variants of order, in its order with their
// positions: one Query of the product's index partition, and a consistent
// GetItem for any variant of the order the index does not show yet. The
// order decides which variants exist; their field values may lag a write
// by a moment, which lists and payloads tolerate and checkUnique re-reads.
func (s Service) variantsOf(ctx context.Context, productID int64, order catalog.Order) ([]catalog.Variant, error) {
	byID := make(map[int64]catalog.Variant, len(order.IDs))
	items, err := records.List(ctx, s.Store, store.Query{Index: store.GSI1, PK: catalog.ProductVariantsIndex(productID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	for i := range items {
		v, err := catalog.DecodeVariant(&items[i])
		if err != nil {
			return nil, err
		}
		byID[v.ID] = v
	}
	var missing []int64
	for _, id := range order.IDs {
		if _, ok := byID[id]; !ok {
			missing = append(missing, id)
		}
	}
	if err := s.getAll(ctx, missing, byID); err != nil {
		return nil, err
	}
	out := make([]catalog.Variant, 0, len(order.IDs))
	for _, id := range order.IDs {
		if v, ok := byID[id]; ok {
			v.Position = len(out) + 1
			out = append(out, v)
		}
	}
	return out, nil
}

// getAll reads the variants ids into byID (records.Parallel); ids not found
// are left out.
func (s Service) getAll(ctx context.Context, ids []int64, byID map[int64]catalog.Variant) error {
	if len(ids) == 0 {
		return nil
	}
	found := make([]*catalog.Variant, len(ids))
	err := records.Parallel(ctx, len(ids), func(ctx context.Context, i int) error {
		v, _, err := s.getVariant(ctx, ids[i])
		switch {
		case err == nil:
			found[i] = &v
		case admin.ErrorCode(err) != admin.ENOTFOUND:
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, v := range found {
		if v != nil {
			byID[v.ID] = *v
		}
	}
	return nil
}

// checkUnique checks v's options against its siblings as the index shows
// them, re-reading any that seems to match (the index may lag an option
// change). This is what catches seeded variants; those written through the
// API are also held apart by their claims (claim), which no race can pass.
func (s Service) checkUnique(ctx context.Context, v *catalog.Variant, siblings []catalog.Variant) error {
	k := optionKey(v)
	for i := range siblings {
		if siblings[i].ID == v.ID || optionKey(&siblings[i]) != k {
			continue
		}
		cur, _, err := s.getVariant(ctx, siblings[i].ID)
		switch {
		case admin.ErrorCode(err) == admin.ENOTFOUND:
			continue
		case err != nil:
			return err
		case cur.ProductID == v.ProductID && optionKey(&cur) == k:
			return errDuplicate(v)
		}
	}
	return nil
}

// renumber sets the positions of vs (already in order).
func renumber(vs []catalog.Variant) {
	for i := range vs {
		vs[i].Position = i + 1
	}
}

// subject is the product as the events log names it.
func subject(p *catalog.Product) events.Subject {
	var handle string
	_ = json.Unmarshal(p.Raw["handle"], &handle) // a handle of another type reads as none
	return events.Subject{Type: events.Product, ID: p.ID, Path: "/products/" + handle, Label: p.Title}
}

// payload is the products/update body: the product's seeded fields with
// its variants as the change leaves them.
func payload(p *catalog.Product, vs []catalog.Variant, loc *time.Location) json.RawMessage {
	out := make(map[string]json.RawMessage, len(p.Raw)+1)
	maps.Copy(out, p.Raw)
	shown := slices.Clone(vs)
	for i := range shown {
		present(&shown[i], loc)
	}
	out["variants"] = records.Encode(shown)
	return records.Encode(out)
}

// changeOps are the writes every variant change commits with it: the
// Product update event (by author: the calling app's name, or the
// fulfillment service's for SetStock) and the products/update notification.
func (s Service) changeOps(ctx context.Context, p *catalog.Product, vs []catalog.Variant, author string) ([]store.Op, error) {
	shop := admin.ShopFrom(ctx)
	ops := events.Ops(events.New(s.IDs, subject(p), events.Update, "", author))
	nops, err := outbox.Notify(ctx, s.Store, s.IDs, s.Clock, topic, "product", payload(p, vs, shop.Location()),
		outbox.MetafieldsOf(metafields.OwnerProduct, p.ID))
	if err != nil {
		return nil, err
	}
	return append(ops, nops...), nil
}

// origin says who makes a change through modify.
type origin struct {
	// author is the events log's author of the change.
	author string
	// provider marks a fulfillment service's stock level (SetStock): it
	// writes nothing when the level is unchanged and asks for no stock job.
	provider bool
	// when, if set, must accept the variant as read, on every attempt;
	// otherwise nothing is written.
	when func(*catalog.Variant) bool
}

// appOrigin is the origin of an admin request: the calling app.
func appOrigin(ctx context.Context) origin { return origin{author: admin.AppFrom(ctx).Name} }

// membershipMark is the marker a change that can move productID in or out
// of smart collections commits with it (catalog.MembershipJobPartition),
// and its write; none when nothing follows variant changes.
func (s Service) membershipMark(productID int64) (store.Key, []store.Op) {
	if s.ProductChanged == nil {
		return store.Key{}, nil
	}
	k := catalog.MembershipJobKey(productID, s.IDs.Next())
	return k, []store.Op{catalog.MembershipJob(k)}
}

// productChanged tells smart collections that a product's variants changed
// and, once they followed, removes the change's marker. The change has
// committed: a failure here is logged, not returned, and the marker stays
// for smartcollections.Service.RunMembershipJobs, which heals what this missed.
func (s Service) productChanged(ctx context.Context, productID int64, mark store.Key) {
	if s.ProductChanged == nil {
		return
	}
	err := s.ProductChanged(ctx, productID)
	if err == nil {
		err = s.Store.Transact(ctx, store.Delete(mark, store.Always, 0))
	}
	if err != nil {
		slog.WarnContext(ctx, "variants: smart collection membership left to the membership jobs",
			"request_id", admin.RequestID(ctx), "product_id", productID, "error", err.Error())
	}
}

// retry says whether a write that failed with err should be tried again
// (a condition failed: another writer changed what it read) and waits a
// little, more the more often it lost.
func retry(ctx context.Context, err error, attempt int) bool {
	return errors.Is(err, store.ErrConditionFailed) && attempt+1 < records.Attempts && records.Wait(ctx, attempt+1) == nil
}

// checkImage checks that image_id names one of the product's images.
func (s Service) checkImage(ctx context.Context, productID int64, imageID *int64) error {
	if imageID == nil {
		return nil
	}
	_, err := s.Store.Get(ctx, store.Key{PK: parents.ChildPartition(parents.ProductPartition, productID, "image"), SK: records.IDSK(*imageID)})
	if errors.Is(err, store.ErrNotFound) {
		return admin.Invalid("image_id", admin.MsgInvalid)
	}
	return err
}

// insertAt places id in ids at 1-based position pos (clamped to the end).
func insertAt(ids []int64, id int64, pos int) []int64 {
	i := min(max(pos, 1)-1, len(ids))
	return slices.Insert(slices.Clone(ids), i, id)
}

// adjust applies an inventory_quantity_adjustment alone: one transaction of
// an atomic Add on the variant's stock with the event and the notification,
// so concurrent adjustments all count and none waits for another.
func (s Service) adjust(ctx context.Context, id int64, in *Input) (catalog.Variant, error) {
	var val admin.Validation
	in.validateQuantities(&val)
	if err := val.Err(); err != nil {
		return catalog.Variant{}, err
	}
	delta := *in.InventoryQuantityAdjustment
	v, _, err := s.getVariant(ctx, id)
	if err != nil {
		return v, err
	}
	p, err := catalog.GetProduct(ctx, s.Store, v.ProductID)
	if err != nil {
		return v, err
	}
	order, _, err := catalog.GetOrder(ctx, s.Store, v.ProductID)
	if err != nil {
		return v, err
	}
	vs, err := s.variantsOf(ctx, v.ProductID, order)
	if err != nil {
		return v, err
	}
	// The products/update payload must be written in the Add's transaction,
	// before the new stock level is known. It shows the state read above
	// plus the delta: exactly the state the Add produces when no other write
	// raced it; when one did, that write fires its own products/update with
	// its own view, and the stock level stored is still exact.
	after := v
	after.InventoryQuantity += delta
	after.OldInventoryQuantity = after.InventoryQuantity
	after.Position = order.Position(id)
	for i := range vs {
		if vs[i].ID == id {
			pos := vs[i].Position
			vs[i] = after
			vs[i].Position = pos
		}
	}
	ops := []store.Op{store.Add(catalog.VariantKey(id), store.IfPresent, map[string]int64{catalog.InventoryNum: delta})}
	cops, err := s.changeOps(ctx, p, vs, admin.AppFrom(ctx).Name)
	if err != nil {
		return v, err
	}
	ops = append(ops, cops...)
	ops = append(ops, stockJob(s.Clock, s.IDs, &v)...)
	mark, markOp := s.membershipMark(v.ProductID)
	err = records.Transact(ctx, s.Store, append(ops, markOp...)...)
	if store.FailedOn(err, catalog.VariantKey(id)) {
		return v, admin.NotFound // deleted since it was read
	}
	if err != nil {
		return v, err
	}
	s.productChanged(ctx, v.ProductID, mark)
	// The response shows the variant as stored now (this and any concurrent
	// adjustment included); if it is already gone, as this change left it.
	now, _, err := s.getVariant(ctx, id)
	if err != nil {
		return after, nil
	}
	now.Position = after.Position
	return now, nil
}

// modify applies any other update with an optimistic read-modify-write of
// the variant (an Add moves its version, so a racing adjustment makes it
// start over). A change of options moves the variant's claim; a move to
// another position rewrites the order, conditioned on the version read, so
// it takes turns with creates and deletes. It reports whether it wrote: a
// provider's unchanged stock level, or a variant o.when rejects, is not.
func (s Service) modify(ctx context.Context, id int64, in *Input, o origin) (catalog.Variant, bool, error) {
	var p *catalog.Product
	imageChecked := false
	for attempt := 0; ; attempt++ {
		v, it, err := s.getVariant(ctx, id)
		if err != nil {
			return v, false, err
		}
		if o.when != nil && !o.when(&v) {
			return v, false, nil
		}
		pid := v.ProductID
		before := v
		if err := in.apply(&v, false); err != nil {
			return v, false, err
		}
		switch {
		case in.InventoryQuantityAdjustment != nil:
			v.InventoryQuantity += *in.InventoryQuantityAdjustment
		case in.InventoryQuantity != nil:
			if in.OldInventoryQuantity != nil && *in.OldInventoryQuantity != before.InventoryQuantity {
				return v, false, admin.Invalid("inventory_quantity", mismatch(*in.OldInventoryQuantity, before.InventoryQuantity))
			}
			v.InventoryQuantity = *in.InventoryQuantity
		}
		v.OldInventoryQuantity = v.InventoryQuantity
		if o.provider && v.InventoryQuantity == before.InventoryQuantity {
			return before, false, nil
		}
		if p == nil {
			if p, err = catalog.GetProduct(ctx, s.Store, pid); err != nil {
				return v, false, err
			}
		}
		if !imageChecked && in.ImageID.Set {
			if err := s.checkImage(ctx, pid, v.ImageID); err != nil {
				return v, false, err
			}
			imageChecked = true
		}
		now := admin.At(s.Clock.Now())
		v.UpdatedAt = now
		reoptioned := optionKey(&v) != optionKey(&before)
		order, version, err := catalog.GetOrder(ctx, s.Store, pid)
		if err != nil {
			return v, false, err
		}
		next := order
		if in.Position != nil {
			next.IDs = insertAt(slices.DeleteFunc(slices.Clone(order.IDs), func(x int64) bool { return x == id }), id, *in.Position)
		}
		vs, err := s.variantsOf(ctx, pid, next)
		if err != nil {
			return v, false, err
		}
		if reoptioned {
			if err := s.checkUnique(ctx, &v, vs); err != nil {
				return v, false, err
			}
		}
		for i := range vs {
			if vs[i].ID == id {
				v.Position = vs[i].Position
				vs[i] = v
			}
		}
		ops := []store.Op{records.PutNext(v.Item(it.Version))}
		if reoptioned {
			ops = append(ops, claim(&v), release(&before))
		}
		if in.Position != nil {
			ops = append(ops, catalog.PutOrder(pid, next, version))
		}
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerVariant, id, in.Metafields, now)
		if err != nil {
			return v, false, err
		}
		ops = append(ops, mops...)
		cops, err := s.changeOps(ctx, p, vs, o.author)
		if err != nil {
			return v, false, err
		}
		ops = append(ops, cops...)
		if !o.provider {
			ops = append(ops, stockJob(s.Clock, s.IDs, &v)...)
		}
		var mark store.Key
		if affectsCollections(&before, &v) {
			var markOp []store.Op
			mark, markOp = s.membershipMark(pid)
			ops = append(ops, markOp...)
		}
		err = records.Transact(ctx, s.Store, ops...)
		if err == nil {
			if mark != (store.Key{}) {
				s.productChanged(ctx, pid, mark)
			}
			return v, true, nil
		}
		if reoptioned && store.FailedOn(err, claimKey(&v)) {
			return v, false, errDuplicate(&v)
		}
		if !retry(ctx, err, attempt) {
			return v, false, err
		}
	}
}

// mismatch is the message of a compare-and-set whose old_inventory_quantity
// is not the stored stock level.
func mismatch(old, stored int64) string {
	return "has changed: old_inventory_quantity " + strconv.FormatInt(old, 10) +
		" does not match the current inventory_quantity " + strconv.FormatInt(stored, 10)
}

// Product returns a seeded product (GraphQL's product(id:); REST has no
// product routes).
func (s Service) Product(ctx context.Context, id int64) (catalog.Product, error) {
	p, err := catalog.GetProduct(ctx, s.Store, id)
	if err != nil {
		return catalog.Product{}, err
	}
	return *p, nil
}

// Products returns the window of the seeded products in id order, and
// where it lies.
func (s Service) Products(ctx context.Context, w records.Window) ([]catalog.Product, records.Span, error) {
	items, span, err := records.ListWindow(ctx, s.Store, store.Query{PK: catalog.ProductPartition}, nil, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	out := make([]catalog.Product, len(items))
	for i := range items {
		p, err := catalog.DecodeProduct(&items[i])
		if err != nil {
			return nil, records.Span{}, err
		}
		out[i] = *p
	}
	return out, span, nil
}

// ProductsCount counts the seeded products: the partition's counter.
func (s Service) ProductsCount(ctx context.Context) (int, error) {
	return records.Count(ctx, s.Store, catalog.ProductPartition)
}

// All returns a product's variants in position order (at most
// catalog.MaxVariants).
func (s Service) All(ctx context.Context, pid int64) ([]catalog.Variant, error) {
	vs, _, err := s.List(ctx, pid, 0, records.Window{Limit: catalog.MaxVariants})
	return vs, err
}
