package webhooks_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

var group = api.Group{Name: "webhooks", Routes: webhooks.Routes}

// App ids of the demo seed's tokens.
const demoApp, otherApp = 1001, 1002

func body(fields map[string]any) map[string]any { return map[string]any{"webhook": fields} }

func create(t *testing.T, e *apitest.Env, token, topic, address string) map[string]any {
	t.Helper()
	return e.DoAs(token, "POST", "/admin/webhooks.json", body(map[string]any{"topic": topic, "address": address})).
		Expect(t, http.StatusCreated).Object(t, "webhook")
}

func idOf(w map[string]any) int64 { return int64(w["id"].(float64)) }

func path(w map[string]any) string { return fmt.Sprintf("/admin/webhooks/%d.json", idOf(w)) }

func ids(t *testing.T, list []any) []int64 {
	t.Helper()
	out := make([]int64, len(list))
	for i, v := range list {
		out[i] = idOf(v.(map[string]any))
	}
	return out
}

func count(t *testing.T, e *apitest.Env, token, query string) int {
	t.Helper()
	return int(e.DoAs(token, "GET", "/admin/webhooks/count.json"+query, nil).Expect(t, 200).JSON(t)["count"].(float64))
}

func list(t *testing.T, e *apitest.Env, query string) []any {
	t.Helper()
	return e.Do("GET", "/admin/webhooks.json"+query, nil).Expect(t, 200).List(t, "webhooks")
}

func TestCreateAndGet(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("defaults, shape and timestamps in the shop's zone", func(t *testing.T) {
			res := e.Do("POST", "/admin/webhooks.json", body(map[string]any{"topic": "orders/create", "address": "https://example.com/hooks/orders"})).Expect(t, 201)
			w := res.Object(t, "webhook")
			if w["topic"] != "orders/create" || w["address"] != "https://example.com/hooks/orders" || w["format"] != "json" {
				t.Fatalf("got %v", w)
			}
			if strings.Contains(string(res.Body), "app_id") {
				t.Fatalf("the owning app leaks into the response: %s", res.Body)
			}
			for _, k := range []string{"fields", "metafield_namespaces"} {
				if l, ok := w[k].([]any); !ok || len(l) != 0 {
					t.Fatalf("%s = %#v, want []", k, w[k])
				}
			}
			want := []string{"address", "created_at", "fields", "format", "id", "metafield_namespaces", "topic", "updated_at"}
			var keys []string
			for k := range w {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if fmt.Sprint(keys) != fmt.Sprint(want) {
				t.Fatalf("keys %v, want %v", keys, want)
			}
			created, err := time.Parse(time.RFC3339, w["created_at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			if _, off := created.Zone(); off != -4*3600 && off != -5*3600 {
				t.Fatalf("created_at %s not in the shop's zone", w["created_at"])
			}
			if w["created_at"] != w["updated_at"] {
				t.Fatalf("updated_at %v != created_at %v", w["updated_at"], w["created_at"])
			}
			got := e.Do("GET", path(w), nil).Expect(t, 200).Object(t, "webhook")
			if fmt.Sprint(got) != fmt.Sprint(w) {
				t.Fatalf("get %v, created %v", got, w)
			}
		})
		t.Run("all fields", func(t *testing.T) {
			w := e.Do("POST", "/admin/webhooks.json", body(map[string]any{
				"topic": "products/update", "address": "http://example.com:8080/p?x=1", "format": "xml",
				"fields": []string{"id", " title "}, "metafield_namespaces": []string{"global"},
			})).Expect(t, 201).Object(t, "webhook")
			if w["format"] != "xml" || fmt.Sprint(w["fields"]) != "[id title]" || fmt.Sprint(w["metafield_namespaces"]) != "[global]" {
				t.Fatalf("got %v", w)
			}
			got := e.Do("GET", path(w)+"?fields=id,format", nil).Expect(t, 200).Object(t, "webhook")
			if len(got) != 2 || got["format"] != "xml" || idOf(got) != idOf(w) {
				t.Fatalf("fields: %v", got)
			}
		})
		t.Run("unknown ids", func(t *testing.T) {
			e.Do("GET", "/admin/webhooks/12345.json", nil).Expect(t, 404)
			e.Do("GET", "/admin/webhooks/abc.json", nil).Expect(t, 404)
			e.Do("PUT", "/admin/webhooks/12345.json", body(map[string]any{"address": "https://example.com/"})).Expect(t, 404)
			e.Do("DELETE", "/admin/webhooks/12345.json", nil).Expect(t, 404)
		})
		t.Run("missing wrapper", func(t *testing.T) {
			e.Do("POST", "/admin/webhooks.json", map[string]any{"topic": "orders/create"}).Expect(t, 400)
		})
	}, group)
}

