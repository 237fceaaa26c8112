package admingraphql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
)

// metafieldsSet creates and then updates a page's and the shop's
// metafields, REST reads them, the owners' metafield fields read them, a
// stale compareDigest is refused, and metafieldsDelete removes one.
func TestMetafieldsBothWays(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		page := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "With fields"}}).Expect(t, 201).Object(t, "page")
		owner := fmt.Sprintf("gid://shopify/Page/%.0f", page["id"])
		const set = `mutation($m: [MetafieldsSetInput!]!) { metafieldsSet(metafields: $m) { metafields { id key value type compareDigest ownerType } userErrors { field message code elementIndex } } }`
		ans := gql(t, e, apitest.DemoToken, set, map[string]any{"m": []any{
			map[string]any{"ownerId": owner, "namespace": "custom", "key": "subtitle", "type": "single_line_text_field", "value": "Hello"},
			map[string]any{"ownerId": "gid://shopify/Shop/1", "namespace": "custom", "key": "motto", "type": "single_line_text_field", "value": "Sun"}}})
		got := dig(ans, "data", "metafieldsSet", "metafields")
		if dig(got, 0, "value") != "Hello" || dig(got, 0, "ownerType") != "PAGE" || dig(got, 1, "value") != "Sun" {
			t.Fatalf("metafieldsSet: %v", ans)
		}
		rest := e.Do("GET", fmt.Sprintf("/web/pages/%.0f/metafields.json", page["id"]), nil).Expect(t, 200).List(t, "metafields")
		if len(rest) != 1 || rest[0].(map[string]any)["value"] != "Hello" {
			t.Errorf("REST reads %v", rest)
		}
		digest := dig(got, 0, "compareDigest")
		upd := gql(t, e, apitest.DemoToken, set, map[string]any{"m": []any{
			map[string]any{"ownerId": owner, "namespace": "custom", "key": "subtitle", "value": "Hi", "compareDigest": digest}}})
		if dig(upd, "data", "metafieldsSet", "metafields", 0, "value") != "Hi" || dig(upd, "data", "metafieldsSet", "metafields", 0, "id") != dig(got, 0, "id") {
			t.Errorf("update: %v", upd)
		}
		stale := gql(t, e, apitest.DemoToken, set, map[string]any{"m": []any{
			map[string]any{"ownerId": owner, "namespace": "custom", "key": "subtitle", "value": "Yo", "compareDigest": digest}}})
		if dig(stale, "data", "metafieldsSet", "userErrors", 0, "code") != "INVALID_COMPARE_DIGEST" || dig(stale, "data", "metafieldsSet", "userErrors", 0, "elementIndex") != 0.0 {
			t.Errorf("a stale digest: %v", stale)
		}
		read := gql(t, e, apitest.DemoToken, `query($id: ID!) { page(id: $id) { title metafield(namespace: "custom", key: "subtitle") { value } metafields(first: 5) { nodes { key } } } shop { metafield(namespace: "custom", key: "motto") { value } } }`,
			map[string]any{"id": owner})
		if dig(read, "data", "page", "metafield", "value") != "Hi" || dig(read, "data", "page", "metafields", "nodes", 0, "key") != "subtitle" ||
			dig(read, "data", "shop", "metafield", "value") != "Sun" || dig(read, "data", "page", "title") != "With fields" {
			t.Errorf("owners read %v", read)
		}
		del := gql(t, e, apitest.DemoToken, `mutation($m: [MetafieldIdentifierInput!]!) { metafieldsDelete(metafields: $m) { deletedMetafields { key } userErrors { message } } }`,
			map[string]any{"m": []any{map[string]any{"ownerId": owner, "namespace": "custom", "key": "subtitle"},
				map[string]any{"ownerId": owner, "namespace": "custom", "key": "nothing"}}})
		if dig(del, "data", "metafieldsDelete", "deletedMetafields", 0, "key") != "subtitle" || dig(del, "data", "metafieldsDelete", "deletedMetafields", 1) != nil {
			t.Errorf("metafieldsDelete: %v", del)
		}
		if n := e.Do("GET", fmt.Sprintf("/web/pages/%.0f/metafields.json", page["id"]), nil).Expect(t, 200).List(t, "metafields"); len(n) != 0 {
			t.Errorf("left %v", n)
		}
		bad := gql(t, e, apitest.DemoToken, set, map[string]any{"m": []any{map[string]any{"ownerId": owner, "namespace": "custom", "key": "n", "type": "number_integer", "value": "x"}}})
		if ue := dig(bad, "data", "metafieldsSet", "userErrors", 0); ue == nil || !strings.HasPrefix(fmt.Sprint(dig(ue, "field")), "[metafields 0") {
			t.Errorf("a bad value: %v", bad)
		}
	}, groups...)
}
