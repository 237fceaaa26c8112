// Package seed loads the shop, its apps and the records the spec has no
// endpoints for (blogs, products with variants and images, customers with
// addresses, orders with transactions and fulfillments) from a JSON file.
// The local runner and the import command use it. The whole file is
// validated before anything is written.
//
// A load only ever adds what was never there: each seeded item is written
// once, in one transaction with a marker (seeded / <PK>\n<SK>, see
// MarkerKey), and a later load skips every item whose marker exists, even
// when the item itself is gone since: an uninstalled app's token, a
// deleted variant or frontpage collection stay gone across restarts and
// re-imports. An app's token is written only with its app record, which
// uninstall keeps; a product's variants only before its variant order, so
// the order always lists exactly the product's variants.
package seed

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/countries/country"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/savedsearches/customerindex"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

// Demo is the small demo shop loaded into an empty store when no seed file is given.
//
//go:embed demo.json
var Demo []byte

// File is the seed file's shape. Records the service does not interpret yet
// are kept as JSON objects with the spec's defaults filled in.
type File struct {
	Shop      *admin.Shop `json:"shop"`
	Apps      []App       `json:"apps"`
	Blogs     []Object    `json:"blogs"`
	Products  []Object    `json:"products"`
	Customers []Object    `json:"customers"`
	Orders    []Object    `json:"orders"`
}

// App is an app as the seed file gives it, with its token in clear. An app
// without access_token (and scopes) is known to the shop but not installed:
// it installs through OAuth (shared/oauth) with api_key as its client_id,
// shared_secret as its client secret, and redirect_urls as the addresses
// the owner may be sent back to.
type App struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	AccessToken  string   `json:"access_token"`
	SharedSecret string   `json:"shared_secret"`
	Scopes       []string `json:"scopes"`
	APIKey       string   `json:"api_key"`
	RedirectURLs []string `json:"redirect_urls"`
	// AccessScopes are the scopes the app may ask for when it installs or
	// re-authorizes through OAuth, as a Shopify app's configuration lists
	// its access scopes; none: what it holds (an app not installed: any).
	AccessScopes []string `json:"access_scopes"`
	// RateLimit names a call plan other than the default 40 calls leaking 2/s.
	RateLimit *admin.RatePlan `json:"rate_limit"`
	// Public marks an app of public distribution: from 2027-01-01 on the
	// service's clock its non-expiring offline tokens are refused
	// (admin.NonExpiringDeadline); a custom app (the default) is exempt.
	Public bool `json:"public"`
}

// Object is one JSON record.
type Object map[string]any

// MarkerPartition holds one marker per item a seed load ever wrote.
const MarkerPartition = "seeded"

// MarkerKey addresses the marker of a seeded item: its presence means the
// item was loaded once and is never written by a load again.
func MarkerKey(k store.Key) store.Key { return store.Key{PK: MarkerPartition, SK: k.PK + "\n" + k.SK} }

func markerOp(k store.Key) store.Op {
	mk := MarkerKey(k)
	return store.Put(store.Item{PK: mk.PK, SK: mk.SK, Version: 1, Data: []byte("{}")}, store.IfAbsent, 0)
}

// untrackedIndex is the GSI1 partition a seeded fulfillment is indexed under:
// parents.UntrackedPartition of its service when it has a service, no tracking
// number (absent, null or "") and is complete (status success, or none given, the
// Fulfillment services operations "completed fulfillments"); "" otherwise.
func untrackedIndex(f Object) string {
	service, _ := f["service"].(string)
	if service == "" {
		return ""
	}
	if n, ok := f["tracking_number"]; ok && n != nil && n != "" {
		return ""
	}
	if st, ok := f["status"]; ok && st != nil && st != "success" {
		return ""
	}
	return parents.UntrackedPartition(service)
}

// Check is a further rule on a parsed file, from outside the loader: the
// composition root checks that what resources read back from seeded records
// (a saved search's customers) decodes, without the loader importing them
// (api.SeedChecks). A check's error names the record.
type Check func(*File) error

