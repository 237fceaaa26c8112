package smartcollections

import (
	"context"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/collections"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/platform"
)

// operations are the smart collection operations beyond the collection
// family's (shared/collections) that the handlers call.
type operations interface {
	Order(ctx context.Context, id int64, o OrderInput) (SmartCollection, error)
}

type handler struct{ operations }

// Routes returns the smart collection endpoints, served by the collection
// family's handlers (shared/collections) but for order.
func Routes(d *platform.Deps) []httpapi.Route {
	svc := NewService(d)
	h := collections.Handlers[SmartCollection, Input]{Ops: svc, Wrapper: "smart_collection", Plural: "smart_collections", Present: present}
	own := handler{svc}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/smart_collections.json", Scope: s, Handler: h.List},
		{Method: "GET", Path: "/com/smart_collections/count.json", Scope: s, Handler: h.Count},
		{Method: "GET", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.Get},
		{Method: "POST", Path: "/com/smart_collections.json", Scope: s, Handler: h.Create, MaxBody: images.MaxBody},
		{Method: "PUT", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.Update, MaxBody: images.MaxBody},
		{Method: "PUT", Path: "/com/smart_collections/{id}/order.json", Scope: s, Handler: own.order},
		{Method: "DELETE", Path: "/com/smart_collections/{id}.json", Scope: s, Handler: h.Delete},
	}
}

// order reads sort_order and products[] from the query, as Shopify's
// clients send them (the body, if any, is ignored), and answers {} as
// Shopify did.
func (h handler) order(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := httpapi.IgnoredBody(r); err != nil {
		return err
	}
	q := r.URL.Query()
	var o OrderInput
	if q.Has("sort_order") {
		s := q.Get("sort_order")
		o.SortOrder = &s
	}
	for _, name := range []string{"products[]", "products"} {
		for _, s := range q[name] {
			p, err := httpapi.ParseIDParam(map[string][]string{name: {s}}, name)
			if err != nil || p == 0 {
				return admin.BadParam(name, "must be a positive integer")
			}
			o.Products = append(o.Products, p)
		}
	}
	if _, err := h.Order(r.Context(), id, o); err != nil {
		return err
	}
	return httpapi.WriteEmpty(w)
}
