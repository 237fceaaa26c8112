package comments_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

var group = api.Group{Name: "comments", Routes: comments.Routes}

// newsBlog is the demo seed's blog (handle "news").
const newsBlog = 241253187

// putRecord writes a record of another resource (an article, a blog)
// directly into the store, as shared/articles lays it out.
func putRecord(t *testing.T, e *apitest.Env, pk string, rec map[string]any) int64 {
	t.Helper()
	id := e.Deps.IDs.Next()
	rec["id"] = id
	it := store.Item{PK: pk, SK: records.IDSK(id), Version: 1, Data: records.Encode(rec)}
	if err := e.Deps.Store.Transact(t.Context(), store.Put(it, store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	return id
}

func article(t *testing.T, e *apitest.Env, blogID int64, title, handle string) int64 {
	return putRecord(t, e, "article", map[string]any{"blog_id": blogID, "title": title, "handle": handle})
}

func fields(articleID int64, extra map[string]any) map[string]any {
	f := map[string]any{"author": "Ann Reader", "email": "ann@example.com", "body": "Great article!",
		"blog_id": newsBlog, "article_id": articleID}
	for k, v := range extra {
		if v == nil {
			delete(f, k)
		} else {
			f[k] = v
		}
	}
	return f
}

func create(t *testing.T, e *apitest.Env, articleID int64, extra map[string]any) map[string]any {
	t.Helper()
	return e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(articleID, extra)}).Expect(t, 201).Object(t, "comment")
}

func idOf(c map[string]any) int64 { return int64(c["id"].(float64)) }

func path(c map[string]any, suffix string) string {
	return fmt.Sprintf("/web/comments/%d%s.json", idOf(c), suffix)
}