func TestValidation(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ok := func(m map[string]any) map[string]any {
			out := map[string]any{"topic": "orders/create", "address": "https://example.com/h"}
			for k, v := range m {
				out[k] = v
			}
			return out
		}
		many := make([]string, 51)
		for i := range many {
			many[i] = fmt.Sprint("f", i)
		}
		invalid := `{"errors":{"address":["is invalid"]}}`
		cases := []struct {
			in   map[string]any
			want string
		}{
			{map[string]any{}, `{"errors":{"address":["can't be blank"],"topic":["can't be blank"]}}`},
			{ok(map[string]any{"topic": "  "}), `{"errors":{"topic":["can't be blank"]}}`},
			{ok(map[string]any{"topic": nil}), `{"errors":{"topic":["must be a string"]}}`}, // null is refused as the document refuses it
			{ok(map[string]any{"topic": "x"}), `{"errors":{"topic":["` + webhooks.InvalidTopicMessage("x") + `"]}}`},
			{ok(map[string]any{"address": ""}), `{"errors":{"address":["can't be blank"]}}`},
			{ok(map[string]any{"address": "ftp://example.com/h"}), invalid},
			{ok(map[string]any{"address": "example.com/h"}), invalid},
			{ok(map[string]any{"address": "/hooks"}), invalid},
			{ok(map[string]any{"address": "https://"}), invalid},
			{ok(map[string]any{"address": "https:///path"}), invalid},
			{ok(map[string]any{"address": "mailto:me@example.com"}), invalid},
			{ok(map[string]any{"address": "https://exa mple.com/"}), invalid},
			{ok(map[string]any{"address": "https://example.com/" + strings.Repeat("a", 1000)}), `{"errors":{"address":["is too long (maximum is 990 characters)"]}}`},
			{ok(map[string]any{"format": "yaml"}), `{"errors":{"format":["is not included in the list"]}}`},
			{ok(map[string]any{"format": ""}), `{"errors":{"format":["is not included in the list"]}}`},
			{ok(map[string]any{"fields": []string{"id", ""}}), `{"errors":{"fields":["can't contain blank values"]}}`},
			{ok(map[string]any{"fields": many}), `{"errors":{"fields":["is too long (maximum is 50 items)"]}}`},
			{ok(map[string]any{"fields": "id"}), `{"errors":{"fields":["must be an array"]}}`},
			{ok(map[string]any{"fields": []any{1}}), `{"errors":{"fields":["must be a string"]}}`},
			{ok(map[string]any{"metafield_namespaces": []string{" "}}), `{"errors":{"metafield_namespaces":["can't contain blank values"]}}`},
			{ok(map[string]any{"metafield_namespaces": []string{strings.Repeat("n", 256)}}), `{"errors":{"metafield_namespaces":["contains a value that is too long (maximum is 255 characters)"]}}`},
			{ok(map[string]any{"metafield_namespaces": many}), `{"errors":{"metafield_namespaces":["is too long (maximum is 50 items)"]}}`},
		}
		for _, c := range cases {
			res := e.Do("POST", "/admin/webhooks.json", body(c.in)).Expect(t, 422)
			if strings.TrimSpace(string(res.Body)) != c.want {
				t.Errorf("%v:\n got %s\nwant %s", c.in, res.Body, c.want)
			}
		}
		if n := count(t, e, apitest.DemoToken, ""); n != 0 {
			t.Fatalf("rejected creates stored %d webhooks", n)
		}
		msg := webhooks.InvalidTopicMessage("orders/nope")
		if !strings.HasPrefix(msg, "Invalid topic specified: orders/nope. Topics allowed: orders/create, orders/delete,") || !strings.HasSuffix(msg, "app/uninstalled") {
			t.Fatalf("message %q", msg)
		}
		// Every webhook topic (schema WebhookTopic) is accepted, on http and
		// https.
		for i, topic := range webhooks.Topics {
			scheme := []string{"http", "https"}[i%2]
			create(t, e, apitest.DemoToken, topic, scheme+"://example.com/all")
		}
		if n := count(t, e, apitest.DemoToken, ""); n != len(webhooks.Topics) || n != 34 {
			t.Fatalf("count %d after creating every topic", n)
		}
		if webhooks.ValidTopic("orders/nope") || !webhooks.ValidTopic("app/uninstalled") {
			t.Fatal("ValidTopic")
		}
	}, group)
}

