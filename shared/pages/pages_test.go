package pages_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

var group = api.Group{Name: "pages", Routes: pages.Routes}

func create(t *testing.T, e *apitest.Env, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("POST", "/web/pages.json", map[string]any{"page": fields}).Expect(t, 201).Object(t, "page")
}

func path(p map[string]any) string {
	return fmt.Sprintf("/web/pages/%d.json", int64(p["id"].(float64)))
}

// pageEvents reads the events log directly: the events endpoints are another group.
func pageEvents(t *testing.T, e *apitest.Env, id float64) []events.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Page, int64(id))})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := records.DecodeAll[events.Event](items)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestPages(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("create publishes, generates a unique handle, logs an event", func(t *testing.T) {
			p := create(t, e, map[string]any{"title": "Warranty information", "body_html": "<h2>Warranty</h2>"})
			if p["handle"] != "warranty-information" || p["published_at"] == nil || p["shop_id"] != 1.0 || p["author"] != "Demo App" {
				t.Fatalf("got %v", p)
			}
			if p["template_suffix"] != nil || p["created_at"] != p["updated_at"] {
				t.Fatalf("got %v", p)
			}
			second := create(t, e, map[string]any{"title": "Warranty   Information!"})
			third := create(t, e, map[string]any{"title": "warranty information"})
			if second["handle"] != "warranty-information-1" || third["handle"] != "warranty-information-2" {
				t.Fatalf("handles %v %v", second["handle"], third["handle"])
			}
			evs := pageEvents(t, e, p["id"].(float64))
			if len(evs) != 1 || evs[0].Verb != "create" || evs[0].Author != "Demo App" ||
				evs[0].Message != `New page created: <a href="/pages/warranty-information">Warranty information</a>` ||
				evs[0].Path == nil || *evs[0].Path != "/pages/warranty-information" {
				t.Fatalf("events %+v", evs)
			}
		})
		t.Run("validation", func(t *testing.T) {
			res := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"body_html": "x"}}).Expect(t, 422)
			if strings.TrimSpace(string(res.Body)) != `{"errors":{"title":["can't be blank"]}}` {
				t.Fatalf("got %s", res.Body)
			}
			res = e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "x", "metafields": []any{
				map[string]any{"namespace": "ab", "key": "", "value_type": "float"}}}}).Expect(t, 422)
			errs := res.JSON(t)["errors"].(map[string]any)
			for _, f := range []string{"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type"} {
				if _, ok := errs[f]; !ok {
					t.Fatalf("no %s error: %s", f, res.Body)
				}
			}
			if c := e.Do("GET", "/web/pages/count.json?title=x", nil).JSON(t)["count"]; c != 0.0 {
				t.Fatalf("a rejected page was stored: %v", c)
			}
		})
		t.Run("publishing convention and update events", func(t *testing.T) {
			p := create(t, e, map[string]any{"title": "Hidden", "published": false})
			if p["published_at"] != nil {
				t.Fatalf("published_at %v", p["published_at"])
			}
			shown := e.Do("PUT", path(p), map[string]any{"page": map[string]any{"published": true}}).Expect(t, 200).Object(t, "page")
			if shown["published_at"] == nil {
				t.Fatal("not published")
			}
			hidden := e.Do("PUT", path(p), map[string]any{"page": map[string]any{"published": false, "author": "Ann"}}).Expect(t, 200).Object(t, "page")
			if hidden["published_at"] != nil || hidden["author"] != "Ann" {
				t.Fatalf("got %v", hidden)
			}
			e.Do("PUT", path(p), map[string]any{"page": map[string]any{"body_html": "new"}}).Expect(t, 200)
			var verbs []string
			for _, ev := range pageEvents(t, e, p["id"].(float64)) {
				verbs = append(verbs, ev.Verb)
			}
			if strings.Join(verbs, ",") != "create,published,unpublished,update" {
				t.Fatalf("verbs %v", verbs)
			}
		})
		t.Run("handles are settable and unique on update", func(t *testing.T) { pageHandles(t, e) })
		t.Run("delete releases the handle, removes metafields and logs destroy", func(t *testing.T) { pageDelete(t, e) })
		t.Run("titles are escaped in event messages", func(t *testing.T) {
			p := create(t, e, map[string]any{"title": `<script>alert(1)</script>`})
			if msg := pageEvents(t, e, p["id"].(float64))[0].Message; strings.Contains(msg, "<script>") {
				t.Fatalf("message %s", msg)
			}
		})
	}, group)
}

