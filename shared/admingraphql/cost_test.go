package admingraphql_test

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
)

// productQuery reads what REST's GET of a product's variants answers: the
// product and its variants.
const productQuery = `{ product(id: "gid://shopify/Product/632910392") { id title handle vendor productType tags
	variants(first: 100) { nodes { id title price sku position inventoryQuantity } } } }`

// product(id:) with its variants costs at most 1.2x the DynamoDB work of
// REST's GET of the product's variants (the spec has no product GET: this
// is REST's read of a product and its variants), against DynamoDB Local
// (dynamotest.Meter: read units as it reports them, round trips), both
// unmetered by their buckets (each costs a write in AWS: REST's call
// limit, GraphQL's points). The figures are docs/graphql.md's.
func TestProductCostAgainstREST(t *testing.T) {
	st, meter := dynamotest.OpenMetered(t)
	e := apitest.New(t, st, groups...)
	rest := func() { e.Do("GET", "/com/products/632910392/variants.json", nil).Expect(t, 200) }
	rest()
	gql(t, e, apitest.DemoToken, productQuery, nil) // caches warm
	meter.Take()
	rest()
	r := meter.Take()
	ans := gql(t, e, apitest.DemoToken, productQuery, nil)
	g := meter.Take()
	if n, _ := dig(ans, "data", "product", "variants", "nodes").([]any); len(n) != 2 {
		t.Fatalf("product: %v", ans)
	}
	cost := dig(ans, "extensions", "cost")
	t.Logf("REST GET variants.json: %d calls, %d items, %.1f RU; GraphQL product(id:): %d calls, %d items, %.1f RU, requestedQueryCost %v, actualQueryCost %v",
		r.Calls, r.Items, r.RU, g.Calls, g.Items, g.RU, dig(cost, "requestedQueryCost"), dig(cost, "actualQueryCost"))
	if g.RU > 1.2*r.RU || g.Calls > r.Calls {
		t.Errorf("product(id:) costs %.1f RU in %d calls, REST %.1f RU in %d: more than 1.2x", g.RU, g.Calls, r.RU, r.Calls)
	}
	if g.WU != 0 || r.WU != 0 {
		t.Errorf("reads wrote: GraphQL %.1f WU, REST %.1f WU", g.WU, r.WU)
	}
}
