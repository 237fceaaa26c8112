package admingraphql

import (
	"context"
	"fmt"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/variants"
)

// productVariantsBulkCreate and productVariantsBulkDelete call the REST
// variants' create (POST /com/products/{id}/variants.json) and delete
// (DELETE /com/products/{id}/variants/{id}.json) once per variant, so
// each validates, logs its Product event and fires products/update as
// the REST call does. No one transaction holds several variants' writes:
// the first that fails is the user error and stops the rest, those
// before it stay written.

// msgNotOfProduct is Shopify's user error of a variant id of another
// product (or none) in productVariantsBulkDelete.
const msgNotOfProduct = "At least one variant does not belong to the product"

func (s Service) productVariantsBulk(ctx context.Context, f *graphql.Field) (any, error) {
	create := f.Name == "productVariantsBulkCreate"
	typ, errType := "ProductVariantsBulkDeletePayload", "ProductVariantsBulkDeleteUserError"
	if create {
		typ, errType = "ProductVariantsBulkCreatePayload", "ProductVariantsBulkCreateUserError"
	}
	pid, err := idArg(f, "productId", "Product")
	if err != nil {
		return nil, err
	}
	answer := func(p *catalog.Product, made []graphql.Object, ue []graphql.Object) graphql.Object {
		s.l.forgetProduct(pid)
		fields := map[string]any{"product": nil, "userErrors": nonNilObjects(ue)}
		if p != nil {
			fields["product"] = productObj{*p, s}
		}
		if create {
			fields["productVariants"] = nil
			if p != nil {
				fields["productVariants"] = nonNilObjects(made)
			}
		}
		return graphql.Map{Type: typ, Fields: fields}
	}
	p, err := s.Variants.Product(ctx, pid)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return answer(nil, nil, []graphql.Object{userError(errType, []string{"productId"}, "Product does not exist", "PRODUCT_DOES_NOT_EXIST")}), nil
	} else if err != nil {
		return nil, err
	}
	var (
		made []graphql.Object
		ue   []graphql.Object
	)
	if create {
		made, ue, err = s.bulkCreate(ctx, f, p, errType)
	} else {
		ue, err = s.bulkDelete(ctx, f, pid, errType)
	}
	if err != nil {
		return nil, err
	}
	if p, err = s.Variants.Product(ctx, pid); err != nil {
		return nil, err
	}
	return answer(&p, made, ue), nil
}

// bulkCreate creates each variant given, in order.
func (s Service) bulkCreate(ctx context.Context, f *graphql.Field, p catalog.Product, errType string) ([]graphql.Object, []graphql.Object, error) {
	inputs := asList(f.Args["variants"])
	if len(inputs) > catalog.MaxVariants {
		return nil, nil, graphql.Errorf("BAD_REQUEST", "variants must hold at most %d variants", catalog.MaxVariants)
	}
	var made []graphql.Object
	for i, x := range inputs {
		m, _ := x.(map[string]any)
		if m["id"] != nil {
			return made, []graphql.Object{userError(errType, []string{"variants", fmt.Sprint(i), "id"}, "Id cannot be specified when creating a variant", "INVALID")}, nil
		}
		in, err := variantInput(m)
		if err == nil {
			err = variantOptions(m, in)
		}
		if err == nil {
			var v catalog.Variant
			if v, err = s.Variants.Create(ctx, p.ID, in); err == nil {
				made = append(made, variantObj{v, s})
				continue
			}
		}
		ue, ok := bulkUserErrors(errType, i, err, createCode(err))
		if !ok {
			return nil, nil, err
		}
		return made, ue, nil
	}
	return made, nil, nil
}

// createCode is the ProductVariantsBulkCreateUserErrorCode of a REST
// variant create's error.
func createCode(err error) string {
	if strings.Contains(err.Error(), "already exists.") {
		return "VARIANT_ALREADY_EXISTS"
	}
	return "INVALID"
}

// bulkDelete deletes the variants named, after checking every one is the
// product's (else nothing is deleted, as Shopify's user error says).
func (s Service) bulkDelete(ctx context.Context, f *graphql.Field, pid int64, errType string) ([]graphql.Object, error) {
	list := asList(f.Args["variantsIds"])
	if len(list) > catalog.MaxVariants {
		return nil, graphql.Errorf("BAD_REQUEST", "variantsIds must hold at most %d ids", catalog.MaxVariants)
	}
	ids := make([]int64, len(list))
	for i, x := range list {
		gid, _ := x.(string)
		var err error
		if _, ids[i], err = graphql.ParseGID(gid, "ProductVariant"); err != nil {
			return nil, err
		}
	}
	all, err := s.Variants.All(ctx, pid)
	if err != nil {
		return nil, err
	}
	mine := map[int64]bool{}
	for _, v := range all {
		mine[v.ID] = true
	}
	for _, id := range ids {
		if !mine[id] {
			return []graphql.Object{userError(errType, []string{"variantsIds"}, msgNotOfProduct, "AT_LEAST_ONE_VARIANT_DOES_NOT_BELONG_TO_THE_PRODUCT")}, nil
		}
	}
	for i, id := range ids {
		err := s.Variants.Delete(ctx, pid, id)
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			continue // deleted meanwhile (or named twice): gone as asked
		}
		if err != nil {
			ue, ok := bulkUserErrors(errType, i, err, "")
			if !ok {
				return nil, err
			}
			return ue, nil
		}
	}
	return nil, nil
}

// bulkUserErrors are the user errors of the i-th variant's REST error,
// each field under ["variants", "<i>", ...], with code when given.
func bulkUserErrors(errType string, i int, err error, code string) ([]graphql.Object, bool) {
	if code != "" {
		err = codedErr{err, code}
	}
	at := fmt.Sprintf("variants.%d", i)
	ue, ok := userErrors(errType, at, err)
	if !ok {
		return nil, false
	}
	for _, u := range ue {
		if fs, ok := u.(graphql.Map).Fields["field"].([]string); ok && len(fs) > 0 {
			if fs[0] == at {
				fs = fs[1:]
			}
			u.(graphql.Map).Fields["field"] = append([]string{"variants", fmt.Sprint(i)}, fs...)
		}
	}
	return ue, true
}

// variantOptions reads a ProductVariantsBulkInput's optionValues as the
// REST option1 to option3: an optionName Option1, Option2 or Option3 (the
// names selectedOptions answers) names its option, another takes the next
// in the order given; and inventoryPolicy as inventory_policy.
func variantOptions(m map[string]any, in *variants.Input) error {
	opts := []*variantsOption{{&in.Option1}, {&in.Option2}, {&in.Option3}}
	next := 0
	for _, x := range asList(m["optionValues"]) {
		ov, _ := x.(map[string]any)
		name, _ := ov["name"].(string)
		at := next
		if n, _ := ov["optionName"].(string); len(n) == 7 && strings.HasPrefix(n, "Option") && n[6] >= '1' && n[6] <= '3' {
			at = int(n[6] - '1')
		} else {
			next++
		}
		if at >= len(opts) {
			return admin.Invalid("option_values", "can hold at most 3 options")
		}
		opts[at].dst.Set, opts[at].dst.Value = true, name
	}
	if v, ok := m["inventoryPolicy"].(string); ok {
		policy := strings.ToLower(v)
		in.InventoryPolicy = &policy
	}
	return nil
}

type variantsOption struct{ dst *admin.Optional[string] }
