// Package variants serves the product variant endpoints (docs/openapi.yaml: schema
// Variant, the Variants operations).
//
// Variants live in the catalog layout (shared/catalog): variant/<id> with
// GSI1 product#<product id>#variant, the stock level in the atomic number
// catalog.InventoryNum, and variantorder/<product id> holding the ordered
// ids. Every create and delete (and every move to another position) writes
// the order item conditioned on the version it read, so they take turns
// per product and the 100-variant limit always sees every variant. Option
// combinations are claimed by variantoptions#<product id> guard items
// written in the same transactions (seeded variants, which have none, are
// checked through the product's index and a consistent re-read). Every
// change logs a Product update event and fires products/update in its own
// transaction; the variant's metafields are metafield items owned by
// ("variant", id).
package variants

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// input is a variant as POST and PUT accept it.
type Input struct {
	Title               *string                     `json:"title" null:"refuse"`
	Option1             admin.Optional[string]      `json:"option1"`
	Option2             admin.Optional[string]      `json:"option2"`
	Option3             admin.Optional[string]      `json:"option3"`
	SKU                 admin.Optional[string]      `json:"sku"`
	Barcode             admin.Optional[string]      `json:"barcode"`
	Price               admin.Optional[admin.Money] `json:"price"`
	CompareAtPrice      admin.Optional[admin.Money] `json:"compare_at_price"`
	Grams               *int64                      `json:"grams" null:"refuse"`
	Weight              *float64                    `json:"weight" null:"refuse"`
	WeightUnit          *string                     `json:"weight_unit" null:"refuse"`
	Taxable             *bool                       `json:"taxable" null:"refuse"`
	RequiresShipping    *bool                       `json:"requires_shipping" null:"refuse"`
	FulfillmentService  *string                     `json:"fulfillment_service" null:"refuse"`
	InventoryManagement admin.Optional[string]      `json:"inventory_management"`
	InventoryPolicy     *string                     `json:"inventory_policy" null:"refuse"`
	ImageID             admin.Optional[int64]       `json:"image_id"`
	Position            *int                        `json:"position" null:"refuse"`
	Metafields          []metafields.Input          `json:"metafields" null:"refuse"`

	InventoryQuantity           *int64 `json:"inventory_quantity" null:"refuse"`
	OldInventoryQuantity        *int64 `json:"old_inventory_quantity" null:"refuse"`
	InventoryQuantityAdjustment *int64 `json:"inventory_quantity_adjustment" null:"refuse"`
}

const (
	maxText = 255
	// maxQuantity bounds stock levels and adjustments, far from overflow.
	maxQuantity = 1_000_000_000
	// maxGrams bounds weights (a thousand tonnes).
	maxGrams = 1_000_000_000

	msgNotNegative = "must be greater than or equal to 0"
	// MsgTooMany is the base error of the 101st variant of a product.
	MsgTooMany = "Product can have at most 100 variants"
)

// MsgExists is the base error of a variant whose options another variant
// of the product already has.
func MsgExists(title string) string { return fmt.Sprintf("The variant '%s' already exists.", title) }

// gramsPer is the number of grams in one of each weight_unit.
var gramsPer = map[string]float64{"g": 1, "kg": 1000, "oz": 28.349523125, "lb": 453.59237}

// hasOtherChanges reports whether the input changes anything besides the
// stock level.
func (in *Input) hasOtherChanges() bool {
	return in.Title != nil || in.Option1.Set || in.Option2.Set || in.Option3.Set || in.SKU.Set ||
		in.Barcode.Set || in.Price.Set || in.CompareAtPrice.Set || in.Grams != nil || in.Weight != nil ||
		in.WeightUnit != nil || in.Taxable != nil || in.RequiresShipping != nil || in.FulfillmentService != nil ||
		in.InventoryManagement.Set || in.InventoryPolicy != nil || in.ImageID.Set || in.Position != nil ||
		len(in.Metafields) > 0
}

// validateQuantities checks the stock fields, which need no stored state.
func (in *Input) validateQuantities(v *admin.Validation) {
	for _, f := range []struct {
		name string
		n    *int64
	}{{"inventory_quantity", in.InventoryQuantity}, {"old_inventory_quantity", in.OldInventoryQuantity},
		{"inventory_quantity_adjustment", in.InventoryQuantityAdjustment}} {
		if f.n != nil && (*f.n > maxQuantity || *f.n < -maxQuantity) {
			v.Add(f.name, fmt.Sprintf("must be between %d and %d", -maxQuantity, maxQuantity))
		}
	}
}

