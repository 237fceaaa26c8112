package variants

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/storeadmin/adminapi/shared/parents"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the variant endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/products/{product_id}/variants.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/products/{product_id}/variants/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/variants/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/products/{product_id}/variants.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/com/variants/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/com/products/{product_id}/variants/{id}.json", Scope: s, Handler: h.delete},
	}
}

const (
	wrapper, plural = "variant", "variants"
	topic           = "products/update"
	// maxAttempts bounds the tries of a write that lost a race (another
	// write of the product's order or of the variant got there first).
	maxAttempts = 40
	// readers bounds the concurrent reads of one request.
	readers = 16
)

// present moves a variant's timestamps into the shop's zone.
func present(v *catalog.Variant, loc *time.Location) {
	v.CreatedAt, v.UpdatedAt = v.CreatedAt.In(loc), v.UpdatedAt.In(loc)
}

// getVariant reads one variant (without its position); admin.NotFound if
// there is none.
func (h handler) getVariant(ctx context.Context, id int64) (catalog.Variant, store.Item, error) {
	it, err := h.Store.Get(ctx, catalog.VariantKey(id))
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
func (h handler) variantsOf(ctx context.Context, productID int64, order catalog.Order) ([]catalog.Variant, error) {
	byID := make(map[int64]catalog.Variant, len(order.IDs))
	items, err := records.List(ctx, h.Store, store.Query{Index: store.GSI1, PK: catalog.ProductVariantsIndex(productID)}, nil, 0, 1<<31-1)
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
	if err := h.getAll(ctx, missing, byID); err != nil {
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

// getAll reads the variants ids into byID, readers at a time; ids not found
// are left out.
func (h handler) getAll(ctx context.Context, ids []int64, byID map[int64]catalog.Variant) error {
	if len(ids) == 0 {
		return nil
	}
	found := make([]*catalog.Variant, len(ids))
	errs := make([]error, len(ids))
	sem := make(chan struct{}, readers)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			v, _, err := h.getVariant(ctx, id)
			switch {
			case err == nil:
				found[i] = &v
			case admin.ErrorCode(err) != admin.ENOTFOUND:
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
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
func (h handler) checkUnique(ctx context.Context, v *catalog.Variant, siblings []catalog.Variant) error {
	k := optionKey(v)
	for i := range siblings {
		if siblings[i].ID == v.ID || optionKey(&siblings[i]) != k {
			continue
		}
		cur, _, err := h.getVariant(ctx, siblings[i].ID)
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
	json.Unmarshal(p.Raw["handle"], &handle)
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
func (h handler) changeOps(ctx context.Context, p *catalog.Product, vs []catalog.Variant, author string) ([]store.Op, error) {
	shop := admin.ShopFrom(ctx)
	ops := events.Ops(events.New(h.IDs, subject(p), events.Update, "", author))
	nops, err := delivery.Notify(ctx, h.Store, h.IDs, topic, "product", payload(p, vs, shop.Location()),
		delivery.MetafieldsOf(metafields.OwnerProduct, p.ID))
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

// productChanged tells smart collections that a product's variants changed.
// The change has committed; a failure here is logged, not returned.
func (h handler) productChanged(ctx context.Context, productID int64) {
	if h.ProductChanged == nil {
		return
	}
	if err := h.ProductChanged(ctx, productID); err != nil {
		slog.WarnContext(ctx, "variants: product changed hook failed",
			"request_id", admin.RequestID(ctx), "product_id", productID, "error", err.Error())
	}
}

// retry says whether a write that failed with err should be tried again
// (a condition failed: another writer changed what it read) and waits a
// little, more the more often it lost.
func retry(ctx context.Context, err error, attempt int) bool {
	if store.FailedOp(err) < 0 || attempt+1 >= maxAttempts {
		return false
	}
	d := time.Duration(rand.IntN(2*min(attempt, 10)+2)+1) * time.Millisecond
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// checkImage checks that image_id names one of the product's images.
func (h handler) checkImage(ctx context.Context, productID int64, imageID *int64) error {
	if imageID == nil {
		return nil
	}
	_, err := h.Store.Get(ctx, store.Key{PK: parents.ChildPartition(parents.ProductPartition, productID, "image"), SK: records.IDSK(*imageID)})
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

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	if _, err := catalog.GetProduct(ctx, h.Store, pid); err != nil {
		return err
	}
	order, _, err := catalog.GetOrder(ctx, h.Store, pid)
	if err != nil {
		return err
	}
	vs, err := h.variantsOf(ctx, pid, order)
	if err != nil {
		return err
	}
	page := make([]catalog.Variant, 0, min(len(vs), pg.Limit))
	skip := pg.Offset()
	loc := admin.ShopFrom(ctx).Location()
	for i := range vs {
		if vs[i].ID <= pg.SinceID {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(page) == pg.Limit {
			break
		}
		present(&vs[i], loc)
		page = append(page, vs[i])
	}
	return httpapi.WriteList(w, plural, page, pg.Fields)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	if _, err := catalog.GetProduct(ctx, h.Store, pid); err != nil {
		return err
	}
	order, _, err := catalog.GetOrder(ctx, h.Store, pid)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, len(order.IDs))
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	v, _, err := h.getVariant(ctx, id)
	if err != nil {
		return err
	}
	order, _, err := catalog.GetOrder(ctx, h.Store, v.ProductID)
	if err != nil {
		return err
	}
	v.Position = order.Position(v.ID)
	present(&v, admin.ShopFrom(ctx).Location())
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &v, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	p, err := catalog.GetProduct(ctx, h.Store, pid)
	if err != nil {
		return err
	}
	now := admin.Now()
	v := catalog.Variant{ProductID: pid, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(&v, true); err != nil {
		return err
	}
	switch {
	case in.InventoryQuantityAdjustment != nil: // relative to nothing
		v.InventoryQuantity = *in.InventoryQuantityAdjustment
	case in.InventoryQuantity != nil:
		v.InventoryQuantity = *in.InventoryQuantity
	}
	v.OldInventoryQuantity = v.InventoryQuantity
	if err := h.checkImage(ctx, pid, v.ImageID); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		order, version, err := catalog.GetOrder(ctx, h.Store, pid)
		if err != nil {
			return err
		}
		if len(order.IDs) >= catalog.MaxVariants {
			return admin.Invalid("base", MsgTooMany)
		}
		vs, err := h.variantsOf(ctx, pid, order)
		if err != nil {
			return err
		}
		if err := h.checkUnique(ctx, &v, vs); err != nil {
			return err
		}
		v.ID = h.IDs.Next()
		pos := len(order.IDs) + 1
		if in.Position != nil {
			pos = min(*in.Position, pos)
		}
		next := catalog.Order{IDs: insertAt(order.IDs, v.ID, pos)}
		v.Position = pos
		vs = slices.Insert(vs, min(pos-1, len(vs)), v)
		renumber(vs)
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerVariant, v.ID, in.Metafields, now)
		if err != nil {
			return err
		}
		// The order first: its condition is what concurrent creates race on.
		ops := []store.Op{
			catalog.PutOrder(pid, next, version),
			store.Put(v.Item(1), store.IfAbsent, 0),
			claim(&v),
			records.CountOp(catalog.VariantPartition, 1),
		}
		ops = append(ops, mops...)
		cops, err := h.changeOps(ctx, p, vs, admin.AppFrom(ctx).Name)
		if err != nil {
			return err
		}
		ops = append(ops, cops...)
		ops = append(ops, stockJob(h.IDs, &v)...)
		err = records.Transact(ctx, h.Store, ops...)
		if err == nil {
			break
		}
		if store.FailedOp(err) == 2 {
			return errDuplicate(&v)
		}
		if !retry(ctx, err, attempt) {
			return err
		}
	}
	h.productChanged(ctx, pid)
	present(&v, admin.ShopFrom(ctx).Location())
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &v, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var v catalog.Variant
	if in.InventoryQuantityAdjustment != nil && *in.InventoryQuantityAdjustment != 0 && !in.hasOtherChanges() {
		v, err = h.adjust(r.Context(), id, &in)
	} else {
		v, _, err = h.modify(r.Context(), id, &in, appOrigin(r.Context()))
	}
	if err != nil {
		return err
	}
	present(&v, admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &v, nil)
}

// adjust applies an inventory_quantity_adjustment alone: one transaction of
// an atomic Add on the variant's stock with the event and the notification,
// so concurrent adjustments all count and none waits for another.
func (h handler) adjust(ctx context.Context, id int64, in *input) (catalog.Variant, error) {
	var val admin.Validation
	in.validateQuantities(&val)
	if err := val.Err(); err != nil {
		return catalog.Variant{}, err
	}
	delta := *in.InventoryQuantityAdjustment
	v, _, err := h.getVariant(ctx, id)
	if err != nil {
		return v, err
	}
	p, err := catalog.GetProduct(ctx, h.Store, v.ProductID)
	if err != nil {
		return v, err
	}
	order, _, err := catalog.GetOrder(ctx, h.Store, v.ProductID)
	if err != nil {
		return v, err
	}
	vs, err := h.variantsOf(ctx, v.ProductID, order)
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
	cops, err := h.changeOps(ctx, p, vs, admin.AppFrom(ctx).Name)
	if err != nil {
		return v, err
	}
	ops = append(ops, cops...)
	ops = append(ops, stockJob(h.IDs, &v)...)
	err = records.Transact(ctx, h.Store, ops...)
	if store.FailedOp(err) == 0 {
		return v, admin.NotFound // deleted since it was read
	}
	if err != nil {
		return v, err
	}
	h.productChanged(ctx, v.ProductID)
	// The response shows the variant as stored now (this and any concurrent
	// adjustment included); if it is already gone, as this change left it.
	now, _, err := h.getVariant(ctx, id)
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
func (h handler) modify(ctx context.Context, id int64, in *input, o origin) (catalog.Variant, bool, error) {
	var p *catalog.Product
	imageChecked := false
	for attempt := 0; ; attempt++ {
		v, it, err := h.getVariant(ctx, id)
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
			if p, err = catalog.GetProduct(ctx, h.Store, pid); err != nil {
				return v, false, err
			}
		}
		if !imageChecked && in.ImageID.Set {
			if err := h.checkImage(ctx, pid, v.ImageID); err != nil {
				return v, false, err
			}
			imageChecked = true
		}
		now := admin.Now()
		v.UpdatedAt = now
		reoptioned := optionKey(&v) != optionKey(&before)
		order, version, err := catalog.GetOrder(ctx, h.Store, pid)
		if err != nil {
			return v, false, err
		}
		next := order
		if in.Position != nil {
			next.IDs = insertAt(slices.DeleteFunc(slices.Clone(order.IDs), func(x int64) bool { return x == id }), id, *in.Position)
		}
		vs, err := h.variantsOf(ctx, pid, next)
		if err != nil {
			return v, false, err
		}
		if reoptioned {
			if err := h.checkUnique(ctx, &v, vs); err != nil {
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
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerVariant, id, in.Metafields, now)
		if err != nil {
			return v, false, err
		}
		ops = append(ops, mops...)
		cops, err := h.changeOps(ctx, p, vs, o.author)
		if err != nil {
			return v, false, err
		}
		ops = append(ops, cops...)
		if !o.provider {
			ops = append(ops, stockJob(h.IDs, &v)...)
		}
		err = records.Transact(ctx, h.Store, ops...)
		if err == nil {
			if affectsCollections(&before, &v) {
				h.productChanged(ctx, pid)
			}
			return v, true, nil
		}
		if reoptioned && store.FailedOp(err) == 1 {
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

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	p, err := catalog.GetProduct(ctx, h.Store, pid)
	if err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		v, it, err := h.getVariant(ctx, id)
		if err != nil {
			return err
		}
		if v.ProductID != pid {
			return admin.NotFound
		}
		order, version, err := catalog.GetOrder(ctx, h.Store, pid)
		if err != nil {
			return err
		}
		// Positions come from the order: those after the variant move up.
		next := catalog.Order{IDs: slices.DeleteFunc(slices.Clone(order.IDs), func(x int64) bool { return x == id })}
		vs, err := h.variantsOf(ctx, pid, next)
		if err != nil {
			return err
		}
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			catalog.PutOrder(pid, next, version),
			release(&v),
			records.CountOp(catalog.VariantPartition, -1),
		}
		cops, err := h.changeOps(ctx, p, vs, admin.AppFrom(ctx).Name)
		if err != nil {
			return err
		}
		ops = append(ops, cops...)
		err = records.Transact(ctx, h.Store, ops...)
		if err == nil {
			break
		}
		if !retry(ctx, err, attempt) {
			return err
		}
	}
	// The variant's metafields go after it, as many transactions as they need.
	mops, err := metafields.DeleteOwnerOps(ctx, h.Store, metafields.OwnerVariant, id)
	if err != nil {
		return err
	}
	if err := records.TransactBatches(ctx, h.Store, mops); err != nil {
		return err
	}
	h.productChanged(ctx, pid)
	return httpapi.WriteDeleted(w)
}
