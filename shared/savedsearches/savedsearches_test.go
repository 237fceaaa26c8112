package savedsearches_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/seed"
)

type M = map[string]any

// The demo seed's customer, and the customers of customersSeed.
const (
	bob = 207119551 // disabled, no marketing, 1 order (2024-03-13), 41.94, United States
	ann = 1001      // enabled, marketing, 12 orders, 250.00, Canada, tags vip and wholesale, ordered 3 days ago
	cy  = 1002      // invited, marketing, 0 orders, 0.00, United Kingdom, tag vip, abandoned 20 days ago
	dee = 1003      // declined, 5 orders (2023-06-01, 2024-03-20), 100.00, United States
)

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// customersSeed is a seed file adding three customers with addresses and
// orders to the demo shop.
func customersSeed() []byte {
	now := time.Now()
	var demo map[string]json.RawMessage
	if err := json.Unmarshal(seed.Demo, &demo); err != nil {
		panic(err)
	}
	return []byte(fmt.Sprintf(`{"shop": %s,
	"customers": [
	 {"id": 1001, "email": "ann@example.com", "first_name": "Ann", "last_name": "Lee", "accepts_marketing": true,
	  "orders_count": 12, "state": "enabled", "total_spent": "250.00", "verified_email": true, "tags": "VIP, wholesale",
	  "note": "Likes green tea", "created_at": "2024-01-01T10:00:00Z", "updated_at": "2024-02-01T10:00:00Z",
	  "last_abandoned_order_date": %q,
	  "addresses": [{"id": 5001, "country": "Canada", "country_code": "CA", "city": "Toronto", "default": true}]},
	 {"id": 1002, "email": "cy@example.org", "first_name": "Cy", "last_name": "Young", "accepts_marketing": true,
	  "orders_count": 0, "state": "invited", "total_spent": "0.00", "tags": "vip",
	  "created_at": "2023-05-01T10:00:00Z", "updated_at": "2024-05-01T10:00:00Z",
	  "last_abandoned_order_date": %q,
	  "addresses": [{"id": 5002, "country": "United Kingdom", "default": true}, {"id": 5003, "country_code": "FR"}]},
	 {"id": 1003, "email": "dee@example.net", "first_name": "Dee", "last_name": "Dent", "accepts_marketing": false,
	  "orders_count": 5, "state": "declined", "total_spent": "100.00", "tags": "",
	  "created_at": "2023-01-01T10:00:00Z", "updated_at": "2023-01-02T10:00:00Z",
	  "addresses": [{"id": 5004, "country_code": "US", "province_code": "NY", "default": true}]}
	],
	"orders": [
	 {"id": 7001, "name": "#2001", "customer_id": 1001, "created_at": %q},
	 {"id": 7002, "name": "#2002", "customer_id": 1003, "created_at": "2023-06-01T12:00:00Z"},
	 {"id": 7003, "name": "#2003", "customer_id": 1003, "created_at": "2024-03-20T12:00:00Z"}
	]}`, demo["shop"], stamp(now.Add(-2*24*time.Hour)), stamp(now.Add(-20*24*time.Hour)), stamp(now.Add(-3*24*time.Hour))))
}

func env(t *testing.T, fn func(t *testing.T, e *apitest.Env)) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		if _, _, err := seed.Load(t.Context(), e.Deps.Store, e.Deps.Clock, customersSeed()); err != nil {
			t.Fatal(err)
		}
		fn(t, e)
	}, api.Customers)
}

const root = "/com/customer_saved_searches"

func idOf(t *testing.T, obj M) int64 {
	t.Helper()
	f, ok := obj["id"].(float64)
	if !ok || f <= 0 {
		t.Fatalf("no id in %v", obj)
	}
	return int64(f)
}

func wantError(t *testing.T, r *apitest.Response, status int, field, msg string) {
	t.Helper()
	r.Expect(t, status)
	var body struct {
		Errors map[string][]string `json:"errors"`
	}
	if err := json.Unmarshal(r.Body, &body); err != nil {
		t.Fatalf("%d body %s: %v", status, r.Body, err)
	}
	for _, m := range body.Errors[field] {
		if strings.Contains(m, msg) {
			return
		}
	}
	t.Fatalf("want %s %q, got %s", field, msg, r.Body)
}

func create(t *testing.T, e *apitest.Env, name, query string) int64 {
	t.Helper()
	r := e.Do("POST", root+".json", M{"customer_saved_search": M{"name": name, "query": query}}).Expect(t, http.StatusCreated)
	return idOf(t, r.Object(t, "customer_saved_search"))
}

