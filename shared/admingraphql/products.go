package admingraphql

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/variants"
)

// Products are the seed's (the catalog model has no product writes);
// their variants change through productVariantsBulkUpdate, which calls
// the REST variants' update.

// productObj is a Product.
type productObj struct {
	p catalog.Product
	s Service
}

func (productObj) TypeName() string { return "Product" }

// raw reads a seeded field of the product (absent: zero).
func (o productObj) raw(k string, dst any) { _ = json.Unmarshal(o.p.Raw[k], dst) }

func (o productObj) time(k string) time.Time {
	var t admin.Time
	o.raw(k, &t)
	return t.Time
}

func (o productObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	p := o.p
	switch f.Name {
	case "id":
		return graphql.GID("Product", p.ID), nil
	case "legacyResourceId":
		return p.ID, nil
	case "title":
		return p.Title, nil
	case "vendor":
		return p.Vendor, nil
	case "productType":
		return p.ProductType, nil
	case "tags":
		var tags []string
		for _, t := range strings.Split(p.Tags, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
		return nonNil(tags), nil
	case "handle", "descriptionHtml":
		var v string
		o.raw(map[string]string{"handle": "handle", "descriptionHtml": "body_html"}[f.Name], &v)
		return v, nil
	case "createdAt", "updatedAt":
		return o.time(map[string]string{"createdAt": "created_at", "updatedAt": "updated_at"}[f.Name]), nil
	case "status":
		if o.time("published_at").IsZero() {
			return "DRAFT", nil
		}
		return "ACTIVE", nil
	case "variantsCount":
		vs, err := o.s.l.productVariants(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		return graphql.Count(len(vs)), nil
	case "variants":
		if k, _ := f.Args["sortKey"].(string); k != "" && k != "POSITION" {
			return nil, graphql.Errorf("BAD_REQUEST", "sortKey %s is not supported on variants: only POSITION (docs/graphql.md)", k)
		}
		pg, err := graphql.PageArgs(f.Args)
		if err != nil {
			return nil, err
		}
		vs, err := o.s.l.productVariants(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		o.s.l.products[p.ID] = p // its variants' product
		return pageInMemory("ProductVariantConnection", pg, vs, func(v catalog.Variant) graphql.Object {
			return o.s.owned(variantObj{v, o.s}, metafields.OwnerVariant, v.ID)
		},
			func(v catalog.Variant) int64 { return v.ID }), nil
	}
	return nil, nil
}

// pageInMemory answers a connection over a whole list (a product's
// variants, at most 100) in its own order: the cursors are ids, and a page
// continues after (or before) the cursor's place in the list.
func pageInMemory[T any](typ string, p graphql.Page, all []T, obj func(T) graphql.Object, id func(T) int64) *graphql.Connection {
	if p.Reverse {
		all = slices.Clone(all)
		slices.Reverse(all)
	}
	at := func(cursor int64) int { return slices.IndexFunc(all, func(x T) bool { return id(x) == cursor }) }
	lo, hi := 0, len(all)
	if p.After > 0 {
		lo = at(p.After) + 1 // a cursor no longer in the list starts at the beginning
	}
	if p.Before > 0 {
		if i := at(p.Before); i >= 0 {
			hi = i
		}
	}
	lo = min(lo, hi)
	if p.Back {
		lo = max(lo, hi-p.Limit)
	} else {
		hi = min(hi, lo+p.Limit)
	}
	page := all[lo:hi]
	nodes, ids := make([]graphql.Object, len(page)), make([]int64, len(page))
	for i, x := range page {
		nodes[i], ids[i] = obj(x), id(x)
	}
	return &graphql.Connection{Type: typ, Nodes: nodes, IDs: ids, HasPrev: lo > 0, HasNext: hi < len(all),
		EdgeType: strings.TrimSuffix(typ, "Connection") + "Edge"}
}

// variantObj is a ProductVariant.
type variantObj struct {
	v catalog.Variant
	s Service
}

func (variantObj) TypeName() string { return "ProductVariant" }

func (o variantObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	v := o.v
	switch f.Name {
	case "id":
		return graphql.GID("ProductVariant", v.ID), nil
	case "legacyResourceId":
		return v.ID, nil
	case "title":
		return v.Title, nil
	case "sku":
		return v.SKU, nil
	case "barcode":
		return v.Barcode, nil
	case "price":
		return v.Price.String(), nil
	case "compareAtPrice":
		if v.CompareAtPrice == nil {
			return nil, nil
		}
		return v.CompareAtPrice.String(), nil
	case "position":
		return v.Position, nil
	case "inventoryQuantity":
		return v.InventoryQuantity, nil
	case "taxable":
		return v.Taxable, nil
	case "createdAt":
		return v.CreatedAt.Time, nil
	case "updatedAt":
		return v.UpdatedAt.Time, nil
	case "selectedOptions":
		var out []graphql.Object
		for i, val := range []*string{v.Option1, v.Option2, v.Option3} {
			if val != nil {
				out = append(out, graphql.Map{Type: "SelectedOption", Fields: map[string]any{"name": fmt.Sprintf("Option%d", i+1), "value": *val}})
			}
		}
		return nonNilObjects(out), nil
	case "product", "displayName":
		p, err := o.s.l.product(ctx, v.ProductID)
		if err != nil {
			return nil, err
		}
		if f.Name == "displayName" {
			return p.Title + " - " + v.Title, nil
		}
		return o.s.owned(productObj{p, o.s}, metafields.OwnerProduct, p.ID), nil
	}
	return nil, nil
}

func nonNilObjects(s []graphql.Object) []graphql.Object {
	if s == nil {
		return []graphql.Object{}
	}
	return s
}

func (s Service) productQuery(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "product":
		id, err := idArg(f, "id", "Product")
		if err != nil {
			return nil, err
		}
		p, err := s.Variants.Product(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		return s.owned(productObj{p, s}, metafields.OwnerProduct, p.ID), nil
	case "productVariant":
		id, err := idArg(f, "id", "ProductVariant")
		if err != nil {
			return nil, err
		}
		v, err := s.Variants.Get(ctx, 0, id)
		if err != nil {
			return found(nil, err)
		}
		return s.owned(variantObj{v, s}, metafields.OwnerVariant, v.ID), nil
	}
	if err := noSavedSearch(f); err != nil {
		return nil, err
	}
	if q, _ := f.Args["query"].(string); q != "" {
		return nil, graphql.Errorf("BAD_REQUEST", "query is not supported on %s: the seeded products are listed whole (docs/graphql.md)", f.Name)
	}
	return listOf(f, "productsCount", "ProductConnection", func() (int, error) { return s.Variants.ProductsCount(ctx) },
		func(w records.Window) ([]catalog.Product, records.Span, error) { return s.Variants.Products(ctx, w) },
		func(p catalog.Product) graphql.Object {
			s.l.listedProduct(p)
			return s.owned(productObj{p, s}, metafields.OwnerProduct, p.ID)
		}, func(p catalog.Product) int64 { return p.ID })
}

// productVariantsBulkUpdate updates each variant given through the REST
// update, one after the other: the first that fails stops the rest, and
// those before it stay updated (as allowPartialUpdates: true; no one
// transaction holds several variants' updates).
func (s Service) productVariantsBulkUpdate(ctx context.Context, f *graphql.Field) (any, error) {
	const typ, errType = "ProductVariantsBulkUpdatePayload", "ProductVariantsBulkUpdateUserError"
	pid, err := idArg(f, "productId", "Product")
	if err != nil {
		return nil, err
	}
	p, err := s.Variants.Product(ctx, pid)
	if err != nil {
		return payload(typ, "product", nil, errType, "productId", codedErr{err, "PRODUCT_DOES_NOT_EXIST"})
	}
	inputs, _ := f.Args["variants"].([]any)
	if len(inputs) > graphql.MaxPage {
		return nil, graphql.Errorf("BAD_REQUEST", "variants must hold at most %d variants", graphql.MaxPage)
	}
	var updated []graphql.Object
	for i, x := range inputs {
		m, _ := x.(map[string]any)
		gid, _ := m["id"].(string)
		if gid == "" {
			return bulkFailed(p, s, updated, i, admin.Invalid("id", "is required"), "PRODUCT_VARIANT_ID_MISSING")
		}
		_, id, err := graphql.ParseGID(gid, "ProductVariant")
		if err != nil {
			return nil, err
		}
		in, err := variantInput(m)
		if err == nil {
			err = variantOptions(m, in) // variantsbulk.go
		}
		if err != nil {
			return bulkFailed(p, s, updated, i, err, "INVALID_INPUT")
		}
		v, err := s.Variants.Update(ctx, pid, id, in)
		if err != nil {
			if admin.ErrorCode(err) == admin.ENOTFOUND {
				return bulkFailed(p, s, updated, i, err, "PRODUCT_VARIANT_DOES_NOT_EXIST")
			}
			return bulkFailed(p, s, updated, i, err, "")
		}
		updated = append(updated, variantObj{v, s})
	}
	p, _ = s.Variants.Product(ctx, pid)
	s.l.forgetProduct(pid)
	return graphql.Map{Type: typ, Fields: map[string]any{"product": productObj{p, s}, "productVariants": nonNilObjects(updated),
		"userErrors": []graphql.Object{}}}, nil
}

// bulkFailed is the payload of a bulk update that stopped at variant i.
func bulkFailed(p catalog.Product, s Service, updated []graphql.Object, i int, err error, code string) (any, error) {
	s.l.forgetProduct(p.ID)
	forced := err
	if code != "" {
		forced = codedErr{err, code}
	}
	ans, perr := payload("ProductVariantsBulkUpdatePayload", "product", productObj{p, s}, "ProductVariantsBulkUpdateUserError",
		fmt.Sprintf("variants.%d", i), forced)
	if perr != nil {
		return nil, perr
	}
	m := ans.(graphql.Map)
	m.Fields["product"], m.Fields["productVariants"] = productObj{p, s}, nonNilObjects(updated)
	for _, ue := range m.Fields["userErrors"].([]graphql.Object) {
		if fs, ok := ue.(graphql.Map).Fields["field"].([]string); ok && len(fs) > 0 {
			if fs[0] == fmt.Sprintf("variants.%d", i) {
				fs = fs[1:]
			}
			ue.(graphql.Map).Fields["field"] = append([]string{"variants", fmt.Sprint(i)}, fs...)
		}
	}
	return m, nil
}

// variantInput is a ProductVariantsBulkInput as the REST input.
func variantInput(m map[string]any) (*variants.Input, error) {
	in := &variants.Input{}
	money := func(k, field string, dst *admin.Optional[admin.Money]) error {
		v, ok := m[k]
		if !ok {
			return nil
		}
		dst.Set = true
		if v == nil {
			dst.Null = true
			return nil
		}
		s, _ := v.(string)
		mv, err := admin.ParseMoney(s)
		if err != nil {
			return admin.Invalid(field, "is not a number")
		}
		dst.Value = mv
		return nil
	}
	if err := money("price", "price", &in.Price); err != nil {
		return nil, err
	}
	if err := money("compareAtPrice", "compare_at_price", &in.CompareAtPrice); err != nil {
		return nil, err
	}
	if v, ok := m["barcode"]; ok {
		in.Barcode.Set, in.Barcode.Null = true, v == nil
		in.Barcode.Value, _ = v.(string)
	}
	if v, ok := m["taxable"].(bool); ok {
		in.Taxable = &v
	}
	return in, nil
}
