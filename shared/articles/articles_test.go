package articles_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

var group = api.Group{Name: "blogs", Routes: articles.Routes}

// The demo seed's blog.
const (
	newsID = 241253187
	news   = "/web/blogs/241253187/articles"
)

func create(t *testing.T, e *apitest.Env, fields map[string]any) map[string]any {
	t.Helper()
	return createIn(t, e, news, fields)
}

func createIn(t *testing.T, e *apitest.Env, base string, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("POST", base+".json", map[string]any{"article": fields}).Expect(t, 201).Object(t, "article")
}

func id(a map[string]any) int64 { return int64(a["id"].(float64)) }

func path(a map[string]any) string {
	return fmt.Sprintf("/web/blogs/%d/articles/%d.json", int64(a["blog_id"].(float64)), id(a))
}

func update(t *testing.T, e *apitest.Env, a map[string]any, fields map[string]any) map[string]any {
	t.Helper()
	return e.Do("PUT", path(a), map[string]any{"article": fields}).Expect(t, 200).Object(t, "article")
}

// addBlog stores a blog as the seed would (blogs have no endpoints).
func addBlog(t *testing.T, e *apitest.Env, blogID int64, handle string) string {
	t.Helper()
	data, _ := json.Marshal(map[string]any{"id": blogID, "title": strings.ToUpper(handle), "handle": handle})
	it := store.Item{PK: parents.BlogPartition, SK: records.IDSK(blogID), Version: 1, Data: data}
	if err := e.Deps.Store.Transact(t.Context(), store.Put(it, store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("/web/blogs/%d/articles", blogID)
}

// articleEvents reads the events log directly: the events endpoints are another group.
func articleEvents(t *testing.T, e *apitest.Env, articleID int64) []events.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Article, articleID)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := records.DecodeAll[events.Event](items)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func verbs(evs []events.Event) string {
	var v []string
	for _, ev := range evs {
		v = append(v, ev.Verb)
	}
	return strings.Join(v, ",")
}

func pngOf(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func metafieldInputs(n int) []any {
	var out []any
	for i := range n {
		out = append(out, map[string]any{"namespace": "bulk", "key": fmt.Sprintf("key%03d", i), "value": "v", "value_type": "string"})
	}
	return out
}

func ids(list []any) []int64 {
	var out []int64
	for _, a := range list {
		out = append(out, id(a.(map[string]any)))
	}
	return out
}

func strs(v any) []string {
	var out []string
	for _, s := range v.([]any) {
		out = append(out, s.(string))
	}
	return out
}

// fileChunks counts the stored chunks of an attached image, by its src.
func fileChunks(t *testing.T, e *apitest.Env, src string) int {
	t.Helper()
	var fileID int64
	if _, err := fmt.Sscanf(src[strings.Index(src, "/files/")+len("/files/"):], "%d/", &fileID); err != nil {
		t.Fatalf("src %s: %v", src, err)
	}
	n, err := e.Deps.Store.Count(t.Context(), store.Query{PK: images.FilePartition(fileID)})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestArticles(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("create fills the defaults and logs an event", func(t *testing.T) { articleCreateDefaults(t, e) })
		t.Run("validation", func(t *testing.T) { articleValidation(t, e) })
		t.Run("tags are trimmed, de-duplicated and sorted", func(t *testing.T) {
			a := create(t, e, map[string]any{"title": "Tagged", "tags": " Mystery, banana ,apple,, banana,Zeta , apple"})
			if a["tags"] != "apple, banana, Mystery, Zeta" {
				t.Fatalf("tags %q", a["tags"])
			}
			if u := update(t, e, a, map[string]any{"tags": "zz,  aa"}); u["tags"] != "aa, zz" {
				t.Fatalf("tags %q", u["tags"])
			}
			if u := update(t, e, a, map[string]any{"tags": ""}); u["tags"] != "" {
				t.Fatalf("tags %q", u["tags"])
			}
		})
		t.Run("published_at accepts date-time text and returns ISO 8601", func(t *testing.T) { articlePublishedAt(t, e) })
		t.Run("publishing convention, update and destroy events", func(t *testing.T) { articlePublishingAndEvents(t, e) })
		t.Run("handles are settable and unique per blog", func(t *testing.T) { articleHandles(t, e) })
		t.Run("delete answers {}, removes metafields and releases the handle", func(t *testing.T) { articleDeleteSteps(t, e) })
		t.Run("a large article is deleted whole", func(t *testing.T) {
			var many []string
			for i := range 40 {
				many = append(many, fmt.Sprintf("many%d", i))
			}
			a := create(t, e, map[string]any{"title": "Large", "tags": strings.Join(many, ", ")})
			update(t, e, a, map[string]any{"metafields": metafieldInputs(40)})
			owner := store.Query{Index: store.GSI1, PK: metafields.OwnerPartition(metafields.OwnerArticle, id(a))}
			if n, _ := e.Deps.Store.Count(t.Context(), owner); n != 40 {
				t.Fatalf("%d metafields", n)
			}
			e.Do("DELETE", path(a), nil).Expect(t, 200)
			if n, _ := e.Deps.Store.Count(t.Context(), owner); n != 0 {
				t.Fatalf("%d metafields outlive their article", n)
			}
			if tg := strs(e.Do("GET", news+"/tags.json", nil).Expect(t, 200).JSON(t)["tags"]); slices.Contains(tg, "many0") {
				t.Fatalf("tags %v", tg)
			}
		})
		t.Run("articles belong to their blog", func(t *testing.T) { articlesBelongToTheirBlog(t, e) })
		t.Run("scopes", func(t *testing.T) {
			e.DoAs(apitest.ReadOnlyToken, "GET", news+".json", nil).Expect(t, 200)
			e.DoAs(apitest.ReadOnlyToken, "GET", "/web/articles/authors.json", nil).Expect(t, 200)
			e.DoAs(apitest.ReadOnlyToken, "POST", news+".json", map[string]any{"article": map[string]any{"title": "x"}}).Expect(t, 403)
		})
		t.Run("exported lookups", func(t *testing.T) {
			a := create(t, e, map[string]any{"title": "Looked up"})
			got, err := articles.Lookup(t.Context(), e.Deps.Store, id(a))
			if err != nil || got.Title != "Looked up" || got.BlogID != newsID {
				t.Fatalf("%+v %v", got, err)
			}
			blog, err := articles.LookupBlog(t.Context(), e.Deps.Store, newsID)
			if err != nil || *blog != (articles.Blog{ID: newsID, Title: "News", Handle: "news"}) {
				t.Fatalf("%+v %v", blog, err)
			}
			if s := got.Subject(blog); s.Type != events.Article || s.ID != id(a) || s.Path != "/blogs/news/looked-up" || s.Label != "Looked up" {
				t.Fatalf("subject %+v", s)
			}
			if _, err := articles.Lookup(t.Context(), e.Deps.Store, 12345); err == nil {
				t.Fatal("found a missing article")
			}
			if _, err := articles.LookupBlog(t.Context(), e.Deps.Store, 12345); err == nil {
				t.Fatal("found a missing blog")
			}
		})
	}, group)
}

func articleHandles(t *testing.T, e *apitest.Env) {
	a := create(t, e, map[string]any{"title": "Alpha"})
	create(t, e, map[string]any{"title": "Beta"})
	res := e.Do("PUT", path(a), map[string]any{"article": map[string]any{"handle": "beta"}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"handle":["has already been taken"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "Gamma", "handle": "beta"}}).Expect(t, 422)
	moved := update(t, e, a, map[string]any{"handle": "alpha-moved"})
	if moved["handle"] != "alpha-moved" {
		t.Fatalf("got %v", moved)
	}
	if again := create(t, e, map[string]any{"title": "Alpha"}); again["handle"] != "alpha" {
		t.Fatalf("the old handle was not released: %v", again["handle"])
	}
	if evs := articleEvents(t, e, id(a)); *evs[len(evs)-1].Path != "/blogs/news/alpha-moved" {
		t.Fatalf("path %v", *evs[len(evs)-1].Path)
	}
}

func articleCreateDefaults(t *testing.T, e *apitest.Env) {
	a := create(t, e, map[string]any{"title": "My new Article title", "body_html": "<h1>I like articles</h1>"})
	if a["handle"] != "my-new-article-title" || a["blog_id"] != float64(newsID) || a["author"] != "Demo App" ||
		a["body_html"] != "<h1>I like articles</h1>" || a["tags"] != "" || a["published_at"] == nil {
		t.Fatalf("got %v", a)
	}
	for _, k := range []string{"user_id", "summary_html", "template_suffix"} {
		if v, ok := a[k]; !ok || v != nil {
			t.Fatalf("%s: %v (present %v)", k, v, ok)
		}
	}
	if _, ok := a["image"]; ok || a["created_at"] != a["updated_at"] {
		t.Fatalf("got %v", a)
	}
	got := e.Do("GET", path(a), nil).Expect(t, 200).Object(t, "article")
	if fmt.Sprint(got) != fmt.Sprint(a) {
		t.Fatalf("get %v\ncreate %v", got, a)
	}
	if f := e.Do("GET", path(a)+"?fields=id,title", nil).Expect(t, 200).Object(t, "article"); len(f) != 2 || f["title"] != "My new Article title" {
		t.Fatalf("fields %v", f)
	}
	evs := articleEvents(t, e, id(a))
	if len(evs) != 1 || evs[0].Verb != "create" || evs[0].SubjectType != "Article" || evs[0].Author != "Demo App" ||
		evs[0].Message != `New article created: <a href="/blogs/news/my-new-article-title">My new Article title</a>` ||
		evs[0].Path == nil || *evs[0].Path != "/blogs/news/my-new-article-title" {
		t.Fatalf("events %+v", evs)
	}
	second := create(t, e, map[string]any{"title": "My new article title!", "summary_html": "<p>short</p>", "author": " Ann ", "template_suffix": "wide"})
	if second["handle"] != "my-new-article-title-1" || second["summary_html"] != "<p>short</p>" || second["author"] != "Ann" || second["template_suffix"] != "wide" {
		t.Fatalf("got %v", second)
	}
}

func articleValidation(t *testing.T, e *apitest.Env) {
	before := e.Do("GET", news+"/count.json", nil).Expect(t, 200).JSON(t)["count"]
	var many []string
	for i := range 41 {
		many = append(many, fmt.Sprintf("tag%d", i))
	}
	manyTags := strings.Join(many, ",")
	res := e.Do("POST", news+".json", map[string]any{"article": map[string]any{"body_html": "x"}}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"title":["can't be blank"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	for field, in := range map[string]map[string]any{
		"title":        {"title": strings.Repeat("x", 256)},
		"published_at": {"title": "x", "published_at": "next tuesday"},
		"tags":         {"title": "x", "tags": manyTags},
		"image":        {"title": "x", "image": "https://example.com/a.png"},
		"handle":       {"title": "x", "handle": "Not Valid"},
	} {
		res := e.Do("POST", news+".json", map[string]any{"article": in}).Expect(t, 422)
		if _, ok := res.JSON(t)["errors"].(map[string]any)[field]; !ok {
			t.Fatalf("%s: %s", field, res.Body)
		}
	}
	for _, bad := range []any{12, true, "Thu Mar 24 15:45:47 PST 2011", "0001-01-01T00:00:00Z"} {
		res := e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "x", "published_at": bad}}).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != `{"errors":{"published_at":["is invalid"]}}` {
			t.Fatalf("%v: %s", bad, res.Body)
		}
	}
	res = e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "x", "metafields": []any{
		map[string]any{"namespace": "ab", "key": "", "value_type": "float"}}}}).Expect(t, 422)
	errs := res.JSON(t)["errors"].(map[string]any)
	for _, f := range []string{"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type"} {
		if _, ok := errs[f]; !ok {
			t.Fatalf("no %s error: %s", f, res.Body)
		}
	}
	e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": 5}}).Expect(t, 422)
	// HTML grows when stored as JSON: the stored size is what is bounded.
	res = e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "x", "body_html": strings.Repeat("<", 100_000)}}).Expect(t, 422)
	if _, ok := res.JSON(t)["errors"].(map[string]any)["body_html"]; !ok {
		t.Fatalf("got %s", res.Body)
	}
	// More writes than one transaction holds is a 422, not a 5xx.
	res = e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "x", "tags": strings.Join(many[:40], ","), "metafields": metafieldInputs(30)}}).Expect(t, 422)
	if _, ok := res.JSON(t)["errors"].(map[string]any)["base"]; !ok {
		t.Fatalf("got %s", res.Body)
	}
	e.Do("POST", news+".json", map[string]any{"page": map[string]any{"title": "x"}}).Expect(t, 400)
	if after := e.Do("GET", news+"/count.json", nil).JSON(t)["count"]; after != before {
		t.Fatalf("a rejected article was stored: %v -> %v", before, after)
	}
}

