package admingraphql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// productVariantsBulkCreate and productVariantsBulkDelete are the REST
// variant create and delete: REST reads what they wrote, their messages
// are REST's, each variant logs the Product event and queues
// products/update; a REST create is read by GraphQL.
func TestVariantsBulkCreateDelete(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		before, updates := productEventsAndUpdates(t, e)
		const create = `mutation($p: ID!, $v: [ProductVariantsBulkInput!]!) { productVariantsBulkCreate(productId: $p, variants: $v) {
			product { variantsCount { count } } productVariants { id price selectedOptions { name value } } userErrors { field message code } } }`
		ans := gql(t, e, apitest.DemoToken, create, map[string]any{"p": ipodGID, "v": []any{
			map[string]any{"price": "5.00", "optionValues": []any{map[string]any{"optionName": "Option1", "name": "Blue"}}}}})
		v := dig(ans, "data", "productVariantsBulkCreate", "productVariants", 0)
		vid, _ := dig(v, "id").(string)
		if dig(v, "price") != "5.00" || dig(v, "selectedOptions", 0, "value") != "Blue" || dig(ans, "data", "productVariantsBulkCreate", "product", "variantsCount", "count") != 3.0 {
			t.Fatalf("productVariantsBulkCreate: %v", ans)
		}
		num := strings.TrimPrefix(vid, "gid://shopify/ProductVariant/")
		if r := e.Do("GET", "/com/variants/"+num+".json", nil).Expect(t, 200).Object(t, "variant"); r["option1"] != "Blue" || r["price"] != "5.00" {
			t.Errorf("REST reads %v", r)
		}
		if after, up := productEventsAndUpdates(t, e); after != before+1 || up != updates+1 {
			t.Errorf("events %d -> %d, products/update %d -> %d", before, after, updates, up)
		}

		dup := gql(t, e, apitest.DemoToken, create, map[string]any{"p": ipodGID, "v": []any{
			map[string]any{"optionValues": []any{map[string]any{"optionName": "Option1", "name": "blue"}}}}})
		ue := dig(dup, "data", "productVariantsBulkCreate", "userErrors", 0)
		if dig(ue, "message") != "The variant 'blue' already exists." || dig(ue, "code") != "VARIANT_ALREADY_EXISTS" || dig(ue, "field") != nil {
			t.Errorf("a clash: %v", dup)
		}
		bad := gql(t, e, apitest.DemoToken, create, map[string]any{"p": ipodGID, "v": []any{map[string]any{"price": "-1.00", "optionValues": []any{map[string]any{"name": "Cheap"}}}}})
		if ue := dig(bad, "data", "productVariantsBulkCreate", "userErrors", 0); fmt.Sprint(dig(ue, "field")) != "[variants 0 price]" || dig(ue, "code") != "INVALID" {
			t.Errorf("a negative price: %v", bad)
		}
		if nope := gql(t, e, apitest.DemoToken, create, map[string]any{"p": "gid://shopify/Product/1", "v": []any{}}); dig(nope, "data", "productVariantsBulkCreate", "userErrors", 0, "code") != "PRODUCT_DOES_NOT_EXIST" {
			t.Errorf("unknown product: %v", nope)
		}

		// made by REST, read by GraphQL
		green := e.Do("POST", "/com/products/632910392/variants.json", map[string]any{"variant": map[string]any{"option1": "Green", "price": "7.00"}}).Expect(t, 201).Object(t, "variant")
		greenGID := fmt.Sprintf("gid://shopify/ProductVariant/%.0f", green["id"])
		if got := gql(t, e, apitest.DemoToken, `query($id: ID!) { productVariant(id: $id) { price selectedOptions { value } } }`, map[string]any{"id": greenGID}); dig(got, "data", "productVariant", "price") != "7.00" {
			t.Errorf("REST's variant in GraphQL: %v", got)
		}

		const del = `mutation($p: ID!, $ids: [ID!]!) { productVariantsBulkDelete(productId: $p, variantsIds: $ids) { product { variantsCount { count } } userErrors { field message code } } }`
		foreign := gql(t, e, apitest.DemoToken, del, map[string]any{"p": ipodGID, "ids": []any{vid, "gid://shopify/ProductVariant/1"}})
		if ue := dig(foreign, "data", "productVariantsBulkDelete", "userErrors", 0); dig(ue, "code") != "AT_LEAST_ONE_VARIANT_DOES_NOT_BELONG_TO_THE_PRODUCT" || fmt.Sprint(dig(ue, "field")) != "[variantsIds]" {
			t.Errorf("a foreign variant: %v", foreign)
		}
		e.Do("GET", "/com/variants/"+num+".json", nil).Expect(t, 200) // nothing deleted
		denied := gql(t, e, apitest.ReadOnlyToken, del, map[string]any{"p": ipodGID, "ids": []any{vid}})
		if dig(denied, "errors", 0, "extensions", "code") != "ACCESS_DENIED" || !strings.Contains(dig(denied, "errors", 0, "message").(string), "`write_products`") {
			t.Errorf("without write_products: %v", denied)
		}
		before, updates = productEventsAndUpdates(t, e)
		gone := gql(t, e, apitest.DemoToken, del, map[string]any{"p": ipodGID, "ids": []any{vid, greenGID}})
		if dig(gone, "data", "productVariantsBulkDelete", "product", "variantsCount", "count") != 2.0 || len(dig(gone, "data", "productVariantsBulkDelete", "userErrors").([]any)) != 0 {
			t.Fatalf("productVariantsBulkDelete: %v", gone)
		}
		e.Do("GET", "/com/variants/"+num+".json", nil).Expect(t, 404)
		if after, up := productEventsAndUpdates(t, e); after != before+2 || up != updates+2 {
			t.Errorf("events %d -> %d, products/update %d -> %d", before, after, updates, up)
		}
	}, groups...)
}

// productEventsAndUpdates counts the iPod's events and the queued
// products/update notifications, read from the store.
func productEventsAndUpdates(t *testing.T, e *apitest.Env) (int, int) {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Product, 632910392)})
	if err != nil {
		t.Fatal(err)
	}
	nitems, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: "notification"})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := records.DecodeAll[outbox.Notification](nitems)
	if err != nil {
		t.Fatal(err)
	}
	updates := 0
	for _, n := range ns {
		if n.Topic == "products/update" {
			updates++
		}
	}
	return len(items), updates
}
