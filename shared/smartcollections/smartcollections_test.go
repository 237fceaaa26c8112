package smartcollections_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
)

var group = api.Group{Name: "smart-collections", Routes: smartcollections.Routes}

const base = "/com/smart_collections"

// Products of the membership tests: the demo seed's iPod Nano and two more.
const (
	nano     = int64(632910392) // "IPod Nano - 8GB", Apple, Cult Products, tags Emotive, Flash Memory, MP3, Music; Pink and Red at 199.00
	touch    = int64(1001)
	leather  = int64(1002)
	nanoPink = int64(808950810)
	nanoRed  = int64(49148385)
)

func create(t testing.TB, e *apitest.Env, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("POST", base+".json", map[string]any{"smart_collection": fields}).Expect(t, 201).Object(t, "smart_collection")
}

func update(t testing.TB, e *apitest.Env, c map[string]any, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("PUT", path(c), map[string]any{"smart_collection": fields}).Expect(t, 200).Object(t, "smart_collection")
}

func id(c map[string]any) int64 { return int64(c["id"].(float64)) }

func path(c map[string]any) string { return fmt.Sprintf("%s/%d.json", base, id(c)) }

func rule(column, relation, condition string) map[string]any {
	return map[string]any{"column": column, "relation": relation, "condition": condition}
}

func money(s string) admin.Money {
	m, err := admin.ParseMoney(s)
	if err != nil {
		panic(err)
	}
	return m
}

func variant(id int64, title, price string, inventory int64, weight float64, compareAt string) catalog.Variant {
	v := catalog.Variant{ID: id, Title: title, Price: money(price), InventoryQuantity: inventory, Weight: weight, WeightUnit: "kg",
		InventoryPolicy: "deny", FulfillmentService: "manual", Taxable: true, RequiresShipping: true, CreatedAt: admin.At(time.Now()), UpdatedAt: admin.At(time.Now())}
	if compareAt != "" {
		m := money(compareAt)
		v.CompareAtPrice = &m
	}
	return v
}

type product struct {
	id                       int64
	title, typ, vendor, tags string
	variants                 []catalog.Variant
}

// putProducts writes products and their variants in the catalog layout,
// store.MaxTransactItems items a transaction.
func putProducts(t testing.TB, st store.Store, ps ...product) {
	t.Helper()
	var ops []store.Op
	flush := func() {
		if len(ops) > 0 {
			if err := st.Transact(context.Background(), ops...); err != nil {
				t.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	for _, p := range ps {
		data := records.Encode(map[string]any{"id": p.id, "title": p.title, "product_type": p.typ, "vendor": p.vendor, "tags": p.tags})
		ops = append(ops, store.Put(store.Item{PK: catalog.ProductPartition, SK: records.IDSK(p.id), Version: 1, Data: data}, store.Always, 0))
		if len(ops) == store.MaxTransactItems {
			flush()
		}
		for _, v := range p.variants {
			v.ProductID = p.id
			ops = append(ops, store.Put(v.Item(1), store.Always, 0))
			if len(ops) == store.MaxTransactItems {
				flush()
			}
		}
	}
	flush()
}

func seedProducts(t testing.TB, e *apitest.Env) {
	putProducts(t, e.Deps.Store,
		product{touch, "IPod Touch 32GB", "Players", "Apple", "Music, Touch", []catalog.Variant{
			variant(2001, "Black", "299.00", 5, 0.3, "349.00"),
			variant(2002, "White", "279.00", 0, 0.3, ""),
		}},
		product{leather, "Leather Case", "Accessories", "Acme", "case, Leather Goods", []catalog.Variant{
			variant(2003, "Brown", "19.99", 100, 0.1, ""),
		}},
	)
}

// setVariant changes a stored variant directly, as the variants endpoint would.
func setVariant(t testing.TB, st store.Store, variantID int64, change func(v *catalog.Variant)) {
	t.Helper()
	ctx := context.Background()
	it, err := st.Get(ctx, catalog.VariantKey(variantID))
	if err != nil {
		t.Fatal(err)
	}
	v, err := catalog.DecodeVariant(&it)
	if err != nil {
		t.Fatal(err)
	}
	change(&v)
	if err := st.Transact(ctx, store.Put(v.Item(it.Version+1), store.IfVersion, it.Version)); err != nil {
		t.Fatal(err)
	}
}

// members reads a collection's membership items: the product ids.
func members(t testing.TB, st store.Store, collectionID int64) []int64 {
	t.Helper()
	items, _, err := st.Query(context.Background(), store.Query{PK: smartcollections.MemberPartition(collectionID)})
	if err != nil {
		t.Fatal(err)
	}
	out := []int64{}
	for i := range items {
		var m smartcollections.Member
		if err := records.Decode(&items[i], &m); err != nil {
			t.Fatal(err)
		}
		if m.CollectionID != collectionID || m.ID == 0 || m.Position < 1 || m.CreatedAt.IsZero() ||
			items[i].GSI2PK != smartcollections.ProductMembersIndex(m.ProductID) || items[i].GSI2SK != records.IDSK(collectionID) {
			t.Fatalf("membership item %+v %s/%s", m, items[i].GSI2PK, items[i].GSI2SK)
		}
		out = append(out, m.ProductID)
	}
	slices.Sort(out)
	return out
}

func collectionEvents(t testing.TB, e *apitest.Env, id int64) []events.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(context.Background(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Collection, id)})
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
	var v []string
	for _, ev := range evs {
		v = append(v, ev.Verb)
	}
	return strings.Join(v, ",")
}

// notifications reads the collections/* notifications about a collection, oldest first.
func notifications(t testing.TB, e *apitest.Env, id int64) []outbox.Notification {
	t.Helper()
	items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: "notification"})
	if err != nil {
		t.Fatal(err)
	}
	var out []outbox.Notification
	for i := range items {
		var n outbox.Notification
		if err := records.Decode(&items[i], &n); err != nil {
			t.Fatal(err)
		}
		var c smartcollections.SmartCollection
		records.Decode(&store.Item{Data: n.Payload}, &c)
		if strings.HasPrefix(n.Topic, "collections/") && c.ID == id {
			out = append(out, n)
		}
	}
	return out
}

func topics(ns []outbox.Notification) string {
	var v []string
	for _, n := range ns {
		v = append(v, n.Topic)
	}
	return strings.Join(v, ",")
}

