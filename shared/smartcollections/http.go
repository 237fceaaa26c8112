package smartcollections

import (
	"context"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/customcollections/collection"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, f *collection.Filter) (int, error)
	Create(ctx context.Context, in *Input) (SmartCollection, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (SmartCollection, error)
	List(ctx context.Context, f *collection.Filter, sinceID int64, w records.Window) ([]SmartCollection, records.Span, error)
	Update(ctx context.Context, id int64, in *Input) (SmartCollection, error)
}

type handler struct{ operations }

// Routes returns the smart collection endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{Service{d}}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/smart_collections.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/smart_collections/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/smart_collections.json", Scope: s, Handler: h.create, MaxBody: images.MaxBody},
		{Method: "PUT", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.update, MaxBody: images.MaxBody},
		{Method: "DELETE", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "smart_collection", "smart_collections"

// parseFilter reads the filters of the Custom and Smart collections operations
// (the created_at ones are read, and then ignored by the operations).
func parseFilter(q url.Values, shop *admin.Shop) (collection.Filter, error) {
	f := collection.Filter{Title: q.Get("title"), Handle: q.Get("handle")}
	var err error
	if f.ProductID, err = httpapi.ParseIDParam(q, "product_id"); err != nil {
		return f, err
	}
	f.Filter, err = publishing.ParseFilter(q, shop.Location())
	return f, err
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	list, span, err := h.List(r.Context(), &f, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	for i := range list {
		present(&list[i], shop)
	}
	return httpapi.WritePaged(w, r, plural, list, pg, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(r.Context()))
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), &f)
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
	present(&c, admin.ShopFrom(r.Context()))
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
	present(&c, admin.ShopFrom(r.Context()))
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
	present(&c, admin.ShopFrom(r.Context()))
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
