package faults_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/queue/storequeue"
)

// TestSoakUnderFaults: concurrent clients make mixed creates, updates and
// deletes while a tenth of the store's and queues' calls fail, retrying
// each change with its Idempotency-Key until it is answered. Afterwards,
// with faults off: no answer was a 500; every acknowledged change is there
// exactly once; nothing is half-written (a redirect's path guard stands
// exactly when its redirect does); every acknowledged collection change
// was delivered to its webhook, no delivery announced a change that did
// not commit, and the deliveries of one notification share one id and one
// body.
func TestSoakUnderFaults(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			e := apitest.New(t, s.Open(t), api.Redirects, api.Collections, api.Webhooks)
			e.Deps.Queue.(*storequeue.Queue).UseVisibility(time.Second) // a delivery whose ack failed comes back soon
			rc := newReceiver(t)
			for _, topic := range []string{"collections/create", "collections/update", "collections/delete"} {
				e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{"topic": topic, "address": rc.URL}}).Expect(t, 201)
			}
			in := e.InjectFaults(0.1)
			stop := startPipeline(e)
			defer stop()
			in.Start()

			scale := soakScale[s.Name]
			start := time.Now()
			var st soakStats
			clients := make([]*client, scale[0])
			var wg sync.WaitGroup
			for i := range clients {
				clients[i] = &client{e: e, id: i, stats: &st}
				wg.Add(1)
				go func() { defer wg.Done(); clients[i].run(t, scale[1]) }()
			}
			wg.Wait()
			in.Stop()
			elapsed := time.Since(start)
			f := in.Counts()
			t.Logf("%s: %d changes in %d requests by %d clients in %s: %d answered 503, %d 409 in progress, %d 409 applied but answer lost, %d retried; faults injected: %d reads, %d writes (%d applied before failing), %d queue calls",
				s.Name, st.changes.Load(), st.requests.Load(), len(clients), elapsed.Round(time.Millisecond),
				st.unavailable.Load(), st.busy.Load(), st.lost.Load(), st.retries.Load(), f.Reads, f.Writes, f.Applied, f.Queue)
			if f.Reads+f.Writes == 0 {
				t.Fatal("no fault was injected")
			}

			live := collectionsNow(t, e)
			checkCollections(t, clients, live)
			checkRedirects(t, e, clients)
			checkDeliveries(t, clients, live, rc)
		})
	}
}

type soakStats struct {
	changes, requests, unavailable, busy, lost, retries atomic.Int64
}

// client makes changes one after another, each under its own key, and
// remembers what it was told.
type client struct {
	e     *apitest.Env
	id    int
	stats *soakStats

	collections []*collection // created by this client
	redirects   []*redirect
}

type collection struct {
	id      int64  // 0 when the create was not acknowledged
	base    string // title at creation
	title   string // acknowledged title
	created bool   // acknowledged
	deleted bool   // delete acknowledged
	unsure  bool   // a change to it was not acknowledged: either outcome may hold
	gone    bool   // a delete was tried
}

type redirect struct {
	id      int64
	path    string
	created bool
	deleted bool
	unsure  bool
}

// send makes one change, retrying it under its key while the answer is a
// 503 or a 409 of a request still in progress; it returns the final answer
// (nil when the client gave up, as a real one eventually would).
func (c *client) send(t *testing.T, key, method, path string, body any) *apitest.Response {
	c.stats.changes.Add(1)
	for attempt := 0; attempt < 30; attempt++ {
		if attempt > 0 {
			c.stats.retries.Add(1)
		}
		r := c.e.DoKeyed(key, method, path, body)
		c.stats.requests.Add(1)
		switch {
		case r.Status == 503:
			c.stats.unavailable.Add(1)
			if r.Header.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After: %s", r.Body)
			}
			continue
		case r.Status >= 500:
			t.Errorf("%s %s answered %d: %s", method, path, r.Status, r.Body)
			return nil
		case r.Status == 409 && strings.Contains(string(r.Body), "still being processed"):
			c.stats.busy.Add(1)
			continue
		case r.Status == 409:
			c.stats.lost.Add(1)
			return nil // applied, answer lost: not acknowledged
		}
		return r
	}
	return nil
}

