package articles

import (
	"context"

	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Lists in id order across the shop, for GraphQL's root articles and blogs
// (shared/admingraphql); REST lists articles by blog, newest first, and
// serves no blog list (the blogs are seeded).

// All returns the window of the shop's articles in id order, and where it
// lies: one Query of the article partition.
func (s Service) All(ctx context.Context, w records.Window) ([]Article, records.Span, error) {
	return records.Spanned[Article](records.ListWindow(ctx, s.Store, store.Query{PK: Partition}, nil, w))
}

// OfBlog returns the window of the blog's articles in id order, and where
// it lies: the blog's read, and one Query of its index partition.
func (s Service) OfBlog(ctx context.Context, blogID int64, w records.Window) ([]Article, records.Span, error) {
	if _, err := LookupBlog(ctx, s.Store, blogID); err != nil {
		return nil, records.Span{}, err
	}
	q := store.Query{Index: store.GSI1, PK: BlogIndex(blogID)}
	return records.Spanned[Article](records.ListWindow(ctx, s.Store, q, nil, w))
}

// Blogs returns the window of the seeded blogs in id order, and where it
// lies.
func (s Service) Blogs(ctx context.Context, w records.Window) ([]Blog, records.Span, error) {
	return records.Spanned[Blog](records.ListWindow(ctx, s.Store, store.Query{PK: parents.BlogPartition}, nil, w))
}

// BlogsCount counts the seeded blogs: the partition's counter.
func (s Service) BlogsCount(ctx context.Context) (int, error) {
	return records.Count(ctx, s.Store, parents.BlogPartition)
}