// text reads an optional nullable text field: blank and null are nil.
func text(v *admin.Validation, field string, dst **string, in admin.Optional[string]) {
	if !in.Set {
		return
	}
	s := strings.TrimSpace(in.Value)
	if in.Null || s == "" {
		*dst = nil
		return
	}
	if utf8.RuneCountInString(s) > maxText {
		v.Add(field, admin.TooLong(maxText))
		return
	}
	*dst = &s
}

// apply validates in and merges it into v: all fields but the stock level
// (the handlers' business) and image_id's ownership check (which needs the
// store). create fills the Variants operations' create defaults first.
func (in *Input) apply(v *catalog.Variant, create bool) error {
	var val admin.Validation
	if create {
		v.InventoryPolicy, v.FulfillmentService, v.InventoryManagement = "deny", "manual", nil
		v.Grams, v.Weight, v.WeightUnit = 0, 0, "kg"
		v.RequiresShipping, v.Taxable, v.SKU = true, true, ""
	}
	oldOptions := [3]*string{v.Option1, v.Option2, v.Option3}
	text(&val, "option1", &v.Option1, in.Option1)
	text(&val, "option2", &v.Option2, in.Option2)
	text(&val, "option3", &v.Option3, in.Option3)
	switch {
	case in.Title != nil && strings.TrimSpace(*in.Title) != "":
		t := strings.TrimSpace(*in.Title)
		if utf8.RuneCountInString(t) > maxText {
			val.Add("title", admin.TooLong(maxText))
		}
		v.Title = t
	case create || in.Title != nil || !sameOptions(oldOptions, [3]*string{v.Option1, v.Option2, v.Option3}):
		// Not given (or blank): the title follows the options.
		v.Title = catalog.TitleOf(v)
	}
	if in.SKU.Set {
		var sku *string
		text(&val, "sku", &sku, in.SKU)
		v.SKU = ""
		if sku != nil {
			v.SKU = *sku
		}
	}
	text(&val, "barcode", &v.Barcode, in.Barcode)
	if in.Price.Set {
		switch {
		case in.Price.Null:
			val.Add("price", admin.MsgBlank)
		case in.Price.Value < 0:
			val.Add("price", msgNotNegative)
		default:
			v.Price = in.Price.Value
		}
	}
	if in.CompareAtPrice.Set {
		switch {
		case in.CompareAtPrice.Null:
			v.CompareAtPrice = nil
		case in.CompareAtPrice.Value < 0:
			val.Add("compare_at_price", msgNotNegative)
		default:
			m := in.CompareAtPrice.Value
			v.CompareAtPrice = &m
		}
	}
	in.applyWeight(&val, v)
	if in.Taxable != nil {
		v.Taxable = *in.Taxable
	}
	if in.RequiresShipping != nil {
		v.RequiresShipping = *in.RequiresShipping
	}
	if in.FulfillmentService != nil {
		s := strings.TrimSpace(*in.FulfillmentService)
		switch {
		case s == "":
			val.Add("fulfillment_service", admin.MsgBlank)
		case utf8.RuneCountInString(s) > maxText:
			val.Add("fulfillment_service", admin.TooLong(maxText))
		default:
			v.FulfillmentService = s
		}
	}
	text(&val, "inventory_management", &v.InventoryManagement, in.InventoryManagement)
	if in.InventoryPolicy != nil {
		switch p := strings.TrimSpace(*in.InventoryPolicy); p {
		case "deny", "continue":
			v.InventoryPolicy = p
		default:
			val.Add("inventory_policy", admin.MsgNotInList)
		}
	}
	if in.ImageID.Set {
		switch {
		case in.ImageID.Null:
			v.ImageID = nil
		case in.ImageID.Value <= 0:
			val.Add("image_id", admin.MsgInvalid)
		default:
			id := in.ImageID.Value
			v.ImageID = &id
		}
	}
	switch {
	case in.Position == nil:
	case *in.Position < 1:
		val.Add("position", "must be greater than 0")
	case *in.Position > ids.Max: // the document's bound: a position beyond it is not one a JSON client can hold
		val.Add("position", fmt.Sprintf("must be less than or equal to %d", ids.Max))
	}
	in.validateQuantities(&val)
	metafields.ValidateInputs(&val, in.Metafields)
	return val.Err()
}