func articlePublishedAt(t *testing.T, e *apitest.Env) {
	// The shop is in America/New_York, on EDT (-04:00) on that day.
	const want = "2011-03-24T11:45:47-04:00"
	for _, in := range []string{
		"Thu Mar 24 15:45:47 UTC 2011", // time.UnixDate
		"Thu Mar 24 11:45:47 EDT 2011", // the shop zone's abbreviation
		"Thu Mar 24 15:45:47 +0000 2011",
		"Thu, 24 Mar 2011 15:45:47 GMT",
		"Thu, 24 Mar 2011 17:45:47 +0200",
		"2011-03-24T15:45:47Z",
		"2011-03-24T11:45:47-04:00",
		"2011-03-24 11:45:47", // no offset: the shop's zone
		"Thu Mar 24 17:45:47 +0200 2011",
	} {
		a := create(t, e, map[string]any{"title": "Dated", "published_at": in})
		if a["published_at"] != want {
			t.Fatalf("%q: published_at %v", in, a["published_at"])
		}
	}
	// published: false wins over a published_at; published: true keeps it.
	hidden := create(t, e, map[string]any{"title": "Dated", "published": false, "published_at": "2011-03-24T15:45:47Z"})
	if hidden["published_at"] != nil {
		t.Fatalf("published_at %v", hidden["published_at"])
	}
	shown := update(t, e, hidden, map[string]any{"published": true, "published_at": "Thu Mar 24 15:45:47 UTC 2011"})
	if shown["published_at"] != want {
		t.Fatalf("published_at %v", shown["published_at"])
	}
	if cleared := update(t, e, shown, map[string]any{"published_at": nil}); cleared["published_at"] != nil {
		t.Fatalf("published_at %v", cleared["published_at"])
	}
	if v := verbs(articleEvents(t, e, id(hidden))); v != "create,published,unpublished" {
		t.Fatalf("verbs %s", v)
	}
}

