package api_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store"
)

const news = "/web/blogs/241253187/articles"

func idOf(o map[string]any) int64 { return int64(o["id"].(float64)) }

// fieldError fails unless r is 422 with a message on field.
func fieldError(t *testing.T, r *apitest.Response, field string) {
	t.Helper()
	r.Expect(t, http.StatusUnprocessableEntity)
	errs, _ := r.JSON(t)["errors"].(map[string]any)
	if _, ok := errs[field]; !ok {
		t.Fatalf("422 does not name %q: %s", field, r.Body)
	}
}

// Dates outside years 1-9999 (in UTC or in the shop's zone, America/New_York)
// are refused where they enter; the extremes that are accepted read back,
// list, update and delete.
func TestTimestampsStayReadable(t *testing.T) {
	refused := []string{
		"0000-01-01T00:00:00+01:00",
		"0001-01-01T00:00:00+01:00", // year 0 in UTC
		"0001-01-01T02:00:00Z",      // year 0 in New York
		"9999-12-31T23:59:59-01:00", // year 10000 in UTC
		"9999-12-31 23:59",          // read in New York: 10000 in UTC
		"Fri Dec 31 23:59:59 EST 9999",
	}
	accepted := map[string]string{ // input: as shown, in the shop's zone
		"0001-01-02T00:00:00Z":      "0001-01-02T00:00:00Z", // local mean time has no whole-minute offset: shown in UTC
		"9999-12-31T18:59:59-05:00": "9999-12-31T18:59:59-05:00",
		"9999-12-31 18:59":          "9999-12-31T18:59:00-05:00",
	}
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, s := range refused {
			r := e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "t", "published_at": s}})
			fieldError(t, r, "published_at")
		}
		art := e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "host"}}).Expect(t, 201).Object(t, "article")
		com := e.Do("POST", "/web/comments.json", map[string]any{"comment": map[string]any{
			"body": "hi", "author": "Ann", "email": "ann@example.com", "blog_id": 241253187, "article_id": idOf(art)}}).
			Expect(t, 201).Object(t, "comment")
		comPath := fmt.Sprintf("/web/comments/%d.json", idOf(com))
		for _, s := range refused {
			fieldError(t, e.Do("PUT", comPath, map[string]any{"comment": map[string]any{"published_at": s}}), "published_at")
		}
		for in, shown := range accepted {
			a := e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "edge", "published_at": in}}).
				Expect(t, 201).Object(t, "article")
			p := fmt.Sprintf("%s/%d.json", news, idOf(a))
			got := e.Do("GET", p, nil).Expect(t, 200).Object(t, "article")["published_at"]
			if want := strings.Replace(shown, "Z", "+00:00", 1); got != want {
				t.Errorf("published_at %q reads back as %v, want %s", in, got, want)
			}
			e.Do("GET", news+".json?limit=250", nil).Expect(t, 200)
			e.Do("PUT", p, map[string]any{"article": map[string]any{"title": "edge 2"}}).Expect(t, 200)
			e.Do("DELETE", p, nil).Expect(t, 200)

			c := e.Do("PUT", comPath, map[string]any{"comment": map[string]any{"published_at": in}}).Expect(t, 200).Object(t, "comment")
			if want := strings.Replace(shown, "Z", "+00:00", 1); c["published_at"] != want {
				t.Errorf("comment published_at %q reads back as %v, want %s", in, c["published_at"], want)
			}
			e.Do("GET", "/web/comments.json?limit=250", nil).Expect(t, 200)
		}
		for _, q := range []string{"published_at_min=0000-06-01", "created_at_max=9999-12-31T23:59:59-01:00"} {
			e.Do("GET", "/web/comments.json?"+q, nil).Expect(t, 400)
		}
	}, api.Blogs)
}