// edit changes a stored comment directly, to reach states and times the API
// does not produce (unapproved, past timestamps).
func edit(t *testing.T, e *apitest.Env, id int64, change func(c *comments.Comment)) {
	t.Helper()
	err := records.Update(t.Context(), e.Deps.Store, store.Key{PK: "comment", SK: records.IDSK(id)}, func(it *store.Item) ([]store.Op, error) {
		var c comments.Comment
		if err := records.Decode(it, &c); err != nil {
			return nil, err
		}
		change(&c)
		return comments.Rewrite(t.Context(), &c, it.Version, e.Deps.IDs.Next()), nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// commentEvents reads the events log directly: the events endpoints are another group.
func commentEvents(t *testing.T, e *apitest.Env, id int64) []events.Event {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{Index: store.GSI2, PK: events.SubjectPartition(events.Comment, id)})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := records.DecodeAll[events.Event](items)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// post sends a create with extra request headers and a client address.
func post(t *testing.T, e *apitest.Env, body any, remoteAddr string, headers map[string]string) *apitest.Response {
	t.Helper()
	b, _ := json.Marshal(body)
	req := httptest.NewRequest("POST", "/web/comments.json", bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Access-Token", apitest.DemoToken)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	if remoteAddr != "" {
		req.RemoteAddr = remoteAddr
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	return &apitest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
}

func errorsOf(t *testing.T, r *apitest.Response) map[string]any {
	t.Helper()
	errs, ok := r.JSON(t)["errors"].(map[string]any)
	if !ok {
		t.Fatalf("no field errors: %s", r.Body)
	}
	return errs
}

func TestCreate(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		post1 := article(t, e, newsBlog, "First post", "first-post")
		t.Run("pending, published now, rendered, logged", func(t *testing.T) { commentCreatePending(t, e, post1) })
		t.Run("ip and user agent from the body", func(t *testing.T) {
			c := create(t, e, post1, map[string]any{"ip": "203.0.113.9", "user_agent": "Mozilla/5.0 (X11)"})
			if c["ip"] != "203.0.113.9" || c["user_agent"] != "Mozilla/5.0 (X11)" {
				t.Fatalf("got %v", c)
			}
			c = create(t, e, post1, map[string]any{"ip": "2001:db8::1"})
			if c["ip"] != "2001:db8::1" {
				t.Fatalf("got %v", c["ip"])
			}
			res := e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(post1, map[string]any{"ip": "not an ip"})}).Expect(t, 422)
			if strings.TrimSpace(string(res.Body)) != `{"errors":{"ip":["is invalid"]}}` {
				t.Fatalf("got %s", res.Body)
			}
		})
		t.Run("ip and user agent from the request", func(t *testing.T) { commentIPFromRequest(t, e, post1) })
		t.Run("hostile bodies are escaped", func(t *testing.T) {
			hostile := `<script>alert("x")</script> <img src=x onerror=alert(1)> "click":javascript:alert(1)`
			c := create(t, e, post1, map[string]any{"body": hostile, "author": "<b>Mallory</b>"})
			html := c["body_html"].(string)
			if strings.Contains(html, "<script") || strings.Contains(html, "<img") || strings.Contains(html, "href") ||
				!strings.Contains(html, "&lt;script&gt;") || c["body"] != hostile {
				t.Fatalf("body_html %s", html)
			}
			msg := commentEvents(t, e, idOf(c))[0].Message
			if strings.Contains(msg, "<script") || !strings.Contains(msg, "&lt;script&gt;") {
				t.Fatalf("message %s", msg)
			}
			// The article title is escaped in the link too.
			evil := article(t, e, newsBlog, `<script>bad()</script>`, "evil")
			c = create(t, e, evil, nil)
			if msg := commentEvents(t, e, idOf(c))[0].Message; strings.Contains(msg, "<script") {
				t.Fatalf("message %s", msg)
			}
		})
		t.Run("excerpt is the first 100 characters", func(t *testing.T) {
			long := strings.Repeat("é", 150)
			c := create(t, e, post1, map[string]any{"body": long})
			msg := commentEvents(t, e, idOf(c))[0].Message
			if !strings.HasSuffix(msg, " : "+strings.Repeat("é", 100)) {
				t.Fatalf("message %s", msg)
			}
		})
		t.Run("validation", func(t *testing.T) { commentValidation(t, e, post1) })
		t.Run("scopes and unknown ids", func(t *testing.T) {
			c := create(t, e, post1, nil)
			e.DoAs(apitest.ReadOnlyToken, "GET", path(c, ""), nil).Expect(t, 200)
			e.DoAs(apitest.ReadOnlyToken, "POST", "/web/comments.json", map[string]any{"comment": fields(post1, nil)}).Expect(t, 403)
			e.DoAs(apitest.ReadOnlyToken, "POST", path(c, "/approve"), map[string]any{}).Expect(t, 403)
			e.Do("GET", "/web/comments/999999.json", nil).Expect(t, 404)
			e.Do("PUT", "/web/comments/999999.json", map[string]any{"comment": map[string]any{"author": "x"}}).Expect(t, 404)
			if r := e.Do("DELETE", path(c, ""), nil).Expect(t, 405); r.Header.Get("Allow") != "GET, HEAD, PUT" {
				t.Fatalf("comments are not deleted: Allow %q", r.Header.Get("Allow"))
			}
			if f := e.Do("GET", path(c, "")+"?fields=id,status", nil).Expect(t, 200).Object(t, "comment"); len(f) != 2 || f["status"] != "pending" {
				t.Fatalf("fields %v", f)
			}
		})
	}, group)
}

