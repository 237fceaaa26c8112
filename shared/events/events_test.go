package events_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/events"
	idgen "github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Subjects of the demo seed (product 632910392, order 450789469) and two
// that only exist as event subjects.
var (
	page       = events.Subject{Type: events.Page, ID: 131092082, Path: "/pages/about-us", Label: "About us"}
	product    = events.Subject{Type: events.Product, ID: 632910392, Path: "/products/ipod-nano", Label: "IPod Nano - 8GB"}
	order      = events.Subject{Type: events.Order, ID: 450789469, Path: "/admin/orders/450789469", Label: "#1001"}
	collection = events.Subject{Type: events.Collection, ID: 841564295, Path: "/collections/ipods", Label: "IPods"}
)

const author = "Demo App"

// record commits the event of a change as a resource would, created at at
// (now when zero), and returns its id.
func record(t testing.TB, e *apitest.Env, s events.Subject, verb string, at time.Time) int64 {
	t.Helper()
	ev := events.New(e.Deps.IDs, s, verb, "", author)
	if !at.IsZero() {
		// An event's created_at is its id's second: back-date both, keeping
		// the fresh id's number within its second (distinct, like any id's).
		ev.ID, ev.CreatedAt = idgen.At(at)+ev.ID&(1<<21-1), admin.Time{Time: at.UTC()}
	}
	if err := e.Deps.Store.Transact(context.Background(), events.Ops(ev)...); err != nil {
		t.Fatal(err)
	}
	return ev.ID
}

// recordMany commits n events of subject type s.Type (ids s.ID, s.ID+1, ...)
// in transactions of 30.
func recordMany(t testing.TB, e *apitest.Env, s events.Subject, n int) {
	t.Helper()
	for done := 0; done < n; {
		var ops []store.Op
		for i := 0; i < 30 && done < n; i, done = i+1, done+1 {
			sub := s
			sub.ID += int64(done)
			ops = append(ops, events.Ops(events.New(e.Deps.IDs, sub, events.Update, "", author))...)
		}
		if err := records.Transact(context.Background(), e.Deps.Store, ops...); err != nil {
			t.Fatal(err)
		}
	}
}

// ids returns the ids of a list response's events.
func ids(t testing.TB, res *apitest.Response) []int64 {
	t.Helper()
	var out []int64
	for _, v := range res.Expect(t, http.StatusOK).List(t, "events") {
		out = append(out, int64(v.(map[string]any)["id"].(float64)))
	}
	return out
}

func wantIDs(t testing.TB, e *apitest.Env, path string, want ...int64) {
	t.Helper()
	if got := ids(t, e.Do("GET", path, nil)); !slices.Equal(got, want) {
		t.Fatalf("GET %s: ids %v, want %v", path, got, want)
	}
}

func count(t testing.TB, e *apitest.Env, path string) int {
	t.Helper()
	return int(e.Do("GET", path, nil).Expect(t, http.StatusOK).JSON(t)["count"].(float64))
}

