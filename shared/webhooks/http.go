package webhooks

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
	Create(ctx context.Context, in *Input) (Webhook, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (*Webhook, error)
	List(ctx context.Context, f Filter, sinceID int64, w records.Window) ([]Webhook, records.Span, error)
	Update(ctx context.Context, id int64, in *Input) (Webhook, error)
}

type handler struct{ operations }

// Routes returns the webhook endpoints. Webhooks need no scope: every app
// manages its own.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeNone
	return []httpapi.Route{
		{Method: "GET", Path: "/admin/webhooks.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/admin/webhooks/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/admin/webhooks/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/admin/webhooks.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/admin/webhooks/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/admin/webhooks/{id}.json", Scope: s, Handler: h.delete},
	}
}

const wrapper, plural = "webhook", "webhooks"

func parseFilter(q url.Values, shop *admin.Shop) (Filter, error) {
	stamps, err := dates.ParseStamps(q, shop.Location())
	return Filter{Address: strings.TrimSpace(q.Get("address")), Topic: strings.TrimSpace(q.Get("topic")), Stamps: stamps}, err
}

// present moves the timestamps into the shop's zone for output.
func present(w *Webhook, shop *admin.Shop) {
	loc := shop.Location()
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.In(loc), w.UpdatedAt.In(loc)
	w.normalize()
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
	out, span, err := h.List(r.Context(), f, p.SinceID, p.Window())
	if err != nil {
		return err
	}
	for i := range out {
		present(&out[i], shop)
	}
	return httpapi.WritePaged(w, r, plural, out, p, span)
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
	wh, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, wh, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	wh, err := h.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, &wh, nil)
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
	wh, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &wh, nil)
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

func (h handler) write(w http.ResponseWriter, r *http.Request, status int, wh *Webhook, fields httpapi.Fields) error {
	present(wh, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, status, wrapper, wh, fields)
}
