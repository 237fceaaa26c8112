package providers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	evlog "github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/providers"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/variants"
)

var groups = []api.Group{
	{Name: "fulfillment-services", Routes: fulfillmentservices.Routes},
	{Name: "variants", Routes: variants.Routes},
}

// The demo seed's product (shared/seed/demo.json) and shop domain.
const (
	ipod   = 632910392
	domain = "demo-shop.example.com"
)

func forEachStore(t *testing.T, fn func(t *testing.T, e *apitest.Env)) {
	apitest.ForEachStore(t, fn, groups...)
}

// fake is a loopback fulfillment provider: routes by path, records every
// request.
type fake struct {
	srv    *httptest.Server
	start  time.Time
	mu     sync.Mutex
	reqs   []*url.URL
	at     map[string]time.Duration // first request to each path, since start
	routes map[string]func(w http.ResponseWriter, r *http.Request)
}

func newFake(t *testing.T) *fake {
	f := &fake{start: time.Now(), at: map[string]time.Duration{}, routes: map[string]func(http.ResponseWriter, *http.Request){}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.reqs = append(f.reqs, r.URL)
		if _, ok := f.at[r.URL.Path]; !ok {
			f.at[r.URL.Path] = time.Since(f.start)
		}
		h := f.routes[r.URL.Path]
		f.mu.Unlock()
		if h == nil {
			http.NotFound(w, r)
			return
		}
		h(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// route answers path with a fixed status and body.
func (f *fake) route(path string, status int, body string) {
	f.handle(path, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		w.Write([]byte(body))
	})
}

func (f *fake) handle(path string, h func(w http.ResponseWriter, r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.routes[path] = h
}

// requests returns and forgets the recorded requests.
func (f *fake) requests() []*url.URL {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := f.reqs
	f.reqs = nil
	return r
}

// service registers a fulfillment service through the API and returns its handle.
func service(t *testing.T, e *apitest.Env, fields map[string]any) string {
	t.Helper()
	s := e.Do("POST", "/admin/fulfillment_services.json", map[string]any{"fulfillment_service": fields}).
		Expect(t, http.StatusCreated).Object(t, "fulfillment_service")
	return s["handle"].(string)
}

// variant creates a variant of the demo product through the API.
func variant(t *testing.T, e *apitest.Env, option, sku string, managedBy any, qty int) int64 {
	t.Helper()
	v := e.Do("POST", fmt.Sprintf("/com/products/%d/variants.json", ipod), map[string]any{"variant": map[string]any{
		"option1": option, "sku": sku, "inventory_management": managedBy, "inventory_quantity": qty,
	}}).Expect(t, http.StatusCreated).Object(t, "variant")
	return int64(v["id"].(float64))
}

func stock(t *testing.T, e *apitest.Env, id int64) int {
	t.Helper()
	v := e.Do("GET", fmt.Sprintf("/com/variants/%d.json", id), nil).Expect(t, 200).Object(t, "variant")
	return int(v["inventory_quantity"].(float64))
}

func productEvents(t *testing.T, e *apitest.Env) []evlog.Event {
	t.Helper()
	return subjectEvents(t, e, evlog.Product, ipod)
}

func subjectEvents(t *testing.T, e *apitest.Env, typ string, id int64) []evlog.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: evlog.SubjectPartition(typ, id)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := records.DecodeAll[evlog.Event](items)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// notifications reads the notification items of a topic, oldest first.
func notifications(t *testing.T, e *apitest.Env, topic string) []outbox.Notification {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: "notification"})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := records.DecodeAll[outbox.Notification](items)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(ns, func(n outbox.Notification) bool { return n.Topic != topic })
}

func jobs(t *testing.T, e *apitest.Env) []store.Item {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: variants.StockJobPartition})
	if err != nil {
		t.Fatal(err)
	}
	return items
}

func expectSummary(t *testing.T, got providers.Summary, providersAsked, updated, skipped, failures int) {
	t.Helper()
	if got.Providers != providersAsked || got.Updated != updated || got.Skipped != skipped || got.Failures != failures {
		t.Fatalf("summary %+v, want providers %d updated %d skipped %d failures %d", got, providersAsked, updated, skipped, failures)
	}
}