func commentCreatePending(t *testing.T, e *apitest.Env, post1 int64) {
	c := create(t, e, post1, map[string]any{"body": "I *really* liked this.\nThanks!"})
	if c["status"] != "pending" || c["published_at"] == nil || c["published_at"] != c["created_at"] || c["created_at"] != c["updated_at"] {
		t.Fatalf("got %v", c)
	}
	if c["author"] != "Ann Reader" || c["email"] != "ann@example.com" || c["article_id"] != float64(post1) || c["blog_id"] != float64(newsBlog) {
		t.Fatalf("got %v", c)
	}
	if c["body_html"] != "<p>I <strong>really</strong> liked this.<br />\nThanks!</p>" || c["body"] != "I *really* liked this.\nThanks!" {
		t.Fatalf("body_html %q", c["body_html"])
	}
	// httptest's client address; no User-Agent header was sent.
	if c["ip"] != "192.0.2.1" || c["user_agent"] != nil {
		t.Fatalf("ip %v user_agent %v", c["ip"], c["user_agent"])
	}
	if got := e.Do("GET", path(c, ""), nil).Expect(t, 200).Object(t, "comment"); fmt.Sprint(got) != fmt.Sprint(c) {
		t.Fatalf("read back %v, created %v", got, c)
	}
	evs := commentEvents(t, e, idOf(c))
	if len(evs) != 1 {
		t.Fatalf("events %+v", evs)
	}
	ev := evs[0]
	if ev.Verb != "create" || ev.SubjectType != "Comment" || ev.SubjectID != idOf(c) || ev.Author != "Demo App" ||
		ev.Message != `New comment for <a href="/blogs/news/first-post">First post</a> : I *really* liked this.`+"\nThanks!" ||
		ev.Path == nil || *ev.Path != "/blogs/news/first-post" {
		t.Fatalf("event %+v", ev)
	}
}

func commentIPFromRequest(t *testing.T, e *apitest.Env, post1 int64) {
	body := map[string]any{"comment": fields(post1, nil)}
	c := post(t, e, body, "198.51.100.7:5555", map[string]string{"User-Agent": "Reader/1.0",
		"X-Forwarded-For": "203.0.113.50, 10.0.0.1"}).Expect(t, 201).Object(t, "comment")
	if c["ip"] != "203.0.113.50" || c["user_agent"] != "Reader/1.0" {
		t.Fatalf("got %v %v", c["ip"], c["user_agent"])
	}
	c = post(t, e, body, "198.51.100.7:5555", nil).Expect(t, 201).Object(t, "comment")
	if c["ip"] != "198.51.100.7" {
		t.Fatalf("got %v", c["ip"])
	}
	c = post(t, e, body, "[2001:db8::7]:443", map[string]string{"X-Forwarded-For": "garbage"}).Expect(t, 201).Object(t, "comment")
	if c["ip"] != "2001:db8::7" {
		t.Fatalf("got %v", c["ip"])
	}
	// The body wins over the request.
	body = map[string]any{"comment": fields(post1, map[string]any{"ip": "192.0.2.77", "user_agent": "Body/2"})}
	c = post(t, e, body, "", map[string]string{"User-Agent": "Header/1", "X-Forwarded-For": "203.0.113.50"}).Expect(t, 201).Object(t, "comment")
	if c["ip"] != "192.0.2.77" || c["user_agent"] != "Body/2" {
		t.Fatalf("got %v %v", c["ip"], c["user_agent"])
	}
}

func commentValidation(t *testing.T, e *apitest.Env, post1 int64) {
	before := e.Do("GET", "/web/comments/count.json", nil).Expect(t, 200).JSON(t)["count"]
	res := e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(post1, map[string]any{"author": nil, "body": "  "})}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"author":["can't be blank"],"body":["can't be blank"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	for _, email := range []any{nil, "", "ann", "ann@", "@example.com", "ann@example", "ann@@example.com",
		"Ann <ann@example.com>", "ann @example.com", "ann@exa_mple.com", "ann@.example.com", "ann..b@example.com"} {
		res := e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(post1, map[string]any{"email": email})}).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != `{"errors":{"email":["is invalid"]}}` {
			t.Fatalf("email %q: %s", email, res.Body)
		}
	}
	res = e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(post1, map[string]any{"blog_id": nil, "article_id": nil})}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"article_id":["can't be blank"],"blog_id":["can't be blank"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	res = e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(999999, nil)}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"article_id":["does not exist"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	other := putRecord(t, e, "blog", map[string]any{"title": "Recipes", "handle": "recipes"})
	res = e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(post1, map[string]any{"blog_id": other})}).Expect(t, 422)
	if strings.TrimSpace(string(res.Body)) != `{"errors":{"blog_id":["does not match the article's blog"]}}` {
		t.Fatalf("got %s", res.Body)
	}
	res = e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(post1, map[string]any{"body": strings.Repeat("x", 20001)})}).Expect(t, 422)
	if _, ok := errorsOf(t, res)["body"]; !ok {
		t.Fatalf("got %s", res.Body)
	}
	e.Do("POST", "/web/comments.json", map[string]any{"comment": fields(post1, map[string]any{"article_id": "x"})}).Expect(t, 422)
	e.Do("POST", "/web/comments.json", map[string]any{"nope": map[string]any{}}).Expect(t, 400)
	if after := e.Do("GET", "/web/comments/count.json", nil).Expect(t, 200).JSON(t)["count"]; after != before {
		t.Fatalf("a rejected comment was stored: %v -> %v", before, after)
	}
	for _, email := range []string{"a.b+tag@mail.example.co.uk", " ann@example.com "} {
		if c := create(t, e, post1, map[string]any{"email": email}); c["email"] != strings.TrimSpace(email) {
			t.Fatalf("email %v", c["email"])
		}
	}
}

