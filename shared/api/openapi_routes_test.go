package api_test

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/customcollections"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)

	if v := doc.root["openapi"]; v != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", v)
	}
	t.Run("served routes", func(t *testing.T) { checkServedRoutes(t, doc) })
	t.Run("security", func(t *testing.T) { checkSecurity(t, doc) })
	t.Run("operations", func(t *testing.T) { checkOperationShapes(t, doc) })
	t.Run("schemas", func(t *testing.T) { checkSchemaKeywords(t, doc) })
	t.Run("enums", func(t *testing.T) { checkEnums(t, doc) })
}

// checkServedRoutes compares the groups' routes with the document's
// operations: each served once and documented once, with its scope, pages
// marked x-page.
func checkServedRoutes(t *testing.T, doc *openAPI) {
	type served struct {
		scope string
		page  bool
	}
	routes := map[string]served{}
	for _, g := range api.Groups {
		for _, r := range g.Routes(&platform.Deps{}) {
			if r.Public {
				continue // files for anyone (theme assets/), not operations of the API
			}
			key := r.Method + " " + r.Path
			if _, dup := routes[key]; dup {
				t.Errorf("route %s is served twice", key)
			}
			routes[key] = served{string(r.Scope), r.Page}
		}
	}
	documented := map[string]*operation{}
	for _, op := range doc.ops {
		documented[op.method+" "+op.path] = op
	}
	var missing, extra []string
	for key := range routes {
		if documented[key] == nil {
			missing = append(missing, key)
		}
	}
	for key := range documented {
		if _, ok := routes[key]; !ok {
			extra = append(extra, key)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("routes served but not in docs/openapi.yaml:\n  %s", strings.Join(missing, "\n  "))
	}
	if len(extra) > 0 {
		t.Errorf("operations in docs/openapi.yaml that no group serves:\n  %s", strings.Join(extra, "\n  "))
	}
	for key, r := range routes {
		op := documented[key]
		if op == nil {
			continue
		}
		// A page (HTML, no token) is marked x-page and needs no security.
		if isPage(op) != r.page {
			t.Errorf("%s: x-page %v, route page %v", key, isPage(op), r.page)
		}
		if sec, ok := op.obj["security"]; r.page && (!ok || len(asSlice(sec)) != 0) {
			t.Errorf("%s: a page must say security: []", key)
		}
		scope, ok := op.obj["x-scope"].(string)
		if !ok {
			t.Errorf("%s: no x-scope (want %q)", key, r.scope)
		} else if scope != r.scope {
			t.Errorf("%s: x-scope %q, route scope %q", key, scope, r.scope)
		}
	}
}

// checkSecurity: the global security is the access token header.
func checkSecurity(t *testing.T, doc *openAPI) {
	schemes, _ := doc.root["components"].(map[string]any)["securitySchemes"].(map[string]any)
	sec := asSlice(doc.root["security"])
	if len(sec) != 1 {
		t.Errorf("security: want one global requirement, got %v", doc.root["security"])
	}
	for _, req := range sec {
		for name := range req.(map[string]any) {
			s, _ := schemes[name].(map[string]any)
			if s["type"] != "apiKey" || s["in"] != "header" || !strings.EqualFold(fmt.Sprint(s["name"]), httpapi.TokenHeader) {
				t.Errorf("security scheme %q = %v, want an apiKey in header %s", name, s, httpapi.TokenHeader)
			}
		}
	}
}

// checkOperationShapes: each operation has a unique operationId, its
// template's path parameters, and JSON schemas for its bodies (a page's
// form and HTML answers aside).
func checkOperationShapes(t *testing.T, doc *openAPI) {
	ids := map[string]bool{}
	for _, op := range doc.ops {
		where := op.method + " " + op.path
		if op.id == "" || ids[op.id] {
			t.Errorf("%s: operationId %q missing or not unique", where, op.id)
		}
		ids[op.id] = true
		// Path parameters: declared exactly for the template's wildcards.
		var declared []string
		for _, p := range op.params {
			if p == nil {
				t.Errorf("%s: a parameter reference does not resolve", where)
				continue
			}
			if p["in"] == "path" {
				declared = append(declared, fmt.Sprint(p["name"]))
				if p["required"] != true {
					t.Errorf("%s: path parameter %v must be required", where, p["name"])
				}
			}
			if p["schema"] == nil {
				t.Errorf("%s: parameter %v has no schema", where, p["name"])
			}
		}
		names := slices.Clone(op.names)
		slices.Sort(names)
		slices.Sort(declared)
		if !slices.Equal(names, declared) {
			t.Errorf("%s: path parameters declared %v, template has %v", where, declared, names)
		}
		// Responses: every one has a JSON schema.
		responses, _ := op.obj["responses"].(map[string]any)
		if len(responses) == 0 {
			t.Errorf("%s: no responses", where)
		}
		for status, r := range responses {
			resp := doc.deref(r)
			if resp == nil {
				t.Errorf("%s: response %s does not resolve", where, status)
				continue
			}
			if isPage(op) && (status == "302" || status == "303" || htmlOf(resp["content"])) {
				continue // a page, or the redirect after its form
			}
			if schemaOf(resp["content"]) == nil {
				t.Errorf("%s: response %s has no application/json schema", where, status)
			}
		}
		if rb, ok := op.obj["requestBody"]; ok && isPage(op) {
			if c, _ := doc.deref(rb)["content"].(map[string]any); c["application/x-www-form-urlencoded"] == nil {
				t.Errorf("%s: a page's form has no application/x-www-form-urlencoded schema", where)
			}
		} else if ok && schemaOf(doc.deref(rb)["content"]) == nil {
			t.Errorf("%s: request body has no application/json schema", where)
		}
	}
}

// checkSchemaKeywords: every reference resolves, every schema uses only
// checked keywords, and resource schemas reject undocumented properties.
func checkSchemaKeywords(t *testing.T, doc *openAPI) {
	walk(doc.root, "#", func(at string, m map[string]any) {
		if ref, ok := m["$ref"].(string); ok {
			if _, err := doc.resolve(ref); err != nil {
				t.Errorf("%s: %v", at, err)
			}
		}
	})
	v := &validator{doc: doc}
	for _, name := range sortedKeys(doc.root["components"].(map[string]any)["schemas"].(map[string]any)) {
		for _, e := range v.checkKeywords(doc.schema(name), "#/components/schemas/"+name) {
			t.Error(e)
		}
	}
	walk(doc.root["paths"], "#/paths", func(at string, m map[string]any) {
		if sch, ok := m["schema"]; ok {
			for _, e := range v.checkKeywords(sch, at+"/schema") {
				t.Error(e)
			}
		}
	})
	walk(doc.root["components"], "#/components", func(at string, m map[string]any) {
		if sch, ok := m["schema"]; ok && !strings.HasPrefix(at, "#/components/schemas/") {
			for _, e := range v.checkKeywords(sch, at+"/schema") {
				t.Error(e)
			}
		}
	})
	// Resource schemas reject undocumented properties.
	for _, name := range []string{"Redirect", "RedirectFields", "ScriptTag", "ScriptTagFields", "Event", "EventFields", "Page", "PageFields",
		"Article", "ArticleFields", "ArticleImage", "ArticleAuthors", "ArticleTags", "Comment", "CommentFields",
		"Webhook", "WebhookFields", "DeliveryAttempt", "DeliveryAttemptFields",
		"CustomCollection", "CustomCollectionFields", "SmartCollection", "SmartCollectionFields", "SmartCollectionRule",
		"Collect", "CollectFields", "Variant", "VariantFields", "FulfillmentService", "Count", "Empty",
		"Metafield", "MetafieldFields",
		"Country", "CountryFields", "Province", "ProvinceFields",
		"PriceBasedShippingRate", "WeightBasedShippingRate", "ShippingRateOffset",
		"RecurringApplicationCharge", "RecurringApplicationChargeFields",
		"Theme", "ThemeFields", "Asset", "AssetFields"} {
		if s, _ := doc.schema(name).(map[string]any); s["additionalProperties"] != false {
			t.Errorf("schema %s: additionalProperties must be false", name)
		}
	}
}

// checkEnums: the topic enum is webhooks.Topics, in its order; so are the
// collection and fulfillment service enums.
func checkEnums(t *testing.T, doc *openAPI) {
	var topics []string
	for _, v := range asSlice(doc.schema("WebhookTopic").(map[string]any)["enum"]) {
		topics = append(topics, fmt.Sprint(v))
	}
	if !slices.Equal(topics, webhooks.Topics) {
		t.Errorf("schema WebhookTopic: enum %v, want webhooks.Topics %v", topics, webhooks.Topics)
	}
	// So are the collection and fulfillment service enums.
	for _, c := range []struct {
		schema, list string
		want         []string
	}{
		{"CollectionSortOrder", "customcollections.SortOrders", customcollections.SortOrders},
		{"CollectionSortOrder", "smartcollections.SortOrders", smartcollections.SortOrders},
		{"SmartCollectionColumn", "smartcollections.Columns", smartcollections.Columns},
		{"SmartCollectionRelation", "smartcollections.Relations", smartcollections.Relations},
		{"FulfillmentServiceFormat", "fulfillmentservices.Formats", fulfillmentservices.Formats},
	} {
		var got []string
		for _, v := range asSlice(doc.schema(c.schema).(map[string]any)["enum"]) {
			got = append(got, fmt.Sprint(v))
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("schema %s: enum %v, want %s %v", c.schema, got, c.list, c.want)
		}
	}
}
