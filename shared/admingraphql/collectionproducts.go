package admingraphql

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/collects"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
)

// A collection's products: a custom collection's are its collects, which
// collectionAddProducts and collectionRemoveProducts make and remove
// through the collects' operations (POST and DELETE /com/collects), so
// the limits, messages and products_count are REST's; a smart
// collection's are its memberships, which the service keeps and no
// mutation changes.

// msgSmartRemove is the user error of removing products from a smart
// collection (REST answers its memberships' collects 404: they are not
// addressable).
const msgSmartRemove = "Cannot remove products from a smart collection"

// collectionProducts answers a Collection's products connection (in the
// collection's order: a custom collection's by position, which is the
// order its products were added in; sortKey ID orders by product id) and
// hasProduct.
func (s Service) collectionProducts(ctx context.Context, c collectionObj, f *graphql.Field) (any, error) {
	if f.Name == "hasProduct" {
		pid, err := idArg(f, "id", "Product")
		if err != nil {
			return nil, err
		}
		n, err := s.Collects.Count(ctx, collects.Filter{CollectionID: c.fields.ID, ProductID: pid})
		return n > 0, err
	}
	key, _ := f.Args["sortKey"].(string)
	switch key {
	case "", "COLLECTION_DEFAULT", "MANUAL", "ID":
	default:
		return nil, graphql.Errorf("BAD_REQUEST", "sortKey %s is not supported on products: only COLLECTION_DEFAULT, MANUAL and ID (docs/graphql.md)", key)
	}
	p, err := graphql.PageArgs(f.Args)
	if err != nil {
		return nil, err
	}
	// The whole list of links (a collection's collects, or its smart
	// memberships: one Query), paged in memory by product id.
	links, _, err := s.Collects.List(ctx, collects.Filter{CollectionID: c.fields.ID}, 0, records.Window{Limit: 1<<31 - 2})
	if err != nil {
		return nil, err
	}
	pids := make([]int64, len(links))
	for i, l := range links {
		pids[i] = l.ProductID
	}
	if key == "ID" {
		slices.Sort(pids)
	}
	conn := pageInMemory("ProductConnection", p, pids, func(int64) graphql.Object { return nil }, func(id int64) int64 { return id })
	// The page's products, read in parallel (GetItems), each kept for the
	// request with its variants expected.
	prods := make([]catalog.Product, len(conn.IDs))
	err = records.Parallel(ctx, len(conn.IDs), func(ctx context.Context, i int) error {
		var err error
		prods[i], err = s.Variants.Product(ctx, conn.IDs[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	for i, pr := range prods {
		s.l.listedProduct(pr)
		conn.Nodes[i] = s.owned(productObj{pr, s}, metafields.OwnerProduct, pr.ID)
	}
	return conn, nil
}

// collectionMembership is collectionAddProducts (a collect per product,
// POST /com/collects.json's operation, one after the other: the first
// that fails is the user error and stops the rest, those before it stay
// linked) and collectionRemoveProducts (each product's collect removed as
// DELETE /com/collects/{id}.json does; a product not in the collection is
// skipped), which Shopify answers with a Job: this one is done when the
// answer comes.
func (s Service) collectionMembership(ctx context.Context, f *graphql.Field) (any, error) {
	add := f.Name == "collectionAddProducts"
	typ := "CollectionRemoveProductsPayload"
	if add {
		typ = "CollectionAddProductsPayload"
	}
	failed := func(err error) (any, error) {
		ue, ok := membershipErrors(err)
		if !ok {
			return nil, err
		}
		fields := map[string]any{"userErrors": ue, "job": nil}
		if add {
			fields = map[string]any{"userErrors": ue, "collection": nil}
		}
		return graphql.Map{Type: typ, Fields: fields}, nil
	}
	cid, err := idArg(f, "id", "Collection")
	if err != nil {
		return nil, err
	}
	list := asList(f.Args["productIds"])
	if len(list) > graphql.MaxPage {
		return nil, graphql.Errorf("BAD_REQUEST", "productIds must hold at most %d ids", graphql.MaxPage)
	}
	pids := make([]int64, len(list))
	for i, x := range list {
		gid, _ := x.(string)
		if _, pids[i], err = graphql.ParseGID(gid, "Product"); err != nil {
			return nil, err
		}
	}
	// The collection first: a smart one refuses, as REST's collect create
	// does, and an unknown one is a user error even with no products.
	if _, err := s.Custom.Get(ctx, cid); admin.ErrorCode(err) == admin.ENOTFOUND {
		if _, serr := s.Smart.Get(ctx, cid); serr == nil {
			if add {
				return failed(admin.Errorf(admin.EFORBIDDEN, "Cannot add products to a smart collection"))
			}
			return failed(admin.Errorf(admin.EFORBIDDEN, msgSmartRemove))
		} else if admin.ErrorCode(serr) != admin.ENOTFOUND {
			return nil, serr
		}
		return failed(admin.Invalid("collection", collects.MsgUnknown))
	} else if err != nil {
		return nil, err
	}
	for i, pid := range pids {
		if add {
			_, err = s.Collects.Create(ctx, collects.Input{ProductID: &pid, CollectionID: &cid})
		} else {
			err = s.unlink(ctx, cid, pid)
		}
		if err != nil {
			return failed(indexed{err, i})
		}
		s.l.forgetProduct(pid)
	}
	if add {
		c, err := s.collection(ctx, cid)
		if err != nil {
			return nil, err
		}
		return graphql.Map{Type: typ, Fields: map[string]any{"collection": c, "userErrors": []graphql.Object{}}}, nil
	}
	return graphql.Map{Type: typ, Fields: map[string]any{"job": doneJob(), "userErrors": []graphql.Object{}}}, nil
}

// unlink removes the product's collect from the custom collection, if it
// has one.
func (s Service) unlink(ctx context.Context, cid, pid int64) error {
	found, _, err := s.Collects.List(ctx, collects.Filter{CollectionID: cid, ProductID: pid}, 0, records.Window{Limit: 1})
	if err != nil || len(found) == 0 {
		return err
	}
	if err := s.Collects.Delete(ctx, found[0].ID); admin.ErrorCode(err) != admin.ENOTFOUND {
		return err // nil, or a failure; a collect removed meanwhile is gone as asked
	}
	return nil
}

// indexed is an error of the i-th product id.
type indexed struct {
	err error
	i   int
}

func (e indexed) Error() string { return e.err.Error() }
func (e indexed) Unwrap() error { return e.err }

// membershipErrors are the UserErrors of a collect operation's error:
// the collection's (a smart one, an unknown one) under id, a product's
// under productIds.<i>, with REST's messages ("Product does not exist",
// "Product id already exists in this collection").
func membershipErrors(err error) ([]graphql.Object, bool) {
	var ae *admin.Error
	if !errors.As(err, &ae) {
		return nil, false
	}
	var at indexed
	hasIndex := errors.As(err, &at)
	if ae.Code == admin.EFORBIDDEN {
		return []graphql.Object{userError("UserError", []string{"id"}, ae.Message, "")}, true
	}
	if ae.Code != admin.EINVALID {
		return nil, false
	}
	var out []graphql.Object
	for _, k := range []string{"collection", "product", "product_id"} {
		for _, msg := range ae.Fields[k] {
			field := []string{"id"}
			if k != "collection" {
				field = []string{"productIds"}
				if hasIndex {
					field = append(field, fmt.Sprint(at.i))
				}
			}
			out = append(out, userError("UserError", field, humanize(k)+" "+msg, ""))
		}
	}
	if len(out) == 0 {
		return nil, false
	}
	return out, true
}

// doneJob is a Job that is done: the work was done before the answer.
func doneJob() graphql.Object {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	return graphql.Map{Type: "Job", Fields: map[string]any{"id": "gid://shopify/Job/" + id, "done": true}}
}