func articlePublishingAndEvents(t *testing.T, e *apitest.Env) {
	a := create(t, e, map[string]any{"title": "Hidden", "published": false})
	if a["published_at"] != nil {
		t.Fatalf("published_at %v", a["published_at"])
	}
	shown := update(t, e, a, map[string]any{"published": true})
	if shown["published_at"] == nil || shown["updated_at"] == nil {
		t.Fatal("not published")
	}
	hidden := update(t, e, a, map[string]any{"published": false, "author": "Ann", "title": "Hidden <b>again</b>"})
	if hidden["published_at"] != nil || hidden["author"] != "Ann" || hidden["handle"] != "hidden" {
		t.Fatalf("got %v", hidden)
	}
	update(t, e, a, map[string]any{"body_html": "new"})
	e.Do("PUT", path(a), map[string]any{"article": map[string]any{"author": " "}}).Expect(t, 422)
	e.Do("DELETE", path(a), nil).Expect(t, 200)
	evs := articleEvents(t, e, id(a))
	if v := verbs(evs); v != "create,published,unpublished,update,destroy" {
		t.Fatalf("verbs %s", v)
	}
	link := `<a href="/blogs/news/hidden">Hidden &lt;b&gt;again&lt;/b&gt;</a>`
	for i, msg := range []string{
		`New article created: <a href="/blogs/news/hidden">Hidden</a>`,
		`<a href="/blogs/news/hidden">Hidden</a> was published.`,
		link + ` was unpublished.`,
		link + ` was updated (but its published state was not changed).`,
		link + ` was destroyed.`,
	} {
		if evs[i].Message != msg || evs[i].SubjectType != events.Article || evs[i].SubjectID != id(a) {
			t.Fatalf("event %d: %+v", i, evs[i])
		}
	}
}