func TestFetchStock(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		f := newFake(t)
		f.route("/a/fetch_stock.json", 200, `{"SKU-A1": 5, "SKU-A2": "7", "SKU-A3": -1, "SKU-A4": 2.5, "UNKNOWN": 3, "SKU-B1": 99, "SKU-A5": 0}`)
		f.route("/b/fetch_stock.xml", 200, `<?xml version="1.0" encoding="UTF-8"?>
<StockLevels>
  <Product><Sku>SKU-B1</Sku><Quantity>11</Quantity></Product>
  <Product><Sku> SKU-B2 </Sku><Quantity>lots</Quantity></Product>
</StockLevels>`)
		a := service(t, e, map[string]any{"name": "Warehouse A", "callback_url": f.srv.URL + "/a", "inventory_management": true})
		b := service(t, e, map[string]any{"name": "Warehouse B", "callback_url": f.srv.URL + "/b/", "inventory_management": true, "format": "xml"})
		service(t, e, map[string]any{"name": "Tracker Only", "callback_url": f.srv.URL + "/t", "tracking_support": true})
		a1 := variant(t, e, "A1", "SKU-A1", a, 0)
		a2 := variant(t, e, "A2", "SKU-A2", a, 0)
		a3 := variant(t, e, "A3", "SKU-A3", a, 4)
		a4 := variant(t, e, "A4", "SKU-A4", a, 0)
		a5 := variant(t, e, "A5", "SKU-A5", a, 0) // already at the level answered
		b1 := variant(t, e, "B1", "SKU-B1", b, 1)
		b2 := variant(t, e, "B2", "SKU-B2", b, 0)
		u := variant(t, e, "U", "SKU-A1", nil, 2) // same SKU, not managed
		evsBefore, nsBefore := len(productEvents(t, e)), len(notifications(t, e, "products/update"))

		s := providers.FetchStock(t.Context(), e.Deps)
		// Skipped: A's three invalid levels and two SKUs it does not manage, B's invalid level.
		expectSummary(t, s, 2, 2, 6, 0)
		want := map[int64]int{a1: 5, a2: 0, a3: 4, a4: 0, a5: 0, b1: 11, b2: 0, u: 2}
		for id, q := range want {
			if got := stock(t, e, id); got != q {
				t.Errorf("variant %d: stock %d, want %d", id, got, q)
			}
		}
		if len(s.Errors) != 3 || !strings.Contains(strings.Join(s.Errors, "\n"), `warehouse-a: 3 invalid stock levels ("SKU-A2", "SKU-A3", "SKU-A4")`) {
			t.Errorf("errors %q", s.Errors)
		}
		var paths []string
		for _, r := range f.requests() {
			paths = append(paths, r.Path+"?"+r.RawQuery)
		}
		slices.Sort(paths)
		if !slices.Equal(paths, []string{"/a/fetch_stock.json?shop=" + domain, "/b/fetch_stock.xml?shop=" + domain}) {
			t.Errorf("requests %v", paths)
		}
		evs := productEvents(t, e)[evsBefore:]
		var authors []string
		for _, ev := range evs {
			authors = append(authors, ev.Author)
			if ev.Verb != evlog.Update || ev.SubjectType != evlog.Product {
				t.Errorf("event %+v", ev)
			}
		}
		slices.Sort(authors)
		if !slices.Equal(authors, []string{"Warehouse A", "Warehouse B"}) {
			t.Errorf("event authors %v", authors)
		}
		stockNotificationsShow(t, e, nsBefore, b1)

		// Asked again with the same answers: nothing changes, nothing is written.
		s = providers.FetchStock(t.Context(), e.Deps)
		expectSummary(t, s, 2, 0, 6, 0)
		if n := len(productEvents(t, e)); n != evsBefore+2 {
			t.Errorf("%d events after the second run, want %d", n, evsBefore+2)
		}

		// A variant moved to another service is no longer set by the first.
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", a1), map[string]any{"variant": map[string]any{"inventory_management": b, "inventory_quantity": 1}}).Expect(t, 200)
		s = providers.FetchStock(t.Context(), e.Deps)
		if got := stock(t, e, a1); got != 1 || s.Updated != 0 {
			t.Errorf("moved variant: stock %d, summary %+v", got, s)
		}
	})
}

