package articles

import (
	"cmp"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the article endpoints.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
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
	}
}

const wrapper, plural = "article", "articles"

// filter is the list and count filters of §4.8.
type filter struct {
	handle, tag, author string
	publishing.Filter
}

func parseFilter(q url.Values, shop *admin.Shop) (filter, error) {
	f := filter{handle: q.Get("handle"), tag: strings.TrimSpace(q.Get("tag")), author: strings.TrimSpace(q.Get("author"))}
	var err error
	f.Filter, err = publishing.ParseFilter(q, shop.Location())
	return f, err
}

func (f *filter) matches(a *Article) bool {
	return (f.handle == "" || a.Handle == f.handle) && (f.author == "" || a.Author == f.author) &&
		(f.tag == "" || slices.Contains(a.TagList(), f.tag)) &&
		f.Filter.Matches(a.CreatedAt, a.UpdatedAt, a.PublishedAt)
}

func (f *filter) empty() bool {
	return f.handle == "" && f.tag == "" && f.author == "" && f.Filter.Empty()
}

func (f *filter) matcher() records.Matcher {
	if f.empty() {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		var a Article
		if err := records.Decode(it, &a); err != nil {
			return false, err
		}
		return f.matches(&a), nil
	}
}

// blogFrom reads the {blog_id} of the path; an unknown blog is 404.
func (h handler) blogFrom(r *http.Request) (*Blog, error) {
	id, err := httpapi.ParseID(r, "blog_id")
	if err != nil {
		return nil, err
	}
	return LookupBlog(r.Context(), h.Store, id)
}

// find lists the blog's matching articles, newest first (ascending from
// since_id when given). A handle names at most one article, found through
// its guard; other filters are checked on each article of the blog's
// partition read.
func (h handler) find(r *http.Request, blog *Blog, f *filter, sinceID int64, offset, limit int) ([]Article, error) {
	ctx := r.Context()
	if f.handle != "" {
		id, err := handles.Owner(ctx, h.Store, HandleNamespace(blog.ID), f.handle)
		if err != nil || id == 0 || id <= sinceID || offset > 0 {
			return nil, err
		}
		a, err := Lookup(ctx, h.Store, id)
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return nil, nil
		}
		if err != nil || a.BlogID != blog.ID || !f.matches(a) {
			return nil, err
		}
		return []Article{*a}, nil
	}
	q := store.Query{Index: store.GSI1, PK: BlogIndex(blog.ID), Desc: true}
	if sinceID > 0 {
		q.After, q.Desc = records.IDSK(sinceID), false
	}
	items, err := records.List(ctx, h.Store, q, f.matcher(), offset, limit)
	if err != nil {
		return nil, err
	}
	return records.DecodeAll[Article](items)
}

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
	blog, err := h.blogFrom(r)
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
	list, err := h.find(r, blog, &f, pg.SinceID, pg.Offset(), pg.Limit)
	if err != nil {
		return err
	}
	for i := range list {
		present(&list[i], shop)
	}
	return httpapi.WriteList(w, plural, list, pg.Fields)
}

// count takes every filter of the list, not only the date filters and
// published_status the spec names.
func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	blog, err := h.blogFrom(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(ctx))
	if err != nil {
		return err
	}
	var n int
	switch {
	case f.empty():
		n, err = records.Count(ctx, h.Store, BlogIndex(blog.ID))
	case f.handle != "":
		var list []Article
		list, err = h.find(r, blog, &f, 0, 0, 1)
		n = len(list)
	default:
		n, err = records.CountMatching(ctx, h.Store, store.Query{Index: store.GSI1, PK: BlogIndex(blog.ID)}, f.matcher())
	}
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