// A record stored with a year outside 0-9999 before the rule existed still
// reads, and can be deleted (articles) or removed (comments).
func TestStoredWideYearsStayDeletable(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "old"}}).Expect(t, 201).Object(t, "article")
		c := e.Do("POST", "/web/comments.json", map[string]any{"comment": map[string]any{
			"body": "hi", "author": "Ann", "email": "ann@example.com", "blog_id": 241253187, "article_id": idOf(a)}}).
			Expect(t, 201).Object(t, "comment")
		corrupt := func(k store.Key, year string) {
			it, err := e.Deps.Store.Get(t.Context(), k)
			if err != nil {
				t.Fatal(err)
			}
			i := bytes.Index(it.Data, []byte(`"published_at":"`)) + len(`"published_at":"`)
			it.Data = append(it.Data[:i:i], append([]byte(year+"-12-31T23:00:00+00:00"), it.Data[i+len("2006-01-02T15:04:05+00:00"):]...)...)
			if err := e.Deps.Store.Transact(t.Context(), store.Put(it, store.Always, 0)); err != nil {
				t.Fatal(err)
			}
		}
		corrupt(articles.Key(idOf(a)), "-0001")
		corrupt(comments.Key(idOf(c)), "10000")
		p := fmt.Sprintf("%s/%d.json", news, idOf(a))
		e.Do("GET", p, nil).Expect(t, 200)
		e.Do("GET", news+".json", nil).Expect(t, 200)
		e.Do("POST", fmt.Sprintf("/web/comments/%d/remove.json", idOf(c)), nil).Expect(t, 200)
		e.Do("DELETE", p, nil).Expect(t, 200)
	}, api.Blogs)
}

// Ids beyond 2^53-1 in a body are 422 naming the field, never a panic; an
// integral number written 5.0 is an integer, as JSON clients send it.
func TestBodyIDsAreChecked(t *testing.T) {
	huge := "10000000000000000"
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		fieldError(t, e.Do("POST", "/com/collects.json", `{"collect":{"product_id":632910392,"collection_id":`+huge+`}}`), "collection_id")
		fieldError(t, e.Do("POST", "/com/collects.json", `{"collect":{"product_id":-`+huge+`,"collection_id":1}}`), "product_id")
		fieldError(t, e.Do("POST", "/com/products/632910392/variants.json", `{"variant":{"option1":"Blue","image_id":`+huge+`}}`), "image_id")
		fieldError(t, e.Do("POST", "/web/comments.json", `{"comment":{"body":"b","author":"a","email":"a@example.com","blog_id":241253187,"article_id":1`+huge+`}}`), "article_id")
		fieldError(t, e.Do("POST", "/web/comments.json", `{"comment":{"body":"b","author":"a","email":"a@example.com","blog_id":9.9e99,"article_id":1}}`), "blog_id")

		v := e.Do("POST", "/com/products/632910392/variants.json", `{"variant":{"option1":"Green","inventory_quantity":5.0,"grams":1e2}}`).
			Expect(t, 201).Object(t, "variant")
		if v["inventory_quantity"] != 5.0 || v["grams"] != 100.0 {
			t.Fatalf("integral numbers not taken as integers: %v %v", v["inventory_quantity"], v["grams"])
		}
		fieldError(t, e.Do("POST", "/com/products/632910392/variants.json", `{"variant":{"option1":"Teal","inventory_quantity":5.5}}`), "inventory_quantity")
		// Exponents too large to expand are refused as they are, never expanded.
		huge := `{"variant":{"option1":"Gray","inventory_quantity":1e999999,"ignored":[` + strings.Repeat("1e999999,", 2000) + `1]}}`
		fieldError(t, e.Do("POST", "/com/products/632910392/variants.json", huge), "inventory_quantity")
	}, api.Collections, api.Variants, api.Blogs)
}

// An id has one spelling in a path; anything else, and any path that is not
// clean, is the 404 JSON of an unknown path, never a redirect.
func TestOnePathPerResource(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		red := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": "/a", "target": "/b"}}).
			Expect(t, 201).Object(t, "redirect")
		id := idOf(red)
		e.Do("GET", fmt.Sprintf("/web/redirects/%d.json", id), nil).Expect(t, 200)
		for _, p := range []string{
			fmt.Sprintf("/web/redirects/+%d.json", id),
			fmt.Sprintf("/web/redirects/%%2B%d.json", id),
			fmt.Sprintf("/web/redirects/0%d.json", id),
			fmt.Sprintf("/web/redirects/%d%%20.json", id),
			"//web/redirects.json",
			"/web//redirects.json",
			"/web/comments/%2e%2e.json",
			"/web/redirects/../redirects.json",
			fmt.Sprintf("/web/redirects.json?since_id=+%d", id),
		} {
			r := e.Do("GET", p, nil)
			if strings.Contains(p, "since_id") {
				r.Expect(t, 400)
			} else {
				if r.Status != 404 {
					t.Fatalf("%s: %d %s", p, r.Status, r.Body)
				}
			}
			if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("%s: Content-Type %q", p, ct)
			}
			r.JSON(t)
		}
	}, api.Redirects, api.Blogs)
}

