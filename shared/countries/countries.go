// Package countries serves the countries endpoints with their provinces and
// shipping rates (docs/openapi.yaml: schema Country, the Countries operations).
// The record, its items and the ISO dataset are in shared/countries/country; this
// package holds the inputs, their validation and the operations (operations.go)
// the handlers (http.go) call.
//
// A country, its provinces and its rates are one item (country/<id>), so
// every write is one conditional write of it: a create (with the code guard
// country#code/<code> and the count, one transaction), an update of the
// country or of one province (conditioned on the version read, retried),
// and a delete (item, guard and count, one transaction) that removes the
// provinces and rates with it. Countries log no event and fire no webhook:
// the events log and the webhook topics have no country topic or subject.
package countries

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/countries/country"
	"github.com/storeadmin/adminapi/shared/records"
)

// Input is a country as POST and PUT accept it. code is read on create
// only; name comes from the dataset.
type Input struct {
	Code                         *string                           `json:"code"`
	Tax                          country.Number                    `json:"tax"`
	TaxName                      admin.Optional[string]            `json:"tax_name"`
	Provinces                    []ProvinceInput                   `json:"provinces" null:"refuse"`
	PriceBasedShippingRates      admin.Optional[[]PriceRateInput]  `json:"price_based_shipping_rates" null:"refuse"`
	WeightBasedShippingRates     admin.Optional[[]WeightRateInput] `json:"weight_based_shipping_rates" null:"refuse"`
	CarrierShippingRateProviders admin.Optional[[]json.RawMessage] `json:"carrier_shipping_rate_providers"`
}

// ProvinceInput changes one province's taxes: the province is named by id
// or, where the client knows no id yet (a create), by code.
type ProvinceInput struct {
	ID            *int64                 `json:"id"`
	Code          *string                `json:"code"`
	Tax           country.Number         `json:"tax"`
	TaxName       admin.Optional[string] `json:"tax_name"`
	TaxType       admin.Optional[string] `json:"tax_type"`
	TaxPercentage country.Number         `json:"tax_percentage"`
}

// PriceRateInput is a price-based shipping rate; id keeps an existing one.
type PriceRateInput struct {
	ID               *int64                      `json:"id"`
	Name             *string                     `json:"name"`
	Price            admin.Optional[admin.Money] `json:"price"`
	MinOrderSubtotal admin.Optional[admin.Money] `json:"min_order_subtotal"`
	MaxOrderSubtotal admin.Optional[admin.Money] `json:"max_order_subtotal"`
	Offsets          []OffsetInput               `json:"offsets"`
}

// OffsetInput is one offset of a price-based rate.
type OffsetInput struct {
	Amount admin.Optional[admin.Money] `json:"amount"`
}

// WeightRateInput is a weight-based shipping rate; id keeps an existing one.
type WeightRateInput struct {
	ID         *int64                      `json:"id"`
	Name       *string                     `json:"name"`
	Price      admin.Optional[admin.Money] `json:"price"`
	WeightLow  country.Number              `json:"weight_low"`
	WeightHigh country.Number              `json:"weight_high"`
}

const (
	wrapper, plural                 = "country", "countries"
	provinceWrapper, provincePlural = "province", "provinces"
	maxText                         = 255
	// maxOffsets bounds the offsets of one price-based rate.
	maxOffsets = 10
	// maxGrams bounds weights: 1,000 tonnes.
	maxGrams = 1_000_000_000

	msgNotNegative = "must be greater than or equal to 0"
	msgPercentage  = "must equal tax × 100"
	fieldPrice     = "price_based_shipping_rates"
	fieldWeight    = "weight_based_shipping_rates"
)

// apply validates in and merges it into c (a new country, with the
// defaults, on create). next draws ids for new rates.
func (in *Input) apply(c *country.Country, next func() int64) error {
	var v admin.Validation
	if in.Tax.Set {
		if r, ok := rate(v.Add, "tax", in.Tax); ok {
			c.Tax = r
		}
	}
	taxName(&v, "tax_name", &c.TaxName, in.TaxName)
	in.applyProvinces(&v, c)
	if in.PriceBasedShippingRates.Set {
		c.PriceBasedShippingRates = priceRates(&v, c, in.PriceBasedShippingRates.Value, next)
	}
	if in.WeightBasedShippingRates.Set {
		c.WeightBasedShippingRates = weightRates(&v, c, in.WeightBasedShippingRates.Value, next)
	}
	if p := in.CarrierShippingRateProviders; p.Set && len(p.Value) > 0 {
		v.Add("carrier_shipping_rate_providers", "must be an empty array (carrier-calculated rates are not supported)")
	}
	if err := v.Err(); err != nil {
		return err
	}
	if len(records.Encode(c)) > records.MaxData {
		return admin.Invalid("base", fmt.Sprintf("is too large (a country with its provinces and rates may take at most %d KB stored)", records.MaxData>>10))
	}
	return nil
}

