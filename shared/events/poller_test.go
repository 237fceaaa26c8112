package events_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/events"
	idgen "github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/store"
)

// A since_id poller follows the events log as an app does: it keeps the
// highest id it has seen and asks for since_id = that id. Concurrent
// writers create and update pages and custom collections; the poller must
// see every event the log ends up holding (no event may become visible
// with an id below one already visible), without faults and with a tenth
// of the store's calls failing.
func TestSinceIDPollerSeesEveryEvent(t *testing.T) {
	scale := map[string][2]int{"embedded": {8, 12}, "dynamodb": {8, 2}} // writers × rounds (5 changes a round)
	for _, rate := range []float64{0, 0.1} {
		t.Run(fmt.Sprintf("faults=%v", rate), func(t *testing.T) {
			for _, s := range apitest.Stores {
				t.Run(s.Name, func(t *testing.T) {
					e := apitest.New(t, s.Open(t), api.Events, api.Pages, api.Collections)
					start := e.Do("GET", "/com/events.json?limit=1", nil).Expect(t, http.StatusOK).IDs(t, "events")
					p := &poller{t: t, e: e, seen: map[int64]bool{}}
					if len(start) > 0 {
						p.since = start[0]
					}
					in := e.InjectFaults(rate)
					in.Start()
					w, rounds := scale[s.Name][0], scale[s.Name][1]
					made := p.followWriters(w, rounds)
					in.Stop()
					// What a failure left pending is derived by the next drain
					// (the runner's every few seconds).
					if err := e.Deps.Feed.Drain(context.Background()); err != nil {
						t.Fatal(err)
					}
					for before := -1; before != len(p.seen); {
						before = len(p.seen)
						p.poll()
					}
					// Every event the log holds now, newest first, page by page.
					all := allEventsAbove(t, e, start)
					missed := 0
					for _, id := range all {
						if !p.seen[id] {
							missed++
						}
					}
					t.Logf("%d writers made %d changes; the log holds %d new events, the poller (%d polls) saw %d and missed %d; faults injected: %+v",
						w, made, len(all), p.polls, len(p.seen), missed, in.Counts())
					if missed > 0 {
						t.Errorf("the since_id poller never saw %d of %d events", missed, len(all))
					}
					if int64(len(all)) < made {
						t.Errorf("%d acknowledged changes, %d events", made, len(all))
					}
				})
			}
		})
	}
}

// poller follows the events log with since_id.
type poller struct {
	t     *testing.T
	e     *apitest.Env
	since int64
	seen  map[int64]bool
	polls int
}

// poll asks for the events after the highest id seen; every id answered
// must be above it, in ascending order.
func (p *poller) poll() {
	p.polls++
	r := p.e.Do("GET", fmt.Sprintf("/com/events.json?since_id=%d&limit=250", p.since), nil)
	if r.Status == http.StatusServiceUnavailable {
		return
	}
	got := r.Expect(p.t, http.StatusOK).IDs(p.t, "events")
	for _, id := range got {
		if id <= p.since {
			p.t.Fatalf("since_id=%d answered %d, not above it, or out of order: %v", p.since, id, got)
		}
		p.seen[id] = true
		p.since = id
	}
}

// followWriters runs w writers of rounds rounds each and polls once after
// each change answered, until they are done; it returns the changes
// acknowledged.
func (p *poller) followWriters(w, rounds int) int64 {
	var done atomic.Bool
	var wg sync.WaitGroup
	var made atomic.Int64
	progress := make(chan struct{}, 1) // a change was answered
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				made.Add(writeRound(p.t, p.e, fmt.Sprintf("w%d-%d", i, r), progress))
			}
		}()
	}
	go func() {
		wg.Wait()
		done.Store(true)
		select {
		case progress <- struct{}{}:
		default: // the poller has one to take, and sees done after it
		}
	}()
	for !done.Load() {
		<-progress
		p.poll()
	}
	return made.Load()
}

