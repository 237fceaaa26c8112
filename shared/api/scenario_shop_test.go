package api_test

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

func (s *scenario) themes(t *testing.T) {
	s.t = t
	const list = "/web/themes.json"
	one := func(id int64) string { return fmt.Sprintf("/web/themes/%d.json", id) }
	assets := func(id int64) string { return fmt.Sprintf("/web/themes/%d/assets.json", id) }
	valid := M{"theme": M{"name": "Spring"}}

	// create
	id := s.id(s.do(demoToken, "POST", list, valid, 201), "theme")
	s.wantFields(s.do(demoToken, "POST", list, M{"theme": M{"name": " "}}, 422), "name")
	s.wantFields(s.do(demoToken, "POST", list, M{"theme": M{"name": "A", "role": "boss"}}, 422), "role")
	s.wantFields(s.do(demoToken, "POST", list, M{"theme": M{"name": "A", "src": "ftp://x.example.com/t.zip"}}, 422), "src")
	s.do(demoToken, "POST", list, M{"name": "A"}, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list and get
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "themes", 2)
	s.do(demoToken, "GET", list+"?fields=id,role", nil, 200)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", one(id), nil, 200)
	s.do(demoToken, "GET", one(id)+"?fields=name", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(noToken, "GET", one(id), nil, 401)
	s.do(noScopeToken, "GET", one(id), nil, 403)

	// update
	s.do(demoToken, "PUT", one(id), M{"theme": M{"name": "Summer", "role": "mobile"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id), M{"theme": M{"role": "x"}}, 422), "role")
	s.do(demoToken, "PUT", one(id), M{"theme": 1}, 400)
	s.do(demoToken, "PUT", one(id), tooLarge, 413)
	s.do(demoToken, "PUT", one(999999999), valid, 404)
	s.do(noToken, "PUT", one(id), valid, 401)
	s.do(roToken, "PUT", one(id), valid, 403)

	// assets
	main := int64(theme.MainID)
	s.wantLen(s.do(demoToken, "GET", assets(main), nil, 200), "assets", len(theme.Starter))
	s.do(demoToken, "GET", assets(main)+"?fields=key,size", nil, 200)
	s.do(demoToken, "GET", assets(main)+"?asset[key]=assets/theme.css&theme_id=1", nil, 200)
	s.do(demoToken, "GET", assets(main)+"?asset[key]=assets/none.css", nil, 404)
	s.do(demoToken, "GET", assets(999999999), nil, 404)
	s.do(noToken, "GET", assets(main), nil, 401)
	s.do(roToken, "GET", assets(main), nil, 403)
	put := M{"asset": M{"key": "snippets/a.liquid", "value": "a"}}
	s.do(demoToken, "PUT", assets(main), put, 200)
	s.do(demoToken, "PUT", assets(main), M{"asset": M{"key": "assets/logo.png", "attachment": base64.StdEncoding.EncodeToString(tinyPNG(t, 1, 1))}}, 200)
	s.wantFields(s.do(demoToken, "PUT", assets(main), M{"asset": M{"key": "../a.liquid", "value": "a"}}, 422), "key")
	s.wantFields(s.do(demoToken, "PUT", assets(main), M{"asset": M{"key": "layout/x.liquid", "value": "a"}}, 422), "asset")
	s.do(demoToken, "PUT", assets(main), M{"theme": put}, 400)
	s.do(demoToken, "PUT", assets(main), `{"asset": {"key": "assets/x.bin", "attachment": "`+strings.Repeat("A", themes.MaxAssetBody)+`"}}`, 413)
	s.do(demoToken, "PUT", assets(999999999), put, 404)
	s.do(noToken, "PUT", assets(main), put, 401)
	s.do(roToken, "PUT", assets(main), put, 403)
	s.do(demoToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 200)
	s.do(demoToken, "DELETE", assets(main)+"?asset[key]=layout/theme.liquid", nil, 403)
	s.do(demoToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 404)
	s.do(demoToken, "DELETE", assets(main), nil, 400)
	s.do(noToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 401)
	s.do(noScopeToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 403)
	s.do(demoToken, "PUT", assets(id), M{"asset": M{"key": "assets/x.css", "value": "x"}}, 200)
	// The theme still processing refuses asset writes.
	busy := s.id(s.do(demoToken, "POST", list, M{"theme": M{"name": "Busy", "src": "https://themes.example.com/busy.zip"}}, 201), "theme")
	s.wantFields(s.do(demoToken, "DELETE", assets(busy)+"?asset[key]=assets/x.css", nil, 422), "base")

	// delete: the theme itself, not wrapped; never the main theme
	s.wantFields(s.do(demoToken, "DELETE", one(main), nil, 422), "base")
	s.do(noToken, "DELETE", one(id), nil, 401)
	s.do(roToken, "DELETE", one(id), nil, 403)
	if res := s.do(demoToken, "DELETE", one(id), nil, 200); res.Status == 200 && res.JSON(t)["name"] != "Summer" {
		t.Errorf("delete answered %s", res.Body)
	}
	s.do(demoToken, "DELETE", one(id), nil, 404)
}

// countriesRun carries the countries the steps create (Canada and France)
// and the path of one of Canada's provinces.
type countriesRun struct {
	*scenario
	caID, fr int64
	p1       string
}

const countryList = "/com/countries.json"

func (countriesRun) one(id int64) string { return fmt.Sprintf("/com/countries/%d.json", id) }

func (countriesRun) provinces(id int64) string { return fmt.Sprintf("/com/countries/%d/provinces", id) }

func (s *scenario) countries(t *testing.T) {
	s.t = t
	r := &countriesRun{scenario: s}
	r.create()
	r.readsUpdate()
	r.provinceSteps()
	r.deleteBothRoots()
}

// Create, after the Rest of World every shop starts with.
func (s *countriesRun) create() {
	t := s.t
	valid := M{"country": M{"code": "GB"}}
	// Every shop starts with Rest of World.
	s.wantLen(s.do(demoToken, "GET", countryList, nil, 200), "countries", 1)
	s.wantCount(s.do(demoToken, "GET", "/com/countries/count.json", nil, 200), 1)

	// create
	ca := s.do(demoToken, "POST", countryList, M{"country": M{"code": "ca",
		"price_based_shipping_rates": []any{M{"name": "Standard", "price": "10.00", "min_order_subtotal": "0", "max_order_subtotal": nil,
			"offsets": []any{M{"amount": "-1.00"}}}},
		"weight_based_shipping_rates": []any{M{"name": "Heavy", "price": 25, "weight_low": 5, "weight_high": nil}},
		"provinces":                   []any{M{"code": "QC", "tax_type": "compounded"}},
	}}, 201)
	s.caID = s.id(ca, "country")
	if c := ca.Object(t, "country"); c["name"] != "Canada" || c["tax"] != 0.05 {
		t.Errorf("create: %s", ca.Body)
	}
	s.fr = s.id(s.do(demoToken, "POST", countryList, M{"country": M{"code": "FR", "tax": 0.25, "tax_name": "TVA"}}, 201), "country")
	s.wantFields(s.do(demoToken, "POST", countryList, M{"country": M{}}, 422), "code")
	s.wantFields(s.do(demoToken, "POST", countryList, M{"country": M{"code": "XX"}}, 422), "code")
	s.wantFields(s.do(demoToken, "POST", countryList, M{"country": M{"code": "CA"}}, 422), "code")
	s.wantFields(s.do(demoToken, "POST", countryList, M{"country": M{"code": "DE", "tax": 1.5}}, 422), "tax")
	s.do(demoToken, "POST", countryList, M{"code": "DE"}, 400)
	s.do(demoToken, "POST", countryList, `{"country": {`, 400)
	s.do(demoToken, "POST", countryList, tooLarge, 413)
	s.do(noToken, "POST", countryList, valid, 401)
	s.do(roToken, "POST", countryList, valid, 403)
}

// List, count, get and update.
func (s *countriesRun) readsUpdate() {
	// list, count, get
	s.wantLen(s.do(demoToken, "GET", countryList, nil, 200), "countries", 3)
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s?since_id=%d&fields=id,code", countryList, s.caID), nil, 200), "countries", 1)
	s.do(demoToken, "GET", countryList+"?since_id=-1", nil, 400)
	s.do(noToken, "GET", countryList, nil, 401)
	s.do(roToken, "GET", countryList, nil, 403)
	s.wantCount(s.do(demoToken, "GET", "/com/countries/count.json", nil, 200), 3)
	s.do(noToken, "GET", "/com/countries/count.json", nil, 401)
	s.do(roToken, "GET", "/com/countries/count.json", nil, 403)
	s.do(demoToken, "GET", s.one(s.caID), nil, 200)
	s.do(demoToken, "GET", s.one(s.caID)+"?fields=name,tax", nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(noToken, "GET", s.one(s.caID), nil, 401)
	s.do(roToken, "GET", s.one(s.caID), nil, 403)

	// update
	s.do(demoToken, "PUT", s.one(s.fr), M{"country": M{"id": s.fr, "tax": 0.2, "tax_name": nil, "price_based_shipping_rates": []any{}}}, 200)
	s.wantFields(s.do(demoToken, "PUT", s.one(s.fr), M{"country": M{"tax": 0.1234567}}, 422), "tax")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.fr), M{"country": M{"weight_based_shipping_rates": []any{M{"name": "A", "price": "1", "weight_low": 2, "weight_high": 1}}}}, 422),
		"weight_based_shipping_rates")
	s.do(demoToken, "PUT", s.one(999999999), M{"country": M{"tax": 0.1}}, 404)
	s.do(demoToken, "PUT", s.one(s.fr), M{"tax": 0.1}, 400)
	s.do(demoToken, "PUT", s.one(s.fr), tooLarge, 413)
	s.do(noToken, "PUT", s.one(s.fr), M{"country": M{"tax": 0.1}}, 401)
	s.do(roToken, "PUT", s.one(s.fr), M{"country": M{"tax": 0.1}}, 403)
}