func TestUniqueTopicAndAddress(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const taken = `{"errors":{"address":["for this topic has already been taken"]}}`
		a := create(t, e, apitest.DemoToken, "orders/create", "https://example.com/a")
		res := e.Do("POST", "/admin/webhooks.json", body(map[string]any{"topic": "orders/create", "address": " https://example.com/a "})).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != taken {
			t.Fatalf("duplicate: %s", res.Body)
		}
		create(t, e, apitest.DemoToken, "orders/paid", "https://example.com/a")
		b := create(t, e, apitest.DemoToken, "orders/create", "https://example.com/b")
		// Moving b onto a's topic and address is refused; b is unchanged.
		res = e.Do("PUT", path(b), body(map[string]any{"address": "https://example.com/a"})).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != taken {
			t.Fatalf("update onto a taken pair: %s", res.Body)
		}
		if got := e.Do("GET", path(b), nil).Expect(t, 200).Object(t, "webhook"); got["address"] != "https://example.com/b" {
			t.Fatalf("a refused update changed the webhook: %v", got)
		}
		// Moving a away frees its pair; the pair it moved to is taken.
		e.Do("PUT", path(a), body(map[string]any{"topic": "orders/updated", "address": "https://example.com/c"})).Expect(t, 200)
		create(t, e, apitest.DemoToken, "orders/create", "https://example.com/a")
		e.Do("POST", "/admin/webhooks.json", body(map[string]any{"topic": "orders/updated", "address": "https://example.com/c"})).Expect(t, 422)
		// Deleting b frees its pair.
		e.Do("DELETE", path(b), nil).Expect(t, 200)
		create(t, e, apitest.DemoToken, "orders/create", "https://example.com/b")
		// Another app may subscribe the same address to the same topic.
		e.SetApp(ordersApp, ordersToken, "read_orders")
		create(t, e, ordersToken, "orders/create", "https://example.com/a")
	}, group)
}

// Concurrent creates of one topic and address by one app: exactly one wins.
func TestUniqueUnderConcurrency(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 24
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- e.Do("POST", "/admin/webhooks.json", body(map[string]any{"topic": "carts/create", "address": "https://example.com/contested"})).Status
			}()
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for s := range statuses {
			got[s]++
		}
		if got[201] != 1 || got[422] != n-1 {
			t.Fatalf("statuses %v, want one 201 and %d 422", got, n-1)
		}
		if c := count(t, e, apitest.DemoToken, ""); c != 1 {
			t.Fatalf("count %d", c)
		}
	}, group)
}

func TestUpdate(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		w := create(t, e, apitest.DemoToken, "orders/create", "https://example.com/old")
		clk.Advance(time.Second) // timestamps have second precision
		up := e.Do("PUT", path(w), body(map[string]any{
			"id": idOf(w), "address": "https://example.com/new", "topic": "orders/paid", "format": "xml",
			"fields": []string{"id", "total_price"}, "metafield_namespaces": []string{"ns"},
		})).Expect(t, 200).Object(t, "webhook")
		if up["address"] != "https://example.com/new" || up["topic"] != "orders/paid" || up["format"] != "xml" ||
			fmt.Sprint(up["fields"]) != "[id total_price]" || fmt.Sprint(up["metafield_namespaces"]) != "[ns]" {
			t.Fatalf("update: %v", up)
		}
		if up["updated_at"] == w["updated_at"] || up["created_at"] != w["created_at"] || idOf(up) != idOf(w) {
			t.Fatalf("timestamps: before %v after %v", w, up)
		}
		// Absent fields stay; an empty list clears.
		up2 := e.Do("PUT", path(w), body(map[string]any{"fields": []string{}})).Expect(t, 200).Object(t, "webhook")
		if up2["address"] != "https://example.com/new" || up2["format"] != "xml" || fmt.Sprint(up2["fields"]) != "[]" || fmt.Sprint(up2["metafield_namespaces"]) != "[ns]" {
			t.Fatalf("partial update: %v", up2)
		}
		for _, bad := range []map[string]any{
			{"address": "ftp://example.com/"}, {"address": ""}, {"topic": "orders/nope"}, {"topic": ""}, {"format": "yaml"}, {"fields": []string{""}},
		} {
			e.Do("PUT", path(w), body(bad)).Expect(t, 422)
		}
		got := e.Do("GET", path(w), nil).Expect(t, 200).Object(t, "webhook")
		if fmt.Sprint(got) != fmt.Sprint(up2) {
			t.Fatalf("rejected updates changed the webhook: %v, want %v", got, up2)
		}
		// The address and topic indexes follow the update.
		if l := list(t, e, "?address="+url.QueryEscape("https://example.com/old")); len(l) != 0 {
			t.Fatalf("old address still listed: %v", l)
		}
		if l := list(t, e, "?address="+url.QueryEscape("https://example.com/new")+"&topic=orders/paid"); len(l) != 1 {
			t.Fatalf("new address and topic: %v", l)
		}
		subs, err := webhooks.Subscribers(context.Background(), e.Deps.Store, "orders/create")
		if err != nil || len(subs) != 0 {
			t.Fatalf("old topic subscribers %v %v", subs, err)
		}
		if subs, _ := webhooks.Subscribers(context.Background(), e.Deps.Store, "orders/paid"); len(subs) != 1 || subs[0].ID != idOf(w) {
			t.Fatalf("new topic subscribers %v", subs)
		}
	}, group)
}

func TestDelete(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		w := create(t, e, apitest.DemoToken, "shop/update", "https://example.com/shop")
		keep := create(t, e, apitest.DemoToken, "shop/update", "https://example.com/keep")
		res := e.Do("DELETE", path(w), nil).Expect(t, 200)
		if strings.TrimSpace(string(res.Body)) != "{}" {
			t.Fatalf("delete body %s", res.Body)
		}
		e.Do("GET", path(w), nil).Expect(t, 404)
		e.Do("DELETE", path(w), nil).Expect(t, 404)
		if c := count(t, e, apitest.DemoToken, ""); c != 1 {
			t.Fatalf("count %d", c)
		}
		if l := list(t, e, ""); len(l) != 1 || idOf(l[0].(map[string]any)) != idOf(keep) {
			t.Fatalf("list %v", l)
		}
	}, group)
}

func TestListAndCountFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := create(t, e, apitest.DemoToken, "orders/create", "https://example.com/a")
		b := create(t, e, apitest.DemoToken, "orders/paid", "https://example.com/a")
		c := create(t, e, apitest.DemoToken, "orders/create", "https://example.com/b")
		d := create(t, e, apitest.DemoToken, "products/create", "https://example.com/c")
		f := create(t, e, apitest.DemoToken, "products/update", "https://example.com/c")
		all := []int64{idOf(a), idOf(b), idOf(c), idOf(d), idOf(f)}
		addrA := "?address=" + url.QueryEscape("https://example.com/a")

		check := func(query string, want ...int64) {
			t.Helper()
			if got := ids(t, list(t, e, query)); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("list %s: got %v, want %v", query, got, want)
			}
		}
		check("", all...)
		check(addrA, idOf(a), idOf(b))
		check("?topic=orders/create", idOf(a), idOf(c))
		check(addrA+"&topic=orders/create", idOf(a))
		check("?topic=orders/nope")
		check("?address=" + url.QueryEscape("https://example.com/none"))
		check(fmt.Sprintf("?since_id=%d", idOf(b)), all[2:]...)
		check(fmt.Sprintf("?since_id=%d&topic=orders/create", idOf(a)), idOf(c))
		check("?limit=2", all[:2]...)
		check("?limit=2&page=2", all[2:4]...)
		check("?limit=2&page=3", all[4:]...)
		check("?limit=250", all...)
		check("?limit=1&page=2&topic=orders/create", idOf(c))
		for _, q := range []string{"?limit=0", "?limit=251", "?limit=x", "?page=0", "?since_id=-1", "?created_at_min=yesterday", "?updated_at_max=2024-13-01%2010:00"} {
			e.Do("GET", "/admin/webhooks.json"+q, nil).Expect(t, 400)
		}
		res := e.Do("GET", "/admin/webhooks.json?limit=251", nil).Expect(t, 400)
		if strings.TrimSpace(string(res.Body)) != `{"errors":{"limit":["must be an integer between 1 and 250"]}}` {
			t.Fatalf("limit 400 body %s", res.Body)
		}

		// Dates as YYYY-MM-DD HH:MM in the shop's zone (America/New_York).
		ny, err := time.LoadLocation("America/New_York")
		if err != nil {
			t.Fatal(err)
		}
		created, _ := time.Parse(time.RFC3339, a["created_at"].(string))
		local := func(d time.Duration) string { return url.QueryEscape(created.Add(d).In(ny).Format("2006-01-02 15:04")) }
		before, after := local(-2*time.Minute), local(2*time.Minute)
		check("?created_at_min="+before, all...)
		check("?created_at_min=" + after)
		check("?created_at_max="+after, all...)
		check("?created_at_max=" + before)
		check("?updated_at_min="+before, all...)
		check("?updated_at_max=" + before)
		check("?updated_at_min="+before+"&updated_at_max="+after+"&topic=products/update", idOf(f))
		check("?created_at_min="+before+"&created_at_max="+after+"&"+addrA[1:], idOf(a), idOf(b))

		// fields restricts every item.
		for _, it := range list(t, e, "?fields=id,topic") {
			if m := it.(map[string]any); len(m) != 2 || m["topic"] == nil {
				t.Fatalf("fields: %v", m)
			}
		}

		for q, want := range map[string]int{
			"":                                 5,
			addrA:                              2,
			"?topic=orders/create":             2,
			addrA + "&topic=orders/paid":       1,
			"?topic=app/uninstalled":           0,
			"?topic=orders/nope":               0,
			"?address=https%3A%2F%2Fnone.test": 0,
			"?created_at_min=" + after:         0,
		} {
			if got := count(t, e, apitest.DemoToken, q); got != want {
				t.Errorf("count %q = %d, want %d", q, got, want)
			}
		}
	}, group)
}

