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

// redirectsRun carries the redirects the steps create.
type redirectsRun struct {
	*scenario
	id1, id2 int64
}

const redirectList, redirectCount = "/web/redirects.json", "/web/redirects/count.json"

func (redirectsRun) one(id int64) string { return fmt.Sprintf("/web/redirects/%d.json", id) }

func (s *scenario) redirects(t *testing.T) {
	s.t = t
	r := &redirectsRun{scenario: s}
	r.create()
	r.reads()
	r.changes()
}

// Create: a full URL keeps only its path.
func (s *redirectsRun) create() {
	t := s.t
	valid := M{"redirect": M{"path": "/other", "target": "/pages/other"}}
	s.id1 = s.id(s.do(demoToken, "POST", redirectList, M{"redirect": M{"path": "/ipod", "target": "/pages/itunes"}}, 201), "redirect")
	r2 := s.do(demoToken, "POST", redirectList, M{"redirect": M{"path": "http://www.example.com/forums?x=1", "target": "http://forums.example.org/"}}, 201)
	s.id2 = s.id(r2, "redirect")
	if p := r2.Object(t, "redirect")["path"]; p != "/forums?x=1" {
		t.Errorf("full URL path stored as %v, want /forums?x=1", p)
	}
	s.wantFields(s.do(demoToken, "POST", redirectList, M{"redirect": M{}}, 422), "path", "target")
	s.wantFields(s.do(demoToken, "POST", redirectList, M{"redirect": M{"path": "/ipod", "target": "/x"}}, 422), "path")
	s.wantFields(s.do(demoToken, "POST", redirectList, M{"redirect": M{"path": "/a", "target": "not a uri"}}, 422), "target")
	s.wantFields(s.do(demoToken, "POST", redirectList, M{"redirect": M{"path": 5, "target": "/x"}}, 422), "path")
	s.do(demoToken, "POST", redirectList, M{"redirects": M{"path": "/a", "target": "/b"}}, 400)
	s.do(demoToken, "POST", redirectList, M{"redirect": "/a"}, 400)
	s.do(demoToken, "POST", redirectList, `{"redirect": {`, 400)
	s.do(demoToken, "POST", redirectList, tooLarge, 413)
	s.do(noToken, "POST", redirectList, valid, 401)
	s.do(badToken, "POST", redirectList, valid, 401)
	s.do(roToken, "POST", redirectList, valid, 403)
}

