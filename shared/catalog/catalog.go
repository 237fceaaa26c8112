// Package catalog is the product data every catalog resource reads:
// products (seeded; the spec has no endpoints for them), their variants and
// the products/update payload. Variants are written by shared/variants;
// collections read products and variants through here.
//
// Items: product/<id> (the seed's JSON object); variant/<id> with GSI1
// product#<product id>#variant / <id> and the stock level as the atomic
// number n_inventory_quantity and, when a fulfillment service manages its
// stock, GSI2 variant#managed#<handle> / <id>; variantorder/<product id> holding the ordered
// variant ids, which gives positions and serialises variant creates and
// deletes of one product (the 100-variant limit, option uniqueness).
package catalog

import (
	"context"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Partitions.
const (
	ProductPartition = "product"
	VariantPartition = "variant"
	OrderPartition   = "variantorder"
	// InventoryNum is the atomic number holding a variant's stock level.
	InventoryNum = "inventory_quantity"
	// MaxVariants is the most variants a product has (schema Variant).
	MaxVariants = 100
)

// MembershipJobPartition holds a marker for each committed variant change
// that can move its product in or out of smart collections and whose
// product has not been reevaluated since: the change commits it, the
// request removes it once smartcollections.Reevaluate succeeded, and
// smartcollections.Service.RunMembershipJobs reevaluates whatever is left (the
// runner a second after the commit and at start; in AWS the provider-jobs function, on the stream).
// SK: <product id>#<change id>, so that each change has its own and a
// drain removes only the markers it read.
const MembershipJobPartition = "membershipjob"

// MembershipJobKey is the marker of change of product.
func MembershipJobKey(productID, change int64) store.Key {
	return store.Key{PK: MembershipJobPartition, SK: records.IDSK(productID) + "#" + strconv.FormatInt(change, 10)}
}

// MembershipJobProduct is the product a marker's sort key names.
func MembershipJobProduct(sk string) (int64, bool) {
	id, _, _ := strings.Cut(sk, "#")
	n, err := strconv.ParseInt(id, 10, 64)
	return n, err == nil
}

// A smart collection whose rules a committed change set leaves a marker of
// its own in the partition: c<collection id>#<change id>.
const collectionJobPrefix = "c"

// CollectionJobKey is the marker of change of a smart collection's rules.
func CollectionJobKey(collectionID, change int64) store.Key {
	return store.Key{PK: MembershipJobPartition, SK: collectionJobPrefix + records.IDSK(collectionID) + "#" + strconv.FormatInt(change, 10)}
}

// MembershipJobCollection is the smart collection a marker's sort key names.
func MembershipJobCollection(sk string) (int64, bool) {
	rest, ok := strings.CutPrefix(sk, collectionJobPrefix)
	if !ok {
		return 0, false
	}
	return MembershipJobProduct(rest)
}

// MembershipJob is the write of a marker.
func MembershipJob(k store.Key) store.Op {
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1}, store.Always, 0)
}

// ProductKey, VariantKey and OrderKey address the items.
func ProductKey(id int64) store.Key { return store.Key{PK: ProductPartition, SK: records.IDSK(id)} }
func VariantKey(id int64) store.Key { return store.Key{PK: VariantPartition, SK: records.IDSK(id)} }
func OrderKey(productID int64) store.Key {
	return store.Key{PK: OrderPartition, SK: records.IDSK(productID)}
}

// ProductVariantsIndex is the GSI1 partition of a product's variants.
func ProductVariantsIndex(productID int64) string {
	return "product#" + strconv.FormatInt(productID, 10) + "#variant"
}

// Product is a seeded product: its JSON object as the seed gave it, plus
// the fields the service reads.
type Product struct {
	ID          int64
	Title       string
	ProductType string
	Vendor      string
	Tags        string
	Raw         map[string]json.RawMessage
}

// GetProduct reads a product; admin.NotFound if there is none.
func GetProduct(ctx context.Context, st store.Store, id int64) (*Product, error) {
	var raw map[string]json.RawMessage
	if _, err := records.Get(ctx, st, ProductKey(id), &raw); err != nil {
		return nil, err
	}
	return productOf(id, raw), nil
}

func productOf(id int64, raw map[string]json.RawMessage) *Product {
	p := &Product{ID: id, Raw: raw}
	str := func(k string) string {
		var s string
		_ = json.Unmarshal(raw[k], &s) // a seeded field of another type reads as absent
		return s
	}
	p.Title, p.ProductType, p.Vendor, p.Tags = str("title"), str("product_type"), str("vendor"), str("tags")
	return p
}

// DecodeProduct reads a product item.
func DecodeProduct(it *store.Item) (*Product, error) {
	var raw map[string]json.RawMessage
	if err := records.Decode(it, &raw); err != nil {
		return nil, err
	}
	id, _ := records.ParseIDSK(it.SK)
	return productOf(id, raw), nil
}