func TestSmartCollections(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("create fills the defaults, logs an event and fires collections/create", func(t *testing.T) { smartCollectionCreate(t, e) })
		t.Run("update changes fields, logs update and fires collections/update", func(t *testing.T) {
			c := create(t, e, map[string]any{"title": "Summer"})
			u := update(t, e, c, map[string]any{"id": id(c), "title": "Summer Sale", "body_html": "<b>hot</b>", "sort_order": "price-desc",
				"template_suffix": "sale", "published_scope": "web"})
			if u["title"] != "Summer Sale" || u["handle"] != "summer" || u["body_html"] != "<b>hot</b>" || u["sort_order"] != "price-desc" ||
				u["template_suffix"] != "sale" || u["published_scope"] != "global" || u["published_at"] != c["published_at"] {
				t.Fatalf("updated %v", u)
			}
			u = update(t, e, c, map[string]any{"body_html": nil, "template_suffix": ""})
			if u["body_html"] != nil || u["template_suffix"] != nil {
				t.Fatalf("cleared %v", u)
			}
			if v := verbs(collectionEvents(t, e, id(c))); v != "create,update,update" {
				t.Fatalf("verbs %s", v)
			}
			if tp := topics(notifications(t, e, id(c))); tp != "collections/create,collections/update,collections/update" {
				t.Fatalf("topics %s", tp)
			}
			e.Do("PUT", base+"/99999999.json", map[string]any{"smart_collection": map[string]any{"title": "x"}}).Expect(t, 404)
			e.Do("GET", base+"/99999999.json", nil).Expect(t, 404)
		})
		t.Run("publishing convention", func(t *testing.T) {
			c := create(t, e, map[string]any{"title": "Hidden", "published": false})
			if c["published_at"] != nil {
				t.Fatalf("published_at %v", c["published_at"])
			}
			if u := update(t, e, c, map[string]any{"published": true}); u["published_at"] == nil {
				t.Fatal("not published")
			}
			if u := update(t, e, c, map[string]any{"published": false}); u["published_at"] != nil {
				t.Fatal("not hidden")
			}
			evs := collectionEvents(t, e, id(c))
			if verbs(evs) != "create,published,unpublished" || evs[2].Message != `<a href="/collections/hidden">Hidden</a> was hidden.` ||
				evs[1].Message != `<a href="/collections/hidden">Hidden</a> was published.` {
				t.Fatalf("events %+v", evs)
			}
		})
		t.Run("delete removes it, logs destroy, fires collections/delete and frees the handle", func(t *testing.T) {
			before := e.Do("GET", base+"/count.json", nil).Expect(t, 200).JSON(t)["count"].(float64)
			c := create(t, e, map[string]any{"title": "Doomed"})
			e.Do("DELETE", path(c), nil).Expect(t, 200)
			e.Do("DELETE", path(c), nil).Expect(t, 404)
			e.Do("GET", path(c), nil).Expect(t, 404)
			evs := collectionEvents(t, e, id(c))
			if verbs(evs) != "create,destroy" || evs[1].Message != `<a href="/collections/doomed">Doomed</a> was destroyed.` {
				t.Fatalf("events %+v", evs)
			}
			if tp := topics(notifications(t, e, id(c))); tp != "collections/create,collections/delete" {
				t.Fatalf("topics %s", tp)
			}
			if after := e.Do("GET", base+"/count.json", nil).Expect(t, 200).JSON(t)["count"].(float64); after != before {
				t.Fatalf("count %v, was %v", after, before)
			}
			if again := create(t, e, map[string]any{"title": "Doomed"}); again["handle"] != "doomed" {
				t.Fatalf("handle %v", again["handle"])
			}
		})
		t.Run("scopes", func(t *testing.T) {
			e.DoAs(apitest.ReadOnlyToken, "GET", base+".json", nil).Expect(t, 403)
			e.DoAs("", "GET", base+".json", nil).Expect(t, 401)
		})
	}, group)
}

func smartCollectionCreate(t *testing.T, e *apitest.Env) {
	c := create(t, e, map[string]any{"title": "IPods", "body_html": "<p>All iPods</p>",
		"rules": []any{rule("title", "starts_with", "ipod")}})
	want := map[string]any{"title": "IPods", "handle": "ipods", "body_html": "<p>All iPods</p>", "published_scope": "global",
		"sort_order": "alpha-asc", "template_suffix": nil, "products_count": 1.0, "disjunctive": false}
	for k, v := range want {
		if c[k] != v {
			t.Fatalf("%s = %v, want %v (%v)", k, c[k], v, c)
		}
	}
	if c["published_at"] == nil || c["updated_at"] == nil || !strings.HasSuffix(c["updated_at"].(string), "-04:00") && !strings.HasSuffix(c["updated_at"].(string), "-05:00") {
		t.Fatalf("timestamps %v", c)
	}
	if _, ok := c["image"]; ok {
		t.Fatalf("image %v", c["image"])
	}
	if rules := c["rules"].([]any); len(rules) != 1 || fmt.Sprint(rules[0]) != fmt.Sprint(rule("title", "starts_with", "ipod")) {
		t.Fatalf("rules %v", c["rules"])
	}
	got := e.Do("GET", path(c), nil).Expect(t, 200).Object(t, "smart_collection")
	if fmt.Sprint(got) != fmt.Sprint(c) {
		t.Fatalf("get %v\nwant %v", got, c)
	}
	evs := collectionEvents(t, e, id(c))
	if len(evs) != 1 || evs[0].Verb != "create" || evs[0].Author != "Demo App" ||
		evs[0].Message != `New collection created: <a href="/collections/ipods">IPods</a>` {
		t.Fatalf("events %+v", evs)
	}
	ns := notifications(t, e, id(c))
	if topics(ns) != "collections/create" || ns[0].Resource != "collection" || !strings.Contains(string(ns[0].Payload), `"title":"IPods"`) {
		t.Fatalf("notifications %+v", ns)
	}
	bare := create(t, e, map[string]any{"title": "Bare"})
	if bare["body_html"] != nil || bare["products_count"] != 0.0 || len(bare["rules"].([]any)) != 0 {
		t.Fatalf("bare %v", bare)
	}
	if f := e.Do("GET", path(c)+"?fields=id,products_count", nil).Expect(t, 200).Object(t, "smart_collection"); len(f) != 2 || f["products_count"] != 1.0 {
		t.Fatalf("fields %v", f)
	}
}

