package collects_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/collects"
	"github.com/storeadmin/adminapi/shared/customcollections"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// group serves collects beside custom collections, which the tests create them in.
var group = api.Group{Name: "collections", Routes: func(d *platform.Deps) []httpapi.Route {
	return append(customcollections.Routes(d), collects.Routes(d)...)
}}

const demoProduct = 632910392

func id(c map[string]any) int64 { return int64(c["id"].(float64)) }

func addProduct(t *testing.T, e *apitest.Env, pid int64) {
	t.Helper()
	it := store.Item{PK: "product", SK: records.IDSK(pid), Version: 1, Data: records.Encode(map[string]any{"id": pid, "title": fmt.Sprint("Product ", pid)})}
	if err := e.Deps.Store.Transact(t.Context(), store.Put(it, store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
}

func newCollection(t *testing.T, e *apitest.Env, title string) int64 {
	t.Helper()
	return id(e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": title}}).
		Expect(t, 201).Object(t, "custom_collection"))
}

// addSmart writes a smart collection and its memberships in the smart
// collections package's layout.
func addSmart(t *testing.T, e *apitest.Env, cid int64, products ...int64) {
	t.Helper()
	ops := []store.Op{store.Put(store.Item{PK: "smart_collection", SK: records.IDSK(cid), Version: 1,
		Nums: map[string]int64{"products_count": int64(len(products))}, // as membership transactions keep it
		Data: records.Encode(map[string]any{"id": cid, "title": "Smart"})}, store.IfAbsent, 0)}
	for i, pid := range products {
		ops = append(ops, store.Put(store.Item{
			PK: fmt.Sprintf("smart_member#%d", cid), SK: records.IDSK(pid),
			GSI2PK: fmt.Sprintf("product#%d#smart_member", pid), GSI2SK: records.IDSK(cid), Version: 1,
			Data: records.Encode(map[string]any{"id": cid*10 + int64(i), "collection_id": cid, "product_id": pid, "position": i + 1,
				"created_at": "2024-03-11T10:00:00-04:00", "updated_at": "2024-03-11T10:00:00-04:00"}),
		}, store.IfAbsent, 0))
	}
	if err := e.Deps.Store.Transact(t.Context(), ops...); err != nil {
		t.Fatal(err)
	}
}

func post(e *apitest.Env, pid, cid int64) *apitest.Response {
	return e.Do("POST", "/com/collects.json", map[string]any{"collect": map[string]any{"product_id": pid, "collection_id": cid}})
}

func link(t *testing.T, e *apitest.Env, pid, cid int64) map[string]any {
	t.Helper()
	return post(e, pid, cid).Expect(t, 201).Object(t, "collect")
}

func productsCount(t *testing.T, e *apitest.Env, cid int64) float64 {
	t.Helper()
	return e.Do("GET", fmt.Sprintf("/com/custom_collections/%d.json", cid), nil).Expect(t, 200).Object(t, "custom_collection")["products_count"].(float64)
}

func list(t *testing.T, e *apitest.Env, q string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, c := range e.Do("GET", "/com/collects.json"+q, nil).Expect(t, 200).List(t, "collects") {
		out = append(out, c.(map[string]any))
	}
	return out
}

func count(t *testing.T, e *apitest.Env, q string) float64 {
	t.Helper()
	return e.Do("GET", "/com/collects/count.json"+q, nil).Expect(t, 200).JSON(t)["count"].(float64)
}

func field(l []map[string]any, name string) []int64 {
	var out []int64
	for _, c := range l {
		out = append(out, int64(c[name].(float64)))
	}
	return out
}

// p2 and p3 are TestCollects' products besides the demo shop's.
const p2, p3 = 921728736, 921728737

func TestCollects(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		addProduct(t, e, p2)
		addProduct(t, e, p3)
		cid := newCollection(t, e, "IPods")
		t.Run("create appends at the next position", func(t *testing.T) {
			c := link(t, e, demoProduct, cid)
			if c["collection_id"] != float64(cid) || c["product_id"] != float64(demoProduct) || c["position"] != 1.0 ||
				c["sort_value"] != "0000000001" || c["featured"] != false || c["created_at"] == nil || c["updated_at"] == nil {
				t.Fatalf("got %v", c)
			}
			if c2 := link(t, e, p2, cid); c2["position"] != 2.0 || c2["sort_value"] != "0000000002" {
				t.Fatalf("got %v", c2)
			}
			if n := productsCount(t, e, cid); n != 2 {
				t.Fatalf("products_count %v", n)
			}
			got := e.Do("GET", fmt.Sprintf("/com/collects/%d.json", id(c)), nil).Expect(t, 200).Object(t, "collect")
			if got["id"] != c["id"] || got["position"] != 1.0 || got["created_at"] != c["created_at"] {
				t.Fatalf("read %v", got)
			}
			if got := e.Do("GET", fmt.Sprintf("/com/collects/%d.json?fields=id,position", id(c)), nil).Expect(t, 200).Object(t, "collect"); len(got) != 2 {
				t.Fatalf("fields %v", got)
			}
		})
		t.Run("validation", func(t *testing.T) { collectValidation(t, e, cid) })
		t.Run("a smart collection is 403 and lists its memberships", func(t *testing.T) { smartCollectionCollects(t, e, cid) })
		t.Run("list and count filters", func(t *testing.T) { collectFilters(t, e, cid) })
		t.Run("delete decrements products_count and frees the product", func(t *testing.T) {
			c := list(t, e, fmt.Sprintf("?collection_id=%d&product_id=%d", cid, p2))[0]
			e.Do("DELETE", fmt.Sprintf("/com/collects/%d.json", id(c)), nil).Expect(t, 200)
			e.Do("GET", fmt.Sprintf("/com/collects/%d.json", id(c)), nil).Expect(t, 404)
			e.Do("DELETE", fmt.Sprintf("/com/collects/%d.json", id(c)), nil).Expect(t, 404)
			if n := productsCount(t, e, cid); n != 2 {
				t.Fatalf("products_count %v", n)
			}
			if n := count(t, e, ""); n != 2 {
				t.Fatalf("count %v", n)
			}
			// Linked again, it goes to the end: positions are never reused.
			if again := link(t, e, p2, cid); again["position"] != 4.0 {
				t.Fatalf("position %v", again["position"])
			}
		})
		t.Run("deleting the collection removes its collects", func(t *testing.T) { collectsGoWithTheirCollection(t, e, cid) })
		t.Run("scopes", func(t *testing.T) {
			e.DoAs(apitest.ReadOnlyToken, "GET", "/com/collects.json", nil).Expect(t, 403)
		})
	}, group)
}

