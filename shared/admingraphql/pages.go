package admingraphql

import (
	"context"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
)

// pageObj is a Page.
type pageObj pages.Page

func (pageObj) TypeName() string { return "Page" }

func (p pageObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("Page", p.ID), nil
	case "title":
		return p.Title, nil
	case "handle":
		return p.Handle, nil
	case "body":
		return p.BodyHTML, nil
	case "bodySummary":
		return summary(p.BodyHTML), nil
	case "isPublished":
		return !p.PublishedAt.IsZero(), nil
	case "publishedAt":
		return timeOrNil(p.PublishedAt), nil
	case "templateSuffix":
		return p.TemplateSuffix, nil
	case "createdAt":
		return p.CreatedAt.Time, nil
	case "updatedAt":
		return p.UpdatedAt.Time, nil
	}
	return nil, nil
}

func timeOrNil(t admin.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Time
}

// summary is a body's text without its markup, at most 150 characters,
// as Shopify's bodySummary.
func summary(html string) string {
	var b strings.Builder
	in := false
	for _, r := range html {
		switch {
		case r == '<':
			in = true
		case r == '>':
			in = false
			b.WriteByte(' ')
		case !in:
			b.WriteRune(r)
		}
	}
	s := strings.Join(strings.Fields(b.String()), " ")
	if r := []rune(s); len(r) > 150 {
		s = string(r[:150])
	}
	return s
}

func (s Service) pageQuery(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "page":
		id, err := idArg(f, "id", "Page")
		if err != nil {
			return nil, err
		}
		p, err := s.Pages.Get(ctx, id)
		return found(s.page(p), err)
	}
	if err := noSavedSearch(f); err != nil {
		return nil, err
	}
	filter, err := pageFilter(ctx, f)
	if err != nil {
		return nil, err
	}
	return listOf(f, "pagesCount", "PageConnection", func() (int, error) { return s.Pages.Count(ctx, filter) },
		func(w records.Window) ([]pages.Page, records.Span, error) { return s.Pages.List(ctx, filter, 0, w) },
		func(p pages.Page) graphql.Object { return s.page(p) }, func(p pages.Page) int64 { return p.ID })
}

// pageFilter reads a pages query: title, handle, created_at, updated_at,
// published_at and published_status, as the REST list's filters.
func pageFilter(ctx context.Context, f *graphql.Field) (pages.Filter, error) {
	v, err := searchArg(f, "title", "handle", "created_at", "updated_at", "published_at", "published_status")
	if err != nil {
		return pages.Filter{}, err
	}
	pf := pages.Filter{Title: v.Get("title"), Handle: v.Get("handle")}
	if pf.Filter, err = publishing.ParseFilter(v, admin.ShopFrom(ctx).Location()); err != nil {
		return pages.Filter{}, graphql.Errorf("BAD_REQUEST", "query: %v", err)
	}
	return pf, nil
}

// pageInput is a PageCreateInput or PageUpdateInput as the REST input.
func pageInput(m map[string]any) (*pages.Input, error) {
	in := &pages.Input{}
	if v, ok := m["title"].(string); ok {
		in.Title = &v
	}
	if v, ok := m["handle"].(string); ok {
		in.Handle = &v
	}
	if v, ok := m["body"].(string); ok {
		in.BodyHTML = &v
	}
	if v, ok := m["isPublished"].(bool); ok {
		in.Published = &v
	}
	if v, ok := m["templateSuffix"]; ok {
		in.TemplateSuffix.Set, in.TemplateSuffix.Null = true, v == nil
		in.TemplateSuffix.Value, _ = v.(string)
	}
	if _, ok := m["publishDate"]; ok {
		return nil, admin.Invalid("publish_date", "is not supported here: publish with isPublished (docs/graphql.md)")
	}
	return in, nil
}

func (s Service) pageMutation(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "pageCreate":
		in, err := pageInput(f.Args["page"].(map[string]any))
		var p pages.Page
		if err == nil {
			p, err = s.Pages.Create(ctx, in)
		}
		return payload("PageCreatePayload", "page", s.page(p), "PageCreateUserError", "page", err)
	case "pageUpdate":
		id, err := idArg(f, "id", "Page")
		if err != nil {
			return nil, err
		}
		in, err := pageInput(f.Args["page"].(map[string]any))
		var p pages.Page
		if err == nil {
			p, err = s.Pages.Update(ctx, id, in)
		}
		return payload("PageUpdatePayload", "page", s.page(p), "PageUpdateUserError", "page", err)
	case "pageDelete":
		id, err := idArg(f, "id", "Page")
		if err != nil {
			return nil, err
		}
		err = s.Pages.Delete(ctx, id)
		return payload("PageDeletePayload", "deletedPageId", graphql.GID("Page", id), "PageDeleteUserError", "Page", err)
	}
	return nil, nil
}

// page is a Page with its metafields.
func (s Service) page(p pages.Page) graphql.Object {
	return s.owned(pageObj(p), metafields.OwnerPage, p.ID)
}
