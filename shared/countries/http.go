package countries

import (
	"context"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/countries/country"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context) (int, error)
	CountProvinces(ctx context.Context, countryID int64) (int, error)
	Create(ctx context.Context, in *Input) (country.Country, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (country.Country, error)
	List(ctx context.Context, sinceID int64) ([]country.Country, error)
	Province(ctx context.Context, countryID int64, id int64) (country.Province, error)
	Provinces(ctx context.Context, countryID int64, sinceID int64) ([]country.Province, error)
	Update(ctx context.Context, id int64, in *Input) (country.Country, error)
	UpdateProvince(ctx context.Context, countryID int64, id int64, in *ProvinceInput) (country.Province, error)
}

type handler struct{ operations }

// Routes returns the country and province endpoints. The delete is also
// served under /admin, the root of the spec's delete example.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeShipping
	return []httpapi.Route{
		{Method: "GET", Path: "/com/countries.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/countries/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/countries/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/countries.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/com/countries/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/com/countries/{id}.json", Scope: s, Handler: h.delete},
		{Method: "DELETE", Path: "/admin/countries/{id}.json", Scope: s, Handler: h.delete},
		{Method: "GET", Path: "/com/countries/{country_id}/provinces.json", Scope: s, Handler: h.listProvinces},
		{Method: "GET", Path: "/com/countries/{country_id}/provinces/count.json", Scope: s, Handler: h.countProvinces},
		{Method: "GET", Path: "/com/countries/{country_id}/provinces/{id}.json", Scope: s, Handler: h.getProvince},
		{Method: "PUT", Path: "/com/countries/{country_id}/provinces/{id}.json", Scope: s, Handler: h.updateProvince},
	}
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	since, err := httpapi.ParseIDParam(r.URL.Query(), "since_id")
	if err != nil {
		return err
	}
	cs, err := h.List(r.Context(), since)
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, plural, cs, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	n, err := h.Count(r.Context())
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
	c, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &c, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	c, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &c, nil)
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
	c, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &c, nil)
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

func (h handler) listProvinces(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "country_id")
	if err != nil {
		return err
	}
	since, err := httpapi.ParseIDParam(r.URL.Query(), "since_id")
	if err != nil {
		return err
	}
	ps, err := h.Provinces(r.Context(), cid, since)
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, provincePlural, ps, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) countProvinces(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "country_id")
	if err != nil {
		return err
	}
	n, err := h.CountProvinces(r.Context(), cid)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) getProvince(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "country_id")
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	p, err := h.Province(r.Context(), cid, id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, provinceWrapper, &p, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) updateProvince(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.ParseID(r, "country_id")
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in ProvinceInput
	if err := httpapi.Decode(r, provinceWrapper, &in); err != nil {
		return err
	}
	p, err := h.UpdateProvince(r.Context(), cid, id, &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, provinceWrapper, &p, nil)
}
