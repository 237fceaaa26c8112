// Package smartcollections serves /com/smart_collections (docs/openapi.yaml:
// schema SmartCollection, the Smart collections operations) and keeps their
// membership: which products match each collection's rules.
//
// Items:
//   - smart_collection/<id>: the collection; its member count is the atomic
//     number products_count on the same item, so one GetItem reads both.
//   - smart_rules/<id>: the collection's rules and disjunctive; its version
//     is the rules version (see membership.go).
//   - smart_member#<collection id>/<product id>, GSI2
//     product#<product id>#smart_member/<collection id>: one per member
//     product (Member), listed by the collects endpoint as read-only collects.
//   - smart_product/<product id>: the product's smart collection ids.
//   - handle#collection/<handle>: the handle guard, one handle space with
//     custom collections.
//   - count#smart_collection: the sharded collection count.
//   - file#<id>: the chunks of an attached image (shared/images).
//
// Every change of a collection writes it (stamped, records.Stamp; a delete
// its tomb, records.Remove), its guard, rules item and image chunks in one
// transaction; its counts, index entries, Collection event and
// collections/* notification are the change feed's (Derive); membership
// follows in further transactions.
package smartcollections

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Item layout shared with the custom collections and collects packages.
const (
	// Partition holds every smart collection by id.
	Partition = "smart_collection"
	// HandleNamespace is shared by custom and smart collections.
	HandleNamespace = collection.HandleNamespace
	// CountNum is the atomic number holding a collection's member count.
	CountNum = "products_count"

	rulesPartition = "smart_rules"
	statePartition = "smart_product"
	// maxData bounds the stored collection below records.MaxData: its
	// transaction carries up to images.MaxAttachment of image chunks, and
	// its derived one the notification (a second copy), within DynamoDB's
	// 4 MB.
	maxData = 256 << 10
)

// Sort orders of schema CustomCollection.
var SortOrders = collection.SortOrders

// DefaultSortOrder is the sort order of a collection created without one.
const DefaultSortOrder = collection.DefaultSortOrder

// Key is the item key of a smart collection.
func Key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

// MemberPartition holds a collection's membership items, by product id.
func MemberPartition(collectionID int64) string {
	return "smart_member#" + strconv.FormatInt(collectionID, 10)
}

// MemberKey is the membership item of a product in a collection.
func MemberKey(collectionID, productID int64) store.Key {
	return store.Key{PK: MemberPartition(collectionID), SK: records.IDSK(productID)}
}

// ProductMembersIndex is the GSI2 partition of a product's memberships
// (sort key records.IDSK(collection id)).
func ProductMembersIndex(productID int64) string {
	return "product#" + strconv.FormatInt(productID, 10) + "#smart_member"
}

// SmartCollection is the returned record (schema SmartCollection).
type SmartCollection struct {
	collection.Fields
	ProductsCount int64  `json:"products_count"`
	Disjunctive   bool   `json:"disjunctive"`
	Rules         []Rule `json:"rules"`
}

// record is the stored form: the collection without its count (an atomic
// number of the item), with the version of its rules and the id of its
// attached image file.
type record struct {
	SmartCollection
	// NoCount shadows SmartCollection.ProductsCount in JSON: never stored.
	NoCount      *struct{} `json:"products_count,omitempty"`
	RulesVersion int64     `json:"rules_version"`
	ImageFile    int64     `json:"image_file_id,omitempty"`
}

func (r *record) item(version, count int64) store.Item {
	return collection.Indexed(store.Item{
		PK: Partition, SK: records.IDSK(r.ID), Version: version,
		Nums: map[string]int64{CountNum: count},
		Data: records.Encode(r),
	}, r.Title, r.PublishedAt)
}

// entries are the collection's index entries (collection.Entries: it shows
// no created_at).
func (r *record) entries() []records.Entry {
	return collection.Entries(Partition, r.ID, admin.Time{}, r.UpdatedAt, r.PublishedAt)
}

// Indexer rebuilds the smart collections' index keys and entries in a
// store written before them (records.Reindex).
var Indexer = records.Indexer{
	Name:       "smart collections",
	Partitions: records.OnePartition(Partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		r, err := decode(it)
		return records.Rewritten{Item: collection.Indexed(*it, r.Title, r.PublishedAt), Entries: r.entries()}, err
	},
}

// decode reads a collection item with its count.
func decode(it *store.Item) (record, error) {
	var r record
	if err := records.Decode(it, &r); err != nil {
		return r, err
	}
	r.ProductsCount = it.Nums[CountNum]
	if r.Rules == nil {
		r.Rules = []Rule{}
	}
	return r, nil
}

// Lookup reads a smart collection with its products_count: one GetItem.
// admin.NotFound when there is none.
func Lookup(ctx context.Context, st store.Store, id int64) (*SmartCollection, error) {
	it, err := st.Get(ctx, Key(id))
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, admin.NotFound
		}
		return nil, err
	}
	r, err := decode(&it)
	if err != nil {
		return nil, err
	}
	return &r.SmartCollection, nil
}

