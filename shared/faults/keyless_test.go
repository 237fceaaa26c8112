package faults_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/queue/storequeue"
)

// TestKeylessRetriesNeverDuplicate: concurrent clients retry every 503
// without an Idempotency-Key, as Shopify's libraries do, while 30% of the
// store's and queues' calls fail. Each request resolves its own uncertain
// commit (store.Retrying, under its request token), so it answers what
// happened: afterwards no create left two records, no delete of the
// client's own record answered 404, and no create answered 422 "has
// already been taken" to the request that created the record. Every
// create and delete of a collection is delivered to its webhook under one
// webhook id: no change is notified twice.
//
// Clients that send an Idempotency-Key (a fresh one per change, kept over
// its retries) get the same, and never a final 409 "applied, but its
// answer could not be kept": a create whose commit timed out is answered
// by its request, and its answer kept and replayed.
func TestKeylessRetriesNeverDuplicate(t *testing.T) {
	t.Run("keyless", func(t *testing.T) { retryingClientsSoak(t, false) })
	t.Run("keyed", func(t *testing.T) { retryingClientsSoak(t, true) })
}

func retryingClientsSoak(t *testing.T, keyed bool) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		name := t.Name()[strings.LastIndex(t.Name(), "/")+1:]
		e.Deps.Queue.(*storequeue.Queue).UseVisibility(time.Second) // a delivery whose ack failed comes back soon
		rc := newReceiver(t)
		for _, topic := range []string{"collections/create", "collections/delete"} {
			e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{"topic": topic, "address": rc.URL}}).Expect(t, 201)
		}
		in := e.InjectFaults(0.3)
		stop := startPipeline(e)
		defer stop()
		in.Start()
		scale := keylessScale[name]
		var st keylessStats
		clients := make([]*keylessClient, scale[0])
		var wg sync.WaitGroup
		for i := range clients {
			clients[i] = &keylessClient{e: e, id: i, stats: &st, keyed: keyed}
			wg.Add(1)
			go func() { defer wg.Done(); clients[i].run(t, scale[1]) }()
		}
		wg.Wait()
		in.Stop()
		f := in.Counts()

		// Every create is there once, or not at all once deleted.
		live := map[string]int{}
		for _, title := range collectionsNow(t, e) {
			live[strings.TrimRight(title, "u")]++
		}
		duplicates := 0
		for _, c := range clients {
			for _, col := range c.collections {
				want := 1
				if col.deleted {
					want = 0
				}
				if n := live[col.base]; n != want {
					duplicates++
					t.Errorf("%s: %d collections, want %d (deleted %v)", col.base, n, want, col.deleted)
				}
			}
			for _, rd := range c.redirects {
				want := 1
				if rd.deleted {
					want = 0
				}
				if n := len(e.Do("GET", "/web/redirects.json?path="+rd.path, nil).Expect(t, 200).List(t, "redirects")); n != want {
					duplicates++
					t.Errorf("%s: %d redirects, want %d (deleted %v)", rd.path, n, want, rd.deleted)
				}
			}
		}
		notified := keylessDelivered(t, clients, rc)
		t.Logf("%s, 30%% faults, %s clients retrying 503: %d creates, %d deletes, %d updates in %d requests (%d answered 503, %d 409 in progress); %d duplicated, %d false 404, %d false 422, %d final 409 answer lost; %d creates and deletes delivered, %d under two webhook ids; faults injected: %d reads, %d writes (%d applied before failing)",
			name, map[bool]string{false: "keyless", true: "keyed"}[keyed], st.creates.Load(), st.deletes.Load(), st.updates.Load(), st.requests.Load(), st.unavailable.Load(), st.busy.Load(),
			duplicates, st.false404.Load(), st.false422.Load(), st.lost.Load(), notified, rc.duplicated("collections/create")+rc.duplicated("collections/delete"), f.Reads, f.Writes, f.Applied)
		for _, topic := range []string{"collections/create", "collections/delete"} {
			if n := rc.duplicated(topic); n > 0 {
				t.Errorf("%s: %d changes delivered under more than one webhook id", topic, n)
			}
		}
		if keylessNeedsApplied && (f.Writes == 0 || f.Applied == 0) {
			t.Fatal("no write failed after it was applied: the soak proves nothing")
		}
	}, api.Redirects, api.Collections, api.Webhooks)
}