func articleDeleteSteps(t *testing.T, e *apitest.Env) {
	a := create(t, e, map[string]any{"title": "Gone", "metafields": []any{
		map[string]any{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}}})
	owner := store.Query{Index: store.GSI1, PK: metafields.OwnerPartition(metafields.OwnerArticle, id(a))}
	owned, _, err := e.Deps.Store.Query(t.Context(), owner)
	if err != nil || len(owned) != 1 {
		t.Fatalf("metafields %v %v", owned, err)
	}
	var m metafields.Metafield
	records.Decode(&owned[0], &m)
	if string(m.Value) != "25" || m.OwnerResource != "article" || m.OwnerID != id(a) {
		t.Fatalf("metafield %+v", m)
	}
	res := e.Do("DELETE", path(a), nil).Expect(t, 200)
	if strings.TrimSpace(string(res.Body)) != "{}" {
		t.Fatalf("body %s", res.Body)
	}
	e.Do("GET", path(a), nil).Expect(t, 404)
	e.Do("DELETE", path(a), nil).Expect(t, 404)
	e.Do("PUT", path(a), map[string]any{"article": map[string]any{"title": "x"}}).Expect(t, 404)
	if owned, _, _ = e.Deps.Store.Query(t.Context(), owner); len(owned) != 0 {
		t.Fatal("metafields outlive their article")
	}
	if c := create(t, e, map[string]any{"title": "Gone"}); c["handle"] != "gone" {
		t.Fatalf("handle %v", c["handle"])
	}
}

func articlesBelongToTheirBlog(t *testing.T, e *apitest.Env) {
	other := addBlog(t, e, 900001, "other")
	mine := create(t, e, map[string]any{"title": "Shared title"})
	theirs := createIn(t, e, other, map[string]any{"title": "Shared title"})
	if theirs["handle"] != mine["handle"] || theirs["blog_id"] != 900001.0 {
		t.Fatalf("handles are per blog: %v %v", mine["handle"], theirs["handle"])
	}
	if p := *articleEvents(t, e, id(theirs))[0].Path; p != "/blogs/other/shared-title" {
		t.Fatalf("path %s", p)
	}
	wrong := fmt.Sprintf("%s/%d.json", news, id(theirs))
	e.Do("GET", wrong, nil).Expect(t, 404)
	e.Do("PUT", wrong, map[string]any{"article": map[string]any{"title": "hijacked"}}).Expect(t, 404)
	e.Do("DELETE", wrong, nil).Expect(t, 404)
	e.Do("GET", path(theirs), nil).Expect(t, 200)
	if l := e.Do("GET", other+".json", nil).Expect(t, 200).List(t, "articles"); len(l) != 1 || id(l[0].(map[string]any)) != id(theirs) {
		t.Fatalf("other blog lists %v", l)
	}
	if l := e.Do("GET", news+".json?handle=shared-title", nil).Expect(t, 200).List(t, "articles"); len(l) != 1 || id(l[0].(map[string]any)) != id(mine) {
		t.Fatalf("handle filter %v", l)
	}
	for _, p := range []string{"/web/blogs/999/articles.json", "/web/blogs/999/articles/count.json", "/web/blogs/999/articles/tags.json",
		fmt.Sprintf("/web/blogs/999/articles/%d.json", id(mine)), "/web/blogs/abc/articles.json"} {
		e.Do("GET", p, nil).Expect(t, 404)
	}
	e.Do("POST", "/web/blogs/999/articles.json", map[string]any{"article": map[string]any{"title": "x"}}).Expect(t, 404)
}

