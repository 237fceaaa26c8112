// Package admingraphql serves Shopify's GraphQL Admin API over the same
// shop as the REST routes (docs/graphql.md): its own schema
// (schema.graphql, a subset of Shopify's with Shopify's names) and the
// resolvers, which call the resources' operations, never their handlers,
// so that a mutation commits, validates, logs events and fires webhooks as
// the REST call does.
package admingraphql

import (
	"context"
	_ "embed"
	"errors"
	"net/url"
	"sort"
	"strings"
	"unicode"

	"github.com/storeadmin/adminapi/shared/addresses"
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/articles"
	"github.com/storeadmin/adminapi/shared/charges"
	"github.com/storeadmin/adminapi/shared/collects"
	"github.com/storeadmin/adminapi/shared/comments"
	"github.com/storeadmin/adminapi/shared/customcollections"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/redirects"
	"github.com/storeadmin/adminapi/shared/savedsearches"
	"github.com/storeadmin/adminapi/shared/scripttags"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/variants"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

//go:embed schema.graphql
var sdl string

// Service holds the operations the resolvers call.
type Service struct {
	Articles articles.Service
	Comments comments.Service
	Events   events.Service
	Variants variants.Service
	// Metafields is set by NewExecutor, with the owners' lookups.
	Metafields metafields.Service
	Custom     customcollections.Service
	Smart      smartcollections.Service
	// Collects links products to custom collections (collectionproducts.go).
	Collects   collects.Service
	Pages      pages.Service
	Redirects  redirects.Service
	Webhooks   webhooks.Service
	ScriptTags scripttags.Service
	// Customers reads the seeded customers; Addresses their addresses.
	Customers savedsearches.Service
	Addresses addresses.Service
	Themes    themes.Service
	Charges   charges.Service
	// FulfillmentServices are REST's fulfillment services.
	FulfillmentServices fulfillmentservices.Service

	// l is the request's loader, on the copy of the Service the request's
	// roots hand down to the objects they resolve (nil in the Service the
	// schema is built over).
	l *loader
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Articles: articles.NewService(d), Comments: comments.NewService(d), Events: events.NewService(d),
		Variants: variants.NewService(d), Custom: customcollections.NewService(d), Smart: smartcollections.NewService(d), Collects: collects.NewService(d), Pages: pages.NewService(d), Redirects: redirects.NewService(d), Webhooks: webhooks.NewService(d),
		ScriptTags: scripttags.NewService(d), Customers: savedsearches.NewService(d), Addresses: addresses.NewService(d),
		Themes: themes.NewService(d), Charges: charges.NewService(d),
		FulfillmentServices: fulfillmentservices.NewService(d)}
}

// Schema is the Admin schema over s; its SDL is parsed on its first query.
func Schema(s Service) *graphql.Schema {
	return &graphql.Schema{SDL: sdl, Query: query{s, nil}, Mutation: mutation{s, nil}}
}

// query is the query root; l is the request's loader (nil: each root
// field has its own).
type query struct {
	s Service
	l *loader
}

func (query) TypeName() string { return "QueryRoot" }

