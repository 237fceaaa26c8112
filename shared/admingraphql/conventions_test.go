package admingraphql_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/ratelimit"
)

// Paging over 251 redirects, forward with after and back with last and
// before, in id order or reversed; first: 251 is refused.
func TestPaging(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var want []string
		for i := range 251 {
			r := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": fmt.Sprintf("/p%03d", i), "target": "/t"}}).Expect(t, 201).Object(t, "redirect")
			want = append(want, fmt.Sprintf("gid://shopify/UrlRedirect/%.0f", r["id"]))
		}
		const q = `query($after: String, $before: String, $first: Int, $last: Int, $rev: Boolean) {
			urlRedirects(first: $first, after: $after, last: $last, before: $before, reverse: $rev) {
				edges { cursor node { id } } pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }`
		walk := func(vars map[string]any, next func(info map[string]any) (map[string]any, bool)) []string {
			var got []string
			for range 10 {
				ans := gql(t, e, apitest.DemoToken, q, vars)
				conn := dig(ans, "data", "urlRedirects")
				if conn == nil {
					t.Fatalf("%v: %v", vars, ans)
				}
				for _, edge := range conn.(map[string]any)["edges"].([]any) {
					got = append(got, dig(edge, "node", "id").(string))
				}
				var more bool
				if vars, more = next(dig(conn, "pageInfo").(map[string]any)); !more {
					return got
				}
			}
			t.Fatal("more than 10 pages")
			return nil
		}
		forward := walk(map[string]any{"first": 100}, func(info map[string]any) (map[string]any, bool) {
			return map[string]any{"first": 100, "after": info["endCursor"]}, info["hasNextPage"] == true
		})
		if strings.Join(forward, ",") != strings.Join(want, ",") {
			t.Errorf("forward: %d redirects, want %d in id order", len(forward), len(want))
		}
		back := walk(map[string]any{"last": 100}, func(info map[string]any) (map[string]any, bool) {
			return map[string]any{"last": 100, "before": info["startCursor"]}, info["hasPreviousPage"] == true
		})
		if len(back) != 251 || back[0] != want[151] || back[100] != want[51] || back[200] != want[0] {
			t.Errorf("backward: %d redirects, first page starting %v", len(back), back[:1])
		}
		reversed := walk(map[string]any{"first": 250, "rev": true}, func(info map[string]any) (map[string]any, bool) {
			return map[string]any{"first": 250, "after": info["endCursor"], "rev": true}, info["hasNextPage"] == true
		})
		if len(reversed) != 251 || reversed[0] != want[250] || reversed[250] != want[0] {
			t.Errorf("reversed: %d, starting %v", len(reversed), reversed[:1])
		}
		ans := gql(t, e, apitest.DemoToken, `{ urlRedirects(first: 251) { nodes { id } } }`, nil)
		if dig(ans, "data") != nil || !strings.Contains(fmt.Sprint(dig(ans, "errors", 0, "message")), "between 0 and 250") {
			t.Errorf("first: 251 answered %v", ans)
		}
		ans = gql(t, e, apitest.DemoToken, `{ urlRedirects { nodes { id } } }`, nil)
		if dig(ans, "errors", 0, "message") != "you must provide one of first or last" {
			t.Errorf("no page size: %v", ans)
		}
		if n := dig(gql(t, e, apitest.DemoToken, `{ urlRedirectsCount { count precision } }`, nil), "data", "urlRedirectsCount", "count"); n != 251.0 {
			t.Errorf("count %v", n)
		}
	}, groups...)
}

// A small bucket: a query costing more than is left is THROTTLED with the
// figures a client waits by; the service's clock refills it; a query above
// the single query maximum is MAX_COST_EXCEEDED; a query is charged what
// it used, not what it asked.
func TestThrottling(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		e.Change(func(d *platform.Deps) {
			d.Points = &ratelimit.MemoryPoints{Now: clk.Now, Plan: ratelimit.PointsPlan{Max: 60, Rate: 10}}
		})
		const q = `{ pages(first: 50) { nodes { title } } }` // 52 asked; the demo shop has no page
		ans := gql(t, e, apitest.DemoToken, q, nil)
		cost := dig(ans, "extensions", "cost")
		if dig(cost, "requestedQueryCost") != 52.0 || dig(cost, "actualQueryCost") != 2.0 || dig(cost, "throttleStatus", "currentlyAvailable") != 58.0 ||
			dig(cost, "throttleStatus", "maximumAvailable") != 60.0 || dig(cost, "throttleStatus", "restoreRate") != 10.0 {
			t.Fatalf("cost %v", cost)
		}
		gql(t, e, apitest.DemoToken, `mutation { pageCreate(page: {title: "a"}) { page { id } } }`, nil) // 10
		ans = gql(t, e, apitest.DemoToken, q, nil)
		if dig(ans, "errors", 0, "extensions", "code") != "THROTTLED" || dig(ans, "errors", 0, "message") != "Throttled" || dig(ans, "data") != nil ||
			dig(ans, "extensions", "cost", "requestedQueryCost") != 52.0 || dig(ans, "extensions", "cost", "throttleStatus", "currentlyAvailable") != 48.0 {
			t.Fatalf("throttled: %v", ans)
		}
		clk.Advance(time.Second)
		if ans := gql(t, e, apitest.DemoToken, q, nil); dig(ans, "errors") != nil {
			t.Errorf("a second later: %v", ans)
		}
		ans = gql(t, e, apitest.DemoToken, `{ a: pages(first: 250) { nodes { title } } b: pages(first: 250) { nodes { title } } c: pages(first: 250) { nodes { title } } d: pages(first: 250) { nodes { title } } }`, nil)
		if dig(ans, "errors", 0, "extensions", "code") != "MAX_COST_EXCEEDED" ||
			dig(ans, "errors", 0, "message") != "Query cost is 1,008, which exceeds the single query max cost limit (1000)." {
			t.Errorf("too costly: %v", ans)
		}
	}, groups...)
}

