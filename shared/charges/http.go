package charges

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Activate(ctx context.Context, appID int64, id int64) (Charge, error)
	Cancel(ctx context.Context, appID int64, id int64) (Charge, error)
	Confirmation(ctx context.Context, id int64, secret string) (Charge, string, error)
	Create(ctx context.Context, appID int64, in *Input) (Charge, error)
	Decide(ctx context.Context, id int64, secret string, token string, accept bool) (Charge, string, error)
	Get(ctx context.Context, appID int64, id int64) (Charge, error)
	List(ctx context.Context, appID int64, sinceID int64, w records.Window) ([]Charge, records.Span, error)
	// Now is the service's time, which a charge's view and page are shown at.
	Now() time.Time
}

type handler struct{ operations }

const wrapper, plural = "recurring_application_charge", "recurring_application_charges"

// Routes returns the charge endpoints and the confirmation page. Charges
// need no scope: an app bills for itself and sees only its own charges.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	return []httpapi.Route{
		{Method: "GET", Path: "/admin/recurring_application_charges.json", Handler: h.list},
		{Method: "GET", Path: "/admin/recurring_application_charges/{id}.json", Handler: h.get},
		{Method: "POST", Path: "/admin/recurring_application_charges.json", Handler: h.create},
		{Method: "POST", Path: "/admin/recurring_application_charges/{id}/activate.json", Handler: h.activate},
		{Method: "DELETE", Path: "/admin/recurring_application_charges/{id}.json", Handler: h.cancel},
		{Method: "GET", Path: "/admin/recurring_application_charges/{id}/confirm/{secret}", Page: true, Handler: h.page},
		{Method: "POST", Path: "/admin/recurring_application_charges/{id}/confirm/{secret}/accept", Page: true, Handler: h.accept},
		{Method: "POST", Path: "/admin/recurring_application_charges/{id}/confirm/{secret}/decline", Page: true, Handler: h.decline},
	}
}

func (h handler) write(w http.ResponseWriter, r *http.Request, status int, c *Charge, fields httpapi.Fields) error {
	v := c.View(httpapi.BaseURL(r), h.Now(), admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, status, wrapper, &v, fields)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	cs, span, err := h.List(ctx, admin.AppFrom(ctx).ID, p.SinceID, p.Window())
	if err != nil {
		return err
	}
	b, now, loc := httpapi.BaseURL(r), h.Now(), admin.ShopFrom(ctx).Location()
	views := make([]View, len(cs))
	for i := range cs {
		views[i] = cs[i].View(b, now, loc)
	}
	return httpapi.WritePaged(w, r, plural, views, p, span)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	c, err := h.Get(ctx, admin.AppFrom(ctx).ID, id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &c, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	c, err := h.Create(ctx, admin.AppFrom(ctx).ID, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, &c, nil)
}

// activate takes no input: the body (the accepted charge, the Billing operations)
// is not read.
func (h handler) activate(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	c, err := h.Activate(ctx, admin.AppFrom(ctx).ID, id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &c, nil)
}

func (h handler) cancel(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if _, err := h.Cancel(ctx, admin.AppFrom(ctx).ID, id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

func (h handler) page(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	c, appName, err := h.Confirmation(r.Context(), id, r.PathValue("secret"))
	if err != nil {
		return err
	}
	return h.writePage(w, r, http.StatusOK, &c, appName)
}

// confirmationPage is parsed when first shown.
var confirmationPage = httpapi.PageTemplate(pageBody)

func (h handler) writePage(w http.ResponseWriter, r *http.Request, status int, c *Charge, appName string) error {
	return httpapi.WriteHTMLPage(w, status, confirmationPage(), c.page(appName, h.Now()), origin(c.ReturnURL))
}

func (h handler) accept(w http.ResponseWriter, r *http.Request) error  { return h.decide(w, r, true) }
func (h handler) decline(w http.ResponseWriter, r *http.Request) error { return h.decide(w, r, false) }

// decide records the answer and sends the owner back to the app (303); a
// charge decided otherwise meanwhile shows its page with its status (409).
func (h handler) decide(w http.ResponseWriter, r *http.Request, accept bool) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := r.ParseForm(); err != nil {
		return admin.Errorf(admin.EBADREQUEST, "Unreadable form")
	}
	secret := r.PathValue("secret")
	c, appName, err := h.Decide(r.Context(), id, secret, r.PostForm.Get("csrf_token"), accept)
	if errors.Is(err, ErrNotPending) {
		return h.writePage(w, r, http.StatusConflict, &c, appName)
	}
	if err != nil {
		return err
	}
	return httpapi.SeeOther(w, c.DecoratedReturnURL())
}