// keylessDelivered waits until every acknowledged create and delete of a
// collection reached the receiver (the pipeline drains on its own time,
// faults off), and returns how many there were.
func keylessDelivered(t *testing.T, clients []*keylessClient, rc *receiver) int {
	t.Helper()
	want := map[string][]int64{}
	for _, c := range clients {
		for _, col := range c.collections {
			want["collections/create"] = append(want["collections/create"], col.id)
			if col.deleted {
				want["collections/delete"] = append(want["collections/delete"], col.id)
			}
		}
	}
	missing := func() (topic string, id int64, n int) {
		got := rc.changes()
		for tp, ids := range want {
			for _, x := range ids {
				if !got[tp][x] {
					topic, id, n = tp, x, n+1
				}
			}
		}
		return topic, id, n
	}
	deadline := time.Now().Add(2 * time.Minute)
	for _, _, n := missing(); n > 0 && time.Now().Before(deadline); _, _, n = missing() {
		time.Sleep(50 * time.Millisecond) // the pipeline drains on its own time
	}
	if topic, id, n := missing(); n > 0 {
		t.Errorf("%d acknowledged changes never delivered, such as %s of %d", n, topic, id)
	}
	return len(want["collections/create"]) + len(want["collections/delete"])
}

type keylessStats struct {
	creates, deletes, updates, requests, unavailable, busy, false404, false422, lost atomic.Int64
}

type keylessClient struct {
	e     *apitest.Env
	id    int
	stats *keylessStats
	keyed bool // each change under an Idempotency-Key of its own
	n     int  // changes sent, for their keys

	collections []*keylessRecord
	redirects   []*keylessRecord
}

type keylessRecord struct {
	id      int64
	base    string // the collection's title at creation, the redirect's path
	path    string
	deleted bool
}

// send makes one request until it is answered other than 503 (or, with
// a key, other than 409 while the first attempt is in progress), as client
// libraries do.
func (c *keylessClient) send(t *testing.T, method, path string, body any) *apitest.Response {
	c.n++
	key := fmt.Sprintf("keyed-%d-%d", c.id, c.n)
	for attempt := 0; ; attempt++ {
		var r *apitest.Response
		if c.keyed {
			r = c.e.DoKeyed(key, method, path, body)
		} else {
			r = c.e.Do(method, path, body)
		}
		c.stats.requests.Add(1)
		switch {
		case r.Status == 503:
			c.stats.unavailable.Add(1)
			continue
		case r.Status == 409 && strings.Contains(string(r.Body), "still being processed") && attempt < 50:
			c.stats.busy.Add(1)
			continue
		case r.Status == 409:
			c.stats.lost.Add(1)
		case r.Status >= 500:
			t.Errorf("%s %s answered %d: %s", method, path, r.Status, r.Body)
		}
		return r
	}
}

// answered checks the final answer of a change to the client's own record:
// a 404 or a 422 "has already been taken" is the request meeting its own
// commit.
func (c *keylessClient) answered(t *testing.T, what string, r *apitest.Response, want int) bool {
	switch {
	case r.Status == want:
		return true
	case r.Status == 404:
		c.stats.false404.Add(1)
	case r.Status == 422 && strings.Contains(string(r.Body), "has already been taken"):
		c.stats.false422.Add(1)
	}
	t.Errorf("%s: %d %s, want %d", what, r.Status, r.Body, want)
	return false
}

func (c *keylessClient) run(t *testing.T, changes int) {
	for i := range changes {
		switch n := rand.IntN(100); {
		case n < 30 || len(c.collections) == 0:
			col := &keylessRecord{base: fmt.Sprintf("k-%d-%d", c.id, i)}
			c.stats.creates.Add(1)
			r := c.send(t, "POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": col.base}})
			if c.answered(t, "create "+col.base, r, 201) {
				col.id = int64(r.Object(t, "custom_collection")["id"].(float64))
				c.collections = append(c.collections, col)
			}
		case n < 45:
			col := c.collections[rand.IntN(len(c.collections))]
			if col.deleted {
				continue
			}
			c.stats.updates.Add(1)
			r := c.send(t, "PUT", fmt.Sprintf("/com/custom_collections/%d.json", col.id), map[string]any{"custom_collection": map[string]any{"title": col.base + "u"}})
			c.answered(t, "update "+col.base, r, 200)
		case n < 60:
			col := c.collections[rand.IntN(len(c.collections))]
			if col.deleted {
				continue
			}
			c.stats.deletes.Add(1)
			r := c.send(t, "DELETE", fmt.Sprintf("/com/custom_collections/%d.json", col.id), nil)
			c.answered(t, "delete "+col.base, r, 200)
			col.deleted = true // whatever it answered, the client asked for it gone
		case n < 85 || len(c.redirects) == 0:
			rd := &keylessRecord{path: fmt.Sprintf("/keyless/%d/%d", c.id, i)}
			c.stats.creates.Add(1)
			r := c.send(t, "POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": rd.path, "target": "/to"}})
			if c.answered(t, "create "+rd.path, r, 201) {
				rd.id = int64(r.Object(t, "redirect")["id"].(float64))
				c.redirects = append(c.redirects, rd)
			}
		default:
			rd := c.redirects[rand.IntN(len(c.redirects))]
			if rd.deleted {
				continue
			}
			c.stats.deletes.Add(1)
			r := c.send(t, "DELETE", fmt.Sprintf("/web/redirects/%d.json", rd.id), nil)
			c.answered(t, "delete "+rd.path, r, 200)
			rd.deleted = true
		}
	}
}