// Parse decodes and validates a seed file without touching any store, then
// runs checks.
func Parse(data []byte, checks ...Check) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("seed: not a valid seed file: %w", err)
	}
	if f.Shop == nil || f.Shop.ID <= 0 || f.Shop.ID > ids.SeedMax {
		return nil, fmt.Errorf("seed: shop: an id between 1 and %d is required", int64(ids.SeedMax))
	}
	if f.Shop.Domain == "" {
		return nil, fmt.Errorf("seed: shop: domain is required")
	}
	if f.Shop.Currency == "" {
		f.Shop.Currency = "USD"
	}
	if f.Shop.IANATimezone == "" {
		f.Shop.IANATimezone = "UTC"
	}
	if _, err := timeLocation(f.Shop.IANATimezone); err != nil {
		return nil, fmt.Errorf("seed: shop: iana_timezone %q is unknown", f.Shop.IANATimezone)
	}
	tokens, keys := map[string]bool{}, map[string]bool{}
	for i, a := range f.Apps {
		where := fmt.Sprintf("seed: apps[%d]", i)
		switch {
		case a.ID <= 0 || a.ID > ids.SeedMax:
			return nil, fmt.Errorf("%s: an id between 1 and %d is required", where, int64(ids.SeedMax))
		case a.Name == "":
			return nil, fmt.Errorf("%s (id %d): name is required", where, a.ID)
		case a.AccessToken == "" && a.APIKey == "":
			return nil, fmt.Errorf("%s (id %d): access_token (installed) or api_key (installed through OAuth) is required", where, a.ID)
		case a.AccessToken == "" && len(a.Scopes) > 0:
			return nil, fmt.Errorf("%s (id %d): scopes need an access_token (an app not installed holds none)", where, a.ID)
		case a.AccessToken != "" && (len(a.AccessToken) < 16 || len(a.AccessToken) > 512):
			return nil, fmt.Errorf("%s (id %d): access_token must have 16 to 512 characters", where, a.ID)
		case a.AccessToken != "" && tokens[a.AccessToken]:
			return nil, fmt.Errorf("%s (id %d): access_token is used by another app", where, a.ID)
		case a.APIKey != "" && (len(a.APIKey) > 255 || !printable(a.APIKey)):
			return nil, fmt.Errorf("%s (id %d): api_key must have 1 to 255 printable ASCII characters", where, a.ID)
		case a.APIKey != "" && keys[a.APIKey]:
			return nil, fmt.Errorf("%s (id %d): api_key is used by another app", where, a.ID)
		case a.APIKey != "" && len(a.SharedSecret) < 16:
			return nil, fmt.Errorf("%s (id %d): an app with an api_key needs a shared_secret (its client secret) of at least 16 characters", where, a.ID)
		case a.APIKey != "" && len(a.RedirectURLs) == 0:
			return nil, fmt.Errorf("%s (id %d): an app with an api_key needs redirect_urls", where, a.ID)
		case a.APIKey == "" && len(a.RedirectURLs) > 0:
			return nil, fmt.Errorf("%s (id %d): redirect_urls need an api_key", where, a.ID)
		}
		for j, sc := range a.AccessScopes {
			if !admin.ValidScope(sc) {
				return nil, fmt.Errorf("%s (id %d): access_scopes[%d]: %q is no scope", where, a.ID, j, sc)
			}
		}
		if len(a.AccessScopes) > 0 && a.APIKey == "" {
			return nil, fmt.Errorf("%s (id %d): access_scopes need an api_key (they bound OAuth grants)", where, a.ID)
		}
		for j, u := range a.RedirectURLs {
			if err := admin.CheckRedirectURL(u); err != nil {
				return nil, fmt.Errorf("%s (id %d): redirect_urls[%d]: %v", where, a.ID, j, err)
			}
		}
		if a.AccessToken != "" {
			tokens[a.AccessToken] = true
		}
		if a.APIKey != "" {
			keys[a.APIKey] = true
		}
		// The bounds keep bucket/leak well inside a time.Duration.
		if p := a.RateLimit; p != nil && (p.Bucket < 1 || p.Bucket > 100_000 || !(p.LeakPerSecond >= 0.01 && p.LeakPerSecond <= 10_000)) {
			return nil, fmt.Errorf("%s (id %d): rate_limit needs a bucket of 1 to 100000 calls and a leak_per_second of 0.01 to 10000", where, a.ID)
		}
		for _, s := range a.Scopes {
			if !admin.ValidScope(s) {
				return nil, fmt.Errorf("%s (id %d): unknown scope %q", where, a.ID, s)
			}
		}
	}
	seen := map[string]bool{}
	check := func(kind string, list []Object, children ...string) error {
		for i, o := range list {
			id, err := o.id()
			if err != nil {
				return fmt.Errorf("seed: %s[%d]: %v", kind, i, err)
			}
			if seen[kind+strconv.FormatInt(id, 10)] {
				return fmt.Errorf("seed: %s[%d]: id %d appears twice", kind, i, id)
			}
			seen[kind+strconv.FormatInt(id, 10)] = true
			for _, child := range children {
				kids, err := o.children(child)
				if err != nil {
					return fmt.Errorf("seed: %s[%d] (id %d): %v", kind, i, id, err)
				}
				for j, k := range kids {
					kid, err := k.id()
					if err != nil {
						return fmt.Errorf("seed: %s[%d] (id %d): %s[%d]: %v", kind, i, id, child, j, err)
					}
					if seen[child+strconv.FormatInt(kid, 10)] {
						return fmt.Errorf("seed: %s[%d] (id %d): %s[%d]: id %d appears twice", kind, i, id, child, j, kid)
					}
					seen[child+strconv.FormatInt(kid, 10)] = true
				}
			}
		}
		return nil
	}
	for _, c := range []struct {
		kind     string
		list     []Object
		children []string
	}{
		{"blogs", f.Blogs, nil},
		{"products", f.Products, []string{"variants", "images"}},
		{"customers", f.Customers, []string{"addresses"}},
		{"orders", f.Orders, []string{"transactions", "fulfillments"}},
	} {
		if err := check(c.kind, c.list, c.children...); err != nil {
			return nil, err
		}
	}
	for i, p := range f.Products {
		vs, err := productVariants(p, admin.Time{}) // only their number is checked here
		if err != nil {
			return nil, fmt.Errorf("seed: products[%d]: %v", i, err)
		}
		if len(vs) > catalog.MaxVariants {
			return nil, fmt.Errorf("seed: products[%d]: more than %d variants", i, catalog.MaxVariants)
		}
	}
	for _, check := range checks {
		if err := check(&f); err != nil {
			return nil, err
		}
	}
	return &f, nil
}