// stockNotificationsShow: the run made two products/update notifications, one showing b1 at 11.
func stockNotificationsShow(t *testing.T, e *apitest.Env, nsBefore int, b1 int64) {
	t.Helper()
	ns := notifications(t, e, "products/update")[nsBefore:]
	if len(ns) != 2 {
		t.Fatalf("%d products/update notifications, want 2", len(ns))
	}
	var p struct {
		Variants []struct {
			ID                int64 `json:"id"`
			InventoryQuantity int   `json:"inventory_quantity"`
		} `json:"variants"`
	}
	found := false
	for _, n := range ns {
		json.Unmarshal(n.Payload, &p)
		for _, v := range p.Variants {
			if v.ID == b1 && v.InventoryQuantity == 11 {
				found = true
			}
		}
	}
	if !found {
		t.Errorf("no products/update payload shows variant %d at 11", b1)
	}
}

func TestFetchStockFailures(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		f := newFake(t)
		f.route("/html/fetch_stock.json", 200, `<html>oops</html>`)
		f.route("/error/fetch_stock.json", 500, `{"SKU-E": 1}`)
		f.route("/array/fetch_stock.json", 200, `[{"SKU-R": 1}]`)
		f.route("/null/fetch_stock.json", 200, `null`)
		f.route("/big/fetch_stock.json", 200, `{"SKU-G": 1, "pad": "`+strings.Repeat("x", providers.MaxAnswer)+`"}`)
		f.route("/badxml/fetch_stock.xml", 200, `{"SKU-X": 1}`)
		cases := map[string]string{"html": "json", "error": "json", "array": "json", "null": "json", "big": "json", "badxml": "xml", "gone": "json"}
		var ids []int64
		for name, format := range cases {
			h := service(t, e, map[string]any{"name": "P " + name, "callback_url": f.srv.URL + "/" + name, "inventory_management": true, "format": format})
			ids = append(ids, variant(t, e, name, "SKU-"+strings.ToUpper(name[:1]), h, 3))
		}
		// A provider that is not listening at all.
		closed := httptest.NewServer(http.NotFoundHandler())
		closed.Close()
		h := service(t, e, map[string]any{"name": "P closed", "callback_url": closed.URL, "inventory_management": true})
		ids = append(ids, variant(t, e, "closed", "SKU-C", h, 3))

		s := providers.FetchStock(t.Context(), e.Deps)
		// "gone" answers 404: every provider failed, none was skipped entry by entry.
		expectSummary(t, s, 8, 0, 0, 8)
		for _, id := range ids {
			if got := stock(t, e, id); got != 3 {
				t.Errorf("variant %d: stock %d after a failed provider", id, got)
			}
		}
		all := strings.Join(s.Errors, "\n")
		for _, want := range []string{"p-html: fetch_stock: the answer is not a JSON object", "p-error: fetch_stock.json: the provider answered 500",
			"p-array:", "p-null:", "p-big: fetch_stock.json: answer larger than", "p-badxml: fetch_stock: the answer is not a <StockLevels> XML document",
			"p-gone: fetch_stock.json: the provider answered 404", "p-closed: fetch_stock.json: connection failed"} {
			if !strings.Contains(all, want) {
				t.Errorf("errors lack %q:\n%s", want, all)
			}
		}
	})
}

