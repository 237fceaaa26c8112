package delivery

import (
	"context"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Log implements them, and a
// handler reaches nothing else (no store, no queue).
type operations interface {
	Attempts(ctx context.Context, webhookID, sinceID int64, w records.Window) ([]Attempt, records.Span, error)
	Redeliver(ctx context.Context, webhookID int64, deliveryID string) error
}

type handler struct{ operations }

// Routes returns the delivery log endpoints, beyond the spec, for people
// debugging their receivers. Like webhooks, they need no scope and show
// only the calling app's webhooks.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{newLog(d)}
	return []httpapi.Route{
		{Method: "GET", Path: "/admin/webhooks/{id}/deliveries.json", Handler: h.list},
		{Method: "POST", Path: "/admin/webhooks/{id}/deliveries/{delivery_id}/redeliver.json", Handler: h.redeliver},
	}
}

// list answers {"deliveries": [...]}: the webhook's recent attempts
// (kept 7 days), newest first.
func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	attempts, span, err := h.Attempts(r.Context(), id, p.SinceID, p.Window())
	if err != nil {
		return err
	}
	loc := admin.ShopFrom(r.Context()).Location()
	for i := range attempts {
		attempts[i].CreatedAt = attempts[i].CreatedAt.In(loc)
	}
	return httpapi.WritePaged(w, r, "deliveries", attempts, p, span)
}

// redeliver queues a dead-lettered delivery again.
func (h handler) redeliver(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := h.Redeliver(r.Context(), id, r.PathValue("delivery_id")); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