func (q query) Field(ctx context.Context, f *graphql.Field) (any, error) {
	s, l := q.s, q.l
	if l == nil {
		l = newLoader(s)
	}
	s.l = l
	switch f.Name {
	case "shop":
		return s.shop(ctx), nil
	case "node":
		return s.node(ctx, f, f.Args["id"].(string), l)
	case "nodes":
		ids, _ := f.Args["ids"].([]any)
		if len(ids) > graphql.MaxPage {
			return nil, graphql.Errorf("BAD_REQUEST", "ids must hold at most %d ids", graphql.MaxPage)
		}
		out := make([]graphql.Object, len(ids))
		for i, id := range ids {
			n, err := s.node(ctx, f, id.(string), l)
			if err != nil {
				return nil, err
			}
			if n != nil {
				out[i] = n
			}
		}
		return out, nil
	case "page", "pages", "pagesCount":
		if err := need(f, ctx, admin.ScopeContent, false); err != nil {
			return nil, err
		}
		return s.pageQuery(ctx, f)
	case "article", "articles", "blog", "blogs", "blogsCount", "comment", "comments":
		if err := need(f, ctx, admin.ScopeContent, false); err != nil {
			return nil, err
		}
		return s.contentQuery(ctx, f)
	case "product", "productVariant", "products", "productsCount":
		if err := need(f, ctx, admin.ScopeProducts, false); err != nil {
			return nil, err
		}
		return s.productQuery(ctx, f)
	case "event", "events", "eventsCount":
		return s.eventQuery(ctx, f)
	case "customer", "customers", "customersCount":
		if err := need(f, ctx, admin.ScopeCustomers, false); err != nil {
			return nil, err
		}
		return s.customerQuery(ctx, f, l)
	case "collection", "collectionByHandle", "collections", "collectionsCount":
		if err := need(f, ctx, admin.ScopeProducts, false); err != nil {
			return nil, err
		}
		return s.collectionQuery(ctx, f)
	case "urlRedirect", "urlRedirects", "urlRedirectsCount":
		if err := need(f, ctx, admin.ScopeContent, false); err != nil {
			return nil, err
		}
		return s.redirectQuery(ctx, f)
	case "webhookSubscription", "webhookSubscriptions", "webhookSubscriptionsCount":
		return s.webhookQuery(ctx, f)
	case "scriptTag", "scriptTags":
		if err := need(f, ctx, admin.ScopeScriptTags, false); err != nil {
			return nil, err
		}
		return s.scriptTagQuery(ctx, f)
	case "theme", "themes":
		if err := need(f, ctx, admin.ScopeThemes, false); err != nil {
			return nil, err
		}
		return s.themeQuery(ctx, f)
	case "currentAppInstallation": // the app's own: no scope, as REST's charges
		return installationObj{s}, nil
	case "fulfillmentService":
		if err := need(f, ctx, admin.ScopeFulfillments, false); err != nil {
			return nil, err
		}
		return s.fulfillmentServiceQuery(ctx, f)
	}
	return nil, nil
}

// node resolves a global id of any type served: null for one of no
// record, or of a type the app may not read.
func (s Service) node(ctx context.Context, f *graphql.Field, gid string, l *loader) (graphql.Object, error) {
	typ, id, err := graphql.ParseGID(gid, "")
	if err != nil {
		return nil, err
	}
	var obj graphql.Object
	switch typ {
	case "Article", "Blog", "Comment":
		if err := need(f, ctx, admin.ScopeContent, false); err != nil {
			return nil, err
		}
		lower := strings.ToLower(typ)
		o, err := s.contentQuery(ctx, &graphql.Field{Name: lower, Args: map[string]any{"id": gid}})
		if o == nil || err != nil {
			return nil, err
		}
		return o.(graphql.Object), nil
	case "Product", "ProductVariant":
		if err := need(f, ctx, admin.ScopeProducts, false); err != nil {
			return nil, err
		}
		name := map[string]string{"Product": "product", "ProductVariant": "productVariant"}[typ]
		o, err := s.productQuery(ctx, &graphql.Field{Name: name, Args: map[string]any{"id": gid}})
		if o == nil || err != nil {
			return nil, err
		}
		return o.(graphql.Object), nil
	case "Customer":
		if err := need(f, ctx, admin.ScopeCustomers, false); err != nil {
			return nil, err
		}
		o, err := s.customerQuery(ctx, &graphql.Field{Name: "customer", Args: map[string]any{"id": gid}}, l)
		if o == nil || err != nil {
			return nil, err
		}
		return o.(graphql.Object), nil
	case "BasicEvent":
		ev, err := s.Events.Get(ctx, id)
		return found(eventObj(ev), err)
	case "Collection":
		if err := need(f, ctx, admin.ScopeProducts, false); err != nil {
			return nil, err
		}
		return s.collection(ctx, id)
	case "Page":
		if err := need(f, ctx, admin.ScopeContent, false); err != nil {
			return nil, err
		}
		p, err := s.Pages.Get(ctx, id)
		obj, err = found(s.page(p), err)
		if err != nil {
			return nil, err
		}
	case "UrlRedirect":
		if err := need(f, ctx, admin.ScopeContent, false); err != nil {
			return nil, err
		}
		r, err := s.Redirects.Get(ctx, id)
		if obj, err = found(redirectObj(r), err); err != nil {
			return nil, err
		}
	case "WebhookSubscription":
		w, err := s.Webhooks.Get(ctx, id)
		if err == nil && w != nil {
			obj = webhookObj(*w)
		} else if obj, err = found(nil, err); err != nil {
			return nil, err
		}
	case "AppSubscription":
		c, err := s.Charges.Get(ctx, admin.AppFrom(ctx).ID, id)
		if err != nil {
			return found(nil, err)
		}
		obj = subscriptionObj{c, s}
	case "OnlineStoreTheme":
		if err := need(f, ctx, admin.ScopeThemes, false); err != nil {
			return nil, err
		}
		t, err := s.Themes.Get(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		obj = themeObj{t, s}
	case "ScriptTag":
		if err := need(f, ctx, admin.ScopeScriptTags, false); err != nil {
			return nil, err
		}
		t, err := s.ScriptTags.Get(ctx, id)
		if obj, err = found(scriptTagObj(t), err); err != nil {
			return nil, err
		}
	}
	return obj, nil
}

// found is obj, or nil for a record that is not there.
func found(obj graphql.Object, err error) (graphql.Object, error) {
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return nil, nil
	}
	return obj, err
}

