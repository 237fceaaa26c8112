package transactions_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/transactions"
)

var group = api.Group{Name: "transactions", Routes: transactions.Routes}

// The demo seed's order and its authorization of 409.94 USD (bogus).
const (
	order    = 450789469
	seedAuth = 389404469
)

var listPath = fmt.Sprintf("/com/orders/%d/transactions.json", order)

func create(e *apitest.Env, fields map[string]any) *apitest.Response {
	return e.Do("POST", listPath, map[string]any{"transaction": fields})
}

func created(t *testing.T, e *apitest.Env, fields map[string]any) map[string]any {
	t.Helper()
	return create(e, fields).Expect(t, 201).Object(t, "transaction")
}

func body(t *testing.T, res *apitest.Response, status int, want string) {
	t.Helper()
	res.Expect(t, status)
	if got := strings.TrimSpace(string(res.Body)); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
}

// financialStatus reads the order's financial_status from the store (orders have no endpoints).
func financialStatus(t *testing.T, e *apitest.Env) string {
	t.Helper()
	var o struct {
		FinancialStatus string `json:"financial_status"`
	}
	if _, err := records.Get(t.Context(), e.Deps.Store, store.Key{PK: parents.OrderPartition, SK: records.IDSK(order)}, &o); err != nil {
		t.Fatal(err)
	}
	return o.FinancialStatus
}

func orderEvents(t *testing.T, e *apitest.Env) []events.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Order, order)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := records.DecodeAll[events.Event](items)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func notifications(t *testing.T, e *apitest.Env) []outbox.Notification {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: "notification"})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := records.DecodeAll[outbox.Notification](items)
	if err != nil {
		t.Fatal(err)
	}
	return ns
}

func TestReadSeeded(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		list := e.Do("GET", listPath, nil).Expect(t, 200).List(t, "transactions")
		if len(list) != 1 {
			t.Fatalf("%d transactions, want the seeded one", len(list))
		}
		want := `{"transaction":{"id":389404469,"order_id":450789469,"parent_id":null,"kind":"authorization","amount":"409.94",` +
			`"currency":"USD","status":"success","gateway":"bogus","authorization":"authorization-key","message":null,"test":false,` +
			`"source_name":"web","device_id":null,"user_id":null,"location_id":null,"receipt":{},"error_code":null,` +
			`"created_at":"2024-03-13T16:09:54-04:00"}}`
		body(t, e.Do("GET", fmt.Sprintf("/com/orders/%d/transactions/%d.json", order, seedAuth), nil), 200, want)
		body(t, e.Do("GET", fmt.Sprintf("/com/orders/%d/transactions/%d.json?fields=id,amount", order, seedAuth), nil), 200,
			`{"transaction":{"id":389404469,"amount":"409.94"}}`)
		body(t, e.Do("GET", fmt.Sprintf("/com/orders/%d/transactions/count.json", order), nil), 200, `{"count":1}`)
		for _, p := range []string{
			"/com/orders/1/transactions.json", "/com/orders/1/transactions/count.json",
			fmt.Sprintf("/com/orders/1/transactions/%d.json", seedAuth), // another order's id
			fmt.Sprintf("/com/orders/%d/transactions/1.json", order),
			fmt.Sprintf("/com/orders/%d/transactions/abc.json", order),
		} {
			body(t, e.Do("GET", p, nil), 404, `{"errors":"Not Found"}`)
		}
		body(t, e.Do("POST", "/com/orders/1/transactions.json", map[string]any{"transaction": map[string]any{"kind": "sale", "amount": 1}}), 404, `{"errors":"Not Found"}`)
		// Scopes: read_orders to read, write_orders to create.
		body(t, e.DoAs(apitest.ReadOnlyToken, "GET", listPath, nil), 403, `{"errors":"[API] This action requires merchant approval for read_orders scope."}`)
	}, group)
}

