package customcollections_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/storeadmin/adminapi/shared/clock"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/collects"
	"github.com/storeadmin/adminapi/shared/customcollections"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
)

var group = api.Group{Name: "custom-collections", Routes: customcollections.Routes}

const demoProduct = 632910392

func create(t *testing.T, e *apitest.Env, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": fields}).Expect(t, 201).Object(t, "custom_collection")
}

func id(c map[string]any) int64 { return int64(c["id"].(float64)) }

func path(c map[string]any) string { return fmt.Sprintf("/com/custom_collections/%d.json", id(c)) }

func update(t *testing.T, e *apitest.Env, c map[string]any, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("PUT", path(c), map[string]any{"custom_collection": fields}).Expect(t, 200).Object(t, "custom_collection")
}

// addProduct writes a product directly: the spec has no product endpoints.
func addProduct(t *testing.T, e *apitest.Env, pid int64, title string) {
	t.Helper()
	it := store.Item{PK: "product", SK: records.IDSK(pid), Version: 1, Data: records.Encode(map[string]any{"id": pid, "title": title})}
	if err := e.Deps.Store.Transact(t.Context(), store.Put(it, store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
}

func collectionEvents(t *testing.T, e *apitest.Env, cid int64) []events.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Collection, cid)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := records.DecodeAll[events.Event](items)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func verbs(evs []events.Event) string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.Verb)
	}
	return strings.Join(out, ",")
}

// notifications returns the collections/* notifications about a collection id, oldest first.
func notifications(t *testing.T, e *apitest.Env, cid int64) []outbox.Notification {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: outbox.NotificationKey(0).PK})
	if err != nil {
		t.Fatal(err)
	}
	all, err := records.DecodeAll[outbox.Notification](items)
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Notification
	for _, n := range all {
		var p struct {
			ID int64 `json:"id"`
		}
		if !strings.HasPrefix(n.Topic, "collections/") || json.Unmarshal(n.Payload, &p) != nil {
			continue
		}
		if p.ID == cid {
			out = append(out, n)
		}
	}
	return out
}

// collectsOf reads a collection's collect items directly.
func collectsOf(t *testing.T, e *apitest.Env, cid int64) []collects.Collect {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: collects.CollectionIndex(cid)})
	if err != nil {
		t.Fatal(err)
	}
	out, err := records.DecodeAll[collects.Collect](items)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func count(t *testing.T, e *apitest.Env, q string) float64 {
	t.Helper()
	return e.Do("GET", "/com/custom_collections/count.json"+q, nil).Expect(t, 200).JSON(t)["count"].(float64)
}

func list(t *testing.T, e *apitest.Env, q string) []any {
	t.Helper()
	return e.Do("GET", "/com/custom_collections.json"+q, nil).Expect(t, 200).List(t, "custom_collections")
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestFrontpage(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		l := list(t, e, "?handle=frontpage")
		if len(l) != 1 {
			t.Fatalf("frontpage %v", l)
		}
		fp := l[0].(map[string]any)
		if id(fp) != collection.FrontpageID || fp["title"] != "Frontpage" || fp["published_at"] == nil ||
			fp["sort_order"] != "alpha-asc" || fp["published_scope"] != "global" {
			t.Fatalf("frontpage %v", fp)
		}
		got := e.Do("GET", path(fp), nil).Expect(t, 200).Object(t, "custom_collection")
		if got["products_count"] != 0.0 {
			t.Fatalf("products_count %v", got["products_count"])
		}
		// Loading the seed again changes nothing.
		if _, sum, err := seed.Load(t.Context(), e.Deps.Store, e.Deps.Clock, seed.Demo); err != nil || sum.Written != 0 {
			t.Fatalf("second load wrote %d: %v", sum.Written, err)
		}
		if n := count(t, e, ""); n != 1 {
			t.Fatalf("count %v", n)
		}
		// The frontpage's handle is taken like any other.
		if c := create(t, e, map[string]any{"title": "Frontpage"}); c["handle"] != "frontpage-1" {
			t.Fatalf("handle %v", c["handle"])
		}
	}, group)
}

func TestFrontpageIDIsReserved(t *testing.T) {
	data := fmt.Sprintf(`{"shop":{"id":1,"domain":"s.example.com"},"products":[{"id":%d,"title":"x"}]}`, int64(collection.FrontpageID))
	if _, err := seed.Parse([]byte(data)); err == nil || !strings.Contains(err.Error(), "reserved") {
		t.Fatalf("err %v", err)
	}
}

