package api_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// A store written before the index entries existed (pages, events, script
// tags and webhooks as an earlier version stored them: the record and its
// partition's counter, nothing else) answers its filters and counts right
// once api.Reindex has run, and later changes keep the counters right.
func TestReindexAnOldStore(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		st := e.Deps.Store
		stamp := admin.Time{Time: time.Now().UTC().Truncate(time.Second)}
		writeOldStore(t, e, stamp)
		if n := len(e.Do("GET", "/web/pages.json?title=Old%200", nil).Expect(t, http.StatusOK).List(t, "pages")); n != 0 {
			t.Fatalf("before the rebuild the title filter found %d old pages; the test does not make an old store", n)
		}
		if rebuilt, err := api.Reindex(ctx, st); err != nil || !rebuilt {
			t.Fatalf("Reindex: %v, %v", rebuilt, err)
		}

		checkReindexedPages(t, e, stamp)
		since := apitest.Stamp(stamp.Add(-time.Hour))
		if n := len(e.Do("GET", "/web/script_tags.json?updated_at_min="+since, nil).Expect(t, http.StatusOK).List(t, "script_tags")); n != 3 {
			t.Errorf("%d script tags updated in the last hour, want the 3 old ones", n)
		}
		if n := len(e.Do("GET", "/admin/webhooks.json?updated_at_min="+since, nil).Expect(t, http.StatusOK).List(t, "webhooks")); n != 3 {
			t.Errorf("%d webhooks updated in the last hour, want the 3 old ones", n)
		}
		if n := e.Do("GET", "/admin/webhooks/count.json?topic=orders/create", nil).Expect(t, http.StatusOK).JSON(t)["count"]; n != 3.0 {
			t.Errorf("%v webhooks of orders/create, want the 3 old ones", n)
		}
		got := e.Do("GET", "/com/events.json?filter=Page&verb=published&limit=250", nil).Expect(t, http.StatusOK).List(t, "events")
		if len(got) != 9 {
			t.Errorf("%d Page published events, want the 9 old ones", len(got))
		}

		// Changes after the rebuild move the rebuilt entries and counters.
		old := e.Do("GET", "/web/pages.json?title=Old%200", nil).Expect(t, http.StatusOK).IDs(t, "pages")
		e.Do("PUT", fmt.Sprintf("/web/pages/%d.json", old[0]), map[string]any{"page": map[string]any{"title": "Old 1", "published": false}}).Expect(t, http.StatusOK)
		e.Do("DELETE", fmt.Sprintf("/web/pages/%d.json", old[1]), nil).Expect(t, http.StatusOK)
		checkReindexedPages(t, e, stamp)

		// It runs once per version, and running it again changes nothing.
		if rebuilt, err := api.Reindex(ctx, st); err != nil || rebuilt {
			t.Fatalf("second Reindex: %v, %v", rebuilt, err)
		}
		if err := records.Reindex(ctx, st, pages.Indexer, events.Indexer); err != nil {
			t.Fatal(err)
		}
		checkReindexedPages(t, e, stamp)
	}, api.Groups...)
}

