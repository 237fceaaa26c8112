package transactions

import (
	"context"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, orderID int64) (int, error)
	Create(ctx context.Context, orderID int64, in *Input) (Transaction, error)
	Get(ctx context.Context, orderID int64, id int64) (Transaction, error)
	List(ctx context.Context, orderID int64, sinceID int64, w records.Window) ([]Transaction, records.Span, error)
}

type handler struct{ operations }

// Routes returns the order transaction endpoints (the Transactions operations).
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeOrders
	return []httpapi.Route{
		{Method: "GET", Path: "/com/orders/{order_id}/transactions.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/orders/{order_id}/transactions/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/orders/{order_id}/transactions/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/orders/{order_id}/transactions.json", Scope: s, Handler: h.create},
	}
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	oid, err := httpapi.ParseID(r, "order_id")
	if err != nil {
		return err
	}
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	ts, span, err := h.List(r.Context(), oid, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	loc := admin.ShopFrom(r.Context()).Location()
	for i := range ts {
		ts[i].CreatedAt = ts[i].CreatedAt.In(loc)
	}
	return httpapi.WritePaged(w, r, plural, ts, pg, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	oid, err := httpapi.ParseID(r, "order_id")
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), oid)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	oid, err := httpapi.ParseID(r, "order_id")
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	t, err := h.Get(r.Context(), oid, id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &t, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	oid, err := httpapi.ParseID(r, "order_id")
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	t, err := h.Create(r.Context(), oid, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, &t, nil)
}

func (h handler) write(w http.ResponseWriter, r *http.Request, status int, t *Transaction, fields httpapi.Fields) error {
	t.CreatedAt = t.CreatedAt.In(admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, status, wrapper, t, fields)
}
