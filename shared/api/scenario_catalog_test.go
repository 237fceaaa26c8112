package api_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/seed"
)

// tooLargeImageBody is a body over the limit of the routes taking an image
// attachment (collections).
var tooLargeImageBody = `{"x":"` + strings.Repeat("a", images.MaxBody) + `"}`

// collectionsRun carries what the collections steps share: the shop's
// frontpage and the custom (c), smart (s) collections and collect (k) they make.
type collectionsRun struct {
	*scenario
	fp, c1, c2, s1, s2, s3, k1 int64
	metafield, attachment      M
}

const (
	customList, customCount   = "/com/custom_collections.json", "/com/custom_collections/count.json"
	smartList, smartCount     = "/com/smart_collections.json", "/com/smart_collections/count.json"
	collectList, collectCount = "/com/collects.json", "/com/collects/count.json"
)

func (collectionsRun) custom(id int64) string {
	return fmt.Sprintf("/com/custom_collections/%d.json", id)
}
func (collectionsRun) smart(id int64) string {
	return fmt.Sprintf("/com/smart_collections/%d.json", id)
}
func (collectionsRun) collect(id int64) string { return fmt.Sprintf("/com/collects/%d.json", id) }

func (collectionsRun) rule(column, relation string, condition any) M {
	return M{"column": column, "relation": relation, "condition": condition}
}

// count is a collection's products_count, -1 when the request failed.
func (s *collectionsRun) count(res *apitest.Response, wrapper string) float64 {
	s.t.Helper()
	if res.Status >= 300 {
		return -1
	}
	n, _ := res.Object(s.t, wrapper)["products_count"].(float64)
	return n
}

func (s *scenario) collections(t *testing.T) {
	s.t = t
	const touch = `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"products": [{"id": 921728736, "title": "IPod Touch 8GB", "handle": "ipod-touch", "vendor": "Apple", "product_type": "Cult Products",
			"variants": [{"id": 447654529, "title": "Black", "option1": "Black", "price": "99.00", "inventory_quantity": 3}]}]}`
	if _, _, err := seed.Load(context.Background(), s.env.Deps.Store, s.env.Deps.Clock, []byte(touch)); err != nil {
		t.Fatal(err)
	}
	// Every shop starts with the frontpage collection.
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=frontpage", nil, 200), "custom_collections", 1)
	r := &collectionsRun{scenario: s, fp: int64(collection.FrontpageID),
		metafield:  M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"},
		attachment: M{"attachment": base64.StdEncoding.EncodeToString(tinyPNG(t, 2, 3)), "filename": "cover.png"}}
	r.createCustom()
	r.listCustom()
	r.countCustom()
	r.getCustom()
	r.updateCustom()
	r.createSmart()
	r.listSmart()
	r.countSmart()
	r.getSmart()
	r.orderSmart()
	r.updateSmart()
	r.createCollects()
	r.listCollects()
	r.getDeleteCollects()
	r.deleteCollections()
}

// Custom collections: create.
func (s *collectionsRun) createCustom() {
	t := s.t
	validCustom := M{"custom_collection": M{"title": "Shoes"}}
	r1 := s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "IPods", "body_html": "<p>The best selling ipod ever</p>",
		"sort_order": "manual", "template_suffix": "wide", "collects": []any{M{"product_id": nanoProduct}, M{"product_id": nanoProduct}},
		"image": s.attachment, "metafields": []any{s.metafield}}}, 201)
	s.c1 = s.id(r1, "custom_collection")
	if c := r1.Object(t, "custom_collection"); c["handle"] != "ipods" || c["published_at"] == nil || c["products_count"] != 1.0 ||
		c["sort_order"] != "manual" || c["template_suffix"] != "wide" || c["image"] == nil {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "IPods", "published": false, "body_html": nil,
		"template_suffix": nil, "image": nil}}, 201)
	s.c2 = s.id(r2, "custom_collection")
	if c := r2.Object(t, "custom_collection"); c["handle"] != "ipods-1" || c["published_at"] != nil || c["products_count"] != 0.0 ||
		c["sort_order"] != "alpha-asc" || c["body_html"] != nil || c["image"] != nil {
		t.Errorf("create hidden: %s", r2.Body)
	}
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "handle": "frontpage"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "sort_order": "random"}}, 422), "sort_order")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "collects": []any{M{"product_id": 5}}}}, 422), "collects")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "collects": []any{M{}}}}, 422), "collects")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "image": "cover.png"}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "image": M{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", customList, M{"custom_collections": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", customList, M{"custom_collection": []any{}}, 400)
	s.do(demoToken, "POST", customList, `{"custom_collection": {"title": }`, 400)
	s.do(demoToken, "POST", customList, tooLargeImageBody, 413)
	s.do(noToken, "POST", customList, validCustom, 401)
	s.do(badToken, "POST", customList, validCustom, 401)
	s.do(roToken, "POST", customList, validCustom, 403)
	s.do(noScopeToken, "POST", customList, validCustom, 403)
}