func TestValidation(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		expect := func(body map[string]any, want string) {
			t.Helper()
			res := e.Do("POST", base+".json", map[string]any{"smart_collection": body}).Expect(t, 422)
			if got := strings.TrimSpace(string(res.Body)); got != want {
				t.Fatalf("got  %s\nwant %s", got, want)
			}
		}
		expect(map[string]any{"body_html": "x"}, `{"errors":{"title":["can't be blank"]}}`)
		expect(map[string]any{"title": "  "}, `{"errors":{"title":["can't be blank"]}}`)
		expect(map[string]any{"title": strings.Repeat("x", 256)}, `{"errors":{"title":["is too long (maximum is 255 characters)"]}}`)
		expect(map[string]any{"title": "x", "body_html": strings.Repeat("<p>", 100_000)},
			`{"errors":{"body_html":["is too long (the collection may take at most 256 KB stored)"]}}`)
		expect(map[string]any{"title": "x", "sort_order": "random"}, `{"errors":{"sort_order":["is not included in the list"]}}`)
		expect(map[string]any{"title": "x", "handle": "Not Valid"}, `{"errors":{"handle":["is invalid"]}}`)
		expect(map[string]any{"title": "x", "rules": "title"}, `{"errors":{"rules":["must be an array of rules"]}}`)
		expect(map[string]any{"title": "x", "rules": []any{"title"}}, `{"errors":{"rules":["must be an array of rules"]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("colour", "equals", "red")}},
			`{"errors":{"rules":["column \"colour\" is not included in the list (title, type, vendor, variant_price, variant_compare_at_price, variant_weight, variant_inventory, variant_title, tag)"]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("", "equals", "red")}}, `{"errors":{"rules":["column can't be blank"]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("title", "is", "red")}},
			`{"errors":{"rules":["relation \"is\" is not included in the list (equals, greater_than, less_than, starts_with, ends_with, contains)"]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("title", "greater_than", "a")}},
			`{"errors":{"rules":["relation \"greater_than\" applies only to the numeric columns (variant_price, variant_compare_at_price, variant_weight, variant_inventory), not \"title\""]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("variant_price", "contains", "9")}},
			`{"errors":{"rules":["relation \"contains\" does not apply to the numeric column \"variant_price\" (use equals, greater_than or less_than)"]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("variant_price", "less_than", "cheap")}},
			`{"errors":{"rules":["condition \"cheap\" must be a number for column \"variant_price\""]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("variant_inventory", "equals", "1.5")}},
			`{"errors":{"rules":["condition \"1.5\" must be an integer for column \"variant_inventory\""]}}`)
		expect(map[string]any{"title": "x", "rules": []any{rule("tag", "equals", " ")}}, `{"errors":{"rules":["condition can't be blank"]}}`)
		expect(map[string]any{"title": "x", "rules": []any{map[string]any{"column": 1, "relation": "equals", "condition": "a"}}},
			`{"errors":{"rules":["column must be a string"]}}`)
		many := make([]any, 61)
		for i := range many {
			many[i] = rule("tag", "equals", "a")
		}
		expect(map[string]any{"title": "x", "rules": many}, `{"errors":{"rules":["is too long (maximum is 60 rules)"]}}`)
		// Several problems: every field is reported, each message once.
		res := e.Do("POST", base+".json", map[string]any{"smart_collection": map[string]any{"rules": []any{
			rule("colour", "equals", "red"), rule("vendor", "less_than", "a"), rule("colour", "equals", "red")}}}).Expect(t, 422)
		errs := res.JSON(t)["errors"].(map[string]any)
		if len(errs["title"].([]any)) != 1 || len(errs["rules"].([]any)) != 2 {
			t.Fatalf("errors %s", res.Body)
		}
		// An integral number is an integer, however it is written (JSON has no integer type).
		expect(map[string]any{"title": "x", "rules": []any{rule("variant_inventory", "equals", "1e400")}},
			`{"errors":{"rules":["condition \"1e400\" must be an integer for column \"variant_inventory\""]}}`)
		// Weights and stock levels are bounded by 10^15, as the document says.
		expect(map[string]any{"title": "x", "rules": []any{map[string]any{"column": "variant_inventory", "relation": "equals", "condition": json.Number("-1e16")}}},
			`{"errors":{"rules":["condition \"-10000000000000000\" must be an integer for column \"variant_inventory\""]}}`)
		expect(map[string]any{"title": "x", "rules": []any{map[string]any{"column": "variant_weight", "relation": "less_than", "condition": json.Number("1e300")}}},
			`{"errors":{"rules":["condition \"1e300\" must be a number for column \"variant_weight\""]}}`)
		for _, cond := range []any{json.Number("2.0"), "2.0", json.Number("1e3"), -4.0} {
			c := create(t, e, map[string]any{"title": fmt.Sprint("Integral ", cond), "rules": []any{map[string]any{"column": "variant_inventory", "relation": "greater_than", "condition": cond}}})
			if r := c["rules"].([]any)[0].(map[string]any); r["relation"] != "greater_than" {
				t.Fatalf("rule %v", r)
			}
			e.Do("DELETE", path(c), nil).Expect(t, 200)
		}
		// A number is accepted as a numeric condition.
		c := create(t, e, map[string]any{"title": "Numeric", "rules": []any{map[string]any{"column": "variant_price", "relation": "greater_than", "condition": 100}}})
		if r := c["rules"].([]any)[0].(map[string]any); r["condition"] != "100" {
			t.Fatalf("rule %v", r)
		}
		// Updates validate the same way and change nothing when rejected.
		res = e.Do("PUT", path(c), map[string]any{"smart_collection": map[string]any{"title": "", "rules": []any{rule("type", "ends_with", "")}}}).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != `{"errors":{"rules":["condition can't be blank"],"title":["can't be blank"]}}` {
			t.Fatalf("got %s", res.Body)
		}
		if got := e.Do("GET", path(c), nil).Expect(t, 200).Object(t, "smart_collection"); got["title"] != "Numeric" {
			t.Fatalf("changed %v", got)
		}
		if n := e.Do("GET", base+"/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 1.0 {
			t.Fatalf("rejected collections were stored: %v", n)
		}
	}, group)
}

// Custom and smart collections share one handle space: a handle a custom
// collection holds (claimed here directly, as that package does) is taken.
func TestHandlesSharedWithCustomCollections(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := t.Context()
		// The seed may create the frontpage custom collection itself.
		if err := e.Deps.Store.Transact(ctx, handles.Claim(smartcollections.HandleNamespace, "frontpage", 77)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			t.Fatal(err)
		}
		if owner, err := handles.Owner(ctx, e.Deps.Store, smartcollections.HandleNamespace, "frontpage"); err != nil || owner == 0 {
			t.Fatalf("frontpage owner %d %v", owner, err)
		}
		c := create(t, e, map[string]any{"title": "Frontpage"})
		if c["handle"] != "frontpage-1" {
			t.Fatalf("handle %v", c["handle"])
		}
		res := e.Do("POST", base+".json", map[string]any{"smart_collection": map[string]any{"title": "Other", "handle": "frontpage"}}).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != `{"errors":{"handle":["has already been taken"]}}` {
			t.Fatalf("got %s", res.Body)
		}
		res = e.Do("PUT", path(c), map[string]any{"smart_collection": map[string]any{"handle": "frontpage"}}).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != `{"errors":{"handle":["has already been taken"]}}` {
			t.Fatalf("got %s", res.Body)
		}
		if l := e.Do("GET", base+".json?handle=frontpage", nil).Expect(t, 200).List(t, "smart_collections"); len(l) != 0 {
			t.Fatalf("a custom collection's handle listed %v", l)
		}
		moved := update(t, e, c, map[string]any{"handle": "home"})
		if moved["handle"] != "home" {
			t.Fatalf("handle %v", moved["handle"])
		}
		if owner, err := handles.Owner(ctx, e.Deps.Store, smartcollections.HandleNamespace, "frontpage-1"); err != nil || owner != 0 {
			t.Fatalf("old handle not released: %d %v", owner, err)
		}
		if owner, _ := handles.Owner(ctx, e.Deps.Store, smartcollections.HandleNamespace, "home"); owner != id(c) {
			t.Fatalf("owner %d", owner)
		}
		if l := e.Do("GET", base+".json?handle=home", nil).Expect(t, 200).List(t, "smart_collections"); len(l) != 1 {
			t.Fatalf("handle filter %v", l)
		}
		e.Do("DELETE", path(moved), nil).Expect(t, 200)
		if owner, _ := handles.Owner(ctx, e.Deps.Store, smartcollections.HandleNamespace, "home"); owner != 0 {
			t.Fatalf("handle kept by a deleted collection: %d", owner)
		}
	}, group)
}

// membershipCases: one collection per case over the three products.
var membershipCases = []struct {
	name        string
	rules       []any
	disjunctive bool
	want        []int64
}{
	{"title equals ignores case", []any{rule("title", "equals", "ipod nano - 8gb")}, false, []int64{nano}},
	{"title starts_with", []any{rule("title", "starts_with", "IPOD")}, false, []int64{touch, nano}},
	{"title ends_with", []any{rule("title", "ends_with", "case")}, false, []int64{leather}},
	{"title contains", []any{rule("title", "contains", "touch")}, false, []int64{touch}},
	{"type equals", []any{rule("type", "equals", "cult products")}, false, []int64{nano}},
	{"type starts_with", []any{rule("type", "starts_with", "acc")}, false, []int64{leather}},
	{"vendor equals", []any{rule("vendor", "equals", "APPLE")}, false, []int64{touch, nano}},
	{"vendor contains", []any{rule("vendor", "contains", "cm")}, false, []int64{leather}},
	{"vendor ends_with", []any{rule("vendor", "ends_with", "LE")}, false, []int64{touch, nano}},
	{"tag equals one tag", []any{rule("tag", "equals", "music")}, false, []int64{touch, nano}},
	{"tag equals is not a substring", []any{rule("tag", "equals", "mus")}, false, []int64{}},
	{"tag equals a tag with a space", []any{rule("tag", "equals", "flash memory")}, false, []int64{nano}},
	{"tag starts_with", []any{rule("tag", "starts_with", "flash")}, false, []int64{nano}},
	{"tag ends_with", []any{rule("tag", "ends_with", "goods")}, false, []int64{leather}},
	{"tag contains", []any{rule("tag", "contains", "ouc")}, false, []int64{touch}},
	{"variant_price equals", []any{rule("variant_price", "equals", "199")}, false, []int64{nano}},
	{"variant_price greater_than", []any{rule("variant_price", "greater_than", "200")}, false, []int64{touch}},
	{"variant_price less_than", []any{rule("variant_price", "less_than", "20")}, false, []int64{leather}},
	{"variant_price any variant", []any{rule("variant_price", "less_than", "280.00")}, false, []int64{touch, leather, nano}},
	{"variant_compare_at_price equals", []any{rule("variant_compare_at_price", "equals", "349.00")}, false, []int64{touch}},
	{"variant_compare_at_price null never matches", []any{rule("variant_compare_at_price", "less_than", "1000")}, false, []int64{touch}},
	{"variant_compare_at_price greater_than", []any{rule("variant_compare_at_price", "greater_than", "0")}, false, []int64{touch}},
	{"variant_weight equals", []any{rule("variant_weight", "equals", "0.2")}, false, []int64{nano}},
	{"variant_weight greater_than", []any{rule("variant_weight", "greater_than", "0.25")}, false, []int64{touch}},
	{"variant_weight less_than", []any{rule("variant_weight", "less_than", "0.15")}, false, []int64{leather}},
	{"variant_inventory greater_than", []any{rule("variant_inventory", "greater_than", "50")}, false, []int64{leather}},
	{"variant_inventory equals", []any{rule("variant_inventory", "equals", "0")}, false, []int64{touch}},
	{"variant_inventory less_than", []any{rule("variant_inventory", "less_than", "10")}, false, []int64{touch}},
	{"variant_title equals", []any{rule("variant_title", "equals", "PINK")}, false, []int64{nano}},
	{"variant_title starts_with", []any{rule("variant_title", "starts_with", "b")}, false, []int64{touch, leather}},
	{"variant_title ends_with", []any{rule("variant_title", "ends_with", "ed")}, false, []int64{nano}},
	{"variant_title contains", []any{rule("variant_title", "contains", "hit")}, false, []int64{touch}},
	{"all rules", []any{rule("vendor", "equals", "apple"), rule("variant_price", "greater_than", "250")}, false, []int64{touch}},
	{"all rules, none holds", []any{rule("vendor", "equals", "acme"), rule("title", "contains", "ipod")}, false, []int64{}},
	{"disjunctive", []any{rule("vendor", "equals", "acme"), rule("type", "equals", "cult products")}, true, []int64{leather, nano}},
	{"disjunctive, one holds", []any{rule("title", "equals", "nothing"), rule("tag", "equals", "CASE")}, true, []int64{leather}},
	{"no rules", []any{}, false, []int64{}},
}

func TestMembership(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		seedProducts(t, e)
		st := e.Deps.Store
		byProduct := map[int64][]int64{}
		for _, tc := range membershipCases {
			c := create(t, e, map[string]any{"title": tc.name, "rules": tc.rules, "disjunctive": tc.disjunctive})
			if got := members(t, st, id(c)); !slices.Equal(got, tc.want) {
				t.Errorf("%s: members %v, want %v", tc.name, got, tc.want)
			}
			if c["products_count"] != float64(len(tc.want)) {
				t.Errorf("%s: products_count %v, want %d", tc.name, c["products_count"], len(tc.want))
			}
			for _, p := range tc.want {
				byProduct[p] = append(byProduct[p], id(c))
			}
		}
		for _, l := range byProduct {
			slices.Sort(l)
		}
		// product_id lists the collections the product is a member of (GSI2).
		for _, p := range []int64{nano, touch, leather} {
			l := e.Do("GET", fmt.Sprintf("%s.json?limit=250&product_id=%d", base, p), nil).Expect(t, 200).List(t, "smart_collections")
			var got []int64
			for _, c := range l {
				got = append(got, id(c.(map[string]any)))
			}
			if !slices.Equal(got, byProduct[p]) {
				t.Errorf("product_id=%d: %v, want %v", p, got, byProduct[p])
			}
			n := e.Do("GET", fmt.Sprintf("%s/count.json?product_id=%d", base, p), nil).Expect(t, 200).JSON(t)["count"]
			if n != float64(len(byProduct[p])) {
				t.Errorf("count product_id=%d: %v", p, n)
			}
			l = e.Do("GET", fmt.Sprintf("%s.json?product_id=%d&limit=2&page=2&fields=id", base, p), nil).Expect(t, 200).List(t, "smart_collections")
			if len(l) != min(2, max(0, len(byProduct[p])-2)) || (len(l) > 0 && id(l[0].(map[string]any)) != byProduct[p][2]) {
				t.Errorf("product_id=%d page 2: %v", p, l)
			}
			l = e.Do("GET", fmt.Sprintf("%s.json?product_id=%d&since_id=%d", base, p, byProduct[p][0]), nil).Expect(t, 200).List(t, "smart_collections")
			if len(l) != len(byProduct[p])-1 {
				t.Errorf("product_id=%d since_id: %d", p, len(l))
			}
		}
		if n := e.Do("GET", base+"/count.json?product_id=1001&title=title+contains", nil).Expect(t, 200).JSON(t)["count"]; n != 1.0 {
			t.Errorf("product_id with title: %v", n)
		}
		if l := e.Do("GET", base+".json?product_id=424242", nil).Expect(t, 200).List(t, "smart_collections"); len(l) != 0 {
			t.Errorf("unknown product %v", l)
		}
		e.Do("GET", base+".json?product_id=abc", nil).Expect(t, 400)
	}, group)
}

func TestMatches(t *testing.T) {
	p := &catalog.Product{ID: 1, Title: "Crème Brûlée Set", ProductType: "Kitchen", Vendor: "Chef & Co", Tags: " dessert ,Gift,, "}
	vs := []catalog.Variant{variant(1, "Small", "10.00", -2, 0.1+0.2, "")}
	for _, tc := range []struct {
		rules []smartcollections.Rule
		disj  bool
		want  bool
	}{
		{[]smartcollections.Rule{{"title", "contains", "CRÈME"}}, false, true},
		{[]smartcollections.Rule{{"tag", "equals", "gift"}}, false, true},
		{[]smartcollections.Rule{{"tag", "equals", ""}}, false, false},
		{[]smartcollections.Rule{{"variant_weight", "equals", "0.3"}}, false, true},
		{[]smartcollections.Rule{{"variant_inventory", "less_than", "0"}}, false, true},
		{[]smartcollections.Rule{{"variant_price", "equals", "10"}}, false, true},
		{[]smartcollections.Rule{{"variant_price", "greater_than", "10.00"}}, false, false},
		{[]smartcollections.Rule{{"vendor", "starts_with", "chef &"}}, false, true},
		{[]smartcollections.Rule{{"vendor", "bogus", "x"}}, true, false},
		{nil, true, false},
		{[]smartcollections.Rule{{"type", "equals", "kitchen"}, {"title", "equals", "x"}}, false, false},
		{[]smartcollections.Rule{{"type", "equals", "kitchen"}, {"title", "equals", "x"}}, true, true},
	} {
		if got := smartcollections.Matches(tc.rules, tc.disj, p, vs); got != tc.want {
			t.Errorf("Matches(%v, %v) = %v", tc.rules, tc.disj, got)
		}
	}
	if smartcollections.Matches([]smartcollections.Rule{{"variant_title", "equals", "small"}}, false, p, nil) {
		t.Error("a variant rule matched a product without variants")
	}
}

func TestReevaluate(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		seedProducts(t, e)
		st, ctx := e.Deps.Store, t.Context()
		reevaluate := func(pid int64) {
			t.Helper()
			if err := smartcollections.Reevaluate(ctx, st, e.Deps.IDs, e.Deps.Clock, pid); err != nil {
				t.Fatal(err)
			}
		}
		count := func(c map[string]any) float64 {
			t.Helper()
			return e.Do("GET", path(c), nil).Expect(t, 200).Object(t, "smart_collection")["products_count"].(float64)
		}
		cheap := create(t, e, map[string]any{"title": "Under 100", "rules": []any{rule("variant_price", "less_than", "100")}})
		stocked := create(t, e, map[string]any{"title": "Stocked", "rules": []any{rule("variant_inventory", "greater_than", "50")}})
		apple := create(t, e, map[string]any{"title": "Apple", "rules": []any{rule("vendor", "equals", "Apple")}})
		if !slices.Equal(members(t, st, id(cheap)), []int64{leather}) || !slices.Equal(members(t, st, id(stocked)), []int64{leather}) {
			t.Fatal("initial membership")
		}
		notes := len(notifications(t, e, id(cheap)))

		// A price change brings the product in...
		setVariant(t, st, nanoPink, func(v *catalog.Variant) { v.Price = money("99.00") })
		reevaluate(nano)
		if got := members(t, st, id(cheap)); !slices.Equal(got, []int64{leather, nano}) || count(cheap) != 2 {
			t.Fatalf("after the price drop: %v, %v", got, count(cheap))
		}
		if !slices.Equal(members(t, st, id(apple)), []int64{touch, nano}) || count(apple) != 2 || count(stocked) != 1 {
			t.Fatal("unrelated collections changed")
		}
		l := e.Do("GET", fmt.Sprintf("%s.json?product_id=%d", base, nano), nil).Expect(t, 200).List(t, "smart_collections")
		if len(l) != 2 || id(l[0].(map[string]any)) != id(cheap) {
			t.Fatalf("product_id filter %v", l)
		}
		// ...running it again changes nothing...
		reevaluate(nano)
		if count(cheap) != 2 || len(members(t, st, id(cheap))) != 2 {
			t.Fatal("a second Reevaluate changed the membership")
		}
		// ...an inventory change of the other variant adds another...
		setVariant(t, st, nanoRed, func(v *catalog.Variant) { v.InventoryQuantity = 60 })
		reevaluate(nano)
		if !slices.Equal(members(t, st, id(stocked)), []int64{leather, nano}) || count(stocked) != 2 {
			t.Fatal("inventory")
		}
		// ...and the price going back takes it out.
		setVariant(t, st, nanoPink, func(v *catalog.Variant) { v.Price = money("199.00") })
		reevaluate(nano)
		if got := members(t, st, id(cheap)); !slices.Equal(got, []int64{leather}) || count(cheap) != 1 {
			t.Fatalf("after the price rise: %v", got)
		}
		// Membership changes fire no events and no webhooks.
		if v := verbs(collectionEvents(t, e, id(cheap))); v != "create" {
			t.Fatalf("events %s", v)
		}
		if n := len(notifications(t, e, id(cheap))); n != notes {
			t.Fatalf("notifications %d, were %d", n, notes)
		}
		// An unknown product is nothing to do.
		reevaluate(424242)

		ruleChangesRecompute(t, e, st, cheap)

		// Delete takes the memberships with it; the product's next
		// evaluation forgets the collection.
		e.Do("DELETE", path(apple), nil).Expect(t, 200)
		if got := members(t, st, id(apple)); len(got) != 0 {
			t.Fatalf("memberships outlive the collection: %v", got)
		}
		items, _, err := st.Query(ctx, store.Query{Index: store.GSI2, PK: smartcollections.ProductMembersIndex(touch)})
		if err != nil || len(items) != 0 {
			t.Fatalf("GSI2 memberships of touch: %d %v", len(items), err)
		}
		reevaluate(touch)
		reevaluate(nano)
		checkConsistent(t, e)
	}, group)
}

// ruleChangesRecompute: rule changes recompute the collection over every product; other changes leave its membership alone.
func ruleChangesRecompute(t *testing.T, e *apitest.Env, st store.Store, cheap map[string]any) {
	t.Helper()
	// Rule changes recompute the collection over every product.
	u := update(t, e, cheap, map[string]any{"rules": []any{rule("variant_price", "less_than", "300")}})
	if u["products_count"] != 3.0 || !slices.Equal(members(t, st, id(cheap)), []int64{touch, leather, nano}) {
		t.Fatalf("rules widened: %v", u["products_count"])
	}
	u = update(t, e, cheap, map[string]any{"rules": []any{rule("variant_price", "less_than", "300"), rule("vendor", "equals", "acme")}})
	if u["products_count"] != 1.0 || !slices.Equal(members(t, st, id(cheap)), []int64{leather}) {
		t.Fatalf("second rule: %v", u["products_count"])
	}
	u = update(t, e, cheap, map[string]any{"disjunctive": true})
	if u["products_count"] != 3.0 || u["disjunctive"] != true || len(u["rules"].([]any)) != 2 {
		t.Fatalf("disjunctive: %v", u)
	}
	// Other changes leave the membership alone.
	u = update(t, e, cheap, map[string]any{"title": "Cheapish"})
	if u["products_count"] != 3.0 || u["disjunctive"] != true {
		t.Fatalf("title change: %v", u)
	}
	u = update(t, e, cheap, map[string]any{"rules": []any{}})
	if u["products_count"] != 0.0 || len(members(t, st, id(cheap))) != 0 || len(u["rules"].([]any)) != 0 {
		t.Fatalf("rules cleared: %v", u)
	}
	if v := verbs(collectionEvents(t, e, id(cheap))); v != "create,update,update,update,update,update" {
		t.Fatalf("events %s", v)
	}
}

// checkConsistent verifies every collection against the rules: its
// membership items are exactly the matching products and its count is
// their number.
func checkConsistent(t testing.TB, e *apitest.Env) {
	t.Helper()
	ctx, st := context.Background(), e.Deps.Store
	var products []*catalog.Product
	items, _, err := st.Query(ctx, store.Query{PK: catalog.ProductPartition})
	if err != nil {
		t.Fatal(err)
	}
	for i := range items {
		p, err := catalog.DecodeProduct(&items[i])
		if err != nil {
			t.Fatal(err)
		}
		products = append(products, p)
	}
	cols, _, err := st.Query(ctx, store.Query{PK: smartcollections.Partition})
	if err != nil {
		t.Fatal(err)
	}
	for i := range cols {
		var c smartcollections.SmartCollection
		if err := records.Decode(&cols[i], &c); err != nil {
			t.Fatal(err)
		}
		want := []int64{}
		for _, p := range products {
			vs, err := catalog.ProductVariants(ctx, st, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			if smartcollections.Matches(c.Rules, c.Disjunctive, p, vs) {
				want = append(want, p.ID)
			}
		}
		slices.Sort(want)
		if got := members(t, st, c.ID); !slices.Equal(got, want) {
			t.Errorf("collection %q: members %v, want %v", c.Title, got, want)
		}
		if n := cols[i].Nums[smartcollections.CountNum]; n != int64(len(want)) {
			t.Errorf("collection %q: products_count %d, want %d", c.Title, n, len(want))
		}
	}
}

// Variant changes racing with each other and with rule changes leave every
// collection right once each change's Reevaluate has returned.
func TestConcurrentChanges(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		seedProducts(t, e)
		st := e.Deps.Store
		cols := []map[string]any{
			create(t, e, map[string]any{"title": "Cheap", "rules": []any{rule("variant_price", "less_than", "150")}}),
			create(t, e, map[string]any{"title": "Dear", "rules": []any{rule("variant_price", "greater_than", "150")}}),
			create(t, e, map[string]any{"title": "Stock", "rules": []any{rule("variant_inventory", "greater_than", "15")}}),
		}
		variantsOf := map[int64][]int64{nano: {nanoPink, nanoRed}, touch: {2001, 2002}, leather: {2003}}
		prices := []string{"10.00", "140.00", "160.00", "500.00"}
		var wg sync.WaitGroup
		errs := make(chan error, 100)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(g), 7))
				pids := []int64{nano, touch, leather}
				for range 4 {
					pid := pids[r.IntN(len(pids))]
					vid := variantsOf[pid][r.IntN(len(variantsOf[pid]))]
					price, stock := prices[r.IntN(len(prices))], int64(r.IntN(30))
					if err := retryVariant(st, vid, func(v *catalog.Variant) { v.Price, v.InventoryQuantity = money(price), stock }); err != nil {
						errs <- err
						return
					}
					if err := smartcollections.Reevaluate(context.Background(), st, e.Deps.IDs, e.Deps.Clock, pid); err != nil {
						errs <- err
						return
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, limit := range []string{"100", "200", "150"} {
				res := e.Do("PUT", path(cols[i%2]), map[string]any{"smart_collection": map[string]any{"rules": []any{rule("variant_price", "less_than", limit)}}})
				if res.Status != 200 {
					errs <- fmt.Errorf("PUT: %d %s", res.Status, res.Body)
					return
				}
			}
		}()
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		checkConsistent(t, e)
	}, group)
}

// retryVariant changes a variant under its version, retrying when another writer won.
func retryVariant(st store.Store, variantID int64, change func(v *catalog.Variant)) error {
	ctx := context.Background()
	for {
		it, err := st.Get(ctx, catalog.VariantKey(variantID))
		if err != nil {
			return err
		}
		v, err := catalog.DecodeVariant(&it)
		if err != nil {
			return err
		}
		change(&v)
		err = st.Transact(ctx, store.Put(v.Item(it.Version+1), store.IfVersion, it.Version))
		if !store.FailedOn(err, it.Key()) {
			return err
		}
	}
}

func TestFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := create(t, e, map[string]any{"title": "Sale"})
		create(t, e, map[string]any{"title": "Hidden", "published": false})
		b := create(t, e, map[string]any{"title": "Sale"})
		if b["handle"] != "sale-1" {
			t.Fatalf("handle %v", b["handle"])
		}
		list := func(q string) []any {
			t.Helper()
			return e.Do("GET", base+".json"+q, nil).Expect(t, 200).List(t, "smart_collections")
		}
		count := func(q string) float64 {
			t.Helper()
			return e.Do("GET", base+"/count.json"+q, nil).Expect(t, 200).JSON(t)["count"].(float64)
		}
		if n := len(list("?title=Sale")); n != 2 || count("?title=Sale") != 2 {
			t.Fatalf("title: %d", n)
		}
		if n := len(list("?published_status=unpublished")); n != 1 || count("?published_status=published") != 2 {
			t.Fatalf("published_status: %d", n)
		}
		e.Do("GET", base+".json?published_status=sometimes", nil).Expect(t, 400)
		if count("") != 3 || len(list("")) != 3 {
			t.Fatal("count")
		}
		// Retitling and unpublishing move a collection between the title
		// and state partitions and counters; putting it back restores them.
		one := fmt.Sprintf("%s/%d.json", base, int64(b["id"].(float64)))
		e.Do("PUT", one, map[string]any{"smart_collection": map[string]any{"title": "Hidden", "published": false}}).Expect(t, 200)
		if len(list("?title=Hidden&published_status=unpublished")) != 2 || count("?published_status=unpublished") != 2 || count("?title=Sale") != 1 {
			t.Fatalf("after a change: %v", list("?published_status=unpublished"))
		}
		e.Do("PUT", one, map[string]any{"smart_collection": map[string]any{"title": "Sale", "published": true}}).Expect(t, 200)
		if count("?published_status=published") != 2 || count("?title=Sale") != 2 {
			t.Fatal("after changing back")
		}
		updated, _ := time.Parse(time.RFC3339, a["updated_at"].(string))
		loc, _ := time.LoadLocation("America/New_York")
		hourBefore := url.QueryEscape(updated.In(loc).Add(-time.Hour).Format("2006-01-02 15:04"))
		hourAfter := url.QueryEscape(updated.In(loc).Add(time.Hour).Format("2006-01-02 15:04"))
		if n := len(list("?updated_at_min=" + hourBefore + "&updated_at_max=" + hourAfter)); n != 3 {
			t.Fatalf("updated_at range: %d", n)
		}
		if n := count("?updated_at_min=" + hourAfter); n != 0 {
			t.Fatalf("updated_at_min: %v", n)
		}
		if n := len(list("?published_at_max=" + hourAfter)); n != 2 {
			t.Fatalf("published_at_max: %d", n)
		}
		if n := count("?published_at_min=" + hourBefore); n != 2 {
			t.Fatalf("published_at_min: %v", n)
		}
		e.Do("GET", base+".json?updated_at_min=yesterday", nil).Expect(t, 400)
		if l := list("?fields=id,handle&limit=1&page=2"); len(l) != 1 || len(l[0].(map[string]any)) != 2 {
			t.Fatalf("fields/paging %v", l)
		}
		if l := list(fmt.Sprintf("?since_id=%d", id(a))); len(l) != 2 {
			t.Fatalf("since_id %v", l)
		}
		if l := list("?handle=sale-1"); len(l) != 1 || id(l[0].(map[string]any)) != id(b) || count("?handle=sale-1") != 1 {
			t.Fatalf("handle %v", l)
		}
		if l := list("?handle=sale-1&title=Other"); len(l) != 0 {
			t.Fatalf("handle and title %v", l)
		}
		e.Do("GET", base+".json?limit=251", nil).Expect(t, 400)
	}, group)
}

func pngOf(t testing.TB, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImages(t *testing.T) {
	wide := pngOf(t, 5, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/wide.png" {
			w.Header().Set("Content-Type", "image/png")
			w.Write(wide)
			return
		}
		w.Write([]byte("not an image"))
	}))
	defer srv.Close()
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		chunks := func(src string) int {
			t.Helper()
			var fileID int64
			fmt.Sscanf(src[strings.Index(src, "/files/")+len("/files/"):], "%d/", &fileID)
			n, err := e.Deps.Store.Count(t.Context(), store.Query{PK: images.FilePartition(fileID)})
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
		c := create(t, e, map[string]any{"title": "Pictured", "image": map[string]any{"attachment": base64.StdEncoding.EncodeToString(pngOf(t, 3, 2))}})
		img := c["image"].(map[string]any)
		src := img["src"].(string)
		if img["width"] != 3.0 || img["height"] != 2.0 || img["created_at"] == nil || !strings.HasPrefix(src, "https://demo-shop.example.com/files/") || chunks(src) != 1 {
			t.Fatalf("image %v", img)
		}
		if got := e.Do("GET", path(c), nil).Expect(t, 200).Object(t, "smart_collection")["image"]; fmt.Sprint(got) != fmt.Sprint(img) {
			t.Fatalf("get image %v", got)
		}
		if same := update(t, e, c, map[string]any{"image": img}); fmt.Sprint(same["image"]) != fmt.Sprint(img) {
			t.Fatalf("kept image %v", same["image"])
		}
		replaced := update(t, e, c, map[string]any{"image": map[string]any{"src": srv.URL + "/wide.png"}})
		if ri := replaced["image"].(map[string]any); ri["src"] != srv.URL+"/wide.png" || ri["width"] != 5.0 || chunks(src) != 0 {
			t.Fatalf("replaced %v", ri)
		}
		if removed := update(t, e, c, map[string]any{"image": nil}); removed["image"] != nil {
			t.Fatalf("removed %v", removed["image"])
		}
		res := e.Do("POST", base+".json", map[string]any{"smart_collection": map[string]any{"title": "Broken", "image": map[string]any{"src": srv.URL + "/text"}}}).Expect(t, 422)
		if _, ok := res.JSON(t)["errors"].(map[string]any)["image"]; !ok {
			t.Fatalf("got %s", res.Body)
		}
		d := create(t, e, map[string]any{"title": "Short lived", "image": map[string]any{"attachment": base64.StdEncoding.EncodeToString(wide)}})
		dsrc := d["image"].(map[string]any)["src"].(string)
		e.Do("DELETE", path(d), nil).Expect(t, 200)
		if chunks(dsrc) != 0 {
			t.Fatal("image chunks outlive the collection")
		}
	}, group)
}

// countingStore counts the reads that reach the store.
type countingStore struct {
	store.Store
	gets, queries, transacts atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, k)
}

func (c *countingStore) Query(ctx context.Context, q store.Query) ([]store.Item, string, error) {
	c.queries.Add(1)
	return c.Store.Query(ctx, q)
}

func (c *countingStore) Transact(ctx context.Context, ops ...store.Op) error {
	c.transacts.Add(1)
	return c.Store.Transact(ctx, ops...)
}

func (c *countingStore) reset() { c.gets.Store(0); c.queries.Store(0); c.transacts.Store(0) }

// GET of one collection, products_count included, is one GetItem (the
// router's token lookup goes to an uncounted store).
func TestGetIsOneRead(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		seedProducts(t, e)
		c := create(t, e, map[string]any{"title": "Apple", "rules": []any{rule("vendor", "equals", "apple")}})
		cs := &countingStore{Store: e.Deps.Store}
		d := *e.Deps
		d.Store = cs
		h := httpapi.NewRouter(auth.NewIdentity(e.Deps.Store, e.Deps.Clock), nil, e.Deps.Clock, smartcollections.Routes(&d))
		req := httptest.NewRequest("GET", path(c), nil)
		req.Header.Set(httpapi.TokenHeader, apitest.DemoToken)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"products_count":2`) {
			t.Fatalf("GET %d %s", rec.Code, rec.Body)
		}
		if g, q := cs.gets.Load(), cs.queries.Load(); g != 1 || q != 0 {
			t.Fatalf("GET read %d items and ran %d queries", g, q)
		}
		// Reevaluate reads the product's state, the product, its variants
		// and the rule sets, and commits one transaction.
		cs.reset()
		if err := smartcollections.Reevaluate(t.Context(), cs, e.Deps.IDs, e.Deps.Clock, leather); err != nil {
			t.Fatal(err)
		}
		if g, q, tx := cs.gets.Load(), cs.queries.Load(), cs.transacts.Load(); g != 2 || q != 2 || tx != 1 {
			t.Fatalf("Reevaluate: %d gets, %d queries, %d transactions", g, q, tx)
		}
	}, group)
}

