package metafields_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
)

// Demo seed records.
const (
	shopID   = 1
	blogID   = 241253187
	product  = 632910392
	variant  = 808950810
	customer = 207119551
	order    = 450789469
)

type M = map[string]any

var groups = []api.Group{api.Metafields, api.Pages, api.Blogs, api.Collections, api.Variants}

func num(v any) int64 { return int64(v.(float64)) }

func mf(ns, key string, value any, typ string) M {
	return M{"metafield": M{"namespace": ns, "key": key, "value": value, "value_type": typ}}
}

func body(t *testing.T, res *apitest.Response, want string) {
	t.Helper()
	if got := strings.TrimSpace(string(res.Body)); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
}

// owners creates one owner of each kind and returns its nested base path
// (without .json), owner_resource and owner_id.
func owners(t *testing.T, e *apitest.Env) []struct {
	base, resource string
	id             int64
} {
	t.Helper()
	pg := num(e.Do("POST", "/web/pages.json", M{"page": M{"title": "About"}}).Expect(t, 201).Object(t, "page")["id"])
	art := num(e.Do("POST", fmt.Sprintf("/web/blogs/%d/articles.json", blogID), M{"article": M{"title": "Hello"}}).Expect(t, 201).Object(t, "article")["id"])
	cc := num(e.Do("POST", "/com/custom_collections.json", M{"custom_collection": M{"title": "Picks"}}).Expect(t, 201).Object(t, "custom_collection")["id"])
	sc := num(e.Do("POST", "/com/smart_collections.json", M{"smart_collection": M{"title": "Cheap"}}).Expect(t, 201).Object(t, "smart_collection")["id"])
	return []struct {
		base, resource string
		id             int64
	}{
		{"/com/metafields", "shop", shopID},
		{"/admin/metafields", "shop", shopID},
		{fmt.Sprintf("/admin/products/%d/metafields", product), "product", product},
		{fmt.Sprintf("/com/products/%d/metafields", product), "product", product},
		{fmt.Sprintf("/com/variants/%d/metafields", variant), "variant", variant},
		{fmt.Sprintf("/web/pages/%d/metafields", pg), "page", pg},
		{fmt.Sprintf("/web/blogs/%d/metafields", blogID), "blog", blogID},
		{fmt.Sprintf("/web/blogs/%d/articles/%d/metafields", blogID, art), "article", art},
		{fmt.Sprintf("/com/custom_collections/%d/metafields", cc), "custom_collection", cc},
		{fmt.Sprintf("/com/smart_collections/%d/metafields", sc), "smart_collection", sc},
		{fmt.Sprintf("/com/customers/%d/metafields", customer), "customer", customer},
		{fmt.Sprintf("/com/orders/%d/metafields", order), "order", order},
	}
}