// A provider that never answers costs at most the outbound timeout, and
// the others are asked and updated meanwhile. (The bounds are the
// timeout's multiples, not a slow machine's guesses.)
func TestSlowProviderCostsAtMostTheTimeout(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Parallel()
		f := newFake(t)
		f.handle("/slow/fetch_stock.json", func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		f.route("/fast/fetch_stock.json", 200, `{"FAST-1": 9}`)
		slow := service(t, e, map[string]any{"name": "Slow", "callback_url": f.srv.URL + "/slow", "inventory_management": true})
		fast := service(t, e, map[string]any{"name": "Fast", "callback_url": f.srv.URL + "/fast", "inventory_management": true})
		sv := variant(t, e, "S", "SLOW-1", slow, 1)
		fv := variant(t, e, "F", "FAST-1", fast, 1)

		start := time.Now()
		f.start = start
		s := providers.FetchStock(t.Context(), e.Deps)
		took := time.Since(start)
		expectSummary(t, s, 2, 1, 0, 1)
		if took >= 2*outbound.TotalTimeout { // the slow one was waited on twice
			t.Errorf("the run took %s", took)
		}
		if took < outbound.TotalTimeout-time.Second {
			t.Errorf("the run took only %s: was the slow provider asked?", took)
		}
		f.mu.Lock()
		fastAt := f.at["/fast/fetch_stock.json"]
		f.mu.Unlock()
		if fastAt >= outbound.TotalTimeout { // after the slow one gave up
			t.Errorf("the fast provider was asked %s after the start", fastAt)
		}
		if stock(t, e, fv) != 9 || stock(t, e, sv) != 1 {
			t.Errorf("stocks fast %d slow %d", stock(t, e, fv), stock(t, e, sv))
		}
		if !strings.Contains(strings.Join(s.Errors, "\n"), "slow: fetch_stock.json: no answer within 10s") {
			t.Errorf("errors %q", s.Errors)
		}
	})
}

// trackingSeed holds n orders (#5000…) with one untracked fulfillment by
// track-co each, and order #7000 with fulfillments in every other state.
func trackingSeed(n int) []byte {
	var orders []string
	for i := range n {
		orders = append(orders, fmt.Sprintf(`{"id": %d, "name": "#%d", "fulfillments": [{"id": %d, "status": "success", "service": "track-co", "tracking_number": null}]}`, 5000+i, 5000+i, 6000+i))
	}
	orders = append(orders, `{"id": 7000, "name": "#7000", "fulfillments": [
		{"id": 7001, "status": "success", "service": "track-co", "tracking_number": null},
		{"id": 7002, "service": "track-co"},
		{"id": 7003, "status": "success", "service": "track-co", "tracking_number": "OLD"},
		{"id": 7004, "status": "cancelled", "service": "track-co", "tracking_number": null},
		{"id": 7005, "status": "success", "service": "manual", "tracking_number": null}]}`,
		`{"id": 8000, "name": "#8000", "fulfillments": [{"id": 8001, "status": "success", "service": "xml-track", "tracking_number": ""}]}`,
		`{"id": 8100, "name": "#8100", "fulfillments": [{"id": 8101, "status": "success", "service": "no-support", "tracking_number": null}]}`)
	return []byte(`{"shop": {"id": 1, "domain": "` + domain + `"}, "orders": [` + strings.Join(orders, ",\n") + `]}`)
}

// fulfillment reads a seeded fulfillment item.
func fulfillment(t *testing.T, e *apitest.Env, orderID, id int64) (store.Item, map[string]any) {
	t.Helper()
	it, err := e.Deps.Store.Get(t.Context(), store.Key{PK: parents.ChildPartition(parents.OrderPartition, orderID, "fulfillment"), SK: records.IDSK(id)})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(it.Data, &m); err != nil {
		t.Fatal(err)
	}
	return it, m
}

func untrackedIDs(t *testing.T, e *apitest.Env, handle string) []string {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI1, PK: parents.UntrackedPartition(handle)})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		out = append(out, it.SK)
	}
	return out
}

