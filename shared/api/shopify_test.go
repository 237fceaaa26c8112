package api_test

import (
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

// shopify sends a request as Shopify's clients do: X-Shopify-Access-Token
// and whatever path form the test gives.
func shopify(e *apitest.Env, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	return shopifyOn(e.Handler, method, target, body, header)
}

func shopifyOn(h http.Handler, method, target, body string, header map[string]string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(httpapi.ShopifyTokenHeader, apitest.DemoToken)
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// listPaths are the paths of every GET route that lists or counts (no
// page, no public route, no record's own path), with the seeded records'
// ids, and each without its root ("pages/count.json").
func listPaths(router *httpapi.Router) (paths, rests []string) {
	ids := map[string]string{
		"{blog_id}": "241253187", "{product_id}": "632910392", "{order_id}": "450789469",
		"{customer_id}": "207119551", "{theme_id}": fmt.Sprint(theme.MainID), "{owner_id}": "632910392",
	}
	for _, route := range router.Routes() {
		if route.Method != "GET" || route.Page || route.Public {
			continue
		}
		path := route.Path
		for k, v := range ids {
			path = strings.ReplaceAll(path, k, v)
		}
		if strings.Contains(path, "{") {
			continue // a record's own path: TestShopifyClientsConventions' writes reach those
		}
		_, rest, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
		paths, rests = append(paths, path), append(rests, rest)
	}
	return paths, rests
}

// Every route answers at /admin/api/{version}/<path>.json and at
// /admin/<path>.json (<path>: the route without its root) exactly what it
// answers at its own path.
func TestShopifyPathsServeEveryRoute(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		paths, rests := listPaths(e.Handler.(*httpapi.Router))
		if len(paths) < 40 {
			t.Fatalf("only %d list and count routes checked", len(paths))
		}
		for i, path := range paths {
			want := shopify(e, "GET", path, "", nil)
			for _, form := range []string{"/admin/api/2024-01/" + rests[i], "/admin/api/unstable/" + rests[i], "/admin/" + rests[i]} {
				got := shopify(e, "GET", form, "", nil)
				if got.Code != want.Code || got.Body.String() != want.Body.String() {
					t.Errorf("GET %s: %d %.200s; %s answers %d %.200s", form, got.Code, got.Body, path, want.Code, want.Body)
				}
				if after, ok := strings.CutPrefix(form, "/admin/api/"); ok {
					if version, _, _ := strings.Cut(after, "/"); got.Header().Get(httpapi.ShopifyVersionHeader) != version {
						t.Errorf("GET %s: %s %q", form, httpapi.ShopifyVersionHeader, got.Header().Get(httpapi.ShopifyVersionHeader))
					}
				}
			}
		}
	}, api.Groups...)
}

// api.Lazy (the shopify-paths function's handler) answers every list and
// count route in Shopify's forms, and a method those paths are not served
// with, as the Handler of every group does: a routing property, checked on
// the embedded store.
func TestLazyServesEveryRouteAsHandler(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Groups...)
	lazy := api.Lazy(&api.Deps{Deps: e.Deps}, api.Groups...)
	_, rests := listPaths(e.Handler.(*httpapi.Router))
	for _, rest := range rests {
		for _, form := range []string{"/admin/api/2024-01/" + rest, "/admin/" + rest} {
			sameOnLazy(t, e, lazy, "GET", form)
			sameOnLazy(t, e, lazy, "PATCH", form)
		}
	}
}

// sameOnLazy checks that lazy answers a request as the Handler of every
// group does.
func sameOnLazy(t *testing.T, e *apitest.Env, lazy http.Handler, method, target string) {
	t.Helper()
	want, got := shopify(e, method, target, "", nil), shopifyOn(lazy, method, target, "", nil)
	if got.Code != want.Code || got.Body.String() != want.Body.String() || got.Header().Get("Allow") != want.Header().Get("Allow") {
		t.Errorf("%s %s on api.Lazy: %d %.200s (Allow %q); on api.Handler: %d %.200s (Allow %q)", method, target,
			got.Code, got.Body, got.Header().Get("Allow"), want.Code, want.Body, want.Header().Get("Allow"))
	}
}

