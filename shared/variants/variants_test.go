package variants_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/variants"
)

var group = api.Group{Name: "variants", Routes: variants.Routes}

// The demo seed's product and its two variants.
const (
	ipod  = 632910392
	pink  = 808950810
	red   = 49148385
	other = 777000111 // a second product the tests add
)

var productPath = fmt.Sprintf("/com/products/%d/variants.json", ipod)

func vpath(id any) string { return fmt.Sprintf("/com/variants/%d.json", idOf(id)) }

func idOf(id any) int64 {
	switch x := id.(type) {
	case float64:
		return int64(x)
	case int:
		return int64(x)
	case int64:
		return x
	}
	panic(fmt.Sprintf("id %T", id))
}

func create(t *testing.T, e *apitest.Env, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("POST", productPath, map[string]any{"variant": fields}).Expect(t, 201).Object(t, "variant")
}

func put(t *testing.T, e *apitest.Env, id any, fields map[string]any) *apitest.Response {
	t.Helper()
	return e.Do("PUT", vpath(id), map[string]any{"variant": fields})
}

func getVariant(t *testing.T, e *apitest.Env, id any) map[string]any {
	t.Helper()
	return e.Do("GET", vpath(id), nil).Expect(t, 200).Object(t, "variant")
}

func count(t *testing.T, e *apitest.Env) int {
	t.Helper()
	return int(e.Do("GET", fmt.Sprintf("/com/products/%d/variants/count.json", ipod), nil).Expect(t, 200).JSON(t)["count"].(float64))
}

func body(t *testing.T, res *apitest.Response, want string) {
	t.Helper()
	if got := strings.TrimSpace(string(res.Body)); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
}

// productEvents reads the product's events directly: the events endpoints are another group.
func productEvents(t *testing.T, e *apitest.Env) []events.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Product, ipod)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := records.DecodeAll[events.Event](items)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

type productPayload struct {
	ID       int64             `json:"id"`
	Title    string            `json:"title"`
	Handle   string            `json:"handle"`
	Variants []catalog.Variant `json:"variants"`
}

// notifications reads the notification items directly, oldest first.
func notifications(t *testing.T, e *apitest.Env) ([]outbox.Notification, []productPayload) {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: "notification"})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := records.DecodeAll[outbox.Notification](items)
	if err != nil {
		t.Fatal(err)
	}
	ps := make([]productPayload, len(ns))
	for i := range ns {
		if err := json.Unmarshal(ns[i].Payload, &ps[i]); err != nil {
			t.Fatal(err)
		}
	}
	return ns, ps
}

// recorder records ProductChanged calls.
type recorder struct {
	mu    sync.Mutex
	calls []int64
}

func (r *recorder) install(e *apitest.Env) {
	e.Change(func(d *platform.Deps) {
		d.ProductChanged = func(_ context.Context, id int64) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.calls = append(r.calls, id)
			return nil
		}
	})
}

