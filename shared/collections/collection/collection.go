// Package collection is the stored custom collection (docs/openapi.yaml: schema
// CustomCollection): its item, the atomic numbers collects keep on it, and the
// frontpage collection every shop starts with. It imports no resource package, so
// the seed, the custom collections endpoints and the collects endpoints all build
// on it.
//
// Item: custom_collection/<id> with Nums products_count (how many collects
// the collection has) and collect_seq (the position the last collect
// received). Collect writes change both in their own transaction; a write of
// the whole item (an update) is conditioned on the version it read, so it
// never loses their changes. The handle is guarded by
// handle#collection/<handle>, one namespace with smart collections.
package collection

import (
	"context"
	"encoding/json"
	"slices"

	"strconv"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

const (
	// Partition holds every custom collection by id (and names its count).
	Partition = "custom_collection"
	// HandleNamespace is shared by custom and smart collections.
	HandleNamespace = "collection"
	// ProductsCount is the atomic number counting the collection's collects.
	ProductsCount = "products_count"
	// CollectSeq is the atomic number holding the last position given to a collect.
	CollectSeq = "collect_seq"
)

// Webhook topics (schema WebhookTopic) and their payload's resource name: custom
// and smart collections share them.
const (
	TopicCreate = "collections/create"
	TopicUpdate = "collections/update"
	TopicDelete = "collections/delete"
	Resource    = "collection"
)

// Key addresses a custom collection.
func Key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

// Fields are the properties both kinds of collection answer with, in
// their order; each kind adds its own after them.
type Fields struct {
	ID             int64         `json:"id"`
	Title          string        `json:"title"`
	Handle         string        `json:"handle"`
	BodyHTML       *string       `json:"body_html"`
	Image          *images.Image `json:"image,omitempty"`
	PublishedAt    admin.Time    `json:"published_at"`
	PublishedScope string        `json:"published_scope"`
	SortOrder      string        `json:"sort_order"`
	TemplateSuffix *string       `json:"template_suffix"`
	UpdatedAt      admin.Time    `json:"updated_at"`
}

// Collection is the returned custom collection.
type Collection struct {
	Fields
	// ProductsCount is filled from the item's number by single-item reads.
	ProductsCount *int64 `json:"products_count,omitempty"`
}

// Record is the stored form: the collection, its creation time (for the
// created_at filters) and the id of its attached image file, so that
// replacing the image or deleting the collection removes the chunks.
type Record struct {
	Collection
	CreatedAt admin.Time `json:"created_at"`
	ImageFile int64      `json:"image_file_id,omitempty"`
}

// Item is the record's item carrying nums (the numbers as read, or the
// initial ones of a create).
func (r *Record) Item(version int64, nums map[string]int64) store.Item {
	data := *r
	data.ProductsCount = nil // kept in Nums only
	it := store.Item{PK: Partition, SK: records.IDSK(r.ID), Version: version, Nums: nums, Data: records.Encode(&data)}
	return Indexed(it, r.Title, r.PublishedAt)
}

// Indexed sets the index keys of a collection item of either kind (its PK
// is the kind's partition): GSI1 the title's partition, GSI2 the published
// state's, so that the title and published_status filters read only their
// own.
func Indexed(it store.Item, title string, publishedAt admin.Time) store.Item {
	it.GSI1PK, it.GSI1SK = TitlePartition(it.PK, title), it.SK
	it.GSI2PK, it.GSI2SK = StatePartition(it.PK, !publishedAt.IsZero()), it.SK
	return it
}

// TitlePartition is the GSI1 partition of a kind's collections titled title.
func TitlePartition(partition, title string) string {
	return records.ExactPartition(partition, "title", title)
}

// StatePartition is the GSI2 partition of a kind's published (or
// unpublished) collections, also the name of its counter.
func StatePartition(partition string, published bool) string {
	return records.ExactPartition(partition, "published", strconv.FormatBool(published))
}

// StateCountOps move the published-state counters of a kind's partition
// from old to next (the published_at before and after; nil before a
// create, after a delete).
func StateCountOps(partition string, old, next *admin.Time) []store.Op {
	var ops []store.Op
	moved := old == nil || next == nil || old.IsZero() != next.IsZero()
	if old != nil && moved {
		ops = append(ops, records.CountOp(StatePartition(partition, !old.IsZero()), -1))
	}
	if next != nil && moved {
		ops = append(ops, records.CountOp(StatePartition(partition, !next.IsZero()), 1))
	}
	return ops
}

// Entries are the index entries of a collection of either kind (partition
// is the kind's): Ref entries ordered by updated_at, published_at (when
// published) and created_at (when it has one: smart collections show
// none), for those ranges. Refs, not copies: a collection shares its
// transaction with its image's chunks.
func Entries(partition string, id int64, created, updated, published admin.Time) []records.Entry {
	es := []records.Entry{{Partition: records.TimePartition(partition, "updated_at"), SK: records.TimeSK(updated.Time, id), Ref: true}}
	if !published.IsZero() {
		es = append(es, records.Entry{Partition: records.TimePartition(partition, "published_at"), SK: records.TimeSK(published.Time, id), Ref: true})
	}
	if !created.IsZero() {
		es = append(es, records.Entry{Partition: records.TimePartition(partition, "created_at"), SK: records.TimeSK(created.Time, id), Ref: true})
	}
	return es
}

// Entries are the custom collection's index entries.
func (r *Record) Entries() []records.Entry {
	return Entries(Partition, r.ID, r.CreatedAt, r.UpdatedAt, r.PublishedAt)
}

// Source is what a list or count of f reads in a kind's partition (f has
// no handle and no product_id), the most selective the filters allow
// (records.Plan): the title's collections (GSI1), an updated_at or
// published_at range (Ref entries in that time's order), the published
// state's (GSI2), a created_at range (Ref entries), else every collection
// of the kind;
// since_id bounds the id-ordered ones. exact says the keys answer f whole;
// refs that the source holds Ref entries (records.ListRefWindow).
func (f *Filter) Source(partition string, sinceID int64) (q store.Query, exact, refs bool) {
	p := records.Plan{All: store.Query{PK: partition}, SinceID: sinceID}
	if f.Title != "" {
		k := records.Exact(partition, "title", f.Title)
		k.Query.Index = store.GSI1
		p.Keyed = append(p.Keyed, k)
	}
	f.Filter.Keyed(&p, partition, true, func(published bool) store.Query {
		return store.Query{Index: store.GSI2, PK: StatePartition(partition, published)}
	})
	if !f.Created.Empty() { // custom collections: the frontpage's id is not its time
		k := records.Timed(partition, "created_at", f.Created)
		k.Ref = true
		p.Keyed = append(p.Keyed, k)
	}
	q, exact = p.Source()
	return q, exact, p.Refs()
}

// List reads the window of a kind's collections that f (without handle
// and product_id) selects after sinceID, and where it lies: one Query of
// the Source, plus a GetItem per collection when it holds Ref entries.
func List(ctx context.Context, st store.Store, partition string, f *Filter, sinceID int64, w records.Window) ([]store.Item, records.Span, error) {
	q, exact, refs := f.Source(partition, sinceID)
	var match records.Matcher
	if !exact {
		match = f.matcher(sinceID)
	}
	return records.ListSource(ctx, st, q, match, refs, w)
}

// Count counts a kind's collections that f (without handle and
// product_id) selects: its counter when f is empty or only a published
// state, else the Source's keys, with a GetItem per key a combination
// over Ref entries has to check.
func Count(ctx context.Context, st store.Store, partition string, f *Filter) (int, error) {
	q, exact, refs := f.Source(partition, 0)
	switch {
	case exact && q.Index == store.GSI2, exact && q.Index == store.Table && q.PK == partition && q.After == "" && q.Before == "":
		return records.Count(ctx, st, q.PK) // the state's or the kind's counter
	case exact:
		return records.CountMatching(ctx, st, q, nil)
	}
	return records.CountSource(ctx, st, q, f.matcher(0), refs)
}

// matcher checks f on a collection item of either kind after sinceID.
func (f *Filter) matcher(sinceID int64) records.Matcher {
	return func(it *store.Item) (bool, error) {
		var c struct {
			ID          int64      `json:"id"`
			Title       string     `json:"title"`
			Handle      string     `json:"handle"`
			CreatedAt   admin.Time `json:"created_at"`
			UpdatedAt   admin.Time `json:"updated_at"`
			PublishedAt admin.Time `json:"published_at"`
		}
		if err := records.Decode(it, &c); err != nil {
			return false, err
		}
		return c.ID > sinceID && f.Matches(c.Title, c.Handle, c.CreatedAt, c.UpdatedAt, c.PublishedAt), nil
	}
}

// Indexer rebuilds the custom collections' index keys and entries in a
// store written before them (records.Reindex).
var Indexer = records.Indexer{
	Name:       "custom collections",
	Partitions: records.OnePartition(Partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		r, err := Decode(it)
		return records.Rewritten{Item: Indexed(*it, r.Title, r.PublishedAt), Entries: r.Entries()}, err
	},
}

// Decode reads a collection item, with products_count from its number.
func Decode(it *store.Item) (Record, error) {
	var r Record
	if err := records.Decode(it, &r); err != nil {
		return r, err
	}
	n := it.Nums[ProductsCount]
	r.ProductsCount = &n
	return r, nil
}

// SortOrders are the allowed values of sort_order (schema CustomCollection), for
// custom and smart collections.
var SortOrders = []string{"alpha-asc", "alpha-desc", "best-selling", "created", "created-desc", "manual", "price-asc", "price-desc"}

// Filter is the list and count filters custom and smart collections share (the
// Custom collections operations, the Smart collections operations): title, handle,
// product_id and the publishing filters.
type Filter struct {
	Title, Handle string
	ProductID     int64
	publishing.Filter
}

// Empty reports whether no filter was given.
func (f *Filter) Empty() bool {
	return f.Title == "" && f.Handle == "" && f.ProductID == 0 && f.Filter.Empty()
}

// Matches checks the filters a collection answers itself: all but
// product_id, which the collection's membership answers.
func (f *Filter) Matches(title, handle string, created, updated, published admin.Time) bool {
	return (f.Title == "" || title == f.Title) && (f.Handle == "" || handle == f.Handle) &&
		f.Filter.Matches(created, updated, published)
}

// Default values of schema CustomCollection.
const (
	DefaultSortOrder = "alpha-asc"
	PublishedScope   = "global"
)

// FrontpageID is the id of the frontpage collection: the largest seed id,
// which the seed reserves (no seeded record may use it) and the service
// never assigns.
const FrontpageID = ids.SeedMax

// FrontpageHandle is the frontpage collection's handle.
const FrontpageHandle = "frontpage"

// FrontpageOps are the writes creating the frontpage collection every shop starts
// with (schema CustomCollection): the published, empty collection, its handle
// claim and its count, as one transaction that fails whole (its first op, the
// IfAbsent put, or the claim) when it was written before.
func FrontpageOps(now admin.Time) []store.Op {
	r := Record{
		Collection: Collection{Fields: Fields{
			ID: FrontpageID, Title: "Frontpage", Handle: FrontpageHandle, PublishedAt: now,
			PublishedScope: PublishedScope, SortOrder: DefaultSortOrder, UpdatedAt: now,
		}},
		CreatedAt: now,
	}
	it := r.Item(1, map[string]int64{ProductsCount: 0, CollectSeq: 0})
	ops := append([]store.Op{
		store.Put(it, store.IfAbsent, 0),
		handles.Claim(HandleNamespace, FrontpageHandle, FrontpageID),
		records.CountOp(Partition, 1),
	}, StateCountOps(Partition, nil, &r.PublishedAt)...)
	return append(ops, records.IndexOps(&it, nil, r.Entries())...)
}

// Input is what both kinds of collection take beside their own properties
// (a custom collection's collects and metafields, a smart collection's
// rules): each kind's input embeds it.
type Input struct {
	Title          *string                `json:"title" null:"refuse"`
	Handle         *string                `json:"handle" null:"refuse"`
	BodyHTML       admin.Optional[string] `json:"body_html"`
	SortOrder      *string                `json:"sort_order" null:"refuse"`
	TemplateSuffix admin.Optional[string] `json:"template_suffix"`
	Published      *bool                  `json:"published" null:"refuse"`
	Image          json.RawMessage        `json:"image"`
}

// Apply validates the shared properties into v and merges them into f: all
// but publishing, the handle's claim and the image's file, which need the
// store, the clock or the network (the image change to make is returned).
// A create needs a title.
func (in *Input) Apply(v *admin.Validation, f *Fields, create bool) images.Change {
	v.Title(in.Title, create, &f.Title)
	handles.Check(v, in.Handle)
	if in.BodyHTML.Set {
		f.BodyHTML = nil
		if !in.BodyHTML.Null {
			s := in.BodyHTML.Value
			f.BodyHTML = &s
		}
	}
	if in.SortOrder != nil {
		if !slices.Contains(SortOrders, *in.SortOrder) {
			v.Add("sort_order", admin.MsgNotInList)
		} else {
			f.SortOrder = *in.SortOrder
		}
	}
	admin.SetText(&f.TemplateSuffix, in.TemplateSuffix)
	return images.ParseChange(in.Image, v)
}
