package api_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
)

// pagedList is one list served with page_info paging: setup creates at
// least 5 records in it. A setup that returns a path lists that one instead
// (a parent made by the setup); {id} in path stands for it in test names.
type pagedList struct {
	path, key string
	setup     func(t *testing.T, e *apitest.Env) string
}

func create(t *testing.T, e *apitest.Env, path string, body func(i int) any) string {
	t.Helper()
	for i := range 5 {
		e.Do("POST", path, body(i)).Expect(t, http.StatusCreated)
	}
	return ""
}

// createOne creates a record and returns its id.
func createOne(t *testing.T, e *apitest.Env, path, wrapper string, fields map[string]any) int64 {
	t.Helper()
	id, _ := e.Do("POST", path, map[string]any{wrapper: fields}).Expect(t, http.StatusCreated).Object(t, wrapper)["id"].(float64)
	return int64(id)
}

// Ids of the demo seed (shared/seed/demo.json).
const (
	seedBlog     = 241253187
	seedProduct  = 632910392
	seedCustomer = 207119551
	seedOrder    = 450789469
)

// seedProducts loads 5 products titled "<title> <i>" with ids from base
// (the API makes no products) and returns their ids.
func seedProducts(t *testing.T, e *apitest.Env, title string, base int64) []int64 {
	t.Helper()
	var ids []int64
	var products []string
	for i := range int64(5) {
		ids = append(ids, base+i)
		products = append(products, fmt.Sprintf(`{"id": %d, "title": "%s %d", "handle": "%s-%d", "variants": [{"id": %d, "title": "Default", "price": "1.00"}]}`,
			base+i, title, i, strings.ToLower(title), i, base+100+i))
	}
	data := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"}, "products": [` + strings.Join(products, ",") + `]}`
	if _, _, err := seed.Load(context.Background(), e.Deps.Store, e.Deps.Clock, []byte(data)); err != nil {
		t.Fatal(err)
	}
	return ids
}

// collectionsOfProduct makes 5 custom collections holding the seed's
// product, and 5 smart ones whose rule it matches.
func collectionsOfProduct(t *testing.T, e *apitest.Env) string {
	for i := range 5 {
		cid := createOne(t, e, "/com/custom_collections.json", "custom_collection", map[string]any{"title": fmt.Sprintf("Picks %d", i)})
		createOne(t, e, "/com/collects.json", "collect", map[string]any{"product_id": seedProduct, "collection_id": cid})
		createOne(t, e, "/com/smart_collections.json", "smart_collection", map[string]any{"title": fmt.Sprintf("iPods %d", i),
			"rules": []any{map[string]any{"column": "title", "relation": "starts_with", "condition": "ipod"}}})
	}
	return ""
}

// makePages creates 5 published pages titled "Same" (and their 5 create
// events), once per Env.
func makePages(t *testing.T, e *apitest.Env) string {
	if n := e.Do("GET", "/web/pages/count.json?title=Same", nil).Expect(t, http.StatusOK).JSON(t)["count"]; n != 0.0 {
		return ""
	}
	return create(t, e, "/web/pages.json", func(i int) any {
		return map[string]any{"page": map[string]any{"title": "Same", "body_html": fmt.Sprint("<p>", i, "</p>")}}
	})
}

