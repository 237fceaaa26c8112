package comments

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the comment endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeContent
	act := func(name string) httpapi.HandlerFunc {
		a := actionNamed(name)
		return func(w http.ResponseWriter, r *http.Request) error { return h.act(w, r, a) }
	}
	return []httpapi.Route{
		{Method: "GET", Path: "/web/comments.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/web/comments/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/web/comments/{id}.json", Scope: s, Handler: h.get},
		{Method: "POST", Path: "/web/comments.json", Scope: s, Handler: h.create},
		{Method: "PUT", Path: "/web/comments/{id}.json", Scope: s, Handler: h.update},
		{Method: "POST", Path: "/web/comments/{id}/approve.json", Scope: s, Handler: act("approve")},
		{Method: "POST", Path: "/web/comments/{id}/spam.json", Scope: s, Handler: act("spam")},
		{Method: "POST", Path: "/web/comments/{id}/not_spam.json", Scope: s, Handler: act("not_spam")},
		{Method: "POST", Path: "/web/comments/{id}/remove.json", Scope: s, Handler: act("remove")},
		{Method: "POST", Path: "/web/comments/{id}/restore.json", Scope: s, Handler: act("restore")},
	}
}

const wrapper, plural = "comment", "comments"

// filter is the list and count filters of §4.9.
type filter struct {
	articleID, blogID             int64
	created, updated, publishedAt dates.Range
	published                     publishing.Status
	status                        string
}

func parseFilter(q url.Values, shop *admin.Shop) (filter, error) {
	var f filter
	var err error
	if f.articleID, err = httpapi.ParseIDParam(q, "article_id"); err != nil {
		return f, err
	}
	if f.blogID, err = httpapi.ParseIDParam(q, "blog_id"); err != nil {
		return f, err
	}
	loc := shop.Location()
	if f.created, err = dates.ParseRange(q, "created_at", loc); err != nil {
		return f, err
	}
	if f.updated, err = dates.ParseRange(q, "updated_at", loc); err != nil {
		return f, err
	}
	if f.publishedAt, err = dates.ParseRange(q, "published_at", loc); err != nil {
		return f, err
	}
	var ok bool
	if f.published, ok = publishing.ParseStatus(q.Get("published_status")); !ok {
		return f, admin.BadParam("published_status", "must be published, unpublished or any")
	}
	if f.status = q.Get("status"); f.status != "" {
		ok = false
		for _, s := range statuses {
			ok = ok || s == f.status
		}
		if !ok {
			return f, admin.BadParam("status", "must be pending, published, unapproved, spam or removed")
		}
	}
	return f, nil
}

// query is the partition the filter reads: an article's or a blog's
// comments through their index, else all comments; countPartition is its
// counter.
func (f *filter) query(sinceID int64) (q store.Query, countPartition string) {
	switch {
	case f.articleID > 0:
		q, countPartition = store.Query{Index: store.GSI1, PK: ArticlePartition(f.articleID)}, ArticlePartition(f.articleID)
	case f.blogID > 0:
		q, countPartition = store.Query{Index: store.GSI2, PK: BlogPartition(f.blogID)}, BlogPartition(f.blogID)
	default:
		q, countPartition = store.Query{PK: partition}, partition
	}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return q, countPartition
}

// matcher checks what the partition does not: nil when nothing is left.
// With both article_id and blog_id the article's partition is read and the
// blog checked on each comment.
func (f *filter) matcher() records.Matcher {
	checkBlog := f.articleID > 0 && f.blogID > 0
	if !checkBlog && f.created.Empty() && f.updated.Empty() && f.publishedAt.Empty() &&
		f.published == publishing.Any && f.status == "" {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		var c Comment
		if err := records.Decode(it, &c); err != nil {
			return false, err
		}
		return (!checkBlog || c.BlogID == f.blogID) && f.matches(&c), nil
	}
}

func (f *filter) matches(c *Comment) bool {
	switch f.published {
	case publishing.OnlyPublished:
		if c.Status != StatusPublished {
			return false
		}
	case publishing.OnlyUnpublished:
		if c.Status == StatusPublished {
			return false
		}
	}
	return (f.status == "" || c.Status == f.status) && f.created.Contains(c.CreatedAt.Time) &&
		f.updated.Contains(c.UpdatedAt.Time) && f.publishedAt.Contains(c.PublishedAt.Time)
}

// present moves the timestamps into the shop's zone for output.
func present(c *Comment, shop *admin.Shop) {
	loc := shop.Location()
	c.CreatedAt, c.UpdatedAt, c.PublishedAt = c.CreatedAt.In(loc), c.UpdatedAt.In(loc), c.PublishedAt.In(loc)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop := admin.ShopFrom(ctx)
	pg, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), shop)
	if err != nil {
		return err
	}
	q, _ := f.query(pg.SinceID)
	items, err := records.List(ctx, h.Store, q, f.matcher(), pg.Offset(), pg.Limit)
	if err != nil {
		return err
	}
	comments, err := records.DecodeAll[Comment](items)
	if err != nil {
		return err
	}
	for i := range comments {
		present(&comments[i], shop)
	}
	return httpapi.WriteList(w, plural, comments, pg.Fields)
}

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(ctx))
	if err != nil {
		return err
	}
	q, counter := f.query(0)
	match := f.matcher()
	if match == nil {
		n, err := records.Count(ctx, h.Store, counter)
		if err != nil {
			return err
		}
		return httpapi.WriteCount(w, n)
	}
	n, err := records.CountMatching(ctx, h.Store, q, match)
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
	var c Comment
	if _, err := records.Get(r.Context(), h.Store, Key(id), &c); err != nil {
		return err
	}
	present(&c, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &c, httpapi.ParseFields(r.URL.Query()))
}