// writeRound creates a page and a custom collection and updates each, and
// deletes the page (its event is staged by the request), retrying a 503 (a
// change whose answer was lost may be made twice: the poller then has one
// more event to see). It returns the changes acknowledged, telling
// progress of each.
func writeRound(t *testing.T, e *apitest.Env, name string, progress chan<- struct{}) int64 {
	var n int64
	do := func(method, path string, body any) map[string]any {
		for attempt := range 30 {
			r := e.Do(method, path, body)
			switch {
			case r.Status == http.StatusServiceUnavailable:
				continue
			case r.Status == http.StatusNotFound && method == "DELETE" && attempt > 0:
				return nil // a 503 whose delete had been applied
			case r.Status >= 300:
				t.Errorf("%s %s: %d %s", method, path, r.Status, r.Body)
				return nil
			}
			n++
			select {
			case progress <- struct{}{}:
			default: // the poller has one to see already
			}
			m := map[string]any{}
			if len(r.Body) > 0 {
				if err := json.Unmarshal(r.Body, &m); err != nil {
					t.Error(err)
				}
			}
			return m
		}
		return nil
	}
	id := func(m map[string]any, key string) int64 {
		if m == nil {
			return 0
		}
		v, _ := m[key].(map[string]any)["id"].(float64)
		return int64(v)
	}
	if p := id(do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "P " + name}}), "page"); p != 0 {
		do("PUT", fmt.Sprintf("/web/pages/%d.json", p), map[string]any{"page": map[string]any{"title": "P2 " + name}})
		do("DELETE", fmt.Sprintf("/web/pages/%d.json", p), nil)
	}
	if c := id(do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": "C " + name}}), "custom_collection"); c != 0 {
		do("PUT", fmt.Sprintf("/com/custom_collections/%d.json", c), map[string]any{"custom_collection": map[string]any{"title": "C2 " + name}})
	}
	return n
}

// allEventsAbove lists every event newer than the newest of start.
func allEventsAbove(t *testing.T, e *apitest.Env, start []int64) []int64 {
	var floor int64
	if len(start) > 0 {
		floor = start[0]
	}
	var out []int64
	for page := 1; ; page++ {
		got := e.Do("GET", fmt.Sprintf("/com/events.json?limit=250&page=%d", page), nil).Expect(t, http.StatusOK).IDs(t, "events")
		for _, id := range got {
			if id > floor {
				out = append(out, id)
			}
		}
		if len(got) < 250 || got[len(got)-1] <= floor {
			return out
		}
	}
}

// The change-feed function on several stream shards publishes events
// concurrently (store.Derivers.ApplyOnce, no local feed): staged events
// applied by four publishers at once, in shuffled order and each twice (a
// replayed record), become visible in id order, each once, to a reader
// following the log by id.
func TestConcurrentPublishersKeepTheLogInOrder(t *testing.T) {
	const n, shards = 60, 4
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			ctx := context.Background()
			st := store.Retrying(s.Open(t))
			ds := store.Derivers{events.StagedPartition: events.Publish}
			gen := idgen.New()
			var staged []store.Item
			for i := range n {
				op := events.Ops(events.New(gen, events.Subject{Type: events.Page, ID: int64(i + 1), Label: "p"}, events.Update, "", author))[0]
				if err := st.Transact(ctx, op); err != nil {
					t.Fatal(err)
				}
				staged = append(staged, op.Item)
			}
			rand.Shuffle(len(staged), func(i, j int) { staged[i], staged[j] = staged[j], staged[i] })
			var wg sync.WaitGroup
			var done atomic.Bool
			for sh := range shards {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := sh; i < 2*n; i += shards { // each record twice
						it := staged[i%n]
						if err := ds.ApplyOnce(ctx, st, store.Change{New: &it}, time.Now()); err != nil {
							t.Error(err)
						}
					}
				}()
			}
			go func() { wg.Wait(); done.Store(true) }()
			seen, since := map[string]bool{}, ""
			follow := func() {
				items, _, err := st.Query(ctx, store.Query{PK: "event", After: since})
				if err != nil {
					t.Fatal(err)
				}
				for _, it := range items {
					if it.SK <= since || seen[it.SK] {
						t.Fatalf("event %s after %s: out of order or twice", it.SK, since)
					}
					seen[it.SK], since = true, it.SK
				}
			}
			for !done.Load() {
				follow()
			}
			follow()
			if len(seen) != n {
				t.Fatalf("a reader following the log saw %d events of %d published", len(seen), n)
			}
			if left, _, _ := st.Query(ctx, store.Query{PK: events.StagedPartition}); len(left) != 0 {
				t.Fatalf("%d staged events left", len(left))
			}
		})
	}
}
