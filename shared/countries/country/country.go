// Package country is the stored country (docs/openapi.yaml: schema Country) with
// its provinces and shipping rates, the ISO dataset they come from (iso_gen.go,
// generated from Debian's iso-codes by internal/gen) and the default taxes
// (taxes.go). It imports no resource package, so the seed (Rest of World) and the
// countries endpoints both build on it.
//
// Items: the country at country/<id>, holding its provinces and shipping
// rates in the same item, so a create, an update (of the country or of one
// province) and a delete are each one conditional write of one item and
// nobody ever sees a country half written or half deleted (a country has at
// most 107 provinces and MaxRates rates of each kind, far within DynamoDB's
// 400 KB). Its code is guarded by country#code/<code> (one country per code
// per shop), written and deleted in the country's transaction.
package country

import (
	"context"
	"encoding/json"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

const (
	// Partition holds every country by id (and names its count).
	Partition = "country"
	// CodePartition holds one guard per country code: {"id": <country id>}.
	CodePartition = "country#code"
	// RestOfWorldCode is the pseudo-country of every unlisted destination.
	RestOfWorldCode = "*"
	// RestOfWorldName is its name.
	RestOfWorldName = "Rest of World"
	// RestOfWorldID is its id as the seed writes it: reserved below the
	// largest seed id (the frontpage collection's), never assigned.
	RestOfWorldID = ids.SeedMax - 1
	// MaxRates bounds each kind of shipping rate of one country.
	MaxRates = 100
)

// Key addresses a country.
func Key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

// CodeKey addresses the guard of a country code.
func CodeKey(code string) store.Key { return store.Key{PK: CodePartition, SK: code} }

// Country is the stored and returned record.
type Country struct {
	ID                           int64             `json:"id"`
	Code                         string            `json:"code"`
	Name                         string            `json:"name"`
	Tax                          Rate              `json:"tax"`
	TaxName                      *string           `json:"tax_name"`
	Provinces                    []Province        `json:"provinces"`
	PriceBasedShippingRates      []PriceRate       `json:"price_based_shipping_rates"`
	WeightBasedShippingRates     []WeightRate      `json:"weight_based_shipping_rates"`
	CarrierShippingRateProviders []json.RawMessage `json:"carrier_shipping_rate_providers"`
}

// Province is a sub-region of a country (schema Country); TaxPercentage is always
// Tax × 100 (SetTax keeps them together).
type Province struct {
	ID            int64   `json:"id"`
	CountryID     int64   `json:"country_id"`
	Code          string  `json:"code"`
	Name          string  `json:"name"`
	Tax           Rate    `json:"tax"`
	TaxName       *string `json:"tax_name"`
	TaxType       *string `json:"tax_type"`
	TaxPercentage Percent `json:"tax_percentage"`
}

// SetTax sets the province's tax and its percentage.
func (p *Province) SetTax(r Rate) { p.Tax, p.TaxPercentage = r, Percent(r) }

// PriceRate is a shipping rate chosen by the order's subtotal.
type PriceRate struct {
	ID               int64        `json:"id"`
	CountryID        int64        `json:"country_id"`
	Name             string       `json:"name"`
	Price            admin.Money  `json:"price"`
	MinOrderSubtotal *admin.Money `json:"min_order_subtotal"`
	MaxOrderSubtotal *admin.Money `json:"max_order_subtotal"`
	Offsets          []Offset     `json:"offsets"`
}

// Offset is an amount added to a price-based rate's price (negative for a
// discount).
type Offset struct {
	Amount admin.Money `json:"amount"`
}

// WeightRate is a shipping rate chosen by the order's weight, in kilograms.
type WeightRate struct {
	ID         int64       `json:"id"`
	CountryID  int64       `json:"country_id"`
	Name       string      `json:"name"`
	Price      admin.Money `json:"price"`
	WeightLow  Grams       `json:"weight_low"`
	WeightHigh *Grams      `json:"weight_high"`
}

// Item is the country's item at version.
func (c *Country) Item(version int64) store.Item {
	return store.Item{PK: Partition, SK: records.IDSK(c.ID), Version: version, Data: records.Encode(c)}
}

// Decode reads a country item.
func Decode(it *store.Item) (Country, error) {
	var c Country
	err := records.Decode(it, &c)
	return c, err
}

// New returns the country of code (normalized, Known) as a create makes it
// before the request's own values: its name, its provinces with fresh ids
// from next, and the default taxes.
func New(id int64, code string, next func() int64) Country {
	c := Country{ID: id, Code: code, Provinces: []Province{}, PriceBasedShippingRates: []PriceRate{},
		WeightBasedShippingRates: []WeightRate{}, CarrierShippingRateProviders: []json.RawMessage{}}
	if code == RestOfWorldCode {
		c.Name = RestOfWorldName
		return c
	}
	iso := isoByCode()[code]
	c.Name = iso.Name
	c.Tax, c.TaxName = DefaultTax(code)
	for _, ip := range iso.Provinces {
		p := Province{ID: next(), CountryID: id, Code: ip.Code, Name: ip.Name}
		if t, ok := defaultProvinceTaxes[code][ip.Code]; ok {
			p.SetTax(mustRate(t.rate))
			p.TaxName, p.TaxType = text(t.name), text(t.kind)
		}
		c.Provinces = append(c.Provinces, p)
	}
	return c
}

// CreateOps are the writes of a request's new country: the item (IfAbsent,
// first, as records.Create wants), stamped as the request's change
// (records.Stamp, change its id: its count is the change feed's), and its
// code guard (second: a failure means the shop has the code already).
func (c *Country) CreateOps(ctx context.Context, change int64) []store.Op {
	it := c.Item(1)
	records.Stamp(ctx, &it, change)
	return []store.Op{store.Put(it, store.IfAbsent, 0), c.guardOp()}
}

// guardOp claims the country's code.
func (c *Country) guardOp() store.Op {
	return store.Put(store.Item{PK: CodeKey(c.Code).PK, SK: c.Code, Version: 1, Data: records.Encode(map[string]int64{"id": c.ID})}, store.IfAbsent, 0)
}

// RestOfWorldOps are the writes creating the Rest of World every shop starts
// with: one transaction that fails whole when it was written before (or the
// shop has a `*` country already). The seed's write is no request's: it
// derives nothing, so it carries its count.
func RestOfWorldOps() []store.Op {
	c := New(RestOfWorldID, RestOfWorldCode, nil)
	return []store.Op{store.Put(c.Item(1), store.IfAbsent, 0), c.guardOp(), records.CountOp(Partition, 1)}
}