func TestArticleImages(t *testing.T) {
	small, wide := pngOf(t, 3, 2), pngOf(t, 5, 4)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/wide.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write(wide)
		case "/text":
			w.Write([]byte("not an image"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	unreachable := closed.URL + "/wide.png"
	closed.Close()
	attachment := base64.StdEncoding.EncodeToString(small)

	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("attachment", func(t *testing.T) { articleAttachment(t, e, attachment, srv.URL) })
		t.Run("src is downloaded", func(t *testing.T) {
			a := create(t, e, map[string]any{"title": "Downloaded", "image": map[string]any{"src": srv.URL + "/wide.png"}})
			img := a["image"].(map[string]any)
			if img["width"] != 5.0 || img["height"] != 4.0 || img["src"] != srv.URL+"/wide.png" || img["created_at"] == nil {
				t.Fatalf("image %v", img)
			}
		})
		t.Run("bad images are 422 on image", func(t *testing.T) {
			before := e.Do("GET", news+"/count.json", nil).Expect(t, 200).JSON(t)["count"]
			for name, in := range map[string]map[string]any{
				"not an image":         {"src": srv.URL + "/text"},
				"missing":              {"src": srv.URL + "/missing.png"},
				"unreachable":          {"src": unreachable},
				"attachment not image": {"attachment": base64.StdEncoding.EncodeToString([]byte("hello"))},
				"not base64":           {"attachment": "%%%"},
				"empty":                {},
			} {
				res := e.Do("POST", news+".json", map[string]any{"article": map[string]any{"title": "Broken", "image": in}}).Expect(t, 422)
				errs := res.JSON(t)["errors"].(map[string]any)
				if msgs, ok := errs["image"].([]any); !ok || len(msgs) != 1 || len(errs) != 1 {
					t.Fatalf("%s: %s", name, res.Body)
				}
			}
			a := create(t, e, map[string]any{"title": "Fine"})
			e.Do("PUT", path(a), map[string]any{"article": map[string]any{"image": map[string]any{"src": srv.URL + "/text"}}}).Expect(t, 422)
			if after := e.Do("GET", news+"/count.json", nil).JSON(t)["count"]; after != before.(float64)+1 {
				t.Fatalf("a rejected article was stored: %v -> %v", before, after)
			}
		})
		t.Run("delete removes the stored file", func(t *testing.T) {
			a := create(t, e, map[string]any{"title": "Short lived", "image": map[string]any{"attachment": attachment, "filename": "pic.png"}})
			src := a["image"].(map[string]any)["src"].(string)
			if !strings.HasSuffix(src, "/pic.png") || fileChunks(t, e, src) != 1 {
				t.Fatalf("src %s", src)
			}
			e.Do("DELETE", path(a), nil).Expect(t, 200)
			if n := fileChunks(t, e, src); n != 0 {
				t.Fatalf("%d chunks outlive the article", n)
			}
		})
	}, group)
}

func articleAttachment(t *testing.T, e *apitest.Env, attachment, srvURL string) {
	a := create(t, e, map[string]any{"title": "With picture", "image": map[string]any{"attachment": attachment}})
	img, ok := a["image"].(map[string]any)
	if !ok || img["width"] != 3.0 || img["height"] != 2.0 || img["created_at"] == nil ||
		!strings.HasPrefix(img["src"].(string), "https://demo-shop.example.com/files/") || !strings.HasSuffix(img["src"].(string), "/image.png") {
		t.Fatalf("image %v", a["image"])
	}
	if n := fileChunks(t, e, img["src"].(string)); n != 1 {
		t.Fatalf("%d chunks", n)
	}
	if got := e.Do("GET", path(a), nil).Expect(t, 200).Object(t, "article")["image"]; fmt.Sprint(got) != fmt.Sprint(img) {
		t.Fatalf("get image %v", got)
	}
	// The image sent back as returned is kept, not fetched from its src.
	same := update(t, e, a, map[string]any{"title": "Renamed", "image": img})
	if fmt.Sprint(same["image"]) != fmt.Sprint(img) {
		t.Fatalf("image %v", same["image"])
	}
	// A new image replaces the old one and its stored file.
	replaced := update(t, e, a, map[string]any{"image": map[string]any{"src": srvURL + "/wide.png"}})
	if ri := replaced["image"].(map[string]any); ri["width"] != 5.0 || ri["height"] != 4.0 || ri["src"] != srvURL+"/wide.png" {
		t.Fatalf("image %v", ri)
	}
	if n := fileChunks(t, e, img["src"].(string)); n != 0 {
		t.Fatalf("the replaced file keeps %d chunks", n)
	}
	removed := update(t, e, a, map[string]any{"image": nil})
	if _, ok := removed["image"]; ok {
		t.Fatalf("image %v", removed["image"])
	}
}

func TestArticleFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		r := &articleFilterRun{t: t, e: e}
		r.a = create(t, e, map[string]any{"title": "First", "author": "Ann", "tags": "x"})
		r.b = create(t, e, map[string]any{"title": "Second", "author": "Bob", "published": false})
		r.c = create(t, e, map[string]any{"title": "Third", "author": "Ann", "tags": "y, x"})
		r.listsAndCounts()
		r.dateBoundsAndFields()
		r.stateChangesAndBadParameters()
	}, group)
}

// articleFilterRun is one store's TestArticleFilters: three articles, a
// (Ann, tag x), b (Bob, unpublished) and c (Ann, tags y and x).
type articleFilterRun struct {
	t       *testing.T
	e       *apitest.Env
	a, b, c map[string]any
}

func (r *articleFilterRun) list(q string) []int64 {
	r.t.Helper()
	return ids(r.e.Do("GET", news+".json"+q, nil).Expect(r.t, 200).List(r.t, "articles"))
}

func (r *articleFilterRun) count(q string) float64 {
	r.t.Helper()
	return r.e.Do("GET", news+"/count.json"+q, nil).Expect(r.t, 200).JSON(r.t)["count"].(float64)
}

// eq reports whether got is the ids of want, in order.
func (r *articleFilterRun) eq(got []int64, want ...map[string]any) bool {
	var w []int64
	for _, x := range want {
		w = append(w, id(x))
	}
	return slices.Equal(got, w)
}

// listsAndCounts: order, since_id, paging, tag, author, handle and status filters, and their counts.
func (r *articleFilterRun) listsAndCounts() {
	t, a, b, c, list, count, eq := r.t, r.a, r.b, r.c, r.list, r.count, r.eq
	if l := list(""); !eq(l, c, b, a) {
		t.Fatalf("newest first: %v", l)
	}
	if l := list(fmt.Sprintf("?since_id=%d", id(a))); !eq(l, b, c) {
		t.Fatalf("since_id ascending: %v", l)
	}
	if l := list("?limit=1&page=2"); !eq(l, b) {
		t.Fatalf("paging: %v", l)
	}
	if l := list("?tag=x"); !eq(l, c, a) {
		t.Fatalf("tag: %v", l)
	}
	if l := list("?tag=y"); !eq(l, c) {
		t.Fatalf("tag: %v", l)
	}
	if l := list("?author=Ann"); !eq(l, c, a) {
		t.Fatalf("author: %v", l)
	}
	if l := list("?handle=second"); !eq(l, b) {
		t.Fatalf("handle: %v", l)
	}
	if l := list("?handle=second&published_status=published"); len(l) != 0 {
		t.Fatalf("handle and status: %v", l)
	}
	if l := list("?published_status=unpublished"); !eq(l, b) {
		t.Fatalf("published_status: %v", l)
	}
	if n := count(""); n != 3 {
		t.Fatalf("count %v", n)
	}
	if n := count("?published_status=published"); n != 2 {
		t.Fatalf("count published %v", n)
	}
	if n := count("?author=Ann&tag=y"); n != 1 {
		t.Fatalf("count author and tag %v", n)
	}
	if n := count("?handle=first"); n != 1 {
		t.Fatalf("count handle %v", n)
	}
}

// dateBoundsAndFields: the created, updated and published bounds, and fields.
func (r *articleFilterRun) dateBoundsAndFields() {
	t, e, a, list, count := r.t, r.e, r.a, r.list, r.count
	created, _ := time.Parse(time.RFC3339, a["created_at"].(string))
	tomorrow := created.AddDate(0, 0, 1).Format("2006-01-02")
	yesterday := created.AddDate(0, 0, -1).Format("2006-01-02")
	if l := list("?created_at_min=" + yesterday + "&created_at_max=" + tomorrow); len(l) != 3 {
		t.Fatalf("created_at range: %v", l)
	}
	if n := count("?updated_at_min=" + tomorrow); n != 0 {
		t.Fatalf("updated_at_min: %v", n)
	}
	after := url.QueryEscape(created.Add(time.Hour).Format(time.RFC3339))
	if n := count("?published_at_max=" + after); n != 2 {
		t.Fatalf("published_at_max: %v", n)
	}
	if l := list("?published_at_min=" + url.QueryEscape("2000-01-01 00:00")); len(l) != 2 {
		t.Fatalf("published_at_min: %v", l)
	}
	if l := e.Do("GET", news+".json?fields=id,tags", nil).Expect(t, 200).List(t, "articles"); len(l[0].(map[string]any)) != 2 {
		t.Fatalf("fields %v", l)
	}
}

