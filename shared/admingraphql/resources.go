package admingraphql

import (
	"context"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/redirects"
	"github.com/storeadmin/adminapi/shared/scripttags"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// shopObj is the Shop.
type shopObj struct {
	s   *admin.Shop
	svc Service
}

func (shopObj) TypeName() string { return "Shop" }

func (o shopObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	s := o.s
	switch f.Name {
	case "fulfillmentServices":
		return o.svc.shopFulfillmentServices(ctx, f)
	case "id":
		return graphql.GID("Shop", s.ID), nil
	case "name":
		return s.Name, nil
	case "email", "contactEmail":
		return s.Email, nil
	case "myshopifyDomain":
		return s.Domain, nil
	case "url":
		return "https://" + s.Domain, nil
	case "ianaTimezone":
		if s.IANATimezone == "" {
			return "Etc/UTC", nil
		}
		return s.IANATimezone, nil
	case "currencyCode":
		return s.Currency, nil
	}
	return nil, nil
}

// redirectObj is a UrlRedirect.
type redirectObj redirects.Redirect

func (redirectObj) TypeName() string { return "UrlRedirect" }

func (r redirectObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("UrlRedirect", r.ID), nil
	case "path":
		return r.Path, nil
	case "target":
		return r.Target, nil
	}
	return nil, nil
}

func (s Service) redirectQuery(ctx context.Context, f *graphql.Field) (any, error) {
	if f.Name == "urlRedirect" {
		id, err := idArg(f, "id", "UrlRedirect")
		if err != nil {
			return nil, err
		}
		r, err := s.Redirects.Get(ctx, id)
		return found(redirectObj(r), err)
	}
	if err := noSavedSearch(f); err != nil {
		return nil, err
	}
	v, err := searchArg(f, "path", "target")
	if err != nil {
		return nil, err
	}
	filter := redirects.Filter{Path: v.Get("path"), Target: v.Get("target")}
	return listOf(f, "urlRedirectsCount", "UrlRedirectConnection", func() (int, error) { return s.Redirects.Count(ctx, filter) },
		func(w records.Window) ([]redirects.Redirect, records.Span, error) {
			return s.Redirects.List(ctx, filter, 0, w)
		},
		func(r redirects.Redirect) graphql.Object { return redirectObj(r) }, func(r redirects.Redirect) int64 { return r.ID })
}

func redirectInput(m map[string]any) *redirects.Input {
	in := &redirects.Input{}
	if v, ok := m["path"].(string); ok {
		in.Path = &v
	}
	if v, ok := m["target"].(string); ok {
		in.Target = &v
	}
	return in
}

func (s Service) redirectMutation(ctx context.Context, f *graphql.Field) (any, error) {
	const errType = "UrlRedirectUserError"
	switch f.Name {
	case "urlRedirectCreate":
		r, err := s.Redirects.Create(ctx, redirectInput(f.Args["urlRedirect"].(map[string]any)))
		return payload("UrlRedirectCreatePayload", "urlRedirect", redirectObj(r), errType, "urlRedirect", redirectCode(err, "CREATE_FAILED"))
	case "urlRedirectUpdate":
		id, err := idArg(f, "id", "UrlRedirect")
		if err != nil {
			return nil, err
		}
		r, err := s.Redirects.Update(ctx, id, redirectInput(f.Args["urlRedirect"].(map[string]any)))
		return payload("UrlRedirectUpdatePayload", "urlRedirect", redirectObj(r), errType, "urlRedirect", redirectCode(err, "UPDATE_FAILED"))
	case "urlRedirectDelete":
		id, err := idArg(f, "id", "UrlRedirect")
		if err != nil {
			return nil, err
		}
		err = s.Redirects.Delete(ctx, id)
		return payload("UrlRedirectDeletePayload", "deletedUrlRedirectId", graphql.GID("UrlRedirect", id), errType, "UrlRedirect", redirectCode(err, "DELETE_FAILED"))
	}
	return nil, nil
}

// redirectCode keeps err; UrlRedirectErrorCode has no BLANK or TAKEN, so
// its user errors say failed (or DOES_NOT_EXIST), which payload reads
// from a marker in the error.
func redirectCode(err error, failed string) error {
	if err == nil {
		return nil
	}
	return codedErr{err: err, code: failed}
}

// codedErr carries the code every user error of a mutation takes.
type codedErr struct {
	err  error
	code string
}

func (c codedErr) Error() string { return c.err.Error() }
func (c codedErr) Unwrap() error { return c.err }

// webhookObj is a WebhookSubscription of the calling app.
type webhookObj webhooks.Webhook

func (webhookObj) TypeName() string { return "WebhookSubscription" }