func TestEveryOwner(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		os := owners(t, e)
		ids := map[string]int64{}
		for i, o := range os {
			ns := fmt.Sprintf("ns%d", i)
			m := e.Do("POST", o.base+".json", mf(ns, "warehouse", 25, "integer")).Expect(t, 201).Object(t, "metafield")
			if m["owner_resource"] != o.resource || num(m["owner_id"]) != o.id || m["value"] != 25.0 || m["namespace"] != ns {
				t.Fatalf("%s: created %v", o.base, m)
			}
			id := num(m["id"])
			ids[o.base] = id
			one := fmt.Sprintf("%s/%d.json", o.base, id)
			got := e.Do("GET", one, nil).Expect(t, 200).Object(t, "metafield")
			if num(got["id"]) != id || got["created_at"] != m["created_at"] {
				t.Fatalf("%s: read %v", one, got)
			}
			// Any owner's metafield through the top-level paths, on both roots.
			e.Do("GET", fmt.Sprintf("%s/metafields/%d.json", []string{"/admin", "/com"}[i%2], id), nil).Expect(t, 200)
			list := e.Do("GET", o.base+".json", nil).Expect(t, 200).List(t, "metafields")
			cnt := e.Do("GET", o.base+"/count.json", nil).Expect(t, 200).JSON(t)["count"]
			want := 1
			if o.resource == "shop" || o.resource == "product" { // two paths share the owner
				want = i%2 + 1
			}
			if len(list) != want || cnt != float64(want) {
				t.Fatalf("%s: list %v, count %v, want %d", o.base, list, cnt, want)
			}
			up := e.Do("PUT", one, M{"metafield": M{"id": id, "value": "7", "value_type": "integer"}}).Expect(t, 200).Object(t, "metafield")
			if up["value"] != 7.0 {
				t.Fatalf("%s: updated %v", one, up)
			}
			// The filter over the owner from the top-level list.
			q := url.Values{"metafield[owner_resource]": {o.resource}, "metafield[owner_id]": {fmt.Sprint(o.id)}}
			if got := e.Do("GET", "/com/metafields.json?"+q.Encode(), nil).Expect(t, 200).List(t, "metafields"); len(got) != want {
				t.Fatalf("%s: owner filter %v", o.base, got)
			}
		}
		// Another owner's path is 404, read, update and delete alike.
		for i, o := range os {
			if o.resource == "shop" {
				continue
			}
			other := os[(i+1)%len(os)]
			for j := i + 2; other.resource == o.resource || other.resource == "shop"; j++ {
				other = os[j%len(os)]
			}
			path := fmt.Sprintf("%s/%d.json", other.base, ids[o.base])
			e.Do("GET", path, nil).Expect(t, 404)
			if i == 2 {
				e.Do("PUT", path, M{"metafield": M{"value": "x"}}).Expect(t, 404)
				e.Do("DELETE", path, nil).Expect(t, 404)
			}
		}
		unknownOwnersAre404(t, e, os)
		// Delete, then it is gone everywhere.
		for _, o := range os {
			id, ok := ids[o.base]
			if !ok {
				continue
			}
			delete(ids, o.base)
			body(t, e.Do("DELETE", fmt.Sprintf("%s/%d.json", o.base, id), nil).Expect(t, 200), `{}`)
			e.Do("GET", fmt.Sprintf("/com/metafields/%d.json", id), nil).Expect(t, 404)
		}
		body(t, e.Do("GET", "/com/metafields/count.json", nil).Expect(t, 200), `{"count":0}`)
	}, groups...)
}

// unknownOwnersAre404: unknown owners, an article through another blog and unknown owner filters are 404.
func unknownOwnersAre404(t *testing.T, e *apitest.Env, os []struct {
	base, resource string
	id             int64
}) {
	t.Helper()
	// Unknown owners are 404 on every route.
	for _, base := range []string{"/com/products/1/metafields", "/admin/products/1/metafields", "/com/variants/1/metafields",
		"/web/pages/1/metafields", "/web/blogs/1/metafields", fmt.Sprintf("/web/blogs/%d/articles/1/metafields", blogID),
		"/com/custom_collections/1/metafields", "/com/smart_collections/1/metafields", "/com/customers/1/metafields",
		"/com/orders/1/metafields"} {
		e.Do("GET", base+".json", nil).Expect(t, 404)
	}
	e.Do("GET", "/com/orders/1/metafields/count.json", nil).Expect(t, 404)
	e.Do("POST", "/web/pages/1/metafields.json", mf("inventory", "warehouse", "x", "string")).Expect(t, 404)
	// An article through another blog's path is 404.
	for _, o := range os {
		if o.resource == "article" {
			e.Do("GET", fmt.Sprintf("/web/blogs/1/articles/%d/metafields.json", o.id), nil).Expect(t, 404)
		}
	}
	e.Do("GET", "/com/metafields.json?metafield[owner_resource]=order&metafield[owner_id]=1", nil).Expect(t, 404)
	e.Do("GET", "/com/metafields.json?metafield[owner_resource]=shop&metafield[owner_id]=2", nil).Expect(t, 404)
}