// Webhooks belong to their app: another app neither sees nor changes them,
// and needs no scope to manage its own.
func TestAppScoping(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		mine := create(t, e, apitest.DemoToken, "orders/create", "https://example.com/mine")
		other := apitest.ReadOnlyToken
		e.DoAs(other, "GET", path(mine), nil).Expect(t, 404)
		e.DoAs(other, "PUT", path(mine), body(map[string]any{"address": "https://evil.example.com/"})).Expect(t, 404)
		e.DoAs(other, "DELETE", path(mine), nil).Expect(t, 404)
		if l := e.DoAs(other, "GET", "/admin/webhooks.json", nil).Expect(t, 200).List(t, "webhooks"); len(l) != 0 {
			t.Fatalf("another app's list shows %v", l)
		}
		if l := e.DoAs(other, "GET", "/admin/webhooks.json?address="+url.QueryEscape("https://example.com/mine"), nil).Expect(t, 200).List(t, "webhooks"); len(l) != 0 {
			t.Fatalf("another app's address filter shows %v", l)
		}
		if c := count(t, e, other, ""); c != 0 {
			t.Fatalf("another app's count %d", c)
		}
		// The read-only app needs no webhook scope for a topic that carries
		// nothing it may not read.
		theirs := create(t, e, other, "shop/update", "https://example.com/mine")
		e.DoAs(other, "PUT", path(theirs), body(map[string]any{"format": "xml"})).Expect(t, 200)
		e.Do("GET", path(theirs), nil).Expect(t, 404)
		if got := e.Do("GET", path(mine), nil).Expect(t, 200).Object(t, "webhook"); got["address"] != "https://example.com/mine" {
			t.Fatalf("mine changed: %v", got)
		}
		if c := count(t, e, other, ""); c != 1 {
			t.Fatalf("other count %d", c)
		}
		if l := list(t, e, ""); len(l) != 1 || idOf(l[0].(map[string]any)) != idOf(mine) {
			t.Fatalf("demo list %v", l)
		}
		e.DoAs(other, "DELETE", path(theirs), nil).Expect(t, 200)
		e.Do("GET", path(mine), nil).Expect(t, 200)

		ctx := context.Background()
		w, err := webhooks.Lookup(ctx, e.Deps.Store, demoApp, idOf(mine))
		if err != nil || w.AppID != demoApp || w.Address != "https://example.com/mine" || w.Fields == nil {
			t.Fatalf("Lookup: %+v %v", w, err)
		}
		if _, err := webhooks.Lookup(ctx, e.Deps.Store, otherApp, idOf(mine)); admin.ErrorCode(err) != admin.ENOTFOUND {
			t.Fatalf("Lookup by another app: %v", err)
		}
		e.DoAs("", "GET", "/admin/webhooks.json", nil).Expect(t, 401)
	}, group)
}

func TestSubscribers(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		e.SetApp(ordersApp, ordersToken, "read_orders")
		a := create(t, e, apitest.DemoToken, "orders/paid", "https://one.example.com/paid")
		b := create(t, e, ordersToken, "orders/paid", "https://two.example.com/paid")
		c := create(t, e, apitest.DemoToken, "orders/paid", "https://one.example.com/paid2")
		create(t, e, apitest.DemoToken, "orders/create", "https://one.example.com/paid")
		e.Do("PUT", path(c), body(map[string]any{"format": "xml", "fields": []string{"id"}})).Expect(t, 200)

		subs, err := webhooks.Subscribers(context.Background(), e.Deps.Store, "orders/paid")
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]webhooks.Webhook{}
		for _, s := range subs {
			got[s.ID] = s
		}
		if len(subs) != 3 || len(got) != 3 {
			t.Fatalf("subscribers %+v", subs)
		}
		if got[idOf(a)].AppID != demoApp || got[idOf(b)].AppID != ordersApp || got[idOf(c)].AppID != demoApp {
			t.Fatalf("app ids %+v", subs)
		}
		if s := got[idOf(c)]; s.Format != "xml" || fmt.Sprint(s.Fields) != "[id]" || s.Address != "https://one.example.com/paid2" || s.Topic != "orders/paid" {
			t.Fatalf("subscriber %+v", s)
		}
		if s := got[idOf(b)]; s.Fields == nil || s.MetafieldNamespaces == nil || s.CreatedAt.IsZero() {
			t.Fatalf("subscriber %+v", s)
		}
		if subs, err := webhooks.Subscribers(context.Background(), e.Deps.Store, "refunds/create"); err != nil || len(subs) != 0 {
			t.Fatalf("no subscribers: %v %v", subs, err)
		}
		if webhooks.TopicPartition("orders/paid") != "webhook#topic#orders/paid" {
			t.Fatal("TopicPartition")
		}
	}, group)
}