func TestCustomCollections(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		t.Run("create publishes, generates a unique handle, logs an event and notifies", func(t *testing.T) {
			c := create(t, e, map[string]any{"title": "IPods", "body_html": "<p>The best selling ipod ever</p>"})
			if c["handle"] != "ipods" || c["published_at"] == nil || c["sort_order"] != "alpha-asc" ||
				c["published_scope"] != "global" || c["template_suffix"] != nil || c["updated_at"] == nil ||
				c["body_html"] != "<p>The best selling ipod ever</p>" || c["products_count"] != 0.0 {
				t.Fatalf("got %v", c)
			}
			if _, ok := c["image"]; ok {
				t.Fatalf("image without one: %v", c)
			}
			if second := create(t, e, map[string]any{"title": "IPODS!"}); second["handle"] != "ipods-1" || second["body_html"] != nil {
				t.Fatalf("second %v", second)
			}
			evs := collectionEvents(t, e, id(c))
			if verbs(evs) != "create" || evs[0].Message != `New collection created: <a href="/collections/ipods">IPods</a>` ||
				evs[0].Author != "Demo App" || *evs[0].Path != "/collections/ipods" {
				t.Fatalf("events %+v", evs)
			}
			ns := notifications(t, e, id(c))
			if len(ns) != 1 || ns[0].Topic != "collections/create" || ns[0].Resource != "collection" ||
				ns[0].OwnerResource != "custom_collection" || ns[0].OwnerID != id(c) {
				t.Fatalf("notifications %+v", ns)
			}
		})
		t.Run("validation", func(t *testing.T) { customCollectionValidation(t, e) })
		t.Run("collects on create link products", func(t *testing.T) {
			addProduct(t, e, 921728736, "IPod Touch 8GB")
			c := create(t, e, map[string]any{"title": "Linked", "collects": []any{
				map[string]any{"product_id": demoProduct}, map[string]any{"product_id": 921728736},
				map[string]any{"product_id": demoProduct}}})
			if c["products_count"] != 2.0 {
				t.Fatalf("products_count %v", c["products_count"])
			}
			if got := e.Do("GET", path(c), nil).Expect(t, 200).Object(t, "custom_collection"); got["products_count"] != 2.0 {
				t.Fatalf("read products_count %v", got["products_count"])
			}
			cs := collectsOf(t, e, id(c))
			if len(cs) != 2 || cs[0].ProductID != demoProduct || cs[0].Position != 1 || cs[0].SortValue != "0000000001" ||
				cs[1].ProductID != 921728736 || cs[1].Position != 2 || cs[0].CreatedAt.IsZero() || cs[0].Featured {
				t.Fatalf("collects %+v", cs)
			}
			if _, err := e.Deps.Store.Get(t.Context(), collects.GuardKey(id(c), demoProduct)); err != nil {
				t.Fatalf("guard: %v", err)
			}
			res := e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{
				"title": "Broken", "collects": []any{map[string]any{"product_id": demoProduct}, map[string]any{"product_id": 5}}}}).Expect(t, 422)
			if strings.TrimSpace(string(res.Body)) != `{"errors":{"collects":["product 5 does not exist"]}}` {
				t.Fatalf("got %s", res.Body)
			}
			if n := count(t, e, "?title=Broken"); n != 0 {
				t.Fatal("stored")
			}
		})
		t.Run("publishing convention and update events", func(t *testing.T) { customCollectionPublishing(t, e, clk) })
		t.Run("handles are settable, unique and shared with smart collections", func(t *testing.T) { customCollectionHandles(t, e) })
		t.Run("delete removes collects, metafields, the handle; logs and notifies", func(t *testing.T) { customCollectionDelete(t, e) })
		t.Run("scopes", func(t *testing.T) {
			e.DoAs(apitest.ReadOnlyToken, "GET", "/com/custom_collections.json", nil).Expect(t, 403)
		})
	}, group)
}