// Canada's provinces: list, count, get and update.
func (s *countriesRun) provinceSteps() {
	t := s.t
	ps := s.do(demoToken, "GET", s.provinces(s.caID)+".json", nil, 200).List(t, "provinces")
	s.wantLen(s.do(demoToken, "GET", s.provinces(s.caID)+".json?fields=code", nil, 200), "provinces", len(ps))
	pid := int64(ps[0].(map[string]any)["id"].(float64))
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s.json?since_id=%d", s.provinces(s.caID), pid), nil, 200), "provinces", len(ps)-1)
	s.do(demoToken, "GET", s.provinces(s.caID)+".json?since_id=x", nil, 400)
	s.do(demoToken, "GET", s.provinces(999999999)+".json", nil, 404)
	s.do(noToken, "GET", s.provinces(s.caID)+".json", nil, 401)
	s.do(roToken, "GET", s.provinces(s.caID)+".json", nil, 403)
	s.wantCount(s.do(demoToken, "GET", s.provinces(s.caID)+"/count.json", nil, 200), len(ps))
	s.do(demoToken, "GET", s.provinces(999999999)+"/count.json", nil, 404)
	s.do(noToken, "GET", s.provinces(s.caID)+"/count.json", nil, 401)
	s.do(roToken, "GET", s.provinces(s.caID)+"/count.json", nil, 403)
	s.p1 = fmt.Sprintf("%s/%d.json", s.provinces(s.caID), pid)
	s.do(demoToken, "GET", s.p1, nil, 200)
	s.do(demoToken, "GET", s.p1+"?fields=tax_percentage", nil, 200)
	s.do(demoToken, "GET", fmt.Sprintf("%s/%d.json", s.provinces(s.caID), 999999999), nil, 404)
	s.do(noToken, "GET", s.p1, nil, 401)
	s.do(roToken, "GET", s.p1, nil, 403)
	if p := s.do(demoToken, "PUT", s.p1, M{"province": M{"tax_percentage": 4.5, "tax_name": "PST", "tax_type": nil}}, 200).Object(t, "province"); p["tax"] != 0.045 {
		t.Errorf("province update: %v", p)
	}
	s.wantFields(s.do(demoToken, "PUT", s.p1, M{"province": M{"tax_type": "flat", "tax": 2}}, 422), "tax_type", "tax")
	s.do(demoToken, "PUT", fmt.Sprintf("%s/%d.json", s.provinces(s.fr), pid), M{"province": M{"tax": 0.1}}, 404)
	s.do(demoToken, "PUT", s.p1, M{"tax": 0.1}, 400)
	s.do(demoToken, "PUT", s.p1, tooLarge, 413)
	s.do(noToken, "PUT", s.p1, M{"province": M{"tax": 0.1}}, 401)
	s.do(roToken, "PUT", s.p1, M{"province": M{"tax": 0.1}}, 403)
}