func TestCaptureAndRefund(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c1 := created(t, e, map[string]any{"kind": "capture", "amount": "100", "source_name": "pos", "status": "failure"})
		for k, want := range map[string]any{"kind": "capture", "amount": "100.00", "parent_id": float64(seedAuth), "currency": "USD",
			"status": "success", "gateway": "bogus", "source_name": "api", "order_id": float64(order), "authorization": "authorization-key", "test": false} {
			if c1[k] != want {
				t.Errorf("%s = %v, want %v", k, c1[k], want)
			}
		}
		if got := financialStatus(t, e); got != "partially_paid" {
			t.Errorf("financial_status %q after a part capture", got)
		}
		// Every accepted value reads back.
		got := e.Do("GET", fmt.Sprintf("/com/orders/%d/transactions/%v.json", order, int64(c1["id"].(float64))), nil).Expect(t, 200).Object(t, "transaction")
		if a, b := fmt.Sprint(got), fmt.Sprint(c1); a != b {
			t.Errorf("read back %s, created %s", a, b)
		}
		body(t, create(e, map[string]any{"kind": "capture", "amount": 309.95}), 422,
			`{"errors":{"amount":["must be less than or equal to the uncaptured amount of 309.94"]}}`)
		c2 := created(t, e, map[string]any{"kind": "capture", "parent_id": seedAuth}) // the rest
		if c2["amount"] != "309.94" {
			t.Errorf("capture without amount took %v", c2["amount"])
		}
		if got := financialStatus(t, e); got != "paid" {
			t.Errorf("financial_status %q after the full capture", got)
		}
		body(t, create(e, map[string]any{"kind": "capture"}), 422,
			`{"errors":{"kind":["capture needs an authorization with an uncaptured amount: this order has none"]}}`)
		body(t, create(e, map[string]any{"kind": "capture", "parent_id": seedAuth}), 422, `{"errors":{"parent_id":["has been captured in full"]}}`)
		body(t, create(e, map[string]any{"kind": "void"}), 422,
			`{"errors":{"kind":["void needs an authorization with nothing captured: this order has none"]}}`)
		body(t, create(e, map[string]any{"kind": "void", "parent_id": seedAuth}), 422,
			`{"errors":{"parent_id":["cannot be voided: 409.94 of it has been captured"]}}`)

		r1 := created(t, e, map[string]any{"kind": "refund", "amount": 50.5})
		if r1["amount"] != "50.50" || r1["parent_id"] != c2["id"] {
			t.Errorf("refund %v", r1)
		}
		if got := financialStatus(t, e); got != "partially_refunded" {
			t.Errorf("financial_status %q after a part refund", got)
		}
		body(t, create(e, map[string]any{"kind": "refund", "amount": "359.45"}), 422,
			`{"errors":{"amount":["must be less than or equal to the refundable amount of 359.44 (captured minus refunded)"]}}`)
		body(t, create(e, map[string]any{"kind": "refund", "parent_id": seedAuth}), 422,
			`{"errors":{"parent_id":["must be a successful capture or sale of this order"]}}`)
		// Without amount: what is left of the parent (100.00 of c1), then of
		// the latest capture with something left (259.44 of c2).
		r2 := created(t, e, map[string]any{"kind": "refund", "parent_id": c1["id"]})
		if r2["amount"] != "100.00" || r2["parent_id"] != c1["id"] {
			t.Errorf("refund of the rest of c1 %v", r2)
		}
		r3 := created(t, e, map[string]any{"kind": "refund"})
		if r3["amount"] != "259.44" || r3["parent_id"] != c2["id"] {
			t.Errorf("refund of the rest %v", r3)
		}
		if got := financialStatus(t, e); got != "refunded" {
			t.Errorf("financial_status %q after the full refund", got)
		}
		body(t, create(e, map[string]any{"kind": "refund", "amount": 1}), 422,
			`{"errors":{"kind":["refund needs a captured amount: everything captured on this order (409.94) has been refunded"]}}`)

		captureAndRefundList(t, e, c1, c2)

		captureAndRefundEventsAndNotifications(t, e, c1)
	}, group)
}