func customCollectionHandles(t *testing.T, e *apitest.Env) {
	a := create(t, e, map[string]any{"title": "Alpha"})
	create(t, e, map[string]any{"title": "Beta"})
	res := e.Do("PUT", path(a), map[string]any{"custom_collection": map[string]any{"handle": "beta"}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"handle":["has already been taken"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	moved := update(t, e, a, map[string]any{"handle": "alpha-moved"})
	if moved["handle"] != "alpha-moved" {
		t.Fatalf("got %v", moved)
	}
	if again := create(t, e, map[string]any{"title": "Alpha"}); again["handle"] != "alpha" {
		t.Fatalf("the old handle was not released: %v", again["handle"])
	}
	// A smart collection holding "smart" (written as the smart collections package does).
	claim := handles.Claim(collection.HandleNamespace, "smart", 77)
	if err := e.Deps.Store.Transact(t.Context(), claim); err != nil {
		t.Fatal(err)
	}
	if c := create(t, e, map[string]any{"title": "Smart"}); c["handle"] != "smart-1" {
		t.Fatalf("handle %v", c["handle"])
	}
	if l := list(t, e, "?handle=smart"); len(l) != 0 {
		t.Fatalf("a smart collection's handle listed %v", l)
	}
	e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": "x", "handle": "smart"}}).Expect(t, 422)
}

func customCollectionValidation(t *testing.T, e *apitest.Env) {
	res := e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"body_html": "x"}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"title":["can't be blank"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	// null is no handle (absent is: one is made from the title), nor collects
	res = e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": "x", "handle": nil}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"handle":["must be a string"]}}` {
		t.Fatalf("null handle: %s", res.Body)
	}
	res = e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": "x", "collects": nil}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"collects":["must be an array"]}}` {
		t.Fatalf("null collects: %s", res.Body)
	}
	for name, fields := range map[string]map[string]any{
		"title":      {"title": strings.Repeat("x", 256)},
		"sort_order": {"title": "x", "sort_order": "random"},
		"handle":     {"title": "x", "handle": "Not Valid"},
		"collects":   {"title": "x", "collects": []any{map[string]any{"product_id": 999999}}},
		"image":      {"title": "x", "image": "https://example.com/a.png"},
		"metafields.key": {"title": "x", "metafields": []any{
			map[string]any{"namespace": "abc", "key": "", "value": "v", "value_type": "string"}}},
	} {
		res := e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": fields}).Expect(t, 422)
		if _, ok := res.JSON(t)["errors"].(map[string]any)[name]; !ok {
			t.Fatalf("%s: %s", name, res.Body)
		}
	}
	if n := count(t, e, "?title=x"); n != 0 {
		t.Fatalf("a rejected collection was stored: %v", n)
	}
	ok := create(t, e, map[string]any{"title": strings.Repeat("é", 255), "sort_order": "manual", "template_suffix": "custom"})
	if ok["sort_order"] != "manual" || ok["template_suffix"] != "custom" || len(ok["handle"].(string)) != 255 {
		t.Fatalf("got %v", ok)
	}
}

func customCollectionPublishing(t *testing.T, e *apitest.Env, clk *clock.Fixed) {
	c := create(t, e, map[string]any{"title": "Hidden", "published": false})
	if c["published_at"] != nil {
		t.Fatalf("published_at %v", c["published_at"])
	}
	clk.Advance(time.Second) // updated_at has second precision
	shown := update(t, e, c, map[string]any{"id": id(c), "published": true})
	if shown["published_at"] == nil || shown["updated_at"] == c["updated_at"] || shown["products_count"] != 0.0 {
		t.Fatalf("got %v", shown)
	}
	if hidden := update(t, e, c, map[string]any{"published": false, "sort_order": "best-selling"}); hidden["published_at"] != nil || hidden["sort_order"] != "best-selling" {
		t.Fatalf("got %v", hidden)
	}
	changed := update(t, e, c, map[string]any{"body_html": "new", "title": "Shown", "template_suffix": "alt"})
	if changed["body_html"] != "new" || changed["title"] != "Shown" || changed["handle"] != "hidden" || changed["template_suffix"] != "alt" {
		t.Fatalf("got %v", changed)
	}
	if v := verbs(collectionEvents(t, e, id(c))); v != "create,published,unpublished,update" {
		t.Fatalf("verbs %v", v)
	}
	if msg := collectionEvents(t, e, id(c))[2].Message; msg != `<a href="/collections/hidden">Hidden</a> was hidden.` {
		t.Fatalf("message %s", msg)
	}
	var topics []string
	for _, n := range notifications(t, e, id(c)) {
		topics = append(topics, n.Topic)
	}
	if strings.Join(topics, ",") != "collections/create,collections/update,collections/update,collections/update" {
		t.Fatalf("topics %v", topics)
	}
	e.Do("PUT", path(c), map[string]any{"custom_collection": map[string]any{"title": ""}}).Expect(t, 422)
	e.Do("PUT", path(c), map[string]any{"custom_collection": map[string]any{"sort_order": "nope"}}).Expect(t, 422)
	e.Do("PUT", "/com/custom_collections/1.json", map[string]any{"custom_collection": map[string]any{"title": "x"}}).Expect(t, 404)
}

func customCollectionDelete(t *testing.T, e *apitest.Env) {
	addProduct(t, e, 921728737, "Other")
	c := create(t, e, map[string]any{"title": "Gone", "collects": []any{
		map[string]any{"product_id": demoProduct}, map[string]any{"product_id": 921728737}},
		"metafields": []any{map[string]any{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}}})
	owned, _, _ := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: metafields.OwnerPartition("custom_collection", id(c))})
	if len(owned) != 1 {
		t.Fatalf("metafields %v", owned)
	}
	before := count(t, e, fmt.Sprintf("?product_id=%d", demoProduct))
	e.Do("DELETE", path(c), nil).Expect(t, 200)
	e.Do("GET", path(c), nil).Expect(t, 404)
	e.Do("DELETE", path(c), nil).Expect(t, 404)
	if cs := collectsOf(t, e, id(c)); len(cs) != 0 {
		t.Fatalf("collects outlive their collection: %+v", cs)
	}
	if guards, _, _ := e.Deps.Store.Query(t.Context(), store.Query{PK: collects.GuardKey(id(c), 0).PK}); len(guards) != 0 {
		t.Fatalf("guards left: %v", guards)
	}
	if after := count(t, e, fmt.Sprintf("?product_id=%d", demoProduct)); after != before-1 {
		t.Fatalf("product_id count %v -> %v", before, after)
	}
	owned, _, _ = e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: metafields.OwnerPartition("custom_collection", id(c))})
	if len(owned) != 0 {
		t.Fatal("metafields outlive their collection")
	}
	evs := collectionEvents(t, e, id(c))
	if last := evs[len(evs)-1]; last.Verb != "destroy" || last.Message != `<a href="/collections/gone">Gone</a> was destroyed.` {
		t.Fatalf("event %+v", last)
	}
	ns := notifications(t, e, id(c))
	if last := ns[len(ns)-1]; last.Topic != "collections/delete" || string(last.Payload) != fmt.Sprintf(`{"id":%d}`, id(c)) {
		t.Fatalf("notification %+v", last)
	}
	if again := create(t, e, map[string]any{"title": "Gone"}); again["handle"] != "gone" {
		t.Fatalf("handle %v", again["handle"])
	}
}

