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
	field int // orderFields[Field], looked up once
}

type entry = customerindex.Entry

// orderFields are the customer fields a search's customers can be ordered
// by, numbered for by's switch (a direct comparison: entries compared stay
// on the stack); ties go by id, ascending.
var orderFields = map[string]int{
	"id": 1, "email": 2, "first_name": 3, "last_name": 4, "accepts_marketing": 5, "state": 6,
	"orders_count": 7, "total_spent": 8, "created_at": 9, "updated_at": 10, "last_order_date": 11,
	"last_order_id": 12, "last_order_name": 13,
}

func by(field int, a, b *entry) int {
	switch field {
	case 2:
		return strings.Compare(a.Email, b.Email)
	case 3:
		return strings.Compare(a.FirstName, b.FirstName)
	case 4:
		return strings.Compare(a.LastName, b.LastName)
	case 5:
		return cmp.Compare(b2i(a.AcceptsMarketing), b2i(b.AcceptsMarketing))
	case 6:
		return strings.Compare(a.State, b.State)
	case 7:
		return cmp.Compare(a.OrdersCount, b.OrdersCount)
	case 8:
		return cmp.Compare(a.SpentCents, b.SpentCents)
	case 9:
		return cmp.Compare(a.CreatedAt, b.CreatedAt)
	case 10:
		return cmp.Compare(a.UpdatedAt, b.UpdatedAt)
	case 11:
		return cmp.Compare(a.LastOrderAt, b.LastOrderAt)
	case 12:
		return cmp.Compare(a.LastOrderID, b.LastOrderID)
	case 13:
		return strings.Compare(a.LastOrderName, b.LastOrderName)
	}
	return cmp.Compare(a.ID, b.ID)
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
		return Order{Field: "id", field: 1}, nil
	case len(f) > 2 || orderFields[f[0]] == 0:
		return Order{}, admin.BadParam("order", MsgOrder)
	case len(f) == 1 || f[1] == "asc":
		return Order{Field: f[0], field: orderFields[f[0]]}, nil
	case f[1] == "desc":
		return Order{Field: f[0], Desc: true, field: orderFields[f[0]]}, nil
	}
	return Order{}, admin.BadParam("order", MsgOrder)
}

// compare orders two entries by o, then by id ascending.
func (o Order) compare(a, b *entry) int {
	field := o.field
	if field == 0 {
		field = orderFields[o.Field]
	}
	c := by(field, a, b)
	if o.Desc {
		c = -c
	}
	if c == 0 {
		c = cmp.Compare(a.ID, b.ID)
	}
	return c
}
