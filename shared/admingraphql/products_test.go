package admingraphql_test

import (
	"fmt"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
)

// The seeded products and their variants through GraphQL; a bulk update
// of a variant's price is read back by REST; a missing variant is a user
// error of its own, after the ones before it were updated.
func TestProductsAndVariants(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ans := gql(t, e, apitest.DemoToken, `{ productsCount { count } products(first: 20) { nodes { id title handle vendor status tags
			variantsCount { count } variants(first: 2) { nodes { id title price position selectedOptions { name value } } pageInfo { hasNextPage endCursor } } } } }`, nil)
		nodes, _ := dig(ans, "data", "products", "nodes").([]any)
		if len(nodes) == 0 || dig(ans, "data", "productsCount", "count") != float64(len(nodes)) {
			t.Fatalf("products: %v", ans)
		}
		var ipod any
		for _, n := range nodes {
			if dig(n, "id") == "gid://shopify/Product/632910392" {
				ipod = n
			}
		}
		if dig(ipod, "handle") != "ipod-nano" || dig(ipod, "vendor") != "Apple" || dig(ipod, "variants", "nodes", 0, "position") != 1.0 {
			t.Fatalf("the seeded iPod: %v", ipod)
		}
		first := dig(ipod, "variants", "nodes", 0)
		vid := dig(first, "id").(string)
		var numeric int64
		fmt.Sscanf(vid, "gid://shopify/ProductVariant/%d", &numeric)
		if dig(ipod, "variantsCount", "count").(float64) > 2 {
			more := gql(t, e, apitest.DemoToken, `query($c: String) { product(id: "gid://shopify/Product/632910392") { variants(first: 2, after: $c) { nodes { position } } } }`,
				map[string]any{"c": dig(ipod, "variants", "pageInfo", "endCursor")})
			if dig(more, "data", "product", "variants", "nodes", 0, "position") != 3.0 {
				t.Errorf("the next variants: %v", more)
			}
		}

		upd := gql(t, e, apitest.DemoToken, `mutation($v: [ProductVariantsBulkInput!]!) { productVariantsBulkUpdate(productId: "gid://shopify/Product/632910392", variants: $v) {
			productVariants { id price } userErrors { field message code } } }`, map[string]any{"v": []any{map[string]any{"id": vid, "price": "12.34"}}})
		if dig(upd, "data", "productVariantsBulkUpdate", "productVariants", 0, "price") != "12.34" {
			t.Fatalf("productVariantsBulkUpdate: %v", upd)
		}
		if p := e.Do("GET", fmt.Sprintf("/com/variants/%d.json", numeric), nil).Expect(t, 200).Object(t, "variant")["price"]; p != "12.34" {
			t.Errorf("REST reads price %v", p)
		}
		bad := gql(t, e, apitest.DemoToken, `mutation($v: [ProductVariantsBulkInput!]!) { productVariantsBulkUpdate(productId: "gid://shopify/Product/632910392", variants: $v) {
			productVariants { price } userErrors { field code } } }`, map[string]any{"v": []any{map[string]any{"id": vid, "price": "1.00"},
			map[string]any{"id": "gid://shopify/ProductVariant/999999999", "price": "2.00"}}})
		ue := dig(bad, "data", "productVariantsBulkUpdate", "userErrors", 0)
		if dig(ue, "code") != "PRODUCT_VARIANT_DOES_NOT_EXIST" || fmt.Sprint(dig(ue, "field")) != "[variants 1 id]" ||
			dig(bad, "data", "productVariantsBulkUpdate", "productVariants", 0, "price") != "1.00" {
			t.Errorf("a missing variant: %v", bad)
		}
		if v := gql(t, e, apitest.DemoToken, `query($id: ID!) { productVariant(id: $id) { displayName product { title } } }`, map[string]any{"id": vid}); dig(v, "data", "productVariant", "product", "title") != "IPod Nano - 8GB" {
			t.Errorf("productVariant: %v", v)
		}
	}, groups...)
}