// Any number of records with the longest title get distinct handles of at
// most 255 characters.
func TestLongestTitlesGetDistinctHandles(t *testing.T) {
	title := strings.Repeat("a", 255)
	cases := []struct {
		path, wrapper, field string
		extra                map[string]any
	}{
		{"/web/pages.json", "page", "title", nil},
		{news + ".json", "article", "title", nil},
		{"/com/custom_collections.json", "custom_collection", "title", nil},
		{"/com/smart_collections.json", "smart_collection", "title", map[string]any{
			"rules": []any{map[string]any{"column": "title", "relation": "equals", "condition": "x"}}}},
		{"/admin/fulfillment_services.json", "fulfillment_service", "name", map[string]any{"inventory_management": false}},
	}
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range cases {
			seen := map[string]bool{}
			for i := range 5 {
				body := map[string]any{c.field: title}
				for k, v := range c.extra {
					body[k] = v
				}
				if c.wrapper == "fulfillment_service" {
					body[c.field] = title[:254] + string("!?.,;"[i]) // distinct names, one handle base
				}
				o := e.Do("POST", c.path, map[string]any{c.wrapper: body}).Expect(t, 201).Object(t, c.wrapper)
				h, _ := o["handle"].(string)
				if len(h) == 0 || len(h) > 255 || seen[h] {
					t.Fatalf("%s #%d: handle %q (len %d) empty, too long or repeated", c.path, i+1, h, len(h))
				}
				seen[h] = true
			}
		}
	}, api.Pages, api.Blogs, api.Collections, api.FulfillmentServices)
}

// Where private destinations are not allowed (AWS), a webhook address or a
// callback_url naming a refused address is 422 at once.
func TestRefusedDestinationsAreRefusedAtCreate(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		e.Change(func(d *platform.Deps) { d.Outbound = outbound.New(false) })
		for _, a := range []string{"https://[2002:c0a8:101::1]/hook", "http://169.254.169.254/latest", "https://localhost/x"} {
			fieldError(t, e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{"topic": "orders/create", "address": a}}), "address")
			fieldError(t, e.Do("POST", "/admin/fulfillment_services.json", map[string]any{"fulfillment_service": map[string]any{
				"name": "Ship " + a, "callback_url": a, "inventory_management": false}}), "callback_url")
		}
		wh := e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{"topic": "orders/create", "address": "https://example.com/hook"}}).
			Expect(t, 201).Object(t, "webhook")
		fieldError(t, e.Do("PUT", fmt.Sprintf("/admin/webhooks/%d.json", idOf(wh)), map[string]any{"webhook": map[string]any{"address": "http://[fec0::1]/"}}), "address")
	}, api.Webhooks, api.FulfillmentServices)
}

// A page may skip at most httpapi.MaxOffset records: deeper pages would read
// every record before them, so they are 400 naming page, on every list.
func TestDeepPagesAreRefused(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, list := range []string{"/web/redirects.json", "/web/pages.json", "/com/events.json", "/admin/webhooks.json"} {
			e.Do("GET", list+"?limit=250&page=101", nil).Expect(t, http.StatusOK) // skips exactly 25,000
			e.Do("GET", list+"?limit=1&page=25001", nil).Expect(t, http.StatusOK)
			for _, q := range []string{"?limit=250&page=102", "?page=502", "?limit=1&page=25002"} {
				r := e.Do("GET", list+q, nil).Expect(t, http.StatusBadRequest)
				errs, _ := r.JSON(t)["errors"].(map[string]any)
				if _, ok := errs["page"]; !ok {
					t.Fatalf("GET %s%s: 400 does not name page: %s", list, q, r.Body)
				}
			}
		}
	}, api.Groups...)
}