// productVariants reads a seeded product's variants with the Variants operations'
// defaults (their timestamps now).
func productVariants(p Object, now admin.Time) ([]catalog.Variant, error) {
	pid, _ := p.id()
	kids, err := p.children("variants")
	if err != nil {
		return nil, err
	}
	out := make([]catalog.Variant, len(kids))
	for j, k := range kids {
		rec := Object{}
		for key, v := range VariantDefaults {
			rec[key] = v
		}
		for key, v := range k {
			rec[key] = v
		}
		raw, _ := json.Marshal(rec)
		var v catalog.Variant
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, fmt.Errorf("variants[%d]: %v", j, err)
		}
		v.ProductID = pid
		if v.Title == "" {
			v.Title = catalog.TitleOf(&v)
		}
		if v.CreatedAt.IsZero() {
			v.CreatedAt = now
		}
		if v.UpdatedAt.IsZero() {
			v.UpdatedAt = v.CreatedAt
		}
		out[j] = v
	}
	return out, nil
}

func (o Object) id() (int64, error) {
	n, ok := o["id"].(json.Number)
	if !ok {
		return 0, fmt.Errorf("an integer id is required")
	}
	id, err := n.Int64()
	if err != nil || id <= 0 || id > ids.SeedMax {
		return 0, fmt.Errorf("id %s is not an integer between 1 and %d", n, int64(ids.SeedMax))
	}
	if id == collection.FrontpageID {
		return 0, fmt.Errorf("id %d is reserved for the frontpage collection", id)
	}
	if id == theme.MainID {
		return 0, fmt.Errorf("id %d is reserved for the main theme", id)
	}
	if id == country.RestOfWorldID {
		return 0, fmt.Errorf("id %d is reserved for the Rest of World country", id)
	}
	return id, nil
}