// api.Lazy answers paths no group serves, and forms Shopify's clients do
// not use, as the Handler of every group does.
func TestLazyAnswersUnservedPathsAsHandler(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Groups...)
	lazy := api.Lazy(&api.Deps{Deps: e.Deps}, api.Groups...)
	for _, target := range []string{"/admin/api/2024-01/nothing.json", "/admin/nothing.json", "/admin/api/1999-01/pages.json",
		"/admin/api/2024-01/", "/admin/api/2024-01/pages", "/web/pages.json", "/web/pages/count.json", "/com/products/1/variants.json",
		"/admin/oauth/authorize", "/", "/admin/api/2024-01/products/1/metafields.json", "/admin/api/2024-01/orders/1/transactions/count.json"} {
		for _, method := range []string{"GET", "POST", "PATCH"} {
			sameOnLazy(t, e, lazy, method, target)
		}
	}
}

// Writes, nested paths, versions, tokens and paging links in the forms
// Shopify's clients use.
func TestShopifyClientsConventions(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		v := "/admin/api/2024-01"
		checkShopifyRecords(t, e, v)
		checkShopifyVersionsAndTokens(t, e, v)
		checkShopifyPaging(t, e, v)
	}, api.Groups...)
}

// checkShopifyRecords: records changed through the versioned and the
// unversioned paths are the routes' own; nested paths of several groups
// answer as their routes do.
func checkShopifyRecords(t *testing.T, e *apitest.Env, v string) {
	// A page created, changed and deleted through the versioned path is
	// the route's own record.
	rec := shopify(e, "POST", v+"/pages.json", `{"page":{"title":"Shopify form"}}`, nil)
	if rec.Code != 201 {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	id := idIn(t, rec.Body.String(), "page")
	e.Do("GET", fmt.Sprintf("/web/pages/%d.json", id), nil).Expect(t, 200)
	if rec := shopify(e, "PUT", fmt.Sprintf("/admin/pages/%d.json", id), `{"page":{"title":"Renamed"}}`, nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), "Renamed") {
		t.Errorf("update (unversioned): %d %s", rec.Code, rec.Body)
	}
	if rec := shopify(e, "DELETE", fmt.Sprintf("%s/pages/%d.json", v, id), "", nil); rec.Code != 200 {
		t.Errorf("delete: %d %s", rec.Code, rec.Body)
	}
	e.Do("GET", fmt.Sprintf("/web/pages/%d.json", id), nil).Expect(t, 404)

	// Nested paths of several groups.
	for _, c := range []struct {
		method, path, body string
		status             int
	}{
		{"GET", v + "/products/632910392/variants/count.json", "", 200},
		{"GET", v + "/variants/808950810.json", "", 200},
		{"GET", v + "/orders/450789469/transactions.json", "", 200},
		{"GET", v + "/blogs/241253187/articles.json", "", 200},
		{"GET", v + "/customers/207119551/addresses.json", "", 200},
		{"GET", fmt.Sprintf("%s/themes/%d/assets.json", v, theme.MainID), "", 200},
		{"GET", v + "/products/632910392/metafields.json", "", 200},
		{"POST", v + "/countries.json", `{"country":{"code":"CA"}}`, 201},
		// The route's own answers: 405 for a method the path lacks,
		// 404 for a record that is not there or a path no route has.
		{"POST", v + "/pages/count.json", "", 405},
		// A path the spec serves at /admin keeps its meaning there:
		// only DELETE; the versioned form reaches the /com route.
		{"PUT", "/admin/countries/1.json", `{"country":{"tax":0.1}}`, 405},
		{"PUT", "/admin/customer_saved_searches/1.json", `{"customer_saved_search":{"name":"x"}}`, 405},
		{"PUT", v + "/customer_saved_searches/1.json", `{"customer_saved_search":{"name":"x"}}`, 404},
		{"GET", v + "/pages/1.json", "", 404},
		{"GET", v + "/no_such_things.json", "", 404},
		{"GET", v + "/pages", "", 404},
	} {
		if rec := shopify(e, c.method, c.path, c.body, nil); rec.Code != c.status {
			t.Errorf("%s %s: %d, want %d: %.300s", c.method, c.path, rec.Code, c.status, rec.Body)
		}
	}
	// The saved-search delete, which the spec serves at two roots.
	rec = shopify(e, "POST", v+"/customer_saved_searches.json", `{"customer_saved_search":{"name":"Bobs","query":"bob"}}`, nil)
	if rec.Code != 201 {
		t.Fatalf("saved search: %d %s", rec.Code, rec.Body)
	}
	ss := idIn(t, rec.Body.String(), "customer_saved_search")
	if rec := shopify(e, "GET", fmt.Sprintf("%s/customer_saved_searches/%d/customers.json", v, ss), "", nil); rec.Code != 200 {
		t.Errorf("saved search customers: %d %s", rec.Code, rec.Body)
	}
	if rec := shopify(e, "DELETE", fmt.Sprintf("%s/customer_saved_searches/%d.json", v, ss), "", nil); rec.Code != 200 {
		t.Errorf("saved search delete: %d %s", rec.Code, rec.Body)
	}
}

