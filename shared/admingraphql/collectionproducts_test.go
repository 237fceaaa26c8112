package admingraphql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
)

const ipodGID = "gid://shopify/Product/632910392"

// collectionAddProducts links a product as POST /com/collects.json does
// (REST lists the collect, products_count moves), with REST's messages as
// user errors; collectionRemoveProducts unlinks it and answers a done Job;
// a smart collection refuses both; write_products is needed.
func TestCollectionProductMembership(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		made := gql(t, e, apitest.DemoToken, `mutation { collectionCreate(input: {title: "Picks"}) { collection { id } } }`, nil)
		cid := dig(made, "data", "collectionCreate", "collection", "id").(string)
		num := strings.TrimPrefix(cid, "gid://shopify/Collection/")
		const add = `mutation($id: ID!, $p: [ID!]!) { collectionAddProducts(id: $id, productIds: $p) {
			collection { id productsCount { count } hasProduct(id: "` + ipodGID + `") products(first: 5) { nodes { id title variants(first: 1) { nodes { id } } } pageInfo { hasNextPage } } }
			userErrors { field message } } }`
		ans := gql(t, e, apitest.DemoToken, add, map[string]any{"id": cid, "p": []any{ipodGID}})
		c := dig(ans, "data", "collectionAddProducts", "collection")
		if dig(c, "productsCount", "count") != 1.0 || dig(c, "hasProduct") != true || dig(c, "products", "nodes", 0, "id") != ipodGID ||
			dig(c, "products", "nodes", 0, "title") != "IPod Nano - 8GB" || dig(c, "products", "nodes", 0, "variants", "nodes", 0, "id") == nil ||
			dig(c, "products", "pageInfo", "hasNextPage") != false {
			t.Fatalf("collectionAddProducts: %v", ans)
		}
		rest := e.Do("GET", "/com/collects.json?collection_id="+num, nil).Expect(t, 200).List(t, "collects")
		if len(rest) != 1 || rest[0].(map[string]any)["product_id"] != 632910392.0 {
			t.Errorf("REST lists %v", rest)
		}
		if n := e.Do("GET", "/com/custom_collections/"+num+".json", nil).Expect(t, 200).Object(t, "custom_collection")["products_count"]; n != 1.0 {
			t.Errorf("REST products_count %v", n)
		}

		userErr := func(ans map[string]any, mutation string) string {
			ue := dig(ans, "data", mutation, "userErrors", 0)
			return fmt.Sprint(dig(ue, "field"), " ", dig(ue, "message"))
		}
		if got := userErr(gql(t, e, apitest.DemoToken, add, map[string]any{"id": cid, "p": []any{ipodGID}}), "collectionAddProducts"); got != "[productIds 0] Product id already exists in this collection" {
			t.Errorf("added twice: %s", got)
		}
		if got := userErr(gql(t, e, apitest.DemoToken, add, map[string]any{"id": cid, "p": []any{"gid://shopify/Product/1"}}), "collectionAddProducts"); got != "[productIds 0] Product does not exist" {
			t.Errorf("unknown product: %s", got)
		}
		if got := userErr(gql(t, e, apitest.DemoToken, add, map[string]any{"id": "gid://shopify/Collection/1", "p": []any{}}), "collectionAddProducts"); got != "[id] Collection does not exist" {
			t.Errorf("unknown collection: %s", got)
		}

		smart := gql(t, e, apitest.DemoToken, `mutation { collectionCreate(input: {title: "Apple", ruleSet: {appliedDisjunctively: false, rules: [{column: VENDOR, relation: EQUALS, condition: "Apple"}]}}) { collection { id products(first: 5) { nodes { id } } } } }`, nil)
		sid := dig(smart, "data", "collectionCreate", "collection", "id")
		if got := userErr(gql(t, e, apitest.DemoToken, add, map[string]any{"id": sid, "p": []any{ipodGID}}), "collectionAddProducts"); got != "[id] Cannot add products to a smart collection" {
			t.Errorf("smart add: %s", got)
		}
		const remove = `mutation($id: ID!, $p: [ID!]!) { collectionRemoveProducts(id: $id, productIds: $p) { job { id done } userErrors { field message } } }`
		if got := userErr(gql(t, e, apitest.DemoToken, remove, map[string]any{"id": sid, "p": []any{ipodGID}}), "collectionRemoveProducts"); got != "[id] Cannot remove products from a smart collection" {
			t.Errorf("smart remove: %s", got)
		}
		members := gql(t, e, apitest.DemoToken, `query($id: ID!) { collection(id: $id) { products(first: 5) { nodes { id } } } }`, map[string]any{"id": sid})
		if dig(members, "data", "collection", "products", "nodes", 0, "id") != ipodGID {
			t.Errorf("smart collection's products: %v", members)
		}

		denied := gql(t, e, apitest.ReadOnlyToken, remove, map[string]any{"id": cid, "p": []any{ipodGID}})
		if dig(denied, "errors", 0, "extensions", "code") != "ACCESS_DENIED" || !strings.Contains(dig(denied, "errors", 0, "message").(string), "`write_products`") {
			t.Errorf("without write_products: %v", denied)
		}

		gone := gql(t, e, apitest.DemoToken, remove, map[string]any{"id": cid, "p": []any{ipodGID, "gid://shopify/Product/1"}})
		job := dig(gone, "data", "collectionRemoveProducts", "job")
		if dig(job, "done") != true || !strings.HasPrefix(dig(job, "id").(string), "gid://shopify/Job/") || len(dig(gone, "data", "collectionRemoveProducts", "userErrors").([]any)) != 0 {
			t.Fatalf("collectionRemoveProducts: %v", gone)
		}
		if n := e.Do("GET", "/com/collects/count.json?collection_id="+num, nil).Expect(t, 200).JSON(t)["count"]; n != 0.0 {
			t.Errorf("REST counts %v collects", n)
		}

		// a collect made by REST is a product of the collection in GraphQL
		e.Do("POST", "/com/collects.json", map[string]any{"collect": map[string]any{"product_id": 632910392, "collection_id": num}}).Expect(t, 201)
		back := gql(t, e, apitest.DemoToken, `query($id: ID!) { collection(id: $id) { products(first: 5, sortKey: ID) { nodes { id } } productsCount { count } } }`, map[string]any{"id": cid})
		if dig(back, "data", "collection", "products", "nodes", 0, "id") != ipodGID || dig(back, "data", "collection", "productsCount", "count") != 1.0 {
			t.Errorf("after REST's collect: %v", back)
		}
	}, groups...)
}
