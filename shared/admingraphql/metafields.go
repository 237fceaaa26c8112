package admingraphql

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
)

// owned is an object that has metafields (Shopify's HasMetafields): its
// metafield and metafields fields read its owner's, through the REST
// metafields' operations; its other fields are the object's.
type owned struct {
	graphql.Object
	owner metafields.Owner
	s     Service
}

func (s Service) owned(o graphql.Object, resource string, id int64) graphql.Object {
	return owned{o, metafields.Owner{Resource: resource, ID: id}, s}
}

func (o owned) Field(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "metafield":
		ns, _ := f.Args["namespace"].(string)
		key, _ := f.Args["key"].(string)
		m, err := o.s.findMetafield(ctx, o.owner, ns, key)
		if m == nil || err != nil {
			return nil, err
		}
		return metafieldObj(*m), nil
	case "metafields":
		filter := &metafields.Filter{}
		if ns, _ := f.Args["namespace"].(string); ns != "" {
			filter.Namespaces = []string{ns}
		}
		keys, _ := f.Args["keys"].([]any)
		if len(keys) > 0 {
			return nil, graphql.Errorf("BAD_REQUEST", "keys is not supported on metafields here: give namespace, or read metafield(namespace:, key:) (docs/graphql.md)")
		}
		return listOf(f, "", "MetafieldConnection", nil,
			func(w records.Window) ([]metafields.Metafield, records.Span, error) {
				return o.s.Metafields.List(ctx, o.owner, filter, 0, w)
			},
			func(m metafields.Metafield) graphql.Object { return metafieldObj(m) }, func(m metafields.Metafield) int64 { return m.ID })
	}
	return o.Object.Field(ctx, f)
}

// findMetafield is the owner's metafield of namespace and key, or nil.
func (s Service) findMetafield(ctx context.Context, o metafields.Owner, ns, key string) (*metafields.Metafield, error) {
	list, _, err := s.Metafields.List(ctx, o, &metafields.Filter{Namespaces: []string{ns}, Key: key}, 0, records.Window{Limit: 1})
	if err != nil || len(list) == 0 {
		return nil, err
	}
	return &list[0], nil
}

// metafieldObj is a Metafield.
type metafieldObj metafields.Metafield

func (metafieldObj) TypeName() string { return "Metafield" }

// text is the value as GraphQL answers it: a string.
func (m metafieldObj) text() string {
	var s string
	if json.Unmarshal(m.Value, &s) == nil {
		return s
	}
	return string(m.Value) // an integer
}

func (m metafieldObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("Metafield", m.ID), nil
	case "legacyResourceId":
		return m.ID, nil
	case "namespace":
		return m.Namespace, nil
	case "key":
		return m.Key, nil
	case "value":
		return m.text(), nil
	case "jsonValue":
		return m.Value, nil
	case "type":
		mf := metafields.Metafield(m)
		return mf.TypeName(), nil
	case "description":
		return m.Description, nil
	case "compareDigest":
		return digest(m.text()), nil
	case "ownerType":
		return ownerType(m.OwnerResource), nil
	case "createdAt":
		return m.CreatedAt.Time, nil
	case "updatedAt":
		return m.UpdatedAt.Time, nil
	}
	return nil, nil
}

// digest is a value's compareDigest: the hex SHA-256 of its text.
func digest(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:])
}

// ownerType is a REST owner resource as MetafieldOwnerType.
func ownerType(resource string) string {
	switch resource {
	case metafields.OwnerCustomCollection, metafields.OwnerSmartCollection:
		return "COLLECTION"
	case metafields.OwnerVariant:
		return "PRODUCTVARIANT"
	}
	return strings.ToUpper(resource)
}

// ownerOf reads an ownerId: the owner resource its global id names.
func (s Service) ownerOf(ctx context.Context, gid string) (metafields.Owner, error) {
	typ, id, err := graphql.ParseGID(gid, "")
	if err != nil {
		return metafields.Owner{}, err
	}
	o := metafields.Owner{ID: id}
	switch typ {
	case "Shop":
		if id != admin.ShopFrom(ctx).ID {
			return o, graphql.Errorf("BAD_REQUEST", "ownerId %s is not this shop", gid)
		}
		o.Resource = metafields.OwnerShop
	case "Page":
		o.Resource = metafields.OwnerPage
	case "Blog":
		o.Resource = metafields.OwnerBlog
	case "Product":
		o.Resource = metafields.OwnerProduct
	case "ProductVariant":
		o.Resource = metafields.OwnerVariant
	case "Customer":
		o.Resource = metafields.OwnerCustomer
	case "Order":
		o.Resource = metafields.OwnerOrder
	case "Article":
		o.Resource = metafields.OwnerArticle
		if a, err := s.Articles.Find(ctx, id); err == nil {
			o.Blog = a.BlogID
		}
	case "Collection":
		o.Resource = metafields.OwnerSmartCollection
		if _, err := s.Custom.Get(ctx, id); err == nil {
			o.Resource = metafields.OwnerCustomCollection
		}
	default:
		return o, graphql.Errorf("BAD_REQUEST", "ownerId %s: %s has no metafields here", gid, typ)
	}
	return o, nil
}