func (r *recorder) take() []int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// addProduct stores a second product, as the seed would.
func addProduct(t *testing.T, e *apitest.Env) {
	t.Helper()
	k := catalog.ProductKey(other)
	it := store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: []byte(fmt.Sprintf(`{"id":%d,"title":"Other","handle":"other"}`, other))}
	if err := e.Deps.Store.Transact(t.Context(), store.Put(it, store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
}

func TestCreateDefaultsAndReads(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var rec recorder
		rec.install(e)
		t.Run("defaults, money as number", func(t *testing.T) {
			v := create(t, e, map[string]any{"option1": "Yellow", "price": 1})
			want := map[string]any{
				"product_id": float64(ipod), "title": "Yellow", "option1": "Yellow", "option2": nil, "option3": nil,
				"price": "1.00", "compare_at_price": nil, "position": 3.0, "sku": "", "barcode": nil,
				"grams": 0.0, "weight": 0.0, "weight_unit": "kg", "taxable": true, "requires_shipping": true,
				"fulfillment_service": "manual", "inventory_management": nil, "inventory_policy": "deny",
				"inventory_quantity": 0.0, "old_inventory_quantity": 0.0, "image_id": nil,
			}
			for k, w := range want {
				if got, ok := v[k]; !ok || got != w {
					t.Errorf("%s = %v, want %v", k, got, w)
				}
			}
			if v["created_at"] != v["updated_at"] || !strings.HasSuffix(v["created_at"].(string), "-04:00") && !strings.HasSuffix(v["created_at"].(string), "-05:00") {
				t.Errorf("timestamps %v %v", v["created_at"], v["updated_at"])
			}
			if got := rec.take(); !slices.Equal(got, []int64{ipod}) {
				t.Errorf("ProductChanged calls %v", got)
			}
		})
		t.Run("money as strings, explicit fields", func(t *testing.T) {
			v := create(t, e, map[string]any{"option1": "Green", "option2": "Large", "price": "12.5", "compare_at_price": "20",
				"sku": " GREEN-L ", "barcode": "0123", "inventory_quantity": 7, "inventory_policy": "continue",
				"inventory_management": "service", "taxable": false, "requires_shipping": false, "image_id": 850703190,
				"metafields": []any{map[string]any{"namespace": "colours", "key": "hex", "value": "#0f0", "value_type": "string"}}})
			if v["price"] != "12.50" || v["compare_at_price"] != "20.00" || v["title"] != "Green / Large" || v["sku"] != "GREEN-L" ||
				v["inventory_quantity"] != 7.0 || v["old_inventory_quantity"] != 7.0 || v["inventory_policy"] != "continue" ||
				v["inventory_management"] != "service" || v["taxable"] != false || v["requires_shipping"] != false ||
				v["image_id"] != 850703190.0 || v["barcode"] != "0123" || v["position"] != 4.0 {
				t.Fatalf("got %v", v)
			}
			owned, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: metafields.OwnerPartition("variant", idOf(v["id"]))})
			if err != nil || len(owned) != 1 {
				t.Fatalf("metafields %v %v", owned, err)
			}
			if c := create(t, e, map[string]any{"title": "Custom", "option1": "Blue"}); c["title"] != "Custom" {
				t.Fatalf("title %v", c["title"])
			}
			if c := create(t, e, map[string]any{"option1": "Tiny", "position": 1}); c["position"] != 1.0 {
				t.Fatalf("position %v", c["position"])
			}
		})
		t.Run("reads", func(t *testing.T) { readVariants(t, e) })
		t.Run("scopes", func(t *testing.T) {
			e.DoAs(apitest.ReadOnlyToken, "GET", productPath, nil).Expect(t, 403)
		})
	}, group)
}

func readVariants(t *testing.T, e *apitest.Env) {
	l := e.Do("GET", productPath, nil).Expect(t, 200).List(t, "variants")
	var titles []string
	for i, x := range l {
		m := x.(map[string]any)
		titles = append(titles, m["title"].(string))
		if m["position"] != float64(i+1) {
			t.Fatalf("positions %v", l)
		}
	}
	if strings.Join(titles, ",") != "Tiny,Pink,Red,Yellow,Green / Large,Custom" {
		t.Fatalf("order %v", titles)
	}
	if count(t, e) != 6 {
		t.Fatal("count")
	}
	page := e.Do("GET", productPath+"?limit=2&page=2&fields=id,title", nil).Expect(t, 200).List(t, "variants")
	if len(page) != 2 || page[0].(map[string]any)["title"] != "Red" || len(page[0].(map[string]any)) != 2 {
		t.Fatalf("page %v", page)
	}
	since := e.Do("GET", productPath+fmt.Sprintf("?since_id=%d", pink), nil).Expect(t, 200).List(t, "variants")
	if len(since) != 4 { // the created ones; Red's id is smaller than Pink's
		t.Fatalf("since_id %v", since)
	}
	one := e.Do("GET", vpath(pink)+"?fields=id,sku,inventory_quantity,position", nil).Expect(t, 200).Object(t, "variant")
	if len(one) != 4 || one["sku"] != "IPOD2008PINK" || one["inventory_quantity"] != 10.0 || one["position"] != 2.0 {
		t.Fatalf("got %v", one)
	}
	e.Do("GET", productPath+"?limit=251", nil).Expect(t, 400)
}