func pageHandles(t *testing.T, e *apitest.Env) {
	a := create(t, e, map[string]any{"title": "Alpha"})
	create(t, e, map[string]any{"title": "Beta"})
	res := e.Do("PUT", path(a), map[string]any{"page": map[string]any{"handle": "beta"}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"handle":["has already been taken"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	e.Do("PUT", path(a), map[string]any{"page": map[string]any{"handle": "Not Valid"}}).Expect(t, 422)
	if r := e.Do("PUT", path(a), map[string]any{"page": map[string]any{"handle": nil}}).Expect(t, 422); strings.TrimSpace(string(r.Body)) != `{"errors":{"handle":["must be a string"]}}` {
		t.Fatalf("null handle: %s", r.Body)
	}
	if r := e.Do("PUT", path(a), map[string]any{"page": map[string]any{"body_html": nil}}).Expect(t, 422); strings.TrimSpace(string(r.Body)) != `{"errors":{"body_html":["must be a string"]}}` {
		t.Fatalf("null body_html: %s", r.Body)
	}
	moved := e.Do("PUT", path(a), map[string]any{"page": map[string]any{"handle": "alpha-moved", "title": "Alpha 2"}}).Expect(t, 200).Object(t, "page")
	if moved["handle"] != "alpha-moved" || moved["title"] != "Alpha 2" {
		t.Fatalf("got %v", moved)
	}
	if again := create(t, e, map[string]any{"title": "Alpha"}); again["handle"] != "alpha" {
		t.Fatalf("the old handle was not released: %v", again["handle"])
	}
	if l := e.Do("GET", "/web/pages.json?handle=alpha-moved", nil).Expect(t, 200).List(t, "pages"); len(l) != 1 {
		t.Fatalf("handle filter %v", l)
	}
}

func pageDelete(t *testing.T, e *apitest.Env) {
	p := create(t, e, map[string]any{"title": "Gone", "metafields": []any{
		map[string]any{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}}})
	owned, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: metafields.OwnerPartition("page", int64(p["id"].(float64)))})
	if err != nil || len(owned) != 1 {
		t.Fatalf("metafields %v %v", owned, err)
	}
	var m metafields.Metafield
	records.Decode(&owned[0], &m)
	if string(m.Value) != "25" || m.Namespace != "inventory" || m.OwnerResource != "page" {
		t.Fatalf("metafield %+v", m)
	}
	e.Do("DELETE", path(p), nil).Expect(t, 200)
	e.Do("GET", path(p), nil).Expect(t, 404)
	owned, _, _ = e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: metafields.OwnerPartition("page", int64(p["id"].(float64)))})
	if len(owned) != 0 {
		t.Fatal("metafields outlive their page")
	}
	evs := pageEvents(t, e, p["id"].(float64))
	if last := evs[len(evs)-1]; last.Verb != "destroy" || last.Message != `<a href="/pages/gone">Gone</a> was destroyed.` {
		t.Fatalf("event %+v", last)
	}
	if c := create(t, e, map[string]any{"title": "Gone"}); c["handle"] != "gone" {
		t.Fatalf("handle %v", c["handle"])
	}
}

func TestPageFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := create(t, e, map[string]any{"title": "About"})
		create(t, e, map[string]any{"title": "Contact", "published": false})
		create(t, e, map[string]any{"title": "About"})
		list := func(q string) []any { return e.Do("GET", "/web/pages.json"+q, nil).Expect(t, 200).List(t, "pages") }
		count := func(q string) float64 {
			return e.Do("GET", "/web/pages/count.json"+q, nil).Expect(t, 200).JSON(t)["count"].(float64)
		}
		if n := len(list("?title=About")); n != 2 {
			t.Fatalf("title: %d", n)
		}
		if n := len(list("?published_status=unpublished")); n != 1 || count("?published_status=published") != 2 {
			t.Fatalf("published_status: %d", n)
		}
		e.Do("GET", "/web/pages.json?published_status=sometimes", nil).Expect(t, 400)
		if count("") != 3 {
			t.Fatal("count")
		}
		created, _ := time.Parse(time.RFC3339, a["created_at"].(string))
		loc, _ := time.LoadLocation("America/New_York")
		tomorrow := created.In(loc).AddDate(0, 0, 1).Format("2006-01-02")
		yesterday := created.In(loc).AddDate(0, 0, -1).Format("2006-01-02")
		if n := len(list("?created_at_min=" + yesterday + "&created_at_max=" + tomorrow)); n != 3 {
			t.Fatalf("created_at day range: %d", n)
		}
		if n := count("?updated_at_min=" + tomorrow); n != 0 {
			t.Fatalf("updated_at_min tomorrow: %v", n)
		}
		after := url.QueryEscape(created.Add(time.Hour).Format(time.RFC3339))
		if n := len(list("?published_at_max=" + after)); n != 2 {
			t.Fatalf("published_at_max: %d", n)
		}
		if l := list("?fields=id,handle&limit=1&page=2"); len(l) != 1 || len(l[0].(map[string]any)) != 2 {
			t.Fatalf("fields/paging %v", l)
		}
		if l := list(fmt.Sprintf("?since_id=%d", int64(a["id"].(float64)))); len(l) != 2 {
			t.Fatalf("since_id %v", l)
		}
	}, group)
}