// List, count and get.
func (s *redirectsRun) reads() {
	t := s.t
	low, high := min(s.id1, s.id2), max(s.id1, s.id2)
	s.wantLen(s.do(demoToken, "GET", redirectList, nil, 200), "redirects", 2)
	s.wantLen(s.do(roToken, "GET", redirectList, nil, 200), "redirects", 2)
	if res := s.do(demoToken, "GET", redirectList+"?limit=1&page=2", nil, 200); res.Status == 200 {
		if items := res.List(t, "redirects"); len(items) != 1 || int64(items[0].(map[string]any)["id"].(float64)) != high {
			t.Errorf("page 2 of 1: %s, want id %d", res.Body, high)
		}
	}
	s.wantLen(s.do(demoToken, "GET", redirectList+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", redirectList+"?path=/ipod", nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", redirectList+"?path="+url.QueryEscape("https://demo-shop.example.com/ipod"), nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", redirectList+"?target=/pages/itunes", nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", redirectList+"?target=/nowhere", nil, 200), "redirects", 0)
	s.wantLen(s.do(demoToken, "GET", redirectList+"?fields=id,path&limit=250", nil, 200), "redirects", 2)
	for _, q := range []string{"limit=0", "limit=251", "limit=ten", "page=0", "since_id=-1", "since_id=x"} {
		s.do(demoToken, "GET", redirectList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", redirectList, nil, 401)
	s.do(noScopeToken, "GET", redirectList, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", redirectCount, nil, 200), 2)
	s.wantCount(s.do(roToken, "GET", redirectCount, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", redirectCount+"?path=/ipod", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", redirectCount+"?path=/ipod&target=/elsewhere", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", redirectCount+"?target=/pages/itunes", nil, 200), 1)
	s.do(noToken, "GET", redirectCount, nil, 401)
	s.do(noScopeToken, "GET", redirectCount, nil, 403)

	// get
	s.do(demoToken, "GET", s.one(s.id1), nil, 200)
	s.do(roToken, "GET", s.one(s.id1), nil, 200)
	s.do(demoToken, "GET", s.one(s.id1)+"?fields=target", nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/redirects/abc.json", nil, 404)
	s.do(noToken, "GET", s.one(s.id1), nil, 401)
	s.do(noScopeToken, "GET", s.one(s.id1), nil, 403)
}

// Update and delete; a deleted redirect's path is free again.
func (s *redirectsRun) changes() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.one(s.id1), M{"redirect": M{"id": s.id1, "path": "/ipod2"}}, 200); res.Status == 200 {
		if rd := res.Object(t, "redirect"); rd["path"] != "/ipod2" || rd["target"] != "/pages/itunes" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", s.one(s.id1), M{"redirect": M{"target": "https://apple.example.com/ipod"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"redirect": M{"target": "javascript:alert(1)"}}, 422), "target")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"redirect": M{"path": "/forums?x=1"}}, 422), "path")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"redirect": M{"path": ""}}, 422), "path")
	s.do(demoToken, "PUT", s.one(999999999), M{"redirect": M{"path": "/x"}}, 404)
	s.do(demoToken, "PUT", s.one(s.id1), M{"path": "/x"}, 400)
	s.do(demoToken, "PUT", s.one(s.id1), "not json", 400)
	s.do(demoToken, "PUT", s.one(s.id1), tooLarge, 413)
	s.do(noToken, "PUT", s.one(s.id1), M{"redirect": M{"path": "/x"}}, 401)
	s.do(roToken, "PUT", s.one(s.id1), M{"redirect": M{"path": "/x"}}, 403)

	// delete
	s.do(noToken, "DELETE", s.one(s.id1), nil, 401)
	s.do(roToken, "DELETE", s.one(s.id1), nil, 403)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 200)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 404)
	s.do(demoToken, "GET", s.one(s.id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", redirectCount, nil, 200), 1)
	// The path of a deleted redirect is free again.
	s.do(demoToken, "POST", redirectList, M{"redirect": M{"path": "/ipod2", "target": "/pages/itunes"}}, 201)
}

// scriptTagsRun carries the demo app's script tags the steps create.
type scriptTagsRun struct {
	*scenario
	id1, id2 int64
}

const (
	scriptTagList, scriptTagCount = "/web/script_tags.json", "/web/script_tags/count.json"
	tagSrc1, tagSrc2              = "https://js.example.org/foo.js", "https://js.example.org/bar.js"
)

func (scriptTagsRun) one(id int64) string { return fmt.Sprintf("/web/script_tags/%d.json", id) }

func (s *scenario) scriptTags(t *testing.T) {
	s.t = t
	r := &scriptTagsRun{scenario: s}
	r.create()
	r.reads()
	r.changes()
}

// Create: display_scope defaults to all.
func (s *scriptTagsRun) create() {
	t := s.t
	valid := M{"script_tag": M{"event": "onload", "src": tagSrc1}}
	r1 := s.do(demoToken, "POST", scriptTagList, valid, 201)
	s.id1 = s.id(r1, "script_tag")
	if d := r1.Object(t, "script_tag")["display_scope"]; d != "all" {
		t.Errorf("display_scope defaults to %v, want all", d)
	}
	s.id2 = s.id(s.do(demoToken, "POST", scriptTagList, M{"script_tag": M{"event": "onload", "src": tagSrc2, "display_scope": "order_status"}}, 201), "script_tag")
	s.wantFields(s.do(demoToken, "POST", scriptTagList, M{"script_tag": M{}}, 422), "src", "event")
	s.wantFields(s.do(demoToken, "POST", scriptTagList, M{"script_tag": M{"event": "onload", "src": "http://js.example.org/foo.js"}}, 422), "src")
	s.wantFields(s.do(demoToken, "POST", scriptTagList, M{"script_tag": M{"event": "onclick", "src": tagSrc1}}, 422), "event")
	s.wantFields(s.do(demoToken, "POST", scriptTagList, M{"script_tag": M{"event": "onload", "src": tagSrc1, "display_scope": "nowhere"}}, 422), "display_scope")
	s.wantFields(s.do(demoToken, "POST", scriptTagList, M{"script_tag": M{"event": "onload", "src": []any{tagSrc1}}}, 422), "src")
	s.do(demoToken, "POST", scriptTagList, M{"script_tags": []any{}}, 400)
	s.do(demoToken, "POST", scriptTagList, `[1, 2`, 400)
	s.do(demoToken, "POST", scriptTagList, tooLarge, 413)
	s.do(noToken, "POST", scriptTagList, valid, 401)
	s.do(badToken, "POST", scriptTagList, valid, 401)
	s.do(roToken, "POST", scriptTagList, valid, 403)
}

// List and count (an app sees only its own tags), and get.
func (s *scriptTagsRun) reads() {
	// list: an app sees only its own tags
	low := min(s.id1, s.id2)
	s.wantLen(s.do(demoToken, "GET", scriptTagList, nil, 200), "script_tags", 2)
	s.wantLen(s.do(roToken, "GET", scriptTagList, nil, 200), "script_tags", 0)
	s.wantLen(s.do(demoToken, "GET", scriptTagList+"?limit=1&page=2", nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", scriptTagList+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", scriptTagList+"?src="+url.QueryEscape(tagSrc2), nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", scriptTagList+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "script_tags", 2)
	s.wantLen(s.do(demoToken, "GET", scriptTagList+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "script_tags", 0)
	s.wantLen(s.do(demoToken, "GET", scriptTagList+"?updated_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "script_tags", 2)
	s.wantLen(s.do(demoToken, "GET", scriptTagList+"?fields=id,src,created_at", nil, 200), "script_tags", 2)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "page=-3", "since_id=-1", "created_at_min=yesterday", "updated_at_max=2024-13-45"} {
		s.do(demoToken, "GET", scriptTagList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", scriptTagList, nil, 401)
	s.do(noScopeToken, "GET", scriptTagList, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", scriptTagCount, nil, 200), 2)
	s.wantCount(s.do(roToken, "GET", scriptTagCount, nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", scriptTagCount+"?src="+url.QueryEscape(tagSrc1), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", scriptTagCount+"?created_at_max=2000-01-01", nil, 200), 0)
	s.do(demoToken, "GET", scriptTagCount+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", scriptTagCount, nil, 401)
	s.do(noScopeToken, "GET", scriptTagCount, nil, 403)

	// get
	s.do(demoToken, "GET", s.one(s.id1), nil, 200)
	s.do(demoToken, "GET", s.one(s.id1)+"?fields=src,display_scope", nil, 200)
	s.do(roToken, "GET", s.one(s.id1), nil, 404) // another app's tag
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/script_tags/0.json", nil, 404)
	s.do(noToken, "GET", s.one(s.id1), nil, 401)
	s.do(noScopeToken, "GET", s.one(s.id1), nil, 403)
}

// Update and delete.
func (s *scriptTagsRun) changes() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.one(s.id1), M{"script_tag": M{"id": s.id1, "src": "https://js.example.org/new.js"}}, 200); res.Status == 200 {
		if st := res.Object(t, "script_tag"); st["src"] != "https://js.example.org/new.js" || st["display_scope"] != "all" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", s.one(s.id1), M{"script_tag": M{"display_scope": "online_store"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"script_tag": M{"src": "ftp://js.example.org/a.js"}}, 422), "src")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"script_tag": M{"event": ""}}, 422), "event")
	s.do(demoToken, "PUT", s.one(999999999), M{"script_tag": M{"src": tagSrc1}}, 404)
	s.do(demoToken, "PUT", s.one(s.id1), M{"script_tag": nil}, 400)
	s.do(demoToken, "PUT", s.one(s.id1), tooLarge, 413)
	s.do(noToken, "PUT", s.one(s.id1), M{"script_tag": M{"src": tagSrc1}}, 401)
	s.do(roToken, "PUT", s.one(s.id1), M{"script_tag": M{"src": tagSrc1}}, 403)

	// delete
	s.do(noToken, "DELETE", s.one(s.id1), nil, 401)
	s.do(roToken, "DELETE", s.one(s.id1), nil, 403)
	s.do(noScopeToken, "DELETE", s.one(s.id1), nil, 403)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 200)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", scriptTagCount, nil, 200), 1)
}

// eventsRun carries the first recorded event and the window of time that
// holds three of them.
type eventsRun struct {
	*scenario
	first  int64
	window string
}

const (
	eventList, eventCount      = "/com/events.json", "/com/events/count.json"
	productEvents, orderEvents = "/com/products/632910392/events.json", "/com/orders/450789469/events.json"
)

func (eventsRun) one(id int64) string { return fmt.Sprintf("/com/events/%d.json", id) }

func (s *scenario) events(t *testing.T) {
	s.t = t

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
	r := &eventsRun{scenario: s, first: first, window: window}
	r.reads()
	r.subjects()
}

// List, count and get: no scope needed.
func (s *eventsRun) reads() {
	// list: no scope needed
	s.wantLen(s.do(demoToken, "GET", eventList, nil, 200), "events", 5)
	s.wantLen(s.do(roToken, "GET", eventList, nil, 200), "events", 5)
	s.wantLen(s.do(noScopeToken, "GET", eventList, nil, 200), "events", 5)
	s.wantLen(s.do(demoToken, "GET", eventList+"?limit=2&page=2", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", eventList+"?since_id="+strconv.FormatInt(s.first, 10), nil, 200), "events", 4)
	s.wantLen(s.do(demoToken, "GET", eventList+"?filter=Page", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", eventList+"?filter=Product,Order", nil, 200), "events", 3)
	s.wantLen(s.do(demoToken, "GET", eventList+"?filter=Product&verb=update", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", eventList+"?verb=create", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", eventList+"?"+s.window, nil, 200), "events", 3)
	s.wantLen(s.do(demoToken, "GET", eventList+"?fields=id,verb,created_at", nil, 200), "events", 5)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "filter=Widget", "filter=Page,product", "created_at_min=yesterday"} {
		s.do(demoToken, "GET", eventList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", eventList, nil, 401)
	s.do(badToken, "GET", eventList, nil, 401)

	// count
	s.wantCount(s.do(demoToken, "GET", eventCount, nil, 200), 5)
	s.wantCount(s.do(noScopeToken, "GET", eventCount, nil, 200), 5)
	s.wantCount(s.do(demoToken, "GET", eventCount+"?"+s.window, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", eventCount+"?created_at_max=2000-01-01", nil, 200), 0)
	s.do(demoToken, "GET", eventCount+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", eventCount, nil, 401)

	// get
	s.do(demoToken, "GET", s.one(s.first), nil, 200)
	s.do(noScopeToken, "GET", s.one(s.first), nil, 200)
	s.do(demoToken, "GET", s.one(s.first)+"?fields=verb,message", nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/com/events/abc.json", nil, 404)
	s.do(noToken, "GET", s.one(s.first), nil, 401)
}

// One product's and one order's events.
func (s *eventsRun) subjects() {
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

// pagesRun carries the pages the steps create and the metafield they set.
type pagesRun struct {
	*scenario
	id1, id2, id3, low int64
	metafield          M
}

const pageList, pageCount = "/web/pages.json", "/web/pages/count.json"

func (pagesRun) one(id int64) string { return fmt.Sprintf("/web/pages/%d.json", id) }

func (s *scenario) pages(t *testing.T) {
	s.t = t
	r := &pagesRun{scenario: s, metafield: M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}}
	r.create()
	r.reads()
	r.update()
	r.deleteAndLog()
}

// Create: handles made unique, metafields checked.
func (s *pagesRun) create() {
	t := s.t
	valid := M{"page": M{"title": "Shipping"}}
	r1 := s.do(demoToken, "POST", pageList, M{"page": M{"title": "About us", "body_html": "<p>Since 2010.</p>",
		"template_suffix": "contact", "metafields": []any{s.metafield, M{"namespace": "seo", "key": "hidden", "value": "no", "value_type": "string", "description": nil}}}}, 201)
	s.id1 = s.id(r1, "page")
	if p := r1.Object(t, "page"); p["handle"] != "about-us" || p["published_at"] == nil || p["template_suffix"] != "contact" || p["author"] != "Demo App" {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", pageList, M{"page": M{"title": "About us", "published": false, "author": "Ann", "template_suffix": nil}}, 201)
	s.id2 = s.id(r2, "page")
	if p := r2.Object(t, "page"); p["handle"] != "about-us-1" || p["published_at"] != nil || p["author"] != "Ann" {
		t.Errorf("create hidden: %s", r2.Body)
	}
	s.id3 = s.id(s.do(demoToken, "POST", pageList, M{"page": M{"title": "Contact", "handle": "contact_us"}}, 201), "page")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": "x", "handle": "contact_us"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": "x", "metafields": []any{
		M{"namespace": "inventory", "key": "count", "value": "many", "value_type": "integer"}}}}, 422), "metafields.value")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": "x", "metafields": []any{s.metafield, s.metafield}}}, 422), "metafields.key")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", pageList, M{"page": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", pageList, M{"pages": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", pageList, M{"page": []any{}}, 400)
	s.do(demoToken, "POST", pageList, `{"page": {"title": }`, 400)
	s.do(demoToken, "POST", pageList, tooLarge, 413)
	s.do(noToken, "POST", pageList, valid, 401)
	s.do(badToken, "POST", pageList, valid, 401)
	s.do(roToken, "POST", pageList, valid, 403)
	s.do(noScopeToken, "POST", pageList, valid, 403)
}

// List, count and get, with the published filters.
func (s *pagesRun) reads() {
	s.low = min(s.id1, s.id2, s.id3)
	s.wantLen(s.do(demoToken, "GET", pageList, nil, 200), "pages", 3)
	s.wantLen(s.do(roToken, "GET", pageList, nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", pageList+"?limit=2&page=2", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", pageList+"?since_id="+strconv.FormatInt(s.low, 10), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", pageList+"?title="+url.QueryEscape("About us"), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", pageList+"?handle=about-us-1", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", pageList+"?handle=nowhere", nil, 200), "pages", 0)
	s.wantLen(s.do(demoToken, "GET", pageList+"?published_status=published", nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", pageList+"?published_status=unpublished", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", pageList+"?published_status=any", nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", pageList+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", pageList+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "pages", 0)
	s.wantLen(s.do(demoToken, "GET", pageList+"?updated_at_max=2999-01-01", nil, 200), "pages", 3)
	// A hidden page has no published_at: a bounded range never matches it.
	s.wantLen(s.do(demoToken, "GET", pageList+"?published_at_min=2000-01-01&published_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", pageList+"?fields=id,handle,published_at&limit=250", nil, 200), "pages", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", pageList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", pageList, nil, 401)
	s.do(noScopeToken, "GET", pageList, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", pageCount, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", pageCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", pageCount+"?title="+url.QueryEscape("About us"), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", pageCount+"?handle=contact_us", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", pageCount+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", pageCount+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", pageCount+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", pageCount+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", pageCount+"?published_at_max=later", nil, 400)
	s.do(noToken, "GET", pageCount, nil, 401)
	s.do(noScopeToken, "GET", pageCount, nil, 403)

	// get
	s.do(demoToken, "GET", s.one(s.id1), nil, 200)
	s.do(roToken, "GET", s.one(s.id2), nil, 200)
	s.do(demoToken, "GET", s.one(s.id1)+"?fields=title,handle,template_suffix", nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/pages/abc.json", nil, 404)
	s.do(noToken, "GET", s.one(s.id1), nil, 401)
	s.do(noScopeToken, "GET", s.one(s.id1), nil, 403)
}

// Update: a changed handle frees the old one.
func (s *pagesRun) update() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.one(s.id2), M{"page": M{"id": s.id2, "title": "About", "published": true, "metafields": []any{s.metafield}}}, 200); res.Status == 200 {
		if p := res.Object(t, "page"); p["title"] != "About" || p["handle"] != "about-us-1" || p["published_at"] == nil || p["author"] != "Ann" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.one(s.id1), M{"page": M{"handle": "about", "template_suffix": "", "published": false}}, 200); res.Status == 200 {
		if p := res.Object(t, "page"); p["handle"] != "about" || p["template_suffix"] != nil || p["published_at"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantLen(s.do(demoToken, "GET", pageList+"?handle=about-us", nil, 200), "pages", 0)
	s.do(demoToken, "PUT", s.one(s.id3), M{"page": M{"body_html": "<p>Write to us.</p>", "author": "Bob"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"page": M{"handle": "about"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"page": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"page": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"page": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"page": M{"author": []any{}}}, 422), "author")
	s.do(demoToken, "PUT", s.one(999999999), M{"page": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", "/web/pages/abc.json", M{"page": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", s.one(s.id3), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", s.one(s.id3), "not json", 400)
	s.do(demoToken, "PUT", s.one(s.id3), tooLarge, 413)
	s.do(noToken, "PUT", s.one(s.id3), M{"page": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", s.one(s.id3), M{"page": M{"title": "x"}}, 403)
	s.wantCount(s.do(demoToken, "GET", pageCount+"?published_status=published", nil, 200), 2)
}

// Delete; then every change was logged.
func (s *pagesRun) deleteAndLog() {
	s.do(noToken, "DELETE", s.one(s.id1), nil, 401)
	s.do(roToken, "DELETE", s.one(s.id1), nil, 403)
	s.do(noScopeToken, "DELETE", s.one(s.id1), nil, 403)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 200)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 404)
	s.do(demoToken, "DELETE", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", s.one(s.id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", pageCount, nil, 200), 2)
	// The handle of a deleted page is free again.
	s.do(demoToken, "POST", pageList, M{"page": M{"title": "x", "handle": "about"}}, 201)

	// Every change was logged: 4 creates, 3 updates (published, unpublished, update), 1 destroy.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Page&since_id="+strconv.FormatInt(s.low-1, 10), nil, 200), "events", 8)
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

// blogsRun carries what the articles steps share: the articles (id1 to id3
// in the demo blog, id4 in the other), the image of id3 and the server
// that image was fetched from.
type blogsRun struct {
	*scenario
	id1, id2, id3, id4, low int64
	img3                    map[string]any
	metafield               M
	manyTags                string // 41 tags, one too many
	imageServer             *httptest.Server
}

const (
	blogID, otherBlogID                                    = 241253187, 241253188
	articleList, articleCount, articleTags, articleAuthors = "/web/blogs/241253187/articles.json", "/web/blogs/241253187/articles/count.json",
		"/web/blogs/241253187/articles/tags.json", "/web/articles/authors.json"
	otherArticleList, otherArticleCount, otherArticleTags = "/web/blogs/241253188/articles.json", "/web/blogs/241253188/articles/count.json",
		"/web/blogs/241253188/articles/tags.json"
	unknownArticleList, unknownArticleCount, unknownArticleTags = "/web/blogs/1234/articles.json", "/web/blogs/1234/articles/count.json",
		"/web/blogs/1234/articles/tags.json"
)

// tooLargeArticle is a body over the limit of the article routes, which
// take an image attachment.
var tooLargeArticle = `{"x":"` + strings.Repeat("a", images.MaxBody) + `"}`

func (blogsRun) one(id int64) string {
	return fmt.Sprintf("/web/blogs/%d/articles/%d.json", blogID, id)
}

func (blogsRun) elsewhere(blog, id int64) string {
	return fmt.Sprintf("/web/blogs/%d/articles/%d.json", blog, id)
}

// wantNames checks a list of names (tags, authors), in order.
func (s *blogsRun) wantNames(res *apitest.Response, key string, want ...string) {
	s.t.Helper()
	if res.Status != 200 {
		return
	}
	var got []string
	for _, v := range res.List(s.t, key) {
		got = append(got, v.(string))
	}
	if !slices.Equal(got, want) {
		s.t.Errorf("%s %v, want %v", key, got, want)
	}
}

func (s *scenario) blogs(t *testing.T) {
	s.t = t
	// A second blog beside the demo seed's; blogs have no endpoints.
	const otherBlog = `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"blogs": [{"id": 241253188, "title": "Journal", "handle": "journal"}]}`
	if _, _, err := seed.Load(context.Background(), s.env.Deps.Store, s.env.Deps.Clock, []byte(otherBlog)); err != nil {
		t.Fatal(err)
	}
	manyTags := ""
	for i := range 41 {
		manyTags += fmt.Sprintf("tag%d,", i)
	}
	imageServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(tinyPNG(t, 4, 5))
	}))
	defer imageServer.Close()
	r := &blogsRun{scenario: s, manyTags: manyTags, imageServer: imageServer,
		metafield: M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}}
	r.create()
	r.reads()
	r.tagsAuthorsGet()
	r.update()
	r.commentsDelete()
}

// Create: with an attachment, with a src, and in another blog (handles
// are unique per blog only).
func (s *blogsRun) create() {
	t := s.t
	valid := M{"article": M{"title": "Shipping news"}}
	pngBytes := tinyPNG(t, 2, 3)
	r1 := s.do(demoToken, "POST", articleList, M{"article": M{"title": "My new Article title", "author": "John Smith",
		"tags": "This Post, Tag, Tag", "body_html": "<h1>I like articles</h1>", "summary_html": "<p>Short</p>",
		"published_at": "Thu Mar 24 15:45:47 UTC 2011", "template_suffix": "wide", "metafields": []any{s.metafield}}}, 201)
	s.id1 = s.id(r1, "article")
	if a := r1.Object(t, "article"); a["handle"] != "my-new-article-title" || a["tags"] != "Tag, This Post" || a["blog_id"] != float64(blogID) ||
		a["published_at"] != "2011-03-24T11:45:47-04:00" || a["author"] != "John Smith" || a["template_suffix"] != "wide" || a["image"] != nil {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", articleList, M{"article": M{"title": "My new Article title", "published": false, "published_at": "2024-03-11",
		"image": M{"attachment": base64.StdEncoding.EncodeToString(pngBytes), "filename": "cover.png"}}}, 201)
	s.id2 = s.id(r2, "article")
	if a := r2.Object(t, "article"); a["handle"] != "my-new-article-title-1" || a["published_at"] != nil || a["author"] != "Demo App" {
		t.Errorf("create hidden: %s", r2.Body)
	} else if img, _ := a["image"].(map[string]any); img == nil || img["width"] != 2.0 || img["height"] != 3.0 ||
		!regexp.MustCompile(`^https://demo-shop\.example\.com/files/\d+/cover\.png$`).MatchString(fmt.Sprint(img["src"])) {
		t.Errorf("create with an attachment: %s", r2.Body)
	}
	r3 := s.do(demoToken, "POST", articleList, M{"article": M{"title": "Hello", "handle": "hello_world", "tags": "News, Tag", "image": M{"src": s.imageServer.URL + "/cat.png"}}}, 201)
	s.id3 = s.id(r3, "article")
	s.img3, _ = r3.Object(t, "article")["image"].(map[string]any)
	if s.img3 == nil || s.img3["src"] != s.imageServer.URL+"/cat.png" || s.img3["width"] != 4.0 {
		t.Errorf("create with a src: %s", r3.Body)
	}
	// Handles are unique per blog only.
	r4 := s.do(demoToken, "POST", otherArticleList, M{"article": M{"title": "My new Article title", "image": nil}}, 201)
	s.id4 = s.id(r4, "article")
	if a := r4.Object(t, "article"); a["handle"] != "my-new-article-title" || a["blog_id"] != float64(otherBlogID) {
		t.Errorf("create in another blog: %s", r4.Body)
	}
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "handle": "hello_world"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "author": strings.Repeat("a", 256)}}, 422), "author")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "tags": s.manyTags}}, 422), "tags")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "published_at": "someday"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "published_at": "Thu Mar 24 15:45:47 PST 2011"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "image": "cat.png"}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "image": M{"attachment": "!!"}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "image": M{"attachment": base64.StdEncoding.EncodeToString([]byte("not an image"))}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "image": M{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", articleList, M{"articles": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", articleList, M{"article": []any{}}, 400)
	s.do(demoToken, "POST", articleList, `{"article": {"title": }`, 400)
	s.do(demoToken, "POST", articleList, tooLargeArticle, 413)
	s.do(noToken, "POST", articleList, valid, 401)
	s.do(badToken, "POST", articleList, valid, 401)
	s.do(roToken, "POST", articleList, valid, 403)
	s.do(noScopeToken, "POST", articleList, valid, 403)
	s.do(demoToken, "POST", unknownArticleList, valid, 404)
}

// List (newest first) and count.
func (s *blogsRun) reads() {
	t := s.t
	// list: newest first
	s.low = min(s.id1, s.id2, s.id3)
	if res := s.do(demoToken, "GET", articleList, nil, 200); res.Status == 200 {
		if items := res.List(t, "articles"); len(items) != 3 || items[0].(map[string]any)["id"] != float64(s.id3) {
			t.Errorf("list: %s, want 3 articles, id %d first", res.Body, s.id3)
		}
	}
	s.wantLen(s.do(roToken, "GET", articleList, nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", articleList+"?limit=2&page=2", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", articleList+"?since_id="+strconv.FormatInt(s.low, 10), nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", articleList+"?handle=my-new-article-title-1", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", articleList+"?handle=nowhere", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", articleList+"?tag=Tag", nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", articleList+"?tag=tag", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", articleList+"?author="+url.QueryEscape("John Smith"), nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", articleList+"?author="+url.QueryEscape("Demo App")+"&tag=News", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", articleList+"?published_status=published", nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", articleList+"?published_status=unpublished", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", articleList+"?published_status=any&published_at_min=2012-01-01", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", articleList+"?published_at_max="+url.QueryEscape("2012-01-01T00:00:00-05:00"), nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", articleList+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", articleList+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00")+"&updated_at_max=2999-02-01", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", articleList+"?fields=id,title,image&limit=250", nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", otherArticleList, nil, 200), "articles", 1)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", articleList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", articleList, nil, 401)
	s.do(noScopeToken, "GET", articleList, nil, 403)
	s.do(demoToken, "GET", unknownArticleList, nil, 404)

	// count
	s.wantCount(s.do(demoToken, "GET", articleCount, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", articleCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", otherArticleCount, nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", articleCount+"?tag=Tag", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", articleCount+"?author="+url.QueryEscape("Demo App"), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", articleCount+"?handle=hello_world", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", articleCount+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", articleCount+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", articleCount+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", articleCount+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", articleCount+"?published_at_max=later", nil, 400)
	s.do(noToken, "GET", articleCount, nil, 401)
	s.do(noScopeToken, "GET", articleCount, nil, 403)
	s.do(demoToken, "GET", unknownArticleCount, nil, 404)
}

// Tags (a blog's and the shop's), authors (of every blog) and get.
func (s *blogsRun) tagsAuthorsGet() {
	s.wantNames(s.do(demoToken, "GET", articleTags, nil, 200), "tags", "News", "Tag", "This Post")
	s.wantNames(s.do(roToken, "GET", articleTags+"?popular=1", nil, 200), "tags", "Tag", "News", "This Post")
	s.wantNames(s.do(demoToken, "GET", articleTags+"?popular=true&limit=1", nil, 200), "tags", "Tag")
	s.wantNames(s.do(demoToken, "GET", articleTags+"?popular=0&limit=2", nil, 200), "tags", "News", "Tag")
	s.wantNames(s.do(demoToken, "GET", otherArticleTags, nil, 200), "tags")
	for _, q := range []string{"limit=0", "limit=251", "limit=x", "popular=yes"} {
		s.do(demoToken, "GET", articleTags+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", articleTags, nil, 401)
	s.do(noScopeToken, "GET", articleTags, nil, 403)
	s.do(demoToken, "GET", unknownArticleTags, nil, 404)
	// The shop's tags: every blog's (the other blog has none yet).
	s.wantNames(s.do(demoToken, "GET", "/web/articles/tags.json?popular=1&limit=2", nil, 200), "tags", "Tag", "News")
	s.do(demoToken, "GET", "/web/articles/tags.json?limit=0", nil, 400)
	s.do(noToken, "GET", "/web/articles/tags.json", nil, 401)
	s.do(noScopeToken, "GET", "/web/articles/tags.json", nil, 403)

	// authors: of every blog
	s.wantNames(s.do(demoToken, "GET", articleAuthors, nil, 200), "authors", "Demo App", "John Smith")
	s.do(roToken, "GET", articleAuthors, nil, 200)
	s.do(noToken, "GET", articleAuthors, nil, 401)
	s.do(noScopeToken, "GET", articleAuthors, nil, 403)

	// get
	s.do(demoToken, "GET", s.one(s.id1), nil, 200)
	s.do(roToken, "GET", s.one(s.id2), nil, 200)
	s.do(demoToken, "GET", s.one(s.id2)+"?fields=title,handle,image", nil, 200)
	s.do(demoToken, "GET", s.elsewhere(otherBlogID, s.id4), nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/blogs/241253187/articles/abc.json", nil, 404)
	s.do(demoToken, "GET", s.elsewhere(otherBlogID, s.id1), nil, 404)
	s.do(demoToken, "GET", s.elsewhere(1234, s.id1), nil, 404)
	s.do(noToken, "GET", s.one(s.id1), nil, 401)
	s.do(noScopeToken, "GET", s.one(s.id1), nil, 403)
}

// Update: the current image sent back as it was returned is kept.
func (s *blogsRun) update() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.one(s.id2), M{"article": M{"id": s.id2, "title": "Second", "published": true, "image": nil}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["title"] != "Second" || a["handle"] != "my-new-article-title-1" || a["published_at"] == nil || a["image"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"handle": "first", "tags": "", "summary_html": "", "template_suffix": "", "published_at": nil}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["handle"] != "first" || a["tags"] != "" || a["summary_html"] != nil || a["template_suffix"] != nil || a["published_at"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	// The current image sent back as it was returned is kept.
	if res := s.do(demoToken, "PUT", s.one(s.id3), M{"article": M{"image": M{"src": s.img3["src"]}, "author": "Bob", "metafields": []any{s.metafield}}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["author"] != "Bob" || !reflect.DeepEqual(a["image"], s.img3) {
			t.Errorf("update keeping the image: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.one(s.id3), M{"article": M{"published_at": "2024-03-11 10:00", "blog_id": otherBlogID}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["published_at"] != "2024-03-11T10:00:00-04:00" || a["blog_id"] != float64(blogID) {
			t.Errorf("update published_at: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"handle": "hello_world"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"author": " "}}, 422), "author")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"published_at": 5}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"image": []any{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"tags": s.manyTags}}, 422), "tags")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id1), M{"article": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.do(demoToken, "PUT", s.one(999999999), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", s.elsewhere(otherBlogID, s.id1), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", s.elsewhere(1234, s.id1), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", s.one(s.id1), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", s.one(s.id1), "not json", 400)
	s.do(demoToken, "PUT", s.one(s.id1), tooLargeArticle, 413)
	s.do(noToken, "PUT", s.one(s.id1), M{"article": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", s.one(s.id1), M{"article": M{"title": "x"}}, 403)
	s.wantCount(s.do(demoToken, "GET", articleCount+"?published_status=published", nil, 200), 2)
	s.wantNames(s.do(demoToken, "GET", articleAuthors, nil, 200), "authors", "Bob", "Demo App", "John Smith")
}

// Comments; then delete (an article goes with its comments) and the
// log of every change.
func (s *blogsRun) commentsDelete() {
	comments := s.comments(blogID, otherBlogID, s.id1, s.id3, s.id4)

	// delete: an article goes with its comments
	s.do(noToken, "DELETE", s.one(s.id1), nil, 401)
	s.do(roToken, "DELETE", s.one(s.id1), nil, 403)
	s.do(noScopeToken, "DELETE", s.one(s.id1), nil, 403)
	s.do(demoToken, "DELETE", s.elsewhere(otherBlogID, s.id1), nil, 404)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 200)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 404)
	s.do(demoToken, "DELETE", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", s.one(s.id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", articleCount, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", "/web/comments/count.json", nil, 200), comments-1)
	s.wantCount(s.do(demoToken, "GET", "/web/comments/count.json?article_id="+strconv.FormatInt(s.id1, 10), nil, 200), 0)
	s.wantNames(s.do(demoToken, "GET", articleAuthors, nil, 200), "authors", "Bob", "Demo App")
	// The handle of a deleted article is free again.
	s.do(demoToken, "POST", articleList, M{"article": M{"title": "x", "handle": "first"}}, 201)

	// Every change was logged: 5 creates; 4 updates (published, unpublished,
	// two updates); 1 destroy; and a create per comment.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Article&since_id="+strconv.FormatInt(s.low-1, 10), nil, 200), "events", 10)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Article&verb=destroy", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Comment&verb=create", nil, 200), "events", comments)
}

// commentsRun carries the blogs and articles the comments go on, and the
// comments the steps create.
type commentsRun struct {
	*scenario
	blog, other, a1, a3, a4 int64
	c1, c2, c3              int64
}

const commentList, commentCount = "/web/comments.json", "/web/comments/count.json"

func (commentsRun) one(id int64) string { return fmt.Sprintf("/web/comments/%d.json", id) }

// act is the path of a moderation action.
func (commentsRun) act(id int64, action string) string {
	return fmt.Sprintf("/web/comments/%d/%s.json", id, action)
}

// fields is a valid comment on the article, with extra fields.
func (s *commentsRun) fields(articleID int64, extra M) M {
	f := M{"body": "I like comments\nAnd I like posting them *RESTfully*.", "author": "Ann Reader",
		"email": "ann@example.com", "blog_id": s.blog, "article_id": articleID}
	for k, v := range extra {
		f[k] = v
	}
	return M{"comment": f}
}

// comments runs the comment operations on articles a1 and a3 of blog and
// a4 of other, and returns how many comments it created (one on a1).
func (s *scenario) comments(blog, other, a1, a3, a4 int64) int {
	r := &commentsRun{scenario: s, blog: blog, other: other, a1: a1, a3: a3, a4: a4}
	r.create()
	r.reads()
	r.update()
	r.moderate()
	return 3
}

// Create: pending, its body rendered.
func (s *commentsRun) create() {
	t := s.t
	valid := s.fields(s.a1, nil)
	r1 := s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"ip": "107.20.160.121"}), 201)
	s.c1 = s.id(r1, "comment")
	if c := r1.Object(t, "comment"); c["status"] != "pending" || c["ip"] != "107.20.160.121" || c["user_agent"] != nil ||
		c["published_at"] == nil || !strings.Contains(fmt.Sprint(c["body_html"]), "<strong>RESTfully</strong>") {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", commentList, s.fields(s.a3, M{"user_agent": "Mozilla/5.0", "ip": nil}), 201)
	s.c2 = s.id(r2, "comment")
	if c := r2.Object(t, "comment"); c["user_agent"] != "Mozilla/5.0" || c["ip"] == "" || c["article_id"] != float64(s.a3) {
		t.Errorf("create: %s", r2.Body)
	}
	s.c3 = s.id(s.do(demoToken, "POST", commentList, s.fields(s.a4, M{"blog_id": s.other}), 201), "comment")
	s.wantFields(s.do(demoToken, "POST", commentList, M{"comment": M{}}, 422), "author", "body", "email", "blog_id", "article_id")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"author": " ", "body": "  "}), 422), "author", "body")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"author": strings.Repeat("a", 256), "body": strings.Repeat("b", 20001)}), 422), "author", "body")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"email": "Ann <ann@example.com>"}), 422), "email")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"ip": "999.1.1.1"}), 422), "ip")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"user_agent": strings.Repeat("u", 1001)}), 422), "user_agent")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(1234, nil), 422), "article_id")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"blog_id": s.other}), 422), "blog_id")
	s.wantFields(s.do(demoToken, "POST", commentList, s.fields(s.a1, M{"blog_id": strconv.FormatInt(s.blog, 10) + "x"}), 422), "blog_id")
	s.do(demoToken, "POST", commentList, M{"comments": M{}}, 400)
	s.do(demoToken, "POST", commentList, M{"comment": "x"}, 400)
	s.do(demoToken, "POST", commentList, `{"comment": {"body": "x"`, 400)
	s.do(demoToken, "POST", commentList, tooLarge, 413)
	s.do(noToken, "POST", commentList, valid, 401)
	s.do(badToken, "POST", commentList, valid, 401)
	s.do(roToken, "POST", commentList, valid, 403)
	s.do(noScopeToken, "POST", commentList, valid, 403)
}

