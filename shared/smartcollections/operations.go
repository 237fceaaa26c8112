package smartcollections

import (
	"context"
	"log/slog"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/collections/collection"
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

// Service holds the smart collection operations: plain functions of a
// context and typed input. Membership (membership.go) follows each change.
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

// List returns the window of the matching collections in id order after
// sinceID, and where it lies. A handle names at most one collection, found
// through its guard (it may be a custom collection's, then nothing is
// found; a page without neighbours); product_id reads the product's
// memberships (GSI2, by collection id) and checks each of those
// collections; otherwise the partition is read. The created_at filters are
// ignored (ownFilter).
func (s Service) List(ctx context.Context, f *collection.Filter, sinceID int64, w records.Window) ([]SmartCollection, records.Span, error) {
	f = ownFilter(f)
	switch {
	case f.Handle != "":
		c, err := s.byHandle(ctx, f, sinceID)
		if err != nil || c == nil || w.Offset > 0 || w.Cursor.Key != "" {
			return nil, records.Span{}, err
		}
		return []SmartCollection{*c}, records.Span{}, nil
	case f.ProductID != 0:
		q := store.Query{Index: store.GSI2, PK: ProductMembersIndex(f.ProductID)}
		if sinceID > 0 {
			q.After = records.IDSK(sinceID)
		}
		found := map[int64]*SmartCollection{}
		items, span, err := records.ListWindow(ctx, s.Store, q, func(it *store.Item) (bool, error) {
			id, err := records.ParseIDSK(it.GSI2SK)
			if err != nil {
				return false, err
			}
			c, err := Lookup(ctx, s.Store, id)
			if admin.ErrorCode(err) == admin.ENOTFOUND {
				return false, nil // a collection being deleted
			}
			if err != nil || !matches(f, c) {
				return false, err
			}
			found[id] = c
			return true, nil
		}, w)
		if err != nil {
			return nil, records.Span{}, err
		}
		out := make([]SmartCollection, 0, len(items))
		for i := range items {
			id, _ := records.ParseIDSK(items[i].GSI2SK)
			out = append(out, *found[id])
		}
		return out, span, nil
	}
	items, span, err := collection.List(ctx, s.Store, Partition, f, sinceID, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	out := make([]SmartCollection, 0, len(items))
	for i := range items {
		r, err := decode(&items[i])
		if err != nil {
			return nil, records.Span{}, err
		}
		out = append(out, r.SmartCollection)
	}
	return out, span, nil
}

// byHandle is the collection the filter's handle names if it is a smart
// one after sinceID passing the other filters (product_id too), else nil.
func (s Service) byHandle(ctx context.Context, f *collection.Filter, sinceID int64) (*SmartCollection, error) {
	id, err := handles.Owner(ctx, s.Store, HandleNamespace, f.Handle)
	if err != nil || id == 0 || id <= sinceID {
		return nil, err
	}
	if f.ProductID != 0 {
		if m, err := MemberOf(ctx, s.Store, id, f.ProductID); err != nil || m == nil {
			return nil, err
		}
	}
	c, err := Lookup(ctx, s.Store, id)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return nil, nil // a custom collection's handle, or a collection being deleted
	}
	if err != nil || !matches(f, c) {
		return nil, err
	}
	return c, nil
}

// Count counts the matching collections (every filter of the list but
// paging and fields): the sharded counter without filters, the list for a
// handle or a product, else a walk of the partition.
func (s Service) Count(ctx context.Context, f *collection.Filter) (int, error) {
	f = ownFilter(f)
	switch {
	case f.Empty():
		return records.Count(ctx, s.Store, Partition)
	case f.Handle != "":
		c, err := s.byHandle(ctx, f, 0)
		if c == nil {
			return 0, err
		}
		return 1, err
	case f.ProductID != 0:
		list, _, err := s.List(ctx, f, 0, records.Window{Limit: 1<<31 - 2})
		return len(list), err
	default:
		return collection.Count(ctx, s.Store, Partition, f)
	}
}

// Get returns one collection with its products_count: one GetItem.
func (s Service) Get(ctx context.Context, id int64) (SmartCollection, error) {
	c, err := Lookup(ctx, s.Store, id)
	if err != nil {
		return SmartCollection{}, err
	}
	return *c, nil
}

// refreshCount reads the collection's count after its membership was recomputed.
func (s Service) refreshCount(ctx context.Context, c *SmartCollection) error {
	it, err := s.Store.Get(ctx, Key(c.ID))
	if err != nil {
		return err
	}
	c.ProductsCount = it.Nums[CountNum]
	return nil
}

// Create commits a new collection (with its handle, rules and image
// chunks; its counts, entries, event and notification are the change
// feed's, Derive), then computes its membership.
func (s Service) Create(ctx context.Context, in *Input) (SmartCollection, error) {
	shop := admin.ShopFrom(ctx)
	now := admin.At(s.Clock.Now())
	rec := record{
		SmartCollection: SmartCollection{Fields: collection.Fields{PublishedScope: "global", SortOrder: DefaultSortOrder, UpdatedAt: now}, Rules: []Rule{}},
		RulesVersion:    1,
	}
	_, img, err := in.apply(&rec, true)
	if err != nil {
		return SmartCollection{}, err
	}
	var imageOps []store.Op
	newImage := images.Updater{Client: s.Outbound, Clock: s.Clock, IDs: s.IDs, Shop: shop, Change: img}
	if imageOps, err = newImage.Apply(ctx, s.Store, &rec.Image, &rec.ImageFile); err != nil {
		return SmartCollection{}, err
	}
	rec.PublishedAt, _ = publishing.Apply(admin.Time{}, in.Published, nil, true, now)
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	var mark store.Key
	_, _, err = handles.Create(ctx, s.Store, s.IDs, HandleNamespace, explicit, rec.Title, func(id int64, handle string) ([]store.Op, error) {
		rec.ID, rec.Handle = id, handle
		mark = store.Key{}
		it := rec.item(1, 0)
		records.Stamp(ctx, &it, s.IDs.Next())
		if err := outbox.StampClock(ctx, s.Store, &it, collection.TopicCreate); err != nil {
			return nil, err
		}
		ops := []store.Op{
			store.Put(it, store.IfAbsent, 0),
			rulesPut(id, rec.Rules, rec.Disjunctive, 1),
		}
		ops = append(ops, imageOps...)
		if len(rec.Rules) > 0 {
			mark = catalog.CollectionJobKey(id, s.IDs.Next())
			ops = append(ops, catalog.MembershipJob(mark))
		}
		return ops, nil
	})
	if err != nil {
		return SmartCollection{}, err
	}
	if len(rec.Rules) > 0 {
		s.followRules(ctx, &rec.SmartCollection, mark, func() error {
			return recompute(ctx, s.Store, s.IDs, s.Clock, rec.ID, ruleSet{rec.Rules, rec.Disjunctive}, 1, 0)
		})
	}
	return rec.SmartCollection, nil
}

// followRules brings a collection's membership after its committed rules
// (recompute), answers its count, and clears the change's marker. The
// change has committed and is answered as such: a failure here is logged,
// and the marker stays for RunMembershipJobs, which heals it.
func (s Service) followRules(ctx context.Context, c *SmartCollection, mark store.Key, recompute func() error) {
	err := recompute()
	if err == nil {
		err = s.clearMarks(ctx, mark)
	}
	if err == nil {
		err = s.refreshCount(ctx, c)
	}
	if err != nil {
		slog.WarnContext(ctx, "smartcollections: membership left to the membership jobs",
			"request_id", admin.RequestID(ctx), "collection_id", c.ID, "error", err.Error())
	}
}

// Update changes a collection (with its handle claim, rules and image
// chunks in one transaction; its counts, entries, event and notification
// are the change feed's); when its rules or disjunctive changed, its
// membership is recomputed after.
func (s Service) Update(ctx context.Context, id int64, in *Input) (SmartCollection, error) {
	shop := admin.ShopFrom(ctx)
	var rec record
	var rulesChanged bool
	// A new image is resolved (downloaded) once, even if the write is retried.
	image := images.Updater{Client: s.Outbound, Clock: s.Clock, IDs: s.IDs, Shop: shop}
	var claim store.Key // the handle or guard the change claims, if any
	var mark store.Key  // the membership job marker of a rules change
	err := records.Update(ctx, s.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if rec, err = decode(it); err != nil {
			return nil, err
		}
		old := rec
		var img images.Change
		if rulesChanged, img, err = in.apply(&rec, false); err != nil {
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
		if rulesChanged {
			rec.RulesVersion++
		}
		// The count is carried over as read: a membership change since moved
		// the version, and this write starts over.
		put := records.PutNext(rec.item(it.Version, it.Nums[CountNum]))
		records.Stamp(ctx, &put.Item, s.IDs.Next())
		if err := outbox.StampClock(ctx, s.Store, &put.Item, collection.TopicUpdate); err != nil {
			return nil, err
		}
		ops := []store.Op{put}
		claim = store.Key{}
		if rec.Handle != old.Handle {
			claimOp := handles.Claim(HandleNamespace, rec.Handle, rec.ID)
			claim = claimOp.TargetKey()
			ops = append(ops, claimOp, handles.Release(HandleNamespace, old.Handle))
		}
		if rulesChanged {
			mark = catalog.CollectionJobKey(rec.ID, s.IDs.Next())
			ops = append(ops, rulesPut(rec.ID, rec.Rules, rec.Disjunctive, rec.RulesVersion), catalog.MembershipJob(mark))
		}
		return append(ops, fileOps...), nil
	})
	if store.FailedOn(err, claim) {
		return SmartCollection{}, admin.Invalid("handle", admin.MsgTaken)
	}
	if err != nil {
		return SmartCollection{}, err
	}
	if rulesChanged {
		s.followRules(ctx, &rec.SmartCollection, mark, func() error {
			return recompute(ctx, s.Store, s.IDs, s.Clock, rec.ID, ruleSet{rec.Rules, rec.Disjunctive}, rec.RulesVersion, rec.ProductsCount)
		})
	}
	return rec.SmartCollection, nil
}

// Delete removes the collection (its tomb saying who did), its handle and
// rules in one transaction; its counts, entries, event, notification and
// clean-up (CleanUp: image file, metafields, membership items) are the
// change feed's.
func (s Service) Delete(ctx context.Context, id int64) error {
	return records.Update(ctx, s.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		rec, err := decode(it)
		if err != nil {
			return nil, err
		}
		// Its tomb says who deleted it: its counts, entries, event,
		// notification and clean-up are the change feed's (Derive, CleanUp).
		ops, tomb := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		if err := outbox.StampClock(ctx, s.Store, tomb, collection.TopicDelete); err != nil {
			return nil, err
		}
		return append(ops, handles.Release(HandleNamespace, rec.Handle), store.Delete(rulesKey(id), store.Always, 0)), nil
	})
}

// CleanUp removes what a removed smart collection owned (store.CleanUp):
// its image file, its metafields and its membership items, each removal
// idempotent.
func CleanUp(ctx context.Context, st store.Store, owner *store.Item) error {
	rec, err := decode(owner)
	if err != nil {
		return err
	}
	ops, err := images.DeleteFileOps(ctx, st, rec.ImageFile)
	if err != nil {
		return err
	}
	mops, err := metafields.DeleteOwnerOps(ctx, st, metafields.OwnerSmartCollection, rec.ID)
	if err != nil {
		return err
	}
	members, err := deleteMembersOps(ctx, st, rec.ID)
	if err != nil {
		return err
	}
	return records.TransactBatches(ctx, st, append(append(ops, mops...), members...))
}
