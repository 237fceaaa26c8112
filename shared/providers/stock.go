package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/text/encoding/charmap"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/variants"
)

// maxStock is the largest stock level accepted from a provider: the
// admin's own bound on inventory_quantity.
const maxStock = 1_000_000_000

// FetchStock asks every service with inventory_management for the stock
// of all its SKUs (GET <callback_url>/fetch_stock.<format>?shop=<domain>)
// and sets each variant it manages whose SKU is in the answer to that
// level (variants.SetStock: a Product update event and products/update
// when the level changes, nothing when it does not).
func FetchStock(ctx context.Context, d *platform.Deps) Summary {
	const job = "fetch_stock"
	t := tally{metrics: d.Metrics}
	shop, svcs, err := setup(ctx, d, func(s *fulfillmentservices.FulfillmentService) bool { return s.InventoryManagement })
	if err != nil {
		t.fail(ctx, job, "(all services)", err)
		return t.done(ctx, job)
	}
	ctx = admin.WithShop(ctx, shop)
	each(svcs, func(svc *fulfillmentservices.FulfillmentService) {
		t.add(func(s *Summary) { s.Providers++ })
		body, err := call(ctx, d, svc, job, url.Values{"shop": {shop.Domain}})
		if err != nil {
			t.fail(ctx, job, svc.Handle, err)
			return
		}
		levels, err := parseStock(svc.Format, body)
		if err != nil {
			t.fail(ctx, job, svc.Handle, err)
			return
		}
		bySKU, err := managedVariants(ctx, d.Store, svc.Handle)
		if err != nil {
			t.fail(ctx, job, svc.Handle, err)
			return
		}
		var unknown []string
		for _, sku := range sortedKeys(levels.levels) {
			ids := bySKU[sku]
			if len(ids) == 0 {
				unknown = append(unknown, sku)
				continue
			}
			for _, id := range ids {
				changed, err := variants.SetStock(ctx, d, id, levels.levels[sku], svc.Name, managedWith(svc.Handle, sku))
				if err != nil {
					t.fail(ctx, job, svc.Handle, fmt.Errorf("variant %d: %w", id, err))
					continue
				}
				if changed {
					t.add(func(s *Summary) { s.Updated++ })
				}
			}
		}
		t.skip(ctx, job, svc.Handle, "unknown SKUs", unknown)
		t.skip(ctx, job, svc.Handle, "invalid stock levels", levels.bad)
	})
	return t.done(ctx, job)
}

// FetchStockOne asks the service managing a variant's stock for its SKU
// alone (GET <callback_url>/fetch_stock.<format>?shop=<domain>&sku=<sku>)
// and sets the level answered. A variant that is gone, has no SKU, or is
// not managed by a registered service with inventory_management needs no
// request and is no error; a failed request or an unreadable answer is
// (ProviderError reports it).
func FetchStockOne(ctx context.Context, d *platform.Deps, variantID int64) error {
	shop, svcs, err := setup(ctx, d, func(s *fulfillmentservices.FulfillmentService) bool { return s.InventoryManagement })
	if err != nil {
		return err
	}
	_, _, err = stockOne(admin.WithShop(ctx, shop), d, shop, svcs, variantID)
	return err
}

// stockOne is FetchStockOne with the shop and the services read; it
// reports whether it asked a provider and whether the level changed.
func stockOne(ctx context.Context, d *platform.Deps, shop *admin.Shop, svcs []fulfillmentservices.FulfillmentService, variantID int64) (asked, changed bool, err error) {
	it, err := d.Store.Get(ctx, catalog.VariantKey(variantID))
	if errors.Is(err, store.ErrNotFound) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	v, err := catalog.DecodeVariant(&it)
	if err != nil {
		return false, false, err
	}
	if v.InventoryManagement == nil || v.SKU == "" {
		return false, false, nil
	}
	i := slices.IndexFunc(svcs, func(s fulfillmentservices.FulfillmentService) bool { return s.Handle == *v.InventoryManagement })
	if i < 0 {
		return false, false, nil
	}
	svc := &svcs[i]
	body, err := call(ctx, d, svc, "fetch_stock", url.Values{"shop": {shop.Domain}, "sku": {v.SKU}})
	if err != nil {
		return true, false, err
	}
	levels, err := parseStock(svc.Format, body)
	if err != nil {
		return true, false, err
	}
	qty, ok := levels.levels[v.SKU]
	if !ok {
		if slices.Contains(levels.bad, v.SKU) {
			return true, false, providerError("fetch_stock: invalid stock level for SKU %q", v.SKU)
		}
		return true, false, nil // the provider does not know the SKU (yet)
	}
	changed, err = variants.SetStock(ctx, d, v.ID, qty, svc.Name, managedWith(svc.Handle, v.SKU))
	return true, changed, err
}