func TestUpdate(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := article(t, e, newsBlog, "Post", "post")
		c := create(t, e, a, nil)
		edit(t, e, idOf(c), func(c *comments.Comment) { c.UpdatedAt = admin.Time{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)} })
		u := e.Do("PUT", path(c, ""), map[string]any{"comment": map[string]any{"id": idOf(c), "body": "_New_ <b>text</b>", "author": "Bob", "email": "bob@example.com"}}).
			Expect(t, 200).Object(t, "comment")
		if u["body"] != "_New_ <b>text</b>" || u["body_html"] != "<p><em>New</em> &lt;b&gt;text&lt;/b&gt;</p>" || u["author"] != "Bob" ||
			u["email"] != "bob@example.com" || u["status"] != "pending" || u["updated_at"] == "2019-12-31T19:00:00-05:00" || u["published_at"] != c["published_at"] {
			t.Fatalf("got %v", u)
		}
		// A whole-object save of a pending comment echoes its published_at
		// (ids as strings too): only the body changes.
		echo := maps.Clone(u)
		echo["id"], echo["article_id"], echo["blog_id"], echo["body"] = fmt.Sprint(idOf(c)), fmt.Sprint(int64(u["article_id"].(float64))), fmt.Sprint(int64(u["blog_id"].(float64))), "Edited"
		if w := e.Do("PUT", path(c, ""), map[string]any{"comment": echo}).Expect(t, 200).Object(t, "comment"); w["status"] != "pending" || w["published_at"] != u["published_at"] || w["body"] != "Edited" {
			t.Fatalf("echoed published_at: %v", w)
		}
		for _, bad := range []map[string]any{{"email": "nope"}, {"author": " "}, {"body": ""}, {"published_at": "yesterday"},
			{"published_at": nil}, {"published_at": 12}, {"email": nil}} {
			res := e.Do("PUT", path(c, ""), map[string]any{"comment": bad}).Expect(t, 422)
			for k := range bad {
				if _, ok := errorsOf(t, res)[k]; !ok {
					t.Fatalf("%v: %s", bad, res.Body)
				}
			}
		}
		// schema CommentStatus: setting published_at publishes the comment, from
		// any state.
		e.Do("POST", path(c, "/spam"), map[string]any{}).Expect(t, 200)
		u = e.Do("PUT", path(c, ""), map[string]any{"comment": map[string]any{"published_at": "2014-04-25T16:15:47-04:00"}}).Expect(t, 200).Object(t, "comment")
		if u["status"] != "published" || u["published_at"] != "2014-04-25T16:15:47-04:00" || u["author"] != "Bob" {
			t.Fatalf("got %v", u)
		}
		if got := e.Do("GET", path(c, ""), nil).Object(t, "comment"); got["status"] != "published" || got["body"] != "Edited" {
			t.Fatalf("stored %v", got)
		}
		// Only create is logged (the events log, tag Events).
		if evs := commentEvents(t, e, idOf(c)); len(evs) != 1 {
			t.Fatalf("events %+v", evs)
		}
	}, group)
}

