package articles

import (
	"cmp"
	"context"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the article operations: plain functions of a context and
// typed input. The blog an operation works in is read first (LookupBlog),
// so that an unknown blog is 404 before anything else of the request.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// Outbound fetches what a user names by URL.
	Outbound *outbound.Client
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, Outbound: d.Outbound}
}

// List returns the window of the blog's matching articles, newest first
// (ascending from sinceID when given), and where it lies. A handle names at
// most one article, found through its guard (a page without neighbours);
// other filters read their source (Filter.source): keys and, for Ref
// entries, a GetItem per article.
func (s Service) List(ctx context.Context, blogID int64, f *Filter, sinceID int64, w records.Window) ([]Article, records.Span, error) {
	blog, err := LookupBlog(ctx, s.Store, blogID)
	if err != nil {
		return nil, records.Span{}, err
	}
	if f.Handle != "" {
		a, err := s.byHandle(ctx, blog, f, sinceID)
		if err != nil || a == nil || w.Offset > 0 || w.Cursor.Key != "" {
			return nil, records.Span{}, err
		}
		return []Article{*a}, records.Span{}, nil
	}
	q, match, refs := f.source(blog.ID, sinceID)
	return records.Spanned[Article](records.ListSource(ctx, s.Store, q, match, refs, w))
}

// byHandle is the blog's article the filter's handle names if it matches
// the other filters and comes after sinceID, else nil.
func (s Service) byHandle(ctx context.Context, blog *Blog, f *Filter, sinceID int64) (*Article, error) {
	id, err := handles.Owner(ctx, s.Store, HandleNamespace(blog.ID), f.Handle)
	if err != nil || id == 0 || id <= sinceID {
		return nil, err
	}
	a, err := Lookup(ctx, s.Store, id)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return nil, nil
	}
	if err != nil || a.BlogID != blog.ID || !f.matches(a) {
		return nil, err
	}
	return a, nil
}

// Count counts the blog's matching articles: the sharded counter without
// filters or by published state, the handle's guard with one, else the
// keys of the source (a GetItem each where a combination over Ref entries
// needs the article).
// It takes every filter of the list, not only the date filters and
// published_status the spec names.
func (s Service) Count(ctx context.Context, blogID int64, f *Filter) (int, error) {
	blog, err := LookupBlog(ctx, s.Store, blogID)
	if err != nil {
		return 0, err
	}
	switch {
	case f.empty():
		return records.Count(ctx, s.Store, BlogIndex(blog.ID))
	case f.Handle != "":
		a, err := s.byHandle(ctx, blog, f, 0)
		if a == nil {
			return 0, err
		}
		return 1, err
	default:
		q, match, refs := f.source(blog.ID, 0)
		if match == nil && q.Index == store.GSI2 && q.After == "" && q.Before == "" {
			return records.Count(ctx, s.Store, q.PK) // the state's counter
		}
		return records.CountSource(ctx, s.Store, q, match, refs)
	}
}

// Get returns the article id of the blog blogID: an article of another
// blog is admin.NotFound, as a missing one is. The blog itself is not read.
func (s Service) Get(ctx context.Context, blogID, id int64) (Article, error) {
	a, err := Lookup(ctx, s.Store, id)
	if err != nil {
		return Article{}, err
	}
	if a.BlogID != blogID {
		return Article{}, admin.NotFound
	}
	return *a, nil
}

// Find returns the article id, of whichever blog (GraphQL's article(id:)
// names no blog).
func (s Service) Find(ctx context.Context, id int64) (Article, error) {
	a, err := Lookup(ctx, s.Store, id)
	if err != nil {
		return Article{}, err
	}
	return *a, nil
}

// Blog returns the seeded blog id.
func (s Service) Blog(ctx context.Context, id int64) (Blog, error) {
	b, err := LookupBlog(ctx, s.Store, id)
	if err != nil {
		return Blog{}, err
	}
	return *b, nil
}