func TestValidation(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		res := e.Do("POST", "/admin/metafields.json", M{"metafield": M{}}).Expect(t, 422)
		body(t, res, `{"errors":{"key":["can't be blank","is too short (minimum is 3 characters)"],`+
			`"namespace":["can't be blank","is too short (minimum is 3 characters)"],"value":["can't be blank"],`+
			`"value_type":["can't be blank","is not included in the list"]}}`)
		res = e.Do("POST", "/com/metafields.json", mf("ab", strings.Repeat("k", 31), "x", "float")).Expect(t, 422)
		body(t, res, `{"errors":{"key":["is too long (maximum is 30 characters)"],"namespace":["is too short (minimum is 3 characters)"],"value_type":["is not included in the list"]}}`)
		res = e.Do("POST", "/com/metafields.json", mf(strings.Repeat("n", 21), "abc", "x", "string")).Expect(t, 422)
		body(t, res, `{"errors":{"namespace":["is too long (maximum is 20 characters)"]}}`)
		e.Do("POST", "/com/metafields.json", mf("inventory", "count", "ten", "integer")).Expect(t, 422)
		m := e.Do("POST", "/com/metafields.json", mf("inventory", "count", "12", "integer")).Expect(t, 201).Object(t, "metafield")
		if m["value"] != 12.0 || m["description"] != nil {
			t.Fatalf("created %v", m)
		}
		one := fmt.Sprintf("/com/metafields/%d.json", num(m["id"]))
		// Namespace and key are fixed after creation; sending them unchanged is fine.
		body(t, e.Do("PUT", one, M{"metafield": M{"namespace": "other", "value": 3}}).Expect(t, 422),
			`{"errors":{"namespace":["can't be changed after creation"]}}`)
		body(t, e.Do("PUT", one, M{"metafield": M{"key": "other"}}).Expect(t, 422),
			`{"errors":{"key":["can't be changed after creation"]}}`)
		e.Do("PUT", one, M{"metafield": M{"value_type": "text"}}).Expect(t, 422)
		e.Do("PUT", one, M{"metafield": M{"value": "twelve"}}).Expect(t, 422)
		up := e.Do("PUT", one, M{"metafield": M{"namespace": "inventory", "key": "count", "value": "twelve", "value_type": "string", "description": "d"}}).
			Expect(t, 200).Object(t, "metafield")
		if up["value"] != "twelve" || up["value_type"] != "string" || up["description"] != "d" {
			t.Fatalf("updated %v", up)
		}
		// Unique per owner: the same namespace and key elsewhere is fine.
		body(t, e.Do("POST", "/admin/metafields.json", mf("inventory", "count", "1", "string")).Expect(t, 422),
			`{"errors":{"key":["must be unique within this namespace"]}}`)
		e.Do("POST", fmt.Sprintf("/com/products/%d/metafields.json", product), mf("inventory", "count", "1", "string")).Expect(t, 201)
		// Query parameters.
		e.Do("GET", "/com/metafields.json?value_type=float", nil).Expect(t, 400)
		e.Do("GET", "/com/metafields.json?metafield[owner_resource]=widget&metafield[owner_id]=1", nil).Expect(t, 400)
		e.Do("GET", "/com/metafields.json?metafield[owner_id]=1", nil).Expect(t, 400)
		e.Do("GET", "/com/metafields.json?created_at_min=yesterday", nil).Expect(t, 400)
		e.Do("GET", "/com/metafields/abc.json", nil).Expect(t, 404)
	}, groups...)
}

func TestFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		base := fmt.Sprintf("/com/customers/%d/metafields", customer)
		var ids []int64
		for _, c := range [][3]string{{"inventory", "aaa", "string"}, {"inventory", "bbb", "integer"}, {"shipping", "aaa", "string"}} {
			m := e.Do("POST", base+".json", mf(c[0], c[1], "5", c[2])).Expect(t, 201).Object(t, "metafield")
			ids = append(ids, num(m["id"]))
		}
		for q, want := range map[string]int{
			"": 3, "namespace=inventory": 2, "namepace=shipping": 1, "key=aaa": 2, "value_type=integer": 1,
			"namespace=inventory&key=aaa": 1, fmt.Sprintf("since_id=%d", ids[0]): 2, "limit=1": 1, "limit=2&page=2": 1,
			"created_at_min=2000-01-01": 3, "created_at_max=2000-01-01": 0, "updated_at_min=2000-01-01%2000:00": 3,
		} {
			got := e.Do("GET", base+".json?"+q, nil).Expect(t, 200).List(t, "metafields")
			if len(got) != want {
				t.Errorf("%s: %d metafields, want %d", q, len(got), want)
			}
			if !strings.Contains(q, "limit") && !strings.Contains(q, "since_id") {
				if c := e.Do("GET", base+"/count.json?"+q, nil).Expect(t, 200).JSON(t)["count"]; c != float64(want) {
					t.Errorf("count %s: %v, want %d", q, c, want)
				}
			}
		}
		got := e.Do("GET", base+".json?fields=id,key", nil).Expect(t, 200).List(t, "metafields")
		if len(got[0].(M)) != 2 {
			t.Errorf("fields: %v", got[0])
		}
		one := e.Do("GET", fmt.Sprintf("/admin/metafields/%d.json?fields=value", ids[1]), nil).Expect(t, 200)
		body(t, one, `{"metafield":{"value":5}}`)
		// The shop's metafields are not the customer's.
		body(t, e.Do("GET", "/com/metafields/count.json", nil).Expect(t, 200), `{"count":0}`)
	}, groups...)
}

// Two creates of one namespace and key on one owner: exactly one wins.
func TestConcurrentCreates(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, base := range []string{"/com/metafields.json", fmt.Sprintf("/com/orders/%d/metafields.json", order)} {
			const n = 8
			statuses := make([]int, n)
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = e.Do("POST", base, mf("race", "winner", fmt.Sprint(i), "string")).Status
				}()
			}
			wg.Wait()
			won := 0
			for _, s := range statuses {
				switch s {
				case 201:
					won++
				case 422:
				default:
					t.Errorf("%s: status %d", base, s)
				}
			}
			if won != 1 {
				t.Errorf("%s: %d creates won (%v), want 1", base, won, statuses)
			}
			if c := e.Do("GET", strings.TrimSuffix(base, ".json")+"/count.json", nil).Expect(t, 200).JSON(t)["count"]; c != 1.0 {
				t.Errorf("%s: count %v", base, c)
			}
		}
	}, groups...)
}