func TestStateMachine(t *testing.T) {
	// want[action][from] is the resulting status, or "422".
	want := map[string]map[string]string{
		"approve":  {"pending": "published", "unapproved": "published", "published": "422", "spam": "422", "removed": "422"},
		"spam":     {"pending": "spam", "unapproved": "spam", "published": "spam", "spam": "spam", "removed": "spam"},
		"not_spam": {"pending": "422", "unapproved": "422", "published": "422", "spam": "published", "removed": "422"},
		"remove":   {"pending": "removed", "unapproved": "removed", "published": "removed", "spam": "removed", "removed": "removed"},
		"restore":  {"pending": "422", "unapproved": "422", "published": "422", "spam": "422", "removed": "published"},
	}
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := article(t, e, newsBlog, "Post", "post")
		past := admin.Time{Time: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
		for _, action := range []string{"approve", "spam", "not_spam", "remove", "restore"} {
			for _, from := range []string{"pending", "unapproved", "published", "spam", "removed"} {
				c := create(t, e, a, nil)
				// A comment awaiting moderation without published_at shows that approval sets it.
				edit(t, e, idOf(c), func(c *comments.Comment) {
					c.Status, c.UpdatedAt = from, past
					if from == "unapproved" {
						c.PublishedAt = admin.Time{}
					}
				})
				res := e.Do("POST", path(c, "/"+action), map[string]any{})
				stored := e.Do("GET", path(c, ""), nil).Expect(t, 200).Object(t, "comment")
				to := want[action][from]
				if to == "422" {
					res.Expect(t, 422)
					errs := errorsOf(t, res)["status"].([]any)
					if len(errs) != 1 || !strings.Contains(errs[0].(string), "is "+from) || !strings.Contains(errs[0].(string), action) {
						t.Fatalf("%s from %s: %s", action, from, res.Body)
					}
					if stored["status"] != from || stored["updated_at"] != "2019-12-31T19:00:00-05:00" {
						t.Fatalf("%s from %s changed the comment: %v", action, from, stored)
					}
					continue
				}
				got := res.Expect(t, 200).JSON(t) // the comment, not wrapped
				if got["status"] != to || got["id"] != c["id"] || fmt.Sprint(got) != fmt.Sprint(stored) {
					t.Fatalf("%s from %s: %s, stored %v", action, from, res.Body, stored)
				}
				if (from == to) != (got["updated_at"] == "2019-12-31T19:00:00-05:00") {
					t.Fatalf("%s from %s: updated_at %v", action, from, got["updated_at"])
				}
				// published_at is set when a comment without one is published, else kept.
				wantPub := c["published_at"]
				if from == "unapproved" {
					wantPub = nil
					if to == "published" {
						wantPub = got["updated_at"]
					}
				}
				if got["published_at"] != wantPub {
					t.Fatalf("%s from %s: published_at %v, want %v", action, from, got["published_at"], wantPub)
				}
			}
		}
		for _, action := range []string{"approve", "spam", "not_spam", "remove", "restore"} {
			e.Do("POST", "/web/comments/999999/"+action+".json", map[string]any{}).Expect(t, 404)
		}
		e.Do("POST", "/web/comments/999999/publish.json", map[string]any{}).Expect(t, 404)
	}, group)
}

// Concurrent approve and spam of one comment: whichever commits first, the
// other sees its result, so the comment always ends as spam.
func TestConcurrentModeration(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := article(t, e, newsBlog, "Post", "post")
		for range 6 {
			c := create(t, e, a, nil)
			var wg sync.WaitGroup
			var approve, spam *apitest.Response
			wg.Add(2)
			go func() { defer wg.Done(); approve = e.Do("POST", path(c, "/approve"), map[string]any{}) }()
			go func() { defer wg.Done(); spam = e.Do("POST", path(c, "/spam"), map[string]any{}) }()
			wg.Wait()
			if spam.Status != 200 || spam.JSON(t)["status"] != "spam" {
				t.Fatalf("spam: %d %s", spam.Status, spam.Body)
			}
			switch approve.Status {
			case 200:
				if approve.JSON(t)["status"] != "published" {
					t.Fatalf("approve: %s", approve.Body)
				}
			case 422:
			default:
				t.Fatalf("approve: %d %s", approve.Status, approve.Body)
			}
			if got := e.Do("GET", path(c, ""), nil).Object(t, "comment"); got["status"] != "spam" {
				t.Fatalf("ended %v", got["status"])
			}
		}
	}, group)
}

func TestFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		recipes := putRecord(t, e, "blog", map[string]any{"title": "Recipes", "handle": "recipes"})
		a1 := article(t, e, newsBlog, "One", "one")
		a2 := article(t, e, newsBlog, "Two", "two")
		a3 := article(t, e, recipes, "Soup", "soup")
		// c1 published, c2 spam, c3 removed, c4 unapproved, c5 pending;
		// created one day apart from 2025-01-01 12:00 UTC (their ids are of
		// those days: created_at is the id's second), updated from 2025-01-20.
		day := func(n int) admin.Time { return admin.Time{Time: time.Date(2025, 1, n, 12, 0, 0, 0, time.UTC)} }
		made := 0
		createOn := func(articleID int64, extra map[string]any) map[string]any {
			made++
			e.Change(func(d *platform.Deps) { d.IDs = ids.NewClock(func() time.Time { return day(made).Time }) })
			return create(t, e, articleID, extra)
		}
		c1 := createOn(a1, nil)
		c2 := createOn(a1, nil)
		c3 := createOn(a2, nil)
		c4 := createOn(a3, map[string]any{"blog_id": recipes})
		c5 := createOn(a3, map[string]any{"blog_id": recipes})
		e.Change(func(d *platform.Deps) { d.IDs = ids.NewClock(func() time.Time { return day(30).Time }) })
		for i, c := range []map[string]any{c1, c2, c3, c4, c5} {
			edit(t, e, idOf(c), func(x *comments.Comment) { x.UpdatedAt, x.PublishedAt = day(i+20), day(i+1) })
		}
		e.Do("POST", path(c1, "/approve"), map[string]any{}).Expect(t, 200)
		e.Do("POST", path(c2, "/spam"), map[string]any{}).Expect(t, 200)
		e.Do("POST", path(c3, "/remove"), map[string]any{}).Expect(t, 200)
		edit(t, e, idOf(c4), func(x *comments.Comment) { x.Status = "unapproved" })
		for i, c := range []map[string]any{c1, c2, c3} { // the actions moved updated_at
			edit(t, e, idOf(c), func(x *comments.Comment) { x.UpdatedAt = day(i + 20) })
		}
		r := &commentFilterRun{t: t, e: e, recipes: recipes, a1: a1, a2: a2, a3: a3, c1: c1, c2: c2, c3: c3, c4: c4, c5: c5}
		r.articleBlogAndStatusFilters()
		r.dateFilters()
		r.filtersReadOnlyTheirMatches()
		r.pagingFieldsAndBadParameters()
		r.filtersReadTheirIndexes()
	}, group)
}

// commentFilterRun is one store's TestFilters: a recipes blog, articles a1 and a2 (news) and a3 (recipes), and comments c1 published, c2 spam, c3 removed, c4 unapproved, c5 pending.
type commentFilterRun struct {
	t       *testing.T
	e       *apitest.Env
	recipes int64
	a1      int64
	a2      int64
	a3      int64
	c1      map[string]any
	c2      map[string]any
	c3      map[string]any
	c4      map[string]any
	c5      map[string]any
}

// ids lists the comments of q, their ids joined by commas.
func (r *commentFilterRun) ids(q string) string {
	r.t.Helper()
	var out []string
	for _, c := range r.e.Do("GET", "/web/comments.json"+q, nil).Expect(r.t, 200).List(r.t, "comments") {
		out = append(out, fmt.Sprint(int64(c.(map[string]any)["id"].(float64))))
	}
	return strings.Join(out, ",")
}

func (r *commentFilterRun) count(q string) float64 {
	r.t.Helper()
	return r.e.Do("GET", "/web/comments/count.json"+q, nil).Expect(r.t, 200).JSON(r.t)["count"].(float64)
}

func (r *commentFilterRun) of(cs ...map[string]any) string {
	var out []string
	for _, c := range cs {
		out = append(out, fmt.Sprint(idOf(c)))
	}
	return strings.Join(out, ",")
}