// setup reads the shop and the services keep accepts that have a
// callback_url.
func setup(ctx context.Context, d *platform.Deps, keep func(*fulfillmentservices.FulfillmentService) bool) (*admin.Shop, []fulfillmentservices.FulfillmentService, error) {
	shop, err := loadShop(ctx, d)
	if err != nil {
		return nil, nil, err
	}
	all, err := fulfillmentservices.All(ctx, d.Store)
	if err != nil {
		return nil, nil, fmt.Errorf("providers: reading the services: %w", err)
	}
	svcs := slices.DeleteFunc(all, func(s fulfillmentservices.FulfillmentService) bool { return s.CallbackURL == nil || !keep(&s) })
	return shop, svcs, nil
}

// managedWith accepts a variant still managed by the service with the SKU
// the provider answered for.
func managedWith(handle, sku string) func(*catalog.Variant) bool {
	return func(v *catalog.Variant) bool {
		return v.InventoryManagement != nil && *v.InventoryManagement == handle && v.SKU == sku
	}
}

// managedVariants maps the SKUs of the variants a service manages to their
// ids: one Query of the service's GSI2 partition, paged.
func managedVariants(ctx context.Context, st store.Store, handle string) (map[string][]int64, error) {
	out := map[string][]int64{}
	q := store.Query{Index: store.GSI2, PK: catalog.ManagedIndex(handle), Limit: 500}
	err := records.Each(ctx, st, q, func(it *store.Item) error {
		var v struct {
			SKU string `json:"sku"`
		}
		if err := records.Decode(it, &v); err != nil {
			return err
		}
		if id, err := records.ParseIDSK(it.SK); err == nil && v.SKU != "" {
			out[v.SKU] = append(out[v.SKU], id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the managed variants: %w", err)
	}
	return out, nil
}

// stockAnswer is a fetch_stock answer: the valid levels by SKU and the SKUs
// whose value is not one.
type stockAnswer struct {
	levels map[string]int64
	bad    []string
}

// parseStock reads a fetch_stock answer. JSON: a flat object of SKU →
// non-negative integer (also accepted wrapped as {"stock_levels": {...}},
// as the original service read it). XML: <StockLevels><Product><Sku>…</Sku>
// <Quantity>…</Quantity></Product>…</StockLevels>. Anything else is an
// error; a value that is not a whole number from 0 to maxStock is a bad
// entry.
func parseStock(format string, body []byte) (stockAnswer, error) {
	ans := stockAnswer{levels: map[string]int64{}}
	// set records one entry; a SKU given twice (XML) takes its last value.
	bad := map[string]bool{}
	set := func(sku, value string) {
		if n, ok := quantity(value); ok {
			ans.levels[sku] = n
			delete(bad, sku)
		} else {
			delete(ans.levels, sku)
			bad[sku] = true
		}
	}
	if format == "xml" {
		var doc struct {
			XMLName  xml.Name `xml:"StockLevels"`
			Products []struct {
				SKU      *string `xml:"Sku"`
				Quantity *string `xml:"Quantity"`
			} `xml:"Product"`
		}
		if err := decodeXML(body, &doc); err != nil {
			return ans, providerError("fetch_stock: the answer is not a <StockLevels> XML document: %v", err)
		}
		for _, p := range doc.Products {
			sku, value := "", ""
			if p.SKU != nil {
				sku = strings.TrimSpace(*p.SKU)
			}
			if p.Quantity != nil {
				value = strings.TrimSpace(*p.Quantity)
			}
			if sku == "" {
				ans.bad = append(ans.bad, "(no Sku)")
				continue
			}
			set(sku, value)
		}
		ans.bad = append(ans.bad, sortedKeys(bad)...)
		return ans, nil
	}
	obj, err := jsonObject(body)
	if err != nil {
		return ans, providerError("fetch_stock: %v", err)
	}
	if inner, ok := obj["stock_levels"]; ok && len(obj) == 1 {
		if o, err := jsonObject(inner); err == nil {
			obj = o
		}
	}
	for sku, raw := range obj {
		set(sku, string(raw))
	}
	ans.bad = sortedKeys(bad)
	return ans, nil
}

// quantity reads a stock level: digits only (no sign, fraction, exponent
// or quotes), at most maxStock.
func quantity(s string) (int64, bool) {
	if len(s) > 10 || !isDigits(s) {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxStock {
		return 0, false
	}
	return n, true
}

// jsonObject reads a JSON object (not null, an array or a scalar) with
// its values unparsed.
func jsonObject(b []byte) (map[string]json.RawMessage, error) {
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, fmt.Errorf("the answer is not a JSON object")
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(b, &obj); err != nil {
		return nil, fmt.Errorf("the answer is not a JSON object: %v", err)
	}
	return obj, nil
}

// decodeXML decodes an XML answer into v; besides UTF-8 it reads the
// single-byte encodings providers commonly declare.
func decodeXML(b []byte, v any) error {
	dec := xml.NewDecoder(bytes.NewReader(b))
	dec.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		switch strings.ToLower(label) {
		case "iso-8859-1", "latin1", "latin-1":
			return charmap.ISO8859_1.NewDecoder().Reader(in), nil
		case "windows-1252", "cp1252":
			return charmap.Windows1252.NewDecoder().Reader(in), nil
		case "us-ascii", "ascii":
			return in, nil
		}
		return nil, fmt.Errorf("unsupported encoding %q", label)
	}
	return dec.Decode(v)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