// need answers ACCESS_DENIED, naming the access the field needs, when the
// calling app lacks it; the query's other fields still resolve.
func need(f *graphql.Field, ctx context.Context, s admin.Scope, write bool) error {
	if admin.AppFrom(ctx).Allows(s, write) {
		return nil
	}
	verb := "read_"
	if write {
		verb = "write_"
	}
	access := "`" + verb + string(s) + "` access scope."
	e := graphql.Errorf("ACCESS_DENIED", "Access denied for %s field. Required access: %s", f.Name, access)
	e.Extensions["documentation"] = "https://shopify.dev/api/usage/access-scopes"
	e.Extensions["requiredAccess"] = access
	return e
}

// mutation is the mutation root; l is the request's loader (nil: each
// root field has its own).
type mutation struct {
	s Service
	l *loader
}

func (mutation) TypeName() string { return "Mutation" }

func (m mutation) Field(ctx context.Context, f *graphql.Field) (any, error) {
	s, l := m.s, m.l
	if l == nil {
		l = newLoader(s)
	}
	s.l = l
	switch {
	case f.Name == "metafieldsSet":
		return s.metafieldsSet(ctx, f)
	case f.Name == "metafieldsDelete":
		return s.metafieldsDelete(ctx, f)
	case f.Name == "productVariantsBulkUpdate":
		if err := need(f, ctx, admin.ScopeProducts, true); err != nil {
			return nil, err
		}
		return s.productVariantsBulkUpdate(ctx, f)
	case f.Name == "productVariantsBulkCreate", f.Name == "productVariantsBulkDelete":
		if err := need(f, ctx, admin.ScopeProducts, true); err != nil {
			return nil, err
		}
		return s.productVariantsBulk(ctx, f)
	case strings.HasPrefix(f.Name, "customer"):
		if err := need(f, ctx, admin.ScopeCustomers, true); err != nil {
			return nil, err
		}
		return s.customerMutation(ctx, f, l)
	case strings.HasPrefix(f.Name, "article"), strings.HasPrefix(f.Name, "comment"):
		if err := need(f, ctx, admin.ScopeContent, true); err != nil {
			return nil, err
		}
		return s.contentMutation(ctx, f)
	case strings.HasPrefix(f.Name, "collection"):
		if err := need(f, ctx, admin.ScopeProducts, true); err != nil {
			return nil, err
		}
		return s.collectionMutation(ctx, f)
	case strings.HasPrefix(f.Name, "page"):
		if err := need(f, ctx, admin.ScopeContent, true); err != nil {
			return nil, err
		}
		return s.pageMutation(ctx, f)
	case strings.HasPrefix(f.Name, "urlRedirect"):
		if err := need(f, ctx, admin.ScopeContent, true); err != nil {
			return nil, err
		}
		return s.redirectMutation(ctx, f)
	case strings.HasPrefix(f.Name, "webhookSubscription"):
		return s.webhookMutation(ctx, f)
	case strings.HasPrefix(f.Name, "scriptTag"):
		if err := need(f, ctx, admin.ScopeScriptTags, true); err != nil {
			return nil, err
		}
		return s.scriptTagMutation(ctx, f)
	case strings.HasPrefix(f.Name, "fulfillmentService"):
		if err := need(f, ctx, admin.ScopeFulfillments, true); err != nil {
			return nil, err
		}
		return s.fulfillmentServiceMutation(ctx, f)
	case strings.HasPrefix(f.Name, "appSubscription"): // the app bills for itself: no scope
		return s.billingMutation(ctx, f)
	case strings.HasPrefix(f.Name, "theme"):
		if err := need(f, ctx, admin.ScopeThemes, true); err != nil {
			return nil, err
		}
		return s.themeMutation(ctx, f)
	}
	return nil, nil
}