func TestCustomCollectionImages(t *testing.T) {
	small, wide := pngOf(t, 3, 2), pngOf(t, 5, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/wide.png" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "image/png")
		w.Write(wide)
	}))
	defer srv.Close()
	chunks := func(t *testing.T, e *apitest.Env, src string) int {
		t.Helper()
		var fileID int64
		fmt.Sscanf(strings.TrimPrefix(src, "https://demo-shop.example.com/files/"), "%d", &fileID)
		items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: images.FilePartition(fileID)})
		if err != nil {
			t.Fatal(err)
		}
		return len(items)
	}
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c := create(t, e, map[string]any{"title": "Pictured", "image": map[string]any{"attachment": base64.StdEncoding.EncodeToString(small)}})
		img := c["image"].(map[string]any)
		src := img["src"].(string)
		if !strings.HasPrefix(src, "https://demo-shop.example.com/files/") || img["created_at"] == nil || img["width"] != 3.0 || img["height"] != 2.0 {
			t.Fatalf("image %v", img)
		}
		if chunks(t, e, src) != 1 {
			t.Fatal("no stored chunk")
		}
		// Sent back as returned, the image is kept.
		kept := update(t, e, c, map[string]any{"image": map[string]any{"src": src}, "title": "Still"})
		if kept["image"].(map[string]any)["src"] != src || chunks(t, e, src) != 1 {
			t.Fatalf("kept %v", kept)
		}
		replaced := update(t, e, c, map[string]any{"image": map[string]any{"src": srv.URL + "/wide.png"}})
		if ri := replaced["image"].(map[string]any); ri["src"] != srv.URL+"/wide.png" || ri["width"] != 5.0 {
			t.Fatalf("replaced %v", ri)
		}
		if chunks(t, e, src) != 0 {
			t.Fatal("old chunks left")
		}
		removed := update(t, e, c, map[string]any{"image": nil})
		if _, ok := removed["image"]; ok {
			t.Fatalf("removed %v", removed)
		}
		res := e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{
			"title": "x", "image": map[string]any{"src": srv.URL + "/missing.png"}}}).Expect(t, 422)
		if _, ok := res.JSON(t)["errors"].(map[string]any)["image"]; !ok {
			t.Fatalf("got %s", res.Body)
		}
		d := create(t, e, map[string]any{"title": "Downloaded", "image": map[string]any{"src": srv.URL + "/wide.png"}})
		e.Do("DELETE", path(d), nil).Expect(t, 200)
		a := create(t, e, map[string]any{"title": "Attached", "image": map[string]any{"attachment": base64.StdEncoding.EncodeToString(small)}})
		asrc := a["image"].(map[string]any)["src"].(string)
		e.Do("DELETE", path(a), nil).Expect(t, 200)
		if chunks(t, e, asrc) != 0 {
			t.Fatal("chunks outlive their collection")
		}
	}, group)
}

func TestCustomCollectionFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		addProduct(t, e, 921728736, "IPod Touch 8GB")
		a := create(t, e, map[string]any{"title": "Music", "collects": []any{map[string]any{"product_id": demoProduct}}})
		b := create(t, e, map[string]any{"title": "Music", "published": false, "collects": []any{
			map[string]any{"product_id": demoProduct}, map[string]any{"product_id": 921728736}}})
		create(t, e, map[string]any{"title": "Video", "collects": []any{map[string]any{"product_id": 921728736}}})
		ids := func(l []any) []int64 {
			var out []int64
			for _, c := range l {
				out = append(out, id(c.(map[string]any)))
			}
			return out
		}
		if got := ids(list(t, e, fmt.Sprintf("?product_id=%d", demoProduct))); !slices.Equal(got, []int64{id(a), id(b)}) {
			t.Fatalf("product_id %v", got)
		}
		if n := count(t, e, fmt.Sprintf("?product_id=%d", demoProduct)); n != 2 {
			t.Fatalf("product_id count %v", n)
		}
		if got := ids(list(t, e, fmt.Sprintf("?product_id=%d&published_status=published", demoProduct))); !slices.Equal(got, []int64{id(a)}) {
			t.Fatalf("product_id + status %v", got)
		}
		if got := ids(list(t, e, fmt.Sprintf("?product_id=%d&page=2&limit=1", demoProduct))); !slices.Equal(got, []int64{id(b)}) {
			t.Fatalf("product_id paging %v", got)
		}
		if got := ids(list(t, e, fmt.Sprintf("?product_id=%d&since_id=%d", demoProduct, id(a)))); !slices.Equal(got, []int64{id(b)}) {
			t.Fatalf("product_id since_id %v", got)
		}
		if got := list(t, e, "?product_id=123"); len(got) != 0 {
			t.Fatalf("unknown product %v", got)
		}
		if got := ids(list(t, e, fmt.Sprintf("?handle=music-1&product_id=%d", demoProduct))); !slices.Equal(got, []int64{id(b)}) {
			t.Fatalf("handle + product_id %v", got)
		}
		if n := count(t, e, "?title=Music"); n != 2 {
			t.Fatalf("title %v", n)
		}
		if n := count(t, e, "?published_status=unpublished"); n != 1 {
			t.Fatalf("unpublished %v", n)
		}
		if n := count(t, e, ""); n != 4 { // with the frontpage
			t.Fatalf("count %v", n)
		}
		// Retitling, publishing and deleting move collections between the
		// title and state partitions and counters.
		e.Do("PUT", path(b), map[string]any{"custom_collection": map[string]any{"title": "Video", "published": true}}).Expect(t, 200)
		if got := ids(list(t, e, "?title=Video&published_status=published")); len(got) != 2 || !slices.Contains(got, id(b)) {
			t.Fatalf("title and state after a change %v", got)
		}
		if n, m := count(t, e, "?published_status=published"), count(t, e, "?published_status=unpublished"); n != 4 || m != 0 {
			t.Fatalf("counts by state after a change %v %v", n, m)
		}
		if got := ids(list(t, e, "?title=Music")); !slices.Equal(got, []int64{id(a)}) {
			t.Fatalf("old title after a change %v", got)
		}
		e.Do("PUT", path(b), map[string]any{"custom_collection": map[string]any{"title": "Music", "published": false}}).Expect(t, 200)
		e.Do("GET", "/com/custom_collections.json?published_status=sometimes", nil).Expect(t, 400)
		e.Do("GET", "/com/custom_collections.json?updated_at_min=yesterday", nil).Expect(t, 400)
		customCollectionDatesFieldsAndLists(t, e, a, b)
	}, group)
}