// rate reads a tax fraction: 0 to 1 with at most six decimal places.
func rate(add func(field, msg string), field string, n country.Number) (country.Rate, bool) {
	if n.Null {
		add(field, admin.MsgBlank)
		return 0, false
	}
	r, msg := n.Scaled(country.RatePlaces, 0, country.RateScale)
	if msg != "" {
		add(field, msg)
		return 0, false
	}
	return country.Rate(r), true
}

// taxName applies a tax name: null or blank clears it.
func taxName(v *admin.Validation, field string, dst **string, in admin.Optional[string]) {
	if in.Set && utf8.RuneCountInString(strings.TrimSpace(in.Value)) > maxText {
		v.Add(field, admin.TooLong(maxText))
		return
	}
	admin.SetText(dst, in)
}

// applyProvinces applies the provinces' inputs, each to the province its id
// or code names.
func (in *Input) applyProvinces(v *admin.Validation, c *country.Country) {
	for i := range in.Provinces {
		pin := &in.Provinces[i]
		var at int
		switch {
		case pin.ID != nil:
			at = slices.IndexFunc(c.Provinces, func(p country.Province) bool { return p.ID == *pin.ID })
			if at < 0 {
				v.Add("provinces", fmt.Sprintf("id %d is not a province of %s", *pin.ID, c.Name))
				continue
			}
		case pin.Code != nil:
			code := country.NormalizeCode(*pin.Code)
			at = slices.IndexFunc(c.Provinces, func(p country.Province) bool { return p.Code == code })
			if at < 0 {
				v.Add("provinces", fmt.Sprintf("code %q is not a province of %s", code, c.Name))
				continue
			}
		default:
			v.Add("provinces", "each province needs its id or code")
			continue
		}
		pin.apply(v, "provinces", &c.Provinces[at])
	}
}

// apply validates a province input and merges it into p. Inside a
// country (field "provinces") every problem is on that key, naming the
// province's field; on a province's own endpoint (field "") on the field.
func (pin *ProvinceInput) apply(v *admin.Validation, field string, p *country.Province) {
	bad := false
	add := func(f, m string) {
		bad = true
		if field == "" {
			v.Add(f, m)
		} else {
			v.Add(field, f+" "+m)
		}
	}
	tax, taxOK := country.Rate(0), false
	if pin.Tax.Set {
		tax, taxOK = rate(add, "tax", pin.Tax)
	}
	if pin.TaxPercentage.Set {
		pct, ok := percentage(add, pin.TaxPercentage)
		// A whole-object save echoes both: the one the client left as
		// stored gives way to the one it changed.
		switch {
		case !ok:
		case pin.Tax.Set && taxOK && pct != tax && pct == country.Rate(p.TaxPercentage):
		case pin.Tax.Set && taxOK && pct != tax && tax == p.Tax:
			tax = pct
		case pin.Tax.Set && taxOK && pct != tax:
			add("tax_percentage", msgPercentage)
		case !pin.Tax.Set:
			tax, taxOK = pct, true
		}
	}
	if pin.TaxName.Set && utf8.RuneCountInString(strings.TrimSpace(pin.TaxName.Value)) > maxText {
		add("tax_name", admin.TooLong(maxText))
	}
	if pin.TaxType.Set && !pin.TaxType.Null && !slices.Contains(country.TaxTypes, strings.TrimSpace(pin.TaxType.Value)) {
		add("tax_type", admin.MsgNotInList)
	}
	if bad {
		return
	}
	if taxOK {
		p.SetTax(tax)
	}
	admin.SetText(&p.TaxName, pin.TaxName)
	admin.SetText(&p.TaxType, pin.TaxType)
}

// percentage reads a tax percentage (0 to 100, at most four decimal places)
// as the rate it stands for.
func percentage(add func(field, msg string), n country.Number) (country.Rate, bool) {
	if n.Null {
		add("tax_percentage", admin.MsgBlank)
		return 0, false
	}
	r, msg := n.Scaled(country.RatePlaces-2, 0, country.RateScale)
	if msg != "" {
		add("tax_percentage", msg)
		return 0, false
	}
	return country.Rate(r), true
}

// rateID resolves the id of a rate input: an existing rate's, or a new one.
func rateID(v *admin.Validation, field string, id *int64, existing map[int64]bool, seen map[int64]bool, next func() int64) int64 {
	if id == nil {
		return next()
	}
	switch {
	case !existing[*id]:
		v.Add(field, fmt.Sprintf("id %d is not a rate of this country", *id))
	case seen[*id]:
		v.Add(field, fmt.Sprintf("id %d is given twice", *id))
	}
	seen[*id] = true
	return *id
}