// The metafields inputs of pages, articles, custom collections and variants
// are the same records; deleting an owner deletes its metafields.
func TestInputsAndOwnerDeletes(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		input := []M{{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}}
		pg := num(e.Do("POST", "/web/pages.json", M{"page": M{"title": "About", "metafields": input}}).Expect(t, 201).Object(t, "page")["id"])
		art := num(e.Do("POST", fmt.Sprintf("/web/blogs/%d/articles.json", blogID), M{"article": M{"title": "Hi", "metafields": input}}).Expect(t, 201).Object(t, "article")["id"])
		cc := num(e.Do("POST", "/com/custom_collections.json", M{"custom_collection": M{"title": "Picks", "metafields": input}}).Expect(t, 201).Object(t, "custom_collection")["id"])
		v := num(e.Do("POST", fmt.Sprintf("/com/products/%d/variants.json", product), M{"variant": M{"option1": "Blue", "metafields": input}}).Expect(t, 201).Object(t, "variant")["id"])
		sc := num(e.Do("POST", "/com/smart_collections.json", M{"smart_collection": M{"title": "Cheap"}}).Expect(t, 201).Object(t, "smart_collection")["id"])
		e.Do("POST", fmt.Sprintf("/com/smart_collections/%d/metafields.json", sc), mf("inventory", "warehouse", 1, "integer")).Expect(t, 201)
		for _, c := range []struct{ base, owner string }{
			{fmt.Sprintf("/web/pages/%d/metafields", pg), fmt.Sprintf("/web/pages/%d.json", pg)},
			{fmt.Sprintf("/web/blogs/%d/articles/%d/metafields", blogID, art), fmt.Sprintf("/web/blogs/%d/articles/%d.json", blogID, art)},
			{fmt.Sprintf("/com/custom_collections/%d/metafields", cc), fmt.Sprintf("/com/custom_collections/%d.json", cc)},
			{fmt.Sprintf("/com/variants/%d/metafields", v), fmt.Sprintf("/com/products/%d/variants/%d.json", product, v)},
			{fmt.Sprintf("/com/smart_collections/%d/metafields", sc), fmt.Sprintf("/com/smart_collections/%d.json", sc)},
		} {
			list := e.Do("GET", c.base+".json", nil).Expect(t, 200).List(t, "metafields")
			if len(list) != 1 {
				t.Fatalf("%s: %v", c.base, list)
			}
			id := num(list[0].(M)["id"])
			// Editable here; the owner's input still finds the same record.
			e.Do("PUT", fmt.Sprintf("/com/metafields/%d.json", id), M{"metafield": M{"value": 30}}).Expect(t, 200)
			e.Do("DELETE", c.owner, nil).Expect(t, 200)
			e.Do("GET", fmt.Sprintf("/com/metafields/%d.json", id), nil).Expect(t, 404)
			e.Do("GET", c.base+".json", nil).Expect(t, 404)
		}
		// The guard went with them: a new owner may take the namespace and key.
		pg = num(e.Do("POST", "/web/pages.json", M{"page": M{"title": "About", "metafields": input}}).Expect(t, 201).Object(t, "page")["id"])
		e.Do("POST", fmt.Sprintf("/web/pages/%d/metafields.json", pg), mf("inventory", "warehouse", 1, "integer")).Expect(t, 422)
	}, groups...)
}

// The top-level paths reach every owner, with that owner's scope.
func TestScopes(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		prod := num(e.Do("POST", fmt.Sprintf("/com/products/%d/metafields.json", product), mf("inventory", "count", 1, "integer")).Expect(t, 201).Object(t, "metafield")["id"])
		blog := num(e.Do("POST", fmt.Sprintf("/web/blogs/%d/metafields.json", blogID), mf("inventory", "count", 1, "integer")).Expect(t, 201).Object(t, "metafield")["id"])
		ro := apitest.ReadOnlyToken // read_content, read_script_tags
		body(t, e.DoAs(ro, "GET", fmt.Sprintf("/com/metafields/%d.json", prod), nil).Expect(t, 403),
			`{"errors":"[API] This action requires merchant approval for read_products scope."}`)
		e.DoAs(ro, "GET", fmt.Sprintf("/com/metafields/%d.json", blog), nil).Expect(t, 200)
		body(t, e.DoAs(ro, "PUT", fmt.Sprintf("/com/metafields/%d.json", blog), M{"metafield": M{"value": 2}}).Expect(t, 403),
			`{"errors":"[API] This action requires merchant approval for write_content scope."}`)
		e.DoAs(ro, "DELETE", fmt.Sprintf("/com/metafields/%d.json", blog), nil).Expect(t, 403)
		e.DoAs(ro, "GET", fmt.Sprintf("/com/products/%d/metafields.json", product), nil).Expect(t, 403)
		e.DoAs(ro, "GET", fmt.Sprintf("/com/metafields.json?metafield[owner_resource]=order&metafield[owner_id]=%d", order), nil).Expect(t, 403)
		// Shop metafields need no scope.
		e.DoAs(ro, "POST", "/com/metafields.json", mf("inventory", "count", 1, "integer")).Expect(t, 201)
	}, groups...)
}