// The benchmark fixture: 10,000 products with 2 variants each and 100
// smart collections on the embedded store, built once for every benchmark.
const (
	benchProducts    = 10_000
	benchCollections = 100
	benchProductBase = int64(10_000_000)
)

var bench struct {
	once sync.Once
	dir  string
	cs   *countingStore
	e    *apitest.Env
	get  string // path of a collection
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bench.dir != "" {
		if bench.cs != nil {
			bench.cs.Close()
		}
		os.RemoveAll(bench.dir)
	}
	os.Exit(code)
}

func benchFixture(b *testing.B) *apitest.Env {
	bench.once.Do(func() {
		start := time.Now()
		dir, err := os.MkdirTemp("", "smartcollections-bench-")
		if err != nil {
			bench.err = err
			return
		}
		bench.dir = dir
		st, err := boltstore.Open(dir)
		if err != nil {
			bench.err = err
			return
		}
		bench.cs = &countingStore{Store: st}
		bench.e = apitest.New(b, bench.cs, group)
		ps := make([]product, benchProducts)
		for i := range ps {
			pid := benchProductBase + int64(i)
			ps[i] = product{pid, fmt.Sprintf("Product %05d", i), fmt.Sprintf("Type %02d", i%20), fmt.Sprintf("Vendor %02d", i%50),
				fmt.Sprintf("t%03d, common", i%200), []catalog.Variant{
					variant(2*pid, "Small", fmt.Sprintf("%d.99", i%500), int64(i%100), 0.5, ""),
					variant(2*pid+1, "Large", fmt.Sprintf("%d.99", i%500+50), int64(i%100), 1.5, fmt.Sprintf("%d.00", i%500+100)),
				}}
		}
		putProducts(b, st, ps...)
		for j := range benchCollections {
			var rules []any
			switch j % 4 {
			case 0:
				rules = []any{rule("vendor", "equals", fmt.Sprintf("Vendor %02d", j%50))}
			case 1:
				rules = []any{rule("tag", "equals", fmt.Sprintf("t%03d", j))}
			case 2:
				rules = []any{rule("type", "equals", fmt.Sprintf("Type %02d", j%20)), rule("variant_price", "less_than", fmt.Sprint(100+j))}
			case 3:
				rules = []any{rule("title", "starts_with", fmt.Sprintf("Product 0%02d", j))}
			}
			c := create(b, bench.e, map[string]any{"title": fmt.Sprintf("Collection %03d", j), "rules": rules})
			if j == 0 {
				bench.get = path(c)
			}
		}
		b.Logf("fixture: %d products, %d variants, %d smart collections in %v", benchProducts, 2*benchProducts, benchCollections, time.Since(start).Round(time.Millisecond))
	})
	if bench.err != nil {
		b.Fatal(bench.err)
	}
	bench.e.T = b
	return bench.e
}