// Create adds an article to the blog: the article, its handle claim, image
// chunks and metafields in one transaction; the blog's counts, author and
// tag counters, filter entries and Article event are the change feed's
// (Derive).
func (s Service) Create(ctx context.Context, blogID int64, in *Input) (Article, error) {
	blog, err := LookupBlog(ctx, s.Store, blogID)
	if err != nil {
		return Article{}, err
	}
	shop, app := admin.ShopFrom(ctx), admin.AppFrom(ctx)
	now := admin.At(s.Clock.Now())
	rec := record{Article: Article{BlogID: blog.ID, Author: app.Name, CreatedAt: now, UpdatedAt: now}}
	pub, img, err := in.apply(&rec.Article, true, shop.Location())
	if err != nil {
		return Article{}, err
	}
	rec.PublishedAt, _ = publishing.Apply(admin.Time{}, pub.published, pub.at, true, now)
	var imageOps []store.Op
	newImage := images.Updater{Client: s.Outbound, Clock: s.Clock, IDs: s.IDs, Shop: shop, Change: img}
	if imageOps, err = newImage.Apply(ctx, s.Store, &rec.Image, &rec.ImageFile); err != nil {
		return Article{}, err
	}
	explicit := ""
	if in.Handle != nil {
		explicit = *in.Handle
	}
	_, _, err = handles.Create(ctx, s.Store, s.IDs, HandleNamespace(blog.ID), explicit, rec.Title, func(id int64, handle string) ([]store.Op, error) {
		rec.ID, rec.Handle = id, handle
		// created_at is the id's second, so that created_at ranges are id ranges.
		rec.CreatedAt = admin.Time{Time: ids.Time(id)}
		if rec.UpdatedAt.Before(rec.CreatedAt.Time) {
			rec.UpdatedAt = rec.CreatedAt
		}
		item := rec.item(1)
		if len(item.Data) > records.MaxData {
			return nil, errTooLarge
		}
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerArticle, id, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		stamp(ctx, &item, s.IDs.Next(), blog)
		ops := []store.Op{store.Put(item, store.IfAbsent, 0)}
		ops = append(ops, imageOps...)
		ops = append(ops, mops...)
		if !fits(ops, 1, nil, &rec, &item) { // handles.Create adds the claim
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if err != nil {
		return Article{}, err
	}
	return rec.Article, nil
}

// Update changes the blog's article id: an optimistic update of the
// article with its handle claim, image chunks and metafields (its counters,
// entries and Article event are the change feed's).
func (s Service) Update(ctx context.Context, blogID int64, id int64, in *Input) (Article, error) {
	blog, err := LookupBlog(ctx, s.Store, blogID)
	if err != nil {
		return Article{}, err
	}
	shop := admin.ShopFrom(ctx)
	var rec record
	// A new image is resolved (downloaded) once, even if the write is retried.
	image := images.Updater{Client: s.Outbound, Clock: s.Clock, IDs: s.IDs, Shop: shop}
	var claim store.Key // the handle or guard the change claims, if any
	err = records.Update(ctx, s.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
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
		fileOps, err := image.Apply(ctx, s.Store, &rec.Image, &rec.ImageFile)
		if err != nil {
			return nil, err
		}
		now := admin.At(s.Clock.Now())
		rec.PublishedAt, _ = publishing.Apply(rec.PublishedAt, pub.published, pub.at, false, now)
		rec.UpdatedAt = now
		if in.Handle != nil {
			rec.Handle = *in.Handle
		}
		item := records.PutNext(rec.item(it.Version))
		if len(item.Item.Data) > records.MaxData {
			return nil, errTooLarge
		}
		stamp(ctx, &item.Item, s.IDs.Next(), blog)
		ops := []store.Op{item}
		claim = store.Key{}
		if rec.Handle != old.Handle {
			claimOp := handles.Claim(HandleNamespace(blog.ID), rec.Handle, rec.ID)
			claim = claimOp.TargetKey()
			ops = append(ops, claimOp, handles.Release(HandleNamespace(blog.ID), old.Handle))
		}
		ops = append(ops, fileOps...)
		mops, err := metafields.Ops(ctx, s.Store, s.IDs, metafields.OwnerArticle, rec.ID, in.Metafields, now)
		if err != nil {
			return nil, err
		}
		ops = append(ops, mops...)
		if !fits(ops, 0, &old, &rec, &item.Item) {
			return nil, errTooManyChanges
		}
		return ops, nil
	})
	if store.FailedOn(err, claim) {
		return Article{}, admin.Invalid("handle", admin.MsgTaken)
	}
	if err != nil {
		return Article{}, err
	}
	return rec.Article, nil
}

// Delete removes the blog's article id (its tomb saying who did) and its
// handle in one transaction; its counters, entries and event are the change
// feed's, and so is its clean-up (CleanUp: image file, metafields,
// comments).
func (s Service) Delete(ctx context.Context, blogID int64, id int64) error {
	blog, err := LookupBlog(ctx, s.Store, blogID)
	if err != nil {
		return err
	}
	return records.Update(ctx, s.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		var rec record
		if err := records.Decode(it, &rec); err != nil {
			return nil, err
		}
		if rec.BlogID != blog.ID {
			return nil, admin.NotFound
		}
		// Its tomb says who deleted it: its counts, entries, event and
		// clean-up are the change feed's (Derive, CleanUp).
		ops, tomb := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		records.StampNames(tomb, stampedNames(blog))
		return append(ops, handles.Release(HandleNamespace(blog.ID), rec.Handle)), nil
	})
}

// CleanUp removes what a removed article owned (store.CleanUp): its image
// file, its metafields and its comments, each removal idempotent.
func CleanUp(ctx context.Context, st store.Store, owner *store.Item) error {
	var rec record
	if err := records.Decode(owner, &rec); err != nil {
		return err
	}
	ops, err := images.DeleteFileOps(ctx, st, rec.ImageFile)
	if err != nil {
		return err
	}
	mops, err := metafields.DeleteOwnerOps(ctx, st, metafields.OwnerArticle, rec.ID)
	if err != nil {
		return err
	}
	cops, err := comments.DeleteOfArticleOps(ctx, st, rec.ID)
	if err != nil {
		return err
	}
	return records.TransactBatches(ctx, st, append(append(ops, mops...), cops...))
}

// Authors returns the distinct authors of the shop's articles, sorted.
// Each author has a counter item (articleauthor/<name>) kept in the
// articles' transactions, so this is one Query of that partition, however
// many articles there are.
func (s Service) Authors(ctx context.Context) ([]string, error) {
	list, _, err := names(ctx, s.Store, authorPartition)
	if err != nil {
		return nil, err
	}
	sortNames(list)
	return nonNil(list), nil
}

// Tags returns the tags of the blog's articles (blogID 0: of every blog's,
// the shop-wide GET articles/tags), sorted alphabetically, or with
// q.Popular by how many articles use them (most first, ties
// alphabetically); q.Limit caps the list. The per-blog tag counters
// (articletag#<blog id>/<tag>) make it one Query a blog: shop-wide, one of
// the blogs' partition and one of each blog's counters.
func (s Service) Tags(ctx context.Context, blogID int64, q TagsQuery) ([]string, error) {
	var blogs []int64
	if blogID != 0 {
		blog, err := LookupBlog(ctx, s.Store, blogID)
		if err != nil {
			return nil, err
		}
		blogs = append(blogs, blog.ID)
	} else {
		err := records.Each(ctx, s.Store, store.Query{PK: parents.BlogPartition}, func(it *store.Item) error {
			var b Blog
			err := records.Decode(it, &b)
			if b.ID != 0 {
				blogs = append(blogs, b.ID)
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	var list []string
	counts := map[string]int64{}
	for _, b := range blogs {
		names, n, err := names(ctx, s.Store, tagPartition(b))
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			if counts[name] == 0 {
				list = append(list, name)
			}
			counts[name] += n[name]
		}
	}
	sortNames(list)
	if q.Popular {
		slices.SortStableFunc(list, func(a, b string) int { return cmp.Compare(counts[b], counts[a]) })
	}
	if q.Limit > 0 && len(list) > q.Limit {
		list = list[:q.Limit]
	}
	return nonNil(list), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