// Custom collections: list (the frontpage first).
func (s *collectionsRun) listCustom() {
	t := s.t
	if res := s.do(demoToken, "GET", customList, nil, 200); res.Status == 200 {
		items := res.List(t, "custom_collections")
		if len(items) != 3 || items[0].(map[string]any)["id"] != float64(s.fp) {
			t.Errorf("list: %s, want 3 collections, the frontpage first", res.Body)
		}
		for _, it := range items {
			if _, ok := it.(map[string]any)["products_count"]; ok {
				t.Errorf("products_count in a list item: %v", it)
			}
		}
	}
	s.wantLen(s.do(demoToken, "GET", customList+"?limit=2&page=2", nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?since_id="+itoa(s.fp), nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?title=IPods", nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=ipods-1", nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=nowhere", nil, 200), "custom_collections", 0)
	s.wantLen(s.do(demoToken, "GET", customList+"?product_id="+itoa(nanoProduct), nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?product_id=0&published_status=published", nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?published_status=unpublished", nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "custom_collections", 3)
	s.wantLen(s.do(demoToken, "GET", customList+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00")+"&updated_at_max=2999-02-01", nil, 200), "custom_collections", 0)
	s.wantLen(s.do(demoToken, "GET", customList+"?published_at_min=2000-01-01&published_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?fields=id,handle,image&limit=250", nil, 200), "custom_collections", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x", "product_id=x", "product_id=-1",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", customList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", customList, nil, 401)
	s.do(roToken, "GET", customList, nil, 403)
	s.do(noScopeToken, "GET", customList, nil, 403)
}

// Custom collections: count.
func (s *collectionsRun) countCustom() {
	s.wantCount(s.do(demoToken, "GET", customCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", customCount+"?title=IPods", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", customCount+"?handle=ipods", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", customCount+"?product_id="+itoa(nanoProduct), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", customCount+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", customCount+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", customCount+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", customCount+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", customCount+"?product_id=abc", nil, 400)
	s.do(noToken, "GET", customCount, nil, 401)
	s.do(roToken, "GET", customCount, nil, 403)
}

// Custom collections: get.
func (s *collectionsRun) getCustom() {
	t := s.t
	if n := s.count(s.do(demoToken, "GET", s.custom(s.c1), nil, 200), "custom_collection"); n != 1 {
		t.Errorf("products_count %v, want 1", n)
	}
	s.do(demoToken, "GET", s.custom(s.fp), nil, 200)
	s.do(demoToken, "GET", s.custom(s.c2)+"?fields=id,title,products_count", nil, 200)
	s.do(demoToken, "GET", s.custom(999999999), nil, 404)
	s.do(demoToken, "GET", "/com/custom_collections/abc.json", nil, 404)
	s.do(noToken, "GET", s.custom(s.c1), nil, 401)
	s.do(noScopeToken, "GET", s.custom(s.c1), nil, 403)
}

// Custom collections: update.
func (s *collectionsRun) updateCustom() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.custom(s.c2), M{"custom_collection": M{"id": s.c2, "title": "Music", "published": true,
		"sort_order": "best-selling", "metafields": []any{s.metafield}, "collects": []any{M{"product_id": nanoProduct}}}}, 200); res.Status == 200 {
		if c := res.Object(t, "custom_collection"); c["title"] != "Music" || c["handle"] != "ipods-1" || c["published_at"] == nil ||
			c["sort_order"] != "best-selling" || c["products_count"] != 0.0 {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"handle": "ipods-classic", "template_suffix": "",
		"body_html": nil, "image": nil}}, 200); res.Status == 200 {
		if c := res.Object(t, "custom_collection"); c["handle"] != "ipods-classic" || c["template_suffix"] != nil || c["body_html"] != nil ||
			c["image"] != nil || c["products_count"] != 1.0 {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=ipods", nil, 200), "custom_collections", 0)
	s.wantFields(s.do(demoToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"handle": "ipods-1"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"sort_order": "nope"}}, 422), "sort_order")
	s.wantFields(s.do(demoToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"image": []any{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.do(demoToken, "PUT", s.custom(999999999), M{"custom_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", "/com/custom_collections/abc.json", M{"custom_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", s.custom(s.c1), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", s.custom(s.c1), "not json", 400)
	s.do(demoToken, "PUT", s.custom(s.c1), tooLargeImageBody, 413)
	s.do(noToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", s.custom(s.c1), M{"custom_collection": M{"title": "x"}}, 403)
}

// Smart collections: create (membership is computed before the answer).
func (s *collectionsRun) createSmart() {
	t := s.t
	validSmart := M{"smart_collection": M{"title": "Boots"}}
	r := s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "Pricey", "sort_order": "price-desc",
		"rules": []any{s.rule("variant_price", "greater_than", "150")}, "disjunctive": false}}, 201)
	s.s1 = s.id(r, "smart_collection")
	if c := r.Object(t, "smart_collection"); c["handle"] != "pricey" || c["products_count"] != 1.0 || c["published_at"] == nil ||
		c["sort_order"] != "price-desc" || len(asSlice(c["rules"])) != 1 {
		t.Errorf("create: %s", r.Body)
	}
	r = s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "Apple", "published": false, "image": s.attachment,
		"rules": []any{s.rule("vendor", "equals", "apple"), s.rule("variant_inventory", "less_than", 5)}, "disjunctive": true}}, 201)
	s.s2 = s.id(r, "smart_collection")
	if c := r.Object(t, "smart_collection"); c["products_count"] != 2.0 || c["published_at"] != nil || c["image"] == nil || c["disjunctive"] != true {
		t.Errorf("create disjunctive: %s", r.Body)
	}
	r = s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "Empty", "handle": "empty", "rules": nil,
		"body_html": "<p>Nothing yet.</p>", "template_suffix": "plain", "image": nil}}, 201)
	s.s3 = s.id(r, "smart_collection")
	if c := r.Object(t, "smart_collection"); c["products_count"] != 0.0 || len(asSlice(c["rules"])) != 0 || c["template_suffix"] != "plain" {
		t.Errorf("create without rules: %s", r.Body)
	}
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"rules": []any{}}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{s.rule("colour", "equals", "red")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{s.rule("variant_price", "contains", "1")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{s.rule("variant_price", "less_than", "cheap")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{s.rule("title", "equals", " ")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": "all"}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "handle": "ipods-1"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "handle": "No"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "sort_order": "random"}}, 422), "sort_order")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "image": M{"attachment": "!!"}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "disjunctive": "yes"}}, 422), "disjunctive")
	s.do(demoToken, "POST", smartList, M{"smart_collections": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", smartList, `{"smart_collection": `, 400)
	s.do(demoToken, "POST", smartList, tooLargeImageBody, 413)
	s.do(noToken, "POST", smartList, validSmart, 401)
	s.do(roToken, "POST", smartList, validSmart, 403)
}

// Smart collections: list.
func (s *collectionsRun) listSmart() {
	s.wantLen(s.do(demoToken, "GET", smartList, nil, 200), "smart_collections", 3)
	s.wantLen(s.do(demoToken, "GET", smartList+"?limit=2&page=2", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?since_id="+itoa(min(s.s1, s.s2, s.s3)), nil, 200), "smart_collections", 2)
	s.wantLen(s.do(demoToken, "GET", smartList+"?title=Apple", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?handle=pricey", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?handle=ipods-1", nil, 200), "smart_collections", 0) // a custom collection's
	s.wantLen(s.do(demoToken, "GET", smartList+"?product_id="+itoa(nanoProduct), nil, 200), "smart_collections", 2)
	s.wantLen(s.do(demoToken, "GET", smartList+"?product_id="+itoa(touchProduct), nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?published_status=unpublished", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?created_at_min=2999-01-01", nil, 200), "smart_collections", 3) // ignored
	s.wantLen(s.do(demoToken, "GET", smartList+"?updated_at_min=2000-01-01&updated_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "smart_collections", 3)
	s.wantLen(s.do(demoToken, "GET", smartList+"?published_at_min=2000-01-01&published_at_max=2999-01-01", nil, 200), "smart_collections", 2)
	s.wantLen(s.do(demoToken, "GET", smartList+"?fields=id,rules,products_count", nil, 200), "smart_collections", 3)
	for _, q := range []string{"limit=0", "page=x", "since_id=-1", "product_id=-1", "published_status=sometimes",
		"created_at_max=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", smartList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", smartList, nil, 401)
	s.do(noScopeToken, "GET", smartList, nil, 403)
}

// Smart collections: count.
func (s *collectionsRun) countSmart() {
	s.wantCount(s.do(demoToken, "GET", smartCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?product_id="+itoa(nanoProduct), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?handle=empty", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?title=Pricey&published_status=published", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?created_at_min=2000-01-01&created_at_max=2000-01-02", nil, 200), 3)
	s.do(demoToken, "GET", smartCount+"?published_status=draft", nil, 400)
	s.do(noToken, "GET", smartCount, nil, 401)
	s.do(roToken, "GET", smartCount, nil, 403)
}

// Smart collections: get.
func (s *collectionsRun) getSmart() {
	s.do(demoToken, "GET", s.smart(s.s1), nil, 200)
	s.do(demoToken, "GET", s.smart(s.s2)+"?fields=id,image,rules", nil, 200)
	s.do(demoToken, "GET", s.smart(s.c1), nil, 404) // a custom collection
	s.do(demoToken, "GET", s.smart(999999999), nil, 404)
	s.do(noToken, "GET", s.smart(s.s1), nil, 401)
	s.do(noScopeToken, "GET", s.smart(s.s1), nil, 403)
}

// Smart collections: order (sort_order, and products[] first when manual).
func (s *collectionsRun) orderSmart() {
	order := func(id int64, q string) string { return fmt.Sprintf("/com/smart_collections/%d/order.json?%s", id, q) }
	s.do(demoToken, "PUT", order(s.s2, "sort_order=alpha-desc"), nil, 200)
	s.do(demoToken, "PUT", order(s.s2, "sort_order=manual&products[]="+itoa(nanoProduct)), M{}, 200)
	s.wantFields(s.do(demoToken, "PUT", order(s.s2, "products[]=1"), nil, 422), "products")
	s.wantFields(s.do(demoToken, "PUT", order(s.s2, "sort_order=sideways"), nil, 422), "sort_order")
	s.do(demoToken, "PUT", order(s.s2, "products[]=x"), nil, 400)
	s.do(demoToken, "PUT", order(999999999, "sort_order=manual"), nil, 404)
	s.do(noToken, "PUT", order(s.s2, "sort_order=manual"), nil, 401)
	s.do(roToken, "PUT", order(s.s2, "sort_order=manual"), nil, 403)
	s.do(demoToken, "PUT", order(s.s2, "sort_order=alpha-asc"), nil, 200)
}

// Smart collections: update (rules recompute the membership).
func (s *collectionsRun) updateSmart() {
	t := s.t
	if n := s.count(s.do(demoToken, "PUT", s.smart(s.s1), M{"smart_collection": M{"id": s.s1, "rules": []any{s.rule("variant_price", "greater_than", 500)}}}, 200), "smart_collection"); n != 0 {
		t.Errorf("products_count after raising the bar: %v, want 0", n)
	}
	if n := s.count(s.do(demoToken, "PUT", s.smart(s.s1), M{"smart_collection": M{"rules": []any{s.rule("variant_price", "greater_than", "150")}}}, 200), "smart_collection"); n != 1 {
		t.Errorf("products_count after lowering it: %v, want 1", n)
	}
	if res := s.do(demoToken, "PUT", s.smart(s.s2), M{"smart_collection": M{"disjunctive": false, "published": true, "image": nil, "title": "Apple, low stock"}}, 200); res.Status == 200 {
		if c := res.Object(t, "smart_collection"); c["products_count"] != 1.0 || c["published_at"] == nil || c["image"] != nil || c["handle"] != "apple" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.smart(s.s3), M{"smart_collection": M{"body_html": nil, "template_suffix": "", "handle": "still-empty", "sort_order": "manual"}}, 200); res.Status == 200 {
		if c := res.Object(t, "smart_collection"); c["body_html"] != nil || c["template_suffix"] != nil || c["handle"] != "still-empty" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", s.smart(s.s3), M{"smart_collection": M{"rules": []any{s.rule("tag", "greater_than", "1")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "PUT", s.smart(s.s3), M{"smart_collection": M{"handle": "pricey"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", s.smart(s.s3), M{"smart_collection": M{"title": ""}}, 422), "title")
	s.do(demoToken, "PUT", s.smart(999999999), M{"smart_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", s.smart(s.c1), M{"smart_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", s.smart(s.s3), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", s.smart(s.s3), tooLargeImageBody, 413)
	s.do(noToken, "PUT", s.smart(s.s3), M{"smart_collection": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", s.smart(s.s3), M{"smart_collection": M{"title": "x"}}, 403)
}

// Collects: create (custom collections only).
func (s *collectionsRun) createCollects() {
	t := s.t
	rc := s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": s.c1}}, 201)
	s.k1 = s.id(rc, "collect")
	if k := rc.Object(t, "collect"); k["position"] != 2.0 || k["sort_value"] != "0000000002" || k["featured"] != false {
		t.Errorf("create: %s", rc.Body)
	}
	s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": nanoProduct, "collection_id": s.fp}}, 201)
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{}}, 422), "product", "collection")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": 5, "collection_id": s.c1}}, 422), "product")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": nanoProduct, "collection_id": 5}}, 422), "collection")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": nanoProduct, "collection_id": s.c1}}, 422), "product_id")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": "x", "collection_id": s.c1}}, 422), "product_id")
	if res := s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": s.s1}}, 403); res.Status == 403 {
		if e, _ := res.JSON(t)["errors"].(string); e != "Cannot add products to a smart collection" {
			t.Errorf("smart collection: %s", res.Body)
		}
	}
	s.do(demoToken, "POST", collectList, M{"collects": M{}}, 400)
	s.do(demoToken, "POST", collectList, "[", 400)
	s.do(demoToken, "POST", collectList, tooLarge, 413)
	s.do(noToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": s.fp}}, 401)
	s.do(roToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": s.fp}}, 403)
}

// Collects: list and count (smart memberships are read-only collects).
func (s *collectionsRun) listCollects() {
	s.wantLen(s.do(demoToken, "GET", collectList, nil, 200), "collects", 3)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id="+itoa(s.c1), nil, 200), "collects", 2)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id="+itoa(s.s1), nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id="+itoa(s.s3), nil, 200), "collects", 0)
	s.wantLen(s.do(demoToken, "GET", collectList+"?product_id="+itoa(nanoProduct), nil, 200), "collects", 3) // c1, frontpage, s1
	s.wantLen(s.do(demoToken, "GET", collectList+"?product_id="+itoa(touchProduct)+"&collection_id="+itoa(s.s2), nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id=1", nil, 200), "collects", 0)
	s.wantLen(s.do(demoToken, "GET", collectList+"?limit=2&page=2", nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?since_id="+itoa(s.k1), nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?fields=id,position,sort_value", nil, 200), "collects", 3)
	for _, q := range []string{"limit=0", "page=0", "since_id=x", "product_id=x", "collection_id=-1"} {
		s.do(demoToken, "GET", collectList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", collectList, nil, 401)
	s.do(roToken, "GET", collectList, nil, 403)
	s.wantCount(s.do(demoToken, "GET", collectCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", collectCount+"?collection_id="+itoa(s.c1), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", collectCount+"?collection_id="+itoa(s.s2), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", collectCount+"?product_id="+itoa(touchProduct), nil, 200), 2) // c1, s2
	s.wantCount(s.do(demoToken, "GET", collectCount+"?product_id="+itoa(touchProduct)+"&collection_id="+itoa(s.fp), nil, 200), 0)
	s.do(demoToken, "GET", collectCount+"?product_id=abc", nil, 400)
	s.do(noToken, "GET", collectCount, nil, 401)
	s.do(noScopeToken, "GET", collectCount, nil, 403)
}

// Collects: get and delete.
func (s *collectionsRun) getDeleteCollects() {
	t := s.t
	s.do(demoToken, "GET", s.collect(s.k1), nil, 200)
	s.do(demoToken, "GET", s.collect(s.k1)+"?fields=id,collection_id", nil, 200)
	s.do(demoToken, "GET", s.collect(999999999), nil, 404)
	s.do(noToken, "GET", s.collect(s.k1), nil, 401)
	s.do(roToken, "GET", s.collect(s.k1), nil, 403)
	s.do(noToken, "DELETE", s.collect(s.k1), nil, 401)
	s.do(roToken, "DELETE", s.collect(s.k1), nil, 403)
	s.do(demoToken, "DELETE", s.collect(s.k1), nil, 200)
	s.do(demoToken, "DELETE", s.collect(s.k1), nil, 404)
	s.do(demoToken, "GET", s.collect(s.k1), nil, 404)
	if n := s.count(s.do(demoToken, "GET", s.custom(s.c1), nil, 200), "custom_collection"); n != 1 {
		t.Errorf("products_count after the delete: %v, want 1", n)
	}
}

// Deletes of either kind; then every create and delete was logged.
func (s *collectionsRun) deleteCollections() {
	s.do(noToken, "DELETE", s.custom(s.c2), nil, 401)
	s.do(roToken, "DELETE", s.custom(s.c2), nil, 403)
	s.do(demoToken, "DELETE", s.custom(s.c2), nil, 200)
	s.do(demoToken, "DELETE", s.custom(s.c2), nil, 404)
	s.do(demoToken, "DELETE", s.custom(s.s1), nil, 404) // a smart collection
	s.do(demoToken, "GET", s.custom(s.c2), nil, 404)
	s.do(noToken, "DELETE", s.smart(s.s3), nil, 401)
	s.do(noScopeToken, "DELETE", s.smart(s.s3), nil, 403)
	s.do(demoToken, "DELETE", s.smart(s.s3), nil, 200)
	s.do(demoToken, "DELETE", s.smart(s.s3), nil, 404)
	s.do(demoToken, "DELETE", s.smart(s.c1), nil, 404) // a custom collection
	s.wantCount(s.do(demoToken, "GET", customCount, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", smartCount, nil, 200), 2)
	// The handles of deleted collections are free again, for either kind.
	s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "handle": "ipods-1"}}, 201)
	s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "handle": "still-empty"}}, 201)

	// Every create and delete was logged: 7 creates (2 of them just
	// above) and 2 destroys.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Collection&verb=create", nil, 200), "events", 7)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Collection&verb=destroy", nil, 200), "events", 2)
}

// variantsRun carries what the variants steps share: the variant they add
// to the iPod Nano.
type variantsRun struct {
	*scenario
	yellow int64
}

const (
	variantList, variantCount               = "/com/products/632910392/variants.json", "/com/products/632910392/variants/count.json"
	unknownVariantList, unknownVariantCount = "/com/products/1/variants.json", "/com/products/1/variants/count.json"
)

func (variantsRun) one(id int64) string { return fmt.Sprintf("/com/variants/%d.json", id) }

// remove is a variant's path under its product, where it is deleted.
func (variantsRun) remove(productID, id int64) string {
	return fmt.Sprintf("/com/products/%d/variants/%d.json", productID, id)
}

func (s *scenario) variants(t *testing.T) {
	s.t = t
	r := &variantsRun{scenario: s}
	r.reads()
	r.create()
	r.update()
	r.membership()
	r.deleteAndLog()
}

// List, count and get the iPod Nano's variants.
func (s *variantsRun) reads() {
	t := s.t
	// list: in position order
	if res := s.do(demoToken, "GET", variantList, nil, 200); res.Status == 200 {
		items := res.List(t, "variants")
		if len(items) != 2 || items[0].(map[string]any)["id"] != float64(nanoPink) || items[0].(map[string]any)["price"] != "199.00" {
			t.Errorf("list: %s, want Pink and Red", res.Body)
		}
	}
	s.wantLen(s.do(demoToken, "GET", variantList+"?limit=1&page=2", nil, 200), "variants", 1)
	s.wantLen(s.do(demoToken, "GET", variantList+"?since_id="+itoa(nanoRed), nil, 200), "variants", 1)
	s.wantLen(s.do(demoToken, "GET", variantList+"?fields=id,price,position", nil, 200), "variants", 2)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=x"} {
		s.do(demoToken, "GET", variantList+"?"+q, nil, 400)
	}
	s.do(demoToken, "GET", unknownVariantList, nil, 404)
	s.do(noToken, "GET", variantList, nil, 401)
	s.do(roToken, "GET", variantList, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", variantCount, nil, 200), 2)
	s.do(demoToken, "GET", unknownVariantCount, nil, 404)
	s.do(noToken, "GET", variantCount, nil, 401)
	s.do(noScopeToken, "GET", variantCount, nil, 403)

	// get
	s.do(demoToken, "GET", s.one(nanoPink), nil, 200)
	s.do(demoToken, "GET", s.one(nanoRed)+"?fields=id,sku,inventory_quantity,position", nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/com/variants/abc.json", nil, 404)
	s.do(noToken, "GET", s.one(nanoPink), nil, 401)
	s.do(roToken, "GET", s.one(nanoPink), nil, 403)
}

// Create, with every field and with the defaults.
func (s *variantsRun) create() {
	t := s.t
	metafield := M{"namespace": "colours", "key": "hex", "value": "#ff0", "value_type": "string"}
	valid := M{"variant": M{"option1": "Green"}}
	r := s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "Yellow", "price": "1.5", "compare_at_price": 2, "sku": " YELLOW ",
		"barcode": nil, "weight": 0.5, "weight_unit": "lb", "inventory_quantity": 3, "inventory_policy": "continue",
		"inventory_management": nil, "image_id": nanoImage, "position": 1, "taxable": false, "metafields": []any{metafield}}}, 201)
	s.yellow = s.id(r, "variant")
	if v := r.Object(t, "variant"); v["title"] != "Yellow" || v["price"] != "1.50" || v["compare_at_price"] != "2.00" || v["sku"] != "YELLOW" ||
		v["position"] != 1.0 || v["grams"] != 227.0 || v["inventory_quantity"] != 3.0 || v["image_id"] != float64(nanoImage) {
		t.Errorf("create: %s", r.Body)
	}
	r = s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "Blue", "option2": "Large"}}, 201)
	if v := r.Object(t, "variant"); v["title"] != "Blue / Large" || v["price"] != "0.00" || v["position"] != 4.0 ||
		v["fulfillment_service"] != "manual" || v["inventory_policy"] != "deny" || v["weight_unit"] != "kg" {
		t.Errorf("create with defaults: %s", r.Body)
	}
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": " pink "}}, 422), "base")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "price": "cheap"}}, 422), "price")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "price": -1, "compare_at_price": -2}}, 422), "price", "compare_at_price")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "price": nil}}, 422), "price")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "weight_unit": "stone", "inventory_policy": "maybe"}}, 422), "weight_unit", "inventory_policy")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "image_id": 123}}, 422), "image_id")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "position": 0, "grams": -5}}, 422), "position", "grams")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "fulfillment_service": " "}}, 422), "fulfillment_service")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "inventory_quantity": 2000000000}}, 422), "inventory_quantity")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": strings.Repeat("x", 256)}}, 422), "option1")
	s.wantFields(s.do(demoToken, "POST", variantList, M{"variant": M{"option1": "X", "taxable": "no"}}, 422), "taxable")
	s.do(demoToken, "POST", variantList, M{"variants": M{"option1": "X"}}, 400)
	s.do(demoToken, "POST", variantList, M{"variant": "X"}, 400)
	s.do(demoToken, "POST", variantList, `{"variant": {"option1": }`, 400)
	s.do(demoToken, "POST", variantList, tooLarge, 413)
	s.do(demoToken, "POST", unknownVariantList, valid, 404)
	s.do(noToken, "POST", variantList, valid, 401)
	s.do(roToken, "POST", variantList, valid, 403)
}