// article reads the {id} of the path within the {blog_id}: an article of
// another blog is 404, as a missing one is.
func (h handler) article(r *http.Request, blogID int64) (*Article, error) {
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return nil, err
	}
	a, err := Lookup(r.Context(), h.Store, id)
	if err != nil {
		return nil, err
	}
	if a.BlogID != blogID {
		return nil, admin.NotFound
	}
	return a, nil
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	blogID, err := httpapi.ParseID(r, "blog_id")
	if err != nil {
		return err
	}
	a, err := h.article(r, blogID)
	if err != nil {
		return err
	}
	present(a, admin.ShopFrom(r.Context()))
	return httpapi.WriteOne(w, http.StatusOK, wrapper, a, httpapi.ParseFields(r.URL.Query()))
}

func (h handler) create(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	blog, err := h.blogFrom(r)
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	now := admin.Now()
	rec := record{Article: Article{BlogID: blog.ID, Author: app.Name, CreatedAt: now, UpdatedAt: now}}
	pub, img, err := in.apply(&rec.Article, true, shop.Location())
	if err != nil {
		return err
	}
	rec.PublishedAt, _ = publishing.Apply(admin.Time{}, pub.published, pub.at, true, now)
	var imageOps []store.Op
	newImage := images.Updater{Client: h.Outbound, IDs: h.IDs, Shop: shop, Change: img}
	if imageOps, err = newImage.Apply(ctx, h.Store, &rec.Image, &rec.ImageFile); err != nil {
		return err
	}
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	_, _, err = handles.Create(ctx, h.Store, h.IDs, HandleNamespace(blog.ID), explicit, rec.Title, func(id int64, handle string) ([]store.Op, error) {
		rec.ID, rec.Handle = id, handle
		item := rec.item(1)
		if len(item.Data) > records.MaxData {
			return nil, admin.Invalid("body_html", "is too long (the article may take at most 350 KB stored)")
		}
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerArticle, id, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops := []store.Op{store.Put(item, store.IfAbsent, 0), records.CountOp(BlogIndex(blog.ID), 1)}
		ops = append(ops, counterOps(nil, &rec.Article)...)
		ops = append(ops, imageOps...)
		ops = append(ops, mops...)
		ops = append(ops, events.Ops(events.New(h.IDs, rec.Subject(blog), events.Create, "", app.Name))...)
		if !fits(ops, 1) { // handles.Create adds the claim
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if err != nil {
		return err
	}
	present(&rec.Article, shop)
	return httpapi.WriteOne(w, http.StatusCreated, wrapper, &rec.Article, nil)
}

func (h handler) update(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	blog, err := h.blogFrom(r)
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var in input
	if err := httpapi.Decode(r, wrapper, &in); err != nil {
		return err
	}
	var rec record
	// A new image is resolved (downloaded) once, even if the write is retried.
	image := images.Updater{Client: h.Outbound, IDs: h.IDs, Shop: shop}
	claimAt := -1
	err = records.Update(ctx, h.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		rec = record{}
		if err := records.Decode(it, &rec); err != nil {
			return nil, err
		}
		if rec.BlogID != blog.ID {
			return nil, admin.NotFound
		}
		old := rec
		pub, img, err := in.apply(&rec.Article, false, shop.Location())
		if err != nil {
			return nil, err
		}
		image.Change = img
		fileOps, err := image.Apply(ctx, h.Store, &rec.Image, &rec.ImageFile)
		if err != nil {
			return nil, err
		}
		now := admin.Now()
		var change publishing.Change
		rec.PublishedAt, change = publishing.Apply(rec.PublishedAt, pub.published, pub.at, false, now)
		rec.UpdatedAt = now
		if in.Handle != nil {
			rec.Handle = *in.Handle
		}
		item := records.PutNext(rec.item(it.Version))
		if len(item.Item.Data) > records.MaxData {
			return nil, admin.Invalid("body_html", "is too long (the article may take at most 350 KB stored)")
		}
		ops := []store.Op{item}
		claimAt = -1
		if rec.Handle != old.Handle {
			claimAt = len(ops)
			ops = append(ops, handles.Claim(HandleNamespace(blog.ID), rec.Handle, rec.ID), handles.Release(HandleNamespace(blog.ID), old.Handle))
		}
		ops = append(ops, counterOps(&old.Article, &rec.Article)...)
		ops = append(ops, fileOps...)
		mops, err := metafields.Ops(ctx, h.Store, h.IDs, metafields.OwnerArticle, rec.ID, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		ops = append(ops, events.Ops(events.New(h.IDs, rec.Subject(blog), events.UpdateVerb(change), "", app.Name))...)
		if !fits(ops, 0) {
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if claimAt > 0 && store.FailedOp(err) == claimAt {
		return admin.Invalid("handle", admin.MsgTaken)
	}
	if err != nil {
		return err
	}
	present(&rec.Article, shop)
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &rec.Article, nil)
}

// delete removes the article, its handle, counters, image file and
// metafields in one transaction; when they would not fit in one, the image
// and metafields are removed by further transactions after the article.
func (h handler) delete(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	app := admin.AppFrom(ctx)
	blog, err := h.blogFrom(r)
	if err != nil {
		return err
	}
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var rest []store.Op
	err = records.Update(ctx, h.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		var rec record
		if err := records.Decode(it, &rec); err != nil {
			return nil, err
		}
		if rec.BlogID != blog.ID {
			return nil, admin.NotFound
		}
		ops := []store.Op{
			store.Delete(it.Key(), store.IfVersion, it.Version),
			handles.Release(HandleNamespace(blog.ID), rec.Handle),
			records.CountOp(BlogIndex(blog.ID), -1),
		}
		ops = append(ops, counterOps(&rec.Article, nil)...)
		ops = append(ops, events.Ops(events.New(h.IDs, rec.Subject(blog), events.Destroy, "", app.Name))...)
		extra, err := images.DeleteFileOps(ctx, h.Store, rec.ImageFile)
		if err != nil {
			return nil, err
		}
		mops, err := metafields.DeleteOwnerOps(ctx, h.Store, metafields.OwnerArticle, rec.ID)
		if err != nil {
			return nil, err
		}
		extra = append(extra, mops...)
		if all := append(slices.Clip(ops), extra...); fits(all, 0) {
			rest = nil
			return all, nil
		}
		rest = extra
		return ops, nil
	})
	if err != nil {
		return err
	}
	// Leftovers of a large article: their owner is gone, so removing them
	// later is harmless, and each op is idempotent.
	// The article's comments go with it, like its leftovers, after it.
	cops, err := comments.DeleteOfArticleOps(ctx, h.Store, id)
	if err != nil {
		return err
	}
	if err := records.TransactBatches(ctx, h.Store, append(rest, cops...)); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}

// authors answers {"authors": [...]}: the distinct authors of the shop's
// articles, sorted. Each author has a counter item (articleauthor/<name>)
// kept in the articles' transactions, so this is one Query of that
// partition, however many articles there are.
func (h handler) authors(w http.ResponseWriter, r *http.Request) error {
	list, _, err := names(r.Context(), h.Store, authorPartition)
	if err != nil {
		return err
	}
	sortNames(list)
	httpapi.WriteJSON(w, http.StatusOK, map[string][]string{"authors": nonNil(list)})
	return nil
}

// tags answers {"tags": [...]}: the tags of the blog's articles, sorted
// alphabetically, or with popular=1 by how many articles use them (most
// first, ties alphabetically); limit caps the list. The per-blog tag
// counters (articletag#<blog id>/<tag>) make it one Query.
func (h handler) tags(w http.ResponseWriter, r *http.Request) error {
	blog, err := h.blogFrom(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	limit := 0
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > httpapi.MaxLimit {
			return admin.BadParam("limit", "must be an integer between 1 and 250")
		}
		limit = n
	}
	popular := false
	switch q.Get("popular") {
	case "", "0", "false":
	case "1", "true":
		popular = true
	default:
		return admin.BadParam("popular", "must be 1 or 0")
	}
	list, counts, err := names(r.Context(), h.Store, tagPartition(blog.ID))
	if err != nil {
		return err
	}
	sortNames(list)
	if popular {
		slices.SortStableFunc(list, func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	}
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string][]string{"tags": nonNil(list)})
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