func (o Object) children(name string) ([]Object, error) {
	raw, ok := o[name]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, fmt.Errorf("%s must be an array", name)
	}
	out := make([]Object, len(list))
	for i, v := range list {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s[%d] must be an object", name, i)
		}
		out[i] = m
	}
	return out, nil
}

// Summary counts what a load wrote; records loaded before (present, or
// deleted since) are skipped.
type Summary struct {
	Written, Skipped int
}

// Load parses data (Parse, with checks) and writes it into st, dating what
// the file leaves undated by clk.
func Load(ctx context.Context, st store.Store, clk clock.Clock, data []byte, checks ...Check) (*File, Summary, error) {
	f, err := Parse(data, checks...)
	if err != nil {
		return nil, Summary{}, err
	}
	var sum Summary
	// write loads one record once (see the package comment): the record
	// with its marker and its count, plus the companions of u (written
	// only with it), unless u.settled exists.
	var write func(u unit) error
	write = func(u unit) error {
		u.item.Version = 1
		ops := []store.Op{markerOp(u.item.Key()), store.Put(u.item, store.IfAbsent, 0)}
		for _, c := range u.with {
			c.Version = 1
			ops = append(ops, store.Put(c, store.IfAbsent, 0))
		}
		if u.settled != nil {
			ops = append(ops, store.Check(*u.settled, store.IfAbsent, 0))
		}
		if u.count != "" {
			ops = append(ops, records.CountOp(u.count, 1))
		}
		err := st.Transact(ctx, ops...)
		failed, _ := store.FailedKey(err)
		switch {
		case store.FailedOn(err, MarkerKey(u.item.Key())): // loaded before
			sum.Skipped++
			return nil
		case store.FailedOn(err, u.item.Key()) || u.settled != nil && failed == *u.settled:
			// Present without a marker (loaded before markers were kept),
			// or settled by its parent: mark it as loaded, as it is.
			sum.Skipped++
			return st.Transact(ctx, markerOp(u.item.Key()))
		case slices.ContainsFunc(u.with, func(c store.Item) bool { return c.Key() == failed }):
			// A companion is there without its record (a partial load
			// before markers were kept): the record alone.
			u.with = nil
			return write(u)
		case err != nil:
			return err
		}
		sum.Written++
		return nil
	}
	put := func(it store.Item, partition string) error { return write(unit{item: it, count: partition}) }
	if err := put(store.Item{PK: auth.ShopKey.PK, SK: auth.ShopKey.SK, Data: records.Encode(f.Shop)}, ""); err != nil {
		return nil, sum, err
	}
	for _, a := range f.Apps {
		// The token goes only with the app record, which uninstall keeps:
		// an uninstalled app is never given its token back. So does the
		// client_id's item: an app's OAuth settings are those of its
		// first load.
		app := admin.App{ID: a.ID, Name: a.Name, SharedSecret: a.SharedSecret, Scopes: a.Scopes, RateLimit: a.RateLimit,
			APIKey: a.APIKey, RedirectURLs: a.RedirectURLs, AccessScopes: a.AccessScopes, Public: a.Public}
		if a.AccessToken != "" {
			app.TokenHash = auth.HashToken(a.AccessToken)
		}
		data := records.Encode(app)
		ak := auth.AppKey(app.ID)
		var with []store.Item
		if app.TokenHash != "" {
			tk := auth.TokenKey(app.TokenHash)
			with = append(with, store.Item{PK: tk.PK, SK: tk.SK, Data: data})
		}
		if app.APIKey != "" {
			ck := auth.ClientKey(app.APIKey)
			with = append(with, store.Item{PK: ck.PK, SK: ck.SK, Data: records.Encode(auth.ClientApp{AppID: app.ID})})
		}
		if err := write(unit{item: store.Item{PK: ak.PK, SK: ak.SK, Data: data}, count: "app", with: with}); err != nil {
			return nil, sum, err
		}
	}
	// object writes one record under partition, minus the named child lists,
	// which are written under parents.ChildPartition; index, if set, gives the
	// record's GSI1 partition ("" for none).
	var object func(partition string, o Object, defaults Object, children map[string]childSpec, index func(Object) string) error
	object = func(partition string, o Object, defaults Object, children map[string]childSpec, index func(Object) string) error {
		id, _ := o.id()
		rec := Object{}
		for k, v := range defaults {
			rec[k] = v
		}
		for k, v := range o {
			if _, isChild := children[k]; !isChild {
				rec[k] = v
			}
		}
		it := store.Item{PK: partition, SK: records.IDSK(id), Data: records.Encode(rec)}
		if index != nil {
			if pk := index(rec); pk != "" {
				it.GSI1PK, it.GSI1SK = pk, it.SK
			}
		}
		if err := put(it, partition); err != nil {
			return err
		}
		for name, spec := range children {
			if spec.skip {
				continue
			}
			kids, _ := o.children(name)
			for i, k := range kids {
				kidPartition := parents.ChildPartition(partition, id, spec.name)
				if spec.global != "" {
					kidPartition = spec.global
				}
				kd := Object{spec.parentField: id}
				if spec.parentName != "" {
					kd[spec.parentName] = o["name"]
				}
				for key, v := range spec.defaults {
					kd[key] = v
				}
				if spec.position {
					kd["position"] = i + 1
				}
				for key, v := range k {
					kd[key] = v
				}
				if err := object(kidPartition, kd, nil, nil, spec.index); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// Every shop starts with the custom collection frontpage (schema
	// CustomCollection), the Rest of World country (schema Country) and its main
	// theme with a minimal working set of files (schema Theme): each with its
	// guards, count and marker in one transaction, skipped whole once written (and
	// not written again once deleted).
	now := admin.At(clk.Now())
	for _, ops := range [][]store.Op{collection.FrontpageOps(now), country.RestOfWorldOps(), theme.MainOps(now)} {
		switch err := st.Transact(ctx, append([]store.Op{markerOp(ops[0].TargetKey())}, ops...)...); {
		case store.FailedOn(err, MarkerKey(ops[0].TargetKey())):
			sum.Skipped++
		case store.FailedOnAny(err, ops): // there (or its guard taken) from before markers: mark it
			sum.Skipped++
			if err := st.Transact(ctx, markerOp(ops[0].TargetKey())); err != nil {
				return nil, sum, err
			}
		case err != nil:
			return nil, sum, err
		default:
			sum.Written++
		}
	}
	for _, b := range f.Blogs {
		if err := object(parents.BlogPartition, b, nil, nil, nil); err != nil {
			return nil, sum, err
		}
	}
	for _, p := range f.Products {
		if err := object(parents.ProductPartition, p, nil, map[string]childSpec{
			"variants": {skip: true},
			"images":   {name: "image", parentField: "product_id", position: true},
		}, nil); err != nil {
			return nil, sum, err
		}
		pid, _ := p.id()
		variants, _ := productVariants(p, admin.At(clk.Now()))
		// The variants go before their order, each only while the order
		// is absent: a variant deleted since, or added to the file after
		// the product was loaded, is never written outside the order.
		var order catalog.Order
		orderKey := catalog.OrderKey(pid)
		for i := range variants {
			if err := write(unit{item: variants[i].Item(1), count: parents.VariantPartition, settled: &orderKey}); err != nil {
				return nil, sum, err
			}
			order.IDs = append(order.IDs, variants[i].ID)
		}
		if len(variants) > 0 {
			if err := put(catalog.PutOrder(pid, order, 0).Item, ""); err != nil {
				return nil, sum, err
			}
		}
	}
	for _, c := range f.Customers {
		if err := object(parents.CustomerPartition, c, nil, map[string]childSpec{
			"addresses": {name: "address", parentField: "customer_id"},
		}, nil); err != nil {
			return nil, sum, err
		}
	}
	// Each customer's search entry (shared/savedsearches/customerindex),
	// once, like every seeded item: from the record, its seeded default
	// address's country and its orders in the file.
	orders := map[int64][]customerindex.Order{}
	for _, o := range f.Orders {
		cid, _ := Object{"id": o["customer_id"]}.id()
		id, _ := o.id()
		name, _ := o["name"].(string)
		created, _ := o["created_at"].(string)
		orders[cid] = append(orders[cid], customerindex.Order{ID: id, Name: name, CreatedAt: created})
	}
	for _, c := range f.Customers {
		id, _ := c.id()
		rec := Object{}
		for k, v := range c {
			if k != "addresses" {
				rec[k] = v
			}
		}
		e, err := customerindex.Build(records.Encode(rec), defaultCountry(c), orders[id])
		if err != nil {
			return nil, sum, fmt.Errorf("seed: customer %d: %v", id, err)
		}
		if err := put(e.Item(), ""); err != nil {
			return nil, sum, err
		}
	}
	for _, o := range f.Orders {
		if err := object(parents.OrderPartition, o, nil, map[string]childSpec{
			"transactions": {name: "transaction", parentField: "order_id"},
			// Fulfillments carry their order's name and, awaiting a
			// tracking number, the index the tracking poll reads.
			"fulfillments": {name: "fulfillment", parentField: "order_id", parentName: "order_name", index: untrackedIndex},
		}, nil); err != nil {
			return nil, sum, err
		}
	}
	return f, sum, nil
}

// defaultCountry is the ISO code of the country of a seeded customer's
// address flagged default ("" for none or an unknown country).
func defaultCountry(c Object) string {
	addrs, _ := c.children("addresses")
	for _, a := range addrs {
		if a["default"] != true {
			continue
		}
		for _, f := range []string{"country_code", "country", "country_name"} {
			if s, ok := a[f].(string); ok {
				if code, _, ok := country.Lookup(s); ok {
					return code
				}
			}
		}
	}
	return ""
}

// unit is one record a load writes once.
type unit struct {
	item    store.Item
	count   string       // the counted partition it adds one to ("" for none)
	with    []store.Item // written with it when absent, never on their own (an app's token)
	settled *store.Key   // when this item exists, the record is no longer written (a variant's order)
}

type childSpec struct {
	skip        bool   // written separately (variants)
	name        string // child kind, in its partition name
	global      string // partition when the child is addressable by id alone
	parentField string
	parentName  string              // if set, the parent's "name" is copied under this key
	index       func(Object) string // GSI1 partition of a child ("" for none); GSI1SK is its id
	defaults    Object
	position    bool // number children 1.. in file order unless given
}

// VariantDefaults are the create defaults of the Variants operations.
var VariantDefaults = Object{
	"inventory_policy":     "deny",
	"fulfillment_service":  "manual",
	"inventory_management": nil,
	"grams":                0,
	"weight":               0,
	"price":                "0.00",
	"weight_unit":          "kg",
	"requires_shipping":    true,
	"taxable":              true,
	"sku":                  "",
	"option1":              nil,
	"option2":              nil,
	"option3":              nil,
	"barcode":              nil,
	"compare_at_price":     nil,
	"image_id":             nil,
}

// printable reports whether s is printable ASCII without spaces.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

func timeLocation(name string) (*time.Location, error) { return time.LoadLocation(name) }