func TestFetchTrackingNumbers(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		if _, _, err := seed.Load(t.Context(), e.Deps.Store, e.Deps.Clock, trackingSeed(120)); err != nil {
			t.Fatal(err)
		}
		if got := len(untrackedIDs(t, e, "track-co")); got != 122 {
			t.Fatalf("the seed indexed %d untracked fulfillments of track-co, want 122", got)
		}
		f := newFake(t)
		f.handle("/track/fetch_tracking_numbers.json", func(w http.ResponseWriter, r *http.Request) {
			numbers := map[string]any{}
			for _, name := range r.URL.Query()["order_names[]"] {
				switch name {
				case "#5007": // not known to the provider yet
				case "#5010":
					numbers[name] = map[string]any{"not": "a number"}
				case "#5000":
					numbers[name] = "TN5000"
					numbers["#9999"] = "NOT-ASKED"
				default:
					numbers[name] = "TN" + name[1:]
				}
			}
			json.NewEncoder(w).Encode(map[string]any{"tracking_numbers": numbers, "message": "ok", "success": true})
		})
		f.route("/xml/fetch_tracking_numbers.xml", 200, `<TrackingNumbers><Order><ID>#8000</ID><Tracking> XML-1 </Tracking></Order></TrackingNumbers>`)
		if h := service(t, e, map[string]any{"name": "Track Co", "callback_url": f.srv.URL + "/track", "tracking_support": true}); h != "track-co" {
			t.Fatalf("handle %s", h)
		}
		service(t, e, map[string]any{"name": "Xml Track", "callback_url": f.srv.URL + "/xml", "tracking_support": true, "format": "xml"})
		service(t, e, map[string]any{"name": "No Support", "callback_url": f.srv.URL + "/ns", "inventory_management": true})
		service(t, e, map[string]any{"name": "Idle", "callback_url": f.srv.URL + "/idle", "tracking_support": true})

		s := providers.FetchTrackingNumbers(t.Context(), e.Deps)
		// 121 order names asked of track-co (#7000 has two fulfillments), 119
		// answered validly; #8000 of xml-track. Skipped: #9999 and #5010.
		expectSummary(t, s, 2, 121, 2, 0)

		reqs := f.requests()
		trackingRequests(t, reqs)

		it, m := fulfillment(t, e, 5000, 6000)
		if m["tracking_number"] != "TN5000" || fmt.Sprint(m["tracking_numbers"]) != "[TN5000]" || it.GSI1PK != "" || m["order_name"] != "#5000" {
			t.Errorf("fulfillment 6000: %v (GSI1 %q)", m, it.GSI1PK)
		}
		for _, id := range []int64{7001, 7002} {
			if _, m := fulfillment(t, e, 7000, id); m["tracking_number"] != "TN7000" {
				t.Errorf("fulfillment %d: %v", id, m)
			}
		}
		if _, m := fulfillment(t, e, 7000, 7003); m["tracking_number"] != "OLD" {
			t.Errorf("fulfillment 7003: %v", m)
		}
		if _, m := fulfillment(t, e, 8000, 8001); m["tracking_number"] != "XML-1" {
			t.Errorf("fulfillment 8001: %v", m)
		}
		if got := untrackedIDs(t, e, "track-co"); !slices.Equal(got, []string{records.IDSK(6007), records.IDSK(6010)}) {
			t.Errorf("still untracked %v", got)
		}

		trackingNotificationsAndEvents(t, e)

		// The next run asks only about what is still untracked.
		s = providers.FetchTrackingNumbers(t.Context(), e.Deps)
		expectSummary(t, s, 1, 0, 1, 0)
		reqs = f.requests()
		if len(reqs) != 1 || !slices.Equal(reqs[0].Query()["order_names[]"], []string{"#5007", "#5010"}) {
			t.Errorf("second run requests %v", reqs)
		}
	})
}

// trackingRequests: the first run asked track-co in three batches, each order name once, and xml-track.
func trackingRequests(t *testing.T, reqs []*url.URL) {
	t.Helper()
	asked := map[string]int{}
	trackRequests := 0
	for _, r := range reqs {
		q := r.Query()
		if q.Get("shop") != domain || q.Has("order_ids[]") {
			t.Errorf("request %s", r)
		}
		if r.Path == "/track/fetch_tracking_numbers.json" {
			trackRequests++
			if n := len(q["order_names[]"]); n > providers.BatchSize {
				t.Errorf("a request asks %d names", n)
			}
		} else if r.Path != "/xml/fetch_tracking_numbers.xml" {
			t.Errorf("unexpected request %s", r)
		}
		for _, n := range q["order_names[]"] {
			asked[n]++
		}
	}
	if trackRequests != 3 || len(asked) != 122 || asked["#7000"] != 1 || asked["#5119"] != 1 || asked["#8100"] != 0 {
		t.Errorf("%d requests to track-co, %d names asked, #7000 %d times", trackRequests, len(asked), asked["#7000"])
	}
}

