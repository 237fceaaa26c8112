package savedsearches

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
	Count(ctx context.Context, sinceID int64) (int, error)
	Create(ctx context.Context, in *Input) (SavedSearch, error)
	Customers(ctx context.Context, id int64, order Order, w records.Window) ([]Customer, records.Span, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (SavedSearch, error)
	List(ctx context.Context, sinceID int64, w records.Window) ([]SavedSearch, records.Span, error)
	Update(ctx context.Context, id int64, in *Input) (SavedSearch, error)
}

type handler struct{ operations }

// Routes returns the customer saved search endpoints; the delete is also
// served on /admin, the root of the spec's example request.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeCustomers
	return []httpapi.Route{
		{Method: "GET", Path: "/com/customer_saved_searches.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/customer_saved_searches/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/customer_saved_searches/{id}.json", Scope: s, Handler: h.get},
		{Method: "GET", Path: "/com/customer_saved_searches/{id}/customers.json", Scope: s, Handler: h.customers},
		{Method: "POST", Path: "/com/customer_saved_searches.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/com/customer_saved_searches/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/com/customer_saved_searches/{id}.json", Scope: s, Handler: h.delete},
		{Method: "DELETE", Path: "/admin/customer_saved_searches/{id}.json", Scope: s, Handler: h.delete},
	}
}

// present moves the timestamps into the shop's zone for output.
func present(ss *SavedSearch, r *http.Request) {
	loc := admin.ShopFrom(r.Context()).Location()
	ss.CreatedAt, ss.UpdatedAt = ss.CreatedAt.In(loc), ss.UpdatedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	out, span, err := h.List(r.Context(), p.SinceID, p.Window())
	if err != nil {
		return err
	}
	for i := range out {
		present(&out[i], r)
	}
	return httpapi.WritePaged(w, r, plural, out, p, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	since, err := httpapi.ParseIDParam(r.URL.Query(), "since_id")
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), since)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	ss, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	present(&ss, r)
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &ss, httpapi.ParseFields(r.URL.Query()))
}

// customers answers a page of the search's customers: order, page, limit
// (default 50, at most 250) and fields; since_id is not taken.
func (h handler) customers(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	o, err := ParseOrder(r.URL.Query().Get("order"))
	if err != nil {
		return err
	}
	out, span, err := h.Customers(r.Context(), id, o, p.Window())
	if err != nil {
		return err
	}
	return httpapi.WritePaged(w, r, customers, out, p, span)
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	ss, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	present(&ss, r)
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &ss, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	ss, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	present(&ss, r)
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &ss, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := h.Delete(r.Context(), id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