func TestValidation(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct {
			fields map[string]any
			want   string
		}{
			{map[string]any{"option1": "X", "weight_unit": "stone"}, `{"errors":{"weight_unit":["is not included in the list"]}}`},
			{map[string]any{"option1": "X", "price": "cheap"}, `{"errors":{"price":["must be a number"]}}`},
			{map[string]any{"option1": "X", "compare_at_price": "abc"}, `{"errors":{"compare_at_price":["must be a number"]}}`},
			{map[string]any{"option1": "X", "price": -1}, `{"errors":{"price":["must be greater than or equal to 0"]}}`},
			{map[string]any{"option1": "X", "inventory_policy": "maybe"}, `{"errors":{"inventory_policy":["is not included in the list"]}}`},
			{map[string]any{"option1": "X", "grams": -5}, `{"errors":{"grams":["must be greater than or equal to 0"]}}`},
			{map[string]any{"option1": "X", "fulfillment_service": " "}, `{"errors":{"fulfillment_service":["can't be blank"]}}`},
			{map[string]any{"option1": "X", "image_id": 123}, `{"errors":{"image_id":["is invalid"]}}`},
			{map[string]any{"option1": "X", "position": 0}, `{"errors":{"position":["must be greater than 0"]}}`},
			{map[string]any{"option1": "X", "position": int64(1) << 53}, `{"errors":{"position":["must be less than or equal to 9007199254740991"]}}`},
			{map[string]any{"option1": "X", "title": nil}, `{"errors":{"title":["must be a string"]}}`},
			{map[string]any{"option1": strings.Repeat("x", 256)}, `{"errors":{"option1":["is too long (maximum is 255 characters)"]}}`},
			{map[string]any{"option1": "Red"}, `{"errors":{"base":["The variant 'Red' already exists."]}}`},
			{map[string]any{"option1": " red "}, `{"errors":{"base":["The variant 'red' already exists."]}}`},
		} {
			body(t, e.Do("POST", productPath, map[string]any{"variant": c.fields}).Expect(t, 422), c.want)
		}
		if count(t, e) != 2 {
			t.Fatal("a rejected variant was stored")
		}
		// Option combinations: only the whole combination must be unique.
		create(t, e, map[string]any{"option1": "Blue", "option2": "L"})
		b := create(t, e, map[string]any{"option1": "Blue", "option2": "M"})
		body(t, e.Do("POST", productPath, map[string]any{"variant": map[string]any{"option1": "Blue", "option2": "L"}}).Expect(t, 422),
			`{"errors":{"base":["The variant 'Blue / L' already exists."]}}`)
		body(t, put(t, e, b["id"], map[string]any{"option2": "L"}).Expect(t, 422), `{"errors":{"base":["The variant 'Blue / L' already exists."]}}`)
		body(t, put(t, e, pink, map[string]any{"option1": "Red"}).Expect(t, 422), `{"errors":{"base":["The variant 'Red' already exists."]}}`)
		body(t, put(t, e, pink, map[string]any{"weight_unit": "st"}).Expect(t, 422), `{"errors":{"weight_unit":["is not included in the list"]}}`)
		// A renamed seeded variant frees its old combination and takes the new one.
		if v := put(t, e, pink, map[string]any{"option1": "Purple"}).Expect(t, 200).Object(t, "variant"); v["title"] != "Purple" {
			t.Fatalf("title %v", v["title"])
		}
		create(t, e, map[string]any{"option1": "Pink"})
		body(t, e.Do("POST", productPath, map[string]any{"variant": map[string]any{"option1": "PURPLE"}}).Expect(t, 422),
			`{"errors":{"base":["The variant 'PURPLE' already exists."]}}`)
		body(t, put(t, e, red, map[string]any{"option1": "purple"}).Expect(t, 422), `{"errors":{"base":["The variant 'purple' already exists."]}}`)
		// Renaming to a free combination re-derives the title.
		if v := put(t, e, b["id"], map[string]any{"option2": "XL"}).Expect(t, 200).Object(t, "variant"); v["title"] != "Blue / XL" {
			t.Fatalf("title %v", v["title"])
		}
		e.Do("POST", productPath, map[string]any{"variant": "x"}).Expect(t, 400)
	}, group)
}