func BenchmarkGetWithProductsCount(b *testing.B) {
	e := benchFixture(b)
	req := httptest.NewRequest("GET", bench.get, nil)
	req.Header.Set(httpapi.TokenHeader, apitest.DemoToken)
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), `"products_count":200`) {
		b.Fatalf("GET %s: %d %.300s", bench.get, rec.Code, rec.Body)
	}
	bench.cs.reset()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		rec := httptest.NewRecorder()
		e.Handler.ServeHTTP(rec, req)
		if rec.Code != 200 {
			b.Fatalf("GET %s: %d", bench.get, rec.Code)
		}
	}
	b.StopTimer()
	// One GetItem for the collection, one for the caller's token.
	b.ReportMetric(float64(bench.cs.gets.Load())/float64(b.N), "gets/op")
	b.ReportMetric(float64(bench.cs.queries.Load())/float64(b.N), "queries/op")
}

// BenchmarkReevaluateOneProduct times Reevaluate after a variant's price
// moved across the threshold of a collection (so each run changes a
// membership), the variant write itself untimed.
func BenchmarkReevaluateOneProduct(b *testing.B) {
	benchFixture(b)
	ctx := context.Background()
	// Product 62 is of Type 02; collection 2 (Type 02, variant_price less_than
	// 102) holds it while its Small variant (62.99; Large is 112.99) costs less.
	const i = 62
	pid := benchProductBase + i
	small := 2 * pid
	prices := []string{"62.99", "162.99"}
	gen := ids.New()
	var gets, queries, txs int64
	b.ReportAllocs()
	b.ResetTimer()
	for n := range b.N {
		b.StopTimer()
		setVariant(b, bench.cs.Store, small, func(v *catalog.Variant) { v.Price = money(prices[(n+1)%2]) })
		bench.cs.reset()
		b.StartTimer()
		if err := smartcollections.Reevaluate(ctx, bench.cs, gen, clock.System{}, pid); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		gets, queries, txs = gets+bench.cs.gets.Load(), queries+bench.cs.queries.Load(), txs+bench.cs.transacts.Load()
		b.StartTimer()
	}
	b.StopTimer()
	b.ReportMetric(float64(gets)/float64(b.N), "gets/op")
	b.ReportMetric(float64(queries)/float64(b.N), "queries/op")
	b.ReportMetric(float64(txs)/float64(b.N), "transactions/op")
	checkCollection(b, pid)
}