// writeOldStore writes 9 pages with their Published events, and 3 script
// tags and webhooks of the demo app (1001), as an earlier version did:
// records and counters, without the index entries of later versions.
func writeOldStore(t *testing.T, e *apitest.Env, stamp admin.Time) {
	ctx := context.Background()
	st := e.Deps.Store
	for i := range 9 {
		id := e.Deps.IDs.Next()
		p := pages.Page{ID: id, Title: fmt.Sprint("Old ", i%3), Handle: fmt.Sprint("old-", i), Author: "Someone",
			CreatedAt: admin.Time{Time: ids.Time(id)}, UpdatedAt: stamp}
		if i%2 == 0 {
			p.PublishedAt = stamp
		}
		ev := events.Event{ID: e.Deps.IDs.Next(), SubjectID: id, SubjectType: events.Page, Verb: events.Published,
			Arguments: []string{p.Title}, Message: "old", Author: "Someone"}
		ev.CreatedAt = admin.Time{Time: ids.Time(ev.ID)}
		err := st.Transact(ctx,
			store.Put(store.Item{PK: "page", SK: records.IDSK(id), Version: 1, Data: records.Encode(&p)}, store.IfAbsent, 0),
			records.CountOp("page", 1),
			store.Put(store.Item{PK: "event", SK: records.IDSK(ev.ID), Version: 1, Data: records.Encode(&ev)}, store.IfAbsent, 0),
			records.CountOp("event", 1))
		if err != nil {
			t.Fatal(err)
		}
	}
	// Script tags and webhooks of the demo app (1001) before their
	// updated_at and topic entries.
	for i := range 3 {
		id := e.Deps.IDs.Next()
		sk := records.IDSK(id)
		tag := fmt.Sprintf(`{"id":%d,"src":"https://example.com/%d.js","event":"onload","display_scope":"all","created_at":%q,"updated_at":%q}`,
			id, i, stamp.Format(time.RFC3339), stamp.Format(time.RFC3339))
		hook := fmt.Sprintf(`{"id":%d,"address":"https://example.com/%d","topic":"orders/create","format":"json","created_at":%q,"updated_at":%q,"app_id":1001}`,
			id, i, stamp.Format(time.RFC3339), stamp.Format(time.RFC3339))
		err := st.Transact(ctx,
			store.Put(store.Item{PK: "script_tag#app#1001", SK: sk, GSI1PK: fmt.Sprintf("script_tag#app#1001#src#https://example.com/%d.js", i), GSI1SK: sk,
				Version: 1, Data: []byte(tag)}, store.IfAbsent, 0),
			records.CountOp("script_tag#app#1001", 1),
			store.Put(store.Item{PK: "webhook#app#1001", SK: sk, GSI1PK: "webhook#topic#orders/create", GSI1SK: sk,
				GSI2PK: fmt.Sprintf("webhook#app#1001#address#https://example.com/%d", i), GSI2SK: sk, Version: 1, Data: []byte(hook)}, store.IfAbsent, 0),
			records.CountOp("webhook#app#1001", 1))
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkReindexedPages checks the pages' filters and counts against the
// whole list.
func checkReindexedPages(t *testing.T, e *apitest.Env, stamp admin.Time) {
	t.Helper()
	whole := e.Do("GET", "/web/pages.json?limit=250", nil).Expect(t, http.StatusOK).List(t, "pages")
	titled := func(title string) func(map[string]any) bool {
		return func(p map[string]any) bool { return p["title"] == title }
	}
	apitest.CheckFilters(t, e, apitest.FilterCheck{List: "/web/pages.json", Count: "/web/pages/count.json", Key: "pages"}, whole, []apitest.Filter{
		{Query: "", Keep: func(map[string]any) bool { return true }},
		{Query: "title=Old%200", Keep: titled("Old 0")},
		{Query: "title=Old%201", Keep: titled("Old 1")},
		{Query: "published_status=published", Keep: func(p map[string]any) bool { return p["published_at"] != nil }},
		{Query: "published_status=unpublished", Keep: func(p map[string]any) bool { return p["published_at"] == nil }},
		{Query: "updated_at_min=" + apitest.Stamp(stamp.Add(-time.Hour)), Keep: func(map[string]any) bool { return true }},
		{Query: "published_at_min=" + apitest.Stamp(stamp.Add(-time.Hour)), Keep: func(p map[string]any) bool { return p["published_at"] != nil }},
	})
}

// A repair brings back counts and entries that a lost derivation left
// wrong, for every type the feed derives, with the API up and again.
func TestRepairRebuildsDerivedState(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := context.Background()
		e.Do("POST", "/admin/redirects.json", map[string]any{"redirect": map[string]any{"path": "/repair-me", "target": "/there"}}).Expect(t, 201)
		e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "Repair me"}}).Expect(t, 201)
		count := func(path string) float64 {
			return e.Do("GET", path, nil).Expect(t, 200).JSON(t)["count"].(float64)
		}
		redirects, pages := count("/admin/redirects/count.json"), count("/web/pages/count.json")
		// What a parked change leaves: its count and its entries missing.
		st := store.Innermost(e.Deps.Store)
		for _, pk := range []string{"count#redirect", "count#page", "page#title=Repair me"} {
			items, _, err := st.Query(ctx, store.Query{PK: pk})
			if err != nil {
				t.Fatal(err)
			}
			for _, it := range items {
				if err := st.Transact(ctx, store.Delete(it.Key(), store.Always, 0)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if count("/admin/redirects/count.json") != 0 || len(e.Do("GET", "/web/pages.json?title=Repair+me", nil).Expect(t, 200).List(t, "pages")) != 0 {
			t.Fatal("the derived state was not removed")
		}
		for range 2 {
			if err := api.Repair(ctx, e.Deps.Store); err != nil {
				t.Fatal(err)
			}
			if got := count("/admin/redirects/count.json"); got != redirects {
				t.Errorf("redirects count %v after a repair, want %v", got, redirects)
			}
			if got := count("/web/pages/count.json"); got != pages {
				t.Errorf("pages count %v after a repair, want %v", got, pages)
			}
			if n := len(e.Do("GET", "/web/pages.json?title=Repair+me", nil).Expect(t, 200).List(t, "pages")); n != 1 {
				t.Errorf("title filter lists %d after a repair, want 1", n)
			}
		}
	}, api.Redirects, api.Pages)
}