// Update, at the variant's own path and at its product's.
func (s *variantsRun) update() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.one(s.yellow), M{"variant": M{"inventory_quantity_adjustment": 5}}, 200); res.Status == 200 {
		if v := res.Object(t, "variant"); v["inventory_quantity"] != 8.0 || v["position"] != 1.0 {
			t.Errorf("adjust: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.one(s.yellow), M{"variant": M{"id": s.yellow, "inventory_quantity": 10, "old_inventory_quantity": 8,
		"option2": "Small", "position": 3, "compare_at_price": nil, "inventory_management": "jupiter-fulfillment"}}, 200); res.Status == 200 {
		if v := res.Object(t, "variant"); v["inventory_quantity"] != 10.0 || v["title"] != "Yellow / Small" || v["position"] != 3.0 ||
			v["compare_at_price"] != nil || v["inventory_management"] != "jupiter-fulfillment" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", s.one(s.yellow), M{"variant": M{"inventory_quantity": 1, "old_inventory_quantity": 99}}, 422), "inventory_quantity")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.yellow), M{"variant": M{"option1": "Red", "option2": nil}}, 422), "base")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.yellow), M{"variant": M{"weight_unit": "st"}}, 422), "weight_unit")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.yellow), M{"variant": M{"price": nil}}, 422), "price")
	s.do(demoToken, "PUT", s.one(999999999), M{"variant": M{"price": "1.00"}}, 404)
	s.do(demoToken, "PUT", "/com/variants/abc.json", M{"variant": M{"price": "1.00"}}, 404)
	s.do(demoToken, "PUT", s.one(s.yellow), M{"price": "1.00"}, 400)
	s.do(demoToken, "PUT", s.one(s.yellow), "not json", 400)
	s.do(demoToken, "PUT", s.one(s.yellow), tooLarge, 413)
	// At the product's path, as Shopify's clients update a variant.
	nested := s.remove(632910392, s.yellow)
	s.do(demoToken, "GET", nested, nil, 200)
	s.do(demoToken, "PUT", nested, M{"variant": M{"price": "3.00"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", nested, M{"variant": M{"weight_unit": "st"}}, 422), "weight_unit")
	s.do(demoToken, "PUT", nested, tooLarge, 413)
	s.do(noToken, "PUT", nested, M{"variant": M{"price": "1.00"}}, 401)
	s.do(roToken, "PUT", nested, M{"variant": M{"price": "1.00"}}, 403)
	s.do(roToken, "GET", nested, nil, 403)
	s.do(noToken, "GET", nested, nil, 401)
	s.do(demoToken, "GET", s.remove(1, s.yellow), nil, 404)
	s.do(demoToken, "PUT", fmt.Sprintf("/com/products/1/variants/%d.json", s.yellow), M{"variant": M{"price": "1.00"}}, 404)
	s.do(noToken, "PUT", s.one(s.yellow), M{"variant": M{"price": "1.00"}}, 401)
	s.do(roToken, "PUT", s.one(s.yellow), M{"variant": M{"price": "1.00"}}, 403)
}

// Smart collection membership follows price changes: the collections
// scenario left "pricey" (variant_price greater_than 150) holding the
// iPod Nano through its 199.00 variants.
func (s *variantsRun) membership() {
	t := s.t
	pricey := "/com/smart_collections.json?handle=pricey"
	membersOf := func() (int, float64) {
		t.Helper()
		res := s.do(demoToken, "GET", pricey, nil, 200)
		items := res.List(t, "smart_collections")
		if len(items) != 1 {
			t.Fatalf("pricey: %s", res.Body)
		}
		c := items[0].(map[string]any)
		members := s.do(demoToken, "GET", fmt.Sprintf("/com/collects.json?collection_id=%d", int64(c["id"].(float64))), nil, 200)
		return len(members.List(t, "collects")), c["products_count"].(float64)
	}
	if n, count := membersOf(); n != 1 || count != 1 {
		t.Errorf("pricey before: %d members, products_count %v; want 1, 1", n, count)
	}
	s.do(demoToken, "PUT", s.one(nanoPink), M{"variant": M{"price": 100}}, 200)
	s.do(demoToken, "PUT", s.one(nanoRed), M{"variant": M{"price": "100.00"}}, 200)
	if n, count := membersOf(); n != 0 || count != 0 {
		t.Errorf("pricey after the price cut: %d members, products_count %v; want 0, 0", n, count)
	}
	s.do(demoToken, "PUT", s.one(nanoRed), M{"variant": M{"price": "199.00"}}, 200)
	if n, count := membersOf(); n != 1 || count != 1 {
		t.Errorf("pricey after the price rise: %d members, products_count %v; want 1, 1", n, count)
	}
}

// Delete; then every change was logged as a Product update.
func (s *variantsRun) deleteAndLog() {
	s.do(noToken, "DELETE", s.remove(nanoProduct, s.yellow), nil, 401)
	s.do(roToken, "DELETE", s.remove(nanoProduct, s.yellow), nil, 403)
	s.do(demoToken, "DELETE", s.remove(touchProduct, s.yellow), nil, 404) // another product's variant
	s.do(demoToken, "DELETE", s.remove(1, s.yellow), nil, 404)
	s.do(demoToken, "DELETE", s.remove(nanoProduct, s.yellow), nil, 200)
	s.do(demoToken, "DELETE", s.remove(nanoProduct, s.yellow), nil, 404)
	s.do(demoToken, "GET", s.one(s.yellow), nil, 404)
	s.wantCount(s.do(demoToken, "GET", variantCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", "/com/products/921728736/variants/count.json", nil, 200), 1)

	// Every change was logged as a Product update: 2 creates, 6 updates
	// (one at the product's path), 1 delete, besides the one the events
	// scenario recorded.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Product&verb=update", nil, 200), "events", 10)
}

func (s *scenario) transactions(t *testing.T) {
	s.t = t
	const (
		list, count               = "/com/orders/450789469/transactions.json", "/com/orders/450789469/transactions/count.json"
		unknownList, unknownCount = "/com/orders/1/transactions.json", "/com/orders/1/transactions/count.json"
		seededAuth                = 389404469
	)
	one := func(id int64) string { return fmt.Sprintf("/com/orders/450789469/transactions/%d.json", id) }
	valid := M{"transaction": M{"kind": "capture", "amount": "0.01"}}

	// list and count: the seeded authorization
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "transactions", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,kind,amount&limit=1", nil, 200), "transactions", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.Itoa(seededAuth), nil, 200), "transactions", 0)
	for _, q := range []string{"limit=0", "page=0", "since_id=x"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(demoToken, "GET", unknownList, nil, 404)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 1)
	s.do(demoToken, "GET", unknownCount, nil, 404)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// create: a part capture, the rest, a refund with the order's money rules
	r := s.do(demoToken, "POST", list, M{"transaction": M{"kind": "capture", "amount": 100, "currency": "usd", "gateway": "bogus", "test": false}}, 201)
	capture := s.id(r, "transaction")
	if v := r.Object(t, "transaction"); v["amount"] != "100.00" || v["parent_id"] != float64(seededAuth) || v["status"] != "success" || v["source_name"] != "api" {
		t.Errorf("capture: %s", r.Body)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "capture", "amount": "309.95"}}, 422), "amount")
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "capture", "parent_id": seededAuth, "amount": nil}}, 201)
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "refund", "amount": "9.99", "parent_id": capture}}, 201)
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "5.5"}}, 201)
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "authorization", "amount": "1"}}, 201)
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "steal"}}, 422), "kind")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1.001"}}, 422), "amount")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": 0}}, 422), "amount")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1", "currency": "EUR", "gateway": "stripe"}}, 422), "currency")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1", "gateway": "stripe"}}, 422), "gateway")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "void", "parent_id": seededAuth}}, 422), "parent_id")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1", "test": "yes"}}, 422), "test")
	s.do(demoToken, "POST", list, M{"transactions": M{"kind": "sale"}}, 400)
	s.do(demoToken, "POST", list, `{"transaction": {"kind": }`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(demoToken, "POST", unknownList, valid, 404)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 6)

	// get
	s.do(demoToken, "GET", one(seededAuth), nil, 200)
	s.do(demoToken, "GET", one(capture), nil, 200)
	s.do(demoToken, "GET", one(capture)+"?fields=id,amount,parent_id", nil, 200)
	s.do(demoToken, "GET", one(1), nil, 404)
	s.do(demoToken, "GET", fmt.Sprintf("/com/orders/1/transactions/%d.json", capture), nil, 404)
	s.do(noToken, "GET", one(capture), nil, 401)
	s.do(roToken, "GET", one(capture), nil, 403)

	// Each create logged an Order event with its verb.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Order&verb=capture_success", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Order&verb=refund_success", nil, 200), "events", 1)
}