// found answers the ids of a search's customers, in order.
func found(t *testing.T, e *apitest.Env, id int64, params string) []int64 {
	t.Helper()
	var out []int64
	for _, c := range e.Do("GET", fmt.Sprintf("%s/%d/customers.json?%s", root, id, params), nil).Expect(t, 200).List(t, "customers") {
		out = append(out, idOf(t, c.(M)))
	}
	return out
}

func TestCRUD(t *testing.T) {
	env(t, func(t *testing.T, e *apitest.Env) {
		r := e.Do("POST", root+".json", M{"customer_saved_search": M{"name": "Spenders", "query": "total_spent:>100"}}).Expect(t, 201)
		ss := r.Object(t, "customer_saved_search")
		id := idOf(t, ss)
		if ss["name"] != "Spenders" || ss["query"] != "total_spent:>100" || ss["created_at"] == nil || ss["updated_at"] == nil {
			t.Errorf("created: %v", ss)
		}
		got := e.Do("GET", fmt.Sprintf("%s/%d.json?fields=id,name", root, id), nil).Expect(t, 200).Object(t, "customer_saved_search")
		if len(got) != 2 || got["name"] != "Spenders" {
			t.Errorf("get with fields: %v", got)
		}
		u := e.Do("PUT", fmt.Sprintf("%s/%d.json", root, id), M{"customer_saved_search": M{"id": id, "query": "orders_count:>1"}}).Expect(t, 200).Object(t, "customer_saved_search")
		if u["name"] != "Spenders" || u["query"] != "orders_count:>1" {
			t.Errorf("updated: %v", u)
		}
		id2 := create(t, e, "VIPs", "tag:vip")
		list := e.Do("GET", root+".json", nil).Expect(t, 200).List(t, "customer_saved_searches")
		if len(list) != 2 {
			t.Fatalf("list: %v", list)
		}
		if l := e.Do("GET", fmt.Sprintf("%s.json?since_id=%d", root, id), nil).Expect(t, 200).List(t, "customer_saved_searches"); len(l) != 1 || idOf(t, l[0].(M)) != id2 {
			t.Errorf("since_id: %v", l)
		}
		if l := e.Do("GET", root+".json?limit=1&page=2", nil).Expect(t, 200).List(t, "customer_saved_searches"); len(l) != 1 || idOf(t, l[0].(M)) != id2 {
			t.Errorf("page 2: %v", l)
		}
		if n := e.Do("GET", root+"/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != float64(2) {
			t.Errorf("count %v", n)
		}
		if n := e.Do("GET", fmt.Sprintf("%s/count.json?since_id=%d", root, id), nil).Expect(t, 200).JSON(t)["count"]; n != float64(1) {
			t.Errorf("count since_id %v", n)
		}

		// validation: the contract's messages
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"query": "tag:vip"}}), 422, "name", "can't be blank")
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"name": "x", "query": "  "}}), 422, "search_terms", "can't be blank")
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"name": "x"}}), 422, "search_terms", "can't be blank")
		wantError(t, e.Do("PUT", fmt.Sprintf("%s/%d.json", root, id), M{"customer_saved_search": M{"query": ""}}), 422, "search_terms", "can't be blank")
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"name": "x", "query": "bogus:1 tag:vip"}}), 422, "search_terms", "unknown term: bogus")
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"name": "x", "query": "orders_count:many"}}), 422, "search_terms", "orders_count")
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"name": "x", "query": "location:Atlantis"}}), 422, "search_terms", "location")
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"name": "x", "query": "state:asleep"}}), 422, "search_terms", "state")
		wantError(t, e.Do("POST", root+".json", M{"customer_saved_search": M{"name": 5, "query": "x"}}), 422, "name", "must be")
		e.Do("POST", root+".json", `{"customer_saved_search":`).Expect(t, 400)

		// unknown ids
		e.Do("GET", root+"/12345.json", nil).Expect(t, 404)
		e.Do("GET", root+"/12345/customers.json", nil).Expect(t, 404)
		e.Do("PUT", root+"/12345.json", M{"customer_saved_search": M{"name": "y"}}).Expect(t, 404)
		e.Do("DELETE", root+"/12345.json", nil).Expect(t, 404)

		// delete on both roots
		e.Do("DELETE", fmt.Sprintf("%s/%d.json", root, id), nil).Expect(t, 200)
		e.Do("DELETE", fmt.Sprintf("/admin/customer_saved_searches/%d.json", id2), nil).Expect(t, 200)
		e.Do("GET", fmt.Sprintf("%s/%d.json", root, id2), nil).Expect(t, 404)
		if n := e.Do("GET", root+"/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != float64(0) {
			t.Errorf("count after deletes %v", n)
		}
		// the read-only app has no customers scope
		e.DoAs(apitest.ReadOnlyToken, "GET", root+".json", nil).Expect(t, 403)
	})
}