// target looks up the article and blog a new comment names, adding a
// validation message when they do not exist or do not belong together.
func (h handler) target(r *http.Request, v *admin.Validation, in *input) (*articleRef, *blogRef, error) {
	if in.BlogID == nil || *in.BlogID <= 0 {
		v.Add("blog_id", admin.MsgBlank)
	}
	if in.ArticleID == nil || *in.ArticleID <= 0 {
		v.Add("article_id", admin.MsgBlank)
	}
	if v.Has("blog_id") || v.Has("article_id") {
		return nil, nil, nil
	}
	ctx := r.Context()
	var a articleRef
	if _, err := records.Get(ctx, h.Store, articleKey(*in.ArticleID), &a); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			v.Add("article_id", "does not exist")
			return nil, nil, nil
		}
		return nil, nil, err
	}
	if a.BlogID != *in.BlogID {
		v.Add("blog_id", "does not match the article's blog")
		return nil, nil, nil
	}
	var b blogRef
	if _, err := records.Get(ctx, h.Store, blogKey(a.BlogID), &b); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			v.Add("blog_id", "does not exist")
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return &a, &b, nil
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	now := admin.Now()
	c := Comment{Status: StatusPending, PublishedAt: now, CreatedAt: now, UpdatedAt: now}
	var v admin.Validation
	in.apply(&v, &c, true, shop.Location())
	if ip := strings.TrimSpace(deref(in.IP)); ip != "" {
		if a, err := netip.ParseAddr(ip); err != nil {
			v.Add("ip", admin.MsgInvalid)
		} else {
			c.IP = a.String()
		}
	} else {
		c.IP = clientIP(r)
	}
	if in.UserAgent != nil {
		if ua := strings.TrimSpace(*in.UserAgent); len([]rune(ua)) > maxUserAgent {
			v.Add("user_agent", admin.TooLong(maxUserAgent))
		} else if ua != "" {
			c.UserAgent = &ua
		}
	} else if ua := strings.TrimSpace(r.UserAgent()); ua != "" {
		ua = truncate(ua, maxUserAgent)
		c.UserAgent = &ua
	}
	article, blog, err := h.target(r, &v, &in)
	if err != nil {
		return err
	}
	if err := v.Err(); err != nil {
		return err
	}
	c.ArticleID, c.BlogID = article.ID, blog.ID
	const checkArticle = 1
	_, err = records.Create(ctx, h.Store, h.IDs, func(id int64) ([]store.Op, error) {
		c.ID = id
		ops := []store.Op{store.Put(c.item(1), store.IfAbsent, 0), store.Check(articleKey(article.ID), store.IfPresent, 0)}
		ops = append(ops, c.countOps(1)...)
		ev := events.New(h.IDs, subject(id, blog, article), events.Create, excerpt(c.Body), app.Name)
		return append(ops, events.Ops(ev)...), nil
	})
	if store.FailedOp(err) == checkArticle {
		return admin.Invalid("article_id", "does not exist") // deleted meanwhile
	}
	if err != nil {
		return err
	}
	present(&c, shop)
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &c, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop := admin.ShopFrom(ctx)
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var c Comment
	err = records.Update(ctx, h.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		c = Comment{}
		if err := records.Decode(it, &c); err != nil {
			return nil, err
		}
		var v admin.Validation
		at, publish := in.apply(&v, &c, false, shop.Location())
		if err := v.Err(); err != nil {
			return nil, err
		}
		if publish { // §3.1: a published_at publishes the comment
			c.PublishedAt, c.Status = at, StatusPublished
		}
		c.UpdatedAt = admin.Now()
		return []store.Op{records.PutNext(c.item(it.Version))}, nil
	})
	if err != nil {
		return err
	}
	present(&c, shop)
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &c, nil)
}

// errUnchanged ends an update that has nothing to write.
var errUnchanged = errors.New("comments: unchanged")

// act applies a moderation action and answers the comment unwrapped (§4.9).
func (h handler) act(w http.ResponseWriter, r *http.Request, a *action) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var c Comment
	err = records.Update(ctx, h.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		c = Comment{}
		if err := records.Decode(it, &c); err != nil {
			return nil, err
		}
		changed, err := a.apply(&c, admin.Now())
		if err != nil {
			return nil, err
		}
		if !changed {
			return nil, errUnchanged
		}
		return []store.Op{records.PutNext(c.item(it.Version))}, nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return err
	}
	present(&c, admin.ShopFrom(ctx))
	httpapi.WriteJSON(w, http.StatusOK, &c)
	return nil
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