// warehouseToken is an app with write_fulfillments beside the demo app.
const warehouseToken = "warehouse-app-token-0123456789abcdef"

// servicesRun carries what the fulfillment services steps share: the
// services the demo app (f1, f2) and the warehouse app (f3) create.
type servicesRun struct {
	*scenario
	f1, f2, f3 int64
}

const servicesList = "/admin/fulfillment_services.json"

func (servicesRun) one(id int64) string {
	return fmt.Sprintf("/admin/fulfillment_services/%d.json", id)
}

func (s *scenario) fulfillmentServices(t *testing.T) {
	s.t = t
	warehouse := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"apps": [{"id": 1005, "name": "Warehouse App", "access_token": "` + warehouseToken + `", "shared_secret": "warehouse-secret", "scopes": ["write_fulfillments"]}]}`
	if _, _, err := seed.Load(context.Background(), s.env.Deps.Store, s.env.Deps.Clock, []byte(warehouse)); err != nil {
		t.Fatal(err)
	}
	r := &servicesRun{scenario: s}
	r.create()
	r.reads()
	r.updateDelete()
}

// Create; handles are unique across apps.
func (s *servicesRun) create() {
	t := s.t
	valid := M{"fulfillment_service": M{"name": "Venus"}}
	r1 := s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": " Jupiter Fulfillment ", "callback_url": "https://jupiter.example.com/fulfillment",
		"inventory_management": true, "tracking_support": true, "format": "json", "credential1": "ops@jupiter.example.com", "credential2": "s3cret"}}, 201)
	s.f1 = s.id(r1, "fulfillment_service")
	if f := r1.Object(t, "fulfillment_service"); f["name"] != "Jupiter Fulfillment" || f["service_name"] != "Jupiter Fulfillment" ||
		f["handle"] != "jupiter-fulfillment" || f["credential2_exists"] != true || strings.Contains(string(r1.Body), "s3cret") {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "Mars", "format": "xml", "requires_shipping_method": false,
		"callback_url": nil, "credential1": nil}}, 201)
	s.f2 = s.id(r2, "fulfillment_service")
	if f := r2.Object(t, "fulfillment_service"); f["format"] != "xml" || f["requires_shipping_method"] != false || f["callback_url"] != nil ||
		f["inventory_management"] != false || f["credential2_exists"] != false {
		t.Errorf("create with defaults: %s", r2.Body)
	}
	// Handles are unique across apps.
	r3 := s.do(warehouseToken, "POST", servicesList, M{"fulfillment_service": M{"name": "Jupiter Fulfillment"}}, 201)
	s.f3 = s.id(r3, "fulfillment_service")
	if f := r3.Object(t, "fulfillment_service"); f["handle"] != "jupiter-fulfillment-1" {
		t.Errorf("create by another app: %s", r3.Body)
	}
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{}}, 422), "name")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": strings.Repeat("n", 256)}}, 422), "name")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "A", "format": "csv"}}, 422), "format")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "A", "format": ""}}, 422), "format")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "A", "inventory_management": true}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "A", "callback_url": "ftp://example.com/x"}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "A", "callback_url": "https://example.com/x?a=b"}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "A", "credential1": strings.Repeat("c", 256)}}, 422), "credential1")
	s.wantFields(s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "A", "inventory_management": "yes"}}, 422), "inventory_management")
	s.do(demoToken, "POST", servicesList, M{"name": "A"}, 400)
	s.do(demoToken, "POST", servicesList, M{"fulfillment_service": "A"}, 400)
	s.do(demoToken, "POST", servicesList, `{"fulfillment_service": {`, 400)
	s.do(demoToken, "POST", servicesList, tooLarge, 413)
	s.do(noToken, "POST", servicesList, valid, 401)
	s.do(badToken, "POST", servicesList, valid, 401)
	s.do(roToken, "POST", servicesList, valid, 403)
	s.do(noScopeToken, "POST", servicesList, valid, 403)
}

// List (the caller's, or every app's with scope=all) and get (any app's
// service by id).
func (s *servicesRun) reads() {
	t := s.t
	// list: the caller's, or every app's with scope=all
	s.wantLen(s.do(demoToken, "GET", servicesList, nil, 200), "fulfillment_services", 2)
	s.wantLen(s.do(demoToken, "GET", servicesList+"?scope=current_client", nil, 200), "fulfillment_services", 2)
	s.do(demoToken, "GET", servicesList+"?scope=", nil, 400)
	s.wantLen(s.do(demoToken, "GET", servicesList+"?scope=all", nil, 200), "fulfillment_services", 3)
	s.wantLen(s.do(warehouseToken, "GET", servicesList, nil, 200), "fulfillment_services", 1)
	s.wantLen(s.do(warehouseToken, "GET", servicesList+"?scope=all", nil, 200), "fulfillment_services", 3)
	s.do(demoToken, "GET", servicesList+"?scope=everyone", nil, 400)
	s.do(noToken, "GET", servicesList, nil, 401)
	s.do(roToken, "GET", servicesList, nil, 403)

	// get: any app's service by id
	if res := s.do(demoToken, "GET", s.one(s.f1), nil, 200); strings.Contains(string(res.Body), "s3cret") {
		t.Errorf("credential2 shown: %s", res.Body)
	}
	s.do(warehouseToken, "GET", s.one(s.f1), nil, 200)
	s.do(demoToken, "GET", s.one(s.f3), nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/admin/fulfillment_services/abc.json", nil, 404)
	s.do(noToken, "GET", s.one(s.f1), nil, 401)
	s.do(noScopeToken, "GET", s.one(s.f1), nil, 403)
}

// Update and delete: the owner only; a deleted service's handle is free
// again.
func (s *servicesRun) updateDelete() {
	t := s.t
	// update: the owner only
	if res := s.do(demoToken, "PUT", s.one(s.f1), M{"fulfillment_service": M{"id": s.f1, "name": "Jupiter Two", "format": "xml", "tracking_support": false}}, 200); res.Status == 200 {
		if f := res.Object(t, "fulfillment_service"); f["name"] != "Jupiter Two" || f["service_name"] != "Jupiter Two" ||
			f["handle"] != "jupiter-fulfillment" || f["format"] != "xml" || f["tracking_support"] != false || f["inventory_management"] != true {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.one(s.f1), M{"fulfillment_service": M{"inventory_management": false, "callback_url": nil, "credential2": nil}}, 200); res.Status == 200 {
		if f := res.Object(t, "fulfillment_service"); f["callback_url"] != nil || f["credential2_exists"] != false || f["credential1"] != "ops@jupiter.example.com" {
			t.Errorf("update clearing: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", s.one(s.f2), M{"fulfillment_service": M{"tracking_support": true}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.f2), M{"fulfillment_service": M{"name": "", "format": "yaml"}}, 422), "name", "format")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.f2), M{"fulfillment_service": M{"callback_url": "mailto:ops@mars.example.com"}}, 422), "callback_url")
	s.do(warehouseToken, "PUT", s.one(s.f1), M{"fulfillment_service": M{"name": "Mine"}}, 404) // another app's
	s.do(demoToken, "PUT", s.one(999999999), M{"fulfillment_service": M{"name": "x"}}, 404)
	s.do(demoToken, "PUT", s.one(s.f2), M{"name": "x"}, 400)
	s.do(demoToken, "PUT", s.one(s.f2), "not json", 400)
	s.do(demoToken, "PUT", s.one(s.f2), tooLarge, 413)
	s.do(noToken, "PUT", s.one(s.f2), M{"fulfillment_service": M{"name": "x"}}, 401)
	s.do(roToken, "PUT", s.one(s.f2), M{"fulfillment_service": M{"name": "x"}}, 403)

	// delete: the owner only; the handle is free again
	s.do(noToken, "DELETE", s.one(s.f1), nil, 401)
	s.do(roToken, "DELETE", s.one(s.f1), nil, 403)
	s.do(warehouseToken, "DELETE", s.one(s.f1), nil, 404)
	s.do(demoToken, "DELETE", s.one(s.f1), nil, 200)
	s.do(demoToken, "DELETE", s.one(s.f1), nil, 404)
	s.do(demoToken, "GET", s.one(s.f1), nil, 404)
	s.wantLen(s.do(demoToken, "GET", servicesList+"?scope=all", nil, 200), "fulfillment_services", 2)
	if res := s.do(demoToken, "POST", servicesList, M{"fulfillment_service": M{"name": "Jupiter Fulfillment"}}, 201); res.Status == 201 {
		if f := res.Object(t, "fulfillment_service"); f["handle"] != "jupiter-fulfillment" {
			t.Errorf("freed handle not reused: %s", res.Body)
		}
	}
}

// Products of the catalog scenarios: the demo seed's iPod Nano (vendor
// Apple, variants Pink and Red at 199.00, stock 10 and 20, image 850703190)
// and an iPod Touch the collections scenario seeds (vendor Apple, one
// variant at 99.00 with stock 3).
const (
	nanoProduct       = 632910392
	nanoPink, nanoRed = 808950810, 49148385
	nanoImage         = 850703190
	touchProduct      = 921728736
	touchBlack        = 447654529
)
