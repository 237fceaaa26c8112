package transactions

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
)

func ptr[T any](v T) *T { return &v }

// Fast tests of the money rules, without a store.
func TestLedgerRules(t *testing.T) {
	var l ledger
	seeded := []Transaction{
		{ID: 1, Kind: Authorization, Amount: 15000, Status: StatusSuccess, Gateway: "shopify_payments"},
		{ID: 2, Kind: Authorization, Amount: 5000, Status: StatusFailure, Gateway: "bogus"}, // failed: not counted
		{ID: 3, Kind: Capture, Amount: 5000, Status: StatusSuccess},                         // no parent: the open authorization
	}
	for i := range seeded {
		l.apply(&seeded[i])
	}
	if len(l.Auths) != 1 || l.Auths[0].Captured != 5000 || l.Captured != 5000 || len(l.Settled) != 1 || l.Settled[0].ID != 3 {
		t.Fatalf("ledger %+v", l)
	}
	if got := l.financialStatus(15000, "authorized"); got != "partially_paid" {
		t.Errorf("status %q", got)
	}
	// The default capture takes the rest; the gateway is the order's.
	tx, err := l.decide(&request{kind: Capture})
	if err != nil || tx.Amount != 10000 || *tx.ParentID != 1 || tx.Gateway != "shopify_payments" {
		t.Fatalf("capture %+v %v", tx, err)
	}
	_, err = l.decide(&request{kind: Capture, amount: ptr(admin.Money(10001))})
	if msg := err.(*admin.Error).Fields["amount"]; len(msg) != 1 || msg[0] != "must be less than or equal to the uncaptured amount of 100.00" {
		t.Errorf("over-capture: %v", err)
	}
	tx.ID, tx.Status = 4, StatusSuccess
	l.apply(&tx)
	if got := l.financialStatus(15000, "partially_paid"); got != "paid" {
		t.Errorf("status %q", got)
	}
	// Without a total_price, paid means everything authorized was captured.
	if got := l.financialStatus(0, ""); got != "paid" {
		t.Errorf("status without total %q", got)
	}
	refund, err := l.decide(&request{kind: Refund, amount: ptr(admin.Money(1))})
	if err != nil || refund.Amount != 1 || *refund.ParentID != tx.ID {
		t.Fatalf("refund %+v %v", refund, err)
	}
	for _, c := range []struct {
		r     request
		field string
	}{
		{request{kind: Void}, "kind"},
		{request{kind: Void, parentID: ptr(int64(1))}, "parent_id"},
		{request{kind: Capture, parentID: ptr(int64(2))}, "parent_id"}, // the failed authorization
		{request{kind: Refund, amount: ptr(admin.Money(15001))}, "amount"},
		{request{kind: Sale, amount: ptr(admin.Money(1)), gateway: "stripe"}, "gateway"},
		{request{kind: Authorization}, "amount"},
	} {
		_, err := l.decide(&c.r)
		if e, ok := err.(*admin.Error); !ok || len(e.Fields[c.field]) != 1 {
			t.Errorf("%+v: %v, want an error on %s", c.r, err, c.field)
		}
	}
}

// An order's captures and sales are bounded: each is a line of its ledger.
func TestLedgerSettledLimit(t *testing.T) {
	l := ledger{Auths: []authLine{{ID: 1, Amount: MaxSettled + 1}}}
	for i := range MaxSettled {
		tx := Transaction{ID: int64(i + 2), Kind: Capture, Amount: 1, Status: StatusSuccess, ParentID: ptr(int64(1))}
		l.apply(&tx)
	}
	for _, r := range []request{{kind: Capture}, {kind: Sale, amount: ptr(admin.Money(1))}} {
		_, err := l.decide(&r)
		if msg := err.(*admin.Error).Fields["base"]; len(msg) != 1 || msg[0] != "An order can have at most 1000 captures and sales" {
			t.Errorf("%s past the limit: %v", r.kind, err)
		}
	}
	// Refunds are not bounded by it.
	if _, err := l.decide(&request{kind: Refund}); err != nil {
		t.Errorf("refund: %v", err)
	}
}
