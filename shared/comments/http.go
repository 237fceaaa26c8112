package comments

import (
	"context"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Approve(ctx context.Context, id int64) (Comment, error)
	Count(ctx context.Context, f *Filter) (int, error)
	Create(ctx context.Context, in *Input, client Client) (Comment, error)
	Get(ctx context.Context, id int64) (Comment, error)
	List(ctx context.Context, f *Filter, sinceID int64, w records.Window) ([]Comment, records.Span, error)
	NotSpam(ctx context.Context, id int64) (Comment, error)
	Remove(ctx context.Context, id int64) (Comment, error)
	Restore(ctx context.Context, id int64) (Comment, error)
	Spam(ctx context.Context, id int64) (Comment, error)
	Update(ctx context.Context, id int64, in *Input) (Comment, error)
}

type handler struct{ operations }

// Routes returns the comment endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	s := admin.ScopeContent
	return []httpapi.Route{
		{Method: "GET", Path: "/web/comments.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/comments/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/comments/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/comments.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/comments/{id}.json", Scope: s, Handler: h.update},
		{Method: "POST", Path: "/web/comments/{id}/approve.json", Scope: s, Handler: h.act(h.Approve)},
		{Method: "POST", Path: "/web/comments/{id}/spam.json", Scope: s, Handler: h.act(h.Spam)},
		{Method: "POST", Path: "/web/comments/{id}/not_spam.json", Scope: s, Handler: h.act(h.NotSpam)},
		{Method: "POST", Path: "/web/comments/{id}/remove.json", Scope: s, Handler: h.act(h.Remove)},
		{Method: "POST", Path: "/web/comments/{id}/restore.json", Scope: s, Handler: h.act(h.Restore)},
	}
}

const wrapper, plural = "comment", "comments"

func parseFilter(q url.Values, shop *admin.Shop) (Filter, error) {
	var f Filter
	var err error
	if f.ArticleID, err = httpapi.ParseIDParam(q, "article_id"); err != nil {
		return f, err
	}
	if f.BlogID, err = httpapi.ParseIDParam(q, "blog_id"); err != nil {
		return f, err
	}
	loc := shop.Location()
	if f.Created, err = dates.ParseRange(q, "created_at", loc); err != nil {
		return f, err
	}
	if f.Updated, err = dates.ParseRange(q, "updated_at", loc); err != nil {
		return f, err
	}
	if f.PublishedAt, err = dates.ParseRange(q, "published_at", loc); err != nil {
		return f, err
	}
	var ok bool
	if f.Published, ok = publishing.ParseStatus(q.Get("published_status")); !ok {
		return f, admin.BadParam("published_status", "must be published, unpublished or any")
	}
	if f.Status = q.Get("status"); f.Status != "" && !slices.Contains(Statuses, f.Status) {
		return f, admin.BadParam("status", "must be pending, published, unapproved, spam or removed")
	}
	return f, nil
}

// present moves the timestamps into the shop's zone for output.
func present(c *Comment, shop *admin.Shop) {
	loc := shop.Location()
	c.CreatedAt, c.UpdatedAt, c.PublishedAt = c.CreatedAt.In(loc), c.UpdatedAt.In(loc), c.PublishedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	shop := admin.ShopFrom(r.Context())
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	comments, span, err := h.List(r.Context(), &f, pg.SinceID, pg.Window())
	if err != nil {
		return err
	}
	for i := range comments {
		present(&comments[i], shop)
	}
	return httpapi.WritePaged(w, r, plural, comments, pg, span)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(r.Context()))
	if err != nil {
		return err
	}
	n, err := h.Count(r.Context(), &f)
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
	c, err := h.Get(r.Context(), id)
	if err != nil {
		return err
	}
	present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &c, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	c, err := h.Create(r.Context(), &in, Client{IP: clientIP(r), UserAgent: r.UserAgent()})
	if err != nil {
		return err
	}
	present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &c, nil)
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
	c, err := h.Update(r.Context(), id, &in)
	if err != nil {
		return err
	}
	present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &c, nil)
}

// act is the handler of a moderation action: it answers the comment
// unwrapped (the Comments operations).
func (h handler) act(op func(ctx context.Context, id int64) (Comment, error)) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.ParseID(r, "id")
		if err != nil {
			return err
		}
		if err := httpapi.IgnoredBody(r); err != nil {
			return err
		}
		c, err := op(r.Context(), id)
		if err != nil {
			return err
		}
		present(&c, admin.ShopFrom(r.Context()))
		httpapi.WriteJSON(w, http.StatusOK, &c)
		return nil
	}
}

// clientIP is the posting address when the body gives none: the first
// X-Forwarded-For entry, else the connection's address.
func clientIP(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		first, _, _ := strings.Cut(xff, ",")
		if a, err := netip.ParseAddr(strings.TrimSpace(first)); err == nil {
			return a.String()
		}
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.String()
	}
	return ""
}