// customCollectionDatesFieldsAndLists: the updated and published bounds, fields and paging, and lists without products_count.
func customCollectionDatesFieldsAndLists(t *testing.T, e *apitest.Env, a, b map[string]any) {
	t.Helper()
	updated, _ := time.Parse(time.RFC3339, a["updated_at"].(string))
	loc, _ := time.LoadLocation("America/New_York")
	minute := func(d time.Duration) string {
		return url.QueryEscape(updated.In(loc).Add(d).Format("2006-01-02 15:04"))
	}
	if n := count(t, e, "?updated_at_min="+minute(-2*time.Minute)+"&updated_at_max="+minute(2*time.Minute)); n != 4 {
		t.Fatalf("updated_at range %v", n)
	}
	if n := count(t, e, "?published_at_min="+minute(2*time.Minute)); n != 0 {
		t.Fatalf("published_at_min %v", n)
	}
	if n := len(list(t, e, "?published_at_max="+minute(2*time.Minute))); n != 3 { // frontpage, Music, Video
		t.Fatalf("published_at_max %v", n)
	}
	if l := list(t, e, "?fields=id,handle&limit=1&page=2"); len(l) != 1 || len(l[0].(map[string]any)) != 2 {
		t.Fatalf("fields/paging %v", l)
	}
	if l := list(t, e, ""); len(l) != 4 || id(l[0].(map[string]any)) != collection.FrontpageID {
		t.Fatalf("list %v", l)
	}
	for _, c := range list(t, e, "") {
		if _, ok := c.(map[string]any)["products_count"]; ok {
			t.Fatalf("products_count in a list: %v", c)
		}
	}
	if got := e.Do("GET", path(b)+"?fields=id,products_count", nil).Expect(t, 200).Object(t, "custom_collection"); len(got) != 2 || got["products_count"] != 2.0 {
		t.Fatalf("get fields %v", got)
	}
}