// trackingNotificationsAndEvents: the first run's fulfillments/update notifications and the orders' events.
func trackingNotificationsAndEvents(t *testing.T, e *apitest.Env) {
	t.Helper()
	ns := notifications(t, e, providers.FulfillmentsUpdate)
	if len(ns) != 121 {
		t.Fatalf("%d fulfillments/update notifications, want 121", len(ns))
	}
	var payload map[string]any
	for _, n := range ns {
		json.Unmarshal(n.Payload, &payload)
		if payload["id"] == 6000.0 {
			break
		}
	}
	if payload["id"] != 6000.0 || payload["order_id"] != 5000.0 || payload["tracking_number"] != "TN5000" || payload["service"] != "track-co" {
		t.Errorf("payload %v", payload)
	}
	if _, ok := payload["order_name"]; ok || ns[0].Resource != "fulfillment" {
		t.Errorf("payload %v, resource %q", payload, ns[0].Resource)
	}
	evs := subjectEvents(t, e, evlog.Order, 5000)
	if len(evs) != 1 || evs[0].Verb != evlog.Update || evs[0].Author != "Track Co" || !strings.Contains(evs[0].Message, "TN5000") ||
		!strings.Contains(evs[0].Message, `<a href="/admin/orders/5000">#5000</a>`) {
		t.Errorf("order events %+v", evs)
	}
	if evs := subjectEvents(t, e, evlog.Order, 7000); len(evs) != 2 {
		t.Errorf("%d events of order 7000, want 2", len(evs))
	}
}

func TestTrackingFailures(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		if _, _, err := seed.Load(t.Context(), e.Deps.Store, e.Deps.Clock, trackingSeed(3)); err != nil {
			t.Fatal(err)
		}
		f := newFake(t)
		f.route("/track/fetch_tracking_numbers.json", 200, `{"tracking_numbers": {"#5000": "TN"}, "message": "maintenance", "success": false}`)
		f.route("/xml/fetch_tracking_numbers.xml", 200, `not xml`)
		service(t, e, map[string]any{"name": "Track Co", "callback_url": f.srv.URL + "/track", "tracking_support": true})
		service(t, e, map[string]any{"name": "Xml Track", "callback_url": f.srv.URL + "/xml", "tracking_support": true, "format": "xml"})

		s := providers.FetchTrackingNumbers(t.Context(), e.Deps)
		expectSummary(t, s, 2, 0, 0, 2)
		// A failed provider is not asked again in the same run.
		if n := len(f.requests()); n != 2 {
			t.Errorf("%d requests, want 2", n)
		}
		if !strings.Contains(strings.Join(s.Errors, "\n"), `success false: "maintenance"`) {
			t.Errorf("errors %q", s.Errors)
		}
		if got := len(untrackedIDs(t, e, "track-co")); got != 5 {
			t.Errorf("%d untracked after a failed run", got)
		}
		if n := len(notifications(t, e, providers.FulfillmentsUpdate)); n != 0 {
			t.Errorf("%d notifications", n)
		}
	})
}

