package articles

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Authors(ctx context.Context) ([]string, error)
	Count(ctx context.Context, blogID int64, f *Filter) (int, error)
	Create(ctx context.Context, blogID int64, in *Input) (Article, error)
	Delete(ctx context.Context, blogID int64, id int64) error
	Get(ctx context.Context, blogID int64, id int64) (Article, error)
	List(ctx context.Context, blogID int64, f *Filter, sinceID int64, w records.Window) ([]Article, records.Span, error)
	Tags(ctx context.Context, blogID int64, q TagsQuery) ([]string, error)
	Update(ctx context.Context, blogID int64, id int64, in *Input) (Article, error)
}

type handler struct{ operations }

// Routes returns the article endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeContent
	return []httpapi.Route{
		{Method: "GET", Path: "/web/blogs/{blog_id}/articles.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/blogs/{blog_id}/articles/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/blogs/{blog_id}/articles/tags.json", Scope: s, Handler: h.tags},
		{Method: "GET", Path: "/web/blogs/{blog_id}/articles/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/blogs/{blog_id}/articles.json", Scope: s, Handler: h.create, MaxBody: images.MaxBody},
		{Method: "PUT", Path: "/web/blogs/{blog_id}/articles/{id}.json", Scope: s, Handler: h.update, MaxBody: images.MaxBody},
		{Method: "DELETE", Path: "/web/blogs/{blog_id}/articles/{id}.json", Scope: s, Handler: h.delete},
		{Method: "GET", Path: "/web/articles/authors.json", Scope: s, Handler: h.authors},
		{Method: "GET", Path: "/web/articles/tags.json", Scope: s, Handler: h.tags},
	}
}

const wrapper, plural = "article", "articles"

func parseFilter(q url.Values, shop *admin.Shop) (Filter, error) {
	f := Filter{Handle: q.Get("handle"), Tag: strings.TrimSpace(q.Get("tag")), Author: strings.TrimSpace(q.Get("author"))}
	var err error
	f.Filter, err = publishing.ParseFilter(q, shop.Location())
	return f, err
}

// blogFrom reads the {blog_id} of the path; the operations look the blog
// up (an unknown blog is 404).
func blogFrom(r *http.Request) (int64, error) { return httpapi.ParseID(r, "blog_id") }

func present(a *Article, shop *admin.Shop) {
	loc := shop.Location()
	a.CreatedAt, a.UpdatedAt, a.PublishedAt = a.CreatedAt.In(loc), a.UpdatedAt.In(loc), a.PublishedAt.In(loc)
	if a.Image != nil {
		img := *a.Image
		img.CreatedAt = img.CreatedAt.In(loc)
		a.Image = &img
	}
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	blogID, err := blogFrom(r)
	if err != nil {
		return err
	}
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	list, span, err := h.List(r.Context(), blogID, &f, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	for i := range list {
		present(&list[i], shop)
	}
	return httpapi.WritePaged(w, r, plural, list, pg, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	blogID, err := blogFrom(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(r.Context()))
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), blogID, &f)
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	blogID, err := httpapi.ParseID(r, "blog_id")
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	a, err := h.Get(r.Context(), blogID, id)
	if err != nil {
		return err
	}
	present(&a, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &a, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	blogID, err := blogFrom(r)
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	a, err := h.Create(r.Context(), blogID, &in)
	if err != nil {
		return err
	}
	present(&a, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &a, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	blogID, err := blogFrom(r)
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
	a, err := h.Update(r.Context(), blogID, id, &in)
	if err != nil {
		return err
	}
	present(&a, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &a, nil)
}

func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	blogID, err := blogFrom(r)
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	if err := h.Delete(r.Context(), blogID, id); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

// authors answers {"authors": [...]}.
func (h handler) authors(w http.ResponseWriter, r *http.Request) error {
	list, err := h.Authors(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string][]string{"authors": list})
	return nil
}

// tags answers {"tags": [...]}: popular=1 orders by use, limit caps the
// list. Without {blog_id} in the route, the tags of every blog.
func (h handler) tags(w http.ResponseWriter, r *http.Request) error {
	var blogID int64
	if r.PathValue("blog_id") != "" {
		var err error
		if blogID, err = blogFrom(r); err != nil {
			return err
		}
	}
	q := r.URL.Query()
	var tq TagsQuery
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > httpapi.MaxLimit {
			return admin.BadParam("limit", "must be an integer between 1 and 250")
		}
		tq.Limit = n
	}
	switch q.Get("popular") {
	case "", "0", "false":
	case "1", "true":
		tq.Popular = true
	default:
		return admin.BadParam("popular", "must be 1 or 0")
	}
	list, err := h.Tags(r.Context(), blogID, tq)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string][]string{"tags": list})
	return nil
}
