package pages

import (
	"context"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, f Filter) (int, error)
	Create(ctx context.Context, in *Input) (Page, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (Page, error)
	List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Page, records.Span, error)
	Update(ctx context.Context, id int64, in *Input) (Page, error)
}

type handler struct{ operations }

// Routes returns the page endpoints.
func Routes(d *platform.Deps) []httpapi.Route { return routes(NewService(d)) }

// routes serves ops: the Service, or a fake in the handlers' tests.
func routes(ops operations) []httpapi.Route {
	h := handler{ops}
	s := admin.ScopeContent
	return []httpapi.Route{
		{Method: "GET", Path: "/web/pages.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/pages/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/pages/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/pages.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/pages/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/web/pages/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "page", "pages"

func parseFilter(q url.Values, shop *admin.Shop) (Filter, error) {
	f := Filter{Title: q.Get("title"), Handle: q.Get("handle")}
	var err error
	f.Filter, err = publishing.ParseFilter(q, shop.Location())
	return f, err
}

func present(p *Page, shop *admin.Shop) {
	loc := shop.Location()
	p.CreatedAt, p.UpdatedAt, p.PublishedAt = p.CreatedAt.In(loc), p.UpdatedAt.In(loc), p.PublishedAt.In(loc)
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
	pages, span, err := h.List(r.Context(), f, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	for i := range pages {
		present(&pages[i], shop)
	}
	return httpapi.WritePaged(w, r, plural, pages, pg, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(r.Context()))
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
	p, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &p, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	p, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, &p, nil)
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
	p, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &p, nil)
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

func (h handler) write(w http.ResponseWriter, r *http.Request, status int, p *Page, fields httpapi.Fields) error {
	present(p, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, status, wrapper, p, fields)
}