var pagedLists = []pagedList{
	{"/web/redirects.json", "redirects", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/web/redirects.json", func(i int) any {
			return map[string]any{"redirect": map[string]any{"path": fmt.Sprintf("/old-%d", i), "target": "/new"}}
		})
	}},
	{"/web/script_tags.json", "script_tags", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/web/script_tags.json", func(i int) any {
			return map[string]any{"script_tag": map[string]any{"event": "onload", "src": fmt.Sprintf("https://example.com/s%d.js", i)}}
		})
	}},
	{"/admin/webhooks.json", "webhooks", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/admin/webhooks.json", func(i int) any {
			return map[string]any{"webhook": map[string]any{"topic": "orders/create", "address": fmt.Sprintf("https://example.com/hooks/%d", i)}}
		})
	}},
	// Delivery attempts are logged by the delivery pipeline, not made
	// through the API: they are written as it writes them.
	{"/admin/webhooks/{id}/deliveries.json", "deliveries", func(t *testing.T, e *apitest.Env) string {
		id := createOne(t, e, "/admin/webhooks.json", "webhook", map[string]any{"topic": "orders/create", "address": "https://example.com/hooks"})
		for i := range 5 {
			a := delivery.Attempt{ID: e.Deps.IDs.Next(), DeliveryID: fmt.Sprint("d", i), Topic: "orders/create", Attempt: 1, CreatedAt: admin.At(e.Deps.Clock.Now())}
			err := e.Deps.Store.Transact(context.Background(), store.Put(store.Item{PK: delivery.AttemptPartition(id), SK: records.IDSK(a.ID),
				Version: 1, Data: records.Encode(&a)}, store.Always, 0))
			if err != nil {
				t.Fatal(err)
			}
		}
		return fmt.Sprintf("/admin/webhooks/%d/deliveries.json", id)
	}},
	{"/admin/recurring_application_charges.json", "recurring_application_charges", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/admin/recurring_application_charges.json", func(i int) any {
			return map[string]any{"recurring_application_charge": map[string]any{"name": fmt.Sprint("Plan ", i), "price": 10, "return_url": "https://example.com/back"}}
		})
	}},
	{fmt.Sprintf("/web/blogs/%d/articles.json", seedBlog), "articles", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, fmt.Sprintf("/web/blogs/%d/articles.json", seedBlog), func(i int) any {
			return map[string]any{"article": map[string]any{"title": fmt.Sprint("Post ", i)}}
		})
	}},
	{"/web/comments.json", "comments", func(t *testing.T, e *apitest.Env) string {
		art := createOne(t, e, fmt.Sprintf("/web/blogs/%d/articles.json", seedBlog), "article", map[string]any{"title": "Commented"})
		return create(t, e, "/web/comments.json", func(i int) any {
			return map[string]any{"comment": map[string]any{"author": "Ann Reader", "email": "ann@example.com", "body": fmt.Sprint("Nice ", i),
				"blog_id": seedBlog, "article_id": art}}
		})
	}},
	{"/com/custom_collections.json", "custom_collections", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/com/custom_collections.json", func(i int) any {
			return map[string]any{"custom_collection": map[string]any{"title": fmt.Sprint("Picks ", i)}}
		})
	}},
	// A product's collections: its collects' index partition, each
	// collection read.
	{fmt.Sprintf("/com/custom_collections.json?product_id=%d", seedProduct), "custom_collections", collectionsOfProduct},
	{"/com/smart_collections.json", "smart_collections", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/com/smart_collections.json", func(i int) any {
			return map[string]any{"smart_collection": map[string]any{"title": fmt.Sprint("Smart ", i)}}
		})
	}},
	// A product's memberships' index partition, each collection read.
	{fmt.Sprintf("/com/smart_collections.json?product_id=%d", seedProduct), "smart_collections", collectionsOfProduct},
	{"/com/collects.json", "collects", collectionsOfProduct},
	// A product's collects and smart memberships are merged in memory.
	{fmt.Sprintf("/com/collects.json?product_id=%d", seedProduct), "collects", collectionsOfProduct},
	// A custom collection's collects (its index partition) and a smart
	// one's memberships (its partition).
	{"/com/collects.json?collection_id={id}", "collects", func(t *testing.T, e *apitest.Env) string {
		cid := createOne(t, e, "/com/custom_collections.json", "custom_collection", map[string]any{"title": "Many"})
		for _, pid := range seedProducts(t, e, "Thing", 700000000) {
			createOne(t, e, "/com/collects.json", "collect", map[string]any{"product_id": pid, "collection_id": cid})
		}
		return fmt.Sprintf("/com/collects.json?collection_id=%d", cid)
	}},
	{"/com/collects.json?collection_id={smart_id}", "collects", func(t *testing.T, e *apitest.Env) string {
		seedProducts(t, e, "Gadget", 700001000)
		cid := createOne(t, e, "/com/smart_collections.json", "smart_collection", map[string]any{"title": "Gadgets",
			"rules": []any{map[string]any{"column": "title", "relation": "starts_with", "condition": "gadget"}}})
		return fmt.Sprintf("/com/collects.json?collection_id=%d", cid)
	}},
	// A product's variants are read whole and paged in position order.
	{fmt.Sprintf("/com/products/%d/variants.json", seedProduct), "variants", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, fmt.Sprintf("/com/products/%d/variants.json", seedProduct), func(i int) any {
			return map[string]any{"variant": map[string]any{"option1": fmt.Sprint("Colour ", i), "price": 1}}
		})
	}},
	{fmt.Sprintf("/com/orders/%d/transactions.json", seedOrder), "transactions", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, fmt.Sprintf("/com/orders/%d/transactions.json", seedOrder), func(i int) any {
			return map[string]any{"transaction": map[string]any{"kind": "capture", "amount": "1"}}
		})
	}},
	{fmt.Sprintf("/com/customers/%d/addresses.json", seedCustomer), "addresses", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, fmt.Sprintf("/com/customers/%d/addresses.json", seedCustomer), func(i int) any {
			return map[string]any{"address": map[string]any{"city": fmt.Sprint("City ", i)}}
		})
	}},
	{"/web/pages.json", "pages", makePages},
	// Filtered lists page within their filter: a title's and a state's
	// index entries, and a time range read in that time's order.
	{"/web/pages.json?title=Same", "pages", makePages},
	{"/web/pages.json?published_status=published", "pages", makePages},
	{"/web/pages.json?updated_at_min=2024-01-01", "pages", makePages},
	{"/com/events.json", "events", makePages},
	{"/com/events.json?filter=Page&verb=create", "events", makePages},
	{"/com/events.json?filter=Page,Comment", "events", makePages},
	{"/com/customer_saved_searches.json", "customer_saved_searches", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/com/customer_saved_searches.json", func(i int) any {
			return map[string]any{"customer_saved_search": map[string]any{"name": fmt.Sprint("Search ", i), "query": "state:enabled"}}
		})
	}},
	// A search's customers are computed and ordered, not a key range: the
	// cursor is a position in the ordered matches.
	{"/com/customer_saved_searches/{id}/customers.json?order=email%20desc", "customers", func(t *testing.T, e *apitest.Env) string {
		var cs []string
		for i := range 6 {
			cs = append(cs, fmt.Sprintf(`{"id": %d, "email": "c%d@example.com", "first_name": "C", "last_name": "%d", "state": "enabled", "orders_count": 1, "total_spent": "1.00"}`, 9001+i, i, i))
		}
		data := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"}, "customers": [` + strings.Join(cs, ",") + `]}`
		if _, _, err := seed.Load(context.Background(), e.Deps.Store, e.Deps.Clock, []byte(data)); err != nil {
			t.Fatal(err)
		}
		id := createOne(t, e, "/com/customer_saved_searches.json", "customer_saved_search", map[string]any{"name": "Enabled", "query": "state:enabled"})
		return fmt.Sprintf("/com/customer_saved_searches/%d/customers.json?order=email%%20desc", id)
	}},
	{"/admin/metafields.json", "metafields", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, "/admin/metafields.json", func(i int) any {
			return map[string]any{"metafield": map[string]any{"namespace": "inventory", "key": fmt.Sprint("key", i), "value": i, "value_type": "integer"}}
		})
	}},
	// An owner's metafields: its index partition.
	{fmt.Sprintf("/admin/products/%d/metafields.json", seedProduct), "metafields", func(t *testing.T, e *apitest.Env) string {
		return create(t, e, fmt.Sprintf("/admin/products/%d/metafields.json", seedProduct), func(i int) any {
			return map[string]any{"metafield": map[string]any{"namespace": "inventory", "key": fmt.Sprint("key", i), "value": i, "value_type": "integer"}}
		})
	}},
}