// Delete, under both roots; a country's provinces go with it.
func (s *countriesRun) deleteBothRoots() {
	// delete, under both roots
	for _, root := range []string{"/com", "/admin"} {
		s.do(noToken, "DELETE", fmt.Sprintf("%s/countries/%d.json", root, s.fr), nil, 401)
		s.do(roToken, "DELETE", fmt.Sprintf("%s/countries/%d.json", root, s.fr), nil, 403)
	}
	s.do(demoToken, "DELETE", fmt.Sprintf("/admin/countries/%d.json", s.fr), nil, 200)
	s.do(demoToken, "DELETE", s.one(s.fr), nil, 404)
	s.do(demoToken, "DELETE", s.one(s.caID), nil, 200)
	s.do(demoToken, "DELETE", fmt.Sprintf("/admin/countries/%d.json", s.caID), nil, 404)
	s.do(demoToken, "GET", s.p1, nil, 404)
	s.wantCount(s.do(demoToken, "GET", "/com/countries/count.json", nil, 200), 1)
}

func (s *scenario) metafields(t *testing.T) {
	s.t = t
	const blog = 241253187
	page := s.id(s.do(demoToken, "POST", "/web/pages.json", M{"page": M{"title": "Metafield owner"}}, 201), "page")
	article := s.id(s.do(demoToken, "POST", fmt.Sprintf("/web/blogs/%d/articles.json", blog), M{"article": M{"title": "Metafield owner"}}, 201), "article")
	cc := s.id(s.do(demoToken, "POST", "/com/custom_collections.json", M{"custom_collection": M{"title": "Metafield owner"}}, 201), "custom_collection")
	sc := s.id(s.do(demoToken, "POST", "/com/smart_collections.json", M{"smart_collection": M{"title": "Metafield owner"}}, 201), "smart_collection")
	// base path, the same path with an unknown owner ("" for the top-level ones)
	owners := [][2]string{
		{"/com/metafields", ""},
		{"/admin/metafields", ""},
		{"/com/products/632910392/metafields", "/com/products/1/metafields"},
		{"/admin/products/632910392/metafields", "/admin/products/1/metafields"},
		{"/com/variants/808950810/metafields", "/com/variants/1/metafields"},
		{fmt.Sprintf("/web/pages/%d/metafields", page), "/web/pages/1/metafields"},
		{fmt.Sprintf("/web/blogs/%d/metafields", blog), "/web/blogs/1/metafields"},
		{fmt.Sprintf("/web/blogs/%d/articles/%d/metafields", blog, article), fmt.Sprintf("/web/blogs/%d/articles/1/metafields", blog)},
		{fmt.Sprintf("/com/custom_collections/%d/metafields", cc), "/com/custom_collections/1/metafields"},
		{fmt.Sprintf("/com/smart_collections/%d/metafields", sc), "/com/smart_collections/1/metafields"},
		{"/com/customers/207119551/metafields", "/com/customers/1/metafields"},
		{"/com/orders/450789469/metafields", "/com/orders/1/metafields"},
	}
	valid := M{"metafield": M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer", "description": "Where"}}
	// A product metafield: the top-level paths answer 403 for it to an app without products.
	product := s.id(s.do(demoToken, "POST", "/com/products/632910392/metafields.json",
		M{"metafield": M{"namespace": "scoped", "key": "product", "value": "x", "value_type": "string"}}, 201), "metafield")
	for _, o := range owners {
		s.metafieldsAt(o[0], o[1], valid, product)
	}
}

// metafieldsAt runs every metafield operation at one owner's base path.
// unknown is the same path with an owner that does not exist, "" for the
// top-level paths, whose scope checks use the product metafield product.
func (s *scenario) metafieldsAt(base, unknown string, valid M, product int64) {
	t := s.t
	top := unknown == ""
	list, count := base+".json", base+"/count.json"
	one := func(id int64) string { return fmt.Sprintf("%s/%d.json", base, id) }

	res := s.do(demoToken, "POST", list, valid, 201)
	id := s.id(res, "metafield")
	if m := res.Object(t, "metafield"); m["value"] != 25.0 {
		t.Errorf("%s: created %v", list, m)
	}
	s.do(demoToken, "POST", list, valid, 422)
	s.do(demoToken, "POST", list, M{"metafield": M{"namespace": "ab", "value_type": "float"}}, 422)
	s.do(demoToken, "POST", list, `{"metafield": {`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(badToken, "POST", list, valid, 401)

	s.wantLen(s.do(demoToken, "GET", list+"?namespace=inventory", nil, 200), "metafields", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?namepace=inventory&key=warehouse&value_type=integer&fields=id,value&created_at_min=2000-01-01", nil, 200), "metafields", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?namespace=other&since_id=1&limit=5&page=1", nil, 200), "metafields", 0)
	s.do(demoToken, "GET", list+"?limit=0", nil, 400)
	s.do(noToken, "GET", list, nil, 401)
	s.wantCount(s.do(demoToken, "GET", count+"?key=warehouse&updated_at_max=2999-01-01", nil, 200), 1)
	s.do(demoToken, "GET", count+"?value_type=date", nil, 400)
	s.do(badToken, "GET", count, nil, 401)
	if top {
		q := "?metafield[owner_resource]=order&metafield[owner_id]="
		s.wantLen(s.do(demoToken, "GET", list+"?namespace=scoped&metafield[owner_resource]=product&metafield[owner_id]=632910392", nil, 200), "metafields", 1)
		s.do(noScopeToken, "GET", list+q+"450789469", nil, 403)
		s.do(noScopeToken, "GET", count+q+"450789469", nil, 403)
		s.do(demoToken, "GET", list+q+"1", nil, 404)
		s.do(demoToken, "GET", count+q+"1", nil, 404)
		s.wantCount(s.do(demoToken, "GET", count+"?metafield[owner_resource]=shop", nil, 200), 1)
	} else {
		s.do(noScopeToken, "GET", list, nil, 403)
		s.do(noScopeToken, "GET", count, nil, 403)
		s.do(noScopeToken, "POST", list, valid, 403)
		s.do(demoToken, "GET", unknown+".json", nil, 404)
		s.do(demoToken, "GET", unknown+"/count.json", nil, 404)
		s.do(demoToken, "POST", unknown+".json", valid, 404)
	}

	s.do(demoToken, "GET", one(id), nil, 200)
	s.do(demoToken, "GET", one(id)+"?fields=id,owner_resource", nil, 200)
	s.do(badToken, "GET", one(id), nil, 401)
	s.do(demoToken, "GET", one(1), nil, 404)
	s.do(demoToken, "PUT", one(id), M{"metafield": M{"id": id, "value": "30", "value_type": "integer", "description": ""}}, 200)
	s.do(demoToken, "PUT", one(id), M{"metafield": M{"namespace": "changed"}}, 422)
	s.do(demoToken, "PUT", one(id), "not json", 400)
	s.do(demoToken, "PUT", one(id), tooLarge, 413)
	s.do(badToken, "PUT", one(id), M{"metafield": M{"value": 1}}, 401)
	s.do(demoToken, "PUT", one(1), M{"metafield": M{"value": 1}}, 404)
	scoped := id
	if top {
		scoped = product
	}
	s.do(noScopeToken, "GET", one(scoped), nil, 403)
	s.do(noScopeToken, "PUT", one(scoped), M{"metafield": M{"value": "y"}}, 403)
	s.do(noScopeToken, "DELETE", one(scoped), nil, 403)
	s.do(badToken, "DELETE", one(id), nil, 401)
	s.do(demoToken, "DELETE", one(id), nil, 200)
	s.do(demoToken, "DELETE", one(id), nil, 404)
}

func (s *scenario) addresses(t *testing.T) {
	s.t = t
	const bob, unknown = 207119551, 999999999
	list := fmt.Sprintf("/com/customers/%d/addresses.json", bob)
	one := func(id int64) string { return fmt.Sprintf("/com/customers/%d/addresses/%d.json", bob, id) }
	def := func(id int64) string { return fmt.Sprintf("/com/customers/%d/addresses/%d/default.json", bob, id) }
	set := func(q string) string { return fmt.Sprintf("/com/customers/%d/addresses/set.json?%s", bob, q) }
	valid := M{"address": M{"city": "Ottawa", "country": "Canada", "province": "Ontario"}}

	// create
	a := s.id(s.do(demoToken, "POST", list, M{"address": M{"first_name": "Ann", "last_name": "Lee", "address1": "1 Main St", "country_code": "CA", "province_code": "ON", "company": nil}}, 201), "customer_address")
	b := s.id(s.do(demoToken, "POST", list, valid, 201), "customer_address")
	s.wantFields(s.do(demoToken, "POST", list, M{"address": M{"country": "Atlantis"}}, 422), "country")
	s.wantFields(s.do(demoToken, "POST", list, M{"address": M{"country": "CA", "province": "Nowhere"}}, 422), "province")
	s.do(demoToken, "POST", list, M{"city": "x"}, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(demoToken, "POST", fmt.Sprintf("/com/customers/%d/addresses.json", unknown), valid, 404)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list, get
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "addresses", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=1&page=2", nil, 200), "addresses", 1)
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s?since_id=%d&fields=id,default", list, a), nil, 200), "addresses", 1)
	s.do(demoToken, "GET", list+"?limit=0", nil, 400)
	s.do(demoToken, "GET", fmt.Sprintf("/com/customers/%d/addresses.json", unknown), nil, 404)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", one(a), nil, 200)
	s.do(demoToken, "GET", one(unknown), nil, 404)
	s.do(noToken, "GET", one(a), nil, 401)
	s.do(roToken, "GET", one(a), nil, 403)

	// update
	s.do(demoToken, "PUT", one(a), M{"address": M{"id": a, "country": "United States", "province": "New York", "last_name": nil}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(a), M{"address": M{"country_code": "ZZ"}}, 422), "country_code")
	s.do(demoToken, "PUT", one(a), M{"city": "x"}, 400)
	s.do(demoToken, "PUT", one(a), tooLarge, 413)
	s.do(demoToken, "PUT", one(unknown), valid, 404)
	s.do(noToken, "PUT", one(a), valid, 401)
	s.do(roToken, "PUT", one(a), valid, 403)

	// default
	if d := s.do(demoToken, "PUT", def(a), nil, 200).Object(t, "customer_address"); d["default"] != true {
		t.Errorf("default.json: %v", d)
	}
	s.do(demoToken, "PUT", def(unknown), nil, 404)
	s.do(noToken, "PUT", def(a), nil, 401)
	s.do(roToken, "PUT", def(a), nil, 403)

	// delete and set
	s.wantFields(s.do(demoToken, "DELETE", one(a), nil, 422), "base")
	s.wantFields(s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&address_ids[]=%d&operation=destroy", a, b)), nil, 422), "base")
	s.wantFields(s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=archive", b)), nil, 422), "operation")
	s.do(demoToken, "PUT", set("address_ids[]=x&operation=destroy"), nil, 400)
	s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", unknown)), nil, 404)
	s.do(noToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", b)), nil, 401)
	s.do(roToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", b)), nil, 403)
	s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", b)), nil, 200)
	s.do(noToken, "DELETE", one(bob), nil, 401)
	s.do(roToken, "DELETE", one(bob), nil, 403)
	s.do(demoToken, "DELETE", one(bob), nil, 200)
	s.do(demoToken, "DELETE", one(bob), nil, 404)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "addresses", 1)
}

func (s *scenario) savedSearches(t *testing.T) {
	s.t = t
	const unknown = 999999999
	list, count := "/com/customer_saved_searches.json", "/com/customer_saved_searches/count.json"
	one := func(id int64) string { return fmt.Sprintf("/com/customer_saved_searches/%d.json", id) }
	admin := func(id int64) string { return fmt.Sprintf("/admin/customer_saved_searches/%d.json", id) }
	customers := func(id int64, q string) string {
		return fmt.Sprintf("/com/customer_saved_searches/%d/customers.json?%s", id, q)
	}
	valid := M{"customer_saved_search": M{"name": "Bob", "query": "bob state:disabled orders_count:>=1"}}

	// create
	a := s.id(s.do(demoToken, "POST", list, valid, 201), "customer_saved_search")
	b := s.id(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"name": "Marketing", "query": "accepts_marketing:1"}}, 201), "customer_saved_search")
	s.wantFields(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"name": "x", "query": " "}}, 422), "search_terms")
	s.wantFields(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"name": "x", "query": "shoe_size:42"}}, 422), "search_terms")
	s.wantFields(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"query": "tag:vip"}}, 422), "name")
	s.do(demoToken, "POST", list, M{"name": "x"}, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list, count, get
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "customer_saved_searches", 2)
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s?since_id=%d&fields=id,name", list, a), nil, 200), "customer_saved_searches", 1)
	s.do(demoToken, "GET", list+"?limit=0", nil, 400)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", count, nil, 200)
	s.do(demoToken, "GET", count+"?since_id=x", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(roToken, "GET", count, nil, 403)
	s.do(demoToken, "GET", one(a), nil, 200)
	s.do(demoToken, "GET", one(a)+"?fields=id,query", nil, 200)
	s.do(demoToken, "GET", one(unknown), nil, 404)
	s.do(noToken, "GET", one(a), nil, 401)
	s.do(roToken, "GET", one(a), nil, 403)

	// customers
	s.wantLen(s.do(demoToken, "GET", customers(a, ""), nil, 200), "customers", 1)
	s.wantLen(s.do(demoToken, "GET", customers(b, "order=last_order_date+desc&limit=5&page=1"), nil, 200), "customers", 0)
	s.wantLen(s.do(demoToken, "GET", customers(a, "order=email+asc&fields=id,email,default_address"), nil, 200), "customers", 1)
	s.do(demoToken, "GET", customers(a, "order=shoe_size+asc"), nil, 400)
	s.do(demoToken, "GET", customers(unknown, ""), nil, 404)
	s.do(noToken, "GET", customers(a, ""), nil, 401)
	s.do(roToken, "GET", customers(a, ""), nil, 403)

	// update
	s.do(demoToken, "PUT", one(a), M{"customer_saved_search": M{"id": a, "name": "Bob again"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(a), M{"customer_saved_search": M{"query": ""}}, 422), "search_terms")
	s.do(demoToken, "PUT", one(a), M{"name": "x"}, 400)
	s.do(demoToken, "PUT", one(a), tooLarge, 413)
	s.do(demoToken, "PUT", one(unknown), valid, 404)
	s.do(noToken, "PUT", one(a), valid, 401)
	s.do(roToken, "PUT", one(a), valid, 403)

	// delete, on both roots
	s.do(noToken, "DELETE", one(a), nil, 401)
	s.do(roToken, "DELETE", one(a), nil, 403)
	s.do(demoToken, "DELETE", one(a), nil, 200)
	s.do(demoToken, "DELETE", one(a), nil, 404)
	s.do(noToken, "DELETE", admin(b), nil, 401)
	s.do(roToken, "DELETE", admin(b), nil, 403)
	s.do(demoToken, "DELETE", admin(b), nil, 200)
	s.do(demoToken, "DELETE", admin(b), nil, 404)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "customer_saved_searches", 0)
}
