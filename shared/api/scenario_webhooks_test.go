package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
)

// leavingToken is an app installed for the webhooks scenario to uninstall
// (DELETE /admin/api_permissions/current.json revokes the caller's token).
const leavingToken = "leaving-app-token-0123456789abcdef"

// webhooksRun carries the demo app's webhooks (id1 to id3) and the one
// the read-only app subscribes (other).
type webhooksRun struct {
	*scenario
	id1, id2, id3, other int64
}

const (
	webhookList, webhookCount = "/admin/webhooks.json", "/admin/webhooks/count.json"
	hookAddr1, hookAddr2      = "https://whatever.example.com/hooks/orders", "https://whatever.example.com/hooks/other"
)

func (webhooksRun) one(id int64) string { return fmt.Sprintf("/admin/webhooks/%d.json", id) }

func (s *scenario) webhooks(t *testing.T) {
	s.t = t
	r := &webhooksRun{scenario: s}
	r.create()
	r.reads()
	r.update()
	s.deliveries(t, r.other)
	r.deleteHooks()
	s.uninstall(t)
}

// Create; another app may subscribe the same address, to a topic it may
// read.
func (s *webhooksRun) create() {
	t := s.t
	valid := M{"webhook": M{"topic": "orders/create", "address": "https://whatever.example.com/hooks/new"}}
	r1 := s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/create", "address": hookAddr1}}, 201)
	s.id1 = s.id(r1, "webhook")
	if w := r1.Object(t, "webhook"); w["format"] != "json" || fmt.Sprint(w["fields"], w["metafield_namespaces"]) != "[] []" {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/paid", "address": hookAddr1, "format": "xml",
		"fields": []any{"id", " note "}, "metafield_namespaces": []any{"inventory"}}}, 201)
	s.id2 = s.id(r2, "webhook")
	if w := r2.Object(t, "webhook"); w["format"] != "xml" || fmt.Sprint(w["fields"]) != "[id note]" {
		t.Errorf("create with fields: %s", r2.Body)
	}
	s.id3 = s.id(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/create", "address": hookAddr2}}, 201), "webhook")
	// Another app may subscribe the same address, to a topic it may read:
	// orders/create needs read_orders (403 as a route's missing scope).
	s.do(roToken, "POST", webhookList, valid, 403)
	s.other = s.id(s.do(roToken, "POST", webhookList, M{"webhook": M{"topic": "shop/update", "address": hookAddr1}}, 201), "webhook")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{}}, 422), "topic", "address")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/exploded", "address": hookAddr1}}, 422), "topic")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/create", "address": hookAddr1}}, 422), "address")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/create", "address": "ftp://whatever.example.com/"}}, 422), "address")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/create", "address": "https://" + strings.Repeat("a", 990) + ".example.com"}}, 422), "address")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "carts/create", "address": hookAddr1, "format": "yaml"}}, 422), "format")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "carts/create", "address": hookAddr1, "fields": []any{" "},
		"metafield_namespaces": slices.Repeat([]any{"ns"}, 51)}}, 422), "fields", "metafield_namespaces")
	s.wantFields(s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": 5, "address": hookAddr1}}, 422), "topic")
	s.do(demoToken, "POST", webhookList, M{"webhooks": M{"topic": "orders/create"}}, 400)
	s.do(demoToken, "POST", webhookList, M{"webhook": "orders/create"}, 400)
	s.do(demoToken, "POST", webhookList, `{"webhook": {`, 400)
	s.do(demoToken, "POST", webhookList, tooLarge, 413)
	s.do(noToken, "POST", webhookList, valid, 401)
	s.do(badToken, "POST", webhookList, valid, 401)
}