// metafieldsSet creates or updates each metafield by its owner, namespace
// and key, through the REST metafields' operations, one after the other:
// the first that fails is the user error (with its elementIndex), and
// those before it stay set (no one transaction holds 25 owners' writes).
// A compareDigest that is not the current value's is refused.
func (s Service) metafieldsSet(ctx context.Context, f *graphql.Field) (any, error) {
	inputs, _ := f.Args["metafields"].([]any)
	if len(inputs) > 25 {
		return nil, graphql.Errorf("BAD_REQUEST", "metafields must hold at most 25 metafields")
	}
	var set []graphql.Object
	fail := func(i int, err error, code string) (any, error) {
		ans, perr := payload("MetafieldsSetPayload", "metafields", nil, "MetafieldsSetUserError", "metafields", codedErr{err, code})
		if perr != nil {
			return nil, perr
		}
		m := ans.(graphql.Map)
		for _, ue := range m.Fields["userErrors"].([]graphql.Object) {
			fs := ue.(graphql.Map).Fields
			fs["elementIndex"] = i
			if field, ok := fs["field"].([]string); ok && len(field) > 1 {
				fs["field"] = []string{"metafields", strconv.Itoa(i), field[1]}
			}
		}
		m.Fields["metafields"] = nonNilObjects(set)
		return m, nil
	}
	for i, x := range inputs {
		in, _ := x.(map[string]any)
		o, err := s.ownerOf(ctx, in["ownerId"].(string))
		if err != nil {
			return nil, err
		}
		ns, _ := in["namespace"].(string)
		key, _ := in["key"].(string)
		if ns == "" {
			return fail(i, admin.Invalid("namespace", admin.MsgBlank), "BLANK")
		}
		value, _ := json.Marshal(in["value"])
		mi := &metafields.Input{Value: value}
		if t, ok := in["type"].(string); ok {
			mi.Type = &t
		}
		cur, err := s.findMetafield(ctx, o, ns, key)
		if err != nil {
			if admin.ErrorCode(err) == admin.ENOTFOUND {
				return fail(i, admin.Invalid("owner_id", "does not exist"), "INVALID")
			}
			return nil, err
		}
		if d, ok := in["compareDigest"].(string); ok && (cur == nil || digest(metafieldObj(*cur).text()) != d) {
			return fail(i, admin.Invalid("compare_digest", "is not the current value's"), "INVALID_COMPARE_DIGEST")
		}
		var m metafields.Metafield
		if cur == nil {
			mi.Namespace, mi.Key = &ns, &key
			if mi.Type == nil {
				return fail(i, admin.Invalid("type", admin.MsgBlank), "BLANK")
			}
			m, err = s.Metafields.Create(ctx, o, mi)
		} else {
			m, err = s.Metafields.Update(ctx, &o, cur.ID, mi)
		}
		if err != nil {
			code := "INVALID"
			if ae, ok := err.(*admin.Error); ok && len(ae.Fields) > 0 {
				for _, msgs := range ae.Fields {
					code = codeOf(strings.Join(msgs, " "))
				}
			}
			return fail(i, err, code)
		}
		set = append(set, metafieldObj(m))
	}
	return graphql.Map{Type: "MetafieldsSetPayload", Fields: map[string]any{"metafields": nonNilObjects(set), "userErrors": []graphql.Object{}}}, nil
}

// metafieldsDelete deletes each metafield named by owner, namespace and
// key; one that is not there is answered null, as Shopify's.
func (s Service) metafieldsDelete(ctx context.Context, f *graphql.Field) (any, error) {
	inputs, _ := f.Args["metafields"].([]any)
	if len(inputs) > graphql.MaxPage {
		return nil, graphql.Errorf("BAD_REQUEST", "metafields must hold at most %d identifiers", graphql.MaxPage)
	}
	out := make([]graphql.Object, len(inputs))
	for i, x := range inputs {
		in, _ := x.(map[string]any)
		gid, _ := in["ownerId"].(string)
		o, err := s.ownerOf(ctx, gid)
		if err != nil {
			return nil, err
		}
		ns, _ := in["namespace"].(string)
		key, _ := in["key"].(string)
		cur, err := s.findMetafield(ctx, o, ns, key)
		if admin.ErrorCode(err) == admin.ENOTFOUND || (err == nil && cur == nil) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if err := s.Metafields.Delete(ctx, &o, cur.ID); err != nil && admin.ErrorCode(err) != admin.ENOTFOUND {
			return payload("MetafieldsDeletePayload", "deletedMetafields", nil, "UserError", "metafields", err)
		}
		out[i] = graphql.Map{Type: "MetafieldIdentifier", Fields: map[string]any{"ownerId": gid, "namespace": ns, "key": key}}
	}
	return graphql.Map{Type: "MetafieldsDeletePayload", Fields: map[string]any{"deletedMetafields": out, "userErrors": []graphql.Object{}}}, nil
}