// check compares the list, and the count unless q pages.
func (r *commentFilterRun) check(q string, want ...map[string]any) {
	r.t.Helper()
	if got := r.ids(q); got != r.of(want...) {
		r.t.Fatalf("%s: got %s, want %s", q, got, r.of(want...))
	}
	if strings.Contains(q, "limit") || strings.Contains(q, "since_id") {
		return
	}
	if n := r.count(q); n != float64(len(want)) {
		r.t.Fatalf("count%s: %v, want %d", q, n, len(want))
	}
}

// articleBlogAndStatusFilters: the article, blog, since_id, status and published_status filters, alone and combined.
func (r *commentFilterRun) articleBlogAndStatusFilters() {
	recipes, a1, a2, a3, c1, c2, c3, c4, c5, check := r.recipes, r.a1, r.a2, r.a3, r.c1, r.c2, r.c3, r.c4, r.c5, r.check
	check("", c1, c2, c3, c4, c5)
	check(fmt.Sprintf("?article_id=%d", a1), c1, c2)
	check(fmt.Sprintf("?article_id=%d", a3), c4, c5)
	check(fmt.Sprintf("?blog_id=%d", newsBlog), c1, c2, c3)
	check(fmt.Sprintf("?blog_id=%d", recipes), c4, c5)
	check(fmt.Sprintf("?blog_id=%d&article_id=%d", newsBlog, a2), c3)
	check(fmt.Sprintf("?blog_id=%d&article_id=%d", recipes, a2))
	check("?article_id=424242")
	check(fmt.Sprintf("?since_id=%d", idOf(c2)), c3, c4, c5)
	check(fmt.Sprintf("?blog_id=%d&since_id=%d", newsBlog, idOf(c1)), c2, c3)
	check("?status=published", c1)
	check("?status=spam", c2)
	check("?status=removed", c3)
	check("?status=unapproved", c4)
	check("?status=pending", c5)
	check("?published_status=published", c1)
	check("?published_status=unpublished", c2, c3, c4, c5)
	check("?published_status=any", c1, c2, c3, c4, c5)
	check(fmt.Sprintf("?published_status=unpublished&blog_id=%d", recipes), c4, c5)
	check(fmt.Sprintf("?status=pending&article_id=%d", a3), c5)
}

// dateFilters: the created, updated and published bounds, read in the shop's zone.
func (r *commentFilterRun) dateFilters() {
	a3, c1, c2, c3, c4, c5, check := r.a3, r.c1, r.c2, r.c3, r.c4, r.c5, r.check
	// Dates: the shop is in America/New_York; c2 was created 2025-01-02 07:00 there.
	check("?created_at_min="+url.QueryEscape("2025-01-02 07:00"), c3, c4, c5)
	check("?created_at_min="+url.QueryEscape("2025-01-02 06:59"), c2, c3, c4, c5)
	check("?created_at_max=2025-01-03", c1, c2)
	check("?created_at_min="+url.QueryEscape("2025-01-02T12:00:00Z")+"&created_at_max="+url.QueryEscape("2025-01-04T12:00:01+00:00"), c3, c4)
	check("?updated_at_min=2025-01-22&updated_at_max=2025-01-24", c3, c4)
	check("?published_at_max="+url.QueryEscape("2025-01-03 07:01"), c1, c2, c3)
	check(fmt.Sprintf("?published_at_min=2025-01-02&article_id=%d", a3), c4, c5)
}