// Concurrent creates of one title: every page gets its own handle.
func TestConcurrentHandles(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 8
		var wg sync.WaitGroup
		handles := make(chan string, n)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "Same"}})
				if res.Status == 201 {
					handles <- res.Object(t, "page")["handle"].(string)
				}
			}()
		}
		wg.Wait()
		close(handles)
		seen := map[string]bool{}
		for h := range handles {
			if seen[h] {
				t.Fatalf("handle %s given twice", h)
			}
			seen[h] = true
		}
		if len(seen) != n {
			t.Fatalf("%d of %d creates succeeded", len(seen), n)
		}
	}, group)
}

func text(s string) *string { return &s }

// The rules of a page, without HTTP or a store: validation fails before
// anything is read or written.
func TestPageRules(t *testing.T) {
	var s pages.Service
	ctx := admin.WithShop(admin.WithApp(t.Context(), &admin.App{ID: 1, Name: "app"}), &admin.Shop{ID: 1})
	for _, c := range []struct {
		name string
		in   pages.Input
		want string
	}{
		{"title required", pages.Input{}, `invalid title=["can't be blank"]`},
		{"title blank", pages.Input{Title: text("  ")}, `invalid title=["can't be blank"]`},
		{"title too long", pages.Input{Title: text(strings.Repeat("é", 256))}, `invalid title=["is too long (maximum is 255 characters)"]`},
		{"handle invalid", pages.Input{Title: text("About"), Handle: text("About Us!")}, `invalid handle=["is invalid"]`},
		{"body too large to store", pages.Input{Title: text("About"), BodyHTML: text(strings.Repeat("<", 70_000))}, `invalid body_html=["is too long (the page may take at most 350 KB stored)"]`},
	} {
		_, err := s.Create(ctx, &c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
}

// Every filter, alone and combined, answers what filtering the whole list
// would, after creates, title changes, publishing, unpublishing and
// deletes have moved pages between their index entries; counts agree.
func TestFiltersAgreeWithTheWholeList(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		var made []map[string]any
		for i := range 12 {
			if i == 6 {
				clk.Advance(time.Second) // two seconds of created_at at least, for the range edges
			}
			made = append(made, create(t, e, map[string]any{"title": []string{"About", "Contact", "FAQ"}[i%3], "published": i%4 != 0}))
		}
		e.Do("PUT", path(made[0]), map[string]any{"page": map[string]any{"title": "FAQ", "published": true}}).Expect(t, 200)
		e.Do("PUT", path(made[1]), map[string]any{"page": map[string]any{"published": false}}).Expect(t, 200)
		e.Do("PUT", path(made[2]), map[string]any{"page": map[string]any{"title": "About"}}).Expect(t, 200)
		e.Do("DELETE", path(made[3]), nil).Expect(t, 200)
		e.Do("DELETE", path(made[4]), nil).Expect(t, 200)

		whole := e.Do("GET", "/web/pages.json?limit=250", nil).Expect(t, 200).List(t, "pages")
		if len(whole) != 10 {
			t.Fatalf("%d pages, want 10", len(whole))
		}
		now := time.Now().UTC()
		stamp := func(d time.Duration) string { return url.QueryEscape(now.Add(d).Format(time.RFC3339)) }
		third := int64(whole[2].(map[string]any)["id"].(float64))
		all := func(map[string]any) bool { return true }
		none := func(map[string]any) bool { return false }
		titled := func(title string) func(map[string]any) bool {
			return func(p map[string]any) bool { return p["title"] == title }
		}
		published := func(p map[string]any) bool { return p["published_at"] != nil }
		unpublished := func(p map[string]any) bool { return p["published_at"] == nil }
		filters := []apitest.Filter{
			{Query: "", Keep: all},
			{Query: "title=About", Keep: titled("About")},
			{Query: "title=Nothing", Keep: none},
			{Query: "published_status=published", Keep: published},
			{Query: "published_status=unpublished", Keep: unpublished},
			{Query: "title=FAQ&published_status=published", Keep: func(p map[string]any) bool { return p["title"] == "FAQ" && p["published_at"] != nil }, Source: titled("FAQ")},
			{Query: "created_at_min=" + stamp(-time.Hour), Keep: all},
			{Query: "created_at_min=" + stamp(time.Hour), Keep: none},
			{Query: "created_at_max=" + stamp(-time.Hour), Keep: none},
			{Query: "updated_at_min=" + stamp(-time.Hour), Keep: all},
			{Query: "updated_at_max=" + stamp(-time.Hour), Keep: none},
			{Query: "published_at_min=" + stamp(-time.Hour), Keep: published},
			{Query: "published_at_min=" + stamp(-time.Hour) + "&published_status=unpublished", Keep: none, Source: published},
			{Query: "updated_at_min=" + stamp(-time.Hour) + "&title=Contact", Keep: titled("Contact")},
			{Query: "updated_at_min=" + stamp(-time.Hour) + "&published_status=unpublished", Keep: unpublished, Source: all},
			{Query: fmt.Sprintf("since_id=%d&published_status=published", third), NoCount: true, Keep: func(p map[string]any) bool {
				return int64(p["id"].(float64)) > third && p["published_at"] != nil
			}},
			{Query: fmt.Sprintf("since_id=%d&updated_at_min=%s", third, stamp(-time.Hour)), NoCount: true, Source: all, Keep: func(p map[string]any) bool {
				return int64(p["id"].(float64)) > third
			}},
		}
		for _, field := range []string{"created_at", "updated_at", "published_at"} {
			filters = append(filters, apitest.RangeFilters(t, field, whole)...)
		}
		apitest.CheckFilters(t, e, apitest.FilterCheck{List: "/web/pages.json", Count: "/web/pages/count.json", Key: "pages"}, whole, filters)
	}, group)
}