func TestDeleteAllOfApp(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 60 // more than one transaction's worth
		for i := range n {
			create(t, e, apitest.DemoToken, webhooks.Topics[i%len(webhooks.Topics)], fmt.Sprintf("https://example.com/hook/%d", i))
		}
		theirs := create(t, e, apitest.ReadOnlyToken, "shop/update", "https://example.com/hook/0")
		ctx := context.Background()
		if err := webhooks.DeleteAllOfApp(ctx, e.Deps.Store, demoApp); err != nil {
			t.Fatal(err)
		}
		if l := list(t, e, ""); len(l) != 0 {
			t.Fatalf("%d webhooks left", len(l))
		}
		if c := count(t, e, apitest.DemoToken, ""); c != 0 {
			t.Fatalf("count %d", c)
		}
		// The change feed removed their entries and counted them down:
		// the count shards stay, at zero (the count above).
		for _, pk := range []string{webhooks.Partition(demoApp), "webhook#guard#1001", webhooks.Partition(demoApp) + "#by:updated_at", webhooks.Partition(demoApp) + "#topic=shop/update"} {
			if items, _, err := e.Deps.Store.Query(ctx, store.Query{PK: pk}); err != nil || len(items) != 0 {
				t.Fatalf("%s: %d items left (%v)", pk, len(items), err)
			}
		}
		subs, err := webhooks.Subscribers(ctx, e.Deps.Store, "shop/update")
		if err != nil || len(subs) != 1 || subs[0].ID != idOf(theirs) {
			t.Fatalf("subscribers after uninstall %+v %v", subs, err)
		}
		e.DoAs(apitest.ReadOnlyToken, "GET", path(theirs), nil).Expect(t, 200)
		if c := count(t, e, apitest.ReadOnlyToken, ""); c != 1 {
			t.Fatalf("other app's count %d", c)
		}
		// The guards went too: the same pairs may be created again, and the
		// counter starts over.
		create(t, e, apitest.DemoToken, webhooks.Topics[0], "https://example.com/hook/0")
		if c := count(t, e, apitest.DemoToken, ""); c != 1 {
			t.Fatalf("count after re-create %d", c)
		}
		// An app without webhooks: nothing to do.
		if err := webhooks.DeleteAllOfApp(ctx, e.Deps.Store, 4242); err != nil {
			t.Fatal(err)
		}
	}, group)
}

func text(s string) *string { return &s }

// The rules of a webhook, without HTTP or a store: validation fails before
// anything is read or written.
func TestWebhookRules(t *testing.T) {
	s := webhooks.Service{Outbound: outbound.New(false), Clock: clock.System{}}
	ctx := admin.WithApp(t.Context(), &admin.App{ID: demoApp, Scopes: []string{"read_orders"}})
	topic, addr := text("orders/create"), text("https://example.com/hooks")
	long := strings.Repeat("a", 256)
	many := make([]string, 51)
	for i := range many {
		many[i] = "f"
	}
	for _, c := range []struct {
		name string
		in   webhooks.Input
		want string
	}{
		{"topic and address required", webhooks.Input{}, `invalid address=["can't be blank"] topic=["can't be blank"]`},
		{"unknown topic", webhooks.Input{Topic: text("orders/eaten"), Address: addr}, `invalid topic=["` + webhooks.InvalidTopicMessage("orders/eaten") + `"]`},
		{"address not http", webhooks.Input{Topic: topic, Address: text("ftp://example.com/x")}, `invalid address=["is invalid"]`},
		{"address too long", webhooks.Input{Topic: topic, Address: text("https://example.com/" + strings.Repeat("a", 990))}, `invalid address=["is too long (maximum is 990 characters)"]`},
		{"private address refused", webhooks.Input{Topic: topic, Address: text("http://127.0.0.1/hooks")}, `invalid address=["` + outbound.MsgRefused + `"]`},
		{"format in the list", webhooks.Input{Topic: topic, Address: addr, Format: text("yaml")}, `invalid format=["is not included in the list"]`},
		{"fields: blank, too long, too many", webhooks.Input{Topic: topic, Address: addr, Fields: &[]string{" ", long}, MetafieldNamespaces: &many},
			`invalid fields=["can't contain blank values" "contains a value that is too long (maximum is 255 characters)"] metafield_namespaces=["is too long (maximum is 50 items)"]`},
	} {
		_, err := s.Create(ctx, &c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
	// A topic the app may not read is refused before the other fields.
	bare := admin.WithApp(t.Context(), &admin.App{ID: demoApp, Scopes: []string{"read_content"}})
	_, err := s.Create(bare, &webhooks.Input{Topic: topic, Address: text("ftp://example.com/x")})
	if e, ok := err.(*admin.Error); !ok || e.Code != admin.EFORBIDDEN || e.Message != "[API] This action requires merchant approval for read_orders scope." {
		t.Errorf("a topic without its scope: %v", err)
	}
}

// Every filter, alone and combined, answers what filtering the whole list
// would, after updates that move webhooks between topics and deletes;
// counts agree, and each reads only its matches (a topic's count is O(1)).
// Uninstalling the app leaves none of its entries behind.
func TestFiltersAgreeWithTheWholeList(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		topics := []string{"orders/create", "orders/paid", "products/update"}
		var made []map[string]any
		for i := range 12 {
			if i == 6 {
				clk.Advance(time.Second) // two seconds of created_at at least, for the range edges
			}
			made = append(made, create(t, e, apitest.DemoToken, topics[i%3], fmt.Sprintf("https://example.com/hook/%d", i%4)))
		}
		e.SetApp(ordersApp, ordersToken, "read_orders")
		create(t, e, ordersToken, topics[0], "https://example.com/hook/0") // another app's
		clk.Advance(time.Second)
		e.Do("PUT", path(made[0]), body(map[string]any{"topic": "orders/cancelled"})).Expect(t, 200)
		e.Do("PUT", path(made[7]), body(map[string]any{"address": "https://example.com/hook/9"})).Expect(t, 200)
		e.Do("DELETE", path(made[5]), nil).Expect(t, 200)

		whole := list(t, e, "?limit=250")
		if len(whole) != 11 {
			t.Fatalf("%d webhooks, want 11", len(whole))
		}
		third := idOf(whole[2].(map[string]any))
		is := func(field, value string) func(map[string]any) bool {
			return func(r map[string]any) bool { return r[field] == value }
		}
		filters := []apitest.Filter{
			{Query: "", Keep: func(map[string]any) bool { return true }},
			{Query: "topic=" + url.QueryEscape(topics[1]), Keep: is("topic", topics[1])},
			{Query: "topic=" + url.QueryEscape("orders/cancelled"), Keep: is("topic", "orders/cancelled")},
			{Query: "address=" + url.QueryEscape("https://example.com/hook/1"), Keep: is("address", "https://example.com/hook/1")},
			{Query: "address=" + url.QueryEscape("https://example.com/hook/0") + "&topic=" + url.QueryEscape(topics[0]), Source: is("address", "https://example.com/hook/0"),
				Keep: func(r map[string]any) bool {
					return r["address"] == "https://example.com/hook/0" && r["topic"] == topics[0]
				}},
			{Query: fmt.Sprintf("topic=%s&since_id=%d", url.QueryEscape(topics[2]), third), NoCount: true, Keep: func(r map[string]any) bool {
				return r["topic"] == topics[2] && idOf(r) > third
			}},
			{Query: "topic=" + url.QueryEscape("orders/cancelled") + "&updated_at_min=" + url.QueryEscape(made[11]["updated_at"].(string)), Source: is("topic", "orders/cancelled"),
				Keep: func(r map[string]any) bool {
					return r["topic"] == "orders/cancelled" && r["created_at"] != r["updated_at"]
				}},
		}
		for _, field := range []string{"created_at", "updated_at"} {
			filters = append(filters, apitest.RangeFilters(t, field, whole)...)
		}
		apitest.CheckFilters(t, e, apitest.FilterCheck{List: "/admin/webhooks.json", Count: "/admin/webhooks/count.json", Key: "webhooks"}, whole, filters)

		if err := webhooks.DeleteAllOfApp(context.Background(), e.Deps.Store, demoApp); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"", "?updated_at_min=2000-01-01", "?topic=" + url.QueryEscape(topics[1])} {
			if l := list(t, e, q); len(l) != 0 {
				t.Errorf("after uninstall, %s lists %v", q, l)
			}
			if n := count(t, e, apitest.DemoToken, q); n != 0 {
				t.Errorf("after uninstall, %s counts %d", q, n)
			}
		}
	}, group)
}

