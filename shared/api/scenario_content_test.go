package api_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/apitest"
	eventlog "github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/seed"
)

// tooLarge is a body over the default 1 MiB limit.
var tooLarge = `{"x":"` + strings.Repeat("a", httpapi.DefaultMaxBody) + `"}`

func (s *scenario) redirects(t *testing.T) {
	s.t = t
	const list, count = "/web/redirects.json", "/web/redirects/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/redirects/%d.json", id) }
	valid := M{"redirect": M{"path": "/other", "target": "/pages/other"}}

	// create
	id1 := s.id(s.do(demoToken, "POST", list, M{"redirect": M{"path": "/ipod", "target": "/pages/itunes"}}, 201), "redirect")
	r2 := s.do(demoToken, "POST", list, M{"redirect": M{"path": "http://www.example.com/forums?x=1", "target": "http://forums.example.org/"}}, 201)
	id2 := s.id(r2, "redirect")
	if p := r2.Object(t, "redirect")["path"]; p != "/forums?x=1" {
		t.Errorf("full URL path stored as %v, want /forums?x=1", p)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{}}, 422), "path", "target")
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{"path": "/ipod", "target": "/x"}}, 422), "path")
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{"path": "/a", "target": "not a uri"}}, 422), "target")
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{"path": 5, "target": "/x"}}, 422), "path")
	s.do(demoToken, "POST", list, M{"redirects": M{"path": "/a", "target": "/b"}}, 400)
	s.do(demoToken, "POST", list, M{"redirect": "/a"}, 400)
	s.do(demoToken, "POST", list, `{"redirect": {`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list
	low, high := min(id1, id2), max(id1, id2)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "redirects", 2)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "redirects", 2)
	if res := s.do(demoToken, "GET", list+"?limit=1&page=2", nil, 200); res.Status == 200 {
		if items := res.List(t, "redirects"); len(items) != 1 || int64(items[0].(map[string]any)["id"].(float64)) != high {
			t.Errorf("page 2 of 1: %s, want id %d", res.Body, high)
		}
	}
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?path=/ipod", nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?path="+url.QueryEscape("https://demo-shop.example.com/ipod"), nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?target=/pages/itunes", nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?target=/nowhere", nil, 200), "redirects", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,path&limit=250", nil, 200), "redirects", 2)
	for _, q := range []string{"limit=0", "limit=251", "limit=ten", "page=0", "since_id=-1", "since_id=x"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?path=/ipod", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?path=/ipod&target=/elsewhere", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?target=/pages/itunes", nil, 200), 1)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(roToken, "GET", one(id1), nil, 200)
	s.do(demoToken, "GET", one(id1)+"?fields=target", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/redirects/abc.json", nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id1), M{"redirect": M{"id": id1, "path": "/ipod2"}}, 200); res.Status == 200 {
		if rd := res.Object(t, "redirect"); rd["path"] != "/ipod2" || rd["target"] != "/pages/itunes" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", one(id1), M{"redirect": M{"target": "https://apple.example.com/ipod"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"redirect": M{"target": "javascript:alert(1)"}}, 422), "target")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"redirect": M{"path": "/forums?x=1"}}, 422), "path")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"redirect": M{"path": ""}}, 422), "path")
	s.do(demoToken, "PUT", one(999999999), M{"redirect": M{"path": "/x"}}, 404)
	s.do(demoToken, "PUT", one(id1), M{"path": "/x"}, 400)
	s.do(demoToken, "PUT", one(id1), "not json", 400)
	s.do(demoToken, "PUT", one(id1), tooLarge, 413)
	s.do(noToken, "PUT", one(id1), M{"redirect": M{"path": "/x"}}, 401)
	s.do(roToken, "PUT", one(id1), M{"redirect": M{"path": "/x"}}, 403)

	// delete
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.do(demoToken, "GET", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 1)
	// The path of a deleted redirect is free again.
	s.do(demoToken, "POST", list, M{"redirect": M{"path": "/ipod2", "target": "/pages/itunes"}}, 201)
}

func (s *scenario) scriptTags(t *testing.T) {
	s.t = t
	const list, count = "/web/script_tags.json", "/web/script_tags/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/script_tags/%d.json", id) }
	const src1, src2 = "https://js.example.org/foo.js", "https://js.example.org/bar.js"
	valid := M{"script_tag": M{"event": "onload", "src": src1}}

	// create
	r1 := s.do(demoToken, "POST", list, valid, 201)
	id1 := s.id(r1, "script_tag")
	if d := r1.Object(t, "script_tag")["display_scope"]; d != "all" {
		t.Errorf("display_scope defaults to %v, want all", d)
	}
	id2 := s.id(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": src2, "display_scope": "order_status"}}, 201), "script_tag")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{}}, 422), "src", "event")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": "http://js.example.org/foo.js"}}, 422), "src")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onclick", "src": src1}}, 422), "event")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": src1, "display_scope": "nowhere"}}, 422), "display_scope")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": []any{src1}}}, 422), "src")
	s.do(demoToken, "POST", list, M{"script_tags": []any{}}, 400)
	s.do(demoToken, "POST", list, `[1, 2`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list: an app sees only its own tags
	low := min(id1, id2)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "script_tags", 2)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "script_tags", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=1&page=2", nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?src="+url.QueryEscape(src2), nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "script_tags", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "script_tags", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "script_tags", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,src,created_at", nil, 200), "script_tags", 2)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "page=-3", "since_id=-1", "created_at_min=yesterday", "updated_at_max=2024-13-45"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?src="+url.QueryEscape(src1), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.do(demoToken, "GET", count+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(demoToken, "GET", one(id1)+"?fields=src,display_scope", nil, 200)
	s.do(roToken, "GET", one(id1), nil, 404) // another app's tag
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/script_tags/0.json", nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"id": id1, "src": "https://js.example.org/new.js"}}, 200); res.Status == 200 {
		if st := res.Object(t, "script_tag"); st["src"] != "https://js.example.org/new.js" || st["display_scope"] != "all" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"display_scope": "online_store"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"src": "ftp://js.example.org/a.js"}}, 422), "src")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"event": ""}}, 422), "event")
	s.do(demoToken, "PUT", one(999999999), M{"script_tag": M{"src": src1}}, 404)
	s.do(demoToken, "PUT", one(id1), M{"script_tag": nil}, 400)
	s.do(demoToken, "PUT", one(id1), tooLarge, 413)
	s.do(noToken, "PUT", one(id1), M{"script_tag": M{"src": src1}}, 401)
	s.do(roToken, "PUT", one(id1), M{"script_tag": M{"src": src1}}, 403)

	// delete
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(noScopeToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 1)
}