// payload is a mutation's answer: its record (or deleted id) under key,
// and its user errors. A validation error of the operation becomes user
// errors (the REST call's messages, each under its input's field); any
// other error is the field's.
func payload(typ, key string, value any, errType, input string, err error) (graphql.Object, error) {
	fields := map[string]any{key: value, "userErrors": []graphql.Object{}}
	if err != nil {
		ue, ok := userErrors(errType, input, err)
		if !ok {
			return nil, err
		}
		fields[key], fields["userErrors"] = nil, ue
	}
	return graphql.Map{Type: typ, Fields: fields}, nil
}

// userErrors turns an operation's validation or not-found error into
// user errors: field is [input, the field in camelCase], message the
// REST message after the field's name ("Title can't be blank"), code what
// the message says (BLANK, TAKEN, TOO_LONG, INVALID, NOT_FOUND).
func userErrors(errType, input string, err error) ([]graphql.Object, bool) {
	var ae *admin.Error
	if !errors.As(err, &ae) {
		return nil, false
	}
	var coded codedErr
	forced, notFound := "", "NOT_FOUND"
	if errors.As(err, &coded) {
		forced, notFound = coded.code, coded.code
		if strings.HasSuffix(coded.code, "_FAILED") { // URL redirects' codes
			notFound = "DOES_NOT_EXIST"
		}
	}
	var out []graphql.Object
	switch ae.Code {
	case admin.ENOTFOUND:
		out = append(out, userError(errType, []string{"id"}, input+" does not exist", notFound))
		return out, true
	case admin.EINVALID, admin.EBADREQUEST:
		names := make([]string, 0, len(ae.Fields))
		for k := range ae.Fields {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			for _, msg := range ae.Fields[k] {
				code := codeOf(msg)
				if forced != "" {
					code = forced
				}
				if k == "base" { // an error of the whole record: REST's message as it is
					out = append(out, userError(errType, nil, msg, code))
					continue
				}
				out = append(out, userError(errType, []string{input, camel(k)}, humanize(k)+" "+msg, code))
			}
		}
		if len(names) == 0 {
			out = append(out, userError(errType, nil, ae.Message, "INVALID"))
		}
	default:
		return nil, false
	}
	return out, true
}

func userError(typ string, field []string, msg, code string) graphql.Object {
	fields := map[string]any{"field": field, "message": msg}
	if typ != "UserError" {
		fields["code"] = code
	}
	if field == nil {
		fields["field"] = nil
	}
	return graphql.Map{Type: typ, Fields: fields}
}