func TestWeightAndGrams(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		check := func(v map[string]any, grams, weight float64, unit string) {
			t.Helper()
			if v["grams"] != grams || v["weight"] != weight || v["weight_unit"] != unit {
				t.Fatalf("grams %v weight %v unit %v, want %v %v %v", v["grams"], v["weight"], v["weight_unit"], grams, weight, unit)
			}
		}
		check(create(t, e, map[string]any{"option1": "A", "weight": 2, "weight_unit": "lb"}), 907, 2, "lb")
		check(create(t, e, map[string]any{"option1": "B", "weight": 1.5}), 1500, 1.5, "kg")
		check(create(t, e, map[string]any{"option1": "C", "grams": 500, "weight_unit": "oz"}), 500, 17.637, "oz")
		v := create(t, e, map[string]any{"option1": "D", "grams": 250})
		check(v, 250, 0.25, "kg")
		check(put(t, e, v["id"], map[string]any{"weight_unit": "g"}).Expect(t, 200).Object(t, "variant"), 250, 250, "g")
		check(put(t, e, v["id"], map[string]any{"weight": 3}).Expect(t, 200).Object(t, "variant"), 3, 3, "g")
		check(put(t, e, v["id"], map[string]any{"grams": 1000, "weight_unit": "kg"}).Expect(t, 200).Object(t, "variant"), 1000, 1, "kg")
		check(put(t, e, v["id"], map[string]any{"weight": 0.5, "grams": 7}).Expect(t, 200).Object(t, "variant"), 500, 0.5, "kg")
		check(getVariant(t, e, v["id"]), 500, 0.5, "kg")
	}, group)
}

func TestUpdateEventAndNotification(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var rec recorder
		rec.install(e)
		v := put(t, e, pink, map[string]any{"id": pink, "price": "149.99", "compare_at_price": 199}).Expect(t, 200).Object(t, "variant")
		if v["price"] != "149.99" || v["compare_at_price"] != "199.00" || v["title"] != "Pink" || v["position"] != 1.0 ||
			v["inventory_quantity"] != 10.0 || v["sku"] != "IPOD2008PINK" {
			t.Fatalf("got %v", v)
		}
		if got := rec.take(); !slices.Equal(got, []int64{ipod}) {
			t.Fatalf("ProductChanged %v", got)
		}
		evs := productEvents(t, e)
		if len(evs) != 1 || evs[0].Verb != "update" || evs[0].Message != "IPod Nano - 8GB was updated." ||
			evs[0].Path == nil || *evs[0].Path != "/products/ipod-nano" || evs[0].Author != "Demo App" || evs[0].SubjectID != ipod {
			t.Fatalf("events %+v", evs)
		}
		ns, ps := notifications(t, e)
		if len(ns) != 1 || ns[0].Topic != "products/update" || ns[0].Resource != "product" ||
			ns[0].OwnerResource != "product" || ns[0].OwnerID != ipod {
			t.Fatalf("notifications %+v", ns)
		}
		p := ps[0]
		if p.ID != ipod || p.Title != "IPod Nano - 8GB" || p.Handle != "ipod-nano" || len(p.Variants) != 2 ||
			p.Variants[0].ID != pink || p.Variants[0].Price != 14999 || p.Variants[0].Position != 1 ||
			p.Variants[1].ID != red || p.Variants[1].Position != 2 || p.Variants[1].InventoryQuantity != 20 {
			t.Fatalf("payload %+v", p)
		}
		// A change that cannot move collection membership does not call the hook.
		put(t, e, pink, map[string]any{"sku": "NEW", "barcode": "123"}).Expect(t, 200)
		if got := rec.take(); len(got) != 0 {
			t.Fatalf("ProductChanged %v", got)
		}
		// Moving a variant rewrites the order.
		if m := put(t, e, red, map[string]any{"position": 1}).Expect(t, 200).Object(t, "variant"); m["position"] != 1.0 {
			t.Fatalf("position %v", m["position"])
		}
		if getVariant(t, e, pink)["position"] != 2.0 {
			t.Fatal("pink did not move down")
		}
		if len(productEvents(t, e)) != 3 {
			t.Fatal("events")
		}
		e.Do("PUT", "/com/variants/123.json", map[string]any{"variant": map[string]any{"price": 1}}).Expect(t, 404)
		e.Do("GET", "/com/variants/123.json", nil).Expect(t, 404)
		e.Do("GET", "/com/variants/abc.json", nil).Expect(t, 404)
	}, group)
}

