package admingraphql

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/customcollections"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/smartcollections"
)

// Shopify's GraphQL has one Collection type; this service keeps custom
// and smart collections apart (one id space): a Collection with a ruleSet
// is a smart collection.

// collectionObj is a Collection: a custom one (smart nil) or a smart one.
type collectionObj struct {
	fields collection.Fields
	count  *int64
	smart  *smartcollections.SmartCollection
	// s reads its products (collectionproducts.go); set by collectionOf.
	s Service
}

func customObj(c collection.Collection) collectionObj {
	return collectionObj{fields: c.Fields, count: c.ProductsCount}
}

func smartObj(c smartcollections.SmartCollection) collectionObj {
	n := c.ProductsCount
	return collectionObj{fields: c.Fields, count: &n, smart: &c}
}

func (collectionObj) TypeName() string { return "Collection" }

func (c collectionObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "products", "hasProduct":
		return c.s.collectionProducts(ctx, c, f)
	case "id":
		return graphql.GID("Collection", c.fields.ID), nil
	case "legacyResourceId":
		return c.fields.ID, nil
	case "title":
		return c.fields.Title, nil
	case "handle":
		return c.fields.Handle, nil
	case "descriptionHtml":
		if c.fields.BodyHTML == nil {
			return "", nil
		}
		return *c.fields.BodyHTML, nil
	case "description":
		body := ""
		if c.fields.BodyHTML != nil {
			body = summary(*c.fields.BodyHTML)
		}
		if n, ok := f.Args["truncateAt"].(int64); ok && n >= 0 && int64(len([]rune(body))) > n {
			body = string([]rune(body)[:n])
		}
		return body, nil
	case "sortOrder":
		return strings.ToUpper(strings.ReplaceAll(c.fields.SortOrder, "-", "_")), nil
	case "templateSuffix":
		return c.fields.TemplateSuffix, nil
	case "updatedAt":
		return c.fields.UpdatedAt.Time, nil
	case "productsCount":
		if c.count == nil {
			return nil, nil
		}
		return graphql.Count(int(*c.count)), nil
	case "ruleSet":
		if c.smart == nil {
			return nil, nil
		}
		rules := make([]graphql.Object, len(c.smart.Rules))
		for i, r := range c.smart.Rules {
			rules[i] = graphql.Map{Type: "CollectionRule", Fields: map[string]any{"column": strings.ToUpper(r.Column),
				"relation": strings.ToUpper(r.Relation), "condition": r.Condition}}
		}
		return graphql.Map{Type: "CollectionRuleSet", Fields: map[string]any{"appliedDisjunctively": c.smart.Disjunctive, "rules": rules}}, nil
	}
	return nil, nil
}

// collection reads a collection of either kind by id.
func (s Service) collection(ctx context.Context, id int64) (graphql.Object, error) {
	c, err := s.Custom.Get(ctx, id)
	if err == nil {
		return s.collectionOf(customObj(c)), nil
	}
	if admin.ErrorCode(err) != admin.ENOTFOUND {
		return nil, err
	}
	sc, err := s.Smart.Get(ctx, id)
	return found(s.collectionOf(smartObj(sc)), err)
}

// collectionFilter reads a collections query: title, handle, updated_at,
// published_at, published_status and collection_type (custom or smart).
func collectionFilter(ctx context.Context, q string) (*collection.Filter, string, error) {
	v, err := searchArg(&graphql.Field{Args: map[string]any{"query": q}}, "title", "handle", "updated_at", "published_at", "published_status", "collection_type")
	if err != nil {
		return nil, "", err
	}
	kind := v.Get("collection_type")
	if kind != "" && kind != "custom" && kind != "smart" {
		return nil, "", graphql.Errorf("BAD_REQUEST", "query: collection_type is custom or smart")
	}
	f := &collection.Filter{Title: v.Get("title"), Handle: v.Get("handle")}
	if f.Filter, err = publishing.ParseFilter(v, admin.ShopFrom(ctx).Location()); err != nil {
		return nil, "", graphql.Errorf("BAD_REQUEST", "query: %v", err)
	}
	return f, kind, nil
}

func (s Service) collectionQuery(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "collection":
		id, err := idArg(f, "id", "Collection")
		if err != nil {
			return nil, err
		}
		return s.collection(ctx, id)
	case "collectionByHandle":
		h, _ := f.Args["handle"].(string)
		filter := &collection.Filter{Handle: h}
		if list, _, err := s.Custom.List(ctx, filter, 0, records.Window{Limit: 1}); err != nil || len(list) > 0 {
			if err != nil {
				return nil, err
			}
			return s.collection(ctx, list[0].ID)
		}
		list, _, err := s.Smart.List(ctx, filter, 0, records.Window{Limit: 1})
		if err != nil || len(list) == 0 {
			return nil, err
		}
		return s.collection(ctx, list[0].ID)
	}
	if err := noSavedSearch(f); err != nil {
		return nil, err
	}
	q, _ := f.Args["query"].(string)
	filter, kind, err := collectionFilter(ctx, q)
	if err != nil {
		return nil, err
	}
	if f.Name == "collectionsCount" {
		n := 0
		if kind != "smart" {
			c, err := s.Custom.Count(ctx, filter)
			if err != nil {
				return nil, err
			}
			n += c
		}
		if kind != "custom" {
			c, err := s.Smart.Count(ctx, filter)
			if err != nil {
				return nil, err
			}
			n += c
		}
		return graphql.Count(n), nil
	}
	if err := sortByID(f); err != nil {
		return nil, err
	}
	p, err := graphql.PageArgs(f.Args)
	if err != nil {
		return nil, err
	}
	// Both kinds' pages, merged by id: the page is the first (or last)
	// Limit of the two, and more lie beyond it if either has more.
	w := window(p)
	var merged []collectionObj
	var before, after bool
	if kind != "smart" {
		list, span, err := s.Custom.List(ctx, filter, 0, w)
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			merged = append(merged, customObj(c))
		}
		before, after = span.Before, span.After
	}
	if kind != "custom" {
		list, span, err := s.Smart.List(ctx, filter, 0, w)
		if err != nil {
			return nil, err
		}
		for _, c := range list {
			merged = append(merged, smartObj(c))
		}
		before, after = before || span.Before, after || span.After
	}
	slices.SortFunc(merged, func(a, b collectionObj) int { return int(a.fields.ID - b.fields.ID) })
	if len(merged) > p.Limit {
		if w.Cursor.Back { // the page is the last Limit
			merged, before = merged[len(merged)-p.Limit:], true
		} else {
			merged, after = merged[:p.Limit], true
		}
	}
	return connection("CollectionConnection", p, merged, records.Span{Before: before, After: after},
		s.collectionOf, func(c collectionObj) int64 { return c.fields.ID }), nil
}

