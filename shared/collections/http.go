// Package collections is what the two kinds of collection share over HTTP:
// their filters and the handlers of their six operations, written once.
// The kinds differ where the contract makes them differ, in their own
// packages: custom collections hold collects (shared/customcollections),
// smart collections compute their members from rules
// (shared/smartcollections). Their stored record and filter are in
// shared/collections/collection, which the seed loader and collects use
// too.
package collections

import (
	"context"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
)

// Operations are what the handlers of one kind call: its Service
// implements them, and a handler reaches nothing else. C is the kind's
// record as answered, In its input.
type Operations[C, In any] interface {
	Count(ctx context.Context, f *collection.Filter) (int, error)
	Create(ctx context.Context, in *In) (C, error)
	Delete(ctx context.Context, id int64) error
	Get(ctx context.Context, id int64) (C, error)
	List(ctx context.Context, f *collection.Filter, sinceID int64, w records.Window) ([]C, records.Span, error)
	Update(ctx context.Context, id int64, in *In) (C, error)
}

// Handlers serve one kind's list, count, get, create, update and delete;
// the kind's Routes table names their paths whole.
type Handlers[C, In any] struct {
	Ops Operations[C, In]
	// Wrapper and Plural name the kind in bodies: "smart_collection",
	// "smart_collections".
	Wrapper, Plural string
	// Present shows a record in the shop's time zone.
	Present func(*C, *admin.Shop)
}

// ParseFilter reads the filters of the Custom and Smart collections
// operations (the created_at ones are read, and then ignored by the
// operations).
func ParseFilter(q url.Values, shop *admin.Shop) (collection.Filter, error) {
	f := collection.Filter{Title: q.Get("title"), Handle: q.Get("handle")}
	var err error
	if f.ProductID, err = httpapi.ParseIDParam(q, "product_id"); err != nil {
		return f, err
	}
	f.Filter, err = publishing.ParseFilter(q, shop.Location())
	return f, err
}

func (h Handlers[C, In]) List(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := ParseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	list, span, err := h.Ops.List(r.Context(), &f, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	for i := range list {
		h.Present(&list[i], shop)
	}
	return httpapi.WritePaged(w, r, h.Plural, list, pg, span)
}

func (h Handlers[C, In]) Count(w http.ResponseWriter, r *http.Request) error {
	f, err := ParseFilter(r.URL.Query(), admin.ShopFrom(r.Context()))
	if err != nil {
		return err
	}
	n, err := h.Ops.Count(r.Context(), &f)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h Handlers[C, In]) Get(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	c, err := h.Ops.Get(r.Context(), id)
	if err != nil {
		return err
	}
	h.Present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, h.Wrapper, &c, httpapi.ParseFields(r.URL.Query()))
}

func (h Handlers[C, In]) Create(w http.ResponseWriter, r *http.Request) error {
	var in In
	if err := httpapi.Decode(r, h.Wrapper, &in); err != nil {
		return err
	}
	c, err := h.Ops.Create(r.Context(), &in)
	if err != nil {
		return err
	}
	h.Present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusCreated, h.Wrapper, &c, nil)
}

func (h Handlers[C, In]) Update(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in In
	if err := httpapi.Decode(r, h.Wrapper, &in); err != nil {
		return err
	}
	c, err := h.Ops.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	h.Present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, h.Wrapper, &c, nil)
}

func (h Handlers[C, In]) Delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := h.Ops.Delete(r.Context(), id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