func TestInventory(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var rec recorder
		rec.install(e)
		qty := func(id any) float64 { t.Helper(); return getVariant(t, e, id)["inventory_quantity"].(float64) }
		v := put(t, e, pink, map[string]any{"inventory_quantity_adjustment": 5}).Expect(t, 200).Object(t, "variant")
		if v["inventory_quantity"] != 15.0 || v["old_inventory_quantity"] != 15.0 || v["position"] != 1.0 {
			t.Fatalf("got %v", v)
		}
		if got := rec.take(); !slices.Equal(got, []int64{ipod}) {
			t.Fatalf("ProductChanged %v", got)
		}
		_, ps := notifications(t, e)
		if len(ps) != 1 || ps[0].Variants[0].InventoryQuantity != 15 || ps[0].Variants[1].InventoryQuantity != 20 {
			t.Fatalf("payload %+v", ps)
		}
		if len(productEvents(t, e)) != 1 {
			t.Fatal("no event")
		}
		put(t, e, pink, map[string]any{"inventory_quantity_adjustment": -3}).Expect(t, 200)
		if qty(pink) != 12 {
			t.Fatalf("qty %v", qty(pink))
		}
		// Compare-and-set: a stale old_inventory_quantity changes nothing.
		res := put(t, e, pink, map[string]any{"inventory_quantity": 30, "old_inventory_quantity": 10, "price": 5}).Expect(t, 422)
		body(t, res, `{"errors":{"inventory_quantity":["has changed: old_inventory_quantity 10 does not match the current inventory_quantity 12"]}}`)
		if v := getVariant(t, e, pink); v["inventory_quantity"] != 12.0 || v["price"] != "199.00" {
			t.Fatalf("changed by a failed compare-and-set: %v", v)
		}
		if v := put(t, e, pink, map[string]any{"inventory_quantity": 30, "old_inventory_quantity": 12}).Expect(t, 200).Object(t, "variant"); v["inventory_quantity"] != 30.0 {
			t.Fatalf("got %v", v)
		}
		if v := put(t, e, pink, map[string]any{"inventory_quantity": 7}).Expect(t, 200).Object(t, "variant"); v["inventory_quantity"] != 7.0 {
			t.Fatalf("got %v", v)
		}
		// The adjustment takes priority over an absolute quantity.
		if v := put(t, e, pink, map[string]any{"inventory_quantity": 100, "old_inventory_quantity": 1, "inventory_quantity_adjustment": 1}).Expect(t, 200).Object(t, "variant"); v["inventory_quantity"] != 8.0 {
			t.Fatalf("got %v", v)
		}
		// With other fields, the adjustment joins their read-modify-write.
		if v := put(t, e, pink, map[string]any{"inventory_quantity_adjustment": 2, "price": "9.99"}).Expect(t, 200).Object(t, "variant"); v["inventory_quantity"] != 10.0 || v["price"] != "9.99" {
			t.Fatalf("got %v", v)
		}
		body(t, put(t, e, pink, map[string]any{"inventory_quantity_adjustment": 2_000_000_000}).Expect(t, 422),
			`{"errors":{"inventory_quantity_adjustment":["must be between -1000000000 and 1000000000"]}}`)
		put(t, e, 123, map[string]any{"inventory_quantity_adjustment": 1}).Expect(t, 404)
		rec.take()

		// 40 concurrent adjustments of +1 add exactly 40.
		const n = 40
		var wg sync.WaitGroup
		statuses := make(chan int, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- e.Do("PUT", vpath(red), map[string]any{"variant": map[string]any{"inventory_quantity_adjustment": 1}}).Status
			}()
		}
		wg.Wait()
		close(statuses)
		for s := range statuses {
			if s != 200 {
				t.Fatalf("status %d", s)
			}
		}
		if q := qty(red); q != 20+n {
			t.Fatalf("quantity %v after %d concurrent +1, want %d", q, n, 20+n)
		}
		if got := rec.take(); len(got) != n {
			t.Fatalf("ProductChanged called %d times", len(got))
		}
	}, group)
}