// captureAndRefundList: the order's six transactions listed, counted and paged.
func captureAndRefundList(t *testing.T, e *apitest.Env, c1, c2 map[string]any) {
	t.Helper()
	list := e.Do("GET", listPath, nil).Expect(t, 200).List(t, "transactions")
	var kinds []string
	for _, x := range list {
		kinds = append(kinds, x.(map[string]any)["kind"].(string))
	}
	if want := []string{"authorization", "capture", "capture", "refund", "refund", "refund"}; !slices.Equal(kinds, want) {
		t.Errorf("list kinds %v, want %v", kinds, want)
	}
	body(t, e.Do("GET", fmt.Sprintf("/com/orders/%d/transactions/count.json", order), nil), 200, `{"count":6}`)
	since := e.Do("GET", fmt.Sprintf("%s?since_id=%v&limit=1&fields=id", listPath, int64(c1["id"].(float64))), nil).Expect(t, 200).List(t, "transactions")
	if len(since) != 1 || since[0].(map[string]any)["id"] != c2["id"] || len(since[0].(map[string]any)) != 1 {
		t.Errorf("since_id page %v", since)
	}
}

// captureAndRefundEventsAndNotifications: the order's events and the notifications of TestCaptureAndRefund's five transactions.
func captureAndRefundEventsAndNotifications(t *testing.T, e *apitest.Env, c1 map[string]any) {
	t.Helper()
	var verbs []string
	for _, ev := range orderEvents(t, e) {
		verbs = append(verbs, ev.Verb)
		if ev.SubjectType != events.Order || ev.Author != "Demo App" || !strings.Contains(ev.Message, `<a href="/admin/orders/450789469">#1001</a>`) {
			t.Errorf("event %+v", ev)
		}
	}
	if want := []string{"capture_success", "capture_success", "refund_success", "refund_success", "refund_success"}; !slices.Equal(verbs, want) {
		t.Errorf("event verbs %v, want %v", verbs, want)
	}
	if evs := orderEvents(t, e); evs[0].Message != `A capture of 100.00 USD succeeded on <a href="/admin/orders/450789469">#1001</a>.` {
		t.Errorf("message %q", evs[0].Message)
	}
	ns := notifications(t, e)
	if len(ns) != 5 {
		t.Fatalf("%d notifications, want 5", len(ns))
	}
	var payload map[string]any
	if err := json.Unmarshal(ns[0].Payload, &payload); err != nil {
		t.Fatal(err)
	}
	if ns[0].Topic != transactions.Topic || ns[0].Resource != "transaction" || fmt.Sprint(payload) != fmt.Sprint(c1) {
		t.Errorf("notification %s %s %s, want the capture %v", ns[0].Topic, ns[0].Resource, ns[0].Payload, c1)
	}
}

func TestVoidSaleAndAuthorizations(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		body(t, create(e, map[string]any{"kind": "void", "amount": 1}), 422, `{"errors":{"amount":["must be equal to the authorized amount of 409.94"]}}`)
		v := created(t, e, map[string]any{"kind": "void"})
		if v["parent_id"] != float64(seedAuth) || v["amount"] != "409.94" {
			t.Errorf("void %v", v)
		}
		if got := financialStatus(t, e); got != "voided" {
			t.Errorf("financial_status %q after the void", got)
		}
		body(t, create(e, map[string]any{"kind": "capture", "parent_id": seedAuth}), 422, `{"errors":{"parent_id":["is a voided authorization"]}}`)
		body(t, create(e, map[string]any{"kind": "void", "parent_id": seedAuth}), 422, `{"errors":{"parent_id":["has already been voided"]}}`)
		body(t, create(e, map[string]any{"kind": "authorization"}), 422, `{"errors":{"amount":["can't be blank"]}}`)
		a1 := created(t, e, map[string]any{"kind": "authorization", "amount": "200", "test": true})
		a2 := created(t, e, map[string]any{"kind": "authorization", "amount": "209.94", "gateway": "BOGUS"})
		if a1["test"] != true || a2["gateway"] != "bogus" || a1["parent_id"] != nil {
			t.Errorf("authorizations %v %v", a1, a2)
		}
		if got := financialStatus(t, e); got != "authorized" {
			t.Errorf("financial_status %q after new authorizations", got)
		}
		body(t, create(e, map[string]any{"kind": "capture"}), 422,
			fmt.Sprintf(`{"errors":{"parent_id":["can't be blank: this order has more than one authorization to capture (%v, %v)"]}}`, int64(a1["id"].(float64)), int64(a2["id"].(float64))))
		c := created(t, e, map[string]any{"kind": "capture", "parent_id": a1["id"]})
		if c["amount"] != "200.00" || c["test"] != true {
			t.Errorf("capture %v", c)
		}
		s := created(t, e, map[string]any{"kind": "sale", "amount": "209.94"})
		if s["parent_id"] != nil || s["amount"] != "209.94" {
			t.Errorf("sale %v", s)
		}
		if got := financialStatus(t, e); got != "paid" { // 409.94 of 409.94 captured
			t.Errorf("financial_status %q after capture and sale", got)
		}
		var verbs []string
		for _, ev := range orderEvents(t, e) {
			verbs = append(verbs, ev.Verb)
		}
		if want := []string{"void_success", "authorization_success", "authorization_success", "capture_success", "sale_success"}; !slices.Equal(verbs, want) {
			t.Errorf("event verbs %v, want %v", verbs, want)
		}
	}, group)
}

