package delivery

import (
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

type handler struct{ *platform.Deps }

// Routes returns the delivery log endpoints, beyond the spec, for people
// debugging their receivers. Like webhooks, they need no scope and show
// only the calling app's webhooks.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	return []httpapi.Route{
		{Method: "GET", Path: "/admin/webhooks/{id}/deliveries.json", Handler: h.list},
		{Method: "POST", Path: "/admin/webhooks/{id}/deliveries/{delivery_id}/redeliver.json", Handler: h.redeliver},
	}
}

// list answers {"deliveries": [...]}: the webhook's recent attempts
// (kept 7 days), newest first.
func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app, shop := admin.AppFrom(ctx), admin.ShopFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	attempts, span, err := Attempts(ctx, h.Store, app.ID, id, p.SinceID, p.Window())
	if err != nil {
		return err
	}
	loc := shop.Location()
	for i := range attempts {
		attempts[i].CreatedAt = attempts[i].CreatedAt.In(loc)
	}
	return httpapi.WritePaged(w, r, "deliveries", attempts, p, span)
}

// redeliver queues a dead-lettered delivery again, as a fresh first
// attempt under the same delivery id.
func (h handler) redeliver(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if _, err := webhooks.Lookup(ctx, h.Store, app.ID, id); err != nil {
		return err
	}
	k := DeadLetterKey(id, r.PathValue("delivery_id"))
	it, err := h.Store.Get(ctx, k)
	if err != nil {
		if err == store.ErrNotFound {
			return admin.NotFound
		}
		return err
	}
	if err := h.Queue.Send(ctx, it.Data); err != nil {
		return err
	}
	if err := h.Store.Transact(ctx, store.Delete(k, store.Always, 0)); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