// stateChangesAndBadParameters: publishing, unpublishing and deletes move the counts; bad parameters are 400.
func (r *articleFilterRun) stateChangesAndBadParameters() {
	t, e, a, b, c, list, count, eq := r.t, r.e, r.a, r.b, r.c, r.list, r.count, r.eq
	// Publishing and unpublishing move articles between the states'
	// partitions and counters; deletes leave them.
	e.Do("PUT", path(a), map[string]any{"article": map[string]any{"published": false}}).Expect(t, 200)
	e.Do("PUT", path(b), map[string]any{"article": map[string]any{"published": true}}).Expect(t, 200)
	if l := list("?published_status=unpublished"); !eq(l, a) {
		t.Fatalf("published_status after a change: %v", l)
	}
	if l := list("?published_status=published&author=Ann"); !eq(l, c) {
		t.Fatalf("published_status and author: %v", l)
	}
	if n, m := count("?published_status=published"), count("?published_status=unpublished"); n != 2 || m != 1 {
		t.Fatalf("counts by state after a change: %v %v", n, m)
	}
	e.Do("DELETE", path(a), nil).Expect(t, 200)
	if n := count("?published_status=unpublished"); n != 0 {
		t.Fatalf("count unpublished after the delete: %v", n)
	}
	e.Do("PUT", path(b), map[string]any{"article": map[string]any{"published": false}}).Expect(t, 200)
	e.Do("GET", news+".json?created_at_min=soon", nil).Expect(t, 400)
	e.Do("GET", news+"/count.json?published_status=sometimes", nil).Expect(t, 400)
	e.Do("GET", news+".json?limit=251", nil).Expect(t, 400)
	e.Do("DELETE", path(b), nil).Expect(t, 200)
	if n, m := count(""), count("?published_status=unpublished"); n != 1 || m != 0 {
		t.Fatalf("counts after the deletes: %v, %v unpublished", n, m)
	}
}

func TestAuthorsAndTags(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		other := addBlog(t, e, 900002, "elsewhere")
		authors := func() []string {
			t.Helper()
			return strs(e.Do("GET", "/web/articles/authors.json", nil).Expect(t, 200).JSON(t)["authors"])
		}
		tags := func(base, q string) []string {
			t.Helper()
			return strs(e.Do("GET", base+"/tags.json"+q, nil).Expect(t, 200).JSON(t)["tags"])
		}
		if a := authors(); len(a) != 0 {
			t.Fatalf("authors %v", a)
		}
		if tg := tags(news, ""); len(tg) != 0 {
			t.Fatalf("tags %v", tg)
		}
		one := create(t, e, map[string]any{"title": "One", "author": "Zoe", "tags": "b, a"})
		create(t, e, map[string]any{"title": "Two", "author": "bob", "tags": "b, c"})
		three := create(t, e, map[string]any{"title": "Three", "tags": "c, b, d"})
		four := createIn(t, e, other, map[string]any{"title": "Four", "author": "bob", "tags": "elsewhere"})

		if a := authors(); !slices.Equal(a, []string{"bob", "Demo App", "Zoe"}) {
			t.Fatalf("authors %v", a)
		}
		if tg := tags(news, ""); !slices.Equal(tg, []string{"a", "b", "c", "d"}) {
			t.Fatalf("tags %v", tg)
		}
		if tg := tags(news, "?popular=1"); !slices.Equal(tg, []string{"b", "c", "a", "d"}) {
			t.Fatalf("popular tags %v", tg)
		}
		if tg := tags(news, "?popular=1&limit=2"); !slices.Equal(tg, []string{"b", "c"}) {
			t.Fatalf("popular tags, limit 2: %v", tg)
		}
		if tg := tags(news, "?limit=1"); !slices.Equal(tg, []string{"a"}) {
			t.Fatalf("tags, limit 1: %v", tg)
		}
		if tg := tags(other, ""); !slices.Equal(tg, []string{"elsewhere"}) {
			t.Fatalf("other blog's tags %v", tg)
		}
		e.Do("GET", news+"/tags.json?limit=0", nil).Expect(t, 400)
		e.Do("GET", news+"/tags.json?popular=very", nil).Expect(t, 400)
		// Shop-wide (Shopify's Article.tags without a blog), on every path form.
		for _, base := range []string{"/web/articles", "/admin/articles", "/admin/api/2024-10/articles"} {
			if tg := tags(base, ""); !slices.Equal(tg, []string{"a", "b", "c", "d", "elsewhere"}) {
				t.Fatalf("%s: shop-wide tags %v", base, tg)
			}
		}
		if tg := tags("/web/articles", "?popular=1&limit=3"); !slices.Equal(tg, []string{"b", "c", "a"}) {
			t.Fatalf("shop-wide popular tags %v", tg)
		}
		e.Do("GET", "/web/articles/tags.json?limit=251", nil).Expect(t, 400)

		// Updates and deletes move the counts.
		update(t, e, three, map[string]any{"tags": "a", "author": "Yann"})
		if tg := tags(news, "?popular=1"); !slices.Equal(tg, []string{"a", "b", "c"}) {
			t.Fatalf("popular tags after update %v", tg)
		}
		if a := authors(); !slices.Equal(a, []string{"bob", "Yann", "Zoe"}) {
			t.Fatalf("authors after update %v", a)
		}
		e.Do("DELETE", path(one), nil).Expect(t, 200)
		e.Do("DELETE", path(four), nil).Expect(t, 200)
		if tg := tags(news, ""); !slices.Equal(tg, []string{"a", "b", "c"}) {
			t.Fatalf("tags after delete %v", tg)
		}
		if tg := tags(news, "?popular=1"); !slices.Equal(tg, []string{"a", "b", "c"}) {
			t.Fatalf("popular tags after delete %v", tg)
		}
		if tg := tags(other, ""); len(tg) != 0 {
			t.Fatalf("other blog's tags after delete %v", tg)
		}
		if a := authors(); !slices.Equal(a, []string{"bob", "Yann"}) {
			t.Fatalf("authors after delete %v", a)
		}
	}, group)
}