func TestEvents(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York") // the demo shop's zone
	if err != nil {
		t.Fatal(err)
	}
	at := func(hhmm string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04", "2024-03-11 "+hhmm, ny)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		// In creation (id) order; EDT is UTC-4 on 2024-03-11.
		early := record(t, e, page, events.Create, at("09:59"))
		p1 := record(t, e, page, events.Published, at("10:00"))
		pr1 := record(t, e, product, events.Create, at("11:00"))
		o1 := record(t, e, order, "placed", at("12:00"))
		c1 := record(t, e, collection, events.Update, at("12:01"))
		pr2 := record(t, e, product, events.Update, time.Time{})
		all := []int64{pr2, c1, o1, pr1, p1, early}

		t.Run("newest first", func(t *testing.T) {
			wantIDs(t, e, "/com/events.json", all...)
		})
		t.Run("since_id lists ascending from the id", func(t *testing.T) {
			wantIDs(t, e, fmt.Sprintf("/com/events.json?since_id=%d", pr1), o1, c1, pr2)
			wantIDs(t, e, fmt.Sprintf("/com/events.json?since_id=%d&limit=2&page=2", early), o1, c1)
			wantIDs(t, e, fmt.Sprintf("/com/events.json?since_id=%d", pr2))
		})
		t.Run("since_id=0 is a since_id: ascending from the first", func(t *testing.T) {
			wantIDs(t, e, "/com/events.json?since_id=0", early, p1, pr1, o1, c1, pr2)
			wantIDs(t, e, "/com/events.json?since_id=0&limit=2", early, p1)
			wantIDs(t, e, "/com/events.json?since_id=0&filter=Product,Collection", pr1, c1, pr2)
		})
		t.Run("limit and page", func(t *testing.T) {
			wantIDs(t, e, "/com/events.json?limit=2", pr2, c1)
			wantIDs(t, e, "/com/events.json?limit=2&page=2", o1, pr1)
			wantIDs(t, e, "/com/events.json?limit=4&page=2", p1, early)
			wantIDs(t, e, "/com/events.json?limit=2&page=4")
		})
		t.Run("filter by one type", func(t *testing.T) {
			wantIDs(t, e, "/com/events.json?filter=Page", p1, early)
			wantIDs(t, e, "/com/events.json?filter=Product", pr2, pr1)
			wantIDs(t, e, "/com/events.json?filter=Blog")
			wantIDs(t, e, "/com/events.json?filter=Page&limit=1&page=2", early)
		})
		t.Run("filter by several types merges them by id", func(t *testing.T) { eventsOfSeveralTypes(t, e, early, p1, pr1, o1, pr2) })
		t.Run("verb", func(t *testing.T) {
			wantIDs(t, e, "/com/events.json?verb=update", pr2, c1)
			wantIDs(t, e, "/com/events.json?verb=create&filter=Product,Page", pr1, early)
			wantIDs(t, e, "/com/events.json?verb=create&limit=1&page=2", early)
			wantIDs(t, e, "/com/events.json?verb=destroy")
		})
		t.Run("created_at bounds are inclusive and read in the shop's zone", func(t *testing.T) { eventCreatedAtBounds(t, e, early, p1, pr1, o1, c1, pr2) })
		t.Run("timestamps are shown in the shop's zone", func(t *testing.T) {
			ev := e.Do("GET", fmt.Sprintf("/com/events/%d.json", p1), nil).Expect(t, http.StatusOK).Object(t, "event")
			if ev["created_at"] != "2024-03-11T10:00:00-04:00" {
				t.Fatalf("created_at %v", ev["created_at"])
			}
			list := e.Do("GET", "/com/events.json?filter=Page", nil).List(t, "events")
			if got := list[1].(map[string]any)["created_at"]; got != "2024-03-11T09:59:00-04:00" {
				t.Fatalf("list created_at %v", got)
			}
		})
		t.Run("fields", func(t *testing.T) { eventFields(t, e, p1) })
		t.Run("count", func(t *testing.T) { eventCount(t, e, all) })
		t.Run("single event", func(t *testing.T) { singleEvent(t, e, pr1) })
		t.Run("events of a product and of an order", func(t *testing.T) { eventsOfProductAndOrder(t, e, pr1, o1, pr2) })
		t.Run("bad parameters are 400 naming them", func(t *testing.T) { eventBadParameters(t, e) })
		t.Run("no scope is needed", func(t *testing.T) {
			if got := ids(t, e.DoAs(apitest.ReadOnlyToken, "GET", "/com/events.json", nil)); len(got) != len(all) {
				t.Fatalf("read-only app sees %d events", len(got))
			}
			e.DoAs("", "GET", "/com/events.json", nil).Expect(t, http.StatusUnauthorized)
		})
	}, api.Events)
}

func eventsOfSeveralTypes(t *testing.T, e *apitest.Env, early, p1, pr1, o1, pr2 int64) {
	wantIDs(t, e, "/com/events.json?filter=Product,Page", pr2, pr1, p1, early)
	wantIDs(t, e, "/com/events.json?filter=Order,%20Product,Order", pr2, o1, pr1)
	wantIDs(t, e, "/com/events.json?filter=Product,Page&limit=2&page=2", p1, early)
	wantIDs(t, e, "/com/events.json?filter=Product,Page&limit=3&page=1", pr2, pr1, p1)
	wantIDs(t, e, fmt.Sprintf("/com/events.json?filter=Product,Page&since_id=%d", early), p1, pr1, pr2)
	wantIDs(t, e, fmt.Sprintf("/com/events.json?filter=Product,Page&since_id=%d&limit=1&page=2", early), pr1)
	for _, v := range e.Do("GET", "/com/events.json?filter=Product,Order", nil).List(t, "events") {
		if st := v.(map[string]any)["subject_type"]; st != events.Product && st != events.Order {
			t.Fatalf("filter=Product,Order returned a %v event", st)
		}
	}
}