func (w webhookObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("WebhookSubscription", w.ID), nil
	case "legacyResourceId":
		return w.ID, nil
	case "topic":
		return TopicEnum(w.Topic), nil
	case "format":
		return strings.ToUpper(w.Format), nil
	case "includeFields":
		return nonNil(w.Fields), nil
	case "metafieldNamespaces":
		return nonNil(w.MetafieldNamespaces), nil
	case "createdAt":
		return w.CreatedAt.Time, nil
	case "updatedAt":
		return w.UpdatedAt.Time, nil
	case "uri", "callbackUrl":
		return w.Address, nil
	case "endpoint":
		return graphql.Map{Type: "WebhookHttpEndpoint", Fields: map[string]any{"callbackUrl": w.Address}}, nil
	case "apiVersion":
		return graphql.Map{Type: "ApiVersion", Fields: map[string]any{"handle": "2026-07", "displayName": "2026-07", "supported": true}}, nil
	}
	return nil, nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// TopicEnum is a REST topic as GraphQL's WebhookSubscriptionTopic:
// collections/create is COLLECTIONS_CREATE.
func TopicEnum(topic string) string { return strings.ToUpper(strings.ReplaceAll(topic, "/", "_")) }

// topicOf is the REST topic of a WebhookSubscriptionTopic.
func topicOf(enum string) string {
	low := strings.ToLower(enum)
	for _, t := range webhooks.Topics {
		if strings.ReplaceAll(t, "/", "_") == low {
			return t
		}
	}
	return low
}

func (s Service) webhookQuery(ctx context.Context, f *graphql.Field) (any, error) {
	if f.Name == "webhookSubscription" {
		id, err := idArg(f, "id", "WebhookSubscription")
		if err != nil {
			return nil, err
		}
		w, err := s.Webhooks.Get(ctx, id)
		if err != nil || w == nil {
			return found(nil, err)
		}
		return webhookObj(*w), nil
	}
	v, err := searchArg(f, "topic", "created_at", "updated_at")
	if err != nil {
		return nil, err
	}
	filter := webhooks.Filter{Topic: v.Get("topic")}
	if filter.Topic != "" {
		filter.Topic = topicOf(filter.Topic)
	}
	if filter.Stamps, err = dates.ParseStamps(v, admin.ShopFrom(ctx).Location()); err != nil {
		return nil, graphql.Errorf("BAD_REQUEST", "query: %v", err)
	}
	if u, _ := f.Args["callbackUrl"].(string); u != "" {
		filter.Address = u
	}
	if u, _ := f.Args["uri"].(string); u != "" {
		filter.Address = u
	}
	if topics, _ := f.Args["topics"].([]any); len(topics) == 1 {
		filter.Topic = topicOf(topics[0].(string))
	} else if len(topics) > 1 {
		return nil, graphql.Errorf("BAD_REQUEST", "topics: give at most one topic here (docs/graphql.md)")
	}
	if f.Args["format"] != nil {
		return nil, graphql.Errorf("BAD_REQUEST", "format: filtering subscriptions by format is not served (docs/graphql.md)")
	}
	return listOf(f, "webhookSubscriptionsCount", "WebhookSubscriptionConnection", func() (int, error) { return s.Webhooks.Count(ctx, filter) },
		func(w records.Window) ([]webhooks.Webhook, records.Span, error) {
			return s.Webhooks.List(ctx, filter, 0, w)
		},
		func(w webhooks.Webhook) graphql.Object { return webhookObj(w) }, func(w webhooks.Webhook) int64 { return w.ID })
}

func webhookInput(m map[string]any, topic string) *webhooks.Input {
	in := &webhooks.Input{}
	if topic != "" {
		t := topicOf(topic)
		in.Topic = &t
	}
	for _, k := range []string{"callbackUrl", "uri"} {
		if v, ok := m[k].(string); ok {
			in.Address = &v
		}
	}
	if v, ok := m["format"].(string); ok {
		low := strings.ToLower(v)
		in.Format = &low
	}
	if v, ok := m["includeFields"].([]any); ok {
		fs := strs(v)
		in.Fields = &fs
	}
	if v, ok := m["metafieldNamespaces"].([]any); ok {
		ns := strs(v)
		in.MetafieldNamespaces = &ns
	}
	return in
}

func strs(v []any) []string {
	out := make([]string, len(v))
	for i, x := range v {
		out[i], _ = x.(string)
	}
	return out
}