// List and count (an app sees only its own, and needs no scope), and get.
func (s *webhooksRun) reads() {
	// list: an app sees only its own, and needs no scope
	low := min(s.id1, s.id2, s.id3)
	s.wantLen(s.do(demoToken, "GET", webhookList, nil, 200), "webhooks", 3)
	s.wantLen(s.do(roToken, "GET", webhookList, nil, 200), "webhooks", 1)
	s.wantLen(s.do(noScopeToken, "GET", webhookList, nil, 200), "webhooks", 0)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?limit=2&page=2", nil, 200), "webhooks", 1)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?since_id="+itoa(low), nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?address="+url.QueryEscape(hookAddr1), nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?address="+url.QueryEscape(hookAddr1)+"&topic=orders/paid", nil, 200), "webhooks", 1)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?topic=orders/create", nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?topic=nothing", nil, 200), "webhooks", 0)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "webhooks", 3)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "webhooks", 0)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?updated_at_max=2999-01-01&topic=orders/create", nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", webhookList+"?fields=id,topic,address&limit=250", nil, 200), "webhooks", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x", "created_at_min=yesterday", "updated_at_max=2024-13-45"} {
		s.do(demoToken, "GET", webhookList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", webhookList, nil, 401)

	// count
	s.wantCount(s.do(demoToken, "GET", webhookCount, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", webhookCount, nil, 200), 1)
	s.wantCount(s.do(noScopeToken, "GET", webhookCount, nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", webhookCount+"?address="+url.QueryEscape(hookAddr1), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", webhookCount+"?topic=orders/create", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", webhookCount+"?topic=orders/create&address="+url.QueryEscape(hookAddr2), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", webhookCount+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", webhookCount+"?updated_at_min=2000-01-01&topic=orders/paid", nil, 200), 1)
	s.do(demoToken, "GET", webhookCount+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", webhookCount, nil, 401)

	// get
	s.do(demoToken, "GET", s.one(s.id1), nil, 200)
	s.do(demoToken, "GET", s.one(s.id2)+"?fields=address,topic,fields", nil, 200)
	s.do(roToken, "GET", s.one(s.other), nil, 200)
	s.do(roToken, "GET", s.one(s.id1), nil, 404) // another app's webhook
	s.do(demoToken, "GET", s.one(s.other), nil, 404)
	s.do(demoToken, "GET", s.one(999999999), nil, 404)
	s.do(demoToken, "GET", "/admin/webhooks/abc.json", nil, 404)
	s.do(noToken, "GET", s.one(s.id1), nil, 401)
}

// Update: a webhook may not move onto another's topic and address.
func (s *webhooksRun) update() {
	t := s.t
	if res := s.do(demoToken, "PUT", s.one(s.id1), M{"webhook": M{"id": s.id1, "address": hookAddr1 + "/v2"}}, 200); res.Status == 200 {
		if w := res.Object(t, "webhook"); w["address"] != hookAddr1+"/v2" || w["topic"] != "orders/create" || w["format"] != "json" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", s.one(s.id2), M{"webhook": M{"format": "json", "fields": []any{}, "metafield_namespaces": nil}}, 200); res.Status == 200 {
		if w := res.Object(t, "webhook"); w["format"] != "json" || fmt.Sprint(w["fields"], w["metafield_namespaces"]) != "[] [inventory]" {
			t.Errorf("update lists: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", s.one(s.id3), M{"webhook": M{"topic": "orders/paid"}}, 200)
	// id3 moving onto id1's topic and address
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"webhook": M{"topic": "orders/create", "address": hookAddr1 + "/v2"}}, 422), "address")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"webhook": M{"topic": "orders/exploded"}}, 422), "topic")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"webhook": M{"address": "", "format": ""}}, 422), "address", "format")
	s.wantFields(s.do(demoToken, "PUT", s.one(s.id3), M{"webhook": M{"fields": "id"}}, 422), "fields")
	s.do(demoToken, "PUT", s.one(999999999), M{"webhook": M{"topic": "orders/paid"}}, 404)
	s.do(demoToken, "PUT", s.one(s.other), M{"webhook": M{"topic": "orders/paid"}}, 404)
	s.do(roToken, "PUT", s.one(s.other), M{"webhook": M{"topic": "orders/paid"}}, 403)
	s.do(demoToken, "PUT", s.one(s.id3), M{"topic": "orders/paid"}, 400)
	s.do(demoToken, "PUT", s.one(s.id3), "not json", 400)
	s.do(demoToken, "PUT", s.one(s.id3), tooLarge, 413)
	s.do(noToken, "PUT", s.one(s.id3), M{"webhook": M{"topic": "orders/paid"}}, 401)
	s.wantCount(s.do(demoToken, "GET", webhookCount+"?topic=orders/paid", nil, 200), 2)
}

