package admingraphql

import (
	"context"
	"maps"
	"slices"

	"github.com/storeadmin/adminapi/shared/addresses"
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/records"
)

// loader is what one request's fields share of their reads, so that a
// nested field does not read once per parent (N+1): made per request
// (Executor.Execute) and handed down on the request's copy of the Service
// (Service.l) to every object it resolves, never carried in the context.
//
// A list that makes objects whose nested fields read (a page of products,
// of comments) notes their ids as expected; the first nested field that
// asks reads all of them at once (a product's variants: the variants
// operation's OfProducts, a few Queries for a whole page) and keeps them
// for its siblings. Records read once are kept for the request: a
// variant's product, an article's blog, a comment's article are read once
// per distinct record, and not at all when the parent was already read.
// Fields resolve one after another, so it needs no lock; a mutation
// forgets what it changed.
type loader struct {
	s Service

	wantVariants map[int64]bool // products a variants field may ask for
	variants     map[int64][]catalog.Variant
	products     map[int64]catalog.Product

	blogs        map[int64]articles.Blog
	wantArticles map[int64]bool // articles a comment's article may ask for
	articles     map[int64]articles.Article

	// addrs holds each customer's addresses and default, read once for
	// its addresses, addressesV2 and defaultAddress.
	addrs map[int64]customerAddresses
}

type customerAddresses struct {
	all []addresses.Address
	def *addresses.Address
}

func newLoader(s Service) *loader {
	return &loader{s: s, wantVariants: map[int64]bool{}, variants: map[int64][]catalog.Variant{}, products: map[int64]catalog.Product{},
		blogs: map[int64]articles.Blog{}, wantArticles: map[int64]bool{}, articles: map[int64]articles.Article{},
		addrs: map[int64]customerAddresses{}}
}

// listedProduct keeps a product of a page, and expects its variants.
func (l *loader) listedProduct(p catalog.Product) {
	l.products[p.ID] = p
	if _, ok := l.variants[p.ID]; !ok {
		l.wantVariants[p.ID] = true
	}
}

// productVariants are product pid's variants in position order: with
// those of every product expected, when they are not read yet.
func (l *loader) productVariants(ctx context.Context, pid int64) ([]catalog.Variant, error) {
	if vs, ok := l.variants[pid]; ok {
		return vs, nil
	}
	l.wantVariants[pid] = true
	pids := slices.Sorted(maps.Keys(l.wantVariants))
	clear(l.wantVariants)
	got, err := l.s.Variants.OfProducts(ctx, pids)
	if err != nil {
		return nil, err
	}
	maps.Copy(l.variants, got)
	return l.variants[pid], nil
}

// product is product pid, read once.
func (l *loader) product(ctx context.Context, pid int64) (catalog.Product, error) {
	if p, ok := l.products[pid]; ok {
		return p, nil
	}
	p, err := l.s.Variants.Product(ctx, pid)
	if err == nil {
		l.products[pid] = p
	}
	return p, err
}

// forgetProduct drops what was read of product pid: a mutation changed it.
func (l *loader) forgetProduct(pid int64) {
	delete(l.products, pid)
	delete(l.variants, pid)
}

// blog is blog id, read once.
func (l *loader) blog(ctx context.Context, id int64) (articles.Blog, error) {
	if b, ok := l.blogs[id]; ok {
		return b, nil
	}
	b, err := l.s.Articles.Blog(ctx, id)
	if err == nil {
		l.blogs[id] = b
	}
	return b, err
}

// keepBlog keeps a blog read by its own field.
func (l *loader) keepBlog(b articles.Blog) { l.blogs[b.ID] = b }

// expectArticle notes an article a comment of a page names.
func (l *loader) expectArticle(id int64) {
	if _, ok := l.articles[id]; !ok {
		l.wantArticles[id] = true
	}
}

// article is article id: with every article expected, each read once
// (GetItems, records.Parallel); admin.NotFound when it is not there.
func (l *loader) article(ctx context.Context, id int64) (articles.Article, error) {
	if a, ok := l.articles[id]; ok {
		return a, nil
	}
	l.wantArticles[id] = true
	ids := slices.Sorted(maps.Keys(l.wantArticles))
	clear(l.wantArticles)
	got := make([]*articles.Article, len(ids))
	err := records.Parallel(ctx, len(ids), func(ctx context.Context, i int) error {
		a, err := l.s.Articles.Find(ctx, ids[i])
		if err == nil {
			got[i] = &a
		} else if admin.ErrorCode(err) == admin.ENOTFOUND {
			err = nil // gone: its comment's field says so
		}
		return err
	})
	for _, a := range got {
		if a != nil {
			l.articles[a.ID] = *a
		}
	}
	if err != nil {
		return articles.Article{}, err
	}
	a, ok := l.articles[id]
	if !ok {
		return a, admin.NotFound
	}
	return a, nil
}

// addresses are customer cid's addresses in id order and its default.
func (l *loader) addresses(ctx context.Context, cid int64) ([]addresses.Address, *addresses.Address, error) {
	if a, ok := l.addrs[cid]; ok {
		return a.all, a.def, nil
	}
	all, def, err := l.s.Addresses.OfCustomer(ctx, cid)
	if err != nil {
		return nil, nil, err
	}
	l.addrs[cid] = customerAddresses{all, def}
	return all, def, nil
}

// forget drops what was read of customer cid: a mutation changed it.
func (l *loader) forget(cid int64) { delete(l.addrs, cid) }