func TestStockJobs(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		f := newFake(t)
		f.handle("/jobs/fetch_stock.json", func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Query().Get("sku") {
			case "JOB-1":
				w.Write([]byte(`{"JOB-1": 17}`))
			case "JOB-2":
				w.Write([]byte(`{"OTHER": 1}`))
			default:
				w.Write([]byte(`"oops"`))
			}
		})
		h := service(t, e, map[string]any{"name": "Jobs WH", "callback_url": f.srv.URL + "/jobs", "inventory_management": true})
		j1 := variant(t, e, "J1", "JOB-1", h, 0)
		variant(t, e, "plain", "PLAIN", nil, 0)
		if got := jobs(t, e); len(got) != 1 || got[0].SK != records.IDSK(j1) {
			t.Fatalf("stock jobs %v", got)
		}
		if got := f.requests(); len(got) != 0 {
			t.Fatalf("the create itself asked the provider: %v", got)
		}

		s := providers.RunJobs(t.Context(), e.Deps)
		expectSummary(t, s, 1, 1, 0, 0)
		if got := stock(t, e, j1); got != 17 {
			t.Errorf("stock %d", got)
		}
		reqs := f.requests()
		if len(reqs) != 1 || reqs[0].Path != "/jobs/fetch_stock.json" || reqs[0].RawQuery != "shop="+domain+"&sku=JOB-1" {
			t.Errorf("requests %v", reqs)
		}
		// The provider's own level writes no new job.
		if got := jobs(t, e); len(got) != 0 {
			t.Errorf("stock jobs left %v", got)
		}

		// An admin change asks again; a stock change in the admin is undone by the provider's answer.
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", j1), map[string]any{"variant": map[string]any{"inventory_quantity": 5}}).Expect(t, 200)
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", j1), map[string]any{"variant": map[string]any{"inventory_quantity_adjustment": 1}}).Expect(t, 200)
		if got := jobs(t, e); len(got) != 1 {
			t.Fatalf("stock jobs after admin changes %v", got)
		}
		s = providers.RunJobs(t.Context(), e.Deps)
		expectSummary(t, s, 1, 1, 0, 0)
		if got := stock(t, e, j1); got != 17 {
			t.Errorf("stock %d", got)
		}

		// A SKU the provider does not know, an unreadable answer, a service nobody registered.
		variant(t, e, "J2", "JOB-2", h, 2)
		j3 := variant(t, e, "J3", "JOB-3", h, 3)
		variant(t, e, "J4", "JOB-4", "nobody", 4)
		s = providers.RunJobs(t.Context(), e.Deps)
		expectSummary(t, s, 2, 0, 0, 1)
		if got := stock(t, e, j3); got != 3 {
			t.Errorf("stock %d after an unreadable answer", got)
		}
		if got := jobs(t, e); len(got) != 0 {
			t.Errorf("stock jobs left %v", got)
		}

		// FetchStockOne directly.
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", j1), map[string]any{"variant": map[string]any{"inventory_quantity": 1}}).Expect(t, 200)
		if err := providers.FetchStockOne(t.Context(), e.Deps, j1); err != nil || stock(t, e, j1) != 17 {
			t.Errorf("FetchStockOne: %v, stock %d", err, stock(t, e, j1))
		}
		if err := providers.FetchStockOne(t.Context(), e.Deps, j3); !providers.ProviderError(err) {
			t.Errorf("FetchStockOne of an unreadable answer: %v", err)
		}
		if err := providers.FetchStockOne(t.Context(), e.Deps, 123456789); err != nil {
			t.Errorf("FetchStockOne of no variant: %v", err)
		}
	})
}

// The Lambda handlers: a schedule event runs a poll; a stream record of a
// stock job drains the jobs.
func TestLambdaHandlers(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		f := newFake(t)
		f.route("/wh/fetch_stock.json", 200, `{"L-1": 4}`)
		h := service(t, e, map[string]any{"name": "Lambda WH", "callback_url": f.srv.URL + "/wh", "inventory_management": true})
		id := variant(t, e, "L1", "L-1", h, 0)

		var ev events.EventBridgeEvent
		json.Unmarshal([]byte(`{"version":"0","id":"1","detail-type":"Scheduled Event","source":"aws.events","time":"2024-03-13T16:00:00Z","resources":["arn:aws:events:us-east-1:1:rule/x"],"detail":{}}`), &ev)
		s, err := providers.ScheduleHandler(e.Deps, providers.FetchStock)(t.Context(), ev)
		if err != nil || s.Updated != 1 || stock(t, e, id) != 4 {
			t.Fatalf("fetch-stock handler: %+v %v", s, err)
		}
		b, _ := json.Marshal(s)
		if !strings.Contains(string(b), `"providers":1,"updated":1,"skipped":0,"failures":0,"errors":[]`) {
			t.Errorf("summary JSON %s", b)
		}
		if s, err := providers.ScheduleHandler(e.Deps, providers.FetchTrackingNumbers)(t.Context(), ev); err != nil || s.Providers != 0 {
			t.Errorf("fetch-tracking-numbers handler: %+v %v", s, err)
		}

		// A store without a shop: the run cannot start, the invocation fails.
		empty := &platform.Deps{Store: apitest.OpenEmbedded(t), IDs: ids.New(), Outbound: outbound.New(true)}
		if _, err := providers.ScheduleHandler(empty, providers.FetchStock)(t.Context(), ev); err == nil {
			t.Error("a run without a shop did not fail")
		}

		// The stream: an INSERT of a stock job marker runs the jobs.
		f.route("/wh/fetch_stock.json", 200, `{"L-1": 6}`)
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", id), map[string]any{"variant": map[string]any{"price": "2.00"}}).Expect(t, 200)
		record := events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{
			Keys: map[string]events.DynamoDBAttributeValue{"PK": events.NewStringAttribute(variants.StockJobPartition), "SK": events.NewStringAttribute(records.IDSK(id))}}}
		other := events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{
			Keys: map[string]events.DynamoDBAttributeValue{"PK": events.NewStringAttribute("outbox"), "SK": events.NewStringAttribute("1")}}}
		resp, err := providers.StreamHandler(e.Deps)(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{other}})
		if err != nil || len(resp.BatchItemFailures) != 0 || stock(t, e, id) != 4 {
			t.Fatalf("stream without jobs: %v %v", resp, err)
		}
		resp, err = providers.StreamHandler(e.Deps)(context.Background(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{other, record}})
		if err != nil || len(resp.BatchItemFailures) != 0 || stock(t, e, id) != 6 || len(jobs(t, e)) != 0 {
			t.Fatalf("stream with a job: %v %v, stock %d", resp, err, stock(t, e, id))
		}
	})
}

