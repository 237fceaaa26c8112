package articles_test

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
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

// probe reads what a test of the feed checks, through the handler.
type probe struct {
	t    *testing.T
	e    *apitest.Env
	hold *holdDerived
}

func (p *probe) count(query string) int {
	p.t.Helper()
	return int(p.e.Do("GET", news+"/count.json"+query, nil).Expect(p.t, 200).JSON(p.t)["count"].(float64))
}

func (p *probe) listed(query string, id int64) bool {
	p.t.Helper()
	return slices.Contains(p.e.Do("GET", news+".json"+query, nil).Expect(p.t, 200).IDs(p.t, "articles"), id)
}

// has says whether the names list at path (authors.json, tags.json) holds name.
func (p *probe) has(path, key, name string) bool {
	p.t.Helper()
	return slices.Contains(p.e.Do("GET", path, nil).Expect(p.t, 200).JSON(p.t)[key].([]any), any(name))
}

func (p *probe) logged(id int64) []events.Event {
	p.t.Helper()
	items, _, err := p.e.Deps.Store.Query(p.t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Article, id)})
	if err != nil {
		p.t.Fatal(err)
	}
	evs, err := records.DecodeAll[events.Event](items)
	if err != nil {
		p.t.Fatal(err)
	}
	return evs
}

// rewrite changes a stored item's data beneath the feed.
func (p *probe) rewrite(k store.Key, from, to string) {
	p.t.Helper()
	it, err := p.hold.Store.Get(p.t.Context(), k)
	if err != nil {
		p.t.Fatal(err)
	}
	it.Data = bytes.Replace(it.Data, []byte(from), []byte(to), 1)
	if err := p.hold.Store.Transact(p.t.Context(), store.Put(it, store.Always, 0)); err != nil {
		p.t.Fatal(err)
	}
}

// An article's request commits the article, its guard, image and
// metafields only: the blog's counts, the author and tag counters that
// authors.json and tags.json read, the filter entries and the event come
// from the change feed, as of the commit (the event names the app and the
// blog as they were then), for a create, an update and a delete.
func TestArticlesDerivedFromTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		p := &probe{t: t, e: e, hold: &holdDerived{}}
		e.Change(func(d *platform.Deps) {
			p.hold.Store = store.Innermost(d.Store)
			api.UseStore(d, p.hold, true)
		})
		all, published, unpublished := p.count(""), p.count("?published_status=published"), p.count("?published_status=unpublished")
		a := fedCreate(p)
		if p.count("") != all+1 || p.count("?published_status=published") != published+1 || !p.listed("?published_status=published", id(a)) {
			t.Error("a published create is not counted or listed as published")
		}
		fedUpdate(p, a, published, unpublished)
		e.Do("DELETE", path(a), nil).Expect(t, 200)
		if p.count("") != all || p.count("?published_status=unpublished") != unpublished || p.listed("?tag=other", id(a)) || p.listed("", id(a)) {
			t.Error("a deleted article is still counted or listed")
		}
		if p.has("/web/articles/authors.json", "authors", "Other Writer") || p.has(news+"/tags.json", "tags", "other") {
			t.Error("authors.json or tags.json still show the deleted article's")
		}
		evs := p.logged(id(a))
		if len(evs) != 3 || !slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Verb == "destroy" && ev.Author == "Demo App" }) {
			t.Errorf("events %+v: want a destroy by Demo App", evs)
		}
	}, group)
}

// fedCreate creates an article whose derivation waits while the app and
// the blog are renamed: its event shows them as they were at the commit.
func fedCreate(p *probe) map[string]any {
	t := p.t
	blogKey := store.Key{PK: parents.BlogPartition, SK: records.IDSK(newsID)}
	p.hold.held.Store(true)
	a := create(t, p.e, map[string]any{"title": "Fed article", "author": "Fed Writer", "tags": "fedtag, shared"})
	p.rewrite(auth.AppKey(1001), `"name":"Demo App"`, `"name":"Renamed App"`)
	p.rewrite(blogKey, `"handle":"news"`, `"handle":"renamed"`)
	p.hold.held.Store(false)
	if err := p.e.Deps.Feed.Drain(t.Context()); err != nil {
		t.Fatal(err)
	}
	p.rewrite(auth.AppKey(1001), `"name":"Renamed App"`, `"name":"Demo App"`)
	p.rewrite(blogKey, `"handle":"renamed"`, `"handle":"news"`)
	if evs := p.logged(id(a)); len(evs) != 1 || evs[0].Verb != "create" || evs[0].Author != "Demo App" ||
		evs[0].Path == nil || *evs[0].Path != "/blogs/news/fed-article" {
		t.Fatalf("the create's events %+v: want one by Demo App at /blogs/news/fed-article, as they were when it committed", evs)
	}
	if !p.listed("?tag=fedtag", id(a)) || !p.listed("?author=Fed+Writer", id(a)) || p.count("?tag=fedtag") != 1 {
		t.Error("the tag and author filters miss the new article")
	}
	if !p.has("/web/articles/authors.json", "authors", "Fed Writer") || !p.has(news+"/tags.json", "tags", "fedtag") {
		t.Error("authors.json or tags.json miss the new article's")
	}
	return a
}

// fedUpdate unpublishes a and moves its tags and author.
func fedUpdate(p *probe, a map[string]any, published, unpublished int) {
	t := p.t
	update(t, p.e, a, map[string]any{"published": false, "tags": "shared, other", "author": "Other Writer"})
	evs := p.logged(id(a))
	if len(evs) != 2 || (evs[0].Verb != "unpublished" && evs[1].Verb != "unpublished") {
		t.Errorf("events %+v: want the create's and an unpublished", evs)
	}
	if p.count("?published_status=published") != published || p.count("?published_status=unpublished") != unpublished+1 ||
		p.listed("?published_status=published", id(a)) || !p.listed("?published_status=unpublished", id(a)) {
		t.Error("an unpublished article is not counted and listed as unpublished only")
	}
	if p.listed("?tag=fedtag", id(a)) || !p.listed("?tag=other", id(a)) || p.listed("?author=Fed+Writer", id(a)) || !p.listed("?author=Other+Writer", id(a)) {
		t.Error("the tag and author filters do not follow the update")
	}
	if p.has("/web/articles/authors.json", "authors", "Fed Writer") || p.has(news+"/tags.json", "tags", "fedtag") || !p.has(news+"/tags.json", "tags", "other") {
		t.Error("authors.json or tags.json do not follow the update")
	}
}