// Control characters, lone surrogates and line breaks in single-line
// fields are refused with a 422 naming the field, by every resource, and
// nothing is stored (issue 25, finding 8); text that may span lines keeps
// tab and newline.
func TestControlCharactersAreRefused(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct{ path, body, field string }{
			{"/web/redirects.json", `{"redirect":{"path":"/a\u0000b","target":"/x"}}`, "path"},
			{"/web/redirects.json", `{"redirect":{"path":"/a\nb","target":"/x"}}`, "path"},
			{"/web/redirects.json", `{"redirect":{"path":"/a","target":"/x\u001b"}}`, "target"},
			{"/web/pages.json", `{"page":{"title":"Hello\u0000"}}`, "title"},
			{"/web/pages.json", `{"page":{"title":"Hi \ud800"}}`, "title"},
			{"/web/pages.json", `{"page":{"title":"Hi\tthere"}}`, "title"},
			{"/web/pages.json", `{"page":{"title":"Hi","body_html":"<p>\u0007</p>"}}`, "body_html"},
			{"/web/pages.json", `{"page":{"title":"Hi","metafields":[{"namespace":"inv","key":"k\u0000ey","value":"1","value_type":"string"}]}}`, "metafields.key"},
			{"/admin/metafields.json", `{"metafield":{"namespace":"inventory","key":"ware\u0000house","value":"1","value_type":"integer"}}`, "key"},
			{"/admin/metafields.json", `{"metafield":{"namespace":"inv\u007fentory","key":"warehouse","value":"1","value_type":"integer"}}`, "namespace"},
			{"/admin/metafields.json", `{"metafield":{"namespace":"inventory","key":"ware\thouse","value":"1","value_type":"integer"}}`, "key"},
			{"/admin/metafields.json", `{"metafield":{"namespace":"inventory","key":"warehouse","value":"\udc00","value_type":"string"}}`, "value"},
			{"/com/customers/207119551/addresses.json", `{"address":{"address1":"1 Main\u0000St","city":"Ottawa"}}`, "address1"},
			{"/com/customers/207119551/addresses.json", `{"address":{"address1":"1 Main St","city":"Ott\u0085awa"}}`, "city"},
		} {
			fieldError(t, e.Do("POST", c.path, c.body), c.field)
		}
		e.Do("GET", "/web/redirects/count.json", nil).Expect(t, 200)
		if n := e.Do("GET", "/web/pages/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 0.0 {
			t.Errorf("%v pages stored", n)
		}
		if n := e.Do("GET", "/admin/metafields/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 0.0 {
			t.Errorf("%v shop metafields stored", n)
		}
		if n := len(e.Do("GET", "/com/customers/207119551/addresses.json", nil).Expect(t, 200).List(t, "addresses")); n != 1 {
			t.Errorf("%d addresses, want the seeded one", n)
		}
		// Multi-line text keeps tab, newline and carriage return; other
		// characters outside ASCII are kept as sent.
		p := e.Do("POST", "/web/pages.json", `{"page":{"title":"Caf\u00e9 \ud83d\ude00","body_html":"<p>a\tb\r\nc</p>"}}`).Expect(t, 201).Object(t, "page")
		if p["title"] != "Café 😀" || p["body_html"] != "<p>a\tb\r\nc</p>" {
			t.Errorf("page %q %q", p["title"], p["body_html"])
		}
	}, api.Redirects, api.Pages, api.Metafields, api.Customers)
}