// applyWeight keeps weight and grams consistent: a given weight (in the
// given or current unit) sets grams; grams alone set the weight in the
// unit; a new unit alone re-expresses the same mass in it.
func (in *Input) applyWeight(val *admin.Validation, v *catalog.Variant) {
	unit := v.WeightUnit
	if in.WeightUnit != nil {
		u := strings.TrimSpace(*in.WeightUnit)
		if _, ok := gramsPer[u]; !ok {
			val.Add("weight_unit", admin.MsgNotInList)
			return
		}
		unit = u
	}
	if _, ok := gramsPer[unit]; !ok {
		unit = "kg" // a seeded unit the service does not know
	}
	switch {
	case in.Weight != nil:
		w := *in.Weight
		g := math.Round(w * gramsPer[unit])
		switch {
		case w < 0 || math.IsNaN(w):
			val.Add("weight", msgNotNegative)
			return
		case g > maxGrams:
			val.Add("weight", fmt.Sprintf("must be less than or equal to %s", formatWeight(maxGrams/gramsPer[unit])))
			return
		}
		v.Weight, v.Grams = w, int64(g)
	case in.Grams != nil:
		switch g := *in.Grams; {
		case g < 0:
			val.Add("grams", msgNotNegative)
			return
		case g > maxGrams:
			val.Add("grams", fmt.Sprintf("must be less than or equal to %d", maxGrams))
			return
		}
		v.Grams = *in.Grams
		v.Weight = weightOf(v.Grams, unit)
	case unit != v.WeightUnit:
		v.Weight = weightOf(v.Grams, unit)
	}
	v.WeightUnit = unit
}

// weightOf expresses grams in unit, rounded to three decimal places.
func weightOf(grams int64, unit string) float64 {
	return math.Round(float64(grams)/gramsPer[unit]*1000) / 1000
}

func formatWeight(w float64) string { return fmt.Sprintf("%.3f", math.Floor(w*1000)/1000) }

// optionKey is a variant's option combination as uniqueness compares it:
// trimmed, case-insensitive, null and blank alike.
func optionKey(v *catalog.Variant) [3]string {
	var k [3]string
	for i, o := range [3]*string{v.Option1, v.Option2, v.Option3} {
		if o != nil {
			k[i] = strings.ToLower(strings.TrimSpace(*o))
		}
	}
	return k
}

func sameOptions(a, b [3]*string) bool {
	for i := range a {
		x, y := "", ""
		if a[i] != nil {
			x = *a[i]
		}
		if b[i] != nil {
			y = *b[i]
		}
		if x != y {
			return false
		}
	}
	return true
}

// errDuplicate is the error of v's options being taken by a sibling.
func errDuplicate(v *catalog.Variant) error {
	return admin.Invalid("base", MsgExists(catalog.TitleOf(v)))
}

// guardKey is the item that claims an option combination within a product:
// variantoptions#<product id> / the combination's SHA-256 (three options
// of 255 characters do not fit a sort key). Every create, delete and option
// change through the API writes it in the variant's transaction, so two
// variants written here can never share a combination. Seeded variants
// have no claim; their combinations are found through the product's index.
func guardKey(productID int64, k [3]string) store.Key {
	sum := sha256.Sum256([]byte(k[0] + "\x00" + k[1] + "\x00" + k[2]))
	return store.Key{PK: "variantoptions#" + strconv.FormatInt(productID, 10), SK: hex.EncodeToString(sum[:])}
}

// claim is the write claiming v's combination; it fails if taken.
func claim(v *catalog.Variant) store.Op {
	k := claimKey(v)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(map[string]int64{"id": v.ID})}, store.IfAbsent, 0)
}

// claimKey is the key of v's claim on its option combination.
func claimKey(v *catalog.Variant) store.Key { return guardKey(v.ProductID, optionKey(v)) }

// release gives up v's combination (a no-op for a seeded variant, which
// never claimed it).
func release(v *catalog.Variant) store.Op {
	return store.Delete(guardKey(v.ProductID, optionKey(v)), store.Always, 0)
}

// affectsCollections reports whether a change of a variant may change its
// product's smart collection membership (price, compare-at price, weight,
// stock, title and options).
func affectsCollections(a, b *catalog.Variant) bool {
	moneyEq := func(x, y *admin.Money) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Price != b.Price || !moneyEq(a.CompareAtPrice, b.CompareAtPrice) || a.Grams != b.Grams ||
		a.Weight != b.Weight || a.WeightUnit != b.WeightUnit || a.InventoryQuantity != b.InventoryQuantity ||
		a.Title != b.Title || !sameOptions([3]*string{a.Option1, a.Option2, a.Option3}, [3]*string{b.Option1, b.Option2, b.Option3})
}