// checkShopifyVersionsAndTokens: every version from 2019-04 to the current
// one, and unstable; either token header, both only when they agree.
func checkShopifyVersionsAndTokens(t *testing.T, e *apitest.Env, v string) {
	// Versions: every quarter from 2019-04 to the current one, and
	// unstable; anything else is the 404 JSON of an unknown path.
	for version, status := range map[string]int{
		"2019-04": 200, "2024-10": 200, "unstable": 200,
		"2019-01": 404, "2024-02": 404, "2999-01": 404, "latest": 404, "2024-1": 404, "+024-01": 404,
	} {
		rec := shopify(e, "GET", "/admin/api/"+version+"/pages/count.json", "", nil)
		if rec.Code != status || status == 404 && !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("version %s: %d %s", version, rec.Code, rec.Body)
		}
		if status == 200 && rec.Header().Get(httpapi.ShopifyVersionHeader) != version {
			t.Errorf("version %s answered as %q", version, rec.Header().Get(httpapi.ShopifyVersionHeader))
		}
	}

	// Tokens: either header; both only when they agree.
	svc := httpapi.TokenHeader
	for _, c := range []struct {
		header map[string]string
		status int
	}{
		{nil, 200},
		{map[string]string{httpapi.ShopifyTokenHeader: "", svc: apitest.DemoToken}, 200},
		{map[string]string{svc: apitest.DemoToken}, 200},
		{map[string]string{svc: "read-only-token-0123456789abcdef"}, 401},
		{map[string]string{httpapi.ShopifyTokenHeader: ""}, 401},
		{map[string]string{httpapi.ShopifyTokenHeader: "wrong"}, 401},
	} {
		rec := shopify(e, "GET", v+"/pages/count.json", "", c.header)
		if rec.Code != c.status {
			t.Errorf("tokens %v: %d, want %d", c.header, rec.Code, c.status)
		}
	}
}

// checkShopifyPaging: a versioned list's Link names the versioned path,
// and following it reaches the next page.
func checkShopifyPaging(t *testing.T, e *apitest.Env, v string) {
	for _, p := range []string{"/a", "/b", "/c"} {
		e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": p, "target": "/t"}}).Expect(t, 201)
	}
	seen := map[string]bool{}
	next := v + "/redirects.json?limit=1"
	for next != "" {
		rec := shopify(e, "GET", next, "", nil)
		if rec.Code != 200 {
			t.Fatalf("GET %s: %d %s", next, rec.Code, rec.Body)
		}
		seen[rec.Body.String()] = true
		next = ""
		for _, part := range strings.Split(rec.Header().Get("Link"), ",") {
			if strings.Contains(part, `rel="next"`) {
				u := strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(strings.Split(part, ";")[0]), "<"), ">")
				if !strings.HasPrefix(u, apitest.BaseURL+v+"/redirects.json?limit=1&page_info=") {
					t.Fatalf("next link %q is not the versioned path", u)
				}
				next = strings.TrimPrefix(u, apitest.BaseURL)
			}
		}
	}
	if len(seen) != 3 {
		t.Errorf("paged through %d pages, want 3", len(seen))
	}
}

func idIn(t *testing.T, body, key string) int64 {
	t.Helper()
	var id int64
	i := strings.Index(body, `"`+key+`":{"id":`)
	if i < 0 {
		t.Fatalf("no %s id in %s", key, body)
	}
	fmt.Sscan(body[i+len(key)+9:], &id)
	return id
}

// Each group's Heads are the second segments of its routes' paths, which
// api.Lazy finds a request's groups by.
func TestGroupHeads(t *testing.T) {
	for _, g := range api.Groups {
		seen := map[string]bool{}
		for _, r := range g.Routes(&platform.Deps{}) {
			seen[strings.TrimSuffix(strings.Split(r.Path, "/")[2], ".json")] = true
		}
		want := slices.Sorted(maps.Keys(seen))
		if got := slices.Sorted(slices.Values(strings.Fields(g.Heads))); !slices.Equal(got, want) {
			t.Errorf("api.%s's Heads are %q; its routes' second segments %q", g.Name, got, want)
		}
	}
}