func TestBadInput(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, c := range []struct {
			body string
			want string
		}{
			{`{"transaction":{"amount":"10"}}`, `{"errors":{"kind":["can't be blank"]}}`},
			{`{"transaction":{"kind":"steal","amount":"10"}}`, `{"errors":{"kind":["is not included in the list (authorization, capture, sale, void, refund)"]}}`},
			{`{"transaction":{"kind":7}}`, `{"errors":{"kind":["must be a string"]}}`},
			{`{"transaction":{"kind":"sale","amount":"abc"}}`, `{"errors":{"amount":["must be a number"]}}`},
			{`{"transaction":{"kind":"sale","amount":true}}`, `{"errors":{"amount":["must be a number"]}}`},
			{`{"transaction":{"kind":"sale","amount":{}}}`, `{"errors":{"amount":["must be a number"]}}`},
			{`{"transaction":{"kind":"sale","amount":"1e999999"}}`, `{"errors":{"amount":["must be a number"]}}`},
			{`{"transaction":{"kind":"sale","amount":1.005}}`, `{"errors":{"amount":["must have at most 2 decimal places"]}}`},
			{`{"transaction":{"kind":"sale","amount":"0.001"}}`, `{"errors":{"amount":["must have at most 2 decimal places"]}}`},
			{`{"transaction":{"kind":"sale","amount":0}}`, `{"errors":{"amount":["must be greater than 0"]}}`},
			{`{"transaction":{"kind":"sale","amount":"-5"}}`, `{"errors":{"amount":["must be greater than 0"]}}`},
			{`{"transaction":{"kind":"sale","amount":"10000000000000.01"}}`, `{"errors":{"amount":["must be less than or equal to 10000000000000.00"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","parent_id":"x"}}`, `{"errors":{"parent_id":["must be an integer"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","parent_id":0}}`, `{"errors":{"parent_id":["must be greater than 0"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","parent_id":99999999999999999}}`, `{"errors":{"parent_id":["must be less than or equal to 9007199254740991"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","parent_id":389404469}}`, `{"errors":{"parent_id":["must be blank for a sale"]}}`},
			{`{"transaction":{"kind":"capture","parent_id":12345}}`, `{"errors":{"parent_id":["must be a successful authorization of this order"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","currency":"EUR"}}`, `{"errors":{"currency":["must be the order's currency (USD)"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","gateway":"stripe"}}`, `{"errors":{"gateway":["is not included in the list (bogus)"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","gateway":" "}}`, `{"errors":{"gateway":["can't be blank"]}}`},
			{`{"transaction":{"kind":"sale","amount":"5","test":"yes"}}`, `{"errors":{"test":["must be a boolean"]}}`},
			{`{"transaction":{"kind":"refund"}}`, `{"errors":{"kind":["refund needs a captured amount: nothing has been captured on this order"]}}`},
			{`{"transaction":"sale"}`, `{"errors":{"transaction":"Required parameter missing or invalid"}}`},
		} {
			res := e.Do("POST", listPath, c.body)
			if res.Status != 422 && res.Status != 400 {
				t.Errorf("%s: status %d: %s", c.body, res.Status, res.Body)
				continue
			}
			if got := strings.TrimSpace(string(res.Body)); got != c.want {
				t.Errorf("%s: %s, want %s", c.body, got, c.want)
			}
		}
		// Accepted forms: a string, a number, an integral exponent; null fields are absent.
		s := created(t, e, map[string]any{"kind": "sale", "amount": json.Number("1.5e1"), "currency": "usd", "gateway": nil, "parent_id": nil})
		if s["amount"] != "15.00" || s["currency"] != "USD" {
			t.Errorf("sale %v", s)
		}
		body(t, e.Do("GET", fmt.Sprintf("/com/orders/%d/transactions/count.json", order), nil), 200, `{"count":2}`)
	}, group)
}