// A served path asked with a method it is not served with is 405 JSON with
// Allow; an unknown path stays 404, with any method.
func TestWrongMethodIsNotAllowed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct{ method, path, allow string }{
			{"PATCH", "/web/redirects.json", "GET, HEAD, POST"},
			{"TRACE", "/web/redirects.json", "GET, HEAD, POST"},
			{"OPTIONS", "/web/redirects.json", "GET, HEAD, POST"},
			{"POST", "/web/redirects/1.json", "GET, HEAD, PUT, DELETE"},
			{"PUT", "/web/comments/1/spam.json", "POST"},
			// count is its GET route's path, though PUT and DELETE {id} match it too
			{"PUT", "/web/redirects/count.json", "GET, HEAD"},
			{"DELETE", "/web/redirects/count.json", "GET, HEAD"},
			{"OPTIONS", "/web/redirects/count.json", "GET, HEAD"},
			// and so is a count under a parent, though PUT and DELETE .../{id} match it
			{"PUT", "/web/blogs/241253187/articles/count.json", "GET, HEAD"},
			{"DELETE", "/web/blogs/241253187/articles/count.json", "GET, HEAD"},
		} {
			r := e.Do(c.method, c.path, nil)
			if r.Status != http.StatusMethodNotAllowed || r.Header.Get("Allow") != c.allow {
				t.Errorf("%s %s: %d, Allow %q; want 405, Allow %q", c.method, c.path, r.Status, r.Header.Get("Allow"), c.allow)
			}
			if got := r.JSON(t)["errors"]; got != "Method Not Allowed" {
				t.Errorf("%s %s: errors %v", c.method, c.path, got)
			}
		}
		for _, p := range []string{"/web/nothing.json", "/web/redirects/1/nothing.json"} {
			if r := e.Do("PATCH", p, nil); r.Status != http.StatusNotFound || r.Header.Get("Allow") != "" {
				t.Errorf("PATCH %s: %d, Allow %q; want 404", p, r.Status, r.Header.Get("Allow"))
			}
		}
	}, api.Redirects, api.Blogs)
}

