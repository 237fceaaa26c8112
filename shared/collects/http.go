package collects

import (
	"context"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, f Filter) (int, error)
	Create(ctx context.Context, in Input) (Collect, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (Collect, error)
	List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Collect, records.Span, error)
}

type handler struct{ operations }

// Routes returns the collect endpoints.
func Routes(d *platform.Deps) []httpapi.Route { return routes(NewService(d)) }

// routes serves ops: the Service, or a fake in the handlers' tests.
func routes(ops operations) []httpapi.Route {
	h := handler{ops}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/collects.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/collects/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/collects/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/collects.json", Scope: s, Handler: h.create},
		{Method: "DELETE", Path: "/com/collects/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "collect", "collects"

func parseFilter(q url.Values) (Filter, error) {
	var f Filter
	var err error
	if f.ProductID, err = httpapi.ParseIDParam(q, "product_id"); err != nil {
		return f, err
	}
	f.CollectionID, err = httpapi.ParseIDParam(q, "collection_id")
	return f, err
}

func present(c *Collect, shop *admin.Shop) {
	loc := shop.Location()
	c.CreatedAt, c.UpdatedAt = c.CreatedAt.In(loc), c.UpdatedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	list, span, err := h.List(r.Context(), f, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	for i := range list {
		present(&list[i], shop)
	}
	return httpapi.WritePaged(w, r, plural, list, pg, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r.URL.Query())
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), f)
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
	c, err := h.Create(r.Context(), in)
	if err != nil {
		return err
	}
	present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &c, nil)
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
