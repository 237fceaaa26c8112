package admingraphql_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
)

var groups = []api.Group{api.GraphQL, api.Pages, api.Redirects, api.Webhooks, api.Events, api.ScriptTags}

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