// The largest update a page takes (a new title, handle and state with 40
// metafields) fits one transaction with its index entries.
func TestLargestPageUpdate(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		p := create(t, e, map[string]any{"title": "Old"})
		var mfs []any
		for i := range 40 {
			mfs = append(mfs, map[string]any{"namespace": "global", "key": fmt.Sprintf("key%02d", i), "value": "v", "value_type": "string"})
		}
		e.Do("PUT", path(p), map[string]any{"page": map[string]any{"title": "New", "handle": "new-one", "published": false, "metafields": mfs}}).Expect(t, 200)
		// The same 40 again: each an update of the metafield and its guard.
		for _, m := range mfs {
			m.(map[string]any)["value"] = "w"
		}
		e.Do("PUT", path(p), map[string]any{"page": map[string]any{"title": "Newer", "handle": "newer-one", "published": true, "metafields": mfs}}).Expect(t, 200)
		e.Do("PUT", path(p), map[string]any{"page": map[string]any{"title": "New", "handle": "new-one", "published": false}}).Expect(t, 200)
		if n := e.Do("GET", "/web/pages/count.json?title=New&published_status=unpublished", nil).Expect(t, 200).JSON(t)["count"]; n != 1.0 {
			t.Fatalf("count %v", n)
		}
	}, group)
}

// Eight writers each create a page and at once read it back as a list by
// its own title, a count by that title and its create event, while the
// others write: what a request changed is visible to the next request,
// whatever else is being derived meanwhile.
func TestOwnWritesVisibleUnderConcurrency(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const writers = 8
		rounds := map[bool]int{true: 2, false: 12}[strings.Contains(t.Name(), "dynamodb")]
		var mu sync.Mutex
		var missed []string
		miss := func(format string, args ...any) {
			mu.Lock()
			missed = append(missed, fmt.Sprintf(format, args...))
			mu.Unlock()
		}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for r := range rounds {
					title := fmt.Sprintf("own %d-%d", w, r)
					res := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": title}})
					if res.Status != 201 {
						miss("create %q: %d", title, res.Status)
						return
					}
					var created struct {
						Page struct{ ID int64 } `json:"page"`
					}
					if err := json.Unmarshal(res.Body, &created); err != nil {
						miss("%v", err)
						return
					}
					id := created.Page.ID
					list := e.Do("GET", "/web/pages.json?title="+url.QueryEscape(title), nil)
					var l struct {
						Pages []struct{ ID int64 } `json:"pages"`
					}
					if json.Unmarshal(list.Body, &l); list.Status != 200 || len(l.Pages) != 1 || l.Pages[0].ID != id {
						miss("list by title %q: %d %s", title, list.Status, list.Body)
					}
					count := e.Do("GET", "/web/pages/count.json?title="+url.QueryEscape(title), nil)
					if count.Status != 200 || strings.TrimSpace(string(count.Body)) != `{"count":1}` {
						miss("count by title %q: %d %s", title, count.Status, count.Body)
					}
					items, _, err := e.Deps.Store.Query(context.Background(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Page, id)})
					if err != nil || len(items) != 1 {
						miss("create event of %q: %d events, %v", title, len(items), err)
					}
				}
			}()
		}
		wg.Wait()
		if len(missed) > 0 {
			t.Errorf("%d of %d reads of one's own write missed it, e.g. %s", len(missed), 3*writers*rounds, missed[0])
		}
	}, group)
}