// filtersReadOnlyTheirMatches: each filter reads only its matches, its count no more.
func (r *commentFilterRun) filtersReadOnlyTheirMatches() {
	t, e, a3 := r.t, r.e, r.a3
	// Each filter reads only its matches (or, combined, what its most
	// selective index yields), its count no more.
	whole := e.Do("GET", "/web/comments.json?limit=250", nil).Expect(t, 200).List(t, "comments")
	is := func(field string, value any) func(map[string]any) bool {
		return func(r map[string]any) bool { return r[field] == value }
	}
	filters := []apitest.Filter{
		{Query: "status=spam", Keep: is("status", "spam")},
		{Query: "published_status=unpublished", Keep: func(r map[string]any) bool { return r["status"] != "published" }},
		{Query: fmt.Sprintf("article_id=%d", a3), Keep: is("article_id", float64(a3))},
		{Query: fmt.Sprintf("blog_id=%d&status=removed", newsBlog), Keep: func(r map[string]any) bool { return r["blog_id"] == float64(newsBlog) && r["status"] == "removed" },
			Source: is("blog_id", float64(newsBlog))},
		{Query: "status=published&published_status=published", Keep: is("status", "published")},
		{Query: "status=pending&updated_at_min=2025-01-22", Keep: is("status", "pending")},
	}
	for _, field := range []string{"created_at", "updated_at", "published_at"} {
		filters = append(filters, apitest.RangeFilters(t, field, whole)...)
	}
	apitest.CheckFilters(t, e, apitest.FilterCheck{List: "/web/comments.json", Count: "/web/comments/count.json", Key: "comments"}, whole, filters)
}

// pagingFieldsAndBadParameters: paging, fields, and bad parameters that name themselves.
func (r *commentFilterRun) pagingFieldsAndBadParameters() {
	t, e, c1, c2, c3, c4, c5, check := r.t, r.e, r.c1, r.c2, r.c3, r.c4, r.c5, r.check
	// Paging and fields.
	check("?limit=2", c1, c2)
	check("?limit=2&page=2", c3, c4)
	check("?limit=2&page=3", c5)
	check("?limit=2&page=4")
	if l := e.Do("GET", "/web/comments.json?fields=id,status&limit=1", nil).Expect(t, 200).List(t, "comments"); len(l) != 1 || len(l[0].(map[string]any)) != 2 {
		t.Fatalf("fields %v", l)
	}
	// Bad parameters name themselves.
	for q, name := range map[string]string{"status=hidden": "status", "published_status=sometimes": "published_status",
		"article_id=x": "article_id", "blog_id=-1": "blog_id", "created_at_min=soon": "created_at_min", "limit=251": "limit"} {
		for _, p := range []string{"/web/comments.json?", "/web/comments/count.json?"} {
			if p == "/web/comments/count.json?" && name == "limit" {
				continue
			}
			res := e.Do("GET", p+q, nil).Expect(t, 400)
			if _, ok := errorsOf(t, res)[name]; !ok {
				t.Fatalf("%s%s: %s", p, q, res.Body)
			}
		}
	}
}

// filtersReadTheirIndexes: a comment item outside the indexes is seen by the unfiltered list alone.
func (r *commentFilterRun) filtersReadTheirIndexes() {
	t, e, a1, c1, c2, ids, check := r.t, r.e, r.a1, r.c1, r.c2, r.ids, r.check
	// The article and blog filters read their index partitions only: a
	// comment item outside the indexes is seen by the unfiltered list alone.
	stray := putRecord(t, e, "comment", map[string]any{"article_id": a1, "blog_id": newsBlog, "status": "published"})
	if got := ids(""); !strings.HasSuffix(got, fmt.Sprint(stray)) {
		t.Fatalf("unfiltered %s", got)
	}
	check(fmt.Sprintf("?article_id=%d", a1), c1, c2)
	check(fmt.Sprintf("?blog_id=%d&status=published", newsBlog), c1)
}

// The moderation actions take no body: nothing or any JSON object is
// accepted; any other document is 400 and changes nothing.
func TestActionBodies(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c := create(t, e, article(t, e, newsBlog, "Bodies", "bodies"), nil)
		for _, body := range []string{`[null,null]`, `null`, `"spam"`, `5`, `{`} {
			e.Do("POST", path(c, "/spam"), body).Expect(t, 400)
		}
		if s := e.Do("GET", path(c, ""), nil).Expect(t, 200).Object(t, "comment")["status"]; s == "spam" {
			t.Fatalf("a refused action changed the comment: %v", s)
		}
		e.Do("POST", path(c, "/spam"), `{"anything":[1]}`).Expect(t, 200)
		e.Do("POST", path(c, "/not_spam"), "").Expect(t, 200)
	}, group)
}
