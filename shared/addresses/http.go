package addresses

import (
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

type handler struct{ Service }

// Routes returns the customer address endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{Service{d}}
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

func ids(r *http.Request) (cid, id int64, err error) {
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
	cid, id, err := ids(r)
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
	cid, id, err := ids(r)
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
	cid, id, err := ids(r)
	if err != nil {
		return err
	}
	if err := h.Delete(r.Context(), cid, id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

// set applies operation to the addresses of address_ids[] (also read as
// repeated address_ids); destroy is the only operation.
func (h handler) set(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "customer_id")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var v admin.Validation
	switch op := q.Get("operation"); op {
	case "destroy":
	case "":
		v.Add("operation", admin.MsgBlank)
	default:
		v.Add("operation", "is not included in the list")
	}
	raw := append(q["address_ids[]"], q["address_ids"]...)
	var list []int64
	for _, s := range raw {
		id, err := httpapi.ParseIDParam(map[string][]string{"address_ids[]": {s}}, "address_ids[]")
		if err != nil {
			return err
		}
		if id == 0 {
			return admin.BadParam("address_ids[]", "must be a positive integer")
		}
		list = append(list, id)
	}
	switch {
	case len(list) == 0:
		v.Add("address_ids", admin.MsgBlank)
	case len(list) > MaxSet:
		v.Add("address_ids", admin.TooMany(MaxSet, "ids"))
	}
	if err := v.Err(); err != nil {
		return err
	}
	if err := h.Delete(r.Context(), cid, list...); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

func (h handler) setDefault(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := ids(r)
	if err != nil {
		return err
	}
	a, err := h.SetDefault(r.Context(), cid, id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &a, nil)
}
