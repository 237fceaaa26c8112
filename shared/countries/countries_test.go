package countries_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/countries/country"
)

type M = map[string]any

const list = "/com/countries.json"

func one(id int64) string { return fmt.Sprintf("/com/countries/%d.json", id) }

func idOf(t *testing.T, obj map[string]any) int64 {
	t.Helper()
	f, ok := obj["id"].(float64)
	if !ok || f <= 0 {
		t.Fatalf("no id in %v", obj)
	}
	return int64(f)
}

// errorsOf returns the field errors of a 422.
func errorsOf(t *testing.T, r *apitest.Response) map[string][]string {
	t.Helper()
	r.Expect(t, http.StatusUnprocessableEntity)
	var body struct {
		Errors map[string][]string `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("422 body %s: %v", r.Body, err)
	}
	return body.Errors
}

func wantError(t *testing.T, r *apitest.Response, field, msg string) {
	t.Helper()
	errs := errorsOf(t, r)
	for _, m := range errs[field] {
		if strings.Contains(m, msg) {
			return
		}
	}
	t.Fatalf("want %s %q, got %s", field, msg, r.Body)
}

func province(t *testing.T, c map[string]any, code string) map[string]any {
	t.Helper()
	for _, p := range c["provinces"].([]any) {
		if pm := p.(map[string]any); pm["code"] == code {
			return pm
		}
	}
	t.Fatalf("no province %s in %v", code, c["code"])
	return nil
}

// Every shop starts with Rest of World; a create takes the name, provinces
// and default taxes from the dataset, and a request's tax overrides them.
func TestCreateFromDataset(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		cs := e.Do("GET", list, nil).Expect(t, 200).List(t, "countries")
		if len(cs) != 1 {
			t.Fatalf("a new shop has %d countries, want Rest of World: %v", len(cs), cs)
		}
		row := cs[0].(map[string]any)
		if row["code"] != "*" || row["name"] != "Rest of World" || len(row["provinces"].([]any)) != 0 || row["tax"] != 0.0 {
			t.Errorf("Rest of World: %v", row)
		}
		if n := e.Do("GET", "/com/countries/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 1.0 {
			t.Errorf("count %v", n)
		}

		ca := e.Do("POST", list, M{"country": M{"code": "ca"}}).Expect(t, 201).Object(t, "country")
		if ca["code"] != "CA" || ca["name"] != "Canada" || ca["tax"] != 0.05 || ca["tax_name"] != "GST" || len(ca["provinces"].([]any)) != 13 {
			t.Errorf("Canada: %v", ca)
		}
		on := province(t, ca, "ON")
		if on["name"] != "Ontario" || on["tax"] != 0.08 || on["tax_name"] != "HST" || on["tax_type"] != "harmonized" || on["tax_percentage"] != 8.0 {
			t.Errorf("Ontario: %v", on)
		}
		qc := province(t, ca, "QC")
		if qc["tax"] != 0.09975 || qc["tax_percentage"] != 9.975 || qc["tax_type"] != nil || qc["tax_name"] != "QST" {
			t.Errorf("Quebec: %v", qc)
		}
		if ab := province(t, ca, "AB"); ab["tax"] != 0.0 || ab["tax_name"] != nil || ab["country_id"] != ca["id"] {
			t.Errorf("Alberta: %v", ab)
		}
		for _, k := range []string{"price_based_shipping_rates", "weight_based_shipping_rates", "carrier_shipping_rate_providers"} {
			if v, ok := ca[k].([]any); !ok || len(v) != 0 {
				t.Errorf("%s: %v", k, ca[k])
			}
		}

		fr := e.Do("POST", list, M{"country": M{"code": " FR ", "tax": 0.25}}).Expect(t, 201).Object(t, "country")
		if fr["name"] != "France" || fr["tax"] != 0.25 || fr["tax_name"] != "TVA" || len(fr["provinces"].([]any)) != 0 {
			t.Errorf("France with a custom rate: %v", fr)
		}
		us := e.Do("POST", list, M{"country": M{"code": "US"}}).Expect(t, 201).Object(t, "country")
		if us["tax"] != 0.0 || province(t, us, "NY")["tax"] != 0.0 || province(t, us, "PR")["name"] != "Puerto Rico" {
			t.Errorf("United States: %v", us)
		}
		de := e.Do("POST", list, M{"country": M{"code": "de", "tax_name": "USt"}}).Expect(t, 201).Object(t, "country")
		if de["tax"] != 0.19 || de["tax_name"] != "USt" {
			t.Errorf("Germany: %v", de)
		}

		// What the create answered is what a read answers.
		got := e.Do("GET", one(idOf(t, ca)), nil).Expect(t, 200).Object(t, "country")
		if a, b := fmt.Sprint(got), fmt.Sprint(ca); a != b {
			t.Errorf("read back %s\ncreated %s", a, b)
		}
		if n := e.Do("GET", "/com/countries/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 5.0 {
			t.Errorf("count %v", n)
		}
	}, api.Countries)
}

// A create needs a known code the shop does not have yet; taxes are
// fractions between 0 and 1 kept exactly.
func TestCreateValidation(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		wantError(t, e.Do("POST", list, M{"country": M{}}), "code", "can't be blank")
		wantError(t, e.Do("POST", list, M{"country": M{"code": " "}}), "code", "can't be blank")
		wantError(t, e.Do("POST", list, M{"country": M{"code": "XX"}}), "code", "is invalid")
		wantError(t, e.Do("POST", list, M{"country": M{"code": "FRA"}}), "code", "is invalid")
		wantError(t, e.Do("POST", list, M{"country": M{"code": "*"}}), "code", "has already been taken")
		wantError(t, e.Do("POST", list, M{"country": M{"code": 12}}), "code", "must be a string")
		e.Do("POST", list, M{"country": M{"code": "GB"}}).Expect(t, 201)
		wantError(t, e.Do("POST", list, M{"country": M{"code": "gb"}}), "code", "has already been taken")
		for body, msg := range map[string]string{
			`{"country":{"code":"AU","tax":1.5}}`:                     "must be between 0 and 1",
			`{"country":{"code":"AU","tax":-0.1}}`:                    "must be between 0 and 1",
			`{"country":{"code":"AU","tax":0.1234567}}`:               "must have at most 6 decimal places",
			`{"country":{"code":"AU","tax":"ten"}}`:                   "must be a number",
			`{"country":{"code":"AU","tax":true}}`:                    "must be a number",
			`{"country":{"code":"AU","tax":null}}`:                    "can't be blank",
			`{"country":{"code":"AU","tax":1e999999}}`:                "must be between 0 and 1",
			`{"country":{"code":"AU","tax":4.6e-194}}`:                "must have at most 6 decimal places",
			`{"country":{"code":"AU","tax":-1e-99}}`:                  "must be between 0 and 1",
			`{"country":{"code":"AU","tax":1e-99999999999999999999}}`: "must have at most 6 decimal places",
		} {
			wantError(t, e.Do("POST", list, body), "tax", msg)
		}
		// Exact: what is accepted reads back digit for digit.
		for lit, want := range map[string]string{"0e99": "0", "-0.0e-500": "0", "0.123456": "0.123456", "1": "1", "1.0": "1", "5e-2": "0.05", "\"0.07\"": "0.07", "0.000001": "0.000001"} {
			r := e.Do("POST", list, `{"country":{"code":"AU","tax":`+lit+`}}`).Expect(t, 201)
			if !strings.Contains(string(r.Body), `"tax":`+want+`,`) {
				t.Errorf("tax %s: %s", lit, r.Body)
			}
			e.Do("DELETE", one(idOf(t, r.Object(t, "country"))), nil).Expect(t, 200)
		}
		wantError(t, e.Do("POST", list, M{"country": M{"code": "AU", "carrier_shipping_rate_providers": []any{M{"id": 1}}}}), "carrier_shipping_rate_providers", "must be an empty array")
		wantError(t, e.Do("POST", list, M{"country": M{"code": "AU", "tax_name": strings.Repeat("x", 256)}}), "tax_name", "is too long")
		wantError(t, e.Do("POST", list, M{"country": M{"code": "AU", "provinces": []any{M{"code": "ZZ", "tax": 0.1}}}}), "provinces", `code "ZZ" is not a province of Australia`)
		// A new country has no provinces or rates to name by id yet (the
		// document's create schema allows only a null id).
		wantError(t, e.Do("POST", list, M{"country": M{"code": "AU", "provinces": []any{M{"id": 7, "tax": 0.1}}}}), "provinces", `id 7 is not a province of Australia`)
		wantError(t, e.Do("POST", list, M{"country": M{"code": "AU", "price_based_shipping_rates": []any{M{"id": 8, "name": "A", "price": 1}}}}),
			"price_based_shipping_rates", "id 8 is not a rate of this country")
		e.Do("POST", list, M{"country": M{"code": "AU", "provinces": []any{M{"id": nil, "code": "NSW", "tax": 0.1}}}}).Expect(t, 201)
		e.Do("POST", list, M{"code": "AU"}).Expect(t, 400)
		e.Do("POST", list, `{"country": `).Expect(t, 400)
	}, api.Countries)
}

// Two creates of one code at once: exactly one wins, the other is 422,
// whatever the store.
func TestConcurrentCreatesOfOneCode(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 8
		statuses := make([]int, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do("POST", list, M{"country": M{"code": []string{"NZ", "nz"}[i%2]}})
				statuses[i] = r.Status
				if r.Status == 422 && !strings.Contains(string(r.Body), "has already been taken") {
					t.Errorf("422 %s", r.Body)
				}
			}()
		}
		wg.Wait()
		created := 0
		for _, s := range statuses {
			switch s {
			case 201:
				created++
			case 422:
			default:
				t.Errorf("status %d", s)
			}
		}
		if created != 1 {
			t.Fatalf("%d creates of NZ succeeded: %v", created, statuses)
		}
		cs := e.Do("GET", list, nil).Expect(t, 200).List(t, "countries")
		if len(cs) != 2 || e.Do("GET", "/com/countries/count.json", nil).JSON(t)["count"] != 2.0 {
			t.Fatalf("countries after the race: %v", cs)
		}
	}, api.Countries)
}

// Shipping rates are created and replaced through the country; an update
// changes the taxes, and a delete removes everything at once.
func TestRatesUpdateAndDelete(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c := e.Do("POST", list, M{"country": M{"code": "CA",
			"price_based_shipping_rates": []any{M{"name": "Free over 100", "price": "0", "min_order_subtotal": "100.00", "max_order_subtotal": nil,
				"offsets": []any{M{"amount": "-2.50"}}}},
			"weight_based_shipping_rates": []any{M{"name": "Light", "price": 5, "weight_low": 0, "weight_high": 2.5}},
			"provinces":                   []any{M{"code": "on", "tax": 0.09}},
		}}).Expect(t, 201).Object(t, "country")
		id := idOf(t, c)
		pr := c["price_based_shipping_rates"].([]any)[0].(map[string]any)
		if pr["price"] != "0.00" || pr["min_order_subtotal"] != "100.00" || pr["max_order_subtotal"] != nil || pr["country_id"] != c["id"] ||
			fmt.Sprint(pr["offsets"]) != "[map[amount:-2.50]]" {
			t.Errorf("price-based rate: %v", pr)
		}
		wr := c["weight_based_shipping_rates"].([]any)[0].(map[string]any)
		if wr["price"] != "5.00" || wr["weight_low"] != 0.0 || wr["weight_high"] != 2.5 {
			t.Errorf("weight-based rate: %v", wr)
		}
		if on := province(t, c, "ON"); on["tax"] != 0.09 || on["tax_percentage"] != 9.0 {
			t.Errorf("Ontario: %v", on)
		}
		prID := idOf(t, pr)

		// Replace: the kept rate keeps its id, a new one gets one.
		u := e.Do("PUT", one(id), M{"country": M{"tax": 0.06, "tax_name": nil,
			"price_based_shipping_rates": []any{M{"id": prID, "name": "Free over 150", "price": "0", "min_order_subtotal": "150"},
				M{"name": "Standard", "price": "9.99", "max_order_subtotal": "150"}},
			"weight_based_shipping_rates": []any{},
		}}).Expect(t, 200).Object(t, "country")
		rates := u["price_based_shipping_rates"].([]any)
		if u["tax"] != 0.06 || u["tax_name"] != nil || len(rates) != 2 || idOf(t, rates[0].(map[string]any)) != prID ||
			rates[0].(map[string]any)["name"] != "Free over 150" || len(u["weight_based_shipping_rates"].([]any)) != 0 {
			t.Errorf("update: %v", u)
		}
		if on := province(t, u, "ON"); on["tax"] != 0.09 {
			t.Errorf("an update without provinces changed Ontario: %v", on)
		}
		// Any float a client's encoder writes is an amount, however small (rounded to cents).
		tiny := e.Do("PUT", one(id), `{"country":{"weight_based_shipping_rates":[{"name":"Tiny","price":1e-300}]}}`).Expect(t, 200).Object(t, "country")
		if p := tiny["weight_based_shipping_rates"].([]any)[0].(map[string]any)["price"]; p != "0.00" {
			t.Errorf("price 1e-300: %v, want 0.00", p)
		}
		for body, field := range map[string]string{
			`{"country":{"price_based_shipping_rates":[{"price":"1"}]}}`:                                                              "price_based_shipping_rates",
			`{"country":{"price_based_shipping_rates":[{"name":"A"}]}}`:                                                               "price_based_shipping_rates",
			`{"country":{"price_based_shipping_rates":[{"name":"A","price":"-1"}]}}`:                                                  "price_based_shipping_rates",
			`{"country":{"price_based_shipping_rates":[{"name":"A","price":"1","min_order_subtotal":"5","max_order_subtotal":"4"}]}}`: "price_based_shipping_rates",
			`{"country":{"price_based_shipping_rates":[{"id":1,"name":"A","price":"1"}]}}`:                                            "price_based_shipping_rates",
			`{"country":{"price_based_shipping_rates":[{"name":"A","price":"x"}]}}`:                                                   "price_based_shipping_rates.price",
			`{"country":{"weight_based_shipping_rates":[{"name":"A","price":"1","weight_low":3,"weight_high":2}]}}`:                   "weight_based_shipping_rates",
			`{"country":{"weight_based_shipping_rates":[{"name":"A","price":"1","weight_high":0.0001}]}}`:                             "weight_based_shipping_rates",
			`{"country":{"weight_based_shipping_rates":"none"}}`:                                                                      "weight_based_shipping_rates",
			`{"country":{"tax":2}}`:                                       "tax",
			`{"country":{"provinces":null}}`:                              "provinces",
			`{"country":{"provinces":[{"code":"ON","tax_type":"flat"}]}}`: "provinces",
		} {
			errorsOf(t, e.Do("PUT", one(id), body))
			if errs := errorsOf(t, e.Do("PUT", one(id), body)); len(errs[field]) == 0 {
				t.Errorf("%s: want an error on %s, got %v", body, field, errs)
			}
		}
		many := make([]any, country.MaxRates+1)
		for i := range many {
			many[i] = M{"name": "R", "price": "1"}
		}
		wantError(t, e.Do("PUT", one(id), M{"country": M{"weight_based_shipping_rates": many}}), "weight_based_shipping_rates", "is too long")
		e.Do("PUT", one(999999999), M{"country": M{"tax": 0.1}}).Expect(t, 404)

		// The delete removes the country, its provinces and rates, and frees the code.
		pid := idOf(t, province(t, u, "ON"))
		e.Do("DELETE", fmt.Sprintf("/admin/countries/%d.json", id), nil).Expect(t, 200)
		e.Do("GET", one(id), nil).Expect(t, 404)
		e.Do("GET", fmt.Sprintf("/com/countries/%d/provinces/%d.json", id, pid), nil).Expect(t, 404)
		e.Do("DELETE", one(id), nil).Expect(t, 404)
		e.Do("POST", list, M{"country": M{"code": "CA"}}).Expect(t, 201)
	}, api.Countries)
}

// Provinces are read and changed through their own endpoints.
func TestProvinces(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c := e.Do("POST", list, M{"country": M{"code": "CA"}}).Expect(t, 201).Object(t, "country")
		id := idOf(t, c)
		base := fmt.Sprintf("/com/countries/%d/provinces", id)
		ps := e.Do("GET", base+".json", nil).Expect(t, 200).List(t, "provinces")
		if len(ps) != 13 {
			t.Fatalf("%d provinces", len(ps))
		}
		if n := e.Do("GET", base+"/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 13.0 {
			t.Errorf("count %v", n)
		}
		third := idOf(t, ps[2].(map[string]any))
		if after := e.Do("GET", fmt.Sprintf("%s.json?since_id=%d", base, third), nil).Expect(t, 200).List(t, "provinces"); len(after) != 10 {
			t.Errorf("since_id: %d provinces", len(after))
		}
		if f := e.Do("GET", base+".json?fields=code,tax", nil).Expect(t, 200).List(t, "provinces")[0].(map[string]any); len(f) != 2 {
			t.Errorf("fields: %v", f)
		}
		on := idOf(t, province(t, c, "ON"))
		p := e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"tax": 0.1, "tax_name": "HST", "tax_type": "compounded"}}).
			Expect(t, 200).Object(t, "province")
		if p["tax"] != 0.1 || p["tax_percentage"] != 10.0 || p["tax_type"] != "compounded" || p["code"] != "ON" {
			t.Errorf("update: %v", p)
		}
		p = e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"tax_percentage": 12.345, "tax_type": nil}}).Expect(t, 200).Object(t, "province")
		if p["tax"] != 0.12345 || p["tax_percentage"] != 12.345 || p["tax_type"] != nil {
			t.Errorf("update by percentage: %v", p)
		}
		if got := e.Do("GET", fmt.Sprintf("%s/%d.json", base, on), nil).Expect(t, 200).Object(t, "province"); fmt.Sprint(got) != fmt.Sprint(p) {
			t.Errorf("read back %v, updated %v", got, p)
		}
		wantError(t, e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"tax": 0.1, "tax_percentage": 11}}), "tax_percentage", "must equal tax × 100")
		// A whole-object save echoes the stored one of the two beside the
		// one it changed: the changed one wins.
		p = e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"id": fmt.Sprint(on), "tax": 0.2, "tax_percentage": 12.345}}).Expect(t, 200).Object(t, "province")
		if p["tax"] != 0.2 || p["tax_percentage"] != 20.0 {
			t.Errorf("new tax beside the echoed percentage: %v", p)
		}
		p = e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"tax": 0.2, "tax_percentage": 30}}).Expect(t, 200).Object(t, "province")
		if p["tax"] != 0.3 || p["tax_percentage"] != 30.0 {
			t.Errorf("new percentage beside the echoed tax: %v", p)
		}
		wantError(t, e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"tax_percentage": 101}}), "tax_percentage", "must be between 0 and 100")
		wantError(t, e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"tax_type": "flat"}}), "tax_type", "is not included in the list")
		wantError(t, e.Do("PUT", fmt.Sprintf("%s/%d.json", base, on), M{"province": M{"tax": 1.01}}), "tax", "must be between 0 and 1")
		e.Do("PUT", fmt.Sprintf("%s/%d.json", base, 999999999), M{"province": M{"tax": 0.1}}).Expect(t, 404)
		e.Do("GET", fmt.Sprintf("/com/countries/%d/provinces/%d.json", 999999999, on), nil).Expect(t, 404)
		e.Do("GET", "/com/countries/999999999/provinces.json", nil).Expect(t, 404)

		// Through the country: by id.
		u := e.Do("PUT", one(id), M{"country": M{"provinces": []any{M{"id": fmt.Sprint(on), "tax": 0.08, "tax_type": "harmonized"}}}}).Expect(t, 200).Object(t, "country")
		if got := province(t, u, "ON"); got["tax"] != 0.08 || got["tax_percentage"] != 8.0 || got["tax_type"] != "harmonized" {
			t.Errorf("province through the country: %v", got)
		}
	}, api.Countries)
}

// The lists read from since_id on and restrict to fields; the read-only
// app lacks the shipping scope.
func TestListAndScope(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var ids []int64
		for _, code := range []string{"DE", "FR", "IT"} {
			ids = append(ids, idOf(t, e.Do("POST", list, M{"country": M{"code": code}}).Expect(t, 201).Object(t, "country")))
		}
		cs := e.Do("GET", fmt.Sprintf("%s?since_id=%d", list, ids[0]), nil).Expect(t, 200).List(t, "countries")
		if len(cs) != 2 || cs[0].(map[string]any)["code"] != "FR" {
			t.Errorf("since_id: %v", cs)
		}
		row := e.Do("GET", list+"?fields=id,code", nil).Expect(t, 200).List(t, "countries")[0].(map[string]any)
		if len(row) != 2 {
			t.Errorf("fields: %v", row)
		}
		if got := e.Do("GET", one(ids[2])+"?fields=name", nil).Expect(t, 200).Object(t, "country"); len(got) != 1 || got["name"] != "Italy" {
			t.Errorf("fields: %v", got)
		}
		e.Do("GET", list+"?since_id=x", nil).Expect(t, 400)
		e.Do("GET", "/com/countries/abc.json", nil).Expect(t, 404)
		e.DoAs(apitest.ReadOnlyToken, "GET", list, nil).Expect(t, 403)
		e.DoAs("", "GET", list, nil).Expect(t, 401)
	}, api.Countries)
}

// Every code of the dataset can be created, and the largest country item
// stays far within the store's limits.
func TestEveryCodeCreates(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Countries)
	for _, code := range country.Codes() {
		e.Do("POST", list, M{"country": M{"code": strings.ToLower(code)}}).Expect(t, 201)
	}
	if n := e.Do("GET", "/com/countries/count.json", nil).JSON(t)["count"]; n != float64(len(country.Codes())+1) {
		t.Fatalf("count %v", n)
	}
	if n := len(e.Do("GET", list, nil).Expect(t, 200).List(t, "countries")); n != len(country.Codes())+1 {
		t.Fatalf("listed %d", n)
	}
}

// The count is the change feed's (countries.Derive): a request commits only
// the country and its code guard (a delete its tomb), and what it changed
// is counted before it answers, with concurrent writers too; updates of a
// country or a province count nothing.
func TestCountFollowsTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		count := func(want float64) {
			t.Helper()
			if n := e.Do("GET", "/com/countries/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != want {
				t.Fatalf("count %v, want %v", n, want)
			}
		}
		base := e.Do("GET", "/com/countries/count.json", nil).Expect(t, 200).JSON(t)["count"].(float64)
		codes := []string{"FR", "DE", "IT", "ES", "PT", "NL"}
		ids := make([]int64, len(codes))
		var wg sync.WaitGroup
		for i, code := range codes {
			wg.Go(func() {
				r := e.Do("POST", list, M{"country": M{"code": code}})
				if r.Status == http.StatusCreated {
					ids[i] = int64(r.JSON(t)["country"].(M)["id"].(float64))
				}
			})
		}
		wg.Wait()
		count(base + float64(len(codes)))
		for _, id := range ids {
			wg.Go(func() { e.Do("PUT", one(id), M{"country": M{"tax": 0.2}}) })
		}
		wg.Wait()
		count(base + float64(len(codes)))
		for _, id := range ids[:3] {
			wg.Go(func() { e.Do("DELETE", one(id), nil) })
		}
		wg.Wait()
		count(base + float64(len(codes)-3))
		e.Do("DELETE", one(ids[0]), nil).Expect(t, 404)
		// The deleted code is free again, and counted again.
		e.Do("POST", list, M{"country": M{"code": codes[0]}}).Expect(t, http.StatusCreated)
		count(base + float64(len(codes)-2))
	}, api.Countries)
}