// TestPageInfoPaging pages every list as shopify-api-node does: limit=2,
// then rel="next" until there is none, then rel="previous" back to the
// start. The pages together are the list read in one request, in order,
// each link reproduces its page, and the ends carry no link beyond them.
func TestPageInfoPaging(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, l := range pagedLists {
			t.Run(strings.TrimPrefix(l.path, "/"), func(t *testing.T) {
				if path := l.setup(t, e); path != "" {
					l.path = path
				}
				sep := "?"
				if strings.Contains(l.path, "?") {
					sep = "&"
				}
				whole := e.Do("GET", l.path+sep+"limit=250", nil).Expect(t, http.StatusOK).IDs(t, l.key)
				if len(whole) < 5 {
					t.Fatalf("setup made %d records, want at least 5", len(whole))
				}
				first := e.Do("GET", l.path+sep+"limit=2", nil).Expect(t, http.StatusOK)
				if first.Link("previous") != "" {
					t.Fatalf("first page links to a previous one: %s", first.Header.Get("Link"))
				}
				var pages [][]int64
				var got []int64
				r := first
				for {
					ids := r.IDs(t, l.key)
					pages = append(pages, ids)
					got = append(got, ids...)
					next := r.Link("next")
					if next == "" {
						break
					}
					if len(pages) > len(whole) {
						t.Fatalf("next links do not end: %s", next)
					}
					r = e.Do("GET", next, nil).Expect(t, http.StatusOK)
				}
				if !slices.Equal(got, whole) {
					t.Fatalf("pages by next links %v, want the whole list %v", pages, whole)
				}
				for i := len(pages) - 1; i > 0; i-- {
					prev := r.Link("previous")
					if prev == "" {
						t.Fatalf("page %d has no previous link", i+1)
					}
					r = e.Do("GET", prev, nil).Expect(t, http.StatusOK)
					if ids := r.IDs(t, l.key); !slices.Equal(ids, pages[i-1]) {
						t.Fatalf("previous of page %d is %v, want %v", i+1, ids, pages[i-1])
					}
				}
				if r.Link("previous") != "" {
					t.Fatalf("the first page reached back has a previous link: %s", r.Header.Get("Link"))
				}
				checkPageInfoRefusals(t, e, first)
			})
		}
	}, api.Groups...)
}