// An app with read_orders only (besides the demo seed's two).
const ordersApp, ordersToken = 1003, "orders-reader-token-0123456789abcdef"

// topicScope is the read scope each topic group needs (docs/spec-gaps.md).
var topicScope = map[string]string{
	"orders": "read_orders", "order_transactions": "read_orders", "refunds": "read_orders",
	"carts": "read_orders", "checkouts": "read_orders", "disputes": "read_orders",
	"fulfillments": "read_fulfillments",
	"products":     "read_products", "collections": "read_products",
	"customers": "read_customers", "customer_groups": "read_customers",
	"shop": "", "app": "",
}

// A webhook delivers what its topic carries, so subscribing needs the read
// scope of it: without, create and update are the router's 403 for a
// missing scope, and nothing is written; write_ implies read_.
func TestTopicsNeedTheirReadScope(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		e.SetApp(ordersApp, ordersToken, "read_orders")
		// One topic of each group (TestTopicScope checks every topic's scope).
		groups := map[string]bool{}
		for _, topic := range webhooks.Topics {
			group, _, _ := strings.Cut(topic, "/")
			if groups[group] {
				continue
			}
			groups[group] = true
			scope := topicScope[group]
			res := e.DoAs(apitest.ReadOnlyToken, "POST", "/admin/webhooks.json", body(map[string]any{"topic": topic, "address": "https://example.com/" + topic}))
			if scope == "" {
				res.Expect(t, http.StatusCreated)
				continue
			}
			res.Expect(t, http.StatusForbidden)
			want := `{"errors":"[API] This action requires merchant approval for ` + scope + ` scope."}`
			if got := strings.TrimSpace(string(res.Body)); got != want {
				t.Fatalf("%s: %s, want %s", topic, got, want)
			}
		}
		// write_ implies read_; read_orders opens the order topics only.
		for _, topic := range []string{"orders/create", "fulfillments/create", "products/update", "customers/update"} {
			create(t, e, apitest.DemoToken, topic, "https://example.com/hook")
		}
		create(t, e, ordersToken, "orders/create", "https://example.com/hook")
		create(t, e, ordersToken, "refunds/create", "https://example.com/hook")
		e.DoAs(ordersToken, "POST", "/admin/webhooks.json", body(map[string]any{"topic": "collections/create", "address": "https://example.com/hook"})).Expect(t, http.StatusForbidden)
		if c := count(t, e, apitest.ReadOnlyToken, ""); c != 2 { // shop/update, app/uninstalled
			t.Fatalf("the read-only app has %d webhooks, want 2", c)
		}
		// Update: moving a webhook to a topic the app may not read, or
		// changing one whose topic it may not read, is refused too.
		mine := create(t, e, apitest.ReadOnlyToken, "shop/update", "https://example.com/moved")
		e.DoAs(apitest.ReadOnlyToken, "PUT", path(mine), body(map[string]any{"topic": "products/update"})).Expect(t, http.StatusForbidden)
		e.DoAs(apitest.ReadOnlyToken, "PUT", path(mine), body(map[string]any{"topic": "customers/update", "format": "yaml"})).Expect(t, http.StatusForbidden)
		if got := e.DoAs(apitest.ReadOnlyToken, "GET", path(mine), nil).Expect(t, 200).Object(t, "webhook"); got["topic"] != "shop/update" {
			t.Fatalf("a refused update changed the webhook: %v", got)
		}
		orders := create(t, e, ordersToken, "orders/paid", "https://example.com/paid")
		e.SetApp(ordersApp, ordersToken, "read_content") // the scope is taken away
		e.DoAs(ordersToken, "PUT", path(orders), body(map[string]any{"format": "xml"})).Expect(t, http.StatusForbidden)
		e.DoAs(ordersToken, "PUT", path(orders), body(map[string]any{"topic": "app/uninstalled"})).Expect(t, 200)
		e.DoAs(ordersToken, "GET", path(orders), nil).Expect(t, 200)
		// An invalid topic is still the 422 naming it.
		e.DoAs(apitest.ReadOnlyToken, "POST", "/admin/webhooks.json", body(map[string]any{"topic": "orders/eaten", "address": "https://example.com/x"})).Expect(t, 422)
	}, group)
}

