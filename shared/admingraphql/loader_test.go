package admingraphql_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
)

// callCounter counts the store calls that read (GetItem, Query, Count),
// each one round trip.
type callCounter struct {
	store.Store
	calls atomic.Int64
}

func (c *callCounter) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.calls.Add(1)
	return c.Store.Get(ctx, k)
}

func (c *callCounter) Query(ctx context.Context, q store.Query) ([]store.Item, string, error) {
	c.calls.Add(1)
	return c.Store.Query(ctx, q)
}

func (c *callCounter) Count(ctx context.Context, q store.Query) (int, error) {
	c.calls.Add(1)
	return c.Store.Count(ctx, q)
}

// countCalls serves e's groups over a store that counts its reads.
func countCalls(e *apitest.Env) *callCounter {
	cc := &callCounter{Store: e.Deps.Store}
	e.Change(func(d *platform.Deps) { d.Store = cc })
	return cc
}

// readsOf is how many store reads query makes beyond what every request
// reads (its token: a query of __typename alone, the process's caches
// warm).
func readsOf(t *testing.T, e *apitest.Env, cc *callCounter, query string, vars map[string]any) (int64, map[string]any) {
	t.Helper()
	gql(t, e, apitest.DemoToken, `{ __typename }`, nil)
	cc.calls.Store(0)
	gql(t, e, apitest.DemoToken, `{ __typename }`, nil)
	base := cc.calls.Swap(0)
	ans := gql(t, e, apitest.DemoToken, query, vars)
	return cc.calls.Swap(0) - base, ans
}

// manyProducts is the demo seed plus n products of two variants each, with
// ids below the seeded product's (so the first page holds them).
func manyProducts(t *testing.T, n int) []byte {
	var f map[string]any
	if err := json.Unmarshal(seed.Demo, &f); err != nil {
		t.Fatal(err)
	}
	products := f["products"].([]any)
	for i := 1; i <= n; i++ {
		products = append(products, map[string]any{"id": 1000 + i, "title": fmt.Sprintf("Product %d", i), "handle": fmt.Sprintf("product-%d", i),
			"vendor": "Acme", "created_at": "2024-03-11T10:00:00-04:00", "updated_at": "2024-03-11T10:00:00-04:00",
			"variants": []any{
				map[string]any{"id": 100000 + 2*i, "title": "S", "option1": "S", "price": "1.00"},
				map[string]any{"id": 100001 + 2*i, "title": "M", "option1": "M", "price": "2.00"},
			}})
	}
	f["products"] = products
	b, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A page of 50 products with their variants (and each variant's product)
// is a bounded number of store reads, not one or more per product: the
// request's loader reads the page's variants at once (variants'
// OfProducts) and each variant's product is its parent, already read.
// The same query without the batching read at least three times per
// product (its variant order, its variants' index, its count).
func TestNestedReadsBatched(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		if _, _, err := seed.Load(t.Context(), e.Deps.Store, e.Deps.Clock, manyProducts(t, 50), api.SeedChecks...); err != nil {
			t.Fatal(err)
		}
		cc := countCalls(e)
		reads, ans := readsOf(t, e, cc, `{ products(first: 50) { nodes { id variantsCount { count } variants(first: 2) { nodes { id price position product { id } } } } } }`, nil)
		nodes, _ := dig(ans, "data", "products", "nodes").([]any)
		if len(nodes) != 50 || dig(ans, "errors") != nil {
			t.Fatalf("products: %v", ans)
		}
		for i, n := range nodes {
			id := fmt.Sprintf("gid://shopify/Product/%d", 1001+i)
			if dig(n, "id") != id || dig(n, "variantsCount", "count") != 2.0 || dig(n, "variants", "nodes", 1, "position") != 2.0 ||
				dig(n, "variants", "nodes", 0, "product", "id") != id || dig(n, "variants", "nodes", 1, "price") != "2.00" {
				t.Fatalf("product %d: %v", i, n)
			}
		}
		t.Logf("50 products with 100 variants: %d store reads", reads)
		if reads > 3 {
			t.Errorf("50 products with their variants took %d store reads, want at most 3 (the page, the orders, the variants)", reads)
		}

		// a variant made later (an id far from its siblings') is in its
		// product's page, in position order, as REST lists it
		e.Do("POST", "/com/products/1001/variants.json", map[string]any{"variant": map[string]any{"option1": "L", "price": "3.00"}}).Expect(t, 201)
		ans = gql(t, e, apitest.DemoToken, `{ products(first: 3) { nodes { variants(first: 5) { nodes { title position } } } } }`, nil)
		if dig(ans, "data", "products", "nodes", 0, "variants", "nodes", 2, "title") != "L" || dig(ans, "data", "products", "nodes", 1, "variants", "nodes", 2) != nil {
			t.Errorf("a later variant: %v", ans)
		}

		// one product alone reads as REST's variants list does
		reads, ans = readsOf(t, e, cc, `{ product(id: "gid://shopify/Product/1001") { title variants(first: 5) { nodes { id } } } }`, nil)
		if len(dig(ans, "data", "product", "variants", "nodes").([]any)) != 3 || reads > 3 {
			t.Errorf("product(id:) with its variants: %d reads, %v", reads, ans)
		}
	}, groups...)
}

// Comments of a page naming the same article read it once; the article's
// blog is read once for all of them.
func TestCommentsArticleReadOnce(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := e.Do("POST", "/web/blogs/241253187/articles.json", map[string]any{"article": map[string]any{"title": "Batch", "author": "Ann"}}).Expect(t, 201).Object(t, "article")
		for i := range 10 {
			e.Do("POST", "/web/comments.json", map[string]any{"comment": map[string]any{"body": fmt.Sprint("c", i), "author": "Bo", "email": "bo@example.com",
				"blog_id": 241253187, "article_id": a["id"]}}).Expect(t, 201)
		}
		cc := countCalls(e)
		reads, ans := readsOf(t, e, cc, `{ comments(first: 10) { nodes { body article { title blog { title } } } } }`, nil)
		nodes, _ := dig(ans, "data", "comments", "nodes").([]any)
		if len(nodes) != 10 || dig(nodes[9], "article", "title") != "Batch" || dig(nodes[9], "article", "blog", "title") != "News" {
			t.Fatalf("comments: %v", ans)
		}
		t.Logf("10 comments with their article and blog: %d store reads", reads)
		if reads > 3 {
			t.Errorf("10 comments of one article took %d store reads, want at most 3 (the page, the article, the blog)", reads)
		}
	}, groups...)
}