func eventCreatedAtBounds(t *testing.T, e *apitest.Env, early, p1, pr1, o1, c1, pr2 int64) {
	q := func(min, max string) string {
		v := url.Values{}
		if min != "" {
			v.Set("created_at_min", min)
		}
		if max != "" {
			v.Set("created_at_max", max)
		}
		return "/com/events.json?" + v.Encode()
	}
	wantIDs(t, e, q("2024-03-11 10:00", "2024-03-11 12:00"), o1, pr1, p1)
	wantIDs(t, e, q("2024-03-11 10:00", ""), pr2, c1, o1, pr1, p1)
	wantIDs(t, e, q("", "2024-03-11 10:00"), p1, early)
	wantIDs(t, e, q("2024-03-11 10:00", "2024-03-11 10:00"), p1)
	wantIDs(t, e, q("2024-03-11T14:00:00+00:00", "2024-03-11T16:00:00Z"), o1, pr1, p1)
	wantIDs(t, e, q("2024-03-11 10:00", "2024-03-11 12:00")+"&filter=Page,Order&verb=placed", o1)
	if n := count(t, e, strings.Replace(q("2024-03-11 10:00", "2024-03-11 12:00"), "events.json", "events/count.json", 1)); n != 3 {
		t.Fatalf("count in the window: %d, want 3", n)
	}
	e.Do("GET", q("yesterday", ""), nil).Expect(t, http.StatusBadRequest)
}

func eventFields(t *testing.T, e *apitest.Env, p1 int64) {
	for _, v := range e.Do("GET", "/com/events.json?fields=id,verb", nil).Expect(t, 200).List(t, "events") {
		if m := v.(map[string]any); len(m) != 2 || m["id"] == nil || m["verb"] == nil {
			t.Fatalf("fields=id,verb gave %v", m)
		}
	}
	ev := e.Do("GET", fmt.Sprintf("/com/events/%d.json?fields=message,subject_type", p1), nil).Expect(t, 200).Object(t, "event")
	if len(ev) != 2 || ev["message"] != `<a href="/pages/about-us">About us</a> was published.` || ev["subject_type"] != "Page" {
		t.Fatalf("fields=message,subject_type gave %v", ev)
	}
}

func eventCount(t *testing.T, e *apitest.Env, all []int64) {
	if n := count(t, e, "/com/events/count.json"); n != len(all) {
		t.Fatalf("count %d, want %d", n, len(all))
	}
	if n := count(t, e, "/com/events/count.json?created_at_min=2024-03-11+12:00"); n != 3 {
		t.Fatalf("count from 12:00: %d, want 3", n)
	}
	if n := count(t, e, "/com/events/count.json?created_at_max=2024-03-11"); n != 0 {
		t.Fatalf("count up to 2024-03-11 00:00: %d, want 0", n)
	}
	e.Do("GET", "/com/events/count.json?created_at_max=soon", nil).Expect(t, http.StatusBadRequest)
}

func singleEvent(t *testing.T, e *apitest.Env, pr1 int64) {
	ev := e.Do("GET", fmt.Sprintf("/com/events/%d.json", pr1), nil).Expect(t, http.StatusOK).Object(t, "event")
	want := map[string]any{
		"id": float64(pr1), "subject_id": float64(product.ID), "subject_type": "Product", "verb": "create",
		"arguments": []any{"IPod Nano - 8GB", "/products/ipod-nano"}, "message": "New product created: IPod Nano - 8GB",
		"description": nil, "body": nil, "path": "/products/ipod-nano", "author": author, "created_at": "2024-03-11T11:00:00-04:00",
	}
	if fmt.Sprint(ev) != fmt.Sprint(want) {
		t.Fatalf("event\n got %v\nwant %v", ev, want)
	}
	e.Do("GET", "/com/events/999999999.json", nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "/com/events/abc.json", nil).Expect(t, http.StatusNotFound)
}