func TestTerms(t *testing.T) {
	env(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct {
			query string
			want  []int64
		}{
			{"accepts_marketing:1", []int64{ann, cy}},
			{"accepts_marketing:0", []int64{bob, dee}},
			{"country:'United Kingdom'", []int64{cy}},
			{"location:CA", []int64{ann}},
			{"location:'united states'", []int64{bob, dee}},
			{"country:FR", nil}, // not a default address
			{"orders_count:>10", []int64{ann}},
			{"orders_count:<1", []int64{cy}},
			{"orders_count:5", []int64{dee}},
			{"orders_count:>=5", []int64{ann, dee}},
			{"orders_count:<=1", []int64{bob, cy}},
			{"total_spent:>100.00", []int64{ann}},
			{"total_spent:>=100", []int64{ann, dee}},
			{"total_spent:<41.94", []int64{cy}},
			{"total_spent:41.94", []int64{bob}},
			{"order_date:>2024-3-13", []int64{ann, dee}},
			{"order_date:<2024-1-1", []int64{dee}},
			{"order_date:>=2024-3-13", []int64{ann, bob, dee}},
			{"order_date:<=2023-6-1", []int64{dee}},
			{"last_order_date:<2024-3-15", []int64{bob}},
			{"last_order_date:>2024-3-15", []int64{ann, dee}},
			{"placed_order:last_week", []int64{ann}},
			{"placed_order:last_year", []int64{ann}},
			{"placed_order:<2024-3-14", []int64{bob, dee}},
			{"abandoned_order:last_week", []int64{ann}},
			{"abandoned_order:last_month", []int64{ann, cy}},
			{"state:enabled", []int64{ann}},
			{"state:declined", []int64{dee}},
			{"state:disabled", []int64{bob}},
			{"state:invited", []int64{cy}},
			{"tag:vip", []int64{ann, cy}},
			{"tag:Wholesale", []int64{ann}},
			{"tag:retail", nil},
			{"tea", []int64{ann}},          // note
			{"example.org", []int64{cy}},   // email
			{"norman", []int64{bob}},       // last name
			{"'bob norman'", []int64{bob}}, // full name
			{"tag:vip accepts_marketing:1 orders_count:>10", []int64{ann}},
			{"tag:vip young", []int64{cy}},
			{"tag:vip nobody", nil},
		} {
			id := create(t, e, c.query, c.query)
			got := found(t, e, id, "order=email+asc")
			if !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.query, got, c.want)
			}
		}
	})
}