// TestFetchStockResumesAfterFaults: polls made while a third of the
// store's calls fail either fail or apply (a variant at a time); the polls
// after them apply what is left, and nothing is applied twice: each
// products/update notification shows a state of the variants no other one
// shows, the last one the provider's.
func TestFetchStockResumesAfterFaults(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		f := newFake(t)
		f.route("/a/fetch_stock.json", 200, `{"SKU-F1": 5, "SKU-F2": 8}`)
		a := service(t, e, map[string]any{"name": "Warehouse F", "callback_url": f.srv.URL + "/a", "inventory_management": true})
		f1 := variant(t, e, "F1", "SKU-F1", a, 0)
		f2 := variant(t, e, "F2", "SKU-F2", a, 1)
		evsBefore, nsBefore := len(productEvents(t, e)), len(notifications(t, e, "products/update"))

		in := e.InjectFaults(0.3)
		in.Start()
		failed := 0
		for run := 0; ; run++ {
			if run == 50 {
				t.Fatal("50 polls under faults and none came through clean")
			}
			s := providers.FetchStock(t.Context(), e.Deps)
			if s.Failures == 0 {
				break
			}
			failed++
		}
		in.Stop()
		// The events the polls staged are published by the change feed:
		// what a fault left pending, the runner's next drain.
		if err := e.Deps.Feed.Drain(t.Context()); err != nil {
			t.Fatal(err)
		}
		if got1, got2 := stock(t, e, f1), stock(t, e, f2); got1 != 5 || got2 != 8 {
			t.Fatalf("stock %d and %d after %d failed polls, want 5 and 8", got1, got2, failed)
		}
		ns := notifications(t, e, "products/update")[nsBefore:]
		if n := len(productEvents(t, e)) - evsBefore; n != len(ns) || n < 1 || n > 2 {
			t.Errorf("%d product events and %d notifications for two variants changed", n, len(ns))
		}
		seen := map[[2]int]bool{}
		var last [2]int
		for _, n := range ns {
			var p struct {
				Variants []struct {
					ID                int64 `json:"id"`
					InventoryQuantity int   `json:"inventory_quantity"`
				} `json:"variants"`
			}
			json.Unmarshal(n.Payload, &p)
			for _, v := range p.Variants {
				switch v.ID {
				case f1:
					last[0] = v.InventoryQuantity
				case f2:
					last[1] = v.InventoryQuantity
				}
			}
			if seen[last] {
				t.Errorf("two notifications of the state %v", last)
			}
			seen[last] = true
		}
		if last != [2]int{5, 8} {
			t.Errorf("the last notification shows %v", last)
		}
		if c := in.Counts(); c.Reads+c.Writes == 0 {
			t.Error("no fault was injected")
		}
	})
}