// Twelve captures at once never take more than the authorization, and
// twelve refunds at once never return more than was captured (nor more
// than a capture each): creates of one order take turns on its ledger.
func TestConcurrentCapturesAndRefunds(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		race := func(fields map[string]any) (ok, refused int) {
			var wg sync.WaitGroup
			statuses := make([]*apitest.Response, 12)
			for i := range statuses {
				wg.Add(1)
				go func() {
					defer wg.Done()
					statuses[i] = create(e, fields)
				}()
			}
			wg.Wait()
			for _, res := range statuses {
				switch res.Status {
				case 201:
					ok++
				case 422:
					refused++
				default:
					t.Errorf("status %d: %s", res.Status, res.Body)
				}
			}
			return ok, refused
		}
		// 409.94 authorized: eight captures of 50 fit, the other four do not.
		if ok, refused := race(map[string]any{"kind": "capture", "amount": "50"}); ok != 8 || refused != 4 {
			t.Fatalf("captures: %d made, %d refused; want 8 and 4", ok, refused)
		}
		// 400 captured: eight refunds of 50 fit, the other four do not.
		if ok, refused := race(map[string]any{"kind": "refund", "amount": "50"}); ok != 8 || refused != 4 {
			t.Fatalf("refunds: %d made, %d refused; want 8 and 4", ok, refused)
		}
		var captured, refunded admin.Money
		for _, x := range e.Do("GET", listPath+"?limit=250", nil).Expect(t, 200).List(t, "transactions") {
			tx := x.(map[string]any)
			m, err := admin.ParseAmount(tx["amount"].(string))
			if err != nil {
				t.Fatal(err)
			}
			switch tx["kind"] {
			case "capture":
				captured += m
			case "refund":
				refunded += m
			}
		}
		if captured != 40000 || refunded != 40000 {
			t.Errorf("captured %s, refunded %s; want 400.00 each", captured, refunded)
		}
		if got := financialStatus(t, e); got != "refunded" {
			t.Errorf("financial_status %q", got)
		}
		body(t, e.Do("GET", fmt.Sprintf("/com/orders/%d/transactions/count.json", order), nil), 200, `{"count":17}`)
		if n := len(orderEvents(t, e)); n != 16 {
			t.Errorf("%d events, want 16", n)
		}
	}, group)
}

