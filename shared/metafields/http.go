package metafields

import (
	"context"
	"net/http"
	"net/url"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
)

const (
	wrapper = "metafield"
	plural  = "metafields"
)

// ownerPath says whose metafields a route serves: the top-level routes
// (resource "") reach every owner; a nested route names its owner's
// resource and the path wildcard of its id (and, for articles, the blog's).
type ownerPath struct{ resource, param, blogParam string }

var (
	top              = ownerPath{}
	product          = ownerPath{resource: OwnerProduct, param: "product_id"}
	variant          = ownerPath{resource: OwnerVariant, param: "variant_id"}
	page             = ownerPath{resource: OwnerPage, param: "page_id"}
	blog             = ownerPath{resource: OwnerBlog, param: "blog_id"}
	article          = ownerPath{resource: OwnerArticle, param: "article_id", blogParam: "blog_id"}
	customCollection = ownerPath{resource: OwnerCustomCollection, param: "custom_collection_id"}
	smartCollection  = ownerPath{resource: OwnerSmartCollection, param: "smart_collection_id"}
	customer         = ownerPath{resource: OwnerCustomer, param: "customer_id"}
	order            = ownerPath{resource: OwnerOrder, param: "order_id"}
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Count(ctx context.Context, o Owner, f *Filter) (int, error)
	Create(ctx context.Context, o Owner, in *Input) (Metafield, error)
	Delete(ctx context.Context, o *Owner, id int64) error
	Get(ctx context.Context, o *Owner, id int64) (Metafield, error)
	List(ctx context.Context, o Owner, f *Filter, sinceID int64, w records.Window) ([]Metafield, records.Span, error)
	Update(ctx context.Context, o *Owner, id int64, in *Input) (Metafield, error)
}

type handler struct{ operations }

