package transactions

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
)

// ledger is what the money rules read of an order: its successful
// authorizations, captures and sales, and the captured and refunded
// totals, in exact cents.
type ledger struct {
	// Format is ledgerFormat for a ledger that holds Settled; one written
	// before held only totals and is rebuilt from the order's transactions.
	Format   int          `json:"format,omitempty"`
	Auths    []authLine   `json:"auths"`
	Settled  []settleLine `json:"settled,omitempty"`
	Captured admin.Money  `json:"captured"`
	Refunded admin.Money  `json:"refunded"`
	// Sold is the part of Captured that sales took.
	Sold admin.Money `json:"sold"`
	// Gateways are those of the order's seeded transactions; Gateway is the
	// first of them, the default of a create without parent.
	Gateways []string `json:"gateways,omitempty"`
}

// authLine is one successful authorization.
type authLine struct {
	ID            int64       `json:"id"`
	Amount        admin.Money `json:"amount"`
	Captured      admin.Money `json:"captured"`
	Voided        bool        `json:"voided,omitempty"`
	Gateway       string      `json:"gateway,omitempty"`
	Authorization *string     `json:"authorization,omitempty"`
	Test          bool        `json:"test,omitempty"`
}

// settleLine is one successful capture or sale, in id order, and what was
// refunded from it: the bound of the refunds that name it as parent.
type settleLine struct {
	ID       int64       `json:"id"`
	Amount   admin.Money `json:"amount"`
	Refunded admin.Money `json:"refunded,omitempty"`
}

// ledgerFormat is the Format of a ledger with settle lines.
const ledgerFormat = 1

func (s *settleLine) left() admin.Money { return s.Amount - s.Refunded }

func (a *authLine) uncaptured() admin.Money { return a.Amount - a.Captured }

// open: capturable.
func (a *authLine) open() bool { return !a.Voided && a.uncaptured() > 0 }

// voidable: nothing captured, not voided.
func (a *authLine) voidable() bool { return !a.Voided && a.Captured == 0 }

func (l *ledger) auth(id int64) *authLine {
	for i := range l.Auths {
		if l.Auths[i].ID == id {
			return &l.Auths[i]
		}
	}
	return nil
}

// refundable is what has been captured and not refunded.
func (l *ledger) refundable() admin.Money { return l.Captured - l.Refunded }

func (l *ledger) settled(id int64) *settleLine {
	for i := range l.Settled {
		if l.Settled[i].ID == id {
			return &l.Settled[i]
		}
	}
	return nil
}

// holding is the parent of a refund of amount that names none: the latest
// capture or sale with at least that much left (with amount 0, anything
// left); nil if none has.
func (l *ledger) holding(amount admin.Money) *settleLine {
	for i := len(l.Settled) - 1; i >= 0; i-- {
		if s := &l.Settled[i]; s.left() > 0 && s.left() >= amount {
			return s
		}
	}
	return nil
}

// mostLeft is the most any one capture or sale has left to refund.
func (l *ledger) mostLeft() admin.Money {
	var m admin.Money
	for i := range l.Settled {
		m = max(m, l.Settled[i].left())
	}
	return m
}

// refund charges a successful refund to its parent's line. A seeded refund
// is unchecked: without a parent that is a line, it goes to the line that
// holds it, else is spread over the lines, latest first.
func (l *ledger) refund(parent *int64, amount admin.Money) {
	s := (*settleLine)(nil)
	if parent != nil {
		s = l.settled(*parent)
	}
	if s == nil {
		s = l.holding(amount)
	}
	if s != nil {
		s.Refunded += amount
		return
	}
	for i := len(l.Settled) - 1; i >= 0 && amount > 0; i-- {
		if take := min(amount, l.Settled[i].left()); take > 0 {
			l.Settled[i].Refunded += take
			amount -= take
		}
	}
}