// A field the document allows a value of or nothing refuses null (422
// naming it) rather than take it for absent; a nested one is named by its
// path.
func TestNullIsRefusedWhereTheDocumentRefusesIt(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		fieldError(t, e.Do("POST", "/com/custom_collections.json", `{"custom_collection":{"title":"A","sort_order":null}}`), "sort_order")
		fieldError(t, e.Do("POST", "/com/smart_collections.json", `{"smart_collection":{"title":"A","sort_order":null,"rules":[{"column":"title","relation":"equals","condition":"a"}]}}`), "sort_order")
		fieldError(t, e.Do("POST", "/com/products/632910392/variants.json", `{"variant":{"option1":"Null","weight_unit":null}}`), "weight_unit")
		fieldError(t, e.Do("POST", "/web/themes.json", `{"theme":{"name":"Null","role":null}}`), "role")
		fieldError(t, e.Do("POST", "/admin/fulfillment_services.json", `{"fulfillment_service":{"name":"Null","tracking_support":null}}`), "tracking_support")
		fieldError(t, e.Do("POST", "/admin/metafields.json", `{"metafield":{"namespace":"n","key":"k","value":"v","value_type":null}}`), "value_type")
		fieldError(t, e.Do("POST", "/web/pages.json", `{"page":{"title":"A","metafields":[{"namespace":"n","key":"k","value":"v","value_type":null}]}}`), "metafields.value_type")
		// On an update, where null would have been taken for "unchanged".
		created := func(path, wrapper, body string) string {
			return fmt.Sprintf("%s/%d.json", strings.TrimSuffix(path, ".json"), idOf(e.Do("POST", path, body).Expect(t, 201).Object(t, wrapper)))
		}
		page := created("/web/pages.json", "page", `{"page":{"title":"A"}}`)
		redirect := created("/web/redirects.json", "redirect", `{"redirect":{"path":"/null","target":"/b"}}`)
		tag := created("/web/script_tags.json", "script_tag", `{"script_tag":{"event":"onload","src":"https://js.example.org/a.js"}}`)
		hook := created("/admin/webhooks.json", "webhook", `{"webhook":{"topic":"orders/create","address":"https://hooks.example.com/a"}}`)
		collection := created("/com/custom_collections.json", "custom_collection", `{"custom_collection":{"title":"B"}}`)
		article := created(news+".json", "article", `{"article":{"title":"A"}}`)
		service := created("/admin/fulfillment_services.json", "fulfillment_service", `{"fulfillment_service":{"name":"Nulls"}}`)
		commented := idOf(e.Do("POST", news+".json", `{"article":{"title":"Commented"}}`).Expect(t, 201).Object(t, "article"))
		comment := created("/web/comments.json", "comment", fmt.Sprintf(
			`{"comment":{"body":"Hi","author":"Ann","email":"ann@example.com","blog_id":241253187,"article_id":%d}}`, commented))
		country := created("/com/countries.json", "country", `{"country":{"code":"DE"}}`)
		smart := created("/com/smart_collections.json", "smart_collection",
			`{"smart_collection":{"title":"S","rules":[{"column":"title","relation":"contains","condition":"a"}]}}`)
		for _, c := range []struct{ path, body, field string }{
			{page, `{"page":{"title":null}}`, "title"},
			{page, `{"page":{"published":null}}`, "published"},
			{collection, `{"custom_collection":{"title":null}}`, "title"},
			{redirect, `{"redirect":{"target":null}}`, "target"},
			{tag, `{"script_tag":{"src":null}}`, "src"},
			{tag, `{"script_tag":{"display_scope":null}}`, "display_scope"},
			{hook, `{"webhook":{"topic":null}}`, "topic"},
			{article, `{"article":{"tags":null}}`, "tags"},
			{page, `{"page":{"metafields":null}}`, "metafields"},
			{"/com/variants/808950810.json", `{"variant":{"weight":null}}`, "weight"},
			{"/com/variants/808950810.json", `{"variant":{"old_inventory_quantity":null}}`, "old_inventory_quantity"},
			{service, `{"fulfillment_service":{"requires_shipping_method":null}}`, "requires_shipping_method"},
			{comment, `{"comment":{"body":null}}`, "body"},
			{comment, `{"comment":{"author":null}}`, "author"},
			{page, `{"page":{"author":null}}`, "author"},
			{article, `{"article":{"author":null}}`, "author"},
			{article, `{"article":{"handle":null}}`, "handle"},
			{article, `{"article":{"body_html":null}}`, "body_html"},
			{"/com/variants/808950810.json", `{"variant":{"inventory_quantity_adjustment":null}}`, "inventory_quantity_adjustment"},
			{smart, `{"smart_collection":{"handle":null}}`, "handle"},
			{country, `{"country":{"price_based_shipping_rates":null}}`, "price_based_shipping_rates"},
		} {
			fieldError(t, e.Do("PUT", c.path, c.body), c.field)
		}
		fieldError(t, e.Do("POST", "/web/themes.json", `{"theme":{"name":"A","src":null}}`), "src")
		fieldError(t, e.Do("POST", "/com/countries.json", `{"country":{"code":"FR","weight_based_shipping_rates":null}}`), "weight_based_shipping_rates")
		// Where the document allows null, it still means what it meant.
		e.Do("POST", "/com/custom_collections.json", `{"custom_collection":{"title":"A","template_suffix":null}}`).Expect(t, 201)
	}, api.Collections, api.Variants, api.Themes, api.FulfillmentServices, api.Metafields, api.Pages,
		api.Redirects, api.ScriptTags, api.Webhooks, api.Blogs, api.Countries)
}

// A query parameter given with an empty value, or twice, is 400 naming it,
// never taken for absent or for its first value (either would answer a list
// the client did not ask for).
func TestEmptyOrRepeatedQueryValuesAreRefused(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct{ path, param string }{
			{"/web/redirects.json?limit=", "limit"},
			{"/web/redirects.json?limit=2&updated_at_min=", "updated_at_min"},
			{"/web/redirects/count.json?path=", "path"},
			{"/web/redirects.json?page_info=", "page_info"},
			{"/admin/fulfillment_services.json?scope=", "scope"},
			{"/web/script_tags.json?src=null&src=null", "src"},
			{"/web/script_tags/count.json?limit=2&src=a&src=b", "src"},
			{"/web/redirects.json?path=%2Fa&limit=1&limit=2", "limit"},
		} {
			r := e.Do("GET", c.path, nil).Expect(t, http.StatusBadRequest)
			if errs, _ := r.JSON(t)["errors"].(map[string]any); errs[c.param] == nil {
				t.Errorf("%s: 400 does not name %s: %s", c.path, c.param, r.Body)
			}
		}
		e.Do("GET", "/web/redirects.json?limit=2", nil).Expect(t, http.StatusOK)
	}, api.Redirects, api.FulfillmentServices, api.ScriptTags)
}