// A refund is bounded by its parent: the parent's amount less what was
// refunded from it (issue 25, finding 4). One without parent_id goes to the
// latest capture or sale that can hold it.
func TestRefundBoundedByParent(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c1 := created(t, e, map[string]any{"kind": "capture", "amount": "10"})
		c2 := created(t, e, map[string]any{"kind": "capture", "amount": "300"})
		body(t, create(e, map[string]any{"kind": "refund", "amount": "50", "parent_id": c1["id"]}), 422,
			`{"errors":{"amount":["must be less than or equal to the refundable amount of 10.00 of its parent (its amount minus what was refunded from it)"]}}`)
		created(t, e, map[string]any{"kind": "refund", "amount": "4", "parent_id": c1["id"]})
		body(t, create(e, map[string]any{"kind": "refund", "amount": "7", "parent_id": c1["id"]}), 422,
			`{"errors":{"amount":["must be less than or equal to the refundable amount of 6.00 of its parent (its amount minus what was refunded from it)"]}}`)
		if r := created(t, e, map[string]any{"kind": "refund", "parent_id": c1["id"]}); r["amount"] != "6.00" {
			t.Errorf("refund of the rest of its parent %v", r)
		}
		body(t, create(e, map[string]any{"kind": "refund", "amount": "1", "parent_id": c1["id"]}), 422,
			`{"errors":{"parent_id":["has been refunded in full"]}}`)

		if r := created(t, e, map[string]any{"kind": "refund", "amount": "250"}); r["parent_id"] != c2["id"] {
			t.Errorf("refund without parent went to %v, want c2 %v", r["parent_id"], c2["id"])
		}
		s := created(t, e, map[string]any{"kind": "sale", "amount": "30"})
		// Left: c1 0, c2 50, the sale 30; 80 on the order, at most 50 on one parent.
		body(t, create(e, map[string]any{"kind": "refund", "amount": "60"}), 422,
			`{"errors":{"amount":["must be less than or equal to 50.00, the most any one capture or sale of this order has left to refund"]}}`)
		body(t, create(e, map[string]any{"kind": "refund", "amount": "81", "parent_id": c2["id"]}), 422,
			`{"errors":{"amount":["must be less than or equal to the refundable amount of 80.00 (captured minus refunded)"]}}`)
		if r := created(t, e, map[string]any{"kind": "refund", "amount": "40"}); r["parent_id"] != c2["id"] {
			t.Errorf("refund of 40 went to %v, want c2 (the sale has 30 left)", r["parent_id"])
		}
		if r := created(t, e, map[string]any{"kind": "refund"}); r["parent_id"] != s["id"] || r["amount"] != "30.00" {
			t.Errorf("refund without amount %v, want the sale's 30.00", r)
		}

		// A ledger written before settle lines is rebuilt from the order's
		// transactions: the bound still holds for it.
		k := store.Key{PK: "ordermoney", SK: records.IDSK(order)}
		it, err := e.Deps.Store.Get(t.Context(), k)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]json.RawMessage
		if err := records.Decode(&it, &raw); err != nil {
			t.Fatal(err)
		}
		delete(raw, "format")
		delete(raw, "settled")
		old := it
		old.Data, old.Version = records.Encode(raw), it.Version+1
		if err := records.Transact(t.Context(), e.Deps.Store, store.Put(old, store.IfVersion, it.Version)); err != nil {
			t.Fatal(err)
		}
		body(t, create(e, map[string]any{"kind": "refund", "amount": "5", "parent_id": c1["id"]}), 422,
			`{"errors":{"parent_id":["has been refunded in full"]}}`)
		if r := created(t, e, map[string]any{"kind": "refund"}); r["parent_id"] != c2["id"] || r["amount"] != "10.00" {
			t.Errorf("refund after the rebuild %v", r)
		}
	}, group)
}

// Twelve refunds of 10 at once against one capture of 100 (the order has
// more captured) never return more than the capture: ten are made.
func TestConcurrentRefundsOfOneParent(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c := created(t, e, map[string]any{"kind": "capture", "amount": "100"})
		created(t, e, map[string]any{"kind": "capture", "amount": "200"})
		var wg sync.WaitGroup
		res := make([]*apitest.Response, 12)
		for i := range res {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res[i] = create(e, map[string]any{"kind": "refund", "amount": "10", "parent_id": c["id"]})
			}()
		}
		wg.Wait()
		ok := 0
		for _, r := range res {
			switch r.Status {
			case 201:
				ok++
			case 422:
				if !strings.Contains(string(r.Body), `"amount"`) && !strings.Contains(string(r.Body), `"parent_id":["has been refunded in full"]`) {
					t.Errorf("refused with %s", r.Body)
				}
			default:
				t.Errorf("status %d: %s", r.Status, r.Body)
			}
		}
		var refunded admin.Money
		for _, x := range e.Do("GET", listPath+"?limit=250", nil).Expect(t, 200).List(t, "transactions") {
			tx := x.(map[string]any)
			if tx["kind"] == "refund" && tx["parent_id"] == c["id"] {
				m, err := admin.ParseAmount(tx["amount"].(string))
				if err != nil {
					t.Fatal(err)
				}
				refunded += m
			}
		}
		if ok != 10 || refunded != 10000 {
			t.Errorf("%d refunds made, %s refunded from the capture; want 10 and 100.00", ok, refunded)
		}
	}, group)
}