func (c *client) run(t *testing.T, changes int) {
	for i := range changes {
		key := fmt.Sprintf("soak-%d-%d", c.id, i)
		switch n := rand.IntN(100); {
		case n < 35 || len(c.collections) == 0:
			col := &collection{base: fmt.Sprintf("c-%d-%d", c.id, i)}
			c.collections = append(c.collections, col)
			r := c.send(t, key, "POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": col.base}})
			if r == nil {
				continue
			}
			if r.Status != 201 {
				t.Errorf("create: %d %s", r.Status, r.Body)
				continue
			}
			col.id, col.title, col.created = int64(r.Object(t, "custom_collection")["id"].(float64)), col.base, true
		case n < 55:
			col := c.collections[rand.IntN(len(c.collections))]
			if !col.created || col.gone {
				continue
			}
			title := col.title + "u"
			r := c.send(t, key, "PUT", fmt.Sprintf("/com/custom_collections/%d.json", col.id), map[string]any{"custom_collection": map[string]any{"title": title}})
			switch {
			case r == nil:
				col.unsure = true
			case r.Status == 200:
				col.title = title
			default:
				t.Errorf("update: %d %s", r.Status, r.Body)
			}
		case n < 70:
			col := c.collections[rand.IntN(len(c.collections))]
			if !col.created || col.gone {
				continue
			}
			col.gone = true
			r := c.send(t, key, "DELETE", fmt.Sprintf("/com/custom_collections/%d.json", col.id), nil)
			switch {
			case r == nil:
				col.unsure = true
			case r.Status == 200:
				col.deleted = true
			default:
				t.Errorf("delete: %d %s", r.Status, r.Body)
			}
		case n < 90 || len(c.redirects) == 0:
			rd := &redirect{path: fmt.Sprintf("/soak/%d/%d", c.id, i)}
			c.redirects = append(c.redirects, rd)
			r := c.send(t, key, "POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": rd.path, "target": "/to"}})
			switch {
			case r == nil:
				rd.unsure = true
			case r.Status == 201:
				rd.id, rd.created = int64(r.Object(t, "redirect")["id"].(float64)), true
			default:
				t.Errorf("redirect: %d %s", r.Status, r.Body)
			}
		default:
			rd := c.redirects[rand.IntN(len(c.redirects))]
			if !rd.created || rd.deleted || rd.unsure {
				continue
			}
			r := c.send(t, key, "DELETE", fmt.Sprintf("/web/redirects/%d.json", rd.id), nil)
			switch {
			case r == nil:
				rd.unsure = true
			case r.Status == 200:
				rd.deleted = true
			default:
				t.Errorf("redirect delete: %d %s", r.Status, r.Body)
			}
		}
	}
}

// collectionsNow lists every custom collection: id → title.
func collectionsNow(t *testing.T, e *apitest.Env) map[int64]string {
	live := map[int64]string{}
	path := "/com/custom_collections.json?limit=250"
	for path != "" {
		r := e.Do("GET", path, nil).Expect(t, 200)
		for _, v := range r.List(t, "custom_collections") {
			m := v.(map[string]any)
			live[int64(m["id"].(float64))] = m["title"].(string)
		}
		path = r.Link("next")
		if i := strings.Index(path, "/com/"); i > 0 {
			path = path[i:]
		}
	}
	return live
}

func checkCollections(t *testing.T, clients []*client, live map[int64]string) {
	t.Helper()
	bases := map[string]int{} // live collections per creation title
	for _, title := range live {
		bases[strings.TrimRight(title, "u")]++
	}
	for _, c := range clients {
		for _, col := range c.collections {
			if bases[col.base] > 1 {
				t.Errorf("%s: %d collections, one create", col.base, bases[col.base])
			}
			if !col.created {
				continue // unacknowledged: there once or not at all (above)
			}
			title, there := live[col.id]
			switch {
			case col.deleted && there:
				t.Errorf("%s: deleted, yet there", col.base)
			case col.deleted || col.unsure:
			case !there:
				t.Errorf("%s: acknowledged, yet missing", col.base)
			case title != col.title:
				t.Errorf("%s: title %q, acknowledged %q", col.base, title, col.title)
			}
		}
	}
}

// checkRedirects: each redirect is there as acknowledged, and its path
// guard stands exactly when it does (a create of the same path is 422
// while the redirect is there, 201 once it is not).
func checkRedirects(t *testing.T, e *apitest.Env, clients []*client) {
	t.Helper()
	for _, c := range clients {
		for _, rd := range c.redirects {
			n := len(e.Do("GET", "/web/redirects.json?path="+rd.path, nil).Expect(t, 200).List(t, "redirects"))
			switch {
			case n > 1:
				t.Errorf("%s: %d redirects", rd.path, n)
			case rd.created && !rd.deleted && !rd.unsure && n != 1:
				t.Errorf("%s: acknowledged, yet missing", rd.path)
			case rd.deleted && n != 0:
				t.Errorf("%s: deleted, yet there", rd.path)
			}
			want := 201
			if n == 1 {
				want = 422
			}
			if r := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": rd.path, "target": "/to"}}); r.Status != want {
				t.Errorf("%s: %d redirects, and a create of its path answers %d: %s", rd.path, n, r.Status, r.Body)
			}
		}
	}
}

