package variants

import (
	"context"
	"net/http"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, pid int64) (int, error)
	Create(ctx context.Context, pid int64, in *Input) (catalog.Variant, error)
	Delete(ctx context.Context, pid int64, id int64) error
	Get(ctx context.Context, pid, id int64) (catalog.Variant, error)
	List(ctx context.Context, pid int64, sinceID int64, w records.Window) ([]catalog.Variant, records.Span, error)
	Update(ctx context.Context, pid, id int64, in *Input) (catalog.Variant, error)
}

type handler struct{ operations }

// Routes returns the variant endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/products/{product_id}/variants.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/products/{product_id}/variants/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/variants/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/com/products/{product_id}/variants.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/com/variants/{id}.json", Scope: s, Handler: h.update},
		{Method: "GET", Path: "/com/products/{product_id}/variants/{id}.json", Scope: s, Handler: h.get},
		{Method: "PUT", Path: "/com/products/{product_id}/variants/{id}.json", Scope: s, Handler: h.update},
		{Method: "DELETE", Path: "/com/products/{product_id}/variants/{id}.json", Scope: s, Handler: h.delete},
	}
}

// present moves a variant's timestamps into the shop's zone.
func present(v *catalog.Variant, loc *time.Location) {
	v.CreatedAt, v.UpdatedAt = v.CreatedAt.In(loc), v.UpdatedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	vs, span, err := h.List(r.Context(), pid, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	loc := admin.ShopFrom(r.Context()).Location()
	for i := range vs {
		present(&vs[i], loc)
	}
	return httpapi.WritePaged(w, r, plural, vs, pg, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), pid)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	pid, id, err := variantIDs(r)
	if err != nil {
		return err
	}
	v, err := h.Get(r.Context(), pid, id)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &v, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	v, err := h.Create(r.Context(), pid, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusCreated, &v, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	pid, id, err := variantIDs(r)
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	v, err := h.Update(r.Context(), pid, id, &in)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, &v, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	pid, err := httpapi.ParseID(r, "product_id")
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := h.Delete(r.Context(), pid, id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

func (h handler) write(w http.ResponseWriter, r *http.Request, status int, v *catalog.Variant, fields httpapi.Fields) error {
	present(v, admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, status, wrapper, v, fields)
}

// variantIDs parses a variant path's ids: the product's is 0 on the flat path
// (/com/variants/{id}.json).
func variantIDs(r *http.Request) (pid, id int64, err error) {
	if r.PathValue("product_id") != "" {
		if pid, err = httpapi.ParseID(r, "product_id"); err != nil {
			return 0, 0, err
		}
	}
	id, err = httpapi.ParseID(r, "id")
	return pid, id, err
}