// codeOf is the user error code of a REST validation message.
func codeOf(msg string) string {
	switch {
	case strings.Contains(msg, "can't be blank"):
		return "BLANK"
	case strings.Contains(msg, "has already been taken"):
		return "TAKEN"
	case strings.Contains(msg, "too long"):
		return "TOO_LONG"
	case strings.Contains(msg, "too big"):
		return "TOO_BIG"
	}
	return "INVALID"
}

// camel is a REST field name in GraphQL's case: body_html is bodyHtml.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// humanize is a REST field name as a message starts with it: body_html
// is "Body html".
func humanize(s string) string {
	s = strings.ReplaceAll(s, "_", " ")
	r := []rune(s)
	if len(r) > 0 {
		r[0] = unicode.ToUpper(r[0])
	}
	return string(r)
}

// window is the records.Window a connection's page reads of a list in
// ascending id order: forward from its cursor's id, or back from it (the
// list's end without one); the records come back in list order either way.
func window(p graphql.Page) records.Window {
	key := p.After
	if p.Back {
		key = p.Before
	}
	if p.Back == p.Reverse { // reading up
		w := records.Window{Limit: p.Limit}
		if key > 0 {
			w.Cursor.Key = records.IDSK(key)
		}
		return w
	}
	w := records.Window{Limit: p.Limit, Cursor: records.Cursor{Key: "~", Back: true}}
	if key > 0 {
		w.Cursor.Key = records.IDSK(key)
	}
	return w
}

// connection builds a connection's answer from a page read through window.
func connection[T any](typ string, p graphql.Page, recs []T, span records.Span, obj func(T) graphql.Object, id func(T) int64) *graphql.Connection {
	nodes, ids := make([]graphql.Object, len(recs)), make([]int64, len(recs))
	for i, r := range recs {
		nodes[i], ids[i] = obj(r), id(r)
	}
	return graphql.NewConnection(typ, p, nodes, ids, span.Before, span.After)
}

// listOf answers a list field: its count when the field is a count
// (countField), else the page it asks for as a connection of typ, in id
// order.
func listOf[T any](f *graphql.Field, countField, typ string, count func() (int, error),
	read func(records.Window) ([]T, records.Span, error), obj func(T) graphql.Object, id func(T) int64) (any, error) {
	if f.Name == countField {
		n, err := count()
		if err != nil {
			return nil, err
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
	recs, span, err := read(window(p))
	if err != nil {
		return nil, err
	}
	return connection(typ, p, recs, span, obj, id), nil
}

// searchArg reads a list's query: argument as the REST list's filters
// (graphql.RESTFilters) of the names allowed.
func searchArg(f *graphql.Field, allowed ...string) (url.Values, error) {
	q, _ := f.Args["query"].(string)
	terms, err := graphql.ParseSearch(q)
	if err != nil {
		return nil, err
	}
	return graphql.RESTFilters(terms, allowed...)
}

// idArg reads a global id argument of typ.
func idArg(f *graphql.Field, name, typ string) (int64, error) {
	s, _ := f.Args[name].(string)
	_, id, err := graphql.ParseGID(s, typ)
	return id, err
}

// noSavedSearch refuses savedSearchId, which these lists do not take.
func noSavedSearch(f *graphql.Field) error {
	if f.Args["savedSearchId"] != nil {
		return graphql.Errorf("BAD_REQUEST", "savedSearchId is not supported on %s (docs/graphql.md)", f.Name)
	}
	return nil
}

// sortByID refuses a sortKey other than ID (and CREATED_AT, which orders
// as ids do): these lists answer in id order.
func sortByID(f *graphql.Field) error {
	switch k, _ := f.Args["sortKey"].(string); k {
	case "", "ID", "CREATED_AT":
		return nil
	default:
		return graphql.Errorf("BAD_REQUEST", "sortKey %s is not supported on %s: only ID (docs/graphql.md)", k, f.Name)
	}
}
