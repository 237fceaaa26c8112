package addresses_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/addresses"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type M = map[string]any

// The demo seed's customer and its one address, the default.
const (
	bob     = 207119551
	seeded  = 207119551
	unknown = 999999
)

func list(cid int64) string { return fmt.Sprintf("/com/customers/%d/addresses.json", cid) }

func one(cid, id int64) string { return fmt.Sprintf("/com/customers/%d/addresses/%d.json", cid, id) }

func setDefault(cid, id int64) string {
	return fmt.Sprintf("/com/customers/%d/addresses/%d/default.json", cid, id)
}

func idOf(t *testing.T, obj M) int64 {
	t.Helper()
	f, ok := obj["id"].(float64)
	if !ok || f <= 0 {
		t.Fatalf("no id in %v", obj)
	}
	return int64(f)
}

func wantError(t *testing.T, r *apitest.Response, field, msg string) {
	t.Helper()
	r.Expect(t, http.StatusUnprocessableEntity)
	var body struct {
		Errors map[string][]string `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("422 body %s: %v", r.Body, err)
	}
	for _, m := range body.Errors[field] {
		if strings.Contains(m, msg) {
			return
		}
	}
	t.Fatalf("want %s %q, got %s", field, msg, r.Body)
}

func create(t *testing.T, e *apitest.Env, in M) M {
	t.Helper()
	return e.Do("POST", list(bob), M{"address": in}).Expect(t, http.StatusCreated).Object(t, "customer_address")
}

// defaults returns the ids of the customer's addresses flagged default.
func defaults(t *testing.T, e *apitest.Env) []int64 {
	t.Helper()
	var out []int64
	for _, a := range e.Do("GET", list(bob)+"?limit=250", nil).Expect(t, 200).List(t, "addresses") {
		if a.(M)["default"] == true {
			out = append(out, idOf(t, a.(M)))
		}
	}
	return out
}

func customerUpdates(t *testing.T, e *apitest.Env) []M {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: "notification"})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := records.DecodeAll[outbox.Notification](items)
	if err != nil {
		t.Fatal(err)
	}
	var out []M
	for _, n := range ns {
		if n.Topic != addresses.TopicCustomerUpdate {
			continue
		}
		var p M
		if err := json.Unmarshal(n.Payload, &p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestCRUD(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		as := e.Do("GET", list(bob), nil).Expect(t, 200).List(t, "addresses")
		if len(as) != 1 || as[0].(M)["default"] != true || as[0].(M)["country_name"] != "United States" {
			t.Fatalf("seeded addresses: %v", as)
		}
		a := create(t, e, M{"first_name": "Ann", "last_name": "Lee", "address1": "1 Main St", "country": "canada", "province": "Ontario", "name": "ignored"})
		want := M{"name": "Ann Lee", "country": "Canada", "country_name": "Canada", "country_code": "CA",
			"province": "Ontario", "province_code": "ON", "default": false, "company": nil, "customer_id": float64(bob), "address2": ""}
		for k, v := range want {
			if a[k] != v {
				t.Errorf("%s = %v, want %v", k, a[k], v)
			}
		}
		id := idOf(t, a)
		got := e.Do("GET", one(bob, id), nil).Expect(t, 200).Object(t, "customer_address")
		if got["province_code"] != "ON" || got["default"] != false {
			t.Errorf("get: %v", got)
		}
		// codes fill the names; changing the country re-resolves the province
		u := e.Do("PUT", one(bob, id), M{"address": M{"id": id, "country_code": "us", "province_code": "NY", "last_name": nil}}).Expect(t, 200).Object(t, "customer_address")
		if u["country"] != "United States" || u["province"] != "New York" || u["name"] != "Ann" || u["last_name"] != nil || u["address1"] != "1 Main St" {
			t.Errorf("update: %v", u)
		}
		wantError(t, e.Do("PUT", one(bob, id), M{"address": M{"country": "Canada"}}), "province", addresses.MsgUnknownProvince)
		wantError(t, e.Do("POST", list(bob), M{"address": M{"country": "Atlantis"}}), "country", addresses.MsgUnknownCountry)
		wantError(t, e.Do("POST", list(bob), M{"address": M{"country_code": "ZZ"}}), "country_code", addresses.MsgUnknownCountry)
		wantError(t, e.Do("POST", list(bob), M{"address": M{"country": "CA", "province_code": "XX"}}), "province_code", addresses.MsgUnknownProvince)
		wantError(t, e.Do("POST", list(bob), M{"address": M{"city": 5}}), "city", "must be")
		// name is ignored but still text: another type, or a control character, is refused
		wantError(t, e.Do("POST", list(bob), M{"address": M{"name": M{"a": 1}}}), "name", "must be a string")
		wantError(t, e.Do("PUT", one(bob, id), M{"address": M{"name": "a\x01"}}), "name", "control characters")
		e.Do("POST", list(bob), `{"address":`).Expect(t, 400)
		e.Do("GET", list(unknown), nil).Expect(t, 404)
		e.Do("POST", list(unknown), M{"address": M{}}).Expect(t, 404)
		e.Do("GET", one(bob, 12345), nil).Expect(t, 404)
		e.Do("GET", list(bob)+"?limit=251", nil).Expect(t, 400)
		if as := e.Do("GET", list(bob)+"?limit=1&page=2", nil).Expect(t, 200).List(t, "addresses"); len(as) != 1 || idOf(t, as[0].(M)) != id {
			t.Errorf("page 2: %v", as)
		}

		if as := e.Do("GET", fmt.Sprintf("%s?since_id=%d&fields=id,default", list(bob), seeded), nil).Expect(t, 200).List(t, "addresses"); len(as) != 1 || len(as[0].(M)) != 2 || idOf(t, as[0].(M)) != id {
			t.Errorf("since_id and fields: %v", as)
		}
		// the default cannot be deleted; another can
		r := e.Do("DELETE", one(bob, seeded), nil).Expect(t, 422)
		if strings.TrimSpace(string(r.Body)) != `{"errors":{"base":["Cannot delete the customer's default address"]}}` {
			t.Errorf("delete default: %s", r.Body)
		}
		d := e.Do("PUT", setDefault(bob, id), nil).Expect(t, 200).Object(t, "customer_address")
		if d["default"] != true {
			t.Errorf("default.json: %v", d)
		}
		if ds := defaults(t, e); len(ds) != 1 || ds[0] != id {
			t.Errorf("defaults %v, want [%d]", ds, id)
		}
		e.Do("DELETE", one(bob, seeded), nil).Expect(t, 200)
		e.Do("DELETE", one(bob, seeded), nil).Expect(t, 404)
		e.Do("PUT", setDefault(bob, seeded), nil).Expect(t, 404)

		ups := customerUpdates(t, e)
		if len(ups) != 4 { // create, update, default, delete
			t.Fatalf("%d customers/update, want 4", len(ups))
		}
		last := ups[len(ups)-1]
		if last["email"] != "bob.norman@example.com" || len(last["addresses"].([]any)) != 1 || idOf(t, last["default_address"].(M)) != id {
			t.Errorf("payload: %v", last)
		}
	}, api.Customers)
}

func TestSetDestroy(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a1, a2 := idOf(t, create(t, e, M{"city": "A"})), idOf(t, create(t, e, M{"city": "B"}))
		set := func(q string) *apitest.Response {
			return e.Do("PUT", fmt.Sprintf("/com/customers/%d/addresses/set.json?%s", bob, q), nil)
		}
		wantError(t, set(fmt.Sprintf("address_ids[]=%d&address_ids[]=%d&operation=destroy", a1, seeded)), "base", addresses.MsgDeleteDefault)
		if n := len(e.Do("GET", list(bob), nil).Expect(t, 200).List(t, "addresses")); n != 3 {
			t.Fatalf("a refused set deleted something: %d left", n)
		}
		wantError(t, set(fmt.Sprintf("address_ids[]=%d&operation=archive", a1)), "operation", "is not included")
		wantError(t, set(fmt.Sprintf("address_ids[]=%d", a1)), "operation", "can't be blank")
		wantError(t, set("operation=destroy"), "address_ids", "can't be blank")
		set("address_ids[]=x&operation=destroy").Expect(t, 400)
		set(fmt.Sprintf("address_ids[]=%d&address_ids[]=12345&operation=destroy", a1)).Expect(t, 404)
		set(fmt.Sprintf("address_ids[]=%d&address_ids[]=%d&operation=destroy", a1, a2)).Expect(t, 200)
		if as := e.Do("GET", list(bob), nil).Expect(t, 200).List(t, "addresses"); len(as) != 1 || idOf(t, as[0].(M)) != seeded {
			t.Errorf("left: %v", as)
		}
	}, api.Customers)
}

// Concurrent default.json calls leave exactly one default, and a delete
// racing them never removes the default.
func TestConcurrentDefault(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ids := []int64{seeded}
		for i := range 3 {
			ids = append(ids, idOf(t, create(t, e, M{"city": fmt.Sprint("C", i)})))
		}
		var wg sync.WaitGroup
		for round := range 2 {
			for _, id := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					// a delete of the address may win (404)
					if r := e.Do("PUT", setDefault(bob, id), nil); r.Status != 200 && r.Status != 404 {
						t.Errorf("default.json: %d %s", r.Status, r.Body)
					}
				}()
				if round == 1 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if r := e.Do("DELETE", one(bob, id), nil); r.Status != 200 && r.Status != 422 && r.Status != 404 {
							t.Errorf("delete: %d %s", r.Status, r.Body)
						}
					}()
				}
			}
		}
		wg.Wait()
		ds := defaults(t, e)
		if len(ds) != 1 {
			t.Fatalf("defaults %v, want exactly one", ds)
		}
		e.Do("GET", one(bob, ds[0]), nil).Expect(t, 200)
	}, api.Customers)
}
