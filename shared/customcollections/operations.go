package customcollections

import (
	"context"
	"errors"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/collects"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the custom collection operations: plain functions of a
// context and typed input. A collection's collects are read and written
// through the collects package's operations.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// Outbound fetches what a user names by URL.
	Outbound *outbound.Client
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, Outbound: d.Outbound}
}

// lookup reads a collection; nil when there is none.
func (s Service) lookup(ctx context.Context, id int64) (*collection.Record, error) {
	var r collection.Record
	if _, err := records.Get(ctx, s.Store, collection.Key(id), &r); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return nil, nil
		}
		return nil, err
	}
	return &r, nil
}

// List returns the window of the matching collections in id order after
// sinceID, and where it lies. A handle names at most one collection, found
// through its guard (a page without neighbours); product_id reads the
// product's collects (one Query of its index partition, sorted by
// collection id) and checks each of their collections; other filters are
// checked on each collection read.
func (s Service) List(ctx context.Context, f *collection.Filter, sinceID int64, w records.Window) ([]collection.Collection, records.Span, error) {
	if f.Handle != "" {
		r, err := s.byHandle(ctx, f, sinceID)
		if err != nil || r == nil || w.Offset > 0 || w.Cursor.Key != "" {
			return nil, records.Span{}, err
		}
		return []collection.Collection{r.Collection}, records.Span{}, nil
	}
	if f.ProductID != 0 {
		found := map[int64]*collection.Record{}
		ids, span, err := collects.CollectionsOf(ctx, s.Store, f.ProductID, sinceID, func(collectionID int64) (bool, error) {
			r, err := s.lookup(ctx, collectionID)
			if err != nil || r == nil || !matches(f, r) {
				return false, err
			}
			found[collectionID] = r
			return true, nil
		}, w)
		if err != nil {
			return nil, records.Span{}, err
		}
		out := make([]collection.Collection, len(ids))
		for i, id := range ids {
			out[i] = found[id].Collection
		}
		return out, span, nil
	}
	items, span, err := collection.List(ctx, s.Store, collection.Partition, f, sinceID, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	recs, err := records.DecodeAll[collection.Record](items)
	if err != nil {
		return nil, records.Span{}, err
	}
	out := make([]collection.Collection, len(recs))
	for i := range recs {
		out[i] = recs[i].Collection
	}
	return out, span, nil
}

// byHandle is the custom collection the filter's handle names if it comes
// after sinceID and passes the other filters (product_id too), else nil.
func (s Service) byHandle(ctx context.Context, f *collection.Filter, sinceID int64) (*collection.Record, error) {
	id, err := handles.Owner(ctx, s.Store, collection.HandleNamespace, f.Handle)
	if err != nil || id == 0 || id <= sinceID {
		return nil, err
	}
	r, err := s.lookup(ctx, id) // nil for a smart collection's handle
	if err != nil || r == nil || !matches(f, r) {
		return nil, err
	}
	if f.ProductID != 0 {
		if in, err := collects.Linked(ctx, s.Store, id, f.ProductID); err != nil || !in {
			return nil, err
		}
	}
	return r, nil
}

// Count counts the matching collections (it takes every filter of the
// list, handle too): a counter without filters or by published state, the
// keys of a title's partition, else the list.
func (s Service) Count(ctx context.Context, f *collection.Filter) (int, error) {
	if f.Empty() {
		return records.Count(ctx, s.Store, collection.Partition)
	}
	if f.Handle != "" {
		r, err := s.byHandle(ctx, f, 0)
		if r == nil {
			return 0, err
		}
		return 1, err
	}
	if f.ProductID == 0 {
		return collection.Count(ctx, s.Store, collection.Partition, f)
	}
	list, _, err := s.List(ctx, f, 0, records.Window{Limit: 1<<31 - 2})
	return len(list), err
}

// Get returns the collection with products_count: one GetItem.
func (s Service) Get(ctx context.Context, id int64) (collection.Collection, error) {
	it, err := s.Store.Get(ctx, collection.Key(id))
	if errors.Is(err, store.ErrNotFound) {
		return collection.Collection{}, admin.NotFound
	}
	if err != nil {
		return collection.Collection{}, err
	}
	rec, err := collection.Decode(&it)
	return rec.Collection, err
}

// Create adds a collection with the products of its collects (at positions
// 1..n): the collection, its handle claim, count, collects, image chunks,
// metafields, a Collection event and collections/create in one transaction.
func (s Service) Create(ctx context.Context, in *Input) (collection.Collection, error) {
	shop := admin.ShopFrom(ctx)
	now := admin.At(s.Clock.Now())
	rec := collection.Record{
		Collection: collection.Collection{Fields: collection.Fields{PublishedScope: collection.PublishedScope, SortOrder: collection.DefaultSortOrder, UpdatedAt: now}},
		CreatedAt:  now,
	}
	img, err := in.apply(&rec, true)
	if err != nil {
		return collection.Collection{}, err
	}
	linked, err := products(ctx, s.Store, in.Collects)
	if err != nil {
		return collection.Collection{}, err
	}
	rec.PublishedAt, _ = publishing.Apply(admin.Time{}, in.Published, nil, true, now)
	var imageOps []store.Op
	newImage := images.Updater{Client: s.Outbound, Clock: s.Clock, IDs: s.IDs, Shop: shop, Change: img}
	if imageOps, err = newImage.Apply(ctx, s.Store, &rec.Image, &rec.ImageFile); err != nil {
		return collection.Collection{}, err
	}
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	n := int64(len(linked))
	rec.ProductsCount = &n
	_, _, err = handles.Create(ctx, s.Store, s.IDs, collection.HandleNamespace, explicit, rec.Title, func(id int64, handle string) ([]store.Op, error) {
		rec.ID, rec.Handle = id, handle
		// The linked products take positions 1..n, so collect_seq starts at n.
		item := rec.Item(1, map[string]int64{collection.ProductsCount: n, collection.CollectSeq: n})
		if len(item.Data) > records.MaxData {
			return nil, admin.Invalid("body_html", msgTooLarge)
		}
		records.Stamp(ctx, &item, s.IDs.Next())
		if err := outbox.StampClock(ctx, s.Store, &item, collection.TopicCreate); err != nil {
			return nil, err
		}
		ops := []store.Op{store.Put(item, store.IfAbsent, 0)}
		for i, pid := range linked {
			c := collects.New(s.IDs.Next(), id, pid, int64(i+1), now)
			ops = append(ops, collects.LinkOps(&c)...)
		}
		ops = append(ops, imageOps...)
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerCustomCollection, id, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		if !records.Fits(ops, 1) { // handles.Create adds the claim
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if err != nil {
		return collection.Collection{}, err
	}
	return rec.Collection, nil
}

// Update changes a collection: an optimistic update of the collection
// (its numbers carried over as read) with its handle claim, image chunks,
// metafields, a Collection event and collections/update.
func (s Service) Update(ctx context.Context, id int64, in *Input) (collection.Collection, error) {
	shop := admin.ShopFrom(ctx)
	var rec collection.Record
	// A new image is resolved (downloaded) once, even if the write is retried.
	image := images.Updater{Client: s.Outbound, Clock: s.Clock, IDs: s.IDs, Shop: shop}
	var claim store.Key // the handle or guard the change claims, if any
	err := records.Update(ctx, s.Store, collection.Key(id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if rec, err = collection.Decode(it); err != nil {
			return nil, err
		}
		oldHandle := rec.Handle
		img, err := in.apply(&rec, false)
		if err != nil {
			return nil, err
		}
		image.Change = img
		fileOps, err := image.Apply(ctx, s.Store, &rec.Image, &rec.ImageFile)
		if err != nil {
			return nil, err
		}
		now := admin.At(s.Clock.Now())
		rec.PublishedAt, _ = publishing.Apply(rec.PublishedAt, in.Published, nil, false, now)
		rec.UpdatedAt = now
		if in.Handle != nil {
			rec.Handle = *in.Handle
		}
		// The numbers go back as read: the version condition fails if a
		// collect changed them since.
		put := records.PutNext(rec.Item(it.Version, it.Nums))
		if len(put.Item.Data) > records.MaxData {
			return nil, admin.Invalid("body_html", msgTooLarge)
		}
		records.Stamp(ctx, &put.Item, s.IDs.Next())
		if err := outbox.StampClock(ctx, s.Store, &put.Item, collection.TopicUpdate); err != nil {
			return nil, err
		}
		ops := []store.Op{put}
		claim = store.Key{}
		if rec.Handle != oldHandle {
			claimOp := handles.Claim(collection.HandleNamespace, rec.Handle, rec.ID)
			claim = claimOp.TargetKey()
			ops = append(ops, claimOp, handles.Release(collection.HandleNamespace, oldHandle))
		}
		ops = append(ops, fileOps...)
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerCustomCollection, rec.ID, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		if !records.Fits(ops, 0) {
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if store.FailedOn(err, claim) {
		return collection.Collection{}, admin.Invalid("handle", admin.MsgTaken)
	}
	if err != nil {
		return collection.Collection{}, err
	}
	return rec.Collection, nil
}

// Delete removes the collection and its handle in one transaction.
func (s Service) Delete(ctx context.Context, id int64) error {
	return records.Update(ctx, s.Store, collection.Key(id), func(it *store.Item) ([]store.Op, error) {
		rec, err := collection.Decode(it)
		if err != nil {
			return nil, err
		}
		// Its tomb says who deleted it: its counts, entries, event,
		// notification and clean-up are the change feed's (Derive).
		ops, tomb := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		if err := outbox.StampClock(ctx, s.Store, tomb, collection.TopicDelete); err != nil {
			return nil, err
		}
		return append(ops, handles.Release(collection.HandleNamespace, rec.Handle)), nil
	})
}

// CleanUp removes what a removed custom collection owned
// (store.CleanUp): its image file, its metafields and its collects, each
// removal idempotent.
func CleanUp(ctx context.Context, st store.Store, owner *store.Item) error {
	rec, err := collection.Decode(owner)
	if err != nil {
		return err
	}
	ops, err := images.DeleteFileOps(ctx, st, rec.ImageFile)
	if err != nil {
		return err
	}
	mops, err := metafields.DeleteOwnerOps(ctx, st, metafields.OwnerCustomCollection, rec.ID)
	if err != nil {
		return err
	}
	if err := records.TransactBatches(ctx, st, append(ops, mops...)); err != nil {
		return err
	}
	return collects.DeleteOfCollection(ctx, st, rec.ID)
}

// Derive is the change feed's work for a change to a custom collection
// (store.Deriver): its counts and index entries and, for a create or an
// update, its event and notification (a delete's commit with it). The
// notification's payload is the collection as the change left it (one
// GetItem of the shop for its time zone).
func Derive(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
	decode := func(it *store.Item) (*collection.Record, error) {
		if it == nil {
			return nil, nil
		}
		r, err := collection.Decode(it) // products_count from its numbers
		return &r, err
	}
	old, err := decode(c.Old)
	if err != nil {
		return nil, err
	}
	next, err := decode(c.New)
	if err != nil {
		return nil, err
	}
	if next == nil {
		ops := append(collection.StateCountOps(collection.Partition, &old.PublishedAt, nil), records.CountOp(collection.Partition, -1), store.CleanUpOp(c))
		ops = append(ops, records.IndexOps(nil, old.Entries(), nil)...)
		if c.Tomb == nil { // removed by no request
			return ops, nil
		}
		evs, err := events.OfChange(ctx, st, c.Tomb, subject(&old.Collection), events.Destroy, "")
		if err != nil {
			return nil, err
		}
		ops = append(ops, evs...)
		return append(ops, outbox.OfChange(c, collection.TopicDelete, collection.Resource, map[string]int64{"id": old.ID})...), nil
	}
	verb, topic := events.Create, collection.TopicCreate
	var ops []store.Op
	if old == nil {
		ops = append(collection.StateCountOps(collection.Partition, nil, &next.PublishedAt), records.CountOp(collection.Partition, 1))
		ops = append(ops, records.IndexOps(c.New, nil, next.Entries())...)
		// The collects its create linked (collects.LinkOps, unstamped):
		// its products_count as created.
		if n := c.New.Nums[collection.ProductsCount]; n > 0 {
			ops = append(ops, records.CountOp(collects.Partition, n))
		}
	} else {
		verb, topic = events.UpdateVerb(publishing.Between(old.PublishedAt, next.PublishedAt)), collection.TopicUpdate
		ops = append(collection.StateCountOps(collection.Partition, &old.PublishedAt, &next.PublishedAt), records.IndexOps(c.New, old.Entries(), next.Entries())...)
	}
	evs, err := events.OfChange(ctx, st, c.New, subject(&next.Collection), verb, "")
	if err != nil {
		return nil, err
	}
	// The payload's times in the shop's zone as the request saw it.
	facts, stamped, err := records.FactsOf(c.New)
	if err != nil {
		return nil, err
	}
	shop := &admin.Shop{IANATimezone: facts.Zone}
	if !stamped { // stamped before its facts were
		if shop, err = auth.ReadShop(ctx, st); err != nil {
			return nil, err
		}
	}
	ops = append(ops, evs...)
	return append(ops, outbox.OfChange(c, topic, collection.Resource, shown(next, shop), outbox.MetafieldsOf(metafields.OwnerCustomCollection, next.ID))...), nil
}
