package admingraphql_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
)

var groups = []api.Group{api.GraphQL, api.Pages, api.Redirects, api.Webhooks, api.Events, api.ScriptTags, api.Collections, api.Blogs, api.Variants, api.Metafields}

// gql posts a query with variables as Shopify's clients do, at a versioned
// path, and returns the decoded answer.
func gql(t *testing.T, e *apitest.Env, token, query string, vars map[string]any) map[string]any {
	t.Helper()
	body := map[string]any{"query": query}
	if vars != nil {
		body["variables"] = vars
	}
	res := e.DoWith(http.Header{"X-Shopify-Access-Token": {token}, "Content-Type": {"application/json"}}, "POST", "/admin/api/2026-07/graphql.json", body)
	res.Expect(t, 200)
	var m map[string]any
	if err := json.Unmarshal(res.Body, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// A page made by a mutation is read by REST, and one made by REST is read
// by GraphQL; the mutation's validation is REST's, as user errors.
func TestPagesBothWays(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ans := gql(t, e, apitest.DemoToken, `mutation($p: PageCreateInput!) { pageCreate(page: $p) { page { id title handle body isPublished } userErrors { field message code } } }`,
			map[string]any{"p": map[string]any{"title": "Hello GraphQL", "body": "<p>Hi</p>"}})
		page := dig(ans, "data", "pageCreate", "page")
		gid, _ := dig(page, "id").(string)
		if !strings.HasPrefix(gid, "gid://shopify/Page/") || dig(page, "handle") != "hello-graphql" || dig(page, "isPublished") != true {
			t.Fatalf("pageCreate: %v", ans)
		}
		id := strings.TrimPrefix(gid, "gid://shopify/Page/")
		rest := e.Do("GET", "/web/pages/"+id+".json", nil).Expect(t, 200).Object(t, "page")
		if rest["title"] != "Hello GraphQL" || rest["body_html"] != "<p>Hi</p>" {
			t.Errorf("REST reads %v", rest)
		}

		bad := gql(t, e, apitest.DemoToken, `mutation { pageCreate(page: {title: ""}) { page { id } userErrors { field message code } } }`, nil)
		if ue := dig(bad, "data", "pageCreate", "userErrors", 0); dig(ue, "code") != "BLANK" || fmt.Sprint(dig(ue, "field")) != "[page title]" ||
			dig(bad, "data", "pageCreate", "page") != nil {
			t.Errorf("blank title: %v", bad)
		}

		made := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "From REST"}}).Expect(t, 201).Object(t, "page")
		got := gql(t, e, apitest.DemoToken, `query($id: ID!) { page(id: $id) { title } }`, map[string]any{"id": fmt.Sprintf("gid://shopify/Page/%.0f", made["id"])})
		if dig(got, "data", "page", "title") != "From REST" {
			t.Errorf("page: %v", got)
		}
		cost := dig(got, "extensions", "cost")
		if dig(cost, "requestedQueryCost") != 1.0 || dig(cost, "actualQueryCost") != 1.0 || dig(cost, "throttleStatus") == nil {
			t.Errorf("cost %v", cost)
		}
	}, groups...)
}

// Custom and smart collections are one Collection type: a ruleSet makes a
// smart one, which REST serves as such; lists and counts hold both kinds
// in id order; a bad rule is REST's message as a user error.
func TestCollectionsBothKinds(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		smart := gql(t, e, apitest.DemoToken, `mutation { collectionCreate(input: {title: "Apple things", ruleSet: {appliedDisjunctively: false, rules: [{column: VENDOR, relation: EQUALS, condition: "Apple"}]}}) {
			collection { id ruleSet { appliedDisjunctively rules { column relation condition } } productsCount { count } } userErrors { field message } } }`, nil)
		c := dig(smart, "data", "collectionCreate", "collection")
		if dig(c, "ruleSet", "rules", 0, "column") != "VENDOR" || dig(c, "ruleSet", "rules", 0, "condition") != "Apple" {
			t.Fatalf("smart collectionCreate: %v", smart)
		}
		id := strings.TrimPrefix(dig(c, "id").(string), "gid://shopify/Collection/")
		if r := e.Do("GET", "/com/smart_collections/"+id+".json", nil).Expect(t, 200).Object(t, "smart_collection"); r["title"] != "Apple things" {
			t.Errorf("REST reads %v", r)
		}
		gql(t, e, apitest.DemoToken, `mutation { collectionCreate(input: {title: "Hand picked"}) { collection { id } } }`, nil)
		all := gql(t, e, apitest.DemoToken, `{ collections(first: 250) { nodes { id title ruleSet { appliedDisjunctively } } } collectionsCount { count } }`, nil)
		nodes := dig(all, "data", "collections", "nodes").([]any)
		if n := dig(all, "data", "collectionsCount", "count"); n != float64(len(nodes)) || len(nodes) < 2 {
			t.Errorf("%d collections listed, count %v", len(nodes), n)
		}
		num := func(n any) int64 {
			id, _ := strconv.ParseInt(strings.TrimPrefix(dig(n, "id").(string), "gid://shopify/Collection/"), 10, 64)
			return id
		}
		for i := 1; i < len(nodes); i++ {
			if num(nodes[i-1]) >= num(nodes[i]) {
				t.Errorf("not in id order: %v", nodes)
			}
		}
		bad := gql(t, e, apitest.DemoToken, `mutation { collectionCreate(input: {title: "x", ruleSet: {appliedDisjunctively: false, rules: [{column: VARIANT_PRICE, relation: STARTS_WITH, condition: "1"}]}}) { collection { id } userErrors { field message } } }`, nil)
		if dig(bad, "data", "collectionCreate", "collection") != nil || dig(bad, "data", "collectionCreate", "userErrors", 0, "message") == nil {
			t.Errorf("bad rule: %v", bad)
		}
		del := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { collectionDelete(input: {id: $id}) { deletedCollectionId shop { name } } }`, map[string]any{"id": dig(c, "id")})
		if dig(del, "data", "collectionDelete", "deletedCollectionId") != dig(c, "id") {
			t.Errorf("collectionDelete: %v", del)
		}
		e.Do("GET", "/com/smart_collections/"+id+".json", nil).Expect(t, 404)
	}, groups...)
}