func TestDelete(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var rec recorder
		rec.install(e)
		addProduct(t, e)
		a := create(t, e, map[string]any{"option1": "A", "metafields": []any{
			map[string]any{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}}})
		b := create(t, e, map[string]any{"option1": "B"})
		c := create(t, e, map[string]any{"option1": "C"})
		rec.take()
		del := func(pid, id any) *apitest.Response {
			return e.Do("DELETE", fmt.Sprintf("/com/products/%d/variants/%d.json", idOf(pid), idOf(id)), nil)
		}
		// Through another product, or an unknown one: not found.
		del(other, a["id"]).Expect(t, 404)
		del(123, a["id"]).Expect(t, 404)
		del(ipod, 123).Expect(t, 404)
		body(t, del(ipod, a["id"]).Expect(t, 200), `{}`)
		if got := rec.take(); !slices.Equal(got, []int64{ipod}) {
			t.Fatalf("ProductChanged %v", got)
		}
		e.Do("GET", vpath(a["id"]), nil).Expect(t, 404)
		del(ipod, a["id"]).Expect(t, 404)
		if getVariant(t, e, b["id"])["position"] != 3.0 || getVariant(t, e, c["id"])["position"] != 4.0 {
			t.Fatal("positions were not renumbered")
		}
		l := e.Do("GET", productPath, nil).Expect(t, 200).List(t, "variants")
		if len(l) != 4 || count(t, e) != 4 || l[2].(map[string]any)["id"] != b["id"] {
			t.Fatalf("list %v", l)
		}
		owned, _, _ := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: metafields.OwnerPartition("variant", idOf(a["id"]))})
		if len(owned) != 0 {
			t.Fatal("metafields outlive their variant")
		}
		evs := productEvents(t, e)
		if last := evs[len(evs)-1]; len(evs) != 4 || last.Verb != "update" {
			t.Fatalf("events %+v", evs)
		}
		_, ps := notifications(t, e)
		if last := ps[len(ps)-1]; len(last.Variants) != 4 || last.Variants[2].ID != idOf(b["id"]) || last.Variants[2].Position != 3 {
			t.Fatalf("payload %+v", last)
		}
		// The freed combination can be created again, after the last one.
		if again := create(t, e, map[string]any{"option1": "A"}); again["position"] != 5.0 {
			t.Fatalf("position %v", again["position"])
		}
		// Reads through unknown or other products.
		e.Do("GET", "/com/products/123/variants.json", nil).Expect(t, 404)
		e.Do("GET", "/com/products/123/variants/count.json", nil).Expect(t, 404)
		e.Do("POST", "/com/products/123/variants.json", map[string]any{"variant": map[string]any{"option1": "Z"}}).Expect(t, 404)
		if l := e.Do("GET", fmt.Sprintf("/com/products/%d/variants.json", other), nil).Expect(t, 200).List(t, "variants"); len(l) != 0 {
			t.Fatalf("other product's variants %v", l)
		}
		// The other product's first variant.
		o := e.Do("POST", fmt.Sprintf("/com/products/%d/variants.json", other), map[string]any{"variant": map[string]any{"option1": "A"}}).Expect(t, 201).Object(t, "variant")
		if o["position"] != 1.0 || o["product_id"] != float64(other) {
			t.Fatalf("got %v", o)
		}
		del(ipod, o["id"]).Expect(t, 404)
		del(other, o["id"]).Expect(t, 200)
	}, group)
}

// addVariants writes n more variants of the demo product directly, in the
// catalog layout as the seed writes it (through the API this takes minutes
// on DynamoDB Local).
func addVariants(t *testing.T, e *apitest.Env, n int) {
	t.Helper()
	ctx := t.Context()
	order, version, err := catalog.GetOrder(ctx, e.Deps.Store, ipod)
	if err != nil {
		t.Fatal(err)
	}
	var ops []store.Op
	flush := func() {
		if len(ops) > 0 {
			if err := e.Deps.Store.Transact(ctx, ops...); err != nil {
				t.Fatal(err)
			}
			ops = nil
		}
	}
	for i := range n {
		shade := fmt.Sprintf("Shade %d", i)
		v := catalog.Variant{ID: e.Deps.IDs.Next(), ProductID: ipod, Title: shade, Option1: &shade, Price: 100,
			WeightUnit: "kg", Taxable: true, RequiresShipping: true, FulfillmentService: "manual", InventoryPolicy: "deny"}
		ops = append(ops, store.Put(v.Item(1), store.IfAbsent, 0))
		order.IDs = append(order.IDs, v.ID)
		if len(ops) == 25 {
			flush()
		}
	}
	flush()
	if err := e.Deps.Store.Transact(ctx, catalog.PutOrder(ipod, order, version)); err != nil {
		t.Fatal(err)
	}
}

