package comments_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store"
)

// holdDerived fails the change feed's derivations (the transactions that
// remove pending items) while held, as an unavailable store does.
type holdDerived struct {
	store.Store
	held atomic.Bool
}

func (h *holdDerived) Transact(ctx context.Context, ops ...store.Op) error {
	for i := range ops {
		if h.held.Load() && ops[i].Kind == store.OpDelete && ops[i].Key.PK == store.PendingPartition {
			return store.Unavailable("throttled", false, errors.New("held"))
		}
	}
	return h.Store.Transact(ctx, ops...)
}

// A comment's request commits the comment only: its counters, filter
// entries and create event come from the change feed, as of the commit
// (the event names the app and the article as they were then), and a
// deleted article's comments leave its counts and filters through it too.
func TestCommentsDerivedFromTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx := t.Context()
		hold := &holdDerived{}
		e.Change(func(d *platform.Deps) {
			hold.Store = store.Innermost(d.Store)
			api.UseStore(d, hold, true)
		})
		blog := fmt.Sprintf("/web/blogs/%d/articles", newsBlog)
		a := e.Do("POST", blog+".json", map[string]any{"article": map[string]any{"title": "Fed post"}}).Expect(t, 201).Object(t, "article")
		articleID := int64(a["id"].(float64))
		count := func(query string) int {
			t.Helper()
			return int(e.Do("GET", "/web/comments/count.json"+query, nil).Expect(t, 200).JSON(t)["count"].(float64))
		}
		listed := func(query string, id int64) bool {
			t.Helper()
			return slices.Contains(e.Do("GET", "/web/comments.json"+query, nil).Expect(t, 200).IDs(t, "comments"), id)
		}
		all, pending, published := count(""), count("?status=pending"), count("?status=published")
		ofArticle := fmt.Sprintf("?article_id=%d", articleID)

		hold.held.Store(true)
		c := create(t, e, articleID, map[string]any{"body": "As committed"})
		id := idOf(c)
		// Before the feed derives it, the app and the article are renamed.
		rewrite := func(k store.Key, from, to string) {
			it, err := hold.Store.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			it.Data = bytes.Replace(it.Data, []byte(from), []byte(to), 1)
			if err := hold.Store.Transact(ctx, store.Put(it, store.Always, 0)); err != nil {
				t.Fatal(err)
			}
		}
		rewrite(auth.AppKey(1001), `"name":"Demo App"`, `"name":"Renamed App"`)
		rewrite(articles.Key(articleID), `"title":"Fed post"`, `"title":"Renamed post"`)
		hold.held.Store(false)
		if err := e.Deps.Feed.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		evs := commentEvents(t, e, id)
		if len(evs) != 1 || evs[0].Verb != "create" || evs[0].Author != "Demo App" ||
			evs[0].Message != `New comment for <a href="/blogs/news/fed-post">Fed post</a> : As committed` {
			t.Fatalf("the create's events %+v: want one by Demo App naming Fed post, as they were when it committed", evs)
		}
		rewrite(auth.AppKey(1001), `"name":"Renamed App"`, `"name":"Demo App"`)

		if n := count(""); n != all+1 {
			t.Errorf("count %d after a create, want %d", n, all+1)
		}
		if n := count("?status=pending"); n != pending+1 || !listed("?status=pending", id) || listed("?status=published", id) {
			t.Errorf("pending count %d (want %d) or status lists without the new comment", n, pending+1)
		}
		if count(ofArticle) != 1 || !listed(ofArticle, id) {
			t.Error("the article's comments miss the new one")
		}

		e.Do("POST", path(c, "/approve"), nil).Expect(t, 200)
		if count("?status=pending") != pending || count("?status=published") != published+1 ||
			listed("?status=pending", id) || !listed("?status=published", id) || !listed("?published_status=published", id) {
			t.Error("an approved comment is not counted and listed as published only")
		}
		if evs := commentEvents(t, e, id); len(evs) != 1 {
			t.Errorf("events %+v: moderation logs none", evs)
		}

		e.Do("DELETE", fmt.Sprintf("%s/%d.json", blog, articleID), nil).Expect(t, 200)
		e.Do("GET", path(c, ""), nil).Expect(t, 404)
		if count("") != all || count("?status=published") != published || count(ofArticle) != 0 ||
			listed("?status=published", id) || listed(ofArticle, id) {
			t.Error("a deleted article's comment is still counted or listed")
		}
	}, api.Blogs)
}
