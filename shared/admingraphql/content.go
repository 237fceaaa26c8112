package admingraphql

import (
	"context"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
)

// articleObj is an Article; its blog and comments are read when selected.
type articleObj struct {
	a articles.Article
	s Service
}

func (articleObj) TypeName() string { return "Article" }

func (o articleObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	a := o.a
	switch f.Name {
	case "id":
		return graphql.GID("Article", a.ID), nil
	case "title":
		return a.Title, nil
	case "handle":
		return a.Handle, nil
	case "body":
		return a.BodyHTML, nil
	case "summary":
		return a.SummaryHTML, nil
	case "author":
		return graphql.Map{Type: "ArticleAuthor", Fields: map[string]any{"name": a.Author}}, nil
	case "tags":
		return nonNil(a.TagList()), nil
	case "isPublished":
		return !a.PublishedAt.IsZero(), nil
	case "publishedAt":
		return timeOrNil(a.PublishedAt), nil
	case "templateSuffix":
		return a.TemplateSuffix, nil
	case "createdAt":
		return a.CreatedAt.Time, nil
	case "updatedAt":
		return timeOrNil(a.UpdatedAt), nil
	case "blog":
		b, err := o.s.l.blog(ctx, a.BlogID)
		if err != nil {
			return nil, err
		}
		return o.s.owned(blogObj{b, o.s}, metafields.OwnerBlog, b.ID), nil
	case "comments":
		o.s.l.articles[a.ID] = a // its comments' article
		return o.s.commentList(ctx, f, comments.Filter{ArticleID: a.ID, BlogID: a.BlogID})
	case "commentsCount":
		n, err := o.s.Comments.Count(ctx, &comments.Filter{ArticleID: a.ID, BlogID: a.BlogID})
		if err != nil {
			return nil, err
		}
		return graphql.Count(n), nil
	}
	return nil, nil
}

// blogObj is a Blog (seeded; it has no mutations here).
type blogObj struct {
	b articles.Blog
	s Service
}

func (blogObj) TypeName() string { return "Blog" }

func (o blogObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("Blog", o.b.ID), nil
	case "title":
		return o.b.Title, nil
	case "handle":
		return o.b.Handle, nil
	case "articlesCount":
		n, err := o.s.Articles.Count(ctx, o.b.ID, &articles.Filter{})
		if err != nil {
			return nil, err
		}
		return graphql.Count(n), nil
	case "articles":
		p, err := graphql.PageArgs(f.Args)
		if err != nil {
			return nil, err
		}
		o.s.l.keepBlog(o.b) // its articles' blog
		list, span, err := o.s.Articles.OfBlog(ctx, o.b.ID, window(p))
		if err != nil {
			return nil, err
		}
		return connection("ArticleConnection", p, list, span, func(a articles.Article) graphql.Object {
			return o.s.article(a)
		},
			func(a articles.Article) int64 { return a.ID }), nil
	}
	return nil, nil
}

// commentObj is a Comment.
type commentObj struct {
	c comments.Comment
	s Service
}

func (commentObj) TypeName() string { return "Comment" }

func (o commentObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	c := o.c
	switch f.Name {
	case "id":
		return graphql.GID("Comment", c.ID), nil
	case "body":
		return c.Body, nil
	case "bodyHtml":
		return c.BodyHTML, nil
	case "author":
		return graphql.Map{Type: "CommentAuthor", Fields: map[string]any{"name": c.Author, "email": c.Email}}, nil
	case "status":
		return strings.ToUpper(c.Status), nil
	case "ip":
		return nilIfEmpty(c.IP), nil
	case "userAgent":
		return c.UserAgent, nil
	case "isPublished":
		return c.Status == comments.StatusPublished, nil
	case "publishedAt":
		return timeOrNil(c.PublishedAt), nil
	case "createdAt":
		return c.CreatedAt.Time, nil
	case "updatedAt":
		return timeOrNil(c.UpdatedAt), nil
	case "article":
		a, err := o.s.l.article(ctx, c.ArticleID)
		if err != nil {
			return found(nil, err)
		}
		return o.s.article(a), nil
	}
	return nil, nil
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// eventObj is a BasicEvent.
type eventObj events.Event

func (eventObj) TypeName() string { return "BasicEvent" }

func (e eventObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("BasicEvent", e.ID), nil
	case "action":
		return e.Verb, nil
	case "message":
		return e.Message, nil
	case "author", "appTitle":
		return e.Author, nil
	case "arguments":
		return e.Arguments, nil
	case "attributeToApp":
		return e.Author != "", nil
	case "attributeToUser", "criticalAlert":
		return false, nil
	case "createdAt":
		return e.CreatedAt.Time, nil
	case "subjectId":
		return graphql.GID(e.SubjectType, e.SubjectID), nil
	case "subjectType":
		if t := strings.ToUpper(e.SubjectType); t != "APP" {
			return t, nil
		}
		return "UNKNOWN", nil
	}
	return nil, nil
}