func TestVariantLimit(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		create(t, e, map[string]any{"option1": "Through the API"})
		addVariants(t, e, 92)
		if count(t, e) != 95 {
			t.Fatalf("count %d", count(t, e))
		}
		body(t, e.Do("POST", productPath, map[string]any{"variant": map[string]any{"option1": "Shade 7"}}).Expect(t, 422),
			`{"errors":{"base":["The variant 'Shade 7' already exists."]}}`)
		// Ten concurrent creates around the limit: exactly five fit.
		const n = 10
		var wg sync.WaitGroup
		results := make(chan *apitest.Response, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- e.Do("POST", productPath, map[string]any{"variant": map[string]any{"option1": fmt.Sprintf("Race %d", i)}})
			}()
		}
		wg.Wait()
		close(results)
		created, refused := 0, 0
		for res := range results {
			switch res.Status {
			case 201:
				created++
			case 422:
				body(t, res, `{"errors":{"base":["Product can have at most 100 variants"]}}`)
				refused++
			default:
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
		}
		if created != 5 || refused != 5 || count(t, e) != 100 {
			t.Fatalf("%d created, %d refused, count %d", created, refused, count(t, e))
		}
		positions := map[float64]bool{}
		for pg := 1; pg <= 2; pg++ {
			for _, x := range e.Do("GET", fmt.Sprintf("%s?limit=50&page=%d&fields=position", productPath, pg), nil).Expect(t, 200).List(t, "variants") {
				positions[x.(map[string]any)["position"].(float64)] = true
			}
		}
		if len(positions) != 100 || !positions[1] || !positions[100] {
			t.Fatalf("positions %v", positions)
		}
		// Sequentially too, and a delete makes room again.
		body(t, e.Do("POST", productPath, map[string]any{"variant": map[string]any{"option1": "One more"}}).Expect(t, 422),
			`{"errors":{"base":["Product can have at most 100 variants"]}}`)
		e.Do("DELETE", fmt.Sprintf("/com/products/%d/variants/%d.json", ipod, red), nil).Expect(t, 200)
		create(t, e, map[string]any{"option1": "One more"})
		e.Do("POST", productPath, map[string]any{"variant": map[string]any{"option1": "Too many"}}).Expect(t, 422)
	}, group)
}

// Concurrent creates of one option combination: exactly one wins.
func TestConcurrentDuplicates(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 8
		var wg sync.WaitGroup
		statuses := make(chan int, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- e.Do("POST", productPath, map[string]any{"variant": map[string]any{"option1": "Same"}}).Status
			}()
		}
		wg.Wait()
		close(statuses)
		won := 0
		for s := range statuses {
			if s == 201 {
				won++
			} else if s != 422 {
				t.Fatalf("status %d", s)
			}
		}
		if won != 1 || count(t, e) != 3 {
			t.Fatalf("%d won, count %d", won, count(t, e))
		}
		// Concurrent renames of two variants to one combination: one wins.
		a := create(t, e, map[string]any{"option1": "A"})
		b := create(t, e, map[string]any{"option1": "B"})
		results := make(chan int, 2)
		for _, id := range []any{a["id"], b["id"]} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results <- e.Do("PUT", vpath(id), map[string]any{"variant": map[string]any{"option1": "C"}}).Status
			}()
		}
		wg.Wait()
		close(results)
		won = 0
		for s := range results {
			if s == 200 {
				won++
			}
		}
		if won != 1 {
			t.Fatalf("%d won, count %d", won, count(t, e))
		}
	}, group)
}

// A variant is also read and updated at its product's path, as Shopify's
// clients do; through another product it is not found.
func TestVariantAtProductPath(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		addProduct(t, e)
		v := create(t, e, map[string]any{"option1": "Nested", "price": "5.00"})
		at := func(pid any) string {
			return fmt.Sprintf("/com/products/%d/variants/%d.json", idOf(pid), idOf(v["id"]))
		}
		flat := e.Do("GET", vpath(v["id"]), nil).Expect(t, 200)
		if got := e.Do("GET", at(ipod), nil).Expect(t, 200); string(got.Body) != string(flat.Body) {
			t.Errorf("nested read %s, flat %s", got.Body, flat.Body)
		}
		e.Do("GET", at(other), nil).Expect(t, 404)
		e.Do("PUT", at(other), map[string]any{"variant": map[string]any{"price": "9.00"}}).Expect(t, 404)
		e.Do("PUT", at(other), map[string]any{"variant": map[string]any{"inventory_quantity_adjustment": 1}}).Expect(t, 404)
		if got := getVariant(t, e, v["id"]); got["price"] != "5.00" {
			t.Fatalf("another product's path changed the variant: %v", got)
		}
		updated := e.Do("PUT", at(ipod), map[string]any{"variant": map[string]any{"price": "9.00"}}).Expect(t, 200).Object(t, "variant")
		if updated["price"] != "9.00" || getVariant(t, e, v["id"])["price"] != "9.00" {
			t.Fatalf("nested update: %v", updated)
		}
	}, api.Variants)
}