// apply records a successful transaction in the ledger. Seeded
// transactions go through it too, unchecked: a capture or void without a
// parent settles the first authorization it can.
func (l *ledger) apply(t *Transaction) {
	if t.Status != StatusSuccess {
		return
	}
	if t.Gateway != "" && !slices.Contains(l.Gateways, t.Gateway) && t.SourceName != SourceAPI {
		l.Gateways = append(l.Gateways, t.Gateway)
	}
	parent := func(ok func(*authLine) bool) *authLine {
		if t.ParentID != nil {
			return l.auth(*t.ParentID)
		}
		for i := range l.Auths {
			if ok(&l.Auths[i]) {
				return &l.Auths[i]
			}
		}
		return nil
	}
	switch t.Kind {
	case Authorization:
		l.Auths = append(l.Auths, authLine{ID: t.ID, Amount: t.Amount, Gateway: t.Gateway, Authorization: t.Authorization, Test: t.Test})
	case Capture:
		if a := parent((*authLine).open); a != nil {
			a.Captured += t.Amount
		}
		l.Captured += t.Amount
		l.Settled = append(l.Settled, settleLine{ID: t.ID, Amount: t.Amount})
	case Sale:
		l.Captured += t.Amount
		l.Sold += t.Amount
		l.Settled = append(l.Settled, settleLine{ID: t.ID, Amount: t.Amount})
	case Void:
		if a := parent((*authLine).voidable); a != nil {
			a.Voided = true
		}
	case Refund:
		l.Refunded += t.Amount
		l.refund(t.ParentID, t.Amount)
	}
}

// financialStatus is the order's financial_status once the ledger holds
// its transactions; total is the order's total_price (0 if unknown),
// current its status before.
func (l *ledger) financialStatus(total admin.Money, current string) string {
	if total <= 0 {
		total = l.Sold
		for _, a := range l.Auths {
			if !a.Voided {
				total += a.Amount
			}
		}
	}
	switch {
	case l.Refunded > 0 && l.Refunded >= l.Captured:
		return "refunded"
	case l.Refunded > 0:
		return "partially_refunded"
	case l.Captured > 0 && l.Captured >= total:
		return "paid"
	case l.Captured > 0:
		return "partially_paid"
	}
	voided := false
	for _, a := range l.Auths {
		if !a.Voided {
			return "authorized"
		}
		voided = true
	}
	if voided {
		return "voided"
	}
	return current
}