// Every filter, alone and combined, answers what filtering the whole list
// would, after updates have moved articles between tags, authors and
// states and a delete; counts agree, and each reads only its matches (a
// combination, what its most selective index yields). Another blog's
// articles stay out of every filter.
func TestFiltersAgreeWithTheWholeList(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		other := addBlog(t, e, 99, "other")
		createIn(t, e, other, map[string]any{"title": "Elsewhere", "author": "Ann", "tags": "x"})
		var made []map[string]any
		for i := range 10 {
			if i == 5 {
				clk.Advance(time.Second) // two seconds of created_at at least, for the range edges
			}
			made = append(made, create(t, e, map[string]any{"title": fmt.Sprint("A", i), "author": []string{"Ann", "Bob"}[i%2],
				"tags": []string{"x", "y, x", "z", ""}[i%4], "published": i%3 != 0}))
		}
		clk.Advance(time.Second)
		update(t, e, made[0], map[string]any{"tags": "z, y", "author": "Bob", "published": true})
		update(t, e, made[4], map[string]any{"title": "Retitled"}) // tags kept
		update(t, e, made[5], map[string]any{"published": false})
		e.Do("DELETE", path(made[2]), nil).Expect(t, 200)

		whole := e.Do("GET", news+".json?limit=250", nil).Expect(t, 200).List(t, "articles")
		if len(whole) != 9 {
			t.Fatalf("%d articles, want 9", len(whole))
		}
		tagged := func(tag string) func(map[string]any) bool {
			return func(r map[string]any) bool { return slices.Contains(strings.Split(r["tags"].(string), ", "), tag) }
		}
		by := func(author string) func(map[string]any) bool {
			return func(r map[string]any) bool { return r["author"] == author }
		}
		published := func(r map[string]any) bool { return r["published_at"] != nil }
		all := func(map[string]any) bool { return true }
		mid := id(whole[4].(map[string]any))
		filters := []apitest.Filter{
			{Query: "", Keep: all},
			{Query: "tag=x", Keep: tagged("x")},
			{Query: "tag=y", Keep: tagged("y")},
			{Query: "tag=none", Keep: tagged("none")},
			{Query: "author=Bob", Keep: by("Bob")},
			{Query: "published_status=unpublished", Keep: func(r map[string]any) bool { return !published(r) }},
			{Query: "tag=x&author=Ann", Source: tagged("x"), Keep: func(r map[string]any) bool { return tagged("x")(r) && by("Ann")(r) }},
			{Query: "tag=z&published_status=published", Source: tagged("z"), Keep: func(r map[string]any) bool { return tagged("z")(r) && published(r) }},
			{Query: fmt.Sprintf("author=Ann&since_id=%d", mid), NoCount: true, Keep: func(r map[string]any) bool { return by("Ann")(r) && id(r) > mid }},
			{Query: "published_status=published&published_at_min=2000-01-01", Keep: published},
			{Query: "author=Bob&updated_at_min=2000-01-01", Source: by("Bob"), Keep: by("Bob")},
		}
		for _, field := range []string{"created_at", "updated_at", "published_at"} {
			filters = append(filters, apitest.RangeFilters(t, field, whole)...)
		}
		apitest.CheckFilters(t, e, apitest.FilterCheck{List: news + ".json", Count: news + "/count.json", Key: "articles"}, whole, filters)
	}, group)
}