// Subject is the collection as the events log names it.
func (c *SmartCollection) Subject() events.Subject {
	return events.Subject{Type: events.Collection, ID: c.ID, Path: "/collections/" + c.Handle, Label: c.Title}
}

// Input is the body of a smart collection create or update.
type Input struct {
	collection.Input
	Disjunctive *bool           `json:"disjunctive" null:"refuse"`
	Rules       json.RawMessage `json:"rules"`
}

// apply validates in and merges it into r (all but publishing, image and
// handle claims, which need the store or the network). rulesChanged
// reports that rules or disjunctive were given: the membership is
// recomputed.
func (in *Input) apply(r *record, create bool) (rulesChanged bool, img images.Change, err error) {
	var v admin.Validation
	img = in.Input.Apply(&v, &r.Fields, create)
	if in.Disjunctive != nil {
		r.Disjunctive = *in.Disjunctive
		rulesChanged = true
	}
	if len(in.Rules) > 0 {
		r.Rules = parseRules(in.Rules, &v)
		rulesChanged = true
	}
	if len(records.Encode(r)) > maxData {
		v.Add("body_html", "is too long (the collection may take at most 256 KB stored)")
	}
	return rulesChanged, img, v.Err()
}

// ownFilter is f without created_at: collections show none (schema
// SmartCollection), so the created_at filters are ignored.
func ownFilter(f *collection.Filter) *collection.Filter {
	g := *f
	g.Created = dates.Range{}
	return &g
}

func matches(f *collection.Filter, c *SmartCollection) bool {
	return f.Matches(c.Title, c.Handle, admin.Time{}, c.UpdatedAt, c.PublishedAt)
}

func present(c *SmartCollection, shop *admin.Shop) {
	loc := shop.Location()
	c.UpdatedAt, c.PublishedAt = c.UpdatedAt.In(loc), c.PublishedAt.In(loc)
	if c.Image != nil {
		img := *c.Image
		img.CreatedAt = img.CreatedAt.In(loc)
		c.Image = &img
	}
	if c.Rules == nil {
		c.Rules = []Rule{}
	}
}

// presented is a copy of c as responses and webhook payloads show it.
func presented(c *SmartCollection, shop *admin.Shop) *SmartCollection {
	out := *c
	present(&out, shop)
	return &out
}

// Derive is the change feed's work for a change to a smart collection
// (store.Deriver): its counts and index entries, its Collection event and
// its collections/* notification (a delete's from its tomb), the payload's
// times in the shop's zone as the request saw it. Membership changes (the
// count's additions) are no request's stamped change and derive nothing.
func Derive(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
	decodeOf := func(it *store.Item) (*record, error) {
		if it == nil {
			return nil, nil
		}
		r, err := decode(it) // products_count from its number
		return &r, err
	}
	old, err := decodeOf(c.Old)
	if err != nil {
		return nil, err
	}
	next, err := decodeOf(c.New)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	verb, topic, shown := events.Create, collection.TopicCreate, next
	switch {
	case next == nil:
		ops = append(collection.StateCountOps(Partition, &old.PublishedAt, nil), records.CountOp(Partition, -1), store.CleanUpOp(c))
		ops = append(ops, records.IndexOps(nil, old.entries(), nil)...)
		if c.Tomb == nil { // removed by no request
			return ops, nil
		}
		verb, topic, shown = events.Destroy, collection.TopicDelete, old
	case old == nil:
		ops = append(collection.StateCountOps(Partition, nil, &next.PublishedAt), records.CountOp(Partition, 1))
		ops = append(ops, records.IndexOps(c.New, nil, next.entries())...)
	default:
		verb, topic = events.UpdateVerb(publishing.Between(old.PublishedAt, next.PublishedAt)), collection.TopicUpdate
		ops = append(collection.StateCountOps(Partition, &old.PublishedAt, &next.PublishedAt), records.IndexOps(c.New, old.entries(), next.entries())...)
	}
	evs, err := events.OfChange(ctx, st, c.Stamped(), shown.Subject(), verb, "")
	if err != nil {
		return nil, err
	}
	shop, err := shopOf(ctx, st, c.Stamped())
	if err != nil {
		return nil, err
	}
	ops = append(ops, evs...)
	return append(ops, outbox.OfChange(c, topic, collection.Resource, presented(&shown.SmartCollection, shop))...), nil
}

// shopOf is the shop as the change's request saw it: its time zone
// (records.Facts; for an item stamped before facts were, the shop now).
func shopOf(ctx context.Context, st store.Store, it *store.Item) (*admin.Shop, error) {
	facts, stamped, err := records.FactsOf(it)
	if err != nil {
		return nil, err
	}
	if !stamped {
		return auth.ReadShop(ctx, st)
	}
	return &admin.Shop{IANATimezone: facts.Zone}, nil
}