// Every filter, alone and combined, answers what filtering the whole list
// would, after updates and deletes have moved collections in their
// entries; counts agree, and each reads only its matches (a combination,
// what its most selective index yields). created_at, which collections do
// not show, is checked against the times their creates answered.
func TestFiltersAgreeWithTheWholeList(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		created := map[int64]time.Time{}
		stamp := func(c map[string]any, field string) time.Time {
			at, _ := time.Parse(time.RFC3339, c[field].(string))
			return at
		}
		fp := e.Do("GET", fmt.Sprintf("/com/custom_collections/%d.json", collection.FrontpageID), nil).Expect(t, 200).Object(t, "custom_collection")
		created[id(fp)] = stamp(fp, "updated_at") // never updated
		var made []map[string]any
		for i := range 8 {
			if i == 4 {
				clk.Advance(time.Second) // two seconds of created_at at least, for the range edges
			}
			c := create(t, e, map[string]any{"title": []string{"Music", "Video"}[i%2], "published": i%3 != 0})
			created[id(c)] = stamp(c, "updated_at")
			made = append(made, c)
		}
		clk.Advance(time.Second)
		update(t, e, made[0], map[string]any{"title": "Video", "published": true})
		update(t, e, made[5], map[string]any{"published": false})
		e.Do("DELETE", path(made[2]), nil).Expect(t, 200)

		whole := list(t, e, "?limit=250")
		if len(whole) != 8 {
			t.Fatalf("%d collections, want 8", len(whole))
		}
		titled := func(title string) func(map[string]any) bool {
			return func(r map[string]any) bool { return r["title"] == title }
		}
		published := func(r map[string]any) bool { return r["published_at"] != nil }
		all := func(map[string]any) bool { return true }
		edge := created[id(made[4])]
		createdWhen := func(keep func(time.Time) bool) func(map[string]any) bool {
			return func(r map[string]any) bool { return keep(created[id(r)]) }
		}
		filters := []apitest.Filter{
			{Query: "", Keep: all},
			{Query: "title=Video", Keep: titled("Video")},
			{Query: "published_status=unpublished", Keep: func(r map[string]any) bool { return !published(r) }},
			{Query: "title=Music&published_status=published", Source: titled("Music"), Keep: func(r map[string]any) bool { return r["title"] == "Music" && published(r) }},
			{Query: "published_status=published&published_at_min=2000-01-01", Keep: published},
			{Query: "published_status=unpublished&updated_at_min=2000-01-01", Source: all, Keep: func(r map[string]any) bool { return !published(r) }},
			{Query: "title=Video&updated_at_min=" + apitest.Stamp(stamp(made[7], "updated_at")), Source: titled("Video"), Keep: func(r map[string]any) bool {
				return r["title"] == "Video" && stamp(r, "updated_at").After(stamp(made[7], "updated_at"))
			}},
			{Query: "created_at_min=" + apitest.Stamp(edge), Keep: createdWhen(func(c time.Time) bool { return c.After(edge) })},
			{Query: "created_at_max=" + apitest.Stamp(edge), Keep: createdWhen(func(c time.Time) bool { return c.Before(edge) })},
			{Query: "created_at_min=" + apitest.Stamp(edge.Add(-time.Second)), Keep: createdWhen(func(c time.Time) bool { return c.After(edge.Add(-time.Second)) })},
			{Query: "created_at_min=" + apitest.Stamp(edge.Add(-time.Second)) + "&title=Music", Source: titled("Music"), Keep: func(r map[string]any) bool {
				return r["title"] == "Music" && created[id(r)].After(edge.Add(-time.Second))
			}},
		}
		for _, field := range []string{"updated_at", "published_at"} {
			filters = append(filters, apitest.RangeFilters(t, field, whole)...)
		}
		apitest.CheckFilters(t, e, apitest.FilterCheck{List: "/com/custom_collections.json", Count: "/com/custom_collections/count.json", Key: "custom_collections"}, whole, filters)

		// page_info pages through a range (Ref entries in updated_at
		// order) give the whole range in the same order, and back.
		want := e.Do("GET", "/com/custom_collections.json?limit=250&updated_at_min=2000-01-01", nil).Expect(t, 200).IDs(t, "custom_collections")
		var got []int64
		var pages []string
		for next := "/com/custom_collections.json?limit=3&updated_at_min=2000-01-01"; next != ""; {
			res := e.Do("GET", next, nil).Expect(t, 200)
			got = append(got, res.IDs(t, "custom_collections")...)
			pages = append(pages, next)
			next = res.Link("next")
		}
		if !slices.Equal(got, want) || len(pages) != 3 {
			t.Fatalf("pages of 3 gave %v over %d pages, want %v", got, len(pages), want)
		}
		last := e.Do("GET", pages[2], nil).Expect(t, 200)
		if back := e.Do("GET", last.Link("previous"), nil).Expect(t, 200).IDs(t, "custom_collections"); !slices.Equal(back, want[3:6]) {
			t.Fatalf("previous page %v, want %v", back, want[3:6])
		}
	}, group)
}