// Every topic needs exactly the scope of the resource it carries.
func TestTopicScope(t *testing.T) {
	for _, topic := range webhooks.Topics {
		group, _, _ := strings.Cut(topic, "/")
		want, known := topicScope[group]
		got := webhooks.TopicScope(topic)
		if !known || (want == "" && got != admin.ScopeNone) || (want != "" && "read_"+string(got) != want) {
			t.Errorf("%s needs %q, want %q", topic, got, want)
		}
	}
}

// A webhook's topic and updated_at entries and its app's counts are the
// change feed's (webhooks.Derive): a request commits the stamped webhook,
// its guard and its topic's subscription tick (a delete its tomb), and
// what it changed is listed and counted by topic and time before it
// answers, with concurrent writers too; the dispatcher's removal (no
// request's) is counted down as well.
func TestEntriesAndCountsFollowTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		const n = 6
		made := make([]map[string]any, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := e.Do("POST", "/admin/webhooks.json", body(map[string]any{"topic": "orders/create", "address": fmt.Sprintf("https://example.com/feed/%d", i)}))
				if r.Status == http.StatusCreated {
					made[i] = r.JSON(t)["webhook"].(map[string]any)
				}
			})
		}
		wg.Wait()
		byTopic := func(topic string) string { return "?topic=" + url.QueryEscape(topic) }
		if c, l := count(t, e, apitest.DemoToken, byTopic("orders/create")), list(t, e, byTopic("orders/create")); c != n || len(l) != n {
			t.Fatalf("orders/create: count %d, list %d, want %d", c, len(l), n)
		}
		clk.Advance(time.Hour)
		later := "?updated_at_min=" + url.QueryEscape(clk.Now().Add(-time.Minute).Format(time.RFC3339))
		for _, w := range made[:2] {
			wg.Go(func() { e.Do("PUT", path(w), body(map[string]any{"topic": "orders/paid"})) })
		}
		wg.Wait()
		if c, l := count(t, e, apitest.DemoToken, byTopic("orders/paid")), list(t, e, byTopic("orders/paid")); c != 2 || len(l) != 2 {
			t.Fatalf("orders/paid after 2 moves: count %d, list %d", c, len(l))
		}
		if c, all := count(t, e, apitest.DemoToken, byTopic("orders/create")), count(t, e, apitest.DemoToken, ""); c != n-2 || all != n {
			t.Fatalf("after 2 moves: orders/create %d, all %d", c, all)
		}
		if l := list(t, e, later); len(l) != 2 {
			t.Fatalf("updated_at_min lists %d, want the 2 moved", len(l))
		}
		e.Do("DELETE", path(made[0]), nil).Expect(t, 200)
		e.Do("DELETE", path(made[0]), nil).Expect(t, 404)
		if err := webhooks.Remove(context.Background(), e.Deps.Store, demoApp, idOf(made[2])); err != nil {
			t.Fatal(err)
		}
		if c, p, all, l := count(t, e, apitest.DemoToken, byTopic("orders/create")), count(t, e, apitest.DemoToken, byTopic("orders/paid")),
			count(t, e, apitest.DemoToken, ""), list(t, e, later); c != n-3 || p != 1 || all != n-2 || len(l) != 1 {
			t.Fatalf("after two removals: orders/create %d, orders/paid %d, all %d, updated %d", c, p, all, len(l))
		}
	}, group)
}
