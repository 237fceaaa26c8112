package admingraphql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
)

// An article made by GraphQL in the seeded blog is read by REST; a comment
// made by REST is moderated by GraphQL; the events log shows both, newest
// last, through GraphQL.
func TestContentBothWays(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		made := gql(t, e, apitest.DemoToken, `mutation($a: ArticleCreateInput!) { articleCreate(article: $a) {
			article { id title handle author { name } tags isPublished blog { title handle } } userErrors { field message code } } }`,
			map[string]any{"a": map[string]any{"blogId": "gid://shopify/Blog/241253187", "title": "GraphQL news", "body": "<p>n</p>",
				"author": map[string]any{"name": "Ann"}, "tags": []string{"a", "b"}}})
		a := dig(made, "data", "articleCreate", "article")
		if dig(a, "handle") != "graphql-news" || dig(a, "author", "name") != "Ann" || fmt.Sprint(dig(a, "tags")) != "[a b]" || dig(a, "blog", "title") != "News" {
			t.Fatalf("articleCreate: %v", made)
		}
		id := strings.TrimPrefix(dig(a, "id").(string), "gid://shopify/Article/")
		rest := e.Do("GET", "/web/blogs/241253187/articles/"+id+".json", nil).Expect(t, 200).Object(t, "article")
		if rest["title"] != "GraphQL news" || rest["body_html"] != "<p>n</p>" {
			t.Errorf("REST reads %v", rest)
		}
		noBlog := gql(t, e, apitest.DemoToken, `mutation { articleCreate(article: {title: "x", author: {name: "A"}}) { article { id } userErrors { code } } }`, nil)
		if dig(noBlog, "data", "articleCreate", "userErrors", 0, "code") != "BLOG_REFERENCE_REQUIRED" {
			t.Errorf("no blog: %v", noBlog)
		}

		c := e.Do("POST", "/web/comments.json", map[string]any{"comment": map[string]any{"body": "Nice", "author": "Bo", "email": "bo@example.com",
			"blog_id": 241253187, "article_id": rest["id"]}}).Expect(t, 201).Object(t, "comment")
		cid := fmt.Sprintf("gid://shopify/Comment/%.0f", c["id"])
		spam := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { commentSpam(id: $id) { comment { status author { name } article { title } } userErrors { message } } }`, map[string]any{"id": cid})
		if dig(spam, "data", "commentSpam", "comment", "status") != "SPAM" || dig(spam, "data", "commentSpam", "comment", "article", "title") != "GraphQL news" {
			t.Errorf("commentSpam: %v", spam)
		}
		if s := e.Do("GET", fmt.Sprintf("/web/comments/%.0f.json", c["id"]), nil).Expect(t, 200).Object(t, "comment")["status"]; s != "spam" {
			t.Errorf("REST reads status %v", s)
		}
		list := gql(t, e, apitest.DemoToken, `query($id: ID!) { article(id: $id) { commentsCount { count } comments(first: 5, query: "status:spam") { nodes { body } } } }`, map[string]any{"id": dig(a, "id")})
		if dig(list, "data", "article", "commentsCount", "count") != 1.0 || dig(list, "data", "article", "comments", "nodes", 0, "body") != "Nice" {
			t.Errorf("article comments: %v", list)
		}

		evs := gql(t, e, apitest.DemoToken, `{ events(last: 5, query: "subject_type:article") { nodes { __typename ... on BasicEvent { action subjectType message } } } eventsCount { count } }`, nil)
		nodes, _ := dig(evs, "data", "events", "nodes").([]any)
		if len(nodes) == 0 || dig(nodes[len(nodes)-1], "subjectType") != "ARTICLE" || dig(nodes[len(nodes)-1], "__typename") != "BasicEvent" {
			t.Errorf("events: %v", evs)
		}
		first := gql(t, e, apitest.DemoToken, `{ events(first: 1) { nodes { id } pageInfo { endCursor hasNextPage } } }`, nil)
		next := gql(t, e, apitest.DemoToken, `query($c: String) { events(first: 1, after: $c) { nodes { id } } }`,
			map[string]any{"c": dig(first, "data", "events", "pageInfo", "endCursor")})
		a1, _ := dig(first, "data", "events", "nodes", 0, "id").(string)
		a2, _ := dig(next, "data", "events", "nodes", 0, "id").(string)
		if dig(first, "data", "events", "pageInfo", "hasNextPage") != true || a1 == "" || a2 == "" || len(a2) < len(a1) || (len(a2) == len(a1) && a2 <= a1) {
			t.Errorf("events in id order: %s then %s (%v, %v)", a1, a2, first, next)
		}
	}, groups...)
}

// The root blogs and articles lists, in id order: articles of every blog
// or, with blog_id, of one; a blog's articles in id order too; another
// sort key or filter is refused by name.
func TestRootBlogsAndArticles(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var ids []string
		for _, title := range []string{"First", "Second", "Third"} {
			a := e.Do("POST", "/web/blogs/241253187/articles.json", map[string]any{"article": map[string]any{"title": title, "author": "Ann"}}).Expect(t, 201).Object(t, "article")
			ids = append(ids, fmt.Sprintf("gid://shopify/Article/%.0f", a["id"]))
		}
		ans := gql(t, e, apitest.DemoToken, `{ blogsCount { count } blogs(first: 5) { nodes { id title articles(first: 2) { nodes { id } pageInfo { hasNextPage } } } }
			articles(first: 5) { nodes { id title blog { handle } } } news: articles(first: 1, reverse: true, query: "blog_id:241253187") { nodes { title } }
			none: articles(first: 1, query: "blog_id:1") { nodes { id } } }`, nil)
		if dig(ans, "errors") != nil || dig(ans, "data", "blogsCount", "count") != 1.0 || dig(ans, "data", "blogs", "nodes", 0, "title") != "News" {
			t.Fatalf("blogs: %v", ans)
		}
		blogArticles := dig(ans, "data", "blogs", "nodes", 0, "articles")
		if dig(blogArticles, "nodes", 0, "id") != ids[0] || dig(blogArticles, "nodes", 1, "id") != ids[1] || dig(blogArticles, "pageInfo", "hasNextPage") != true {
			t.Errorf("a blog's articles in id order: %v", blogArticles)
		}
		all, _ := dig(ans, "data", "articles", "nodes").([]any)
		if len(all) != 3 || dig(all, 0, "id") != ids[0] || dig(all, 2, "title") != "Third" || dig(all, 1, "blog", "handle") != "news" {
			t.Errorf("articles: %v", all)
		}
		if dig(ans, "data", "news", "nodes", 0, "title") != "Third" || len(dig(ans, "data", "none", "nodes").([]any)) != 0 {
			t.Errorf("articles of a blog: %v", ans)
		}
		for q, want := range map[string]string{`{ articles(first: 1, sortKey: TITLE) { nodes { id } } }`: "sortKey TITLE",
			`{ articles(first: 1, query: "author:Ann") { nodes { id } } }`: "author is not a filter",
			`{ blogs(first: 1, query: "title:News") { nodes { id } } }`:    "query is not supported on blogs"} {
			bad := gql(t, e, apitest.DemoToken, q, nil)
			if msg, _ := dig(bad, "errors", 0, "message").(string); !strings.Contains(msg, want) {
				t.Errorf("%s: %v", q, bad)
			}
		}
	}, groups...)
}