// Every filter, alone and combined, answers what filtering the owner's
// whole list would, after updates and deletes; counts agree, and each
// reads only its matches (a combination, what its most selective index
// yields): key and updated_at from the guards, namespace from its index,
// created_at and since_id by id. Another owner's metafields never show.
func TestFiltersAgreeWithTheWholeList(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		other := owners(t, e)[2].base // a product's
		e.Do("POST", other+".json", mf("inventory", "warehouse", "elsewhere", "string")).Expect(t, 201)
		var made []M
		for i := range 12 {
			if i == 6 {
				clk.Advance(time.Second) // two seconds of created_at at least, for the range edges
			}
			var value any = fmt.Sprint("v", i)
			typ := "string"
			if i%3 == 0 {
				value, typ = i, "integer"
			}
			made = append(made, e.Do("POST", "/admin/metafields.json", mf([]string{"inventory", "sales", "seo"}[i%3], []string{"warehouse", "count", "title", "extra"}[i%4], value, typ)).
				Expect(t, 201).Object(t, "metafield"))
		}
		clk.Advance(time.Second)
		path := func(m M) string { return fmt.Sprintf("/admin/metafields/%d.json", num(m["id"])) }
		e.Do("PUT", path(made[1]), M{"metafield": M{"value": 7, "value_type": "integer"}}).Expect(t, 200)
		e.Do("PUT", path(made[8]), M{"metafield": M{"value": "changed"}}).Expect(t, 200)
		e.Do("DELETE", path(made[4]), nil).Expect(t, 200)

		whole := e.Do("GET", "/admin/metafields.json?limit=250", nil).Expect(t, 200).List(t, "metafields")
		if len(whole) != 11 {
			t.Fatalf("%d metafields, want 11", len(whole))
		}
		is := func(field, value string) func(map[string]any) bool {
			return func(r map[string]any) bool { return r[field] == value }
		}
		both := func(a, b func(map[string]any) bool) func(map[string]any) bool {
			return func(r map[string]any) bool { return a(r) && b(r) }
		}
		mid := num(whole[5].(map[string]any)["id"])
		filters := []apitest.Filter{
			{Query: "", Keep: func(map[string]any) bool { return true }},
			{Query: "key=warehouse", Keep: is("key", "warehouse")},
			{Query: "key=nothing", Keep: is("key", "nothing")},
			{Query: "namespace=sales", Keep: is("namespace", "sales")},
			{Query: "namepace=seo", Keep: is("namespace", "seo")},
			{Query: "namespace=seo&namepace=sales", Source: is("namespace", "seo"), Keep: func(map[string]any) bool { return false }},
			{Query: "key=count&namespace=inventory", Source: is("key", "count"), Keep: both(is("key", "count"), is("namespace", "inventory"))},
			{Query: "namespace=inventory&value_type=integer", Source: is("namespace", "inventory"), Keep: both(is("namespace", "inventory"), is("value_type", "integer"))},
			{Query: fmt.Sprintf("key=title&since_id=%d", mid), NoCount: true, Keep: func(r map[string]any) bool { return r["key"] == "title" && num(r["id"]) > mid }},
			{Query: "key=extra&updated_at_min=2000-01-01", Source: is("key", "extra"), Keep: is("key", "extra")},
		}
		for _, field := range []string{"created_at", "updated_at"} {
			filters = append(filters, apitest.RangeFilters(t, field, whole)...)
		}
		apitest.CheckFilters(t, e, apitest.FilterCheck{List: "/admin/metafields.json", Count: "/admin/metafields/count.json", Key: "metafields"}, whole, filters)
	}, groups...)
}