// List, count and get.
func (s *commentsRun) reads() {
	low := min(s.c1, s.c2, s.c3)
	s.wantLen(s.do(demoToken, "GET", commentList, nil, 200), "comments", 3)
	s.wantLen(s.do(roToken, "GET", commentList, nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", commentList+"?article_id="+itoa(s.a1), nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", commentList+"?blog_id="+itoa(s.blog), nil, 200), "comments", 2)
	s.wantLen(s.do(demoToken, "GET", commentList+"?blog_id="+itoa(s.other), nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", commentList+"?article_id="+itoa(s.a1)+"&blog_id="+itoa(s.other), nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", commentList+"?article_id=0&blog_id=0", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", commentList+"?status=pending", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", commentList+"?status=spam", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", commentList+"?published_status=published", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", commentList+"?limit=2&page=2", nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", commentList+"?since_id="+itoa(low), nil, 200), "comments", 2)
	s.wantLen(s.do(demoToken, "GET", commentList+"?created_at_min="+url.QueryEscape("2000-01-01 00:00")+"&updated_at_max=2999-01-01", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", commentList+"?published_at_max=2000-01-01&published_at_min=1999-01-01", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", commentList+"?created_at_max=2999-01-01&updated_at_min=2000-01-01", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", commentList+"?fields=id,status,body_html&limit=250", nil, 200), "comments", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=x", "article_id=x", "blog_id=-1",
		"status=approved", "published_status=visible", "created_at_min=yesterday", "published_at_max=soon"} {
		s.do(demoToken, "GET", commentList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", commentList, nil, 401)
	s.do(noScopeToken, "GET", commentList, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", commentCount, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", commentCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", commentCount+"?article_id="+itoa(s.a1), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", commentCount+"?blog_id="+itoa(s.blog), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", commentCount+"?blog_id="+itoa(s.blog)+"&status=pending", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", commentCount+"?published_status=unpublished&created_at_min=2000-01-01", nil, 200), 3)
	s.do(demoToken, "GET", commentCount+"?status=hidden", nil, 400)
	s.do(demoToken, "GET", commentCount+"?article_id=-1", nil, 400)
	s.do(noToken, "GET", commentCount, nil, 401)
	s.do(noScopeToken, "GET", commentCount, nil, 403)

	// get
	s.do(demoToken, "GET", s.one(s.c1), nil, 200)
	s.do(roToken, "GET", s.one(s.c2), nil, 200)
	s.do(demoToken, "GET", s.one(s.c1)+"?fields=status,body_html,user_agent", nil, 200)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/comments/abc.json", nil, 404)
	s.do(noToken, "GET", s.one(s.c1), nil, 401)
	s.do(noScopeToken, "GET", s.one(s.c1), nil, 403)
}

// Update: the ip is kept; a published_at publishes.
func (s *commentsRun) update() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.one(s.c1), M{"comment": M{"id": s.c1, "body": "Edited *text*", "author": "Ann R.", "ip": "10.0.0.1"}}, 200); res.Status == 200 {
		if c := res.Object(t, "comment"); c["body"] != "Edited *text*" || c["author"] != "Ann R." || c["status"] != "pending" || c["ip"] != "107.20.160.121" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.one(s.c2), M{"comment": M{"published_at": "2024-03-11 10:00", "email": "bob@example.org"}}, 200); res.Status == 200 {
		if c := res.Object(t, "comment"); c["status"] != "published" || c["published_at"] != "2024-03-11T10:00:00-04:00" || c["email"] != "bob@example.org" {
			t.Errorf("update publishing: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", s.one(s.c1), M{"comment": M{"email": "nobody"}}, 422), "email")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.c1), M{"comment": M{"author": "", "body": ""}}, 422), "author", "body")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.c1), M{"comment": M{"published_at": nil}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.c1), M{"comment": M{"published_at": "soon"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.c1), M{"comment": M{"body": 5}}, 422), "body")
	s.do(demoToken, "PUT", s.one(999999999), M{"comment": M{"body": "x"}}, 404)
	s.do(demoToken, "PUT", "/web/comments/abc.json", M{"comment": M{"body": "x"}}, 404)
	s.do(demoToken, "PUT", s.one(s.c1), M{"body": "x"}, 400)
	s.do(demoToken, "PUT", s.one(s.c1), "not json", 400)
	s.do(demoToken, "PUT", s.one(s.c1), tooLarge, 413)
	s.do(noToken, "PUT", s.one(s.c1), M{"comment": M{"body": "x"}}, 401)
	s.do(roToken, "PUT", s.one(s.c1), M{"comment": M{"body": "x"}}, 403)
}