// Delete: the topic and address of a deleted webhook are free again.
func (s *webhooksRun) deleteHooks() {
	s.do(noToken, "DELETE", s.one(s.id1), nil, 401)
	s.do(roToken, "DELETE", s.one(s.id1), nil, 404) // another app's webhook: no scope, so never 403
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 200)
	s.do(demoToken, "DELETE", s.one(s.id1), nil, 404)
	s.do(demoToken, "GET", s.one(s.id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", webhookCount+"?topic=orders/create", nil, 200), 0)
	// The topic and address of a deleted webhook are free again.
	s.do(demoToken, "POST", webhookList, M{"webhook": M{"topic": "orders/create", "address": hookAddr1 + "/v2"}}, 201)
}

// deliveries runs the delivery log and redeliver operations on a webhook
// whose deliveries go through the real pipeline (notify, fan-out, queue,
// dispatcher) to a local receiver. other is another app's webhook.
func (s *scenario) deliveries(t *testing.T, other int64) {
	ctx := context.Background()
	d := s.env.Deps
	redeliver := func(id int64, deliveryID string) string {
		return fmt.Sprintf("/admin/webhooks/%d/deliveries/%s/redeliver.json", id, deliveryID)
	}
	var failing atomic.Bool
	failing.Store(true)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer receiver.Close()
	hook := s.id(s.do(demoToken, "POST", "/admin/webhooks.json", M{"webhook": M{"topic": "products/create", "address": receiver.URL + "/hooks"}}, 201), "webhook")
	s.wantLen(s.do(demoToken, "GET", deliveriesOf(hook), nil, 200), "deliveries", 0)

	// A long base delay keeps a retried message out of this test's receives.
	dispatcher := api.Dispatcher(d, config.Config{RetryBase: time.Hour})
	ops, err := outbox.Notify(ctx, d.Store, d.IDs, d.Clock, "products/create", "product", M{"id": 632910392, "title": "IPod Nano - 8GB"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Store.Transact(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	nid, _ := records.ParseIDSK(ops[0].Item.SK)
	if err := delivery.FanOut(ctx, d.Store, d.Queue, nid); err != nil {
		t.Fatal(err)
	}
	msgs := s.receiveAll()
	if len(msgs) != 1 {
		t.Fatalf("fan-out queued %d messages, want 1", len(msgs))
	}
	var m delivery.Message
	if err := json.Unmarshal(msgs[0].Body, &m); err != nil || m.WebhookID != hook {
		t.Fatalf("queued %s (%v), want a delivery to webhook %d", msgs[0].Body, err, hook)
	}
	// First attempt: the receiver fails, a retry is scheduled.
	if !delivery.Handle(ctx, d.Queue, dispatcher, msgs[0]) {
		t.Error("a failed first attempt was not retried")
	}
	// Last attempt: it fails again and the delivery is dead-lettered.
	if out, err := dispatcher.Deliver(ctx, nil, queue.Message{ID: msgs[0].ID, Body: msgs[0].Body, Attempt: delivery.MaxAttempts}); err != nil || out.Retry {
		t.Fatalf("last attempt: %+v, %v; want it dead-lettered", out, err)
	}
	if res := s.do(demoToken, "GET", deliveriesOf(hook), nil, 200); res.Status == 200 {
		items := res.List(t, "deliveries")
		if len(items) != 2 || items[0].(map[string]any)["dead_lettered"] != true || items[1].(map[string]any)["response_status"] != float64(503) {
			t.Errorf("log after the dead letter: %s", res.Body)
		}
	}

	// redeliver: queued again once, as a first attempt, which succeeds
	s.do(noToken, "POST", redeliver(hook, m.DeliveryID), nil, 401)
	s.do(demoToken, "POST", redeliver(other, m.DeliveryID), nil, 404)
	s.do(demoToken, "POST", redeliver(999999999, m.DeliveryID), nil, 404)
	s.do(demoToken, "POST", redeliver(hook, strings.Repeat("0", 32)), nil, 404)
	s.do(demoToken, "POST", redeliver(hook, m.DeliveryID), nil, 200)
	s.do(demoToken, "POST", redeliver(hook, m.DeliveryID), nil, 404)
	failing.Store(false)
	dead := msgs[0].Body
	msgs = s.receiveAll()
	if len(msgs) != 1 || msgs[0].Attempt != 1 || !bytes.Equal(msgs[0].Body, dead) {
		t.Fatalf("redeliver queued %d messages, want the dead-lettered one as a first attempt", len(msgs))
	}
	if delivery.Handle(ctx, d.Queue, dispatcher, msgs[0]) {
		t.Error("a successful redelivery was retried")
	}

	s.deliveryLog(hook, other, m.DeliveryID)

	s.do(demoToken, "DELETE", fmt.Sprintf("/admin/webhooks/%d.json", hook), nil, 200)
	s.do(demoToken, "GET", deliveriesOf(hook), nil, 404)
}

// deliveriesOf is the path of a webhook's delivery log.
func deliveriesOf(id int64) string { return fmt.Sprintf("/admin/webhooks/%d/deliveries.json", id) }

// receiveAll receives what the delivery queue holds.
func (s *scenario) receiveAll() []queue.Message {
	s.t.Helper()
	msgs, err := s.env.Deps.Queue.Receive(context.Background(), queue.MaxReceive, 0)
	if err != nil {
		s.t.Fatal(err)
	}
	return msgs
}

// deliveryLog checks hook's log after a dead-lettered delivery and its
// successful redelivery (three attempts); other is another app's webhook.
func (s *scenario) deliveryLog(hook, other int64, deliveryID string) {
	t := s.t
	// Newest first, ascending from since_id.
	res := s.do(demoToken, "GET", deliveriesOf(hook), nil, 200)
	s.wantLen(res, "deliveries", 3)
	if res.Status == 200 {
		if a := res.List(t, "deliveries")[0].(map[string]any); a["response_status"] != float64(200) || a["error"] != nil ||
			a["attempt"] != float64(1) || a["delivery_id"] != deliveryID || a["topic"] != "products/create" {
			t.Errorf("newest attempt: %v", a)
		}
	}
	oldest := int64(0)
	if res.Status == 200 {
		oldest = int64(res.List(t, "deliveries")[2].(map[string]any)["id"].(float64))
	}
	s.wantLen(s.do(demoToken, "GET", deliveriesOf(hook)+"?since_id="+strconv.FormatInt(oldest, 10), nil, 200), "deliveries", 2)
	s.wantLen(s.do(demoToken, "GET", deliveriesOf(hook)+"?limit=2&page=2", nil, 200), "deliveries", 1)
	s.wantLen(s.do(demoToken, "GET", deliveriesOf(hook)+"?fields=id,attempt,response_status,dead_lettered", nil, 200), "deliveries", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=x"} {
		s.do(demoToken, "GET", deliveriesOf(hook)+"?"+q, nil, 400)
	}
	s.do(demoToken, "GET", deliveriesOf(other), nil, 404)
	s.do(demoToken, "GET", deliveriesOf(999999999), nil, 404)
	s.do(demoToken, "GET", "/admin/webhooks/abc/deliveries.json", nil, 404)
	s.do(noToken, "GET", deliveriesOf(hook), nil, 401)
}

// uninstall removes an app installed for it: its app/uninstalled webhook is
// notified and its token stops working.
func (s *scenario) uninstall(t *testing.T) {
	ctx := context.Background()
	const uninstall = "/admin/api_permissions/current.json"
	leaving := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"apps": [{"id": 1004, "name": "Leaving App", "access_token": "` + leavingToken + `", "shared_secret": "leaving-secret", "scopes": ["write_script_tags"]}]}`
	if _, _, err := seed.Load(ctx, s.env.Deps.Store, s.env.Deps.Clock, []byte(leaving)); err != nil {
		t.Fatal(err)
	}
	hook := s.id(s.do(leavingToken, "POST", "/admin/webhooks.json", M{"webhook": M{"topic": "app/uninstalled", "address": "https://leaving.example.com/uninstalled"}}, 201), "webhook")
	s.do(leavingToken, "POST", "/web/script_tags.json", M{"script_tag": M{"event": "onload", "src": "https://leaving.example.com/app.js"}}, 201)
	demoHooks := s.do(demoToken, "GET", "/admin/webhooks/count.json", nil, 200)

	s.do(noToken, "DELETE", uninstall, nil, 401)
	s.do(badToken, "DELETE", uninstall, nil, 401)
	s.do(leavingToken, "DELETE", uninstall, nil, 200)
	s.do(leavingToken, "DELETE", uninstall, nil, 401)
	s.do(leavingToken, "GET", "/admin/webhooks.json", nil, 401)
	// Other apps keep theirs.
	s.wantCount(s.do(demoToken, "GET", "/admin/webhooks/count.json", nil, 200), int(demoHooks.JSON(t)["count"].(float64)))

	// The uninstall committed the app/uninstalled notification with the
	// webhook's snapshot; its fan-out queues the delivery, though the
	// webhook is gone.
	markers, _, err := s.env.Deps.Store.Query(ctx, store.Query{PK: outbox.Partition})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range markers {
		nid, _ := records.ParseIDSK(it.SK)
		if err := delivery.FanOut(ctx, s.env.Deps.Store, s.env.Deps.Queue, nid); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := s.env.Deps.Queue.Receive(ctx, queue.MaxReceive, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(msgs, func(qm queue.Message) bool {
		var m delivery.Message
		return json.Unmarshal(qm.Body, &m) == nil && m.WebhookID == hook && m.Snapshot != nil
	}) {
		t.Errorf("no app/uninstalled delivery to webhook %d queued among %d messages", hook, len(msgs))
	}
}