// decide turns a validated request into the transaction the order's
// ledger allows, or the 422 that says why not. It fills kind, amount,
// parent, gateway, authorization and test.
func (l *ledger) decide(r *request) (Transaction, error) {
	t := Transaction{Kind: r.kind}
	var parent *authLine
	switch r.kind {
	case Authorization, Sale:
		if r.parentID != nil {
			return t, admin.Invalid("parent_id", "must be blank for "+strings.ToLower(noun[r.kind]))
		}
		if r.amount == nil {
			return t, admin.Invalid("amount", admin.MsgBlank)
		}
		if r.kind == Authorization && len(l.Auths) >= MaxAuthorizations {
			return t, admin.Invalid("base", fmt.Sprintf("An order can have at most %d authorizations", MaxAuthorizations))
		}
		if r.kind == Sale && len(l.Settled) >= MaxSettled {
			return t, admin.Invalid("base", msgMaxSettled)
		}
		t.Amount = *r.amount
	case Capture:
		if len(l.Settled) >= MaxSettled {
			return t, admin.Invalid("base", msgMaxSettled)
		}
		var err error
		if parent, err = l.pick(r.parentID, (*authLine).open, "capture", "an authorization with an uncaptured amount"); err != nil {
			return t, err
		}
		switch {
		case parent.Voided:
			return t, admin.Invalid("parent_id", "is a voided authorization")
		case parent.uncaptured() <= 0:
			return t, admin.Invalid("parent_id", "has been captured in full")
		case r.amount == nil:
			t.Amount = parent.uncaptured()
		case *r.amount > parent.uncaptured():
			return t, admin.Invalid("amount", "must be less than or equal to the uncaptured amount of "+parent.uncaptured().String())
		default:
			t.Amount = *r.amount
		}
	case Void:
		var err error
		if parent, err = l.pick(r.parentID, (*authLine).voidable, "void", "an authorization with nothing captured"); err != nil {
			return t, err
		}
		switch {
		case parent.Voided:
			return t, admin.Invalid("parent_id", "has already been voided")
		case parent.Captured > 0:
			return t, admin.Invalid("parent_id", "cannot be voided: "+parent.Captured.String()+" of it has been captured")
		case r.amount != nil && *r.amount != parent.Amount:
			return t, admin.Invalid("amount", "must be equal to the authorized amount of "+parent.Amount.String())
		}
		t.Amount = parent.Amount
	case Refund:
		// Both bounds hold: the order's (captured minus refunded) and the
		// parent's (its amount minus what was refunded from it).
		left := l.refundable()
		var line *settleLine
		if r.parentID != nil {
			if line = l.settled(*r.parentID); line == nil {
				return t, admin.Invalid("parent_id", "must be a successful capture or sale of this order")
			}
		}
		switch {
		case left <= 0 && l.Captured == 0:
			return t, admin.Invalid("kind", "refund needs a captured amount: nothing has been captured on this order")
		case left <= 0:
			return t, admin.Invalid("kind", "refund needs a captured amount: everything captured on this order ("+l.Captured.String()+") has been refunded")
		case line != nil && line.left() <= 0:
			return t, admin.Invalid("parent_id", "has been refunded in full")
		case r.amount != nil && *r.amount > left:
			return t, admin.Invalid("amount", "must be less than or equal to the refundable amount of "+left.String()+" (captured minus refunded)")
		case line != nil && r.amount != nil && *r.amount > line.left():
			return t, admin.Invalid("amount", "must be less than or equal to the refundable amount of "+line.left().String()+" of its parent (its amount minus what was refunded from it)")
		case line == nil && r.amount != nil:
			if line = l.holding(*r.amount); line == nil {
				return t, admin.Invalid("amount", "must be less than or equal to "+l.mostLeft().String()+", the most any one capture or sale of this order has left to refund")
			}
		case line == nil:
			if line = l.holding(0); line == nil { // only with inconsistent seeded refunds
				return t, admin.Invalid("kind", "refund needs a captured amount: everything captured on this order ("+l.Captured.String()+") has been refunded")
			}
		}
		t.Amount = line.left()
		if r.amount != nil {
			t.Amount = *r.amount
		}
		id := line.ID
		t.ParentID = &id
	}
	if parent != nil {
		id := parent.ID
		t.ParentID = &id
		t.Authorization = parent.Authorization
		t.Test = parent.Test
	}
	if err := l.gateway(r, parent, &t); err != nil {
		return t, err
	}
	if r.test != nil {
		t.Test = *r.test
	}
	return t, nil
}

// pick finds the authorization a capture or void acts on: the given one,
// else the order's only one that ok accepts.
func (l *ledger) pick(id *int64, ok func(*authLine) bool, verb, what string) (*authLine, error) {
	if id != nil {
		if a := l.auth(*id); a != nil {
			return a, nil
		}
		return nil, admin.Invalid("parent_id", "must be a successful authorization of this order")
	}
	var found []*authLine
	for i := range l.Auths {
		if ok(&l.Auths[i]) {
			found = append(found, &l.Auths[i])
		}
	}
	switch len(found) {
	case 0:
		return nil, admin.Invalid("kind", verb+" needs "+what+": this order has none")
	case 1:
		return found[0], nil
	}
	ids := make([]string, len(found))
	for i, a := range found {
		ids[i] = idString(a.ID)
	}
	return nil, admin.Invalid("parent_id", "can't be blank: this order has more than one authorization to "+verb+" ("+strings.Join(ids, ", ")+")")
}

// gateway sets t's gateway: the one given, which must be the test gateway
// or one the order's seeded transactions used; else the parent's, else the
// order's first, else the test gateway.
func (l *ledger) gateway(r *request, parent *authLine, t *Transaction) error {
	known := []string{TestGateway}
	for _, g := range l.Gateways {
		if !slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, g) }) {
			known = append(known, g)
		}
	}
	switch {
	case r.gateway != "":
		i := slices.IndexFunc(known, func(g string) bool { return strings.EqualFold(g, r.gateway) })
		if i < 0 {
			return admin.Invalid("gateway", admin.MsgNotInList+" ("+strings.Join(known, ", ")+")")
		}
		t.Gateway = known[i]
	case parent != nil && parent.Gateway != "":
		t.Gateway = parent.Gateway
	case len(l.Gateways) > 0:
		t.Gateway = l.Gateways[0]
	default:
		t.Gateway = TestGateway
	}
	return nil
}