// checkCollection verifies the benchmark product's memberships against the rules.
func checkCollection(b *testing.B, pid int64) {
	ctx := context.Background()
	p, err := catalog.GetProduct(ctx, bench.cs.Store, pid)
	if err != nil {
		b.Fatal(err)
	}
	vs, err := catalog.ProductVariants(ctx, bench.cs.Store, pid)
	if err != nil {
		b.Fatal(err)
	}
	cols, _, err := bench.cs.Store.Query(ctx, store.Query{PK: smartcollections.Partition})
	if err != nil {
		b.Fatal(err)
	}
	for i := range cols {
		var c smartcollections.SmartCollection
		records.Decode(&cols[i], &c)
		_, err := bench.cs.Store.Get(ctx, smartcollections.MemberKey(c.ID, pid))
		if member := err == nil; member != smartcollections.Matches(c.Rules, c.Disjunctive, p, vs) {
			b.Fatalf("collection %q: member %v", c.Title, member)
		}
	}
}

// Every filter, alone and combined, answers what filtering the whole list
// would after updates and deletes; counts agree, and each reads only its
// matches (a combination, what its most selective index yields).
// created_at is ignored: smart collections show none.
func TestFiltersAgreeWithTheWholeList(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		var made []map[string]any
		for i := range 8 {
			if i == 4 {
				clk.Advance(time.Second)
			}
			made = append(made, create(t, e, map[string]any{"title": []string{"Sale", "New"}[i%2], "published": i%3 != 0}))
		}
		clk.Advance(time.Second)
		update(t, e, made[0], map[string]any{"title": "New", "published": true})
		update(t, e, made[5], map[string]any{"published": false})
		e.Do("DELETE", path(made[2]), nil).Expect(t, 200)

		whole := e.Do("GET", base+".json?limit=250", nil).Expect(t, 200).List(t, "smart_collections")
		if len(whole) != 7 {
			t.Fatalf("%d collections, want 7", len(whole))
		}
		titled := func(title string) func(map[string]any) bool {
			return func(r map[string]any) bool { return r["title"] == title }
		}
		published := func(r map[string]any) bool { return r["published_at"] != nil }
		all := func(map[string]any) bool { return true }
		filters := []apitest.Filter{
			{Query: "", Keep: all},
			{Query: "title=New", Keep: titled("New")},
			{Query: "published_status=published", Keep: published},
			{Query: "created_at_min=2999-01-01", Keep: all}, // ignored
			{Query: "title=Sale&updated_at_min=2000-01-01", Source: titled("Sale"), Keep: titled("Sale")},
			{Query: "published_status=unpublished&updated_at_min=2000-01-01", Source: all, Keep: func(r map[string]any) bool { return !published(r) }},
			{Query: "published_at_min=2000-01-01&published_status=unpublished", Source: published, Keep: func(map[string]any) bool { return false }},
		}
		for _, field := range []string{"updated_at", "published_at"} {
			filters = append(filters, apitest.RangeFilters(t, field, whole)...)
		}
		apitest.CheckFilters(t, e, apitest.FilterCheck{List: base + ".json", Count: base + "/count.json", Key: "smart_collections"}, whole, filters)
	}, group)
}