func (s Service) contentQuery(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "article":
		id, err := idArg(f, "id", "Article")
		if err != nil {
			return nil, err
		}
		a, err := s.Articles.Find(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		return s.article(a), nil
	case "blog":
		id, err := idArg(f, "id", "Blog")
		if err != nil {
			return nil, err
		}
		b, err := s.Articles.Blog(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		return s.owned(blogObj{b, s}, metafields.OwnerBlog, b.ID), nil
	case "comment":
		id, err := idArg(f, "id", "Comment")
		if err != nil {
			return nil, err
		}
		c, err := s.Comments.Get(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		return commentObj{c, s}, nil
	case "comments":
		return s.commentList(ctx, f, comments.Filter{})
	case "articles":
		return s.articleList(ctx, f)
	case "blogs", "blogsCount":
		if q, _ := f.Args["query"].(string); strings.TrimSpace(q) != "" {
			return nil, graphql.Errorf("BAD_REQUEST", "query is not supported on %s: the seeded blogs are listed whole (docs/graphql.md)", f.Name)
		}
		return listOf(f, "blogsCount", "BlogConnection", func() (int, error) { return s.Articles.BlogsCount(ctx) },
			func(w records.Window) ([]articles.Blog, records.Span, error) { return s.Articles.Blogs(ctx, w) },
			func(b articles.Blog) graphql.Object {
				s.l.keepBlog(b)
				return s.owned(blogObj{b, s}, metafields.OwnerBlog, b.ID)
			}, func(b articles.Blog) int64 { return b.ID })
	}
	return nil, nil
}

// articleList is the root articles: the shop's, or with query blog_id:<id>
// one blog's, in id order.
func (s Service) articleList(ctx context.Context, f *graphql.Field) (any, error) {
	v, err := searchArg(f, "blog_id")
	if err != nil {
		return nil, err
	}
	var blogID int64
	if b := v.Get("blog_id"); b != "" {
		if blogID, err = strconv.ParseInt(b, 10, 64); err != nil || blogID <= 0 {
			return nil, graphql.Errorf("BAD_REQUEST", "query: blog_id must be a blog's id")
		}
	}
	return listOf(f, "", "ArticleConnection", nil,
		func(w records.Window) ([]articles.Article, records.Span, error) {
			if blogID == 0 {
				return s.Articles.All(ctx, w)
			}
			list, span, err := s.Articles.OfBlog(ctx, blogID, w)
			if admin.ErrorCode(err) == admin.ENOTFOUND {
				return nil, records.Span{}, nil // no such blog: no articles
			}
			return list, span, err
		},
		s.article, func(a articles.Article) int64 { return a.ID })
}

// commentList reads a comments connection: query takes status,
// created_at, updated_at and published_at, as the REST list.
func (s Service) commentList(ctx context.Context, f *graphql.Field, filter comments.Filter) (any, error) {
	v, err := searchArg(f, "status", "created_at", "updated_at", "published_at")
	if err != nil {
		return nil, err
	}
	loc := admin.ShopFrom(ctx).Location()
	if filter.Status = strings.ToLower(v.Get("status")); filter.Status != "" && !contains(comments.Statuses, filter.Status) {
		return nil, graphql.Errorf("BAD_REQUEST", "query: status is one of %s", strings.Join(comments.Statuses, ", "))
	}
	st, err := dates.ParseStamps(v, loc)
	if err != nil {
		return nil, graphql.Errorf("BAD_REQUEST", "query: %v", err)
	}
	filter.Created, filter.Updated = st.Created, st.Updated
	if filter.PublishedAt, err = dates.ParseRange(v, "published_at", loc); err != nil {
		return nil, graphql.Errorf("BAD_REQUEST", "query: %v", err)
	}
	return listOf(f, "", "CommentConnection", nil,
		func(w records.Window) ([]comments.Comment, records.Span, error) {
			return s.Comments.List(ctx, &filter, 0, w)
		},
		func(c comments.Comment) graphql.Object {
			s.l.expectArticle(c.ArticleID)
			return commentObj{c, s}
		}, func(c comments.Comment) int64 { return c.ID })
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func (s Service) eventQuery(ctx context.Context, f *graphql.Field) (any, error) {
	if f.Name == "event" {
		_, id, err := graphql.ParseGID(f.Args["id"].(string), "")
		if err != nil {
			return nil, err
		}
		ev, err := s.Events.Get(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		return eventObj(ev), nil
	}
	v, err := searchArg(f, "created_at", "subject_type", "action")
	if err != nil {
		return nil, err
	}
	var filter events.Filter
	if filter.Created, err = dates.ParseRange(v, "created_at", admin.ShopFrom(ctx).Location()); err != nil {
		return nil, graphql.Errorf("BAD_REQUEST", "query: %v", err)
	}
	if f.Name == "eventsCount" {
		if v.Get("subject_type") != "" || v.Get("action") != "" {
			return nil, graphql.Errorf("BAD_REQUEST", "query: eventsCount takes created_at only, as the REST count")
		}
		n, err := s.Events.Count(ctx, filter.Created)
		if err != nil {
			return nil, err
		}
		return graphql.Count(n), nil
	}
	filter.Verb = v.Get("action")
	if t := v.Get("subject_type"); t != "" {
		name := strings.ToUpper(t[:1]) + strings.ToLower(t[1:])
		if !contains(events.SubjectTypes, name) {
			return nil, graphql.Errorf("BAD_REQUEST", "query: subject_type is one of %s", strings.Join(events.SubjectTypes, ", "))
		}
		filter.Types = []string{name}
	}
	// A since of 0 lists the log in id order, as connections are.
	zero := int64(0)
	return listOf(f, "", "EventConnection", nil,
		func(w records.Window) ([]events.Event, records.Span, error) {
			return s.Events.List(ctx, filter, &zero, w)
		},
		func(e events.Event) graphql.Object { return eventObj(e) }, func(e events.Event) int64 { return e.ID })
}

// articleInput is an ArticleCreateInput or ArticleUpdateInput as the
// REST input.
func articleInput(m map[string]any) *articles.Input {
	in := &articles.Input{}
	str := func(k string) *string {
		if v, ok := m[k].(string); ok {
			return &v
		}
		return nil
	}
	in.Title, in.Handle, in.BodyHTML, in.SummaryHTML = str("title"), str("handle"), str("body"), str("summary")
	if a, ok := m["author"].(map[string]any); ok {
		if name, ok := a["name"].(string); ok {
			in.Author = &name
		}
	}
	if tags, ok := m["tags"].([]any); ok {
		joined := strings.Join(strs(tags), ", ")
		in.Tags = &joined
	}
	if v, ok := m["isPublished"].(bool); ok {
		in.Published = &v
	}
	if v, ok := m["templateSuffix"]; ok {
		in.TemplateSuffix.Set, in.TemplateSuffix.Null = true, v == nil
		in.TemplateSuffix.Value, _ = v.(string)
	}
	return in
}

func (s Service) contentMutation(ctx context.Context, f *graphql.Field) (any, error) {
	m, _ := f.Args["article"].(map[string]any)
	switch f.Name {
	case "articleCreate":
		blogID := int64(0)
		if gid, ok := m["blogId"].(string); ok {
			_, id, err := graphql.ParseGID(gid, "Blog")
			if err != nil {
				return nil, err
			}
			blogID = id
		}
		if blogID == 0 {
			return payload("ArticleCreatePayload", "article", nil, "ArticleCreateUserError", "article",
				codedErr{admin.Invalid("blog_id", "is required: give article.blogId (a blog by title is not served)"), "BLOG_REFERENCE_REQUIRED"})
		}
		a, err := s.Articles.Create(ctx, blogID, articleInput(m))
		return payload("ArticleCreatePayload", "article", s.article(a), "ArticleCreateUserError", "article", err)
	case "articleUpdate":
		id, err := idArg(f, "id", "Article")
		if err != nil {
			return nil, err
		}
		cur, err := s.Articles.Find(ctx, id)
		if err != nil {
			return payload("ArticleUpdatePayload", "article", nil, "ArticleUpdateUserError", "Article", err)
		}
		a, err := s.Articles.Update(ctx, cur.BlogID, id, articleInput(m))
		return payload("ArticleUpdatePayload", "article", s.article(a), "ArticleUpdateUserError", "article", err)
	case "articleDelete":
		id, err := idArg(f, "id", "Article")
		if err != nil {
			return nil, err
		}
		cur, err := s.Articles.Find(ctx, id)
		if err == nil {
			err = s.Articles.Delete(ctx, cur.BlogID, id)
		}
		return payload("ArticleDeletePayload", "deletedArticleId", graphql.GID("Article", id), "ArticleDeleteUserError", "Article", err)
	}
	id, err := idArg(f, "id", "Comment")
	if err != nil {
		return nil, err
	}
	typ := strings.ToUpper(f.Name[:1]) + f.Name[1:]
	var c comments.Comment
	switch f.Name {
	case "commentApprove":
		c, err = s.Comments.Approve(ctx, id)
	case "commentSpam":
		c, err = s.Comments.Spam(ctx, id)
	case "commentNotSpam":
		c, err = s.Comments.NotSpam(ctx, id)
	case "commentDelete":
		_, err = s.Comments.Remove(ctx, id)
		return payload("CommentDeletePayload", "deletedCommentId", graphql.GID("Comment", id), "CommentDeleteUserError", "Comment", err)
	}
	return payload(typ+"Payload", "comment", commentObj{c, s}, typ+"UserError", "Comment", err)
}

// article is an Article with its metafields (an article's owner names its
// blog).
func (s Service) article(a articles.Article) graphql.Object {
	return owned{articleObj{a, s}, metafields.Owner{Resource: metafields.OwnerArticle, ID: a.ID, Blog: a.BlogID}, s}
}