func checkDeliveries(t *testing.T, clients []*client, live map[int64]string, rc *receiver) {
	t.Helper()
	type change struct {
		topic string
		id    int64
	}
	want := map[change]bool{}
	attempted := map[int64]bool{} // ids a delete was tried on
	for _, c := range clients {
		for _, col := range c.collections {
			if col.created {
				want[change{"collections/create", col.id}] = true
			}
			if col.deleted {
				want[change{"collections/delete", col.id}] = true
			}
			if col.gone {
				attempted[col.id] = true
			}
		}
	}
	missing := func() []change {
		got := rc.changes()
		var m []change
		for ch := range want {
			if !got[ch.topic][ch.id] {
				m = append(m, ch)
			}
		}
		return m
	}
	deadline := time.Now().Add(2 * time.Minute)
	for len(missing()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond) // the pipeline drains on its own time
	}
	if m := missing(); len(m) > 0 {
		t.Errorf("%d acknowledged changes never delivered, such as %v", len(m), m[0])
	}
	for id := range rc.changes()["collections/create"] {
		if _, there := live[id]; !there && !attempted[id] {
			t.Errorf("collection %d: its create was delivered, but it is not there and was never deleted", id)
		}
	}
	for _, topic := range []string{"collections/create", "collections/delete"} {
		if n := rc.duplicated(topic); n > 0 {
			t.Errorf("%s: %d changes delivered under more than one webhook id", topic, n)
		}
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.mismatched > 0 {
		t.Errorf("%d deliveries carried a webhook id already delivered with another body", rc.mismatched)
	}
}

// receiver records deliveries by topic and collection id, and checks that
// deliveries under one webhook id are one notification.
type receiver struct {
	*httptest.Server
	mu         sync.Mutex
	byTopic    map[string]map[int64]bool
	bodies     map[string]string
	mismatched int
	// deliveries are the webhook ids each change arrived under.
	deliveries map[string]map[int64]map[string]bool
}

func newReceiver(t *testing.T) *receiver {
	rc := &receiver{byTopic: map[string]map[int64]bool{}, bodies: map[string]string{}, deliveries: map[string]map[int64]map[string]bool{}}
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID int64 `json:"id"`
		}
		json.Unmarshal(body, &m)
		topic, id := r.Header.Get("X-Service-Topic"), r.Header.Get("X-Service-Webhook-Id")
		rc.mu.Lock()
		if rc.byTopic[topic] == nil {
			rc.byTopic[topic] = map[int64]bool{}
		}
		rc.byTopic[topic][m.ID] = true
		if rc.deliveries[topic] == nil {
			rc.deliveries[topic] = map[int64]map[string]bool{}
		}
		if rc.deliveries[topic][m.ID] == nil {
			rc.deliveries[topic][m.ID] = map[string]bool{}
		}
		rc.deliveries[topic][m.ID][id] = true
		if prev, ok := rc.bodies[id]; ok && prev != string(body) {
			rc.mismatched++
		}
		rc.bodies[id] = string(body)
		rc.mu.Unlock()
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) changes() map[string]map[int64]bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	out := map[string]map[int64]bool{}
	for topic, ids := range rc.byTopic {
		out[topic] = map[int64]bool{}
		for id := range ids {
			out[topic][id] = true
		}
	}
	return out
}

// duplicated counts the records whose change of topic arrived under more
// than one webhook id: one change notified twice. (A delivery repeated
// under its own id is at-least-once delivery, which receivers
// de-duplicate.)
func (rc *receiver) duplicated(topic string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	n := 0
	for _, ids := range rc.deliveries[topic] {
		if len(ids) > 1 {
			n++
		}
	}
	return n
}

// startPipeline runs the local runner's in-process pipeline (outbox pump,
// delivery consumer, the change feed's drain) over the env's faulty store
// and queue.
func startPipeline(e *apitest.Env) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	d := api.Dispatcher(e.Deps, config.Config{RetryBase: 10 * time.Millisecond})
	d.MaxDelay = 200 * time.Millisecond
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); delivery.Pump(ctx, e.Deps.Store, e.Deps.Queue, nil, 20*time.Millisecond) }()
	// What a failed drain left pending (the runner drains it every few
	// seconds; here as often as the pump looks).
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			e.Deps.Feed.Drain(ctx)
			select {
			case <-ctx.Done():
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	go func() { defer wg.Done(); delivery.Consume(ctx, e.Deps.Queue, d, 8) }()
	return func() { cancel(); wg.Wait() }
}