// PUT order (Shopify's SmartCollection.order): sort_order, and for a
// manual order products[] first in their order, the other members after.
func TestOrder(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		seedProducts(t, e)
		c := create(t, e, map[string]any{"title": "Everything", "disjunctive": true,
			"rules": []any{rule("vendor", "equals", "Apple"), rule("vendor", "equals", "Acme")}})
		order := func(query string, want int) *apitest.Response {
			t.Helper()
			return e.Do("PUT", fmt.Sprintf("%s/%d/order.json?%s", base, id(c), query), nil).Expect(t, want)
		}
		positions := func() map[int64]int64 {
			ms, _, err := smartcollections.Members(context.Background(), e.Deps.Store, id(c), 0, records.Window{Limit: 250})
			if err != nil {
				t.Fatal(err)
			}
			out := map[int64]int64{}
			for _, m := range ms {
				out[m.ProductID] = m.Position
			}
			return out
		}
		if got := strings.TrimSpace(string(order("sort_order=alpha-desc", 200).Body)); got != "{}" {
			t.Fatalf("answer %s", got)
		}
		if got := e.Do("GET", path(c), nil).Expect(t, 200).Object(t, "smart_collection")["sort_order"]; got != "alpha-desc" {
			t.Fatalf("sort_order %v", got)
		}
		wantError := func(res *apitest.Response, field string) {
			t.Helper()
			if !strings.Contains(string(res.Body), `"`+field+`"`) {
				t.Fatalf("%s: %s", field, res.Body)
			}
		}
		wantError(order(fmt.Sprintf("products[]=%d", leather), 422), "products")
		wantError(order("sort_order=random", 422), "sort_order")
		wantError(order(fmt.Sprintf("sort_order=manual&products[]=%d&products[]=%d", leather, leather), 422), "products")
		wantError(order("sort_order=manual&products[]=123456", 422), "products")
		wantError(order("sort_order=manual&products[]=x", 400), "products[]")
		order(fmt.Sprintf("sort_order=manual&products[]=%d&products[]=%d", leather, nano), 200)
		if got := positions(); got[leather] != 1 || got[nano] != 2 || got[touch] != 3 {
			t.Fatalf("positions %v", got)
		}
		order(fmt.Sprintf("products[]=%d", touch), 200) // manual already
		if got := positions(); got[touch] != 1 || got[leather] != 2 || got[nano] != 3 {
			t.Fatalf("positions %v", got)
		}
		if got := e.Do("GET", path(c), nil).Expect(t, 200).Object(t, "smart_collection")["sort_order"]; got != "manual" {
			t.Fatalf("sort_order %v", got)
		}
		e.Do("PUT", base+"/99999999/order.json?sort_order=manual", nil).Expect(t, 404)
		// Every path form.
		e.Do("PUT", fmt.Sprintf("/admin/api/2024-10/smart_collections/%d/order.json?sort_order=created", id(c)), nil).Expect(t, 200)
		e.Do("PUT", fmt.Sprintf("/admin/smart_collections/%d/order.json?sort_order=manual", id(c)), nil).Expect(t, 200)
	}, api.Collections)
}