// checkPageInfoRefusals follows first's next link changed: only limit and
// fields go with a page_info, which must be unchanged and this list's.
func checkPageInfoRefusals(t *testing.T, e *apitest.Env, first *apitest.Response) {
	next := first.Link("next")
	u, _ := url.Parse(next)
	info := u.Query().Get("page_info")
	for param, want := range map[string]string{
		"&page=2":                    "page",
		"&since_id=1":                "since_id",
		"&created_at_min=2020-01-01": "created_at_min",
	} {
		r := e.Do("GET", next+param, nil).Expect(t, http.StatusBadRequest)
		if errs, _ := r.JSON(t)["errors"].(map[string]any); errs[want] == nil {
			t.Errorf("%s with page_info: 400 does not name %s: %s", param, want, r.Body)
		}
	}
	q := u.Query()
	q.Set("limit", "1") // the link's own limit changed, not given twice
	q.Set("fields", "id")
	e.Do("GET", u.Path+"?"+q.Encode(), nil).Expect(t, http.StatusOK)
	// A percent-encoded name is page_info all the same.
	enc := e.Do("GET", u.Path+"?page%5Finfo="+url.QueryEscape(info)+"&since_id=1", nil).Expect(t, http.StatusBadRequest)
	if errs, _ := enc.JSON(t)["errors"].(map[string]any); errs["since_id"] == nil {
		t.Errorf("an encoded page_info with since_id: %s", enc.Body)
	}
	tampered := info[:len(info)-2] + map[bool]string{true: "AB", false: "AA"}[strings.HasSuffix(info, "AA")] // always a change
	for _, bad := range []string{tampered, "x" + info, "", "not.base64!"} {
		r := e.Do("GET", u.Path+"?page_info="+url.QueryEscape(bad), nil).Expect(t, http.StatusBadRequest)
		if errs, _ := r.JSON(t)["errors"].(map[string]any); errs["page_info"] == nil {
			t.Errorf("page_info %q: 400 does not name page_info: %s", bad, r.Body)
		}
	}
	other := "/com/events.json" // a page_info is bound to its route
	if u.Path == other {
		other = "/web/redirects.json"
	}
	e.Do("GET", other+"?page_info="+url.QueryEscape(info), nil).Expect(t, http.StatusBadRequest)
}