// rateName reads a rate's required name.
func rateName(v *admin.Validation, field string, in *string) string {
	s := ""
	if in != nil {
		s = strings.TrimSpace(*in)
	}
	switch {
	case s == "":
		v.Add(field, "name "+admin.MsgBlank)
	case utf8.RuneCountInString(s) > maxText:
		v.Add(field, "name "+admin.TooLong(maxText))
	}
	return s
}

// price reads a rate's required, non-negative price.
func price(v *admin.Validation, field string, in admin.Optional[admin.Money]) admin.Money {
	switch {
	case !in.Set || in.Null:
		v.Add(field, "price "+admin.MsgBlank)
	case in.Value < 0:
		v.Add(field, "price "+msgNotNegative)
	}
	return in.Value
}

// priceRates validates the price-based rates that replace c's.
func priceRates(v *admin.Validation, c *country.Country, in []PriceRateInput, next func() int64) []country.PriceRate {
	if len(in) > country.MaxRates {
		v.Add(fieldPrice, admin.TooMany(country.MaxRates, "rates"))
		return nil
	}
	existing := map[int64]bool{}
	for _, r := range c.PriceBasedShippingRates {
		existing[r.ID] = true
	}
	seen := map[int64]bool{}
	out := make([]country.PriceRate, 0, len(in))
	for _, ri := range in {
		r := country.PriceRate{ID: rateID(v, fieldPrice, ri.ID, existing, seen, next), CountryID: c.ID,
			Name: rateName(v, fieldPrice, ri.Name), Price: price(v, fieldPrice, ri.Price), Offsets: []country.Offset{}}
		for _, b := range []struct {
			name string
			in   admin.Optional[admin.Money]
			dst  **admin.Money
		}{{"min_order_subtotal", ri.MinOrderSubtotal, &r.MinOrderSubtotal}, {"max_order_subtotal", ri.MaxOrderSubtotal, &r.MaxOrderSubtotal}} {
			if !b.in.Set || b.in.Null {
				continue
			}
			if b.in.Value < 0 {
				v.Add(fieldPrice, b.name+" "+msgNotNegative)
				continue
			}
			m := b.in.Value
			*b.dst = &m
		}
		if r.MinOrderSubtotal != nil && r.MaxOrderSubtotal != nil && *r.MaxOrderSubtotal < *r.MinOrderSubtotal {
			v.Add(fieldPrice, "max_order_subtotal must be greater than or equal to min_order_subtotal")
		}
		if len(ri.Offsets) > maxOffsets {
			v.Add(fieldPrice, "offsets "+admin.TooMany(maxOffsets, "offsets"))
		}
		for _, o := range ri.Offsets {
			if !o.Amount.Set || o.Amount.Null {
				v.Add(fieldPrice, "offsets amount "+admin.MsgBlank)
				continue
			}
			r.Offsets = append(r.Offsets, country.Offset{Amount: o.Amount.Value})
		}
		out = append(out, r)
	}
	return out
}

// weightRates validates the weight-based rates that replace c's.
func weightRates(v *admin.Validation, c *country.Country, in []WeightRateInput, next func() int64) []country.WeightRate {
	if len(in) > country.MaxRates {
		v.Add(fieldWeight, admin.TooMany(country.MaxRates, "rates"))
		return nil
	}
	existing := map[int64]bool{}
	for _, r := range c.WeightBasedShippingRates {
		existing[r.ID] = true
	}
	seen := map[int64]bool{}
	out := make([]country.WeightRate, 0, len(in))
	for _, ri := range in {
		r := country.WeightRate{ID: rateID(v, fieldWeight, ri.ID, existing, seen, next), CountryID: c.ID,
			Name: rateName(v, fieldWeight, ri.Name), Price: price(v, fieldWeight, ri.Price)}
		if ri.WeightLow.Set && !ri.WeightLow.Null {
			g, msg := ri.WeightLow.Scaled(country.GramPlaces, 0, maxGrams)
			if msg != "" {
				v.Add(fieldWeight, "weight_low "+msg)
			}
			r.WeightLow = country.Grams(g)
		}
		if ri.WeightHigh.Set && !ri.WeightHigh.Null {
			g, msg := ri.WeightHigh.Scaled(country.GramPlaces, 0, maxGrams)
			switch {
			case msg != "":
				v.Add(fieldWeight, "weight_high "+msg)
			case country.Grams(g) < r.WeightLow:
				v.Add(fieldWeight, "weight_high must be greater than or equal to weight_low")
			default:
				w := country.Grams(g)
				r.WeightHigh = &w
			}
		}
		out = append(out, r)
	}
	return out
}
