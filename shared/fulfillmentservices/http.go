package fulfillmentservices

import (
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the fulfillment service endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
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

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var (
		svcs []Service
		err  error
	)
	switch r.URL.Query().Get("scope") {
	case "", ScopeCurrentClient:
		svcs, err = OfApp(ctx, h.Store, admin.AppFrom(ctx).ID)
	case ScopeAll:
		svcs, err = All(ctx, h.Store)
	default:
		return admin.BadParam("scope", "must be current_client or all")
	}
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
	s, err := Lookup(r.Context(), h.Store, id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, s, nil)
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	now := admin.Now()
	s := Service{AppID: admin.AppFrom(ctx).ID, CreatedAt: now, UpdatedAt: now}
	if err := in.apply(&s, true, h.Outbound.Refuses); err != nil {
		return err
	}
	_, _, err := handles.Create(ctx, h.Store, h.IDs, HandleNamespace, "", s.Name, func(id int64, handle string) ([]store.Op, error) {
		s.ID, s.Handle = id, handle
		return []store.Op{store.Put(s.item(1), store.IfAbsent, 0)}, nil
	})
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &s, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var s Service
	err = records.Update(ctx, h.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		var err error
		if s, err = decode(it); err != nil {
			return nil, err
		}
		if s.AppID != app.ID {
			return nil, admin.NotFound
		}
		if err := in.apply(&s, false, h.Outbound.Refuses); err != nil {
			return nil, err
		}
		s.UpdatedAt = admin.Now()
		return []store.Op{records.PutNext(s.item(it.Version))}, nil
	})
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &s, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	err = records.Update(ctx, h.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		s, err := decode(it)
		if err != nil {
			return nil, err
		}
		if s.AppID != app.ID {
			return nil, admin.NotFound
		}
		return deleteOps(&s, it.Version), nil
	})
	if err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