// Two changes whose ids collide (two processes drew the same id in the same
// second, about once in 2^21 pairs) are both derived: the second change's
// event takes the log's next id, its notification another id of that
// second, and nothing is left pending.
func TestCollidingChangeIDsAreBothDerived(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := t.Context()
		a := create(t, e, map[string]any{"title": "First"})
		b := create(t, e, map[string]any{"title": "Second"})
		stamp := func(id float64) store.Item {
			it, err := e.Deps.Store.Get(ctx, collection.Key(int64(id)))
			if err != nil {
				t.Fatal(err)
			}
			return it
		}
		taken := stamp(a["id"].(float64)).Nums[store.ChangeNum]
		notifications := func() int {
			n, err := e.Deps.Store.Count(ctx, store.Query{PK: outbox.NotificationKey(0).PK})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		before := notifications()
		// B's update, made by another process that drew A's id for it.
		it := stamp(b["id"].(float64))
		next := it
		next.Version++
		next.Data = bytes.Replace(it.Data, []byte(`"title":"Second"`), []byte(`"title":"Second, renamed"`), 1)
		records.Stamp(admin.WithApp(ctx, &admin.App{ID: 1001, Name: "Demo App"}), &next, taken)
		if err := e.Deps.Store.Transact(ctx, store.Put(next, store.IfVersion, it.Version)); err != nil {
			t.Fatal(err)
		}
		items, _, err := e.Deps.Store.Query(ctx, store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Collection, int64(b["id"].(float64)))})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := records.DecodeAll[events.Event](items)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) != 2 || evs[1].Verb != events.Update || evs[1].ID <= taken {
			t.Fatalf("the second collection's events %+v: want its create and its update, above the taken id %d", evs, taken)
		}
		if n := notifications() - before; n != 1 {
			t.Errorf("%d notifications of the update, want 1", n)
		}
		if pending, _, _ := e.Deps.Store.Query(ctx, store.Query{PK: store.PendingPartition}); len(pending) != 0 {
			t.Errorf("%d pending items left", len(pending))
		}
	}, group)
}

// holdDerived fails the change feed's derivations (the transactions that
// remove pending items) while held, as an unavailable store does.
type holdDerived struct {
	store.Store
	held atomic.Bool
}

func (h *holdDerived) Transact(ctx context.Context, ops ...store.Op) error {
	for i := range ops {
		if h.held.Load() && ops[i].Kind == store.OpDelete && ops[i].Key.PK == store.PendingPartition {
			return store.Unavailable("throttled", false, errors.New("held"))
		}
	}
	return h.Store.Transact(ctx, ops...)
}

// What a change's derived items show is what was true when it committed:
// its event's author is the app's name then, its notification's times are
// in the shop's time zone then, however late the feed derives them.
func TestDerivedItemsShowTheCommit(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := t.Context()
		hold := &holdDerived{}
		e.Change(func(d *platform.Deps) {
			hold.Store = store.Innermost(d.Store)
			api.UseStore(d, hold, true)
		})
		hold.held.Store(true)
		c := create(t, e, map[string]any{"title": "As committed"})
		id := int64(c["id"].(float64))
		// Before the feed derives it, the app is renamed and the shop
		// moves to another zone.
		rewrite := func(k store.Key, from, to string) {
			it, err := hold.Store.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			it.Data = bytes.Replace(it.Data, []byte(from), []byte(to), 1)
			if err := hold.Store.Transact(ctx, store.Put(it, store.Always, 0)); err != nil {
				t.Fatal(err)
			}
		}
		rewrite(auth.AppKey(1001), `"name":"Demo App"`, `"name":"Renamed App"`)
		rewrite(auth.ShopKey, `"iana_timezone":"America/New_York"`, `"iana_timezone":"Asia/Tokyo"`)
		hold.held.Store(false)
		if err := e.Deps.Feed.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		items, _, err := e.Deps.Store.Query(ctx, store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Collection, id)})
		if err != nil {
			t.Fatal(err)
		}
		evs, err := records.DecodeAll[events.Event](items)
		if err != nil || len(evs) != 1 || evs[0].Author != "Demo App" {
			t.Fatalf("the create's events %+v (%v): want one by Demo App, the app's name when it committed", evs, err)
		}
		notes, _, err := e.Deps.Store.Query(ctx, store.Query{PK: outbox.NotificationKey(0).PK})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for i := range notes {
			var n outbox.Notification
			var p struct {
				ID        int64  `json:"id"`
				UpdatedAt string `json:"updated_at"`
			}
			if records.Decode(&notes[i], &n) != nil || json.Unmarshal(n.Payload, &p) != nil || p.ID != id {
				continue
			}
			found = true
			if !strings.HasSuffix(p.UpdatedAt, "-05:00") && !strings.HasSuffix(p.UpdatedAt, "-04:00") {
				t.Errorf("the notification's updated_at %s is not in New York's zone, the shop's when it committed", p.UpdatedAt)
			}
		}
		if !found {
			t.Fatal("no notification of the create")
		}
	}, group)
}
