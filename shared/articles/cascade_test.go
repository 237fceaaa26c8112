package articles_test

import (
	"fmt"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

// Deleting an article deletes its comments.
func TestDeletingAnArticleDeletesItsComments(t *testing.T) {
	both := api.Group{Name: "blogs", Routes: func(d *platform.Deps) []httpapi.Route {
		return append(articles.Routes(d), comments.Routes(d)...)
	}}
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const blog = 241253187
		a := e.Do("POST", fmt.Sprintf("/web/blogs/%d/articles.json", blog), map[string]any{"article": map[string]any{"title": "Doomed"}}).
			Expect(t, 201).Object(t, "article")
		keep := e.Do("POST", fmt.Sprintf("/web/blogs/%d/articles.json", blog), map[string]any{"article": map[string]any{"title": "Kept"}}).
			Expect(t, 201).Object(t, "article")
		comment := func(article map[string]any) {
			e.Do("POST", "/web/comments.json", map[string]any{"comment": map[string]any{
				"body": "hi", "author": "Ann", "email": "ann@example.com", "blog_id": blog, "article_id": article["id"]}}).Expect(t, 201)
		}
		comment(a)
		comment(a)
		comment(keep)
		e.Do("DELETE", fmt.Sprintf("/web/blogs/%d/articles/%d.json", blog, int64(a["id"].(float64))), nil).Expect(t, 200)
		if c := e.Do("GET", "/web/comments/count.json", nil).Expect(t, 200).JSON(t)["count"]; c != 1.0 {
			t.Fatalf("comments left: %v", c)
		}
		if l := e.Do("GET", "/web/comments.json", nil).Expect(t, 200).List(t, "comments"); len(l) != 1 || l[0].(map[string]any)["article_id"] != keep["id"] {
			t.Fatalf("comments %v", l)
		}
		if c := e.Do("GET", fmt.Sprintf("/web/comments/count.json?article_id=%d", int64(a["id"].(float64))), nil).JSON(t)["count"]; c != 0.0 {
			t.Fatalf("article count %v", c)
		}
	}, both)
}
