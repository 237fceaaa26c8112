package addresses

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
	Create(ctx context.Context, cid int64, in *Input) (Address, error)
	Delete(ctx context.Context, cid int64, ids ...int64) error
	Set(ctx context.Context, cid int64, operation string, ids []int64) error
	Get(ctx context.Context, cid int64, id int64) (Address, error)
	List(ctx context.Context, cid int64, sinceID int64, w records.Window) ([]Address, records.Span, error)
	SetDefault(ctx context.Context, cid int64, id int64) (Address, error)
	Update(ctx context.Context, cid int64, id int64, in *Input) (Address, error)
}

type handler struct{ operations }

// Routes returns the customer address endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeCustomers
	return []httpapi.Route{
		{Method: "GET", Path: "/com/customers/{customer_id}/addresses.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/customers/{customer_id}/addresses/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/customers/{customer_id}/addresses.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/com/customers/{customer_id}/addresses/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/com/customers/{customer_id}/addresses/{id}.json", Scope: s, Handler: h.delete},
		{Method: "PUT", Path: "/com/customers/{customer_id}/addresses/set.json", Scope: s, Handler: h.set},
		{Method: "PUT", Path: "/com/customers/{customer_id}/addresses/{id}/default.json", Scope: s, Handler: h.setDefault},
	}
}

func pathIDs(r *http.Request) (cid, id int64, err error) {
	if cid, err = httpapi.ParseID(r, "customer_id"); err != nil {
		return
	}
	id, err = httpapi.ParseID(r, "id")
	return
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "customer_id")
	if err != nil {
		return err
	}
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	as, span, err := h.List(r.Context(), cid, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	return httpapi.WritePaged(w, r, plural, as, pg, span)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := pathIDs(r)
	if err != nil {
		return err
	}
	a, err := h.Get(r.Context(), cid, id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &a, nil)
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "customer_id")
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, inputWrapper, &in); err != nil {
		return err
	}
	a, err := h.Create(r.Context(), cid, &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &a, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := pathIDs(r)
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, inputWrapper, &in); err != nil {
		return err
	}
	a, err := h.Update(r.Context(), cid, id, &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &a, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := pathIDs(r)
	if err != nil {
		return err
	}
	if err := h.Delete(r.Context(), cid, id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

// set applies operation to the addresses of address_ids[] (also read as
// address_ids, given once); destroy is the only operation.
func (h handler) set(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "customer_id")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var list []int64
	for _, s := range append(q["address_ids[]"], q["address_ids"]...) {
		id, err := httpapi.ParseIDParam(map[string][]string{"address_ids[]": {s}}, "address_ids[]")
		if err != nil {
			return err
		}
		if id == 0 {
			return admin.BadParam("address_ids[]", "must be a positive integer")
		}
		list = append(list, id)
	}
	if err := h.Set(r.Context(), cid, q.Get("operation"), list); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

func (h handler) setDefault(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := pathIDs(r)
	if err != nil {
		return err
	}
	a, err := h.SetDefault(r.Context(), cid, id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &a, nil)
}