func (s Service) webhookMutation(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "webhookSubscriptionCreate":
		topic, _ := f.Args["topic"].(string)
		w, err := s.Webhooks.Create(ctx, webhookInput(f.Args["webhookSubscription"].(map[string]any), topic))
		return payload("WebhookSubscriptionCreatePayload", "webhookSubscription", webhookObj(w), "UserError", "webhookSubscription", err)
	case "webhookSubscriptionUpdate":
		id, err := idArg(f, "id", "WebhookSubscription")
		if err != nil {
			return nil, err
		}
		w, err := s.Webhooks.Update(ctx, id, webhookInput(f.Args["webhookSubscription"].(map[string]any), ""))
		return payload("WebhookSubscriptionUpdatePayload", "webhookSubscription", webhookObj(w), "UserError", "webhookSubscription", err)
	case "webhookSubscriptionDelete":
		id, err := idArg(f, "id", "WebhookSubscription")
		if err != nil {
			return nil, err
		}
		err = s.Webhooks.Delete(ctx, id)
		return payload("WebhookSubscriptionDeletePayload", "deletedWebhookSubscriptionId", graphql.GID("WebhookSubscription", id), "UserError", "WebhookSubscription", err)
	}
	return nil, nil
}

// scriptTagObj is a ScriptTag of the calling app.
type scriptTagObj scripttags.ScriptTag

func (scriptTagObj) TypeName() string { return "ScriptTag" }

func (t scriptTagObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("ScriptTag", t.ID), nil
	case "legacyResourceId":
		return t.ID, nil
	case "src":
		return t.Src, nil
	case "displayScope":
		return strings.ToUpper(t.DisplayScope), nil
	case "cache":
		return false, nil
	case "createdAt":
		return t.CreatedAt.Time, nil
	case "updatedAt":
		return t.UpdatedAt.Time, nil
	}
	return nil, nil
}

func (s Service) scriptTagQuery(ctx context.Context, f *graphql.Field) (any, error) {
	if f.Name == "scriptTag" {
		id, err := idArg(f, "id", "ScriptTag")
		if err != nil {
			return nil, err
		}
		t, err := s.ScriptTags.Get(ctx, id)
		return found(scriptTagObj(t), err)
	}
	v, err := searchArg(f, "src", "created_at", "updated_at")
	if err != nil {
		return nil, err
	}
	filter := scripttags.Filter{Src: v.Get("src")}
	if src, _ := f.Args["src"].(string); src != "" {
		filter.Src = src
	}
	if filter.Stamps, err = dates.ParseStamps(v, admin.ShopFrom(ctx).Location()); err != nil {
		return nil, graphql.Errorf("BAD_REQUEST", "query: %v", err)
	}
	return listOf(f, "", "ScriptTagConnection", nil,
		func(w records.Window) ([]scripttags.ScriptTag, records.Span, error) {
			return s.ScriptTags.List(ctx, filter, 0, w)
		},
		func(t scripttags.ScriptTag) graphql.Object { return scriptTagObj(t) }, func(t scripttags.ScriptTag) int64 { return t.ID })
}

// scriptTagInput is a ScriptTagInput as the REST input: GraphQL has no
// event (every script tag loads onload).
func scriptTagInput(m map[string]any, create bool) *scripttags.Input {
	in := &scripttags.Input{}
	if create {
		onload := "onload"
		in.Event = &onload
	}
	if v, ok := m["src"].(string); ok {
		in.Src = &v
	}
	if v, ok := m["displayScope"].(string); ok {
		low := strings.ToLower(v)
		in.DisplayScope = &low
	}
	return in
}

func (s Service) scriptTagMutation(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "scriptTagCreate":
		t, err := s.ScriptTags.Create(ctx, scriptTagInput(f.Args["input"].(map[string]any), true))
		return payload("ScriptTagCreatePayload", "scriptTag", scriptTagObj(t), "UserError", "input", err)
	case "scriptTagUpdate":
		id, err := idArg(f, "id", "ScriptTag")
		if err != nil {
			return nil, err
		}
		t, err := s.ScriptTags.Update(ctx, id, scriptTagInput(f.Args["input"].(map[string]any), false))
		return payload("ScriptTagUpdatePayload", "scriptTag", scriptTagObj(t), "UserError", "input", err)
	case "scriptTagDelete":
		id, err := idArg(f, "id", "ScriptTag")
		if err != nil {
			return nil, err
		}
		err = s.ScriptTags.Delete(ctx, id)
		return payload("ScriptTagDeletePayload", "deletedScriptTagId", graphql.GID("ScriptTag", id), "UserError", "ScriptTag", err)
	}
	return nil, nil
}

// shop is the Shop with its metafields.
func (s Service) shop(ctx context.Context) graphql.Object {
	shop := admin.ShopFrom(ctx)
	return s.owned(shopObj{shop, s}, metafields.OwnerShop, shop.ID)
}