// Moderation (schema CommentStatus): each action answers the comment
// unwrapped.
func (s *commentsRun) moderate() {
	t := s.t
	// moderation (schema CommentStatus): each action answers the comment unwrapped
	status := func(res *apitest.Response, want string) {
		t.Helper()
		if res.Status == 200 {
			if got := res.JSON(t)["status"]; got != want {
				t.Errorf("status %v, want %s: %s", got, want, res.Body)
			}
		}
	}
	status(s.do(demoToken, "POST", s.act(s.c1, "approve"), M{}, 200), "published")
	s.wantFields(s.do(demoToken, "POST", s.act(s.c1, "approve"), M{}, 422), "status")
	s.wantFields(s.do(demoToken, "POST", s.act(s.c1, "not_spam"), nil, 422), "status")
	s.wantFields(s.do(demoToken, "POST", s.act(s.c1, "restore"), M{}, 422), "status")
	status(s.do(demoToken, "POST", s.act(s.c1, "spam"), M{}, 200), "spam")
	status(s.do(demoToken, "POST", s.act(s.c1, "spam"), nil, 200), "spam")
	s.wantFields(s.do(demoToken, "POST", s.act(s.c1, "approve"), M{}, 422), "status")
	status(s.do(demoToken, "POST", s.act(s.c1, "not_spam"), M{}, 200), "published")
	status(s.do(demoToken, "POST", s.act(s.c1, "remove"), M{}, 200), "removed")
	status(s.do(demoToken, "POST", s.act(s.c1, "remove"), nil, 200), "removed")
	status(s.do(demoToken, "POST", s.act(s.c1, "restore"), M{}, 200), "published")
	status(s.do(demoToken, "POST", s.act(s.c3, "approve"), nil, 200), "published")
	status(s.do(demoToken, "POST", s.act(s.c3, "remove"), M{}, 200), "removed")
	for _, a := range []string{"approve", "spam", "not_spam", "remove", "restore"} {
		s.do(demoToken, "POST", s.act(999999999, a), M{}, 404)
		s.do(demoToken, "POST", s.act(s.c2, a), tooLarge, 413)
		s.do(noToken, "POST", s.act(s.c2, a), M{}, 401)
		s.do(roToken, "POST", s.act(s.c2, a), M{}, 403)
	}
	s.wantCount(s.do(demoToken, "GET", commentCount+"?published_status=published", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", commentCount+"?status=removed", nil, 200), 1)
}