func (s *scenario) events(t *testing.T) {
	s.t = t
	const list, count = "/com/events.json", "/com/events/count.json"
	one := func(id int64) string { return fmt.Sprintf("/com/events/%d.json", id) }
	const productEvents, orderEvents = "/com/products/632910392/events.json", "/com/orders/450789469/events.json"

	// No resource writes events yet: record them as a change would.
	d := s.env.Deps
	var backdated int64
	record := func(subject eventlog.Subject, verb string, at time.Time) int64 {
		ev := eventlog.New(d.IDs, subject, verb, "", "Demo App")
		if !at.IsZero() { // an event's created_at is its id's second: back-date both
			backdated++
			ev.ID, ev.CreatedAt = ids.At(at)+backdated, admin.Time{Time: at.UTC()}
		}
		if err := d.Store.Transact(context.Background(), eventlog.Ops(ev)...); err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 3, 11, 10, 0, 0, 0, ny)
	page := eventlog.Subject{Type: eventlog.Page, ID: 131092082, Path: "/pages/about-us", Label: "About us"}
	product := eventlog.Subject{Type: eventlog.Product, ID: 632910392, Path: "/products/ipod-nano", Label: "IPod Nano - 8GB"}
	order := eventlog.Subject{Type: eventlog.Order, ID: 450789469, Path: "/admin/orders/450789469", Label: "#1001"}
	first := record(page, eventlog.Create, day)
	record(page, eventlog.Published, day.Add(time.Hour))
	record(product, eventlog.Create, day.Add(2*time.Hour))
	record(order, "placed", day.Add(3*time.Hour))
	record(product, eventlog.Update, time.Time{})
	window := "created_at_min=" + url.QueryEscape("2024-03-11 10:00") + "&created_at_max=" + url.QueryEscape("2024-03-11 12:00")

	// list: no scope needed
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "events", 5)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "events", 5)
	s.wantLen(s.do(noScopeToken, "GET", list, nil, 200), "events", 5)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(first, 10), nil, 200), "events", 4)
	s.wantLen(s.do(demoToken, "GET", list+"?filter=Page", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?filter=Product,Order", nil, 200), "events", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?filter=Product&verb=update", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?verb=create", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?"+window, nil, 200), "events", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,verb,created_at", nil, 200), "events", 5)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "filter=Widget", "filter=Page,product", "created_at_min=yesterday"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(badToken, "GET", list, nil, 401)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 5)
	s.wantCount(s.do(noScopeToken, "GET", count, nil, 200), 5)
	s.wantCount(s.do(demoToken, "GET", count+"?"+window, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.do(demoToken, "GET", count+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", count, nil, 401)

	// get
	s.do(demoToken, "GET", one(first), nil, 200)
	s.do(noScopeToken, "GET", one(first), nil, 200)
	s.do(demoToken, "GET", one(first)+"?fields=verb,message", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/com/events/abc.json", nil, 404)
	s.do(noToken, "GET", one(first), nil, 401)

	// one product's and one order's events
	s.wantLen(s.do(demoToken, "GET", productEvents, nil, 200), "events", 2)
	s.wantLen(s.do(noScopeToken, "GET", productEvents+"?limit=1&page=2", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", productEvents+"?fields=id,verb", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", orderEvents, nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", orderEvents+"?limit=1&since_id=1", nil, 200), "events", 1)
	s.do(demoToken, "GET", "/com/products/632910397/events.json", nil, 404)
	s.do(demoToken, "GET", "/com/orders/1/events.json", nil, 404)
	s.do(demoToken, "GET", productEvents+"?limit=0", nil, 400)
	s.do(demoToken, "GET", orderEvents+"?page=x", nil, 400)
	s.do(noToken, "GET", productEvents, nil, 401)
	s.do(noToken, "GET", orderEvents, nil, 401)
}

func (s *scenario) pages(t *testing.T) {
	s.t = t
	const list, count = "/web/pages.json", "/web/pages/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/pages/%d.json", id) }
	valid := M{"page": M{"title": "Shipping"}}
	metafield := M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}

	// create
	r1 := s.do(demoToken, "POST", list, M{"page": M{"title": "About us", "body_html": "<p>Since 2010.</p>",
		"template_suffix": "contact", "metafields": []any{metafield, M{"namespace": "seo", "key": "hidden", "value": "no", "value_type": "string", "description": nil}}}}, 201)
	id1 := s.id(r1, "page")
	if p := r1.Object(t, "page"); p["handle"] != "about-us" || p["published_at"] == nil || p["template_suffix"] != "contact" || p["author"] != "Demo App" {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, M{"page": M{"title": "About us", "published": false, "author": "Ann", "template_suffix": nil}}, 201)
	id2 := s.id(r2, "page")
	if p := r2.Object(t, "page"); p["handle"] != "about-us-1" || p["published_at"] != nil || p["author"] != "Ann" {
		t.Errorf("create hidden: %s", r2.Body)
	}
	id3 := s.id(s.do(demoToken, "POST", list, M{"page": M{"title": "Contact", "handle": "contact_us"}}, 201), "page")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "handle": "contact_us"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "metafields": []any{
		M{"namespace": "inventory", "key": "count", "value": "many", "value_type": "integer"}}}}, 422), "metafields.value")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "metafields": []any{metafield, metafield}}}, 422), "metafields.key")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", list, M{"pages": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", list, M{"page": []any{}}, 400)
	s.do(demoToken, "POST", list, `{"page": {"title": }`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.do(noScopeToken, "POST", list, valid, 403)

	// list
	low := min(id1, id2, id3)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "pages", 3)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?title="+url.QueryEscape("About us"), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=about-us-1", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=nowhere", nil, 200), "pages", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=published", nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=unpublished", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=any", nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "pages", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_max=2999-01-01", nil, 200), "pages", 3)
	// A hidden page has no published_at: a bounded range never matches it.
	s.wantLen(s.do(demoToken, "GET", list+"?published_at_min=2000-01-01&published_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,handle,published_at&limit=250", nil, 200), "pages", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", count+"?title="+url.QueryEscape("About us"), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?handle=contact_us", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", count+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", count+"?published_at_max=later", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(roToken, "GET", one(id2), nil, 200)
	s.do(demoToken, "GET", one(id1)+"?fields=title,handle,template_suffix", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/pages/abc.json", nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id2), M{"page": M{"id": id2, "title": "About", "published": true, "metafields": []any{metafield}}}, 200); res.Status == 200 {
		if p := res.Object(t, "page"); p["title"] != "About" || p["handle"] != "about-us-1" || p["published_at"] == nil || p["author"] != "Ann" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(id1), M{"page": M{"handle": "about", "template_suffix": "", "published": false}}, 200); res.Status == 200 {
		if p := res.Object(t, "page"); p["handle"] != "about" || p["template_suffix"] != nil || p["published_at"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantLen(s.do(demoToken, "GET", list+"?handle=about-us", nil, 200), "pages", 0)
	s.do(demoToken, "PUT", one(id3), M{"page": M{"body_html": "<p>Write to us.</p>", "author": "Bob"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"handle": "about"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"author": []any{}}}, 422), "author")
	s.do(demoToken, "PUT", one(999999999), M{"page": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", "/web/pages/abc.json", M{"page": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", one(id3), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", one(id3), "not json", 400)
	s.do(demoToken, "PUT", one(id3), tooLarge, 413)
	s.do(noToken, "PUT", one(id3), M{"page": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", one(id3), M{"page": M{"title": "x"}}, 403)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=published", nil, 200), 2)

	// delete
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(noScopeToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.do(demoToken, "DELETE", one(999999999), nil, 404)
	s.do(demoToken, "GET", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	// The handle of a deleted page is free again.
	s.do(demoToken, "POST", list, M{"page": M{"title": "x", "handle": "about"}}, 201)

	// Every change was logged: 4 creates, 3 updates (published, unpublished, update), 1 destroy.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Page&since_id="+strconv.FormatInt(low-1, 10), nil, 200), "events", 8)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Page&verb=destroy", nil, 200), "events", 1)
}

// tinyPNG returns a w×h PNG.
func tinyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (s *scenario) blogs(t *testing.T) {
	s.t = t
	// A second blog beside the demo seed's; blogs have no endpoints.
	const otherBlog = `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"blogs": [{"id": 241253188, "title": "Journal", "handle": "journal"}]}`
	if _, _, err := seed.Load(context.Background(), s.env.Deps.Store, []byte(otherBlog)); err != nil {
		t.Fatal(err)
	}
	const (
		blog, other                = 241253187, 241253188
		list, count, tags, authors = "/web/blogs/241253187/articles.json", "/web/blogs/241253187/articles/count.json",
			"/web/blogs/241253187/articles/tags.json", "/web/articles/authors.json"
		otherList, otherCount, otherTags = "/web/blogs/241253188/articles.json", "/web/blogs/241253188/articles/count.json",
			"/web/blogs/241253188/articles/tags.json"
		unknownList, unknownCount, unknownTags = "/web/blogs/1234/articles.json", "/web/blogs/1234/articles/count.json",
			"/web/blogs/1234/articles/tags.json"
	)
	one := func(id int64) string { return fmt.Sprintf("/web/blogs/%d/articles/%d.json", blog, id) }
	elsewhere := func(blogID, id int64) string { return fmt.Sprintf("/web/blogs/%d/articles/%d.json", blogID, id) }
	valid := M{"article": M{"title": "Shipping news"}}
	metafield := M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}
	tooLargeArticle := `{"x":"` + strings.Repeat("a", images.MaxBody) + `"}`
	manyTags := "" // 41 tags, one too many
	for i := range 41 {
		manyTags += fmt.Sprintf("tag%d,", i)
	}
	pngBytes := tinyPNG(t, 2, 3)
	imageServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(tinyPNG(t, 4, 5))
	}))
	defer imageServer.Close()

	// create
	r1 := s.do(demoToken, "POST", list, M{"article": M{"title": "My new Article title", "author": "John Smith",
		"tags": "This Post, Tag, Tag", "body_html": "<h1>I like articles</h1>", "summary_html": "<p>Short</p>",
		"published_at": "Thu Mar 24 15:45:47 UTC 2011", "template_suffix": "wide", "metafields": []any{metafield}}}, 201)
	id1 := s.id(r1, "article")
	if a := r1.Object(t, "article"); a["handle"] != "my-new-article-title" || a["tags"] != "Tag, This Post" || a["blog_id"] != float64(blog) ||
		a["published_at"] != "2011-03-24T11:45:47-04:00" || a["author"] != "John Smith" || a["template_suffix"] != "wide" || a["image"] != nil {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, M{"article": M{"title": "My new Article title", "published": false, "published_at": "2024-03-11",
		"image": M{"attachment": base64.StdEncoding.EncodeToString(pngBytes), "filename": "cover.png"}}}, 201)
	id2 := s.id(r2, "article")
	if a := r2.Object(t, "article"); a["handle"] != "my-new-article-title-1" || a["published_at"] != nil || a["author"] != "Demo App" {
		t.Errorf("create hidden: %s", r2.Body)
	} else if img, _ := a["image"].(map[string]any); img == nil || img["width"] != 2.0 || img["height"] != 3.0 ||
		!regexp.MustCompile(`^https://demo-shop\.example\.com/files/\d+/cover\.png$`).MatchString(fmt.Sprint(img["src"])) {
		t.Errorf("create with an attachment: %s", r2.Body)
	}
	r3 := s.do(demoToken, "POST", list, M{"article": M{"title": "Hello", "handle": "hello_world", "tags": "News, Tag", "image": M{"src": imageServer.URL + "/cat.png"}}}, 201)
	id3 := s.id(r3, "article")
	img3, _ := r3.Object(t, "article")["image"].(map[string]any)
	if img3 == nil || img3["src"] != imageServer.URL+"/cat.png" || img3["width"] != 4.0 {
		t.Errorf("create with a src: %s", r3.Body)
	}
	// Handles are unique per blog only.
	r4 := s.do(demoToken, "POST", otherList, M{"article": M{"title": "My new Article title", "image": nil}}, 201)
	id4 := s.id(r4, "article")
	if a := r4.Object(t, "article"); a["handle"] != "my-new-article-title" || a["blog_id"] != float64(other) {
		t.Errorf("create in another blog: %s", r4.Body)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "handle": "hello_world"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "author": strings.Repeat("a", 256)}}, 422), "author")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "tags": manyTags}}, 422), "tags")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "published_at": "someday"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "published_at": "Thu Mar 24 15:45:47 PST 2011"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": "cat.png"}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": M{"attachment": "!!"}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": M{"attachment": base64.StdEncoding.EncodeToString([]byte("not an image"))}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": M{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", list, M{"articles": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", list, M{"article": []any{}}, 400)
	s.do(demoToken, "POST", list, `{"article": {"title": }`, 400)
	s.do(demoToken, "POST", list, tooLargeArticle, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.do(noScopeToken, "POST", list, valid, 403)
	s.do(demoToken, "POST", unknownList, valid, 404)

	// list: newest first
	low := min(id1, id2, id3)
	if res := s.do(demoToken, "GET", list, nil, 200); res.Status == 200 {
		if items := res.List(t, "articles"); len(items) != 3 || items[0].(map[string]any)["id"] != float64(id3) {
			t.Errorf("list: %s, want 3 articles, id %d first", res.Body, id3)
		}
	}
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=my-new-article-title-1", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=nowhere", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?tag=Tag", nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?tag=tag", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?author="+url.QueryEscape("John Smith"), nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?author="+url.QueryEscape("Demo App")+"&tag=News", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=published", nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=unpublished", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=any&published_at_min=2012-01-01", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_at_max="+url.QueryEscape("2012-01-01T00:00:00-05:00"), nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00")+"&updated_at_max=2999-02-01", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,title,image&limit=250", nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", otherList, nil, 200), "articles", 1)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", unknownList, nil, 404)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", otherCount, nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?tag=Tag", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?author="+url.QueryEscape("Demo App"), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?handle=hello_world", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", count+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", count+"?published_at_max=later", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)
	s.do(demoToken, "GET", unknownCount, nil, 404)

	// tags
	wantNames := func(res *apitest.Response, key string, want ...string) {
		t.Helper()
		if res.Status != 200 {
			return
		}
		var got []string
		for _, v := range res.List(t, key) {
			got = append(got, v.(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %v, want %v", key, got, want)
		}
	}
	wantNames(s.do(demoToken, "GET", tags, nil, 200), "tags", "News", "Tag", "This Post")
	wantNames(s.do(roToken, "GET", tags+"?popular=1", nil, 200), "tags", "Tag", "News", "This Post")
	wantNames(s.do(demoToken, "GET", tags+"?popular=true&limit=1", nil, 200), "tags", "Tag")
	wantNames(s.do(demoToken, "GET", tags+"?popular=0&limit=2", nil, 200), "tags", "News", "Tag")
	wantNames(s.do(demoToken, "GET", otherTags, nil, 200), "tags")
	for _, q := range []string{"limit=0", "limit=251", "limit=x", "popular=yes"} {
		s.do(demoToken, "GET", tags+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", tags, nil, 401)
	s.do(noScopeToken, "GET", tags, nil, 403)
	s.do(demoToken, "GET", unknownTags, nil, 404)
	// The shop's tags: every blog's (the other blog has none yet).
	wantNames(s.do(demoToken, "GET", "/web/articles/tags.json?popular=1&limit=2", nil, 200), "tags", "Tag", "News")
	s.do(demoToken, "GET", "/web/articles/tags.json?limit=0", nil, 400)
	s.do(noToken, "GET", "/web/articles/tags.json", nil, 401)
	s.do(noScopeToken, "GET", "/web/articles/tags.json", nil, 403)

	// authors: of every blog
	wantNames(s.do(demoToken, "GET", authors, nil, 200), "authors", "Demo App", "John Smith")
	s.do(roToken, "GET", authors, nil, 200)
	s.do(noToken, "GET", authors, nil, 401)
	s.do(noScopeToken, "GET", authors, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(roToken, "GET", one(id2), nil, 200)
	s.do(demoToken, "GET", one(id2)+"?fields=title,handle,image", nil, 200)
	s.do(demoToken, "GET", elsewhere(other, id4), nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/blogs/241253187/articles/abc.json", nil, 404)
	s.do(demoToken, "GET", elsewhere(other, id1), nil, 404)
	s.do(demoToken, "GET", elsewhere(1234, id1), nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id2), M{"article": M{"id": id2, "title": "Second", "published": true, "image": nil}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["title"] != "Second" || a["handle"] != "my-new-article-title-1" || a["published_at"] == nil || a["image"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(id1), M{"article": M{"handle": "first", "tags": "", "summary_html": "", "template_suffix": "", "published_at": nil}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["handle"] != "first" || a["tags"] != "" || a["summary_html"] != nil || a["template_suffix"] != nil || a["published_at"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	// The current image sent back as it was returned is kept.
	if res := s.do(demoToken, "PUT", one(id3), M{"article": M{"image": M{"src": img3["src"]}, "author": "Bob", "metafields": []any{metafield}}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["author"] != "Bob" || !reflect.DeepEqual(a["image"], img3) {
			t.Errorf("update keeping the image: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(id3), M{"article": M{"published_at": "2024-03-11 10:00", "blog_id": other}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["published_at"] != "2024-03-11T10:00:00-04:00" || a["blog_id"] != float64(blog) {
			t.Errorf("update published_at: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"handle": "hello_world"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"author": " "}}, 422), "author")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"published_at": 5}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"image": []any{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"tags": manyTags}}, 422), "tags")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.do(demoToken, "PUT", one(999999999), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", elsewhere(other, id1), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", elsewhere(1234, id1), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", one(id1), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", one(id1), "not json", 400)
	s.do(demoToken, "PUT", one(id1), tooLargeArticle, 413)
	s.do(noToken, "PUT", one(id1), M{"article": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", one(id1), M{"article": M{"title": "x"}}, 403)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=published", nil, 200), 2)
	wantNames(s.do(demoToken, "GET", authors, nil, 200), "authors", "Bob", "Demo App", "John Smith")

	// comments
	comments := s.comments(t, blog, other, id1, id3, id4)

	// delete: an article goes with its comments
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(noScopeToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", elsewhere(other, id1), nil, 404)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.do(demoToken, "DELETE", one(999999999), nil, 404)
	s.do(demoToken, "GET", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", "/web/comments/count.json", nil, 200), comments-1)
	s.wantCount(s.do(demoToken, "GET", "/web/comments/count.json?article_id="+strconv.FormatInt(id1, 10), nil, 200), 0)
	wantNames(s.do(demoToken, "GET", authors, nil, 200), "authors", "Bob", "Demo App")
	// The handle of a deleted article is free again.
	s.do(demoToken, "POST", list, M{"article": M{"title": "x", "handle": "first"}}, 201)

	// Every change was logged: 5 creates; 4 updates (published, unpublished,
	// two updates); 1 destroy; and a create per comment.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Article&since_id="+strconv.FormatInt(low-1, 10), nil, 200), "events", 10)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Article&verb=destroy", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Comment&verb=create", nil, 200), "events", comments)
}

// comments runs the comment operations on articles a1 and a3 of blog and
// a4 of other, and returns how many comments it created (one on a1).
func (s *scenario) comments(t *testing.T, blog, other, a1, a3, a4 int64) int {
	const list, count = "/web/comments.json", "/web/comments/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/comments/%d.json", id) }
	act := func(id int64, action string) string { return fmt.Sprintf("/web/comments/%d/%s.json", id, action) }
	fields := func(articleID int64, extra M) M {
		f := M{"body": "I like comments\nAnd I like posting them *RESTfully*.", "author": "Ann Reader",
			"email": "ann@example.com", "blog_id": blog, "article_id": articleID}
		for k, v := range extra {
			f[k] = v
		}
		return M{"comment": f}
	}
	valid := fields(a1, nil)

	// create
	r1 := s.do(demoToken, "POST", list, fields(a1, M{"ip": "107.20.160.121"}), 201)
	c1 := s.id(r1, "comment")
	if c := r1.Object(t, "comment"); c["status"] != "pending" || c["ip"] != "107.20.160.121" || c["user_agent"] != nil ||
		c["published_at"] == nil || !strings.Contains(fmt.Sprint(c["body_html"]), "<strong>RESTfully</strong>") {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, fields(a3, M{"user_agent": "Mozilla/5.0", "ip": nil}), 201)
	c2 := s.id(r2, "comment")
	if c := r2.Object(t, "comment"); c["user_agent"] != "Mozilla/5.0" || c["ip"] == "" || c["article_id"] != float64(a3) {
		t.Errorf("create: %s", r2.Body)
	}
	c3 := s.id(s.do(demoToken, "POST", list, fields(a4, M{"blog_id": other}), 201), "comment")
	s.wantFields(s.do(demoToken, "POST", list, M{"comment": M{}}, 422), "author", "body", "email", "blog_id", "article_id")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"author": " ", "body": "  "}), 422), "author", "body")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"author": strings.Repeat("a", 256), "body": strings.Repeat("b", 20001)}), 422), "author", "body")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"email": "Ann <ann@example.com>"}), 422), "email")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"ip": "999.1.1.1"}), 422), "ip")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"user_agent": strings.Repeat("u", 1001)}), 422), "user_agent")
	s.wantFields(s.do(demoToken, "POST", list, fields(1234, nil), 422), "article_id")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"blog_id": other}), 422), "blog_id")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"blog_id": strconv.FormatInt(blog, 10) + "x"}), 422), "blog_id")
	s.do(demoToken, "POST", list, M{"comments": M{}}, 400)
	s.do(demoToken, "POST", list, M{"comment": "x"}, 400)
	s.do(demoToken, "POST", list, `{"comment": {"body": "x"`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.do(noScopeToken, "POST", list, valid, 403)

	// list
	low := min(c1, c2, c3)
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "comments", 3)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?article_id="+itoa(a1), nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?blog_id="+itoa(blog), nil, 200), "comments", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?blog_id="+itoa(other), nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?article_id="+itoa(a1)+"&blog_id="+itoa(other), nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?article_id=0&blog_id=0", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?status=pending", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?status=spam", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=published", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+itoa(low), nil, 200), "comments", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min="+url.QueryEscape("2000-01-01 00:00")+"&updated_at_max=2999-01-01", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?published_at_max=2000-01-01&published_at_min=1999-01-01", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_max=2999-01-01&updated_at_min=2000-01-01", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,status,body_html&limit=250", nil, 200), "comments", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=x", "article_id=x", "blog_id=-1",
		"status=approved", "published_status=visible", "created_at_min=yesterday", "published_at_max=soon"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", count+"?article_id="+itoa(a1), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?blog_id="+itoa(blog), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?blog_id="+itoa(blog)+"&status=pending", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=unpublished&created_at_min=2000-01-01", nil, 200), 3)
	s.do(demoToken, "GET", count+"?status=hidden", nil, 400)
	s.do(demoToken, "GET", count+"?article_id=-1", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(c1), nil, 200)
	s.do(roToken, "GET", one(c2), nil, 200)
	s.do(demoToken, "GET", one(c1)+"?fields=status,body_html,user_agent", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/comments/abc.json", nil, 404)
	s.do(noToken, "GET", one(c1), nil, 401)
	s.do(noScopeToken, "GET", one(c1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(c1), M{"comment": M{"id": c1, "body": "Edited *text*", "author": "Ann R.", "ip": "10.0.0.1"}}, 200); res.Status == 200 {
		if c := res.Object(t, "comment"); c["body"] != "Edited *text*" || c["author"] != "Ann R." || c["status"] != "pending" || c["ip"] != "107.20.160.121" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(c2), M{"comment": M{"published_at": "2024-03-11 10:00", "email": "bob@example.org"}}, 200); res.Status == 200 {
		if c := res.Object(t, "comment"); c["status"] != "published" || c["published_at"] != "2024-03-11T10:00:00-04:00" || c["email"] != "bob@example.org" {
			t.Errorf("update publishing: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"email": "nobody"}}, 422), "email")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"author": "", "body": ""}}, 422), "author", "body")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"published_at": nil}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"published_at": "soon"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"body": 5}}, 422), "body")
	s.do(demoToken, "PUT", one(999999999), M{"comment": M{"body": "x"}}, 404)
	s.do(demoToken, "PUT", "/web/comments/abc.json", M{"comment": M{"body": "x"}}, 404)
	s.do(demoToken, "PUT", one(c1), M{"body": "x"}, 400)
	s.do(demoToken, "PUT", one(c1), "not json", 400)
	s.do(demoToken, "PUT", one(c1), tooLarge, 413)
	s.do(noToken, "PUT", one(c1), M{"comment": M{"body": "x"}}, 401)
	s.do(roToken, "PUT", one(c1), M{"comment": M{"body": "x"}}, 403)

	// moderation (schema CommentStatus): each action answers the comment unwrapped
	status := func(res *apitest.Response, want string) {
		t.Helper()
		if res.Status == 200 {
			if got := res.JSON(t)["status"]; got != want {
				t.Errorf("status %v, want %s: %s", got, want, res.Body)
			}
		}
	}
	status(s.do(demoToken, "POST", act(c1, "approve"), M{}, 200), "published")
	s.wantFields(s.do(demoToken, "POST", act(c1, "approve"), M{}, 422), "status")
	s.wantFields(s.do(demoToken, "POST", act(c1, "not_spam"), nil, 422), "status")
	s.wantFields(s.do(demoToken, "POST", act(c1, "restore"), M{}, 422), "status")
	status(s.do(demoToken, "POST", act(c1, "spam"), M{}, 200), "spam")
	status(s.do(demoToken, "POST", act(c1, "spam"), nil, 200), "spam")
	s.wantFields(s.do(demoToken, "POST", act(c1, "approve"), M{}, 422), "status")
	status(s.do(demoToken, "POST", act(c1, "not_spam"), M{}, 200), "published")
	status(s.do(demoToken, "POST", act(c1, "remove"), M{}, 200), "removed")
	status(s.do(demoToken, "POST", act(c1, "remove"), nil, 200), "removed")
	status(s.do(demoToken, "POST", act(c1, "restore"), M{}, 200), "published")
	status(s.do(demoToken, "POST", act(c3, "approve"), nil, 200), "published")
	status(s.do(demoToken, "POST", act(c3, "remove"), M{}, 200), "removed")
	for _, a := range []string{"approve", "spam", "not_spam", "remove", "restore"} {
		s.do(demoToken, "POST", act(999999999, a), M{}, 404)
		s.do(demoToken, "POST", act(c2, a), tooLarge, 413)
		s.do(noToken, "POST", act(c2, a), M{}, 401)
		s.do(roToken, "POST", act(c2, a), M{}, 403)
	}
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=published", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?status=removed", nil, 200), 1)
	return 3
}