// collectionInput is a CollectionInput as the REST inputs: a custom
// collection's, or with ruleSet a smart collection's.
func collectionInput(m map[string]any) (collection.Input, *smartcollections.Input, error) {
	var in collection.Input
	if v, ok := m["title"].(string); ok {
		in.Title = &v
	}
	if v, ok := m["handle"].(string); ok {
		in.Handle = &v
	}
	if v, ok := m["descriptionHtml"]; ok {
		in.BodyHTML.Set, in.BodyHTML.Null = true, v == nil
		in.BodyHTML.Value, _ = v.(string)
	}
	if v, ok := m["templateSuffix"]; ok {
		in.TemplateSuffix.Set, in.TemplateSuffix.Null = true, v == nil
		in.TemplateSuffix.Value, _ = v.(string)
	}
	if v, ok := m["sortOrder"].(string); ok {
		order := strings.ToLower(strings.ReplaceAll(v, "_", "-"))
		in.SortOrder = &order
	}
	rs, ok := m["ruleSet"].(map[string]any)
	if !ok {
		return in, nil, nil
	}
	smart := &smartcollections.Input{Input: in}
	disj, _ := rs["appliedDisjunctively"].(bool)
	smart.Disjunctive = &disj
	var rules []smartcollections.Rule
	for _, r := range asList(rs["rules"]) {
		rm, _ := r.(map[string]any)
		col, _ := rm["column"].(string)
		rel, _ := rm["relation"].(string)
		cond, _ := rm["condition"].(string)
		rules = append(rules, smartcollections.Rule{Column: strings.ToLower(col), Relation: strings.ToLower(rel), Condition: cond})
	}
	raw, err := json.Marshal(rules)
	smart.Rules = raw
	return in, smart, err
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func (s Service) collectionMutation(ctx context.Context, f *graphql.Field) (any, error) {
	m, _ := f.Args["input"].(map[string]any)
	switch f.Name {
	case "collectionCreate":
		in, smart, err := collectionInput(m)
		if err != nil {
			return nil, err
		}
		if smart != nil {
			c, err := s.Smart.Create(ctx, smart)
			return payload("CollectionCreatePayload", "collection", s.collectionOf(smartObj(c)), "UserError", "input", err)
		}
		c, err := s.Custom.Create(ctx, &customcollections.Input{Input: in})
		return payload("CollectionCreatePayload", "collection", s.collectionOf(customObj(c)), "UserError", "input", err)
	case "collectionUpdate":
		gid, _ := m["id"].(string)
		_, id, err := graphql.ParseGID(gid, "Collection")
		if err != nil {
			return nil, err
		}
		in, smart, err := collectionInput(m)
		if err != nil {
			return nil, err
		}
		if _, err := s.Custom.Get(ctx, id); err == nil {
			if smart != nil {
				return payload("CollectionUpdatePayload", "collection", nil, "UserError", "input",
					admin.Invalid("rule_set", "cannot be given to a custom collection"))
			}
			c, err := s.Custom.Update(ctx, id, &customcollections.Input{Input: in})
			return payload("CollectionUpdatePayload", "collection", s.collectionOf(customObj(c)), "UserError", "input", err)
		}
		if smart == nil {
			smart = &smartcollections.Input{Input: in}
		}
		c, err := s.Smart.Update(ctx, id, smart)
		return payload("CollectionUpdatePayload", "collection", s.collectionOf(smartObj(c)), "UserError", "input", err)
	case "collectionAddProducts", "collectionRemoveProducts":
		return s.collectionMembership(ctx, f)
	case "collectionDelete":
		gid, _ := m["id"].(string)
		_, id, err := graphql.ParseGID(gid, "Collection")
		if err != nil {
			return nil, err
		}
		if _, gerr := s.Custom.Get(ctx, id); gerr == nil {
			err = s.Custom.Delete(ctx, id)
		} else {
			err = s.Smart.Delete(ctx, id)
		}
		p, perr := payload("CollectionDeletePayload", "deletedCollectionId", graphql.GID("Collection", id), "UserError", "Collection", err)
		if perr == nil {
			p.(graphql.Map).Fields["shop"] = s.shop(ctx)
		}
		return p, perr
	}
	return nil, nil
}

// collectionOf is a Collection with its metafields.
func (s Service) collectionOf(c collectionObj) graphql.Object {
	resource := metafields.OwnerCustomCollection
	if c.smart != nil {
		resource = metafields.OwnerSmartCollection
	}
	c.s = s
	return s.owned(c, resource, c.fields.ID)
}