// An owner's count of metafields is the change feed's (metafields.Derive):
// a request commits the stamped metafield and the guard of its namespace
// and key (which also indexes it by key and updated_at; a delete its tomb),
// and what it changed is counted and listed by key before it answers,
// with concurrent writers too; so are the metafields an owner's own write
// brings (40 at most, in its transaction) and those its delete removes.
func TestCountsFollowTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		pg := num(e.Do("POST", "/web/pages.json", M{"page": M{"title": "Counted"}}).Expect(t, 201).Object(t, "page")["id"])
		base := fmt.Sprintf("/web/pages/%d/metafields", pg)
		count := func(q string) int64 {
			t.Helper()
			return num(e.Do("GET", base+"/count.json"+q, nil).Expect(t, 200).JSON(t)["count"])
		}
		const n = 6
		ids := make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := e.Do("POST", base+".json", mf("feed", fmt.Sprintf("key%d", i), "v", "string"))
				if r.Status == 201 {
					ids[i] = num(r.JSON(t)["metafield"].(M)["id"])
				}
			})
		}
		wg.Wait()
		if c, k := count(""), e.Do("GET", base+".json?key=key3", nil).Expect(t, 200).List(t, "metafields"); c != n || len(k) != 1 {
			t.Fatalf("count %d, want %d; key=key3 lists %d", c, n, len(k))
		}
		for _, id := range ids {
			wg.Go(func() { e.Do("PUT", fmt.Sprintf("%s/%d.json", base, id), M{"metafield": M{"value": "w"}}) })
		}
		wg.Wait()
		if c := count(""); c != n {
			t.Fatalf("count %d after updates, want %d", c, n)
		}
		e.Do("DELETE", fmt.Sprintf("%s/%d.json", base, ids[0]), nil).Expect(t, 200)
		e.Do("DELETE", fmt.Sprintf("%s/%d.json", base, ids[0]), nil).Expect(t, 404)
		if c, k := count(""), e.Do("GET", base+".json?key=key0", nil).Expect(t, 200).List(t, "metafields"); c != n-1 || len(k) != 0 {
			t.Fatalf("count %d after a delete, want %d; key=key0 lists %d", c, n-1, len(k))
		}
		var many []any
		for i := range 40 {
			many = append(many, M{"namespace": "owner", "key": fmt.Sprintf("many%02d", i), "value": "v", "value_type": "string"})
		}
		e.Do("PUT", fmt.Sprintf("/web/pages/%d.json", pg), M{"page": M{"metafields": many}}).Expect(t, 200)
		if c := count(""); c != n-1+40 {
			t.Fatalf("count %d after the page's write of 40, want %d", c, n-1+40)
		}
		e.Do("PUT", fmt.Sprintf("/web/pages/%d.json", pg), M{"page": M{"metafields": many}}).Expect(t, 200) // 40 updates
		if c := count(""); c != n-1+40 {
			t.Fatalf("count %d after the page's 40 updates, want %d", c, n-1+40)
		}
		e.Do("DELETE", fmt.Sprintf("/web/pages/%d.json", pg), nil).Expect(t, 200)
		pg2 := num(e.Do("POST", "/web/pages.json", M{"page": M{"title": "Other", "metafields": many[:3]}}).Expect(t, 201).Object(t, "page")["id"])
		if c := num(e.Do("GET", fmt.Sprintf("/web/pages/%d/metafields/count.json", pg2), nil).Expect(t, 200).JSON(t)["count"]); c != 3 {
			t.Fatalf("a new page's count %d, want 3", c)
		}
		// The deleted page's counter: its metafields' removals counted down.
		if c, err := records.Count(t.Context(), e.Deps.Store, metafields.OwnerPartition(metafields.OwnerPage, pg)); err != nil || c != 0 {
			t.Fatalf("the deleted page's counter %d (%v), want 0", c, err)
		}
	}, groups...)
}