// Variant is the stored and returned variant (schema Variant). Position is not
// stored: it comes from the product's variant order.
type Variant struct {
	ID                   int64        `json:"id"`
	ProductID            int64        `json:"product_id"`
	Title                string       `json:"title"`
	Option1              *string      `json:"option1"`
	Option2              *string      `json:"option2"`
	Option3              *string      `json:"option3"`
	SKU                  string       `json:"sku"`
	Barcode              *string      `json:"barcode"`
	Price                admin.Money  `json:"price"`
	CompareAtPrice       *admin.Money `json:"compare_at_price"`
	Position             int          `json:"position"`
	Grams                int64        `json:"grams"`
	Weight               float64      `json:"weight"`
	WeightUnit           string       `json:"weight_unit"`
	Taxable              bool         `json:"taxable"`
	RequiresShipping     bool         `json:"requires_shipping"`
	FulfillmentService   string       `json:"fulfillment_service"`
	InventoryManagement  *string      `json:"inventory_management"`
	InventoryPolicy      string       `json:"inventory_policy"`
	InventoryQuantity    int64        `json:"inventory_quantity"`
	OldInventoryQuantity int64        `json:"old_inventory_quantity"`
	ImageID              *int64       `json:"image_id"`
	CreatedAt            admin.Time   `json:"created_at"`
	UpdatedAt            admin.Time   `json:"updated_at"`
}

// Item is the variant's stored item (position and stock are not in Data).
func (v *Variant) Item(version int64) store.Item {
	data := *v
	data.Position, data.InventoryQuantity, data.OldInventoryQuantity = 0, 0, 0
	it := store.Item{
		PK: VariantPartition, SK: records.IDSK(v.ID),
		GSI1PK: ProductVariantsIndex(v.ProductID), GSI1SK: records.IDSK(v.ID),
		Version: version, Nums: map[string]int64{InventoryNum: v.InventoryQuantity},
		Data: records.Encode(&data),
	}
	if v.InventoryManagement != nil && *v.InventoryManagement != "" {
		it.GSI2PK, it.GSI2SK = ManagedIndex(*v.InventoryManagement), records.IDSK(v.ID)
	}
	return it
}

// ManagedIndex is the GSI2 partition of the variants whose stock a
// fulfillment service (by handle) manages: the hourly fetch_stock reads it.
func ManagedIndex(handle string) string { return "variant#managed#" + handle }

// DecodeVariant reads a variant item (without its position).
func DecodeVariant(it *store.Item) (Variant, error) {
	var v Variant
	if err := records.Decode(it, &v); err != nil {
		return v, err
	}
	if n, ok := it.Nums[InventoryNum]; ok {
		v.InventoryQuantity = n
	}
	v.OldInventoryQuantity = v.InventoryQuantity
	return v, nil
}

// Order is a product's ordered variant ids.
type Order struct {
	IDs []int64 `json:"ids"`
}

// GetOrder reads a product's variant order (empty if it has none yet) and
// its version (0 when absent).
func GetOrder(ctx context.Context, st store.Store, productID int64) (Order, int64, error) {
	var o Order
	it, err := records.Get(ctx, st, OrderKey(productID), &o)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return Order{}, 0, nil
	}
	return o, it.Version, err
}

// PutOrder is the write of a product's new variant order, conditioned on
// the version read: concurrent creates and deletes of one product take
// turns, so the limit and uniqueness checks see every variant.
func PutOrder(productID int64, o Order, version int64) store.Op {
	k := OrderKey(productID)
	it := store.Item{PK: k.PK, SK: k.SK, Version: version + 1, Data: records.Encode(&o)}
	if version == 0 {
		return store.Put(it, store.IfAbsent, 0)
	}
	return store.Put(it, store.IfVersion, version)
}

// Position is a variant's 1-based position in the order (0 if absent).
func (o Order) Position(id int64) int { return slices.Index(o.IDs, id) + 1 }

// ProductVariants reads a product's variants in position order: one Query
// of its index partition and one GetItem of its order.
func ProductVariants(ctx context.Context, st store.Store, productID int64) ([]Variant, error) {
	items, err := records.List(ctx, st, store.Query{Index: store.GSI1, PK: ProductVariantsIndex(productID)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	o, _, err := GetOrder(ctx, st, productID)
	if err != nil {
		return nil, err
	}
	out := make([]Variant, 0, len(items))
	for i := range items {
		v, err := DecodeVariant(&items[i])
		if err != nil {
			return nil, err
		}
		v.Position = o.Position(v.ID)
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b Variant) int {
		pa, pb := a.Position, b.Position
		if pa == 0 {
			pa = 1 << 30
		}
		if pb == 0 {
			pb = 1 << 30
		}
		return pa - pb
	})
	return out, nil
}

// Payload is the product as products/* webhooks carry it: its seeded
// fields with its current variants.
func Payload(ctx context.Context, st store.Store, productID int64) (json.RawMessage, error) {
	p, err := GetProduct(ctx, st, productID)
	if err != nil {
		return nil, err
	}
	vs, err := ProductVariants(ctx, st, productID)
	if err != nil {
		return nil, err
	}
	out := make(map[string]json.RawMessage, len(p.Raw)+1)
	for k, v := range p.Raw {
		out[k] = v
	}
	out["variants"] = records.Encode(vs)
	return records.Encode(out), nil
}

// TitleOf is a variant's title derived from its options ("Red / Large"),
// or "Default Title" without any.
func TitleOf(v *Variant) string {
	var parts []string
	for _, o := range []*string{v.Option1, v.Option2, v.Option3} {
		if o != nil && *o != "" {
			parts = append(parts, *o)
		}
	}
	if len(parts) == 0 {
		return "Default Title"
	}
	return strings.Join(parts, " / ")
}
