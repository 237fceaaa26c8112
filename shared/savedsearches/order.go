package savedsearches

import (
	"cmp"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/savedsearches/customerindex"
)

// Order is the order of a search's customers: a field and a direction.
type Order struct {
	Field string
	Desc  bool
}

type entry = customerindex.Entry

// orderFields are the customer fields a search's customers can be ordered
// by; ties go by id, ascending.
var orderFields = map[string]func(a, b *entry) int{
	"id":                func(a, b *entry) int { return cmp.Compare(a.ID, b.ID) },
	"email":             func(a, b *entry) int { return strings.Compare(a.Email, b.Email) },
	"first_name":        func(a, b *entry) int { return strings.Compare(a.FirstName, b.FirstName) },
	"last_name":         func(a, b *entry) int { return strings.Compare(a.LastName, b.LastName) },
	"accepts_marketing": func(a, b *entry) int { return cmp.Compare(b2i(a.AcceptsMarketing), b2i(b.AcceptsMarketing)) },
	"state":             func(a, b *entry) int { return strings.Compare(a.State, b.State) },
	"orders_count":      func(a, b *entry) int { return cmp.Compare(a.OrdersCount, b.OrdersCount) },
	"total_spent":       func(a, b *entry) int { return cmp.Compare(a.SpentCents, b.SpentCents) },
	"created_at":        func(a, b *entry) int { return cmp.Compare(a.CreatedAt, b.CreatedAt) },
	"updated_at":        func(a, b *entry) int { return cmp.Compare(a.UpdatedAt, b.UpdatedAt) },
	"last_order_date":   func(a, b *entry) int { return cmp.Compare(a.LastOrderAt, b.LastOrderAt) },
	"last_order_id":     func(a, b *entry) int { return cmp.Compare(a.LastOrderID, b.LastOrderID) },
	"last_order_name":   func(a, b *entry) int { return strings.Compare(a.LastOrderName, b.LastOrderName) },
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// MsgOrder is the 400 of an order parameter that names no orderable field
// or direction.
const MsgOrder = "must be a field (id, email, first_name, last_name, accepts_marketing, state, orders_count, total_spent, created_at, updated_at, last_order_date, last_order_id, last_order_name) followed by asc or desc"

// ParseOrder reads "<field> [asc|desc]" ("" is id asc); anything else is a
// 400 on order.
func ParseOrder(s string) (Order, error) {
	f := strings.Fields(strings.ToLower(s))
	switch {
	case len(f) == 0:
		return Order{Field: "id"}, nil
	case len(f) > 2 || orderFields[f[0]] == nil:
		return Order{}, admin.BadParam("order", MsgOrder)
	case len(f) == 1 || f[1] == "asc":
		return Order{Field: f[0]}, nil
	case f[1] == "desc":
		return Order{Field: f[0], Desc: true}, nil
	}
	return Order{}, admin.BadParam("order", MsgOrder)
}

// compare orders two entries by o, then by id ascending.
func (o Order) compare(a, b *entry) int {
	c := orderFields[o.Field](a, b)
	if o.Desc {
		c = -c
	}
	if c == 0 {
		c = cmp.Compare(a.ID, b.ID)
	}
	return c
}
