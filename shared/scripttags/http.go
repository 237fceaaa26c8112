package scripttags

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, f Filter) (int, error)
	Create(ctx context.Context, in *Input) (ScriptTag, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (ScriptTag, error)
	List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]ScriptTag, records.Span, error)
	Update(ctx context.Context, id int64, in *Input) (ScriptTag, error)
}

type handler struct{ operations }

// Routes returns the script tag endpoints.
func Routes(d *platform.Deps) []httpapi.Route { return routes(NewService(d)) }

// routes serves ops: the Service, or a fake in the handlers' tests.
func routes(ops operations) []httpapi.Route {
	h := handler{ops}
	s := admin.ScopeScriptTags
	return []httpapi.Route{
		{Method: "GET", Path: "/web/script_tags.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/script_tags/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/script_tags/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/script_tags.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/script_tags/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/web/script_tags/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "script_tag", "script_tags"

// parseFilter reads the src and date filters. A src that is not an
// absolute URL (the document's format: uri) could never match a stored
// tag: 400 naming it, rather than an empty list that looks like an answer.
func parseFilter(q url.Values, shop *admin.Shop) (Filter, error) {
	src := q.Get("src")
	if src != "" {
		if u, err := url.Parse(src); err != nil || !u.IsAbs() || strings.ContainsAny(src, " \t\r\n<>\"") {
			return Filter{}, admin.BadParam("src", "must be an absolute URL")
		}
	}
	stamps, err := dates.ParseStamps(q, shop.Location())
	return Filter{Src: src, Stamps: stamps}, err
}

// present moves the timestamps into the shop's zone for output.
func present(t *ScriptTag, shop *admin.Shop) {
	loc := shop.Location()
	t.CreatedAt, t.UpdatedAt = t.CreatedAt.In(loc), t.UpdatedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	tags, span, err := h.List(r.Context(), f, p.SinceID, p.Window())
	if err != nil {
		return err
	}
	for i := range tags {
		present(&tags[i], shop)
	}
	return httpapi.WritePaged(w, r, plural, tags, p, span)
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
	t, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &t, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	t, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, &t, nil)
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
	t, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &t, nil)
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

func (h handler) write(w http.ResponseWriter, r *http.Request, status int, t *ScriptTag, fields httpapi.Fields) error {
	present(t, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, status, wrapper, t, fields)
}