// Routes returns the metafield endpoints (the Metafields operations) on both
// roots, and the nested paths of every other owner. lookups checks that an owner
// exists (see Lookup); the composition root builds it.
func Routes(d *platform.Deps, lookups map[string]Lookup) []httpapi.Route {
	h := handler{Service{Deps: d, Lookups: lookups}}
	return []httpapi.Route{
		// top
		{Method: "GET", Path: "/admin/metafields.json", Scope: admin.ScopeNone, Handler: h.list(top)},
		{Method: "GET", Path: "/admin/metafields/count.json", Scope: admin.ScopeNone, Handler: h.count(top)},
		{Method: "GET", Path: "/admin/metafields/{id}.json", Scope: admin.ScopeNone, Handler: h.get(top)},
		{Method: "POST", Path: "/admin/metafields.json", Scope: admin.ScopeNone, Handler: h.create(top)},
		{Method: "PUT", Path: "/admin/metafields/{id}.json", Scope: admin.ScopeNone, Handler: h.update(top)},
		{Method: "DELETE", Path: "/admin/metafields/{id}.json", Scope: admin.ScopeNone, Handler: h.delete(top)},
		// top
		{Method: "GET", Path: "/com/metafields.json", Scope: admin.ScopeNone, Handler: h.list(top)},
		{Method: "GET", Path: "/com/metafields/count.json", Scope: admin.ScopeNone, Handler: h.count(top)},
		{Method: "GET", Path: "/com/metafields/{id}.json", Scope: admin.ScopeNone, Handler: h.get(top)},
		{Method: "POST", Path: "/com/metafields.json", Scope: admin.ScopeNone, Handler: h.create(top)},
		{Method: "PUT", Path: "/com/metafields/{id}.json", Scope: admin.ScopeNone, Handler: h.update(top)},
		{Method: "DELETE", Path: "/com/metafields/{id}.json", Scope: admin.ScopeNone, Handler: h.delete(top)},
		// product
		{Method: "GET", Path: "/admin/products/{product_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.list(product)},
		{Method: "GET", Path: "/admin/products/{product_id}/metafields/count.json", Scope: admin.ScopeProducts, Handler: h.count(product)},
		{Method: "GET", Path: "/admin/products/{product_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.get(product)},
		{Method: "POST", Path: "/admin/products/{product_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.create(product)},
		{Method: "PUT", Path: "/admin/products/{product_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.update(product)},
		{Method: "DELETE", Path: "/admin/products/{product_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.delete(product)},
		// product
		{Method: "GET", Path: "/com/products/{product_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.list(product)},
		{Method: "GET", Path: "/com/products/{product_id}/metafields/count.json", Scope: admin.ScopeProducts, Handler: h.count(product)},
		{Method: "GET", Path: "/com/products/{product_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.get(product)},
		{Method: "POST", Path: "/com/products/{product_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.create(product)},
		{Method: "PUT", Path: "/com/products/{product_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.update(product)},
		{Method: "DELETE", Path: "/com/products/{product_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.delete(product)},
		// variant
		{Method: "GET", Path: "/com/variants/{variant_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.list(variant)},
		{Method: "GET", Path: "/com/variants/{variant_id}/metafields/count.json", Scope: admin.ScopeProducts, Handler: h.count(variant)},
		{Method: "GET", Path: "/com/variants/{variant_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.get(variant)},
		{Method: "POST", Path: "/com/variants/{variant_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.create(variant)},
		{Method: "PUT", Path: "/com/variants/{variant_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.update(variant)},
		{Method: "DELETE", Path: "/com/variants/{variant_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.delete(variant)},
		// page
		{Method: "GET", Path: "/web/pages/{page_id}/metafields.json", Scope: admin.ScopeContent, Handler: h.list(page)},
		{Method: "GET", Path: "/web/pages/{page_id}/metafields/count.json", Scope: admin.ScopeContent, Handler: h.count(page)},
		{Method: "GET", Path: "/web/pages/{page_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.get(page)},
		{Method: "POST", Path: "/web/pages/{page_id}/metafields.json", Scope: admin.ScopeContent, Handler: h.create(page)},
		{Method: "PUT", Path: "/web/pages/{page_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.update(page)},
		{Method: "DELETE", Path: "/web/pages/{page_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.delete(page)},
		// blog
		{Method: "GET", Path: "/web/blogs/{blog_id}/metafields.json", Scope: admin.ScopeContent, Handler: h.list(blog)},
		{Method: "GET", Path: "/web/blogs/{blog_id}/metafields/count.json", Scope: admin.ScopeContent, Handler: h.count(blog)},
		{Method: "GET", Path: "/web/blogs/{blog_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.get(blog)},
		{Method: "POST", Path: "/web/blogs/{blog_id}/metafields.json", Scope: admin.ScopeContent, Handler: h.create(blog)},
		{Method: "PUT", Path: "/web/blogs/{blog_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.update(blog)},
		{Method: "DELETE", Path: "/web/blogs/{blog_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.delete(blog)},
		// article
		{Method: "GET", Path: "/web/blogs/{blog_id}/articles/{article_id}/metafields.json", Scope: admin.ScopeContent, Handler: h.list(article)},
		{Method: "GET", Path: "/web/blogs/{blog_id}/articles/{article_id}/metafields/count.json", Scope: admin.ScopeContent, Handler: h.count(article)},
		{Method: "GET", Path: "/web/blogs/{blog_id}/articles/{article_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.get(article)},
		{Method: "POST", Path: "/web/blogs/{blog_id}/articles/{article_id}/metafields.json", Scope: admin.ScopeContent, Handler: h.create(article)},
		{Method: "PUT", Path: "/web/blogs/{blog_id}/articles/{article_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.update(article)},
		{Method: "DELETE", Path: "/web/blogs/{blog_id}/articles/{article_id}/metafields/{id}.json", Scope: admin.ScopeContent, Handler: h.delete(article)},
		// customCollection
		{Method: "GET", Path: "/com/custom_collections/{custom_collection_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.list(customCollection)},
		{Method: "GET", Path: "/com/custom_collections/{custom_collection_id}/metafields/count.json", Scope: admin.ScopeProducts, Handler: h.count(customCollection)},
		{Method: "GET", Path: "/com/custom_collections/{custom_collection_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.get(customCollection)},
		{Method: "POST", Path: "/com/custom_collections/{custom_collection_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.create(customCollection)},
		{Method: "PUT", Path: "/com/custom_collections/{custom_collection_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.update(customCollection)},
		{Method: "DELETE", Path: "/com/custom_collections/{custom_collection_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.delete(customCollection)},
		// smartCollection
		{Method: "GET", Path: "/com/smart_collections/{smart_collection_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.list(smartCollection)},
		{Method: "GET", Path: "/com/smart_collections/{smart_collection_id}/metafields/count.json", Scope: admin.ScopeProducts, Handler: h.count(smartCollection)},
		{Method: "GET", Path: "/com/smart_collections/{smart_collection_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.get(smartCollection)},
		{Method: "POST", Path: "/com/smart_collections/{smart_collection_id}/metafields.json", Scope: admin.ScopeProducts, Handler: h.create(smartCollection)},
		{Method: "PUT", Path: "/com/smart_collections/{smart_collection_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.update(smartCollection)},
		{Method: "DELETE", Path: "/com/smart_collections/{smart_collection_id}/metafields/{id}.json", Scope: admin.ScopeProducts, Handler: h.delete(smartCollection)},
		// customer
		{Method: "GET", Path: "/com/customers/{customer_id}/metafields.json", Scope: admin.ScopeCustomers, Handler: h.list(customer)},
		{Method: "GET", Path: "/com/customers/{customer_id}/metafields/count.json", Scope: admin.ScopeCustomers, Handler: h.count(customer)},
		{Method: "GET", Path: "/com/customers/{customer_id}/metafields/{id}.json", Scope: admin.ScopeCustomers, Handler: h.get(customer)},
		{Method: "POST", Path: "/com/customers/{customer_id}/metafields.json", Scope: admin.ScopeCustomers, Handler: h.create(customer)},
		{Method: "PUT", Path: "/com/customers/{customer_id}/metafields/{id}.json", Scope: admin.ScopeCustomers, Handler: h.update(customer)},
		{Method: "DELETE", Path: "/com/customers/{customer_id}/metafields/{id}.json", Scope: admin.ScopeCustomers, Handler: h.delete(customer)},
		// order
		{Method: "GET", Path: "/com/orders/{order_id}/metafields.json", Scope: admin.ScopeOrders, Handler: h.list(order)},
		{Method: "GET", Path: "/com/orders/{order_id}/metafields/count.json", Scope: admin.ScopeOrders, Handler: h.count(order)},
		{Method: "GET", Path: "/com/orders/{order_id}/metafields/{id}.json", Scope: admin.ScopeOrders, Handler: h.get(order)},
		{Method: "POST", Path: "/com/orders/{order_id}/metafields.json", Scope: admin.ScopeOrders, Handler: h.create(order)},
		{Method: "PUT", Path: "/com/orders/{order_id}/metafields/{id}.json", Scope: admin.ScopeOrders, Handler: h.update(order)},
		{Method: "DELETE", Path: "/com/orders/{order_id}/metafields/{id}.json", Scope: admin.ScopeOrders, Handler: h.delete(order)},
	}
}

// owner reads a nested route's owner from the path; nil for the top-level routes.
func (p ownerPath) owner(r *http.Request) (*Owner, error) {
	if p.resource == "" {
		return nil, nil
	}
	id, err := httpapi.ParseID(r, p.param)
	if err != nil {
		return nil, err
	}
	o := &Owner{Resource: p.resource, ID: id}
	if p.blogParam != "" {
		if o.Blog, err = httpapi.ParseID(r, p.blogParam); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// parseFilter reads the Metafields operations' filters; the owner ones only on the
// top-level routes.
func parseFilter(q url.Values, shop *admin.Shop, p ownerPath) (Filter, error) {
	f := Filter{Key: q.Get("key"), ValueType: q.Get("value_type"), Type: q.Get("type")}
	for _, name := range []string{"namespace", "namepace"} {
		if ns := q.Get(name); ns != "" {
			f.Namespaces = append(f.Namespaces, ns)
		}
	}
	var err error
	if f.Created, err = dates.ParseRange(q, "created_at", shop.Location()); err != nil {
		return f, err
	}
	if f.Updated, err = dates.ParseRange(q, "updated_at", shop.Location()); err != nil {
		return f, err
	}
	if p.resource == "" {
		f.OwnerResource = q.Get("metafield[owner_resource]")
		if f.OwnerID, err = httpapi.ParseIDParam(q, "metafield[owner_id]"); err != nil {
			return f, err
		}
	}
	return f, f.CheckFilter()
}

// listOwner is the owner a list, count or create addresses.
func (p ownerPath) listOwner(r *http.Request, f *Filter) (Owner, error) {
	o, err := p.owner(r)
	if err != nil || o != nil {
		if o == nil {
			return Owner{}, err
		}
		return *o, err
	}
	return ShopOwner(r.Context(), f), nil
}

func (h handler) list(p ownerPath) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		shop := admin.ShopFrom(r.Context())
		pg, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		f, err := parseFilter(r.URL.Query(), shop, p)
		if err != nil {
			return err
		}
		o, err := p.listOwner(r, &f)
		if err != nil {
			return err
		}
		ms, span, err := h.List(r.Context(), o, &f, pg.SinceID, pg.Window())
		if err != nil {
			return err
		}
		for i := range ms {
			Present(&ms[i], shop.Location())
		}
		return httpapi.WritePaged(w, r, plural, ms, pg, span)
	}
}

func (h handler) count(p ownerPath) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		f, err := parseFilter(r.URL.Query(), admin.ShopFrom(r.Context()), p)
		if err != nil {
			return err
		}
		o, err := p.listOwner(r, &f)
		if err != nil {
			return err
		}
		n, err := h.Count(r.Context(), o, &f)
		if err != nil {
			return err
		}
		return httpapi.WriteCount(w, n)
	}
}

func (h handler) get(p ownerPath) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := p.owner(r)
		if err != nil {
			return err
		}
		id, err := httpapi.ParseID(r, "id")
		if err != nil {
			return err
		}
		m, err := h.Get(r.Context(), o, id)
		if err != nil {
			return err
		}
		return write(w, r, http.StatusOK, &m, httpapi.ParseFields(r.URL.Query()))
	}
}

func (h handler) create(p ownerPath) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := p.listOwner(r, nil)
		if err != nil {
			return err
		}
		var in Input
		if err := httpapi.Decode(r, wrapper, &in); err != nil {
			return err
		}
		m, err := h.Create(r.Context(), o, &in)
		if err != nil {
			return err
		}
		return write(w, r, http.StatusCreated, &m, nil)
	}
}

func (h handler) update(p ownerPath) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := p.owner(r)
		if err != nil {
			return err
		}
		id, err := httpapi.ParseID(r, "id")
		if err != nil {
			return err
		}
		var in Input
		if err := httpapi.Decode(r, wrapper, &in); err != nil {
			return err
		}
		m, err := h.Update(r.Context(), o, id, &in)
		if err != nil {
			return err
		}
		return write(w, r, http.StatusOK, &m, nil)
	}
}

func (h handler) delete(p ownerPath) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		o, err := p.owner(r)
		if err != nil {
			return err
		}
		id, err := httpapi.ParseID(r, "id")
		if err != nil {
			return err
		}
		if err := h.Delete(r.Context(), o, id); err != nil {
			return err
		}
		return httpapi.WriteDeleted(w)
	}
}

func write(w http.ResponseWriter, r *http.Request, status int, m *Metafield, fields httpapi.Fields) error {
	Present(m, admin.ShopFrom(r.Context()).Location())
	return httpapi.WriteOne(w, status, wrapper, m, fields)
}
