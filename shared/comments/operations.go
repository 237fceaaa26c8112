package comments

import (
	"context"
	"errors"
	"net/netip"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the comment operations: plain functions of a context and
// typed input.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock}
}

// List returns the window of the matching comments after sinceID, and
// where it lies: one paged Query of the partition the filters name
// (source), in id order or in the order of the range read.
func (s Service) List(ctx context.Context, f *Filter, sinceID int64, w records.Window) ([]Comment, records.Span, error) {
	q, match := f.source(sinceID)
	return records.Spanned[Comment](records.ListWindow(ctx, s.Store, q, match, w))
}

// Count counts the matching comments: the partition's sharded counter when
// it is the whole filter, else a count of the source's keys.
func (s Service) Count(ctx context.Context, f *Filter) (int, error) {
	q, match := f.source(0)
	if match == nil && q.After == "" && q.Before == "" {
		return records.Count(ctx, s.Store, q.PK)
	}
	return records.CountMatching(ctx, s.Store, q, match)
}

// Get returns one comment.
func (s Service) Get(ctx context.Context, id int64) (Comment, error) {
	var c Comment
	_, err := records.Get(ctx, s.Store, Key(id), &c)
	return c, err
}

// target looks up the article and blog a new comment names, adding a
// validation message when they do not exist or do not belong together.
func (s Service) target(ctx context.Context, v *admin.Validation, in *Input) (*articleRef, *blogRef, error) {
	if in.BlogID == nil || *in.BlogID <= 0 {
		v.Add("blog_id", admin.MsgBlank)
	}
	if in.ArticleID == nil || *in.ArticleID <= 0 {
		v.Add("article_id", admin.MsgBlank)
	}
	if v.Has("blog_id") || v.Has("article_id") {
		return nil, nil, nil
	}
	var a articleRef
	if _, err := records.Get(ctx, s.Store, articleKey(*in.ArticleID), &a); err != nil {
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
	if _, err := records.Get(ctx, s.Store, blogKey(a.BlogID), &b); err != nil {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			v.Add("blog_id", "does not exist")
			return nil, nil, nil
		}
		return nil, nil, err
	}
	return &a, &b, nil
}

// Create adds a pending comment to an article: the comment, on the
// condition that the article still exists (its counters, entries and
// Comment event are the change feed's, Derive). The body's ip and user_agent, when absent, are
// the client's.
func (s Service) Create(ctx context.Context, in *Input, client Client) (Comment, error) {
	shop := admin.ShopFrom(ctx)
	now := admin.At(s.Clock.Now())
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
		c.IP = client.IP
	}
	if in.UserAgent != nil {
		if ua := strings.TrimSpace(*in.UserAgent); len([]rune(ua)) > maxUserAgent {
			v.Add("user_agent", admin.TooLong(maxUserAgent))
		} else if ua != "" {
			c.UserAgent = &ua
		}
	} else if ua := strings.TrimSpace(client.UserAgent); ua != "" {
		ua = truncate(ua, maxUserAgent)
		c.UserAgent = &ua
	}
	article, blog, err := s.target(ctx, &v, in)
	if err != nil {
		return Comment{}, err
	}
	if err := v.Err(); err != nil {
		return Comment{}, err
	}
	c.ArticleID, c.BlogID = article.ID, blog.ID
	_, err = records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		c.ID = id
		// created_at is the id's second, so that created_at ranges are id ranges.
		stamp := admin.Time{Time: ids.Time(id)}
		if c.PublishedAt == now {
			c.PublishedAt = stamp
		}
		c.CreatedAt, c.UpdatedAt = stamp, stamp
		it := c.item(1)
		records.Stamp(ctx, &it, s.IDs.Next())
		records.StampNames(&it, names(blog, article))
		return []store.Op{store.Put(it, store.IfAbsent, 0), store.Check(articleKey(article.ID), store.IfPresent, 0)}, nil
	})
	if store.FailedOn(err, articleKey(article.ID)) {
		return Comment{}, admin.Invalid("article_id", "does not exist") // deleted meanwhile
	}
	if err != nil {
		return Comment{}, err
	}
	return c, nil
}

// Update changes a comment's author, body, email or published_at (which
// publishes it, schema CommentStatus): an optimistic update of the comment.
func (s Service) Update(ctx context.Context, id int64, in *Input) (Comment, error) {
	loc := admin.ShopFrom(ctx).Location()
	var c Comment
	err := records.Update(ctx, s.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		c = Comment{}
		if err := records.Decode(it, &c); err != nil {
			return nil, err
		}
		old := c
		var v admin.Validation
		at, publish := in.apply(&v, &c, false, loc)
		if err := v.Err(); err != nil {
			return nil, err
		}
		// schema CommentStatus: a published_at publishes the comment; the
		// stored one, echoed by a whole-object save, changes nothing.
		if publish && !at.Equal(old.PublishedAt.Time) {
			c.PublishedAt, c.Status = at, StatusPublished
		}
		c.UpdatedAt = admin.At(s.Clock.Now())
		return Rewrite(ctx, &c, it.Version, s.IDs.Next()), nil
	})
	if err != nil {
		return Comment{}, err
	}
	return c, nil
}

// The moderation actions of schema CommentStatus (see actions for the state
// machine).

// Approve publishes a pending or unapproved comment.
func (s Service) Approve(ctx context.Context, id int64) (Comment, error) {
	return s.moderate(ctx, id, actionNamed("approve"))
}

// Spam marks a comment as spam.
func (s Service) Spam(ctx context.Context, id int64) (Comment, error) {
	return s.moderate(ctx, id, actionNamed("spam"))
}

// NotSpam publishes a comment marked as spam.
func (s Service) NotSpam(ctx context.Context, id int64) (Comment, error) {
	return s.moderate(ctx, id, actionNamed("not_spam"))
}

// Remove removes a comment.
func (s Service) Remove(ctx context.Context, id int64) (Comment, error) {
	return s.moderate(ctx, id, actionNamed("remove"))
}

// Restore publishes a removed comment.
func (s Service) Restore(ctx context.Context, id int64) (Comment, error) {
	return s.moderate(ctx, id, actionNamed("restore"))
}

// errUnchanged ends an update that has nothing to write.
var errUnchanged = errors.New("comments: unchanged")

// moderate applies a moderation action: an optimistic update of the
// comment, or no write when it is in the action's state already.
func (s Service) moderate(ctx context.Context, id int64, a *action) (Comment, error) {
	var c Comment
	err := records.Update(ctx, s.Store, Key(id), func(it *store.Item) ([]store.Op, error) {
		c = Comment{}
		if err := records.Decode(it, &c); err != nil {
			return nil, err
		}
		changed, err := a.apply(&c, admin.At(s.Clock.Now()))
		if err != nil {
			return nil, err
		}
		if !changed {
			return nil, errUnchanged
		}
		return Rewrite(ctx, &c, it.Version, s.IDs.Next()), nil
	})
	if err != nil && !errors.Is(err, errUnchanged) {
		return Comment{}, err
	}
	return c, nil
}