func collectValidation(t *testing.T, e *apitest.Env, cid int64) {
	res := e.Do("POST", "/com/collects.json", map[string]any{"collect": map[string]any{}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"collection":["can't be blank"],"product":["can't be blank"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	res = e.Do("POST", "/com/collects.json", map[string]any{"collect": map[string]any{"product_id": demoProduct}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"collection":["can't be blank"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	res = post(e, 5, cid).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"product":["does not exist"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	res = post(e, demoProduct, 5).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"collection":["does not exist"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	res = post(e, demoProduct, cid).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"product_id":["already exists in this collection"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	e.Do("POST", "/com/collects.json", map[string]any{"collect": map[string]any{"product_id": "x", "collection_id": cid}}).Expect(t, 422)
	if n := productsCount(t, e, cid); n != 2 {
		t.Fatalf("products_count after failures %v", n)
	}
	// Failed creates use no position up.
	if c := link(t, e, p3, cid); c["position"] != 3.0 {
		t.Fatalf("position %v", c["position"])
	}
}

func smartCollectionCollects(t *testing.T, e *apitest.Env, cid int64) {
	const smart = 4242
	addSmart(t, e, smart, demoProduct, p3)
	res := post(e, p2, smart).Expect(t, 403)
	if strings.TrimSpace(string(res.Body)) != `{"errors":"Cannot add products to a smart collection"}` {
		t.Fatalf("got %s", res.Body)
	}
	members := list(t, e, fmt.Sprintf("?collection_id=%d", smart))
	if len(members) != 2 || members[0]["product_id"] != float64(demoProduct) || members[1]["position"] != 2.0 ||
		members[1]["sort_value"] != "0000000002" || members[0]["featured"] != false || members[0]["created_at"] != "2024-03-11T10:00:00-04:00" {
		t.Fatalf("members %v", members)
	}
	if n := count(t, e, fmt.Sprintf("?collection_id=%d", smart)); n != 2 {
		t.Fatalf("smart count %v", n)
	}
	// A product's collects are both kinds, by collection id.
	of := list(t, e, fmt.Sprintf("?product_id=%d", demoProduct))
	if got := field(of, "collection_id"); !slices.Equal(got, []int64{smart, cid}) {
		t.Fatalf("product_id %v", got)
	}
	if n := count(t, e, fmt.Sprintf("?product_id=%d", demoProduct)); n != 2 {
		t.Fatalf("product_id count %v", n)
	}
	if got := field(list(t, e, fmt.Sprintf("?product_id=%d&limit=1&page=2", demoProduct)), "collection_id"); !slices.Equal(got, []int64{cid}) {
		t.Fatalf("product_id paging %v", got)
	}
	pair := list(t, e, fmt.Sprintf("?product_id=%d&collection_id=%d", p3, smart))
	if len(pair) != 1 || pair[0]["position"] != 2.0 {
		t.Fatalf("pair %v", pair)
	}
	if n := count(t, e, fmt.Sprintf("?product_id=%d&collection_id=%d", p2, smart)); n != 0 {
		t.Fatalf("pair count %v", n)
	}
}

func collectFilters(t *testing.T, e *apitest.Env, cid int64) {
	in := list(t, e, fmt.Sprintf("?collection_id=%d", cid))
	if got := field(in, "product_id"); !slices.Equal(got, []int64{demoProduct, p2, p3}) {
		t.Fatalf("collection_id %v", got)
	}
	if got := field(in, "position"); !slices.Equal(got, []int64{1, 2, 3}) {
		t.Fatalf("positions %v", got)
	}
	if n := count(t, e, fmt.Sprintf("?collection_id=%d", cid)); n != 3 {
		t.Fatalf("collection_id count %v", n)
	}
	pair := list(t, e, fmt.Sprintf("?collection_id=%d&product_id=%d", cid, p2))
	if len(pair) != 1 || pair[0]["position"] != 2.0 {
		t.Fatalf("pair %v", pair)
	}
	if n := count(t, e, ""); n != 3 {
		t.Fatalf("count %v", n)
	}
	if l := list(t, e, "?limit=2&page=2&fields=id,product_id"); len(l) != 1 || len(l[0]) != 2 || l[0]["product_id"] != float64(p3) {
		t.Fatalf("paging %v", l)
	}
	if l := list(t, e, ""); len(l) != 3 {
		t.Fatalf("all %v", l)
	}
	if l := list(t, e, "?collection_id=1"); len(l) != 0 || count(t, e, "?collection_id=1") != 0 {
		t.Fatalf("unknown collection %v", l)
	}
	e.Do("GET", "/com/collects.json?product_id=abc", nil).Expect(t, 400)
}

func collectsGoWithTheirCollection(t *testing.T, e *apitest.Env, cid int64) {
	other := newCollection(t, e, "Other")
	kept := link(t, e, demoProduct, other)
	gone := list(t, e, fmt.Sprintf("?collection_id=%d", cid))
	e.Do("DELETE", fmt.Sprintf("/com/custom_collections/%d.json", cid), nil).Expect(t, 200)
	for _, c := range gone {
		e.Do("GET", fmt.Sprintf("/com/collects/%d.json", id(c)), nil).Expect(t, 404)
	}
	if l := list(t, e, ""); len(l) != 1 || l[0]["id"] != kept["id"] {
		t.Fatalf("left %v", l)
	}
	if n := count(t, e, ""); n != 1 {
		t.Fatalf("count %v", n)
	}
	if got := field(list(t, e, fmt.Sprintf("?product_id=%d", demoProduct)), "collection_id"); !slices.Equal(got, []int64{4242, other}) {
		t.Fatalf("product_id %v", got)
	}
	if l := list(t, e, fmt.Sprintf("?collection_id=%d", cid)); len(l) != 0 {
		t.Fatalf("collection_id %v", l)
	}
	res := post(e, demoProduct, cid).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"collection":["does not exist"]}}` {
		t.Fatalf("got %s", res.Body)
	}
}

// Concurrent creates into one collection get distinct positions; concurrent
// creates of one product into one collection make exactly one collect.
func TestConcurrentCollects(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 8
		cid := newCollection(t, e, "Busy")
		for i := range int64(n) {
			addProduct(t, e, 1000+i)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		var positions []int64
		var failures []string
		for i := range int64(n) {
			wg.Go(func() {
				res := post(e, 1000+i, cid)
				mu.Lock()
				defer mu.Unlock()
				if res.Status != 201 {
					failures = append(failures, fmt.Sprint(res.Status, string(res.Body)))
					return
				}
				positions = append(positions, int64(res.Object(t, "collect")["position"].(float64)))
			})
		}
		wg.Wait()
		if len(failures) > 0 {
			t.Fatalf("failures %v", failures)
		}
		slices.Sort(positions)
		if !slices.Equal(positions, []int64{1, 2, 3, 4, 5, 6, 7, 8}) {
			t.Fatalf("positions %v", positions)
		}
		if c := productsCount(t, e, cid); c != n {
			t.Fatalf("products_count %v", c)
		}

		same := newCollection(t, e, "Same")
		statuses := make(chan int, n)
		for range n {
			wg.Go(func() { statuses <- post(e, demoProduct, same).Status })
		}
		wg.Wait()
		close(statuses)
		created := 0
		for s := range statuses {
			switch s {
			case 201:
				created++
			case 422:
			default:
				t.Fatalf("status %d", s)
			}
		}
		if created != 1 || count(t, e, fmt.Sprintf("?collection_id=%d", same)) != 1 || productsCount(t, e, same) != 1 {
			t.Fatalf("%d created", created)
		}
		it, err := e.Deps.Store.Get(t.Context(), collection.Key(same))
		if err != nil || it.Nums[collection.CollectSeq] != 1 {
			t.Fatalf("collect_seq %v %v", it.Nums, err)
		}
	}, group)
}

func TestSortValue(t *testing.T) {
	if got := collects.SortValue(12); got != "0000000012" {
		t.Fatal(got)
	}
	c := collects.New(1, 2, 3, 7, admin.At(time.Now()))
	if c.SortValue != "0000000007" || c.Featured {
		t.Fatalf("%+v", c)
	}
}

// The count of all collects is the change feed's (collects.Derive): a
// request commits the stamped collect, its guard and its collection's exact
// numbers (a delete its tomb), and what it changed is counted before it
// answers: collects made by the collects endpoint (concurrently) and by a
// custom collection's create, removed by their endpoint and by their
// collection's delete.
func TestCountFollowsTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		base := count(t, e, "")
		const n = 6
		for i := range int64(n) {
			addProduct(t, e, 2000+i)
		}
		cid := newCollection(t, e, "Counted")
		made := make([]int64, n)
		var wg sync.WaitGroup
		for i := range int64(n) {
			wg.Go(func() {
				if res := post(e, 2000+i, cid); res.Status == 201 {
					made[i] = id(res.JSON(t)["collect"].(map[string]any))
				}
			})
		}
		wg.Wait()
		if got := count(t, e, ""); got != base+n {
			t.Fatalf("count %v after %d links, want %v", got, n, base+n)
		}
		with := id(e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{
			"title": "With collects", "collects": []map[string]any{{"product_id": 2000}, {"product_id": 2001}}}}).
			Expect(t, 201).Object(t, "custom_collection"))
		if got := count(t, e, ""); got != base+n+2 {
			t.Fatalf("count %v after a collection's create with 2 collects, want %v", got, base+n+2)
		}
		if got := count(t, e, fmt.Sprintf("?collection_id=%d", with)); got != 2 {
			t.Fatalf("the collection's count %v", got)
		}
		for _, c := range made[:2] {
			wg.Go(func() { e.Do("DELETE", fmt.Sprintf("/com/collects/%d.json", c), nil) })
		}
		wg.Wait()
		e.Do("DELETE", fmt.Sprintf("/com/collects/%d.json", made[0]), nil).Expect(t, 404)
		if got, pc := count(t, e, ""), productsCount(t, e, cid); got != base+n || pc != n-2 {
			t.Fatalf("count %v, products_count %v after 2 deletes, want %v and %d", got, pc, base+n, n-2)
		}
		e.Do("DELETE", fmt.Sprintf("/com/custom_collections/%d.json", cid), nil).Expect(t, 200)
		if got := count(t, e, ""); got != base+2 {
			t.Fatalf("count %v after the collection's delete, want %v", got, base+2)
		}
		if got := list(t, e, fmt.Sprintf("?collection_id=%d", with)); len(got) != 2 {
			t.Fatalf("the other collection's collects %v", got)
		}
	}, group)
}

// A custom collection created with the most collects it may link fits one
// transaction on both stores, and counts them: the change feed counts
// them from its change (customcollections.Derive), so their unstamped
// creates cost the local feed no pending images, which DynamoDB Local
// would count toward its 100 items.
func TestCreateWithTheMostCollectsIsCounted(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		base := count(t, e, "")
		var cs []map[string]any
		for i := range int64(customcollections.MaxCollects) {
			addProduct(t, e, 3000+i)
			cs = append(cs, map[string]any{"product_id": 3000 + i})
		}
		cid := id(e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": "Many", "collects": cs}}).
			Expect(t, 201).Object(t, "custom_collection"))
		if c := count(t, e, ""); c != base+customcollections.MaxCollects {
			t.Fatalf("count %v, want %v", c, base+customcollections.MaxCollects)
		}
		e.Do("DELETE", fmt.Sprintf("/com/custom_collections/%d.json", cid), nil).Expect(t, 200)
		if c := count(t, e, ""); c != base {
			t.Fatalf("count %v after the collection's delete, want %v", c, base)
		}
	}, group)
}