func TestCustomersPage(t *testing.T) {
	env(t, func(t *testing.T, e *apitest.Env) {
		all := create(t, e, "Everyone", "example")
		for _, c := range []struct {
			params string
			want   []int64
		}{
			{"", []int64{1001, 1002, 1003, bob}}, // id asc
			{"order=email+asc", []int64{ann, bob, cy, dee}},
			{"order=email+desc", []int64{dee, cy, bob, ann}},
			{"order=last_order_date+desc", []int64{ann, dee, bob, cy}},
			{"order=total_spent+asc", []int64{cy, bob, dee, ann}},
			{"order=orders_count+desc", []int64{ann, dee, bob, cy}},
			{"order=created_at", []int64{bob, dee, cy, ann}},
			{"order=email+asc&limit=2", []int64{ann, bob}},
			{"order=email+asc&limit=2&page=2", []int64{cy, dee}},
			{"order=email+asc&limit=2&page=3", nil},
			{"limit=1&page=2", []int64{1002}},
		} {
			if got := found(t, e, all, c.params); !slices.Equal(got, c.want) {
				t.Errorf("%s: %v, want %v", c.params, got, c.want)
			}
		}
		wantError(t, e.Do("GET", fmt.Sprintf("%s/%d/customers.json?order=shoe_size+asc", root, all), nil), 400, "order", "must be a field")
		wantError(t, e.Do("GET", fmt.Sprintf("%s/%d/customers.json?order=email+sideways", root, all), nil), 400, "order", "must be a field")
		wantError(t, e.Do("GET", fmt.Sprintf("%s/%d/customers.json?limit=251", root, all), nil), 400, "limit", "")

		// the whole record
		cs := e.Do("GET", fmt.Sprintf("%s/%d/customers.json?order=email+asc&limit=1", root, all), nil).Expect(t, 200).List(t, "customers")
		c := cs[0].(M)
		for _, f := range []string{"id", "email", "first_name", "last_name", "accepts_marketing", "created_at", "updated_at",
			"last_order_id", "last_order_name", "multipass_identifier", "note", "orders_count", "state", "total_spent",
			"verified_email", "tags", "default_address", "addresses"} {
			if _, ok := c[f]; !ok {
				t.Errorf("customer lacks %s: %v", f, c)
			}
		}
		if c["total_spent"] != "250.00" || c["last_order_id"] != float64(7001) || c["last_order_name"] != "#2001" || c["note"] != "Likes green tea" {
			t.Errorf("customer: %v", c)
		}
		if d := c["default_address"].(M); d["country_code"] != "CA" || d["default"] != true || len(c["addresses"].([]any)) != 1 {
			t.Errorf("addresses: %v", c)
		}
		cs = e.Do("GET", fmt.Sprintf("%s/%d/customers.json?order=email+asc&limit=1&fields=id,email", root, all), nil).Expect(t, 200).List(t, "customers")
		if len(cs[0].(M)) != 2 {
			t.Errorf("fields: %v", cs)
		}
		// the demo customer: no multipass, no note
		cs = e.Do("GET", fmt.Sprintf("%s/%d/customers.json?order=email+asc&limit=1&page=2", root, all), nil).Expect(t, 200).List(t, "customers")
		if c := cs[0].(M); c["note"] != nil || c["multipass_identifier"] != nil || c["total_spent"] != "41.94" || c["last_order_name"] != "#1001" {
			t.Errorf("bob: %v", c)
		}
	})
}

// A country term follows the default address as the addresses endpoints
// change it.
func TestCountryFollowsDefault(t *testing.T) {
	env(t, func(t *testing.T, e *apitest.Env) {
		fr := create(t, e, "France", "location:France")
		uk := create(t, e, "UK", "location:GB")
		if got := found(t, e, fr, ""); got != nil {
			t.Fatalf("france before: %v", got)
		}
		e.Do("PUT", "/com/customers/1002/addresses/5003/default.json", nil).Expect(t, 200)
		if got := found(t, e, fr, ""); !slices.Equal(got, []int64{cy}) {
			t.Errorf("france after default.json: %v", got)
		}
		if got := found(t, e, uk, ""); got != nil {
			t.Errorf("uk after default.json: %v", got)
		}
		// an update of the (seeded) default address moves its customer
		e.Do("PUT", "/com/customers/1001/addresses/5001.json", M{"address": M{"country": "France"}}).Expect(t, 200)
		if got := found(t, e, fr, ""); !slices.Equal(got, []int64{ann, cy}) {
			t.Errorf("france after update: %v", got)
		}
	})
}

// The count is the change feed's (Derive): a request commits only the
// search (and a delete its tomb), and what it changed is counted before it
// answers, with concurrent writers too; updates count nothing.
func TestCountFollowsTheFeed(t *testing.T) {
	env(t, func(t *testing.T, e *apitest.Env) {
		count := func(want int) {
			t.Helper()
			if n := e.Do("GET", root+"/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != float64(want) {
				t.Fatalf("count %v, want %d", n, want)
			}
		}
		const writers = 6
		ids := make([]int64, writers)
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				r := e.Do("POST", root+".json", M{"customer_saved_search": M{"name": fmt.Sprintf("s%d", i), "query": "tag:vip"}})
				if r.Status == http.StatusCreated {
					ids[i] = int64(r.JSON(t)["customer_saved_search"].(M)["id"].(float64))
				}
			})
		}
		wg.Wait()
		count(writers)
		for i := range writers {
			wg.Go(func() {
				e.Do("PUT", fmt.Sprintf("%s/%d.json", root, ids[i]), M{"customer_saved_search": M{"name": "renamed"}})
			})
		}
		wg.Wait()
		count(writers)
		for _, id := range ids[:writers/2] {
			wg.Go(func() { e.Do("DELETE", fmt.Sprintf("%s/%d.json", root, id), nil) })
		}
		wg.Wait()
		count(writers - writers/2)
		e.Do("DELETE", fmt.Sprintf("%s/%d.json", root, ids[0]), nil).Expect(t, 404)
		count(writers - writers/2)
	})
}
