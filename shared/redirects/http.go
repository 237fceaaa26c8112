package redirects

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
	Create(ctx context.Context, in *Input) (Redirect, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (Redirect, error)
	List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Redirect, records.Span, error)
	Update(ctx context.Context, id int64, in *Input) (Redirect, error)
}

type handler struct{ operations }

// Routes returns the redirect endpoints.
func Routes(d *platform.Deps) []httpapi.Route { return routes(NewService(d)) }

// routes serves ops: the Service, or a fake in the handlers' tests.
func routes(ops operations) []httpapi.Route {
	h := handler{ops}
	s := admin.ScopeContent
	return []httpapi.Route{
		{Method: "GET", Path: "/web/redirects.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/redirects/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/redirects/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/redirects.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/redirects/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/web/redirects/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "redirect", "redirects"

func parseFilter(q url.Values) Filter {
	f := Filter{Target: q.Get("target")}
	if p := q.Get("path"); p != "" {
		f.Path = NormalizePath(p)
	}
	return f
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	out, span, err := h.List(r.Context(), parseFilter(r.URL.Query()), p.SinceID, p.Window())
	if err != nil {
		return err
	}
	return httpapi.WritePaged(w, r, plural, out, p, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	n, err := h.Count(r.Context(), parseFilter(r.URL.Query()))
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
	rd, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &rd, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	rd, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &rd, nil)
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
	rd, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &rd, nil)
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