// A field whose scope the app lacks is ACCESS_DENIED, naming the access,
// and the fields it may read still resolve; a bad token is 401 with
// errors as a string, as REST answers it.
func TestAccessDenied(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		e.SetApp(4242, "script-only-token-0123456789", "read_script_tags")
		ans := gql(t, e, "script-only-token-0123456789", `{ shop { name } pagesCount { count } scriptTags(first: 1) { nodes { src } } }`, nil)
		err := dig(ans, "errors", 0)
		if dig(err, "extensions", "code") != "ACCESS_DENIED" || !strings.Contains(dig(err, "message").(string), "`read_content`") ||
			fmt.Sprint(dig(err, "path")) != "[pagesCount]" || dig(ans, "data", "shop", "name") != "Demo Shop" || dig(ans, "data", "scriptTags") == nil {
			t.Errorf("partial answer %v", ans)
		}
		res := e.DoWith(http.Header{"X-Shopify-Access-Token": {"nope"}}, "POST", "/admin/api/2026-07/graphql.json", map[string]any{"query": "{ shop { name } }"}).Expect(t, 401)
		var m map[string]any
		if json.Unmarshal(res.Body, &m); fmt.Sprintf("%T", m["errors"]) != "string" {
			t.Errorf("401 body %s", res.Body)
		}
	}, groups...)
}

// A bare application/graphql body, a syntax error with its location, an
// unknown field, node and nodes, and introspection.
func TestRequestsAndIntrospection(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		res := e.DoWith(http.Header{"X-Shopify-Access-Token": {apitest.DemoToken}, "Content-Type": {"application/graphql"}}, "POST",
			"/admin/api/2026-07/graphql.json", `{ shop { myshopifyDomain } }`).Expect(t, 200)
		if !strings.Contains(string(res.Body), `"myshopifyDomain":"demo-shop.example.com"`) {
			t.Errorf("raw query: %s", res.Body)
		}
		for _, body := range []string{`null`, `[]`, `{}`, `{"query": ""}`, `{"query": 5}`, `{"query": "{ shop { name } }", "variables": 1}`,
			`{"query": "{ shop\u0001 { name } }"}`, `{"query": "{ shop { name } }", "operationName": "a\nb"}`} {
			e.DoWith(http.Header{"X-Shopify-Access-Token": {apitest.DemoToken}, "Content-Type": {"application/json"}}, "POST",
				"/admin/api/2026-07/graphql.json", body).Expect(t, 400)
		}
		ans := gql(t, e, apitest.DemoToken, `{ shop { name `, nil)
		if dig(ans, "data") != nil || dig(ans, "errors", 0, "locations", 0, "line") != 1.0 {
			t.Errorf("syntax error: %v", ans)
		}
		ans = gql(t, e, apitest.DemoToken, `{ orders(first: 1) { nodes { id } } }`, nil)
		if !strings.Contains(fmt.Sprint(dig(ans, "errors", 0, "message")), `Cannot query field "orders"`) {
			t.Errorf("outside the subset: %v", ans)
		}
		r := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": "/n", "target": "/t"}}).Expect(t, 201).Object(t, "redirect")
		gid := fmt.Sprintf("gid://shopify/UrlRedirect/%.0f", r["id"])
		ans = gql(t, e, apitest.DemoToken, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename id ... on UrlRedirect { path } } }`,
			map[string]any{"ids": []string{gid, "gid://shopify/UrlRedirect/999999999"}})
		if dig(ans, "data", "nodes", 0, "path") != "/n" || dig(ans, "data", "nodes", 0, "__typename") != "UrlRedirect" || dig(ans, "data", "nodes", 1) != nil {
			t.Errorf("nodes: %v", ans)
		}
		ans = gql(t, e, apitest.DemoToken, `{ __schema { queryType { name } mutationType { name } } __type(name: "Page") { fields { name type { kind ofType { name } } } } }`, nil)
		if dig(ans, "data", "__schema", "queryType", "name") != "QueryRoot" || dig(ans, "data", "__type", "fields") == nil {
			t.Errorf("introspection: %v", ans)
		}
	}, groups...)
}

// An ID argument given as a number literal is an ID, as GraphQL coerces
// it: refused as no global id (never a 500).
func TestIDLiteralsAreIDs(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, q := range []string{`{ node(id: 5) { id } }`, `{ event(id: 5) { id } }`, `{ page(id: 5) { id } }`,
			`mutation { metafieldsSet(metafields: [{ownerId: 5, namespace: "custom", key: "kk1", value: "v", type: "single_line_text_field"}]) { userErrors { message } } }`} {
			ans := gql(t, e, apitest.DemoToken, q, nil)
			if msg := fmt.Sprint(dig(ans, "errors", 0, "message")); !strings.Contains(msg, "Invalid global id") {
				t.Errorf("%s: %v", q, ans)
			}
		}
		ans := gql(t, e, apitest.DemoToken, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": 5})
		if msg := fmt.Sprint(dig(ans, "errors", 0, "message")); !strings.Contains(msg, "Invalid global id '5'") {
			t.Errorf("a number variable: %v", ans)
		}
	}, groups...)
}
