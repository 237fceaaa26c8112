package fulfillmentservices

import (
	"context"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Create(ctx context.Context, in *Input) (FulfillmentService, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (*FulfillmentService, error)
	List(ctx context.Context, f Filter) ([]FulfillmentService, error)
	Update(ctx context.Context, id int64, in *Input) (FulfillmentService, error)
}

type handler struct{ operations }

// Routes returns the fulfillment service endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeFulfillments
	return []httpapi.Route{
		{Method: "GET", Path: "/admin/fulfillment_services.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/admin/fulfillment_services/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/admin/fulfillment_services.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/admin/fulfillment_services/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/admin/fulfillment_services/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "fulfillment_service", "fulfillment_services"

// Values of the list's scope parameter.
const (
	ScopeCurrentClient = "current_client"
	ScopeAll           = "all"
)

func parseFilter(q url.Values) (Filter, error) {
	switch q.Get("scope") {
	case "", ScopeCurrentClient:
		return Filter{}, nil
	case ScopeAll:
		return Filter{All: true}, nil
	}
	return Filter{}, admin.BadParam("scope", "must be current_client or all")
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	svcs, err := h.List(r.Context(), f)
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, plural, svcs, nil)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	s, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, s, nil)
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	s, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &s, nil)
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
	s, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &s, nil)
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