func eventsOfProductAndOrder(t *testing.T, e *apitest.Env, pr1, o1, pr2 int64) {
	wantIDs(t, e, "/com/products/632910392/events.json", pr2, pr1)
	wantIDs(t, e, "/com/products/632910392/events.json?limit=1&page=2", pr1)
	wantIDs(t, e, "/com/orders/450789469/events.json", o1)
	wantIDs(t, e, "/com/orders/450789469/events.json?limit=1&page=2")
	e.Do("GET", "/com/products/632910397/events.json", nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "/com/orders/450789470/events.json", nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "/com/orders/0/events.json", nil).Expect(t, http.StatusNotFound)
	// A subject that has only events but no record is unknown.
	e.Do("GET", fmt.Sprintf("/com/products/%d/events.json", collection.ID), nil).Expect(t, http.StatusNotFound)
	e.Do("GET", "/com/orders/450789469/events.json?limit=300", nil).Expect(t, http.StatusBadRequest)
}

func eventBadParameters(t *testing.T, e *apitest.Env) {
	for q, param := range map[string]string{
		"filter=Widget":       "filter",
		"filter=Page,product": "filter",
		"limit=0":             "limit",
		"limit=251":           "limit",
		"page=0":              "page",
		"since_id=x":          "since_id",
		"created_at_max=soon": "created_at_max",
	} {
		res := e.Do("GET", "/com/events.json?"+q, nil).Expect(t, http.StatusBadRequest)
		if errs, _ := res.JSON(t)["errors"].(map[string]any); errs[param] == nil {
			t.Fatalf("%s: %s does not name %s", q, res.Body, param)
		}
	}
}

// The type filter reads the type's partition, not the whole log.
func TestFilterReadsOnlyItsTypes(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			e := apitest.New(t, s.Open(t), api.Events)
			recordMany(t, e, product, 300)
			var pages []int64
			for range 3 {
				pages = append(pages, record(t, e, page, events.Update, time.Time{}))
			}
			slices.Reverse(pages)
			recordMany(t, e, product, 10)

			for _, c := range []struct {
				path string
				want []int64
			}{
				{"/com/events.json?filter=Page", pages},
				{"/com/events.json?filter=Page,Order", pages},
				{"/com/events.json?filter=Page&verb=update&limit=2", pages[:2]},
				{fmt.Sprintf("/com/events.json?filter=Page,Blog&since_id=%d", pages[2]), []int64{pages[1], pages[0]}},
			} {
				e.Reads.Reset()
				wantIDs(t, e, c.path, c.want...)
				if n := e.Reads.Reset(); n > 5 {
					t.Errorf("GET %s read %d items", c.path, n)
				}
			}
			// Unfiltered, the newest page of the log is read and one event
			// more, which says whether a next page exists (the Link header).
			e.Reads.Reset()
			if got := ids(t, e.Do("GET", "/com/events.json?limit=5", nil)); len(got) != 5 {
				t.Fatalf("limit=5 returned %d", len(got))
			}
			if n := e.Reads.Reset(); n > 6 {
				t.Errorf("limit=5 read %d items", n)
			}
		})
	}
}

func BenchmarkEventsListFilteredByType(b *testing.B) {
	e := apitest.New(b, apitest.OpenEmbedded(b), api.Events)
	others := []events.Subject{product, order, collection, {Type: events.Article, ID: 134645308, Path: "/blogs/news/welcome", Label: "Welcome"}}
	for i := range 20 {
		for _, s := range others {
			recordMany(b, e, s, 25) // 20 × 4 × 25 = 2,000
		}
		recordMany(b, e, events.Subject{Type: events.Page, ID: page.ID + int64(i), Path: page.Path, Label: page.Label}, 5) // 100
	}
	const path = "/com/events.json?filter=Page&limit=50"
	if got := ids(b, e.Do("GET", path, nil)); len(got) != 50 {
		b.Fatalf("GET %s returned %d events", path, len(got))
	}
	req := httptest.NewRequest("GET", path, nil)
	req.Header.Set("X-Service-Access-Token", apitest.DemoToken)
	b.ReportAllocs()
	for b.Loop() {
		rec := httptest.NewRecorder()
		e.Handler.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Body.String(), `{"events":[{`) {
			b.Fatalf("GET %s: %d %.100s", path, rec.Code, rec.Body)
		}
	}
}
