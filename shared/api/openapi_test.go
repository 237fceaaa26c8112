package api_test

// The OpenAPI document (docs/openapi.yaml) is checked two ways here:
//
//   - TestOpenAPIRoutes: its operations are exactly the routes every group
//     serves, with the route's scope in x-scope, and the document is well
//     formed (references resolve, path parameters declared, JSON-convertible
//     as the local runner serves it).
//   - TestOpenAPIScenario: real requests through api.Handler on a seeded
//     embedded store; every response must have a status the operation
//     documents, Content-Type application/json and a body valid against the
//     documented schema. Every status an operation documents (but 500) must be
//     exercised at least once.
//
// The schema validator below supports the JSON Schema subset the document
// uses and rejects any other keyword, so the document cannot silently rely on
// something that is not checked. Schemas named <Name>Fields are the forms of
// <Name> restricted by the fields query parameter: responses to requests
// without fields must match the whole resource.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/santhosh-tekuri/jsonschema/v6"
	adminapi "github.com/storeadmin/adminapi"
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/customcollections"
	"github.com/storeadmin/adminapi/shared/delivery"
	eventlog "github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/faults"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/oauth"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/ratelimit"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/themes/theme"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// ---------------------------------------------------------------------------
// The document.

var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

type openAPI struct {
	root map[string]any
	ops  []*operation

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	schemas  map[string]*jsonschema.Schema
}

type operation struct {
	method   string // upper case
	path     string // template, such as /web/redirects/{id}.json
	id       string // operationId
	obj      map[string]any
	params   []map[string]any // path-item and operation parameters, dereferenced
	re       *regexp.Regexp
	names    []string // path parameter names, in order
	literals int      // length of the template without its parameters
}

// loadOpenAPI parses the embedded document and converts it to the generic
// JSON form (map[string]any, json.Number), as the local runner serves it.
func loadOpenAPI(t testing.TB) *openAPI {
	t.Helper()
	var raw any
	if err := yaml.Unmarshal(adminapi.OpenAPI, &raw); err != nil {
		t.Fatalf("docs/openapi.yaml: %v", err)
	}
	b, err := json.Marshal(raw)
	if err != nil {
		t.Fatalf("docs/openapi.yaml does not convert to JSON (quote non-string keys such as status codes): %v", err)
	}
	root, ok := decodeJSON(b).(map[string]any)
	if !ok {
		t.Fatal("docs/openapi.yaml: not an object")
	}
	doc := &openAPI{root: root}
	paths, _ := root["paths"].(map[string]any)
	for _, path := range sortedKeys(paths) {
		item, _ := paths[path].(map[string]any)
		var shared []map[string]any
		for _, p := range asSlice(item["parameters"]) {
			shared = append(shared, doc.deref(p))
		}
		for _, m := range httpMethods {
			obj, ok := item[m].(map[string]any)
			if !ok {
				continue
			}
			op := &operation{method: strings.ToUpper(m), path: path, obj: obj}
			op.id, _ = obj["operationId"].(string)
			op.params = append(op.params, shared...)
			for _, p := range asSlice(obj["parameters"]) {
				op.params = append(op.params, doc.deref(p))
			}
			op.compile()
			doc.ops = append(doc.ops, op)
		}
	}
	return doc
}

var paramRE = regexp.MustCompile(`\{([^{}/]+)\}`)

func (op *operation) compile() {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range paramRE.FindAllStringSubmatchIndex(op.path, -1) {
		b.WriteString(regexp.QuoteMeta(op.path[last:m[0]]))
		b.WriteString("([^/]+)")
		op.names = append(op.names, op.path[m[2]:m[3]])
		op.literals += m[0] - last
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(op.path[last:]))
	b.WriteString("$")
	op.literals += len(op.path) - last
	op.re = regexp.MustCompile(b.String())
}

// find returns the operation serving method and path, preferring the most
// specific template (count.json over {id}.json), as the router does, and the
// values of its path parameters.
func (d *openAPI) find(method, path string) (*operation, map[string]string) {
	var best *operation
	var vals map[string]string
	for _, op := range d.ops {
		if op.method != method {
			continue
		}
		m := op.re.FindStringSubmatch(path)
		if m == nil || (best != nil && op.literals <= best.literals) {
			continue
		}
		best, vals = op, map[string]string{}
		for i, n := range op.names {
			vals[n] = m[i+1]
		}
	}
	return best, vals
}

// deref follows $ref of a parameter, response or request body.
func (d *openAPI) deref(v any) map[string]any {
	m, _ := v.(map[string]any)
	for i := 0; i < 10 && m != nil; i++ {
		ref, ok := m["$ref"].(string)
		if !ok {
			return m
		}
		target, err := d.resolve(ref)
		if err != nil {
			return nil
		}
		m, _ = target.(map[string]any)
	}
	return m
}

// resolve follows a local JSON pointer such as #/components/schemas/Redirect.
func (d *openAPI) resolve(ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#/")
	if !ok {
		return nil, fmt.Errorf("$ref %q is not a local reference", ref)
	}
	var cur any = d.root
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("$ref %q does not resolve", ref)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("$ref %q does not resolve", ref)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	return cur, nil
}

func (d *openAPI) schema(name string) any {
	s, err := d.resolve("#/components/schemas/" + name)
	if err != nil {
		panic(err)
	}
	return s
}

// ---------------------------------------------------------------------------
// Routes against the document.

func TestOpenAPIRoutes(t *testing.T) {
	doc := loadOpenAPI(t)

	if v := doc.root["openapi"]; v != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", v)
	}

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

	// Global security: the access token header.
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

	// Every reference resolves, and every schema uses only checked keywords.
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
	// The topic enum is webhooks.Topics, in its order.
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

// isPage reports whether an operation is an HTML page (x-page: true).
func isPage(op *operation) bool { return op.obj["x-page"] == true }

// htmlOf reports whether a response's content is text/html.
func htmlOf(content any) bool {
	c, _ := content.(map[string]any)
	_, ok := c["text/html"]
	return ok
}

func schemaOf(content any) any {
	c, _ := content.(map[string]any)
	mt, _ := c["application/json"].(map[string]any)
	return mt["schema"]
}

func walk(v any, at string, fn func(at string, m map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		fn(at, x)
		for k, e := range x {
			walk(e, at+"/"+k, fn)
		}
	case []any:
		for i, e := range x {
			walk(e, at+"/"+strconv.Itoa(i), fn)
		}
	}
}

// ---------------------------------------------------------------------------
// The validator.

type validator struct {
	doc *openAPI
	// whole rejects the <Name>Fields alternatives of anyOf and oneOf.
	whole bool
}

var checkedKeywords = map[string]bool{
	"$ref": true, "type": true, "properties": true, "required": true, "additionalProperties": true,
	"items": true, "enum": true, "const": true, "format": true, "minimum": true, "maximum": true,
	"minLength": true, "maxLength": true, "pattern": true, "minItems": true, "maxItems": true,
	"minProperties": true, "maxProperties": true, "propertyNames": true, "oneOf": true, "anyOf": true, "allOf": true,
}

var annotations = map[string]bool{
	"description": true, "title": true, "default": true, "example": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true,
}

var checkedFormats = map[string]bool{"date-time": true, "uri": true, "uri-reference": true, "int64": true, "ipv4": true, "ipv6": true}

// checkKeywords reports keywords (and formats) the validator would ignore.
func (v *validator) checkKeywords(schema any, at string) []string {
	s, ok := schema.(map[string]any)
	if !ok {
		if _, ok := schema.(bool); ok {
			return nil
		}
		return []string{fmt.Sprintf("%s: a schema must be an object or a boolean", at)}
	}
	var errs []string
	for _, kw := range sortedKeys(s) {
		switch {
		case checkedKeywords[kw], annotations[kw], strings.HasPrefix(kw, "x-"):
		default:
			errs = append(errs, fmt.Sprintf("%s: schema keyword %q is not checked by the test's validator", at, kw))
		}
	}
	if f, ok := s["format"].(string); ok && !checkedFormats[f] {
		errs = append(errs, fmt.Sprintf("%s: format %q is not checked by the test's validator", at, f))
	}
	if p, ok := s["pattern"]; ok {
		if ps, _ := p.(string); ps == "" {
			errs = append(errs, fmt.Sprintf("%s: pattern %v is not a string", at, p))
		} else if _, err := compilePattern(ps); err != nil {
			errs = append(errs, fmt.Sprintf("%s: pattern: %v", at, err))
		}
	}
	for _, kw := range []string{"additionalProperties", "items", "propertyNames"} {
		if sub, ok := s[kw]; ok {
			errs = append(errs, v.checkKeywords(sub, at+"/"+kw)...)
		}
	}
	if props, ok := s["properties"].(map[string]any); ok {
		for _, k := range sortedKeys(props) {
			errs = append(errs, v.checkKeywords(props[k], at+"/properties/"+k)...)
		}
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		for i, sub := range asSlice(s[kw]) {
			errs = append(errs, v.checkKeywords(sub, fmt.Sprintf("%s/%s/%d", at, kw, i))...)
		}
	}
	return errs
}

// validate returns the ways x fails schema (a schema of the document, or
// one written in a test with $refs into it); at names x in messages. The
// checking is santhosh-tekuri/jsonschema's, in draft 2020-12 (the dialect
// of OpenAPI 3.1), with formats asserted and the document's patterns
// compiled by compilePattern; checkKeywords keeps the document to the
// keywords the tests rely on.
func (v *validator) validate(schema any, x any, at string) []string {
	if errs := v.checkKeywords(schema, at); len(errs) > 0 {
		return errs
	}
	sch, err := v.doc.compiled(schema, v.whole)
	if err != nil {
		return []string{fmt.Sprintf("%s: schema: %v", at, err)}
	}
	if err := sch.Validate(x); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			var out []string
			for _, line := range strings.Split(strings.TrimSpace(fmt.Sprintf("%v", ve)), "\n") {
				out = append(out, at+": "+strings.TrimSpace(line))
			}
			return out
		}
		return []string{at + ": " + err.Error()}
	}
	return nil
}

// The document is given to the compiler twice: as it is, and whole (its
// <Name>Fields alternatives of anyOf and oneOf removed, for answers to
// requests without `fields`). A schema to check against is added as its
// own resource whose local $refs point into the matching copy.
const (
	docURL      = "https://admin-api.test/openapi.json"
	wholeDocURL = "https://admin-api.test/openapi-whole.json"
)

// compiled compiles schema (once per schema and mode).
func (d *openAPI) compiled(schema any, whole bool) (*jsonschema.Schema, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.compiler == nil {
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.AssertFormat()
		c.UseRegexpEngine(func(p string) (jsonschema.Regexp, error) { return compilePattern(p) })
		if err := c.AddResource(docURL, rebase(d.root, docURL, false)); err != nil {
			return nil, err
		}
		if err := c.AddResource(wholeDocURL, rebase(d.root, wholeDocURL, true)); err != nil {
			return nil, err
		}
		d.compiler, d.schemas = c, map[string]*jsonschema.Schema{}
	}
	base := docURL
	if whole {
		base = wholeDocURL
	}
	key := base + " " + describeFull(schema)
	if sch, ok := d.schemas[key]; ok {
		return sch, nil
	}
	url := fmt.Sprintf("https://admin-api.test/schema/%d.json", len(d.schemas))
	if err := d.compiler.AddResource(url, rebase(schema, base, whole)); err != nil {
		return nil, err
	}
	sch, err := d.compiler.Compile(url)
	if err != nil {
		return nil, err
	}
	d.schemas[key] = sch
	return sch, nil
}

// rebase copies a schema value with its local $refs ("#/components/...")
// made absolute against base and, when whole, without the alternatives
// that are <Name>Fields schemas.
func rebase(v any, base string, whole bool) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			switch {
			case k == "$ref":
				if ref, ok := e.(string); ok && strings.HasPrefix(ref, "#") {
					e = base + ref
				}
				out[k] = e
			case whole && (k == "anyOf" || k == "oneOf"):
				var alts []any
				for _, alt := range asSlice(e) {
					if m, _ := alt.(map[string]any); m != nil {
						if ref, _ := m["$ref"].(string); strings.HasSuffix(ref, "Fields") {
							continue
						}
					}
					alts = append(alts, rebase(alt, base, whole))
				}
				out[k] = alts
			default:
				out[k] = rebase(e, base, whole)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = rebase(e, base, whole)
		}
		return out
	}
	return v
}

// describeFull is a schema's JSON, its identity in the cache.
func describeFull(x any) string {
	b, _ := json.Marshal(x)
	return string(b)
}

// patterns caches compiled schema patterns. The document writes them in the
// subset ECMA-262 (JSON Schema's dialect), RE2 and Python (schemathesis)
// share: unanchored unless they say ^ and $, [0-9] rather than \d (which is
// Unicode in Python), no lookaround or backreferences (RE2 has none).
var patterns sync.Map

func compilePattern(p string) (*regexp.Regexp, error) {
	if re, ok := patterns.Load(p); ok {
		return re.(*regexp.Regexp), nil
	}
	for _, bad := range []string{`\d`, `\D`, `\w`, `\W`, `\s`, `\S`, `\b`, `(?`} {
		if strings.Contains(p, bad) {
			return nil, fmt.Errorf("%q: %s means different things in ECMA-262, RE2 and Python", p, bad)
		}
	}
	re, err := regexp.Compile(p)
	if err != nil {
		return nil, err
	}
	patterns.Store(p, re)
	return re, nil
}

// typeIncludes reports whether a schema's type keyword allows name.
func typeIncludes(t any, name string) bool {
	switch tt := t.(type) {
	case string:
		return tt == name
	case []any:
		for _, e := range tt {
			if e == name {
				return true
			}
		}
	}
	return false
}

func decodeJSON(b []byte) any {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return v
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func TestOpenAPIValidator(t *testing.T) {
	doc := loadOpenAPI(t)
	v := &validator{doc: doc}
	ok := func(schema any, body string) {
		t.Helper()
		if errs := v.validate(schema, decodeJSON([]byte(body)), "$"); len(errs) > 0 {
			t.Errorf("%s: unexpected errors:\n%s", body, strings.Join(errs, "\n"))
		}
	}
	bad := func(schema any, body string) {
		t.Helper()
		if errs := v.validate(schema, decodeJSON([]byte(body)), "$"); len(errs) == 0 {
			t.Errorf("%s: accepted, want an error", body)
		}
	}
	ref := func(name string) any { return map[string]any{"$ref": "#/components/schemas/" + name} }
	tag := `"id":1,"src":"https://js.example.org/a.js","event":"onload","display_scope":"all","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`

	ok(ref("RedirectResponse"), `{"redirect":{"id":1,"path":"/a","target":"/b"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":1,"path":"/a","target":"/b","extra":1}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":1,"path":"/a"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":"1","path":"/a","target":"/b"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":1.5,"path":"/a","target":"/b"}}`)
	bad(ref("RedirectResponse"), `{"redirect":{"id":0,"path":"/a","target":"/b"}}`)
	ok(ref("RedirectFieldsResponse"), `{"redirect":{"id":1}}`)
	bad(ref("RedirectFieldsResponse"), `{"redirect":{"id":1,"other":2}}`)
	ok(ref("ScriptTagResponse"), `{"script_tag":{`+tag+`}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+tag+`,"app_id":1}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, "2024-03-11T10:00:00-04:00", "2024-03-11 10:00", 1)+`}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, `"onload"`, `"onclick"`, 1)+`}}`)
	bad(ref("ScriptTagResponse"), `{"script_tag":{`+strings.Replace(tag, `"2024-03-11T10:00:00-04:00"`, `null`, 1)+`}}`)
	page := `"id":1,"shop_id":1,"title":"About","handle":"about","body_html":"","author":"Demo App","published_at":null,"template_suffix":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("PageResponse"), `{"page":{`+page+`}}`)
	ok(ref("PageResponse"), `{"page":{`+strings.Replace(page, `"published_at":null`, `"published_at":"2024-03-11T10:00:00-04:00"`, 1)+`}}`)
	bad(ref("PageResponse"), `{"page":{`+page+`,"published":true}}`)
	bad(ref("PageResponse"), `{"page":{`+strings.Replace(page, `"template_suffix":null,`, ``, 1)+`}}`)
	bad(ref("PageResponse"), `{"page":{`+strings.Replace(page, `"title":"About"`, `"title":""`, 1)+`}}`)
	ok(ref("PageFieldsResponse"), `{"page":{"id":1,"handle":"about"}}`)
	bad(ref("PageFieldsResponse"), `{"page":{"id":1,"metafields":[]}}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":25,"value_type":"integer"}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"a","value_type":"string","description":null}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":2.5,"value_type":"integer"}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"a","value_type":"float"}`)
	article := `"id":1,"blog_id":1,"title":"Hi","handle":"hi","author":"Demo App","user_id":null,"body_html":"","summary_html":null,"tags":"","published_at":null,"template_suffix":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	img := `"image":{"src":"https://demo-shop.example.com/files/7/image.png","width":2,"height":3,"created_at":"2024-03-11T10:00:00-04:00"}`
	ok(ref("ArticleResponse"), `{"article":{`+article+`}}`)
	ok(ref("ArticleResponse"), `{"article":{`+article+`,`+img+`}}`)
	ok(ref("ArticleResponse"), `{"article":{`+strings.Replace(article, `"tags":""`, `"tags":"News, Tag"`, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,"image":null}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,`+strings.Replace(img, `"width":2,`, ``, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,`+strings.Replace(img, `"width":2`, `"width":0`, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+article+`,"published":true}}`)
	bad(ref("ArticleResponse"), `{"article":{`+strings.Replace(article, `"summary_html":null,`, ``, 1)+`}}`)
	bad(ref("ArticleResponse"), `{"article":{`+strings.Replace(article, `"blog_id":1`, `"blog_id":null`, 1)+`}}`)
	ok(ref("ArticleFieldsResponse"), `{"article":{"id":1,`+img+`}}`)
	bad(ref("ArticleFieldsResponse"), `{"article":{"id":1,"metafields":[]}}`)
	ok(ref("ArticleTags"), `{"tags":["News","Tag"]}`)
	bad(ref("ArticleTags"), `{"tags":[""]}`)
	ok(ref("ArticleAuthors"), `{"authors":[]}`)
	bad(ref("ArticleAuthors"), `{"authors":"Demo App"}`)
	comment := `"id":1,"article_id":1,"blog_id":1,"author":"Ann","email":"ann@example.com","body":"Hi","body_html":"<p>Hi</p>","ip":"192.0.2.1","user_agent":null,"status":"pending","published_at":"2024-03-11T10:00:00-04:00","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("Comment"), `{`+comment+`}`)
	ok(ref("CommentResponse"), `{"comment":{`+strings.Replace(comment, `"user_agent":null`, `"user_agent":"curl/8.5.0"`, 1)+`}}`)
	bad(ref("Comment"), `{"comment":{`+comment+`}}`)
	bad(ref("Comment"), `{`+strings.Replace(comment, `"pending"`, `"approved"`, 1)+`}`)
	bad(ref("CommentResponse"), `{"comment":{`+strings.Replace(comment, `"user_agent":null,`, ``, 1)+`}}`)
	ok(ref("CommentFieldsResponse"), `{"comment":{"id":1,"status":"spam"}}`)
	bad(ref("CommentFieldsResponse"), `{"comment":{"id":1,"spam":true}}`)
	hook := `"id":1,"address":"https://whatever.example.com/hooks","topic":"orders/create","format":"json","fields":[],"metafield_namespaces":[],"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("WebhookResponse"), `{"webhook":{`+hook+`}}`)
	ok(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"fields":[]`, `"fields":["id","note"]`, 1)+`}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+hook+`,"app_id":1001}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"orders/create"`, `"orders/exploded"`, 1)+`}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"json"`, `"yaml"`, 1)+`}}`)
	bad(ref("WebhookResponse"), `{"webhook":{`+strings.Replace(hook, `"fields":[]`, `"fields":null`, 1)+`}}`)
	ok(ref("WebhookFieldsResponse"), `{"webhook":{"id":1,"topic":"app/uninstalled"}}`)
	attempt := `"id":1,"delivery_id":"b028050c9779db2fbf2cb22e14f10629","topic":"orders/create","attempt":1,"response_status":null,"duration_ms":5000,"error":"timeout","dead_lettered":false,"created_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("DeliveryList"), `{"deliveries":[{`+attempt+`}]}`)
	ok(ref("DeliveryList"), `{"deliveries":[{`+strings.NewReplacer(`"response_status":null`, `"response_status":200`, `"error":"timeout"`, `"error":null`).Replace(attempt)+`}]}`)
	bad(ref("DeliveryList"), `{"deliveries":[{`+strings.Replace(attempt, `"attempt":1`, `"attempt":0`, 1)+`}]}`)
	bad(ref("DeliveryAttempt"), `{`+strings.Replace(attempt, `"dead_lettered":false,`, ``, 1)+`}`)
	custom := `"id":1,"title":"IPods","handle":"ipods","body_html":null,"published_at":null,"published_scope":"global","sort_order":"manual","template_suffix":null,"updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("CustomCollectionList"), `{"custom_collections":[{`+custom+`}]}`)
	ok(ref("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"products_count":2,`+img+`}}`)
	bad(ref("CustomCollectionResponse"), `{"custom_collection":{`+strings.Replace(custom, `"manual"`, `"random"`, 1)+`}}`)
	bad(ref("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"products_count":-1}}`)
	bad(ref("CustomCollectionResponse"), `{"custom_collection":{`+custom+`,"collects":[]}}`)
	smartRule := `{"column":"variant_price","relation":"greater_than","condition":"150"}`
	ok(ref("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"products_count":0,"disjunctive":false,"rules":[`+smartRule+`]}}`)
	bad(ref("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"disjunctive":false,"rules":[]}}`)
	bad(ref("SmartCollectionResponse"), `{"smart_collection":{`+custom+`,"products_count":0,"disjunctive":false,"rules":[`+strings.Replace(smartRule, `"150"`, `150`, 1)+`]}}`)
	ok(ref("SmartCollectionRuleInput"), strings.Replace(smartRule, `"150"`, `150`, 1))
	bad(ref("SmartCollectionRuleInput"), strings.Replace(smartRule, `"variant_price"`, `"colour"`, 1))
	collect := `"id":1,"collection_id":2,"product_id":3,"featured":false,"position":1,"sort_value":"0000000001","created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("CollectResponse"), `{"collect":{`+collect+`}}`)
	bad(ref("CollectResponse"), `{"collect":{`+strings.Replace(collect, `"0000000001"`, `"1"`, 1)+`}}`)
	variant := `"id":1,"product_id":2,"title":"Pink","option1":"Pink","option2":null,"option3":null,"sku":"","barcode":null,"price":"199.00","compare_at_price":null,"position":1,"grams":200,"weight":0.2,"weight_unit":"kg","taxable":true,"requires_shipping":true,"fulfillment_service":"manual","inventory_management":null,"inventory_policy":"deny","inventory_quantity":-3,"old_inventory_quantity":-3,"image_id":null,"created_at":"2024-03-11T10:00:00-04:00","updated_at":"2024-03-11T10:00:00-04:00"`
	ok(ref("VariantResponse"), `{"variant":{`+variant+`}}`)
	ok(ref("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"compare_at_price":null`, `"compare_at_price":"250.00"`, 1)+`}}`)
	bad(ref("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"price":"199.00"`, `"price":199`, 1)+`}}`)
	bad(ref("VariantResponse"), `{"variant":{`+strings.Replace(variant, `"image_id":null,`, ``, 1)+`}}`)
	ok(ref("VariantFieldsResponse"), `{"variant":{"id":1,"inventory_quantity":5}}`)
	ok(ref("VariantCreate"), `{"price":1.5,"compare_at_price":null}`)
	ok(ref("VariantCreate"), `{"price":"1.50","compare_at_price":"2"}`)
	bad(ref("VariantCreate"), `{"price":true}`)
	service := `"id":1,"name":"Mars","handle":"mars","service_name":"Mars","callback_url":null,"format":"json","inventory_management":false,"tracking_support":false,"requires_shipping_method":true,"provider_id":null,"credential1":null,"credential2_exists":false,"email":null,"include_pending_stock":false`
	ok(ref("FulfillmentServiceList"), `{"fulfillment_services":[{`+service+`}]}`)
	bad(ref("FulfillmentServiceResponse"), `{"fulfillment_service":{`+service+`,"credential2":"pw"}}`)
	bad(ref("FulfillmentServiceResponse"), `{"fulfillment_service":{`+strings.Replace(service, `"callback_url":null`, `"callback_url":"not a uri"`, 1)+`}}`)
	ok(ref("Count"), `{"count":0}`)
	bad(ref("Count"), `{"count":-1}`)
	ok(ref("Empty"), `{}`)
	bad(ref("Empty"), `{"a":1}`)
	ok(ref("BadRequestError"), `{"errors":"malformed JSON"}`)
	ok(ref("BadRequestError"), `{"errors":{"redirect":"Required parameter missing or invalid"}}`)
	ok(ref("BadRequestError"), `{"errors":{"limit":["must be an integer between 1 and 250"]}}`)
	bad(ref("BadRequestError"), `{"errors":{}}`)
	ok(ref("NotFoundError"), `{"errors":"Not Found"}`)
	bad(ref("NotFoundError"), `{"errors":"Gone"}`)
	// Request schemas allow only what the service accepts.
	ok(ref("PageCreate"), `{"title":" About us "}`)
	bad(ref("PageCreate"), `{"title":""}`)
	bad(ref("PageCreate"), `{"title":" \t\u00a0\u3000"}`)
	bad(ref("PageCreate"), `{"title":"`+strings.Repeat("é", 256)+`"}`)
	ok(ref("PageCreate"), `{"title":"`+strings.Repeat("é", 255)+`","handle":"about-us_2"}`)
	bad(ref("PageCreate"), `{"title":"a","handle":"About"}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":2.0,"value_type":"integer"}`)
	ok(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"-25","value_type":"integer"}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":"25 units","value_type":"integer"}`)
	bad(ref("MetafieldInput"), `{"namespace":"inventory","key":"warehouse","value":" ","value_type":"string"}`)
	bad(ref("MetafieldInput"), `{"namespace":" ab ","key":"warehouse","value":"a","value_type":"string"}`)
	ok(ref("MetafieldUpdate"), `{"value":"a"}`)
	bad(ref("MetafieldUpdate"), `{"value":""}`)
	bad(ref("MetafieldUpdate"), `{"value":" "}`)
	// Dates the service refuses: years 0000 and 0001 (any offset must stay
	// in 0001-9999), days a month does not have.
	ok(ref("ArticleCreate"), `{"title":"a","published_at":"2024-02-29"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"2023-02-29"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"3758-02-31"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"2024-04-31T10:00:00Z"}`)
	dateFilter := map[string]any{"$ref": "#/components/parameters/UpdatedAtMin/schema"}
	ok(dateFilter, `"2000-02-29"`)
	bad(dateFilter, `"0000-01-01"`)
	bad(dateFilter, `"1900-02-29"`)
	bad(dateFilter, `"3758-02-31"`)
	ok(ref("ArticleCreate"), `{"title":"a","published_at":"Thu Mar 24 15:45:47 UTC 2011"}`)
	ok(ref("ArticleCreate"), `{"title":"a","published_at":"2024-03-11 10:00"}`)
	ok(ref("ArticleCreate"), `{"title":"a","published_at":null,"tags":"a, b,c"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"0000-01-01T00:00:00+01:00"}`)
	bad(ref("ArticleCreate"), `{"title":"a","published_at":"yesterday"}`)
	bad(ref("ArticleCreate"), `{"title":"a","tags":"`+strings.Repeat("t,", 40)+`t"}`)
	bad(ref("ArticleCreate"), `{"title":"a","tags":"`+strings.Repeat("t", 256)+`"}`)
	ok(ref("ArticleCreate"), `{"title":"a","image":{"attachment":"R0lGODlhAQABAAAAACw="}}`)
	bad(ref("ArticleCreate"), `{"title":"a","image":{"attachment":"R0lGODlhAQABAAAAACw"}}`)
	bad(ref("ArticleCreate"), `{"title":"a","image":{}}`)
	ok(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","ip":"2001:db8::1","blog_id":1,"article_id":2}`)
	bad(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","ip":"01.2.3.4","blog_id":1,"article_id":2}`)
	bad(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@localhost","blog_id":1,"article_id":2}`)
	bad(ref("CommentCreate"), `{"body":"Hi","author":"Ann","email":"ann@example.com","blog_id":1,"article_id":9007199254740992}`)
	ok(ref("CommentUpdate"), `{"published_at":"2024-03-11"}`)
	bad(ref("CommentUpdate"), `{"published_at":null}`)
	ok(ref("RedirectCreate"), `{"path":"/ipod?x=1","target":"https://example.com/a?b#c"}`)
	bad(ref("RedirectCreate"), `{"path":"/ipod","target":"//example.com/a"}`)
	bad(ref("RedirectCreate"), `{"path":"/ipod","target":"/a b"}`)
	bad(ref("RedirectCreate"), `{"path":" ","target":"/a"}`)
	bad(ref("ScriptTagCreate"), `{"event":"onload","src":"http://js.example.org/a.js"}`)
	ok(ref("WebhookCreate"), `{"topic":"orders/create","address":"http://hooks.example.com:8080/a","fields":["id"]}`)
	bad(ref("WebhookCreate"), `{"topic":"orders/create","address":"ftp://hooks.example.com/a"}`)
	bad(ref("WebhookCreate"), `{"topic":"orders/create","address":"https://hooks.example.com/a","fields":[" "]}`)
	ok(ref("SmartCollectionRuleInput"), `{"column":"variant_inventory","relation":"less_than","condition":2.0}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"title","relation":"greater_than","condition":"a"}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"variant_price","relation":"contains","condition":"9"}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"variant_price","relation":"equals","condition":"cheap"}`)
	bad(ref("SmartCollectionRuleInput"), `{"column":"tag","relation":"equals","condition":" "}`)
	bad(ref("VariantCreate"), `{"price":-1}`)
	bad(ref("VariantCreate"), `{"image_id":0}`)
	bad(ref("VariantCreate"), `{"image_id":9223372036854775806}`)
	bad(ref("VariantCreate"), `{"fulfillment_service":" "}`)
	ok(ref("FulfillmentServiceCreate"), `{"name":"Mars","inventory_management":true,"callback_url":"https://mars.example.com/fs"}`)
	ok(ref("FulfillmentServiceCreate"), `{"name":"Mars","callback_url":""}`)
	bad(ref("FulfillmentServiceCreate"), `{"name":"Mars","tracking_support":true}`)
	bad(ref("FulfillmentServiceCreate"), `{"name":"Mars","tracking_support":true,"callback_url":null}`)
	bad(ref("FulfillmentServiceCreate"), `{"name":"Mars","callback_url":"https://mars.example.com/fs?x=1"}`)
	// Type arrays, as nullable properties are written.
	nullable := map[string]any{"type": []any{"string", "null"}, "format": "date-time"}
	ok(nullable, `null`)
	ok(nullable, `"2024-03-11T10:00:00Z"`)
	bad(nullable, `3`)
	// Whole resources only, when no fields parameter was sent.
	whole := &validator{doc: doc, whole: true}
	if errs := whole.validate(ref("RedirectFieldsResponse"), decodeJSON([]byte(`{"redirect":{"id":1}}`)), "$"); len(errs) == 0 {
		t.Error("a restricted redirect passed as a whole one")
	}
	// Unsupported keywords are reported rather than ignored.
	bad(map[string]any{"nullable": true}, `1`)
	// Patterns are unanchored unless they say so, and must mean the same in
	// ECMA-262, RE2 and Python.
	ok(map[string]any{"pattern": "b"}, `"abc"`)
	bad(map[string]any{"pattern": "^b"}, `"abc"`)
	if errs := v.checkKeywords(map[string]any{"pattern": `^\d+$`}, "#"); len(errs) == 0 {
		t.Error(`pattern \d passed the keyword check`)
	}
}

// ---------------------------------------------------------------------------
// The scenario.

// noScopeToken is an app installed without any scope, for 403 on reads.
const noScopeToken = "no-scope-token-0123456789abcdef"

const (
	demoToken = apitest.DemoToken
	roToken   = apitest.ReadOnlyToken
	noToken   = ""
	badToken  = "unknown-token-0123456789abcdef"
)

type M = map[string]any

type scenario struct {
	t    *testing.T
	env  *apitest.Env
	doc  *openAPI
	seen map[*operation]map[string]bool
}

func TestOpenAPIScenario(t *testing.T) {
	doc := loadOpenAPI(t)
	env := apitest.New(t, apitest.OpenEmbedded(t), api.Groups...)
	noScopeApp := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"apps": [{"id": 1003, "name": "No Scope App", "access_token": "` + noScopeToken + `", "shared_secret": "no-scope-secret", "scopes": []}]}`
	if _, _, err := seed.Load(context.Background(), env.Deps.Store, []byte(noScopeApp)); err != nil {
		t.Fatal(err)
	}
	s := &scenario{t: t, env: env, doc: doc, seen: map[*operation]map[string]bool{}}

	t.Run("redirects", s.redirects)
	t.Run("script_tags", s.scriptTags)
	t.Run("events", s.events) // before pages: it counts the events it records
	t.Run("pages", s.pages)
	t.Run("blogs", s.blogs) // after pages: it counts Article and Comment events only
	t.Run("webhooks", s.webhooks)
	t.Run("collections", s.collections) // custom and smart collections, collects
	t.Run("variants", s.variants)       // after collections: its smart collection follows the prices
	t.Run("fulfillment_services", s.fulfillmentServices)
	t.Run("billing", s.billing)
	t.Run("transactions", s.transactions)
	t.Run("themes", s.themes)
	t.Run("countries", s.countries)
	t.Run("metafields", s.metafields)
	t.Run("addresses", s.addresses)
	t.Run("saved_searches", s.savedSearches) // after addresses: bob's default has moved
	t.Run("oauth", s.oauth)
	s.t = t

	// Paths the router does not serve are 404 with the documented body.
	for _, p := range []string{"/web/redirects", "/web/nothing.json", "/web/redirects/1/extra.json"} {
		res := env.Do("GET", p, nil)
		if res.Status != http.StatusNotFound {
			t.Errorf("GET %s: status %d, want 404", p, res.Status)
		}
		s.checkBody("GET "+p, doc.schema("NotFoundError"), res, false)
	}

	// A parameter given empty is 400 naming it on every operation, before
	// any work (so any id will do).
	for _, op := range doc.ops {
		if isPage(op) {
			continue
		}
		target := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(op.path, "1")
		res := s.do(demoToken, op.method, target+"?fields=", nil, http.StatusBadRequest)
		if errs, _ := res.JSON(t)["errors"].(map[string]any); errs["fields"] == nil {
			t.Errorf("%s %s?fields=: 400 does not name fields: %s", op.method, target, res.Body)
		}
	}

	// With the demo app's bucket full, every operation is 429 with the
	// documented body and headers, before any work.
	s.t = t
	full := api.Deps{Deps: env.Deps}
	frozen := time.Now()
	full.Limiter = &ratelimit.Memory{Now: func() time.Time { return frozen }}
	handler := env.Handler
	env.Handler = api.Handler(&full, api.Groups...)
	for range admin.DefaultRatePlan.Bucket {
		env.Do("GET", "/web/redirects/count.json", nil)
	}
	for _, op := range doc.ops {
		if isPage(op) {
			continue // a page spends no call
		}
		target := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(op.path, "1")
		res := s.do(demoToken, op.method, target, nil, http.StatusTooManyRequests)
		if res.Header.Get("Retry-After") == "" || res.Header.Get("X-Service-Shop-Api-Call-Limit") != "40/40" {
			t.Errorf("%s %s: 429 headers %v", op.method, target, res.Header)
		}
	}
	env.Handler = handler

	// With every store and queue call failing, every operation is 503 with
	// Retry-After and the documented body, never 500.
	faulty := *env.Deps
	in := faults.New(1)
	api.InjectFaults(&faulty, in)
	env.Handler = api.Handler(&api.Deps{Deps: &faulty}, api.Groups...)
	in.Start()
	for _, op := range doc.ops {
		target := regexp.MustCompile(`\{[a-z_]+\}`).ReplaceAllString(op.path, "1")
		var body any
		if isPage(op) && op.method == http.MethodPost {
			body = "authenticity_token=x"
		}
		if res := s.do(demoToken, op.method, target, body, http.StatusServiceUnavailable); res.Header.Get("Retry-After") != "1" {
			t.Errorf("%s %s: 503 headers %v", op.method, target, res.Header)
		}
	}
	env.Handler = handler

	// Every operation had a success and every documented error but 500.
	for _, op := range doc.ops {
		responses, _ := op.obj["responses"].(map[string]any)
		for _, status := range sortedKeys(responses) {
			if status == "500" || status == "default" {
				continue
			}
			if !s.seen[op][status] {
				t.Errorf("%s %s (%s): documented status %s was never exercised", op.method, op.path, op.id, status)
			}
		}
	}
}

// do sends a request, requires status want and checks the exchange against
// the document. body is nil, a string sent as is, or a value sent as JSON.
func (s *scenario) do(token, method, target string, body any, want int) *apitest.Response {
	s.t.Helper()
	res := s.env.DoAs(token, method, target, body)
	where := method + " " + target
	if res.Status != want {
		s.t.Errorf("%s: status %d, want %d: %s", where, res.Status, want, res.Body)
	}
	u, err := url.Parse(target)
	if err != nil {
		s.t.Fatal(err)
	}
	op, pathVals := s.doc.find(method, u.Path)
	if op == nil {
		s.t.Errorf("%s: no operation in docs/openapi.yaml", where)
		return res
	}
	if s.seen[op] == nil {
		s.seen[op] = map[string]bool{}
	}
	status := strconv.Itoa(res.Status)
	s.seen[op][status] = true
	success := res.Status >= 200 && res.Status < 300

	// A request the service accepts must be one the document allows.
	if success {
		s.checkRequest(where, op, pathVals, u.Query(), body)
	}

	responses, _ := op.obj["responses"].(map[string]any)
	r, ok := responses[status]
	if !ok {
		r, ok = responses["default"]
	}
	if !ok {
		s.t.Errorf("%s: status %d is not documented for %s (%s): %s", where, res.Status, op.path, op.id, res.Body)
		return res
	}
	resp := s.doc.deref(r)
	s.checkBody(where, schemaOf(resp["content"]), res, success && !u.Query().Has("fields"))
	return res
}

func (s *scenario) checkBody(where string, schema any, res *apitest.Response, whole bool) {
	s.t.Helper()
	ct := res.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err != nil || mt != "application/json" {
		s.t.Errorf("%s: Content-Type %q, want application/json", where, ct)
	}
	x := decodeJSON(res.Body)
	if err, ok := x.(error); ok {
		s.t.Errorf("%s: body is not JSON (%v): %s", where, err, res.Body)
		return
	}
	if schema == nil {
		s.t.Errorf("%s: status %d has no documented schema", where, res.Status)
		return
	}
	v := &validator{doc: s.doc, whole: whole}
	if errs := v.validate(schema, x, "$"); len(errs) > 0 {
		s.t.Errorf("%s: status %d body does not match the document:\n  %s\nbody: %s", where, res.Status, strings.Join(errs, "\n  "), res.Body)
	}
}

func (s *scenario) checkRequest(where string, op *operation, pathVals map[string]string, query url.Values, body any) {
	s.t.Helper()
	v := &validator{doc: s.doc}
	param := func(in, name string) map[string]any {
		for _, p := range op.params {
			if p["in"] == in && p["name"] == name {
				return p
			}
		}
		return nil
	}
	check := func(in, name, value string) {
		p := param(in, name)
		if p == nil {
			s.t.Errorf("%s: %s parameter %q is not documented", where, in, name)
			return
		}
		var x any = value
		if t := fmt.Sprint(p["schema"].(map[string]any)["type"]); (t == "integer" || t == "number") && json.Valid([]byte(value)) {
			x = json.Number(value)
		}
		if errs := v.validate(p["schema"], x, in+" "+name); len(errs) > 0 {
			s.t.Errorf("%s: accepted a value the document forbids: %s", where, strings.Join(errs, "; "))
		}
	}
	for name, val := range pathVals {
		check("path", name, val)
	}
	for _, name := range sortedKeys(query) {
		for _, val := range query[name] {
			check("query", name, val)
		}
	}
	rb := s.doc.deref(op.obj["requestBody"])
	switch {
	case rb == nil && body != nil:
		s.t.Errorf("%s: sent a body, the document has none", where)
	case rb != nil && body == nil:
		if rb["required"] == true {
			s.t.Errorf("%s: succeeded without the required body", where)
		}
	case rb != nil:
		var b []byte
		if str, ok := body.(string); ok {
			b = []byte(str)
		} else {
			b, _ = json.Marshal(body)
		}
		if errs := v.validate(schemaOf(rb["content"]), decodeJSON(b), "request"); len(errs) > 0 {
			s.t.Errorf("%s: accepted a body the document forbids:\n  %s", where, strings.Join(errs, "\n  "))
		}
	}
}

// id returns the id of the resource under wrapper of a response.
func (s *scenario) id(res *apitest.Response, wrapper string) int64 {
	s.t.Helper()
	f, _ := res.Object(s.t, wrapper)["id"].(float64)
	if f <= 0 {
		s.t.Fatalf("no id in %s", res.Body)
	}
	return int64(f)
}

func (s *scenario) wantFields(res *apitest.Response, fields ...string) {
	s.t.Helper()
	if res.Status != http.StatusUnprocessableEntity {
		return
	}
	errs, _ := res.JSON(s.t)["errors"].(map[string]any)
	for _, f := range fields {
		if _, ok := errs[f]; !ok {
			s.t.Errorf("422 does not name %q: %s", f, res.Body)
		}
	}
}

func (s *scenario) wantLen(res *apitest.Response, key string, n int) {
	s.t.Helper()
	if res.Status == http.StatusOK {
		if got := len(res.List(s.t, key)); got != n {
			s.t.Errorf("%d %s, want %d: %s", got, key, n, res.Body)
		}
	}
}

func (s *scenario) wantCount(res *apitest.Response, n int) {
	s.t.Helper()
	if res.Status == http.StatusOK {
		if got, _ := res.JSON(s.t)["count"].(float64); int(got) != n {
			s.t.Errorf("count %v, want %d", got, n)
		}
	}
}

// tooLarge is a body over the default 1 MiB limit.
var tooLarge = `{"x":"` + strings.Repeat("a", httpapi.DefaultMaxBody) + `"}`

func (s *scenario) redirects(t *testing.T) {
	s.t = t
	const list, count = "/web/redirects.json", "/web/redirects/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/redirects/%d.json", id) }
	valid := M{"redirect": M{"path": "/other", "target": "/pages/other"}}

	// create
	id1 := s.id(s.do(demoToken, "POST", list, M{"redirect": M{"path": "/ipod", "target": "/pages/itunes"}}, 201), "redirect")
	r2 := s.do(demoToken, "POST", list, M{"redirect": M{"path": "http://www.example.com/forums?x=1", "target": "http://forums.example.org/"}}, 201)
	id2 := s.id(r2, "redirect")
	if p := r2.Object(t, "redirect")["path"]; p != "/forums?x=1" {
		t.Errorf("full URL path stored as %v, want /forums?x=1", p)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{}}, 422), "path", "target")
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{"path": "/ipod", "target": "/x"}}, 422), "path")
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{"path": "/a", "target": "not a uri"}}, 422), "target")
	s.wantFields(s.do(demoToken, "POST", list, M{"redirect": M{"path": 5, "target": "/x"}}, 422), "path")
	s.do(demoToken, "POST", list, M{"redirects": M{"path": "/a", "target": "/b"}}, 400)
	s.do(demoToken, "POST", list, M{"redirect": "/a"}, 400)
	s.do(demoToken, "POST", list, `{"redirect": {`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list
	low, high := min(id1, id2), max(id1, id2)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "redirects", 2)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "redirects", 2)
	if res := s.do(demoToken, "GET", list+"?limit=1&page=2", nil, 200); res.Status == 200 {
		if items := res.List(t, "redirects"); len(items) != 1 || int64(items[0].(map[string]any)["id"].(float64)) != high {
			t.Errorf("page 2 of 1: %s, want id %d", res.Body, high)
		}
	}
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?path=/ipod", nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?path="+url.QueryEscape("https://demo-shop.example.com/ipod"), nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?target=/pages/itunes", nil, 200), "redirects", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?target=/nowhere", nil, 200), "redirects", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,path&limit=250", nil, 200), "redirects", 2)
	for _, q := range []string{"limit=0", "limit=251", "limit=ten", "page=0", "since_id=-1", "since_id=x"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?path=/ipod", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?path=/ipod&target=/elsewhere", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?target=/pages/itunes", nil, 200), 1)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(roToken, "GET", one(id1), nil, 200)
	s.do(demoToken, "GET", one(id1)+"?fields=target", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/redirects/abc.json", nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id1), M{"redirect": M{"id": id1, "path": "/ipod2"}}, 200); res.Status == 200 {
		if rd := res.Object(t, "redirect"); rd["path"] != "/ipod2" || rd["target"] != "/pages/itunes" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", one(id1), M{"redirect": M{"target": "https://apple.example.com/ipod"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"redirect": M{"target": "javascript:alert(1)"}}, 422), "target")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"redirect": M{"path": "/forums?x=1"}}, 422), "path")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"redirect": M{"path": ""}}, 422), "path")
	s.do(demoToken, "PUT", one(999999999), M{"redirect": M{"path": "/x"}}, 404)
	s.do(demoToken, "PUT", one(id1), M{"path": "/x"}, 400)
	s.do(demoToken, "PUT", one(id1), "not json", 400)
	s.do(demoToken, "PUT", one(id1), tooLarge, 413)
	s.do(noToken, "PUT", one(id1), M{"redirect": M{"path": "/x"}}, 401)
	s.do(roToken, "PUT", one(id1), M{"redirect": M{"path": "/x"}}, 403)

	// delete
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.do(demoToken, "GET", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 1)
	// The path of a deleted redirect is free again.
	s.do(demoToken, "POST", list, M{"redirect": M{"path": "/ipod2", "target": "/pages/itunes"}}, 201)
}

func (s *scenario) scriptTags(t *testing.T) {
	s.t = t
	const list, count = "/web/script_tags.json", "/web/script_tags/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/script_tags/%d.json", id) }
	const src1, src2 = "https://js.example.org/foo.js", "https://js.example.org/bar.js"
	valid := M{"script_tag": M{"event": "onload", "src": src1}}

	// create
	r1 := s.do(demoToken, "POST", list, valid, 201)
	id1 := s.id(r1, "script_tag")
	if d := r1.Object(t, "script_tag")["display_scope"]; d != "all" {
		t.Errorf("display_scope defaults to %v, want all", d)
	}
	id2 := s.id(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": src2, "display_scope": "order_status"}}, 201), "script_tag")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{}}, 422), "src", "event")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": "http://js.example.org/foo.js"}}, 422), "src")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onclick", "src": src1}}, 422), "event")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": src1, "display_scope": "nowhere"}}, 422), "display_scope")
	s.wantFields(s.do(demoToken, "POST", list, M{"script_tag": M{"event": "onload", "src": []any{src1}}}, 422), "src")
	s.do(demoToken, "POST", list, M{"script_tags": []any{}}, 400)
	s.do(demoToken, "POST", list, `[1, 2`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list: an app sees only its own tags
	low := min(id1, id2)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "script_tags", 2)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "script_tags", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=1&page=2", nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?src="+url.QueryEscape(src2), nil, 200), "script_tags", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "script_tags", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "script_tags", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "script_tags", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,src,created_at", nil, 200), "script_tags", 2)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "page=-3", "since_id=-1", "created_at_min=yesterday", "updated_at_max=2024-13-45"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?src="+url.QueryEscape(src1), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.do(demoToken, "GET", count+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(demoToken, "GET", one(id1)+"?fields=src,display_scope", nil, 200)
	s.do(roToken, "GET", one(id1), nil, 404) // another app's tag
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/script_tags/0.json", nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"id": id1, "src": "https://js.example.org/new.js"}}, 200); res.Status == 200 {
		if st := res.Object(t, "script_tag"); st["src"] != "https://js.example.org/new.js" || st["display_scope"] != "all" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"display_scope": "online_store"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"src": "ftp://js.example.org/a.js"}}, 422), "src")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"script_tag": M{"event": ""}}, 422), "event")
	s.do(demoToken, "PUT", one(999999999), M{"script_tag": M{"src": src1}}, 404)
	s.do(demoToken, "PUT", one(id1), M{"script_tag": nil}, 400)
	s.do(demoToken, "PUT", one(id1), tooLarge, 413)
	s.do(noToken, "PUT", one(id1), M{"script_tag": M{"src": src1}}, 401)
	s.do(roToken, "PUT", one(id1), M{"script_tag": M{"src": src1}}, 403)

	// delete
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(noScopeToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 1)
}

func (s *scenario) events(t *testing.T) {
	s.t = t
	const list, count = "/com/events.json", "/com/events/count.json"
	one := func(id int64) string { return fmt.Sprintf("/com/events/%d.json", id) }
	const productEvents, orderEvents = "/com/products/632910392/events.json", "/com/orders/450789469/events.json"

	// No resource writes events yet: record them as a change would.
	d := s.env.Deps
	var backdated int64
	record := func(subject eventlog.Subject, verb string, at time.Time) int64 {
		ev := eventlog.New(d.IDs, subject, verb, "", "Demo App")
		if !at.IsZero() { // an event's created_at is its id's second: back-date both
			backdated++
			ev.ID, ev.CreatedAt = ids.At(at)+backdated, admin.Time{Time: at.UTC()}
		}
		if err := d.Store.Transact(context.Background(), eventlog.Ops(ev)...); err != nil {
			t.Fatal(err)
		}
		return ev.ID
	}
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	day := time.Date(2024, 3, 11, 10, 0, 0, 0, ny)
	page := eventlog.Subject{Type: eventlog.Page, ID: 131092082, Path: "/pages/about-us", Label: "About us"}
	product := eventlog.Subject{Type: eventlog.Product, ID: 632910392, Path: "/products/ipod-nano", Label: "IPod Nano - 8GB"}
	order := eventlog.Subject{Type: eventlog.Order, ID: 450789469, Path: "/admin/orders/450789469", Label: "#1001"}
	first := record(page, eventlog.Create, day)
	record(page, eventlog.Published, day.Add(time.Hour))
	record(product, eventlog.Create, day.Add(2*time.Hour))
	record(order, "placed", day.Add(3*time.Hour))
	record(product, eventlog.Update, time.Time{})
	window := "created_at_min=" + url.QueryEscape("2024-03-11 10:00") + "&created_at_max=" + url.QueryEscape("2024-03-11 12:00")

	// list: no scope needed
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "events", 5)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "events", 5)
	s.wantLen(s.do(noScopeToken, "GET", list, nil, 200), "events", 5)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(first, 10), nil, 200), "events", 4)
	s.wantLen(s.do(demoToken, "GET", list+"?filter=Page", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?filter=Product,Order", nil, 200), "events", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?filter=Product&verb=update", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?verb=create", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?"+window, nil, 200), "events", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,verb,created_at", nil, 200), "events", 5)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "filter=Widget", "filter=Page,product", "created_at_min=yesterday"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(badToken, "GET", list, nil, 401)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 5)
	s.wantCount(s.do(noScopeToken, "GET", count, nil, 200), 5)
	s.wantCount(s.do(demoToken, "GET", count+"?"+window, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.do(demoToken, "GET", count+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", count, nil, 401)

	// get
	s.do(demoToken, "GET", one(first), nil, 200)
	s.do(noScopeToken, "GET", one(first), nil, 200)
	s.do(demoToken, "GET", one(first)+"?fields=verb,message", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/com/events/abc.json", nil, 404)
	s.do(noToken, "GET", one(first), nil, 401)

	// one product's and one order's events
	s.wantLen(s.do(demoToken, "GET", productEvents, nil, 200), "events", 2)
	s.wantLen(s.do(noScopeToken, "GET", productEvents+"?limit=1&page=2", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", productEvents+"?fields=id,verb", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", orderEvents, nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", orderEvents+"?limit=1&since_id=1", nil, 200), "events", 1)
	s.do(demoToken, "GET", "/com/products/632910397/events.json", nil, 404)
	s.do(demoToken, "GET", "/com/orders/1/events.json", nil, 404)
	s.do(demoToken, "GET", productEvents+"?limit=0", nil, 400)
	s.do(demoToken, "GET", orderEvents+"?page=x", nil, 400)
	s.do(noToken, "GET", productEvents, nil, 401)
	s.do(noToken, "GET", orderEvents, nil, 401)
}

func (s *scenario) pages(t *testing.T) {
	s.t = t
	const list, count = "/web/pages.json", "/web/pages/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/pages/%d.json", id) }
	valid := M{"page": M{"title": "Shipping"}}
	metafield := M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}

	// create
	r1 := s.do(demoToken, "POST", list, M{"page": M{"title": "About us", "body_html": "<p>Since 2010.</p>",
		"template_suffix": "contact", "metafields": []any{metafield, M{"namespace": "seo", "key": "hidden", "value": "no", "value_type": "string", "description": nil}}}}, 201)
	id1 := s.id(r1, "page")
	if p := r1.Object(t, "page"); p["handle"] != "about-us" || p["published_at"] == nil || p["template_suffix"] != "contact" || p["author"] != "Demo App" {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, M{"page": M{"title": "About us", "published": false, "author": "Ann", "template_suffix": nil}}, 201)
	id2 := s.id(r2, "page")
	if p := r2.Object(t, "page"); p["handle"] != "about-us-1" || p["published_at"] != nil || p["author"] != "Ann" {
		t.Errorf("create hidden: %s", r2.Body)
	}
	id3 := s.id(s.do(demoToken, "POST", list, M{"page": M{"title": "Contact", "handle": "contact_us"}}, 201), "page")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "handle": "contact_us"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "metafields": []any{
		M{"namespace": "inventory", "key": "count", "value": "many", "value_type": "integer"}}}}, 422), "metafields.value")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "metafields": []any{metafield, metafield}}}, 422), "metafields.key")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"page": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", list, M{"pages": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", list, M{"page": []any{}}, 400)
	s.do(demoToken, "POST", list, `{"page": {"title": }`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.do(noScopeToken, "POST", list, valid, 403)

	// list
	low := min(id1, id2, id3)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "pages", 3)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?title="+url.QueryEscape("About us"), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=about-us-1", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=nowhere", nil, 200), "pages", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=published", nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=unpublished", nil, 200), "pages", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=any", nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "pages", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "pages", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_max=2999-01-01", nil, 200), "pages", 3)
	// A hidden page has no published_at: a bounded range never matches it.
	s.wantLen(s.do(demoToken, "GET", list+"?published_at_min=2000-01-01&published_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "pages", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,handle,published_at&limit=250", nil, 200), "pages", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", count+"?title="+url.QueryEscape("About us"), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?handle=contact_us", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", count+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", count+"?published_at_max=later", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(roToken, "GET", one(id2), nil, 200)
	s.do(demoToken, "GET", one(id1)+"?fields=title,handle,template_suffix", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/pages/abc.json", nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id2), M{"page": M{"id": id2, "title": "About", "published": true, "metafields": []any{metafield}}}, 200); res.Status == 200 {
		if p := res.Object(t, "page"); p["title"] != "About" || p["handle"] != "about-us-1" || p["published_at"] == nil || p["author"] != "Ann" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(id1), M{"page": M{"handle": "about", "template_suffix": "", "published": false}}, 200); res.Status == 200 {
		if p := res.Object(t, "page"); p["handle"] != "about" || p["template_suffix"] != nil || p["published_at"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantLen(s.do(demoToken, "GET", list+"?handle=about-us", nil, 200), "pages", 0)
	s.do(demoToken, "PUT", one(id3), M{"page": M{"body_html": "<p>Write to us.</p>", "author": "Bob"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"handle": "about"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"page": M{"author": []any{}}}, 422), "author")
	s.do(demoToken, "PUT", one(999999999), M{"page": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", "/web/pages/abc.json", M{"page": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", one(id3), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", one(id3), "not json", 400)
	s.do(demoToken, "PUT", one(id3), tooLarge, 413)
	s.do(noToken, "PUT", one(id3), M{"page": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", one(id3), M{"page": M{"title": "x"}}, 403)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=published", nil, 200), 2)

	// delete
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(noScopeToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.do(demoToken, "DELETE", one(999999999), nil, 404)
	s.do(demoToken, "GET", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	// The handle of a deleted page is free again.
	s.do(demoToken, "POST", list, M{"page": M{"title": "x", "handle": "about"}}, 201)

	// Every change was logged: 4 creates, 3 updates (published, unpublished, update), 1 destroy.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Page&since_id="+strconv.FormatInt(low-1, 10), nil, 200), "events", 8)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Page&verb=destroy", nil, 200), "events", 1)
}

// tinyPNG returns a w×h PNG.
func tinyPNG(t *testing.T, w, h int) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewRGBA(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func (s *scenario) blogs(t *testing.T) {
	s.t = t
	// A second blog beside the demo seed's; blogs have no endpoints.
	const otherBlog = `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"blogs": [{"id": 241253188, "title": "Journal", "handle": "journal"}]}`
	if _, _, err := seed.Load(context.Background(), s.env.Deps.Store, []byte(otherBlog)); err != nil {
		t.Fatal(err)
	}
	const (
		blog, other                = 241253187, 241253188
		list, count, tags, authors = "/web/blogs/241253187/articles.json", "/web/blogs/241253187/articles/count.json",
			"/web/blogs/241253187/articles/tags.json", "/web/articles/authors.json"
		otherList, otherCount, otherTags = "/web/blogs/241253188/articles.json", "/web/blogs/241253188/articles/count.json",
			"/web/blogs/241253188/articles/tags.json"
		unknownList, unknownCount, unknownTags = "/web/blogs/1234/articles.json", "/web/blogs/1234/articles/count.json",
			"/web/blogs/1234/articles/tags.json"
	)
	one := func(id int64) string { return fmt.Sprintf("/web/blogs/%d/articles/%d.json", blog, id) }
	elsewhere := func(blogID, id int64) string { return fmt.Sprintf("/web/blogs/%d/articles/%d.json", blogID, id) }
	valid := M{"article": M{"title": "Shipping news"}}
	metafield := M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}
	tooLargeArticle := `{"x":"` + strings.Repeat("a", images.MaxBody) + `"}`
	manyTags := "" // 41 tags, one too many
	for i := range 41 {
		manyTags += fmt.Sprintf("tag%d,", i)
	}
	pngBytes := tinyPNG(t, 2, 3)
	imageServer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write(tinyPNG(t, 4, 5))
	}))
	defer imageServer.Close()

	// create
	r1 := s.do(demoToken, "POST", list, M{"article": M{"title": "My new Article title", "author": "John Smith",
		"tags": "This Post, Tag, Tag", "body_html": "<h1>I like articles</h1>", "summary_html": "<p>Short</p>",
		"published_at": "Thu Mar 24 15:45:47 UTC 2011", "template_suffix": "wide", "metafields": []any{metafield}}}, 201)
	id1 := s.id(r1, "article")
	if a := r1.Object(t, "article"); a["handle"] != "my-new-article-title" || a["tags"] != "Tag, This Post" || a["blog_id"] != float64(blog) ||
		a["published_at"] != "2011-03-24T11:45:47-04:00" || a["author"] != "John Smith" || a["template_suffix"] != "wide" || a["image"] != nil {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, M{"article": M{"title": "My new Article title", "published": false, "published_at": "2024-03-11",
		"image": M{"attachment": base64.StdEncoding.EncodeToString(pngBytes), "filename": "cover.png"}}}, 201)
	id2 := s.id(r2, "article")
	if a := r2.Object(t, "article"); a["handle"] != "my-new-article-title-1" || a["published_at"] != nil || a["author"] != "Demo App" {
		t.Errorf("create hidden: %s", r2.Body)
	} else if img, _ := a["image"].(map[string]any); img == nil || img["width"] != 2.0 || img["height"] != 3.0 ||
		!regexp.MustCompile(`^https://demo-shop\.example\.com/files/\d+/cover\.png$`).MatchString(fmt.Sprint(img["src"])) {
		t.Errorf("create with an attachment: %s", r2.Body)
	}
	r3 := s.do(demoToken, "POST", list, M{"article": M{"title": "Hello", "handle": "hello_world", "tags": "News, Tag", "image": M{"src": imageServer.URL + "/cat.png"}}}, 201)
	id3 := s.id(r3, "article")
	img3, _ := r3.Object(t, "article")["image"].(map[string]any)
	if img3 == nil || img3["src"] != imageServer.URL+"/cat.png" || img3["width"] != 4.0 {
		t.Errorf("create with a src: %s", r3.Body)
	}
	// Handles are unique per blog only.
	r4 := s.do(demoToken, "POST", otherList, M{"article": M{"title": "My new Article title", "image": nil}}, 201)
	id4 := s.id(r4, "article")
	if a := r4.Object(t, "article"); a["handle"] != "my-new-article-title" || a["blog_id"] != float64(other) {
		t.Errorf("create in another blog: %s", r4.Body)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "handle": "hello_world"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "author": strings.Repeat("a", 256)}}, 422), "author")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "tags": manyTags}}, 422), "tags")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "published_at": "someday"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "published_at": "Thu Mar 24 15:45:47 PST 2011"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": "cat.png"}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": M{"attachment": "!!"}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": M{"attachment": base64.StdEncoding.EncodeToString([]byte("not an image"))}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "image": M{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", list, M{"article": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", list, M{"articles": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", list, M{"article": []any{}}, 400)
	s.do(demoToken, "POST", list, `{"article": {"title": }`, 400)
	s.do(demoToken, "POST", list, tooLargeArticle, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.do(noScopeToken, "POST", list, valid, 403)
	s.do(demoToken, "POST", unknownList, valid, 404)

	// list: newest first
	low := min(id1, id2, id3)
	if res := s.do(demoToken, "GET", list, nil, 200); res.Status == 200 {
		if items := res.List(t, "articles"); len(items) != 3 || items[0].(map[string]any)["id"] != float64(id3) {
			t.Errorf("list: %s, want 3 articles, id %d first", res.Body, id3)
		}
	}
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(low, 10), nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=my-new-article-title-1", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?handle=nowhere", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?tag=Tag", nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?tag=tag", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?author="+url.QueryEscape("John Smith"), nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?author="+url.QueryEscape("Demo App")+"&tag=News", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=published", nil, 200), "articles", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=unpublished", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=any&published_at_min=2012-01-01", nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?published_at_max="+url.QueryEscape("2012-01-01T00:00:00-05:00"), nil, 200), "articles", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00")+"&updated_at_max=2999-02-01", nil, 200), "articles", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,title,image&limit=250", nil, 200), "articles", 3)
	s.wantLen(s.do(demoToken, "GET", otherList, nil, 200), "articles", 1)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", unknownList, nil, 404)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", otherCount, nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?tag=Tag", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?author="+url.QueryEscape("Demo App"), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?handle=hello_world", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", count+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", count+"?published_at_max=later", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)
	s.do(demoToken, "GET", unknownCount, nil, 404)

	// tags
	wantNames := func(res *apitest.Response, key string, want ...string) {
		t.Helper()
		if res.Status != 200 {
			return
		}
		var got []string
		for _, v := range res.List(t, key) {
			got = append(got, v.(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s %v, want %v", key, got, want)
		}
	}
	wantNames(s.do(demoToken, "GET", tags, nil, 200), "tags", "News", "Tag", "This Post")
	wantNames(s.do(roToken, "GET", tags+"?popular=1", nil, 200), "tags", "Tag", "News", "This Post")
	wantNames(s.do(demoToken, "GET", tags+"?popular=true&limit=1", nil, 200), "tags", "Tag")
	wantNames(s.do(demoToken, "GET", tags+"?popular=0&limit=2", nil, 200), "tags", "News", "Tag")
	wantNames(s.do(demoToken, "GET", otherTags, nil, 200), "tags")
	for _, q := range []string{"limit=0", "limit=251", "limit=x", "popular=yes"} {
		s.do(demoToken, "GET", tags+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", tags, nil, 401)
	s.do(noScopeToken, "GET", tags, nil, 403)
	s.do(demoToken, "GET", unknownTags, nil, 404)
	// The shop's tags: every blog's (the other blog has none yet).
	wantNames(s.do(demoToken, "GET", "/web/articles/tags.json?popular=1&limit=2", nil, 200), "tags", "Tag", "News")
	s.do(demoToken, "GET", "/web/articles/tags.json?limit=0", nil, 400)
	s.do(noToken, "GET", "/web/articles/tags.json", nil, 401)
	s.do(noScopeToken, "GET", "/web/articles/tags.json", nil, 403)

	// authors: of every blog
	wantNames(s.do(demoToken, "GET", authors, nil, 200), "authors", "Demo App", "John Smith")
	s.do(roToken, "GET", authors, nil, 200)
	s.do(noToken, "GET", authors, nil, 401)
	s.do(noScopeToken, "GET", authors, nil, 403)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(roToken, "GET", one(id2), nil, 200)
	s.do(demoToken, "GET", one(id2)+"?fields=title,handle,image", nil, 200)
	s.do(demoToken, "GET", elsewhere(other, id4), nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/blogs/241253187/articles/abc.json", nil, 404)
	s.do(demoToken, "GET", elsewhere(other, id1), nil, 404)
	s.do(demoToken, "GET", elsewhere(1234, id1), nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)
	s.do(noScopeToken, "GET", one(id1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(id2), M{"article": M{"id": id2, "title": "Second", "published": true, "image": nil}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["title"] != "Second" || a["handle"] != "my-new-article-title-1" || a["published_at"] == nil || a["image"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(id1), M{"article": M{"handle": "first", "tags": "", "summary_html": "", "template_suffix": "", "published_at": nil}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["handle"] != "first" || a["tags"] != "" || a["summary_html"] != nil || a["template_suffix"] != nil || a["published_at"] != nil {
			t.Errorf("update: %s", res.Body)
		}
	}
	// The current image sent back as it was returned is kept.
	if res := s.do(demoToken, "PUT", one(id3), M{"article": M{"image": M{"src": img3["src"]}, "author": "Bob", "metafields": []any{metafield}}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["author"] != "Bob" || !reflect.DeepEqual(a["image"], img3) {
			t.Errorf("update keeping the image: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(id3), M{"article": M{"published_at": "2024-03-11 10:00", "blog_id": other}}, 200); res.Status == 200 {
		if a := res.Object(t, "article"); a["published_at"] != "2024-03-11T10:00:00-04:00" || a["blog_id"] != float64(blog) {
			t.Errorf("update published_at: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"handle": "hello_world"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"author": " "}}, 422), "author")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"published_at": 5}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"image": []any{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"tags": manyTags}}, 422), "tags")
	s.wantFields(s.do(demoToken, "PUT", one(id1), M{"article": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.do(demoToken, "PUT", one(999999999), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", elsewhere(other, id1), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", elsewhere(1234, id1), M{"article": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", one(id1), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", one(id1), "not json", 400)
	s.do(demoToken, "PUT", one(id1), tooLargeArticle, 413)
	s.do(noToken, "PUT", one(id1), M{"article": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", one(id1), M{"article": M{"title": "x"}}, 403)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=published", nil, 200), 2)
	wantNames(s.do(demoToken, "GET", authors, nil, 200), "authors", "Bob", "Demo App", "John Smith")

	// comments
	comments := s.comments(t, blog, other, id1, id3, id4)

	// delete: an article goes with its comments
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 403)
	s.do(noScopeToken, "DELETE", one(id1), nil, 403)
	s.do(demoToken, "DELETE", elsewhere(other, id1), nil, 404)
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.do(demoToken, "DELETE", one(999999999), nil, 404)
	s.do(demoToken, "GET", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", "/web/comments/count.json", nil, 200), comments-1)
	s.wantCount(s.do(demoToken, "GET", "/web/comments/count.json?article_id="+strconv.FormatInt(id1, 10), nil, 200), 0)
	wantNames(s.do(demoToken, "GET", authors, nil, 200), "authors", "Bob", "Demo App")
	// The handle of a deleted article is free again.
	s.do(demoToken, "POST", list, M{"article": M{"title": "x", "handle": "first"}}, 201)

	// Every change was logged: 5 creates; 4 updates (published, unpublished,
	// two updates); 1 destroy; and a create per comment.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Article&since_id="+strconv.FormatInt(low-1, 10), nil, 200), "events", 10)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Article&verb=destroy", nil, 200), "events", 1)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Comment&verb=create", nil, 200), "events", comments)
}

// comments runs the comment operations on articles a1 and a3 of blog and
// a4 of other, and returns how many comments it created (one on a1).
func (s *scenario) comments(t *testing.T, blog, other, a1, a3, a4 int64) int {
	const list, count = "/web/comments.json", "/web/comments/count.json"
	one := func(id int64) string { return fmt.Sprintf("/web/comments/%d.json", id) }
	act := func(id int64, action string) string { return fmt.Sprintf("/web/comments/%d/%s.json", id, action) }
	fields := func(articleID int64, extra M) M {
		f := M{"body": "I like comments\nAnd I like posting them *RESTfully*.", "author": "Ann Reader",
			"email": "ann@example.com", "blog_id": blog, "article_id": articleID}
		for k, v := range extra {
			f[k] = v
		}
		return M{"comment": f}
	}
	valid := fields(a1, nil)

	// create
	r1 := s.do(demoToken, "POST", list, fields(a1, M{"ip": "107.20.160.121"}), 201)
	c1 := s.id(r1, "comment")
	if c := r1.Object(t, "comment"); c["status"] != "pending" || c["ip"] != "107.20.160.121" || c["user_agent"] != nil ||
		c["published_at"] == nil || !strings.Contains(fmt.Sprint(c["body_html"]), "<strong>RESTfully</strong>") {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, fields(a3, M{"user_agent": "Mozilla/5.0", "ip": nil}), 201)
	c2 := s.id(r2, "comment")
	if c := r2.Object(t, "comment"); c["user_agent"] != "Mozilla/5.0" || c["ip"] == "" || c["article_id"] != float64(a3) {
		t.Errorf("create: %s", r2.Body)
	}
	c3 := s.id(s.do(demoToken, "POST", list, fields(a4, M{"blog_id": other}), 201), "comment")
	s.wantFields(s.do(demoToken, "POST", list, M{"comment": M{}}, 422), "author", "body", "email", "blog_id", "article_id")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"author": " ", "body": "  "}), 422), "author", "body")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"author": strings.Repeat("a", 256), "body": strings.Repeat("b", 20001)}), 422), "author", "body")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"email": "Ann <ann@example.com>"}), 422), "email")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"ip": "999.1.1.1"}), 422), "ip")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"user_agent": strings.Repeat("u", 1001)}), 422), "user_agent")
	s.wantFields(s.do(demoToken, "POST", list, fields(1234, nil), 422), "article_id")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"blog_id": other}), 422), "blog_id")
	s.wantFields(s.do(demoToken, "POST", list, fields(a1, M{"blog_id": strconv.FormatInt(blog, 10) + "x"}), 422), "blog_id")
	s.do(demoToken, "POST", list, M{"comments": M{}}, 400)
	s.do(demoToken, "POST", list, M{"comment": "x"}, 400)
	s.do(demoToken, "POST", list, `{"comment": {"body": "x"`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.do(noScopeToken, "POST", list, valid, 403)

	// list
	low := min(c1, c2, c3)
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "comments", 3)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?article_id="+itoa(a1), nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?blog_id="+itoa(blog), nil, 200), "comments", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?blog_id="+itoa(other), nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?article_id="+itoa(a1)+"&blog_id="+itoa(other), nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?article_id=0&blog_id=0", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?status=pending", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?status=spam", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?published_status=published", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "comments", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+itoa(low), nil, 200), "comments", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min="+url.QueryEscape("2000-01-01 00:00")+"&updated_at_max=2999-01-01", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?published_at_max=2000-01-01&published_at_min=1999-01-01", nil, 200), "comments", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_max=2999-01-01&updated_at_min=2000-01-01", nil, 200), "comments", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,status,body_html&limit=250", nil, 200), "comments", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=x", "article_id=x", "blog_id=-1",
		"status=approved", "published_status=visible", "created_at_min=yesterday", "published_at_max=soon"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)
	s.do(noScopeToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", count+"?article_id="+itoa(a1), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?blog_id="+itoa(blog), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?blog_id="+itoa(blog)+"&status=pending", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=unpublished&created_at_min=2000-01-01", nil, 200), 3)
	s.do(demoToken, "GET", count+"?status=hidden", nil, 400)
	s.do(demoToken, "GET", count+"?article_id=-1", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(c1), nil, 200)
	s.do(roToken, "GET", one(c2), nil, 200)
	s.do(demoToken, "GET", one(c1)+"?fields=status,body_html,user_agent", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/web/comments/abc.json", nil, 404)
	s.do(noToken, "GET", one(c1), nil, 401)
	s.do(noScopeToken, "GET", one(c1), nil, 403)

	// update
	if res := s.do(demoToken, "PUT", one(c1), M{"comment": M{"id": c1, "body": "Edited *text*", "author": "Ann R.", "ip": "10.0.0.1"}}, 200); res.Status == 200 {
		if c := res.Object(t, "comment"); c["body"] != "Edited *text*" || c["author"] != "Ann R." || c["status"] != "pending" || c["ip"] != "107.20.160.121" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(c2), M{"comment": M{"published_at": "2024-03-11 10:00", "email": "bob@example.org"}}, 200); res.Status == 200 {
		if c := res.Object(t, "comment"); c["status"] != "published" || c["published_at"] != "2024-03-11T10:00:00-04:00" || c["email"] != "bob@example.org" {
			t.Errorf("update publishing: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"email": "nobody"}}, 422), "email")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"author": "", "body": ""}}, 422), "author", "body")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"published_at": nil}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"published_at": "soon"}}, 422), "published_at")
	s.wantFields(s.do(demoToken, "PUT", one(c1), M{"comment": M{"body": 5}}, 422), "body")
	s.do(demoToken, "PUT", one(999999999), M{"comment": M{"body": "x"}}, 404)
	s.do(demoToken, "PUT", "/web/comments/abc.json", M{"comment": M{"body": "x"}}, 404)
	s.do(demoToken, "PUT", one(c1), M{"body": "x"}, 400)
	s.do(demoToken, "PUT", one(c1), "not json", 400)
	s.do(demoToken, "PUT", one(c1), tooLarge, 413)
	s.do(noToken, "PUT", one(c1), M{"comment": M{"body": "x"}}, 401)
	s.do(roToken, "PUT", one(c1), M{"comment": M{"body": "x"}}, 403)

	// moderation (schema CommentStatus): each action answers the comment unwrapped
	status := func(res *apitest.Response, want string) {
		t.Helper()
		if res.Status == 200 {
			if got := res.JSON(t)["status"]; got != want {
				t.Errorf("status %v, want %s: %s", got, want, res.Body)
			}
		}
	}
	status(s.do(demoToken, "POST", act(c1, "approve"), M{}, 200), "published")
	s.wantFields(s.do(demoToken, "POST", act(c1, "approve"), M{}, 422), "status")
	s.wantFields(s.do(demoToken, "POST", act(c1, "not_spam"), nil, 422), "status")
	s.wantFields(s.do(demoToken, "POST", act(c1, "restore"), M{}, 422), "status")
	status(s.do(demoToken, "POST", act(c1, "spam"), M{}, 200), "spam")
	status(s.do(demoToken, "POST", act(c1, "spam"), nil, 200), "spam")
	s.wantFields(s.do(demoToken, "POST", act(c1, "approve"), M{}, 422), "status")
	status(s.do(demoToken, "POST", act(c1, "not_spam"), M{}, 200), "published")
	status(s.do(demoToken, "POST", act(c1, "remove"), M{}, 200), "removed")
	status(s.do(demoToken, "POST", act(c1, "remove"), nil, 200), "removed")
	status(s.do(demoToken, "POST", act(c1, "restore"), M{}, 200), "published")
	status(s.do(demoToken, "POST", act(c3, "approve"), nil, 200), "published")
	status(s.do(demoToken, "POST", act(c3, "remove"), M{}, 200), "removed")
	for _, a := range []string{"approve", "spam", "not_spam", "remove", "restore"} {
		s.do(demoToken, "POST", act(999999999, a), M{}, 404)
		s.do(demoToken, "POST", act(c2, a), tooLarge, 413)
		s.do(noToken, "POST", act(c2, a), M{}, 401)
		s.do(roToken, "POST", act(c2, a), M{}, 403)
	}
	s.wantCount(s.do(demoToken, "GET", count+"?published_status=published", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?status=removed", nil, 200), 1)
	return 3
}

// leavingToken is an app installed for the webhooks scenario to uninstall
// (DELETE /admin/api_permissions/current.json revokes the caller's token).
const leavingToken = "leaving-app-token-0123456789abcdef"

func (s *scenario) webhooks(t *testing.T) {
	s.t = t
	const list, count = "/admin/webhooks.json", "/admin/webhooks/count.json"
	one := func(id int64) string { return fmt.Sprintf("/admin/webhooks/%d.json", id) }
	const addr1, addr2 = "https://whatever.example.com/hooks/orders", "https://whatever.example.com/hooks/other"
	valid := M{"webhook": M{"topic": "orders/create", "address": "https://whatever.example.com/hooks/new"}}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }

	// create
	r1 := s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/create", "address": addr1}}, 201)
	id1 := s.id(r1, "webhook")
	if w := r1.Object(t, "webhook"); w["format"] != "json" || fmt.Sprint(w["fields"], w["metafield_namespaces"]) != "[] []" {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/paid", "address": addr1, "format": "xml",
		"fields": []any{"id", " note "}, "metafield_namespaces": []any{"inventory"}}}, 201)
	id2 := s.id(r2, "webhook")
	if w := r2.Object(t, "webhook"); w["format"] != "xml" || fmt.Sprint(w["fields"]) != "[id note]" {
		t.Errorf("create with fields: %s", r2.Body)
	}
	id3 := s.id(s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/create", "address": addr2}}, 201), "webhook")
	// Another app may subscribe the same address, to a topic it may read:
	// orders/create needs read_orders (403 as a route's missing scope).
	s.do(roToken, "POST", list, valid, 403)
	other := s.id(s.do(roToken, "POST", list, M{"webhook": M{"topic": "shop/update", "address": addr1}}, 201), "webhook")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{}}, 422), "topic", "address")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/exploded", "address": addr1}}, 422), "topic")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/create", "address": addr1}}, 422), "address")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/create", "address": "ftp://whatever.example.com/"}}, 422), "address")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/create", "address": "https://" + strings.Repeat("a", 990) + ".example.com"}}, 422), "address")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{"topic": "carts/create", "address": addr1, "format": "yaml"}}, 422), "format")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{"topic": "carts/create", "address": addr1, "fields": []any{" "},
		"metafield_namespaces": slices.Repeat([]any{"ns"}, 51)}}, 422), "fields", "metafield_namespaces")
	s.wantFields(s.do(demoToken, "POST", list, M{"webhook": M{"topic": 5, "address": addr1}}, 422), "topic")
	s.do(demoToken, "POST", list, M{"webhooks": M{"topic": "orders/create"}}, 400)
	s.do(demoToken, "POST", list, M{"webhook": "orders/create"}, 400)
	s.do(demoToken, "POST", list, `{"webhook": {`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)

	// list: an app sees only its own, and needs no scope
	low := min(id1, id2, id3)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "webhooks", 3)
	s.wantLen(s.do(roToken, "GET", list, nil, 200), "webhooks", 1)
	s.wantLen(s.do(noScopeToken, "GET", list, nil, 200), "webhooks", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=2&page=2", nil, 200), "webhooks", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+itoa(low), nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?address="+url.QueryEscape(addr1), nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?address="+url.QueryEscape(addr1)+"&topic=orders/paid", nil, 200), "webhooks", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?topic=orders/create", nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?topic=nothing", nil, 200), "webhooks", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "webhooks", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), "webhooks", 0)
	s.wantLen(s.do(demoToken, "GET", list+"?updated_at_max=2999-01-01&topic=orders/create", nil, 200), "webhooks", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,topic,address&limit=250", nil, 200), "webhooks", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x", "created_at_min=yesterday", "updated_at_max=2024-13-45"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", list, nil, 401)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(roToken, "GET", count, nil, 200), 1)
	s.wantCount(s.do(noScopeToken, "GET", count, nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?address="+url.QueryEscape(addr1), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?topic=orders/create", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", count+"?topic=orders/create&address="+url.QueryEscape(addr2), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", count+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", count+"?updated_at_min=2000-01-01&topic=orders/paid", nil, 200), 1)
	s.do(demoToken, "GET", count+"?created_at_min=soon", nil, 400)
	s.do(noToken, "GET", count, nil, 401)

	// get
	s.do(demoToken, "GET", one(id1), nil, 200)
	s.do(demoToken, "GET", one(id2)+"?fields=address,topic,fields", nil, 200)
	s.do(roToken, "GET", one(other), nil, 200)
	s.do(roToken, "GET", one(id1), nil, 404) // another app's webhook
	s.do(demoToken, "GET", one(other), nil, 404)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/admin/webhooks/abc.json", nil, 404)
	s.do(noToken, "GET", one(id1), nil, 401)

	// update
	if res := s.do(demoToken, "PUT", one(id1), M{"webhook": M{"id": id1, "address": addr1 + "/v2"}}, 200); res.Status == 200 {
		if w := res.Object(t, "webhook"); w["address"] != addr1+"/v2" || w["topic"] != "orders/create" || w["format"] != "json" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(id2), M{"webhook": M{"format": "json", "fields": []any{}, "metafield_namespaces": nil}}, 200); res.Status == 200 {
		if w := res.Object(t, "webhook"); w["format"] != "json" || fmt.Sprint(w["fields"], w["metafield_namespaces"]) != "[] [inventory]" {
			t.Errorf("update lists: %s", res.Body)
		}
	}
	s.do(demoToken, "PUT", one(id3), M{"webhook": M{"topic": "orders/paid"}}, 200)
	// id3 moving onto id1's topic and address
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"webhook": M{"topic": "orders/create", "address": addr1 + "/v2"}}, 422), "address")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"webhook": M{"topic": "orders/exploded"}}, 422), "topic")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"webhook": M{"address": "", "format": ""}}, 422), "address", "format")
	s.wantFields(s.do(demoToken, "PUT", one(id3), M{"webhook": M{"fields": "id"}}, 422), "fields")
	s.do(demoToken, "PUT", one(999999999), M{"webhook": M{"topic": "orders/paid"}}, 404)
	s.do(demoToken, "PUT", one(other), M{"webhook": M{"topic": "orders/paid"}}, 404)
	s.do(roToken, "PUT", one(other), M{"webhook": M{"topic": "orders/paid"}}, 403)
	s.do(demoToken, "PUT", one(id3), M{"topic": "orders/paid"}, 400)
	s.do(demoToken, "PUT", one(id3), "not json", 400)
	s.do(demoToken, "PUT", one(id3), tooLarge, 413)
	s.do(noToken, "PUT", one(id3), M{"webhook": M{"topic": "orders/paid"}}, 401)
	s.wantCount(s.do(demoToken, "GET", count+"?topic=orders/paid", nil, 200), 2)

	s.deliveries(t, other)

	// delete
	s.do(noToken, "DELETE", one(id1), nil, 401)
	s.do(roToken, "DELETE", one(id1), nil, 404) // another app's webhook: no scope, so never 403
	s.do(demoToken, "DELETE", one(id1), nil, 200)
	s.do(demoToken, "DELETE", one(id1), nil, 404)
	s.do(demoToken, "GET", one(id1), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count+"?topic=orders/create", nil, 200), 0)
	// The topic and address of a deleted webhook are free again.
	s.do(demoToken, "POST", list, M{"webhook": M{"topic": "orders/create", "address": addr1 + "/v2"}}, 201)

	s.uninstall(t)
}

// deliveries runs the delivery log and redeliver operations on a webhook
// whose deliveries go through the real pipeline (notify, fan-out, queue,
// dispatcher) to a local receiver. other is another app's webhook.
func (s *scenario) deliveries(t *testing.T, other int64) {
	ctx := context.Background()
	d := s.env.Deps
	log := func(id int64) string { return fmt.Sprintf("/admin/webhooks/%d/deliveries.json", id) }
	redeliver := func(id int64, deliveryID string) string {
		return fmt.Sprintf("/admin/webhooks/%d/deliveries/%s/redeliver.json", id, deliveryID)
	}
	var failing atomic.Bool
	failing.Store(true)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if failing.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	defer receiver.Close()
	hook := s.id(s.do(demoToken, "POST", "/admin/webhooks.json", M{"webhook": M{"topic": "products/create", "address": receiver.URL + "/hooks"}}, 201), "webhook")
	s.wantLen(s.do(demoToken, "GET", log(hook), nil, 200), "deliveries", 0)

	// A long base delay keeps a retried message out of this test's receives.
	dispatcher := api.Dispatcher(d, config.Config{RetryBase: time.Hour})
	receive := func() []queue.Message {
		t.Helper()
		msgs, err := d.Queue.Receive(ctx, queue.MaxReceive, 0)
		if err != nil {
			t.Fatal(err)
		}
		return msgs
	}
	ops, err := outbox.Notify(ctx, d.Store, d.IDs, "products/create", "product", M{"id": 632910392, "title": "IPod Nano - 8GB"})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Store.Transact(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	nid, _ := records.ParseIDSK(ops[0].Item.SK)
	if err := delivery.FanOut(ctx, d.Store, d.Queue, nid); err != nil {
		t.Fatal(err)
	}
	msgs := receive()
	if len(msgs) != 1 {
		t.Fatalf("fan-out queued %d messages, want 1", len(msgs))
	}
	var m delivery.Message
	if err := json.Unmarshal(msgs[0].Body, &m); err != nil || m.WebhookID != hook {
		t.Fatalf("queued %s (%v), want a delivery to webhook %d", msgs[0].Body, err, hook)
	}
	// First attempt: the receiver fails, a retry is scheduled.
	if !delivery.Handle(ctx, d.Queue, dispatcher, msgs[0]) {
		t.Error("a failed first attempt was not retried")
	}
	// Last attempt: it fails again and the delivery is dead-lettered.
	if out, err := dispatcher.Deliver(ctx, queue.Message{ID: msgs[0].ID, Body: msgs[0].Body, Attempt: delivery.MaxAttempts}); err != nil || out.Retry {
		t.Fatalf("last attempt: %+v, %v; want it dead-lettered", out, err)
	}
	if res := s.do(demoToken, "GET", log(hook), nil, 200); res.Status == 200 {
		items := res.List(t, "deliveries")
		if len(items) != 2 || items[0].(map[string]any)["dead_lettered"] != true || items[1].(map[string]any)["response_status"] != float64(503) {
			t.Errorf("log after the dead letter: %s", res.Body)
		}
	}

	// redeliver: queued again once, as a first attempt, which succeeds
	s.do(noToken, "POST", redeliver(hook, m.DeliveryID), nil, 401)
	s.do(demoToken, "POST", redeliver(other, m.DeliveryID), nil, 404)
	s.do(demoToken, "POST", redeliver(999999999, m.DeliveryID), nil, 404)
	s.do(demoToken, "POST", redeliver(hook, strings.Repeat("0", 32)), nil, 404)
	s.do(demoToken, "POST", redeliver(hook, m.DeliveryID), nil, 200)
	s.do(demoToken, "POST", redeliver(hook, m.DeliveryID), nil, 404)
	failing.Store(false)
	dead := msgs[0].Body
	msgs = receive()
	if len(msgs) != 1 || msgs[0].Attempt != 1 || !bytes.Equal(msgs[0].Body, dead) {
		t.Fatalf("redeliver queued %d messages, want the dead-lettered one as a first attempt", len(msgs))
	}
	if delivery.Handle(ctx, d.Queue, dispatcher, msgs[0]) {
		t.Error("a successful redelivery was retried")
	}

	// the log: newest first, ascending from since_id
	res := s.do(demoToken, "GET", log(hook), nil, 200)
	s.wantLen(res, "deliveries", 3)
	if res.Status == 200 {
		if a := res.List(t, "deliveries")[0].(map[string]any); a["response_status"] != float64(200) || a["error"] != nil ||
			a["attempt"] != float64(1) || a["delivery_id"] != m.DeliveryID || a["topic"] != "products/create" {
			t.Errorf("newest attempt: %v", a)
		}
	}
	oldest := int64(0)
	if res.Status == 200 {
		oldest = int64(res.List(t, "deliveries")[2].(map[string]any)["id"].(float64))
	}
	s.wantLen(s.do(demoToken, "GET", log(hook)+"?since_id="+strconv.FormatInt(oldest, 10), nil, 200), "deliveries", 2)
	s.wantLen(s.do(demoToken, "GET", log(hook)+"?limit=2&page=2", nil, 200), "deliveries", 1)
	s.wantLen(s.do(demoToken, "GET", log(hook)+"?fields=id,attempt,response_status,dead_lettered", nil, 200), "deliveries", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=x"} {
		s.do(demoToken, "GET", log(hook)+"?"+q, nil, 400)
	}
	s.do(demoToken, "GET", log(other), nil, 404)
	s.do(demoToken, "GET", log(999999999), nil, 404)
	s.do(demoToken, "GET", "/admin/webhooks/abc/deliveries.json", nil, 404)
	s.do(noToken, "GET", log(hook), nil, 401)

	s.do(demoToken, "DELETE", fmt.Sprintf("/admin/webhooks/%d.json", hook), nil, 200)
	s.do(demoToken, "GET", log(hook), nil, 404)
}

// uninstall removes an app installed for it: its app/uninstalled webhook is
// notified and its token stops working.
func (s *scenario) uninstall(t *testing.T) {
	ctx := context.Background()
	const uninstall = "/admin/api_permissions/current.json"
	leaving := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"apps": [{"id": 1004, "name": "Leaving App", "access_token": "` + leavingToken + `", "shared_secret": "leaving-secret", "scopes": ["write_script_tags"]}]}`
	if _, _, err := seed.Load(ctx, s.env.Deps.Store, []byte(leaving)); err != nil {
		t.Fatal(err)
	}
	hook := s.id(s.do(leavingToken, "POST", "/admin/webhooks.json", M{"webhook": M{"topic": "app/uninstalled", "address": "https://leaving.example.com/uninstalled"}}, 201), "webhook")
	s.do(leavingToken, "POST", "/web/script_tags.json", M{"script_tag": M{"event": "onload", "src": "https://leaving.example.com/app.js"}}, 201)
	demoHooks := s.do(demoToken, "GET", "/admin/webhooks/count.json", nil, 200)

	s.do(noToken, "DELETE", uninstall, nil, 401)
	s.do(badToken, "DELETE", uninstall, nil, 401)
	s.do(leavingToken, "DELETE", uninstall, nil, 200)
	s.do(leavingToken, "DELETE", uninstall, nil, 401)
	s.do(leavingToken, "GET", "/admin/webhooks.json", nil, 401)
	// Other apps keep theirs.
	s.wantCount(s.do(demoToken, "GET", "/admin/webhooks/count.json", nil, 200), int(demoHooks.JSON(t)["count"].(float64)))

	// The uninstall committed the app/uninstalled notification with the
	// webhook's snapshot; its fan-out queues the delivery, though the
	// webhook is gone.
	markers, _, err := s.env.Deps.Store.Query(ctx, store.Query{PK: outbox.Partition})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range markers {
		nid, _ := records.ParseIDSK(it.SK)
		if err := delivery.FanOut(ctx, s.env.Deps.Store, s.env.Deps.Queue, nid); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := s.env.Deps.Queue.Receive(ctx, queue.MaxReceive, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(msgs, func(qm queue.Message) bool {
		var m delivery.Message
		return json.Unmarshal(qm.Body, &m) == nil && m.WebhookID == hook && m.Snapshot != nil
	}) {
		t.Errorf("no app/uninstalled delivery to webhook %d queued among %d messages", hook, len(msgs))
	}
}

// tooLargeImageBody is a body over the limit of the routes taking an image
// attachment (collections).
var tooLargeImageBody = `{"x":"` + strings.Repeat("a", images.MaxBody) + `"}`

// Products of the catalog scenarios: the demo seed's iPod Nano (vendor
// Apple, variants Pink and Red at 199.00, stock 10 and 20, image 850703190)
// and an iPod Touch the collections scenario seeds (vendor Apple, one
// variant at 99.00 with stock 3).
const (
	nanoProduct       = 632910392
	nanoPink, nanoRed = 808950810, 49148385
	nanoImage         = 850703190
	touchProduct      = 921728736
	touchBlack        = 447654529
)

func (s *scenario) collections(t *testing.T) {
	s.t = t
	const touch = `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"products": [{"id": 921728736, "title": "IPod Touch 8GB", "handle": "ipod-touch", "vendor": "Apple", "product_type": "Cult Products",
			"variants": [{"id": 447654529, "title": "Black", "option1": "Black", "price": "99.00", "inventory_quantity": 3}]}]}`
	if _, _, err := seed.Load(context.Background(), s.env.Deps.Store, []byte(touch)); err != nil {
		t.Fatal(err)
	}
	const (
		customList, customCount   = "/com/custom_collections.json", "/com/custom_collections/count.json"
		smartList, smartCount     = "/com/smart_collections.json", "/com/smart_collections/count.json"
		collectList, collectCount = "/com/collects.json", "/com/collects/count.json"
	)
	custom := func(id int64) string { return fmt.Sprintf("/com/custom_collections/%d.json", id) }
	smart := func(id int64) string { return fmt.Sprintf("/com/smart_collections/%d.json", id) }
	collect := func(id int64) string { return fmt.Sprintf("/com/collects/%d.json", id) }
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	metafield := M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer"}
	attachment := M{"attachment": base64.StdEncoding.EncodeToString(tinyPNG(t, 2, 3)), "filename": "cover.png"}
	rule := func(column, relation string, condition any) M {
		return M{"column": column, "relation": relation, "condition": condition}
	}
	count := func(res *apitest.Response, wrapper string) float64 {
		t.Helper()
		if res.Status >= 300 {
			return -1
		}
		n, _ := res.Object(t, wrapper)["products_count"].(float64)
		return n
	}
	// Every shop starts with the frontpage collection.
	fp := int64(collection.FrontpageID)
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=frontpage", nil, 200), "custom_collections", 1)

	// --- custom collections: create
	validCustom := M{"custom_collection": M{"title": "Shoes"}}
	r1 := s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "IPods", "body_html": "<p>The best selling ipod ever</p>",
		"sort_order": "manual", "template_suffix": "wide", "collects": []any{M{"product_id": nanoProduct}, M{"product_id": nanoProduct}},
		"image": attachment, "metafields": []any{metafield}}}, 201)
	c1 := s.id(r1, "custom_collection")
	if c := r1.Object(t, "custom_collection"); c["handle"] != "ipods" || c["published_at"] == nil || c["products_count"] != 1.0 ||
		c["sort_order"] != "manual" || c["template_suffix"] != "wide" || c["image"] == nil {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "IPods", "published": false, "body_html": nil,
		"template_suffix": nil, "image": nil}}, 201)
	c2 := s.id(r2, "custom_collection")
	if c := r2.Object(t, "custom_collection"); c["handle"] != "ipods-1" || c["published_at"] != nil || c["products_count"] != 0.0 ||
		c["sort_order"] != "alpha-asc" || c["body_html"] != nil || c["image"] != nil {
		t.Errorf("create hidden: %s", r2.Body)
	}
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"body_html": "x"}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "   "}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": strings.Repeat("t", 256)}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "handle": "Not Valid"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "handle": "frontpage"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "sort_order": "random"}}, 422), "sort_order")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "collects": []any{M{"product_id": 5}}}}, 422), "collects")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "collects": []any{M{}}}}, 422), "collects")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "image": "cover.png"}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "image": M{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "metafields": []any{
		M{"namespace": "ab", "key": "", "value_type": "float"}}}}, 422),
		"metafields.namespace", "metafields.key", "metafields.value", "metafields.value_type")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": 5}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "published": "yes"}}, 422), "published")
	s.do(demoToken, "POST", customList, M{"custom_collections": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", customList, M{"custom_collection": []any{}}, 400)
	s.do(demoToken, "POST", customList, `{"custom_collection": {"title": }`, 400)
	s.do(demoToken, "POST", customList, tooLargeImageBody, 413)
	s.do(noToken, "POST", customList, validCustom, 401)
	s.do(badToken, "POST", customList, validCustom, 401)
	s.do(roToken, "POST", customList, validCustom, 403)
	s.do(noScopeToken, "POST", customList, validCustom, 403)

	// --- custom collections: list (the frontpage first)
	if res := s.do(demoToken, "GET", customList, nil, 200); res.Status == 200 {
		items := res.List(t, "custom_collections")
		if len(items) != 3 || items[0].(map[string]any)["id"] != float64(fp) {
			t.Errorf("list: %s, want 3 collections, the frontpage first", res.Body)
		}
		for _, it := range items {
			if _, ok := it.(map[string]any)["products_count"]; ok {
				t.Errorf("products_count in a list item: %v", it)
			}
		}
	}
	s.wantLen(s.do(demoToken, "GET", customList+"?limit=2&page=2", nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?since_id="+itoa(fp), nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?title=IPods", nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=ipods-1", nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=nowhere", nil, 200), "custom_collections", 0)
	s.wantLen(s.do(demoToken, "GET", customList+"?product_id="+itoa(nanoProduct), nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?product_id=0&published_status=published", nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?published_status=unpublished", nil, 200), "custom_collections", 1)
	s.wantLen(s.do(demoToken, "GET", customList+"?created_at_min=2000-01-01&created_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "custom_collections", 3)
	s.wantLen(s.do(demoToken, "GET", customList+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00")+"&updated_at_max=2999-02-01", nil, 200), "custom_collections", 0)
	s.wantLen(s.do(demoToken, "GET", customList+"?published_at_min=2000-01-01&published_at_max="+url.QueryEscape("2999-01-01T00:00:00-05:00"), nil, 200), "custom_collections", 2)
	s.wantLen(s.do(demoToken, "GET", customList+"?fields=id,handle,image&limit=250", nil, 200), "custom_collections", 3)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=-1", "since_id=x", "product_id=x", "product_id=-1",
		"published_status=sometimes", "created_at_min=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", customList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", customList, nil, 401)
	s.do(roToken, "GET", customList, nil, 403)
	s.do(noScopeToken, "GET", customList, nil, 403)

	// --- custom collections: count
	s.wantCount(s.do(demoToken, "GET", customCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", customCount+"?title=IPods", nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", customCount+"?handle=ipods", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", customCount+"?product_id="+itoa(nanoProduct), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", customCount+"?published_status=unpublished", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", customCount+"?created_at_max=2000-01-01", nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", customCount+"?published_at_min=2000-01-01&updated_at_min=2000-01-01", nil, 200), 2)
	s.do(demoToken, "GET", customCount+"?published_status=draft", nil, 400)
	s.do(demoToken, "GET", customCount+"?product_id=abc", nil, 400)
	s.do(noToken, "GET", customCount, nil, 401)
	s.do(roToken, "GET", customCount, nil, 403)

	// --- custom collections: get
	if n := count(s.do(demoToken, "GET", custom(c1), nil, 200), "custom_collection"); n != 1 {
		t.Errorf("products_count %v, want 1", n)
	}
	s.do(demoToken, "GET", custom(fp), nil, 200)
	s.do(demoToken, "GET", custom(c2)+"?fields=id,title,products_count", nil, 200)
	s.do(demoToken, "GET", custom(999999999), nil, 404)
	s.do(demoToken, "GET", "/com/custom_collections/abc.json", nil, 404)
	s.do(noToken, "GET", custom(c1), nil, 401)
	s.do(noScopeToken, "GET", custom(c1), nil, 403)

	// --- custom collections: update
	if res := s.do(demoToken, "PUT", custom(c2), M{"custom_collection": M{"id": c2, "title": "Music", "published": true,
		"sort_order": "best-selling", "metafields": []any{metafield}, "collects": []any{M{"product_id": nanoProduct}}}}, 200); res.Status == 200 {
		if c := res.Object(t, "custom_collection"); c["title"] != "Music" || c["handle"] != "ipods-1" || c["published_at"] == nil ||
			c["sort_order"] != "best-selling" || c["products_count"] != 0.0 {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", custom(c1), M{"custom_collection": M{"handle": "ipods-classic", "template_suffix": "",
		"body_html": nil, "image": nil}}, 200); res.Status == 200 {
		if c := res.Object(t, "custom_collection"); c["handle"] != "ipods-classic" || c["template_suffix"] != nil || c["body_html"] != nil ||
			c["image"] != nil || c["products_count"] != 1.0 {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantLen(s.do(demoToken, "GET", customList+"?handle=ipods", nil, 200), "custom_collections", 0)
	s.wantFields(s.do(demoToken, "PUT", custom(c1), M{"custom_collection": M{"handle": "ipods-1"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", custom(c1), M{"custom_collection": M{"handle": ""}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", custom(c1), M{"custom_collection": M{"title": ""}}, 422), "title")
	s.wantFields(s.do(demoToken, "PUT", custom(c1), M{"custom_collection": M{"sort_order": "nope"}}, 422), "sort_order")
	s.wantFields(s.do(demoToken, "PUT", custom(c1), M{"custom_collection": M{"image": []any{}}}, 422), "image")
	s.wantFields(s.do(demoToken, "PUT", custom(c1), M{"custom_collection": M{"metafields": []any{M{"namespace": "inventory"}}}}, 422), "metafields.key", "metafields.value")
	s.do(demoToken, "PUT", custom(999999999), M{"custom_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", "/com/custom_collections/abc.json", M{"custom_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", custom(c1), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", custom(c1), "not json", 400)
	s.do(demoToken, "PUT", custom(c1), tooLargeImageBody, 413)
	s.do(noToken, "PUT", custom(c1), M{"custom_collection": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", custom(c1), M{"custom_collection": M{"title": "x"}}, 403)

	// --- smart collections: create (membership is computed before the answer)
	validSmart := M{"smart_collection": M{"title": "Boots"}}
	r := s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "Pricey", "sort_order": "price-desc",
		"rules": []any{rule("variant_price", "greater_than", "150")}, "disjunctive": false}}, 201)
	s1 := s.id(r, "smart_collection")
	if c := r.Object(t, "smart_collection"); c["handle"] != "pricey" || c["products_count"] != 1.0 || c["published_at"] == nil ||
		c["sort_order"] != "price-desc" || len(asSlice(c["rules"])) != 1 {
		t.Errorf("create: %s", r.Body)
	}
	r = s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "Apple", "published": false, "image": attachment,
		"rules": []any{rule("vendor", "equals", "apple"), rule("variant_inventory", "less_than", 5)}, "disjunctive": true}}, 201)
	s2 := s.id(r, "smart_collection")
	if c := r.Object(t, "smart_collection"); c["products_count"] != 2.0 || c["published_at"] != nil || c["image"] == nil || c["disjunctive"] != true {
		t.Errorf("create disjunctive: %s", r.Body)
	}
	r = s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "Empty", "handle": "empty", "rules": nil,
		"body_html": "<p>Nothing yet.</p>", "template_suffix": "plain", "image": nil}}, 201)
	s3 := s.id(r, "smart_collection")
	if c := r.Object(t, "smart_collection"); c["products_count"] != 0.0 || len(asSlice(c["rules"])) != 0 || c["template_suffix"] != "plain" {
		t.Errorf("create without rules: %s", r.Body)
	}
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"rules": []any{}}}, 422), "title")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{rule("colour", "equals", "red")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{rule("variant_price", "contains", "1")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{rule("variant_price", "less_than", "cheap")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": []any{rule("title", "equals", " ")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "rules": "all"}}, 422), "rules")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "handle": "ipods-1"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "handle": "No"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "sort_order": "random"}}, 422), "sort_order")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "image": M{"attachment": "!!"}}}, 422), "image")
	s.wantFields(s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "disjunctive": "yes"}}, 422), "disjunctive")
	s.do(demoToken, "POST", smartList, M{"smart_collections": M{"title": "x"}}, 400)
	s.do(demoToken, "POST", smartList, `{"smart_collection": `, 400)
	s.do(demoToken, "POST", smartList, tooLargeImageBody, 413)
	s.do(noToken, "POST", smartList, validSmart, 401)
	s.do(roToken, "POST", smartList, validSmart, 403)

	// --- smart collections: list
	s.wantLen(s.do(demoToken, "GET", smartList, nil, 200), "smart_collections", 3)
	s.wantLen(s.do(demoToken, "GET", smartList+"?limit=2&page=2", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?since_id="+itoa(min(s1, s2, s3)), nil, 200), "smart_collections", 2)
	s.wantLen(s.do(demoToken, "GET", smartList+"?title=Apple", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?handle=pricey", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?handle=ipods-1", nil, 200), "smart_collections", 0) // a custom collection's
	s.wantLen(s.do(demoToken, "GET", smartList+"?product_id="+itoa(nanoProduct), nil, 200), "smart_collections", 2)
	s.wantLen(s.do(demoToken, "GET", smartList+"?product_id="+itoa(touchProduct), nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?published_status=unpublished", nil, 200), "smart_collections", 1)
	s.wantLen(s.do(demoToken, "GET", smartList+"?created_at_min=2999-01-01", nil, 200), "smart_collections", 3) // ignored
	s.wantLen(s.do(demoToken, "GET", smartList+"?updated_at_min=2000-01-01&updated_at_max="+url.QueryEscape("2999-01-01 00:00"), nil, 200), "smart_collections", 3)
	s.wantLen(s.do(demoToken, "GET", smartList+"?published_at_min=2000-01-01&published_at_max=2999-01-01", nil, 200), "smart_collections", 2)
	s.wantLen(s.do(demoToken, "GET", smartList+"?fields=id,rules,products_count", nil, 200), "smart_collections", 3)
	for _, q := range []string{"limit=0", "page=x", "since_id=-1", "product_id=-1", "published_status=sometimes",
		"created_at_max=yesterday", "updated_at_max=2024-13-45", "published_at_min=soon"} {
		s.do(demoToken, "GET", smartList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", smartList, nil, 401)
	s.do(noScopeToken, "GET", smartList, nil, 403)

	// --- smart collections: count
	s.wantCount(s.do(demoToken, "GET", smartCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?product_id="+itoa(nanoProduct), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?handle=empty", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?title=Pricey&published_status=published", nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?updated_at_min="+url.QueryEscape("2999-01-01T00:00:00+00:00"), nil, 200), 0)
	s.wantCount(s.do(demoToken, "GET", smartCount+"?created_at_min=2000-01-01&created_at_max=2000-01-02", nil, 200), 3)
	s.do(demoToken, "GET", smartCount+"?published_status=draft", nil, 400)
	s.do(noToken, "GET", smartCount, nil, 401)
	s.do(roToken, "GET", smartCount, nil, 403)

	// --- smart collections: get
	s.do(demoToken, "GET", smart(s1), nil, 200)
	s.do(demoToken, "GET", smart(s2)+"?fields=id,image,rules", nil, 200)
	s.do(demoToken, "GET", smart(c1), nil, 404) // a custom collection
	s.do(demoToken, "GET", smart(999999999), nil, 404)
	s.do(noToken, "GET", smart(s1), nil, 401)
	s.do(noScopeToken, "GET", smart(s1), nil, 403)

	// --- smart collections: order (sort_order, and products[] first when manual)
	order := func(id int64, q string) string { return fmt.Sprintf("/com/smart_collections/%d/order.json?%s", id, q) }
	s.do(demoToken, "PUT", order(s2, "sort_order=alpha-desc"), nil, 200)
	s.do(demoToken, "PUT", order(s2, "sort_order=manual&products[]="+itoa(nanoProduct)), M{}, 200)
	s.wantFields(s.do(demoToken, "PUT", order(s2, "products[]=1"), nil, 422), "products")
	s.wantFields(s.do(demoToken, "PUT", order(s2, "sort_order=sideways"), nil, 422), "sort_order")
	s.do(demoToken, "PUT", order(s2, "products[]=x"), nil, 400)
	s.do(demoToken, "PUT", order(999999999, "sort_order=manual"), nil, 404)
	s.do(noToken, "PUT", order(s2, "sort_order=manual"), nil, 401)
	s.do(roToken, "PUT", order(s2, "sort_order=manual"), nil, 403)
	s.do(demoToken, "PUT", order(s2, "sort_order=alpha-asc"), nil, 200)

	// --- smart collections: update (rules recompute the membership)
	if n := count(s.do(demoToken, "PUT", smart(s1), M{"smart_collection": M{"id": s1, "rules": []any{rule("variant_price", "greater_than", 500)}}}, 200), "smart_collection"); n != 0 {
		t.Errorf("products_count after raising the bar: %v, want 0", n)
	}
	if n := count(s.do(demoToken, "PUT", smart(s1), M{"smart_collection": M{"rules": []any{rule("variant_price", "greater_than", "150")}}}, 200), "smart_collection"); n != 1 {
		t.Errorf("products_count after lowering it: %v, want 1", n)
	}
	if res := s.do(demoToken, "PUT", smart(s2), M{"smart_collection": M{"disjunctive": false, "published": true, "image": nil, "title": "Apple, low stock"}}, 200); res.Status == 200 {
		if c := res.Object(t, "smart_collection"); c["products_count"] != 1.0 || c["published_at"] == nil || c["image"] != nil || c["handle"] != "apple" {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", smart(s3), M{"smart_collection": M{"body_html": nil, "template_suffix": "", "handle": "still-empty", "sort_order": "manual"}}, 200); res.Status == 200 {
		if c := res.Object(t, "smart_collection"); c["body_html"] != nil || c["template_suffix"] != nil || c["handle"] != "still-empty" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", smart(s3), M{"smart_collection": M{"rules": []any{rule("tag", "greater_than", "1")}}}, 422), "rules")
	s.wantFields(s.do(demoToken, "PUT", smart(s3), M{"smart_collection": M{"handle": "pricey"}}, 422), "handle")
	s.wantFields(s.do(demoToken, "PUT", smart(s3), M{"smart_collection": M{"title": ""}}, 422), "title")
	s.do(demoToken, "PUT", smart(999999999), M{"smart_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", smart(c1), M{"smart_collection": M{"title": "x"}}, 404)
	s.do(demoToken, "PUT", smart(s3), M{"title": "x"}, 400)
	s.do(demoToken, "PUT", smart(s3), tooLargeImageBody, 413)
	s.do(noToken, "PUT", smart(s3), M{"smart_collection": M{"title": "x"}}, 401)
	s.do(roToken, "PUT", smart(s3), M{"smart_collection": M{"title": "x"}}, 403)

	// --- collects: create (custom collections only)
	rc := s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": c1}}, 201)
	k1 := s.id(rc, "collect")
	if k := rc.Object(t, "collect"); k["position"] != 2.0 || k["sort_value"] != "0000000002" || k["featured"] != false {
		t.Errorf("create: %s", rc.Body)
	}
	s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": nanoProduct, "collection_id": fp}}, 201)
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{}}, 422), "product", "collection")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": 5, "collection_id": c1}}, 422), "product")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": nanoProduct, "collection_id": 5}}, 422), "collection")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": nanoProduct, "collection_id": c1}}, 422), "product_id")
	s.wantFields(s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": "x", "collection_id": c1}}, 422), "product_id")
	if res := s.do(demoToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": s1}}, 403); res.Status == 403 {
		if e, _ := res.JSON(t)["errors"].(string); e != "Cannot add products to a smart collection" {
			t.Errorf("smart collection: %s", res.Body)
		}
	}
	s.do(demoToken, "POST", collectList, M{"collects": M{}}, 400)
	s.do(demoToken, "POST", collectList, "[", 400)
	s.do(demoToken, "POST", collectList, tooLarge, 413)
	s.do(noToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": fp}}, 401)
	s.do(roToken, "POST", collectList, M{"collect": M{"product_id": touchProduct, "collection_id": fp}}, 403)

	// --- collects: list and count (smart memberships are read-only collects)
	s.wantLen(s.do(demoToken, "GET", collectList, nil, 200), "collects", 3)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id="+itoa(c1), nil, 200), "collects", 2)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id="+itoa(s1), nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id="+itoa(s3), nil, 200), "collects", 0)
	s.wantLen(s.do(demoToken, "GET", collectList+"?product_id="+itoa(nanoProduct), nil, 200), "collects", 3) // c1, frontpage, s1
	s.wantLen(s.do(demoToken, "GET", collectList+"?product_id="+itoa(touchProduct)+"&collection_id="+itoa(s2), nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?collection_id=1", nil, 200), "collects", 0)
	s.wantLen(s.do(demoToken, "GET", collectList+"?limit=2&page=2", nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?since_id="+itoa(k1), nil, 200), "collects", 1)
	s.wantLen(s.do(demoToken, "GET", collectList+"?fields=id,position,sort_value", nil, 200), "collects", 3)
	for _, q := range []string{"limit=0", "page=0", "since_id=x", "product_id=x", "collection_id=-1"} {
		s.do(demoToken, "GET", collectList+"?"+q, nil, 400)
	}
	s.do(noToken, "GET", collectList, nil, 401)
	s.do(roToken, "GET", collectList, nil, 403)
	s.wantCount(s.do(demoToken, "GET", collectCount, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", collectCount+"?collection_id="+itoa(c1), nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", collectCount+"?collection_id="+itoa(s2), nil, 200), 1)
	s.wantCount(s.do(demoToken, "GET", collectCount+"?product_id="+itoa(touchProduct), nil, 200), 2) // c1, s2
	s.wantCount(s.do(demoToken, "GET", collectCount+"?product_id="+itoa(touchProduct)+"&collection_id="+itoa(fp), nil, 200), 0)
	s.do(demoToken, "GET", collectCount+"?product_id=abc", nil, 400)
	s.do(noToken, "GET", collectCount, nil, 401)
	s.do(noScopeToken, "GET", collectCount, nil, 403)

	// --- collects: get and delete
	s.do(demoToken, "GET", collect(k1), nil, 200)
	s.do(demoToken, "GET", collect(k1)+"?fields=id,collection_id", nil, 200)
	s.do(demoToken, "GET", collect(999999999), nil, 404)
	s.do(noToken, "GET", collect(k1), nil, 401)
	s.do(roToken, "GET", collect(k1), nil, 403)
	s.do(noToken, "DELETE", collect(k1), nil, 401)
	s.do(roToken, "DELETE", collect(k1), nil, 403)
	s.do(demoToken, "DELETE", collect(k1), nil, 200)
	s.do(demoToken, "DELETE", collect(k1), nil, 404)
	s.do(demoToken, "GET", collect(k1), nil, 404)
	if n := count(s.do(demoToken, "GET", custom(c1), nil, 200), "custom_collection"); n != 1 {
		t.Errorf("products_count after the delete: %v, want 1", n)
	}

	// --- deletes
	s.do(noToken, "DELETE", custom(c2), nil, 401)
	s.do(roToken, "DELETE", custom(c2), nil, 403)
	s.do(demoToken, "DELETE", custom(c2), nil, 200)
	s.do(demoToken, "DELETE", custom(c2), nil, 404)
	s.do(demoToken, "DELETE", custom(s1), nil, 404) // a smart collection
	s.do(demoToken, "GET", custom(c2), nil, 404)
	s.do(noToken, "DELETE", smart(s3), nil, 401)
	s.do(noScopeToken, "DELETE", smart(s3), nil, 403)
	s.do(demoToken, "DELETE", smart(s3), nil, 200)
	s.do(demoToken, "DELETE", smart(s3), nil, 404)
	s.do(demoToken, "DELETE", smart(c1), nil, 404) // a custom collection
	s.wantCount(s.do(demoToken, "GET", customCount, nil, 200), 2)
	s.wantCount(s.do(demoToken, "GET", smartCount, nil, 200), 2)
	// The handles of deleted collections are free again, for either kind.
	s.do(demoToken, "POST", smartList, M{"smart_collection": M{"title": "x", "handle": "ipods-1"}}, 201)
	s.do(demoToken, "POST", customList, M{"custom_collection": M{"title": "x", "handle": "still-empty"}}, 201)

	// Every create and delete was logged: 7 creates (2 of them just
	// above) and 2 destroys.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Collection&verb=create", nil, 200), "events", 7)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Collection&verb=destroy", nil, 200), "events", 2)
}

func (s *scenario) variants(t *testing.T) {
	s.t = t
	const (
		list, count               = "/com/products/632910392/variants.json", "/com/products/632910392/variants/count.json"
		unknownList, unknownCount = "/com/products/1/variants.json", "/com/products/1/variants/count.json"
	)
	one := func(id int64) string { return fmt.Sprintf("/com/variants/%d.json", id) }
	remove := func(productID, id int64) string {
		return fmt.Sprintf("/com/products/%d/variants/%d.json", productID, id)
	}
	itoa := func(n int64) string { return strconv.FormatInt(n, 10) }
	metafield := M{"namespace": "colours", "key": "hex", "value": "#ff0", "value_type": "string"}
	valid := M{"variant": M{"option1": "Green"}}

	// list: in position order
	if res := s.do(demoToken, "GET", list, nil, 200); res.Status == 200 {
		items := res.List(t, "variants")
		if len(items) != 2 || items[0].(map[string]any)["id"] != float64(nanoPink) || items[0].(map[string]any)["price"] != "199.00" {
			t.Errorf("list: %s, want Pink and Red", res.Body)
		}
	}
	s.wantLen(s.do(demoToken, "GET", list+"?limit=1&page=2", nil, 200), "variants", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+itoa(nanoRed), nil, 200), "variants", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,price,position", nil, 200), "variants", 2)
	for _, q := range []string{"limit=0", "limit=251", "page=0", "since_id=x"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(demoToken, "GET", unknownList, nil, 404)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)

	// count
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 2)
	s.do(demoToken, "GET", unknownCount, nil, 404)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// get
	s.do(demoToken, "GET", one(nanoPink), nil, 200)
	s.do(demoToken, "GET", one(nanoRed)+"?fields=id,sku,inventory_quantity,position", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/com/variants/abc.json", nil, 404)
	s.do(noToken, "GET", one(nanoPink), nil, 401)
	s.do(roToken, "GET", one(nanoPink), nil, 403)

	// create
	r := s.do(demoToken, "POST", list, M{"variant": M{"option1": "Yellow", "price": "1.5", "compare_at_price": 2, "sku": " YELLOW ",
		"barcode": nil, "weight": 0.5, "weight_unit": "lb", "inventory_quantity": 3, "inventory_policy": "continue",
		"inventory_management": nil, "image_id": nanoImage, "position": 1, "taxable": false, "metafields": []any{metafield}}}, 201)
	yellow := s.id(r, "variant")
	if v := r.Object(t, "variant"); v["title"] != "Yellow" || v["price"] != "1.50" || v["compare_at_price"] != "2.00" || v["sku"] != "YELLOW" ||
		v["position"] != 1.0 || v["grams"] != 227.0 || v["inventory_quantity"] != 3.0 || v["image_id"] != float64(nanoImage) {
		t.Errorf("create: %s", r.Body)
	}
	r = s.do(demoToken, "POST", list, M{"variant": M{"option1": "Blue", "option2": "Large"}}, 201)
	if v := r.Object(t, "variant"); v["title"] != "Blue / Large" || v["price"] != "0.00" || v["position"] != 4.0 ||
		v["fulfillment_service"] != "manual" || v["inventory_policy"] != "deny" || v["weight_unit"] != "kg" {
		t.Errorf("create with defaults: %s", r.Body)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": " pink "}}, 422), "base")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "price": "cheap"}}, 422), "price")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "price": -1, "compare_at_price": -2}}, 422), "price", "compare_at_price")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "price": nil}}, 422), "price")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "weight_unit": "stone", "inventory_policy": "maybe"}}, 422), "weight_unit", "inventory_policy")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "image_id": 123}}, 422), "image_id")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "position": 0, "grams": -5}}, 422), "position", "grams")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "fulfillment_service": " "}}, 422), "fulfillment_service")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "inventory_quantity": 2000000000}}, 422), "inventory_quantity")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": strings.Repeat("x", 256)}}, 422), "option1")
	s.wantFields(s.do(demoToken, "POST", list, M{"variant": M{"option1": "X", "taxable": "no"}}, 422), "taxable")
	s.do(demoToken, "POST", list, M{"variants": M{"option1": "X"}}, 400)
	s.do(demoToken, "POST", list, M{"variant": "X"}, 400)
	s.do(demoToken, "POST", list, `{"variant": {"option1": }`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(demoToken, "POST", unknownList, valid, 404)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// update
	if res := s.do(demoToken, "PUT", one(yellow), M{"variant": M{"inventory_quantity_adjustment": 5}}, 200); res.Status == 200 {
		if v := res.Object(t, "variant"); v["inventory_quantity"] != 8.0 || v["position"] != 1.0 {
			t.Errorf("adjust: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(yellow), M{"variant": M{"id": yellow, "inventory_quantity": 10, "old_inventory_quantity": 8,
		"option2": "Small", "position": 3, "compare_at_price": nil, "inventory_management": "jupiter-fulfillment"}}, 200); res.Status == 200 {
		if v := res.Object(t, "variant"); v["inventory_quantity"] != 10.0 || v["title"] != "Yellow / Small" || v["position"] != 3.0 ||
			v["compare_at_price"] != nil || v["inventory_management"] != "jupiter-fulfillment" {
			t.Errorf("update: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", one(yellow), M{"variant": M{"inventory_quantity": 1, "old_inventory_quantity": 99}}, 422), "inventory_quantity")
	s.wantFields(s.do(demoToken, "PUT", one(yellow), M{"variant": M{"option1": "Red", "option2": nil}}, 422), "base")
	s.wantFields(s.do(demoToken, "PUT", one(yellow), M{"variant": M{"weight_unit": "st"}}, 422), "weight_unit")
	s.wantFields(s.do(demoToken, "PUT", one(yellow), M{"variant": M{"price": nil}}, 422), "price")
	s.do(demoToken, "PUT", one(999999999), M{"variant": M{"price": "1.00"}}, 404)
	s.do(demoToken, "PUT", "/com/variants/abc.json", M{"variant": M{"price": "1.00"}}, 404)
	s.do(demoToken, "PUT", one(yellow), M{"price": "1.00"}, 400)
	s.do(demoToken, "PUT", one(yellow), "not json", 400)
	s.do(demoToken, "PUT", one(yellow), tooLarge, 413)
	// At the product's path, as Shopify's clients update a variant.
	nested := remove(632910392, yellow)
	s.do(demoToken, "GET", nested, nil, 200)
	s.do(demoToken, "PUT", nested, M{"variant": M{"price": "3.00"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", nested, M{"variant": M{"weight_unit": "st"}}, 422), "weight_unit")
	s.do(demoToken, "PUT", nested, tooLarge, 413)
	s.do(noToken, "PUT", nested, M{"variant": M{"price": "1.00"}}, 401)
	s.do(roToken, "PUT", nested, M{"variant": M{"price": "1.00"}}, 403)
	s.do(roToken, "GET", nested, nil, 403)
	s.do(noToken, "GET", nested, nil, 401)
	s.do(demoToken, "GET", remove(1, yellow), nil, 404)
	s.do(demoToken, "PUT", fmt.Sprintf("/com/products/1/variants/%d.json", yellow), M{"variant": M{"price": "1.00"}}, 404)
	s.do(noToken, "PUT", one(yellow), M{"variant": M{"price": "1.00"}}, 401)
	s.do(roToken, "PUT", one(yellow), M{"variant": M{"price": "1.00"}}, 403)

	// Smart collection membership follows price changes: the collections
	// scenario left "pricey" (variant_price greater_than 150) holding the
	// iPod Nano through its 199.00 variants.
	pricey := "/com/smart_collections.json?handle=pricey"
	membersOf := func() (int, float64) {
		t.Helper()
		res := s.do(demoToken, "GET", pricey, nil, 200)
		items := res.List(t, "smart_collections")
		if len(items) != 1 {
			t.Fatalf("pricey: %s", res.Body)
		}
		c := items[0].(map[string]any)
		members := s.do(demoToken, "GET", fmt.Sprintf("/com/collects.json?collection_id=%d", int64(c["id"].(float64))), nil, 200)
		return len(members.List(t, "collects")), c["products_count"].(float64)
	}
	if n, count := membersOf(); n != 1 || count != 1 {
		t.Errorf("pricey before: %d members, products_count %v; want 1, 1", n, count)
	}
	s.do(demoToken, "PUT", one(nanoPink), M{"variant": M{"price": 100}}, 200)
	s.do(demoToken, "PUT", one(nanoRed), M{"variant": M{"price": "100.00"}}, 200)
	if n, count := membersOf(); n != 0 || count != 0 {
		t.Errorf("pricey after the price cut: %d members, products_count %v; want 0, 0", n, count)
	}
	s.do(demoToken, "PUT", one(nanoRed), M{"variant": M{"price": "199.00"}}, 200)
	if n, count := membersOf(); n != 1 || count != 1 {
		t.Errorf("pricey after the price rise: %d members, products_count %v; want 1, 1", n, count)
	}

	// delete
	s.do(noToken, "DELETE", remove(nanoProduct, yellow), nil, 401)
	s.do(roToken, "DELETE", remove(nanoProduct, yellow), nil, 403)
	s.do(demoToken, "DELETE", remove(touchProduct, yellow), nil, 404) // another product's variant
	s.do(demoToken, "DELETE", remove(1, yellow), nil, 404)
	s.do(demoToken, "DELETE", remove(nanoProduct, yellow), nil, 200)
	s.do(demoToken, "DELETE", remove(nanoProduct, yellow), nil, 404)
	s.do(demoToken, "GET", one(yellow), nil, 404)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 3)
	s.wantCount(s.do(demoToken, "GET", "/com/products/921728736/variants/count.json", nil, 200), 1)

	// Every change was logged as a Product update: 2 creates, 6 updates
	// (one at the product's path), 1 delete, besides the one the events
	// scenario recorded.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Product&verb=update", nil, 200), "events", 10)
}

func (s *scenario) transactions(t *testing.T) {
	s.t = t
	const (
		list, count               = "/com/orders/450789469/transactions.json", "/com/orders/450789469/transactions/count.json"
		unknownList, unknownCount = "/com/orders/1/transactions.json", "/com/orders/1/transactions/count.json"
		seededAuth                = 389404469
	)
	one := func(id int64) string { return fmt.Sprintf("/com/orders/450789469/transactions/%d.json", id) }
	valid := M{"transaction": M{"kind": "capture", "amount": "0.01"}}

	// list and count: the seeded authorization
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "transactions", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?fields=id,kind,amount&limit=1", nil, 200), "transactions", 1)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.Itoa(seededAuth), nil, 200), "transactions", 0)
	for _, q := range []string{"limit=0", "page=0", "since_id=x"} {
		s.do(demoToken, "GET", list+"?"+q, nil, 400)
	}
	s.do(demoToken, "GET", unknownList, nil, 404)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 1)
	s.do(demoToken, "GET", unknownCount, nil, 404)
	s.do(noToken, "GET", count, nil, 401)
	s.do(noScopeToken, "GET", count, nil, 403)

	// create: a part capture, the rest, a refund with the order's money rules
	r := s.do(demoToken, "POST", list, M{"transaction": M{"kind": "capture", "amount": 100, "currency": "usd", "gateway": "bogus", "test": false}}, 201)
	capture := s.id(r, "transaction")
	if v := r.Object(t, "transaction"); v["amount"] != "100.00" || v["parent_id"] != float64(seededAuth) || v["status"] != "success" || v["source_name"] != "api" {
		t.Errorf("capture: %s", r.Body)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "capture", "amount": "309.95"}}, 422), "amount")
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "capture", "parent_id": seededAuth, "amount": nil}}, 201)
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "refund", "amount": "9.99", "parent_id": capture}}, 201)
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "5.5"}}, 201)
	s.do(demoToken, "POST", list, M{"transaction": M{"kind": "authorization", "amount": "1"}}, 201)
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "steal"}}, 422), "kind")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1.001"}}, 422), "amount")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": 0}}, 422), "amount")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1", "currency": "EUR", "gateway": "stripe"}}, 422), "currency")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1", "gateway": "stripe"}}, 422), "gateway")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "void", "parent_id": seededAuth}}, 422), "parent_id")
	s.wantFields(s.do(demoToken, "POST", list, M{"transaction": M{"kind": "sale", "amount": "1", "test": "yes"}}, 422), "test")
	s.do(demoToken, "POST", list, M{"transactions": M{"kind": "sale"}}, 400)
	s.do(demoToken, "POST", list, `{"transaction": {"kind": }`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(demoToken, "POST", unknownList, valid, 404)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.wantCount(s.do(demoToken, "GET", count, nil, 200), 6)

	// get
	s.do(demoToken, "GET", one(seededAuth), nil, 200)
	s.do(demoToken, "GET", one(capture), nil, 200)
	s.do(demoToken, "GET", one(capture)+"?fields=id,amount,parent_id", nil, 200)
	s.do(demoToken, "GET", one(1), nil, 404)
	s.do(demoToken, "GET", fmt.Sprintf("/com/orders/1/transactions/%d.json", capture), nil, 404)
	s.do(noToken, "GET", one(capture), nil, 401)
	s.do(roToken, "GET", one(capture), nil, 403)

	// Each create logged an Order event with its verb.
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Order&verb=capture_success", nil, 200), "events", 2)
	s.wantLen(s.do(demoToken, "GET", "/com/events.json?filter=Order&verb=refund_success", nil, 200), "events", 1)
}

// warehouseToken is an app with write_fulfillments beside the demo app.
const warehouseToken = "warehouse-app-token-0123456789abcdef"

func (s *scenario) fulfillmentServices(t *testing.T) {
	s.t = t
	warehouse := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
		"apps": [{"id": 1005, "name": "Warehouse App", "access_token": "` + warehouseToken + `", "shared_secret": "warehouse-secret", "scopes": ["write_fulfillments"]}]}`
	if _, _, err := seed.Load(context.Background(), s.env.Deps.Store, []byte(warehouse)); err != nil {
		t.Fatal(err)
	}
	const list = "/admin/fulfillment_services.json"
	one := func(id int64) string { return fmt.Sprintf("/admin/fulfillment_services/%d.json", id) }
	valid := M{"fulfillment_service": M{"name": "Venus"}}

	// create
	r1 := s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": " Jupiter Fulfillment ", "callback_url": "https://jupiter.example.com/fulfillment",
		"inventory_management": true, "tracking_support": true, "format": "json", "credential1": "ops@jupiter.example.com", "credential2": "s3cret"}}, 201)
	f1 := s.id(r1, "fulfillment_service")
	if f := r1.Object(t, "fulfillment_service"); f["name"] != "Jupiter Fulfillment" || f["service_name"] != "Jupiter Fulfillment" ||
		f["handle"] != "jupiter-fulfillment" || f["credential2_exists"] != true || strings.Contains(string(r1.Body), "s3cret") {
		t.Errorf("create: %s", r1.Body)
	}
	r2 := s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "Mars", "format": "xml", "requires_shipping_method": false,
		"callback_url": nil, "credential1": nil}}, 201)
	f2 := s.id(r2, "fulfillment_service")
	if f := r2.Object(t, "fulfillment_service"); f["format"] != "xml" || f["requires_shipping_method"] != false || f["callback_url"] != nil ||
		f["inventory_management"] != false || f["credential2_exists"] != false {
		t.Errorf("create with defaults: %s", r2.Body)
	}
	// Handles are unique across apps.
	r3 := s.do(warehouseToken, "POST", list, M{"fulfillment_service": M{"name": "Jupiter Fulfillment"}}, 201)
	f3 := s.id(r3, "fulfillment_service")
	if f := r3.Object(t, "fulfillment_service"); f["handle"] != "jupiter-fulfillment-1" {
		t.Errorf("create by another app: %s", r3.Body)
	}
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{}}, 422), "name")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": strings.Repeat("n", 256)}}, 422), "name")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "A", "format": "csv"}}, 422), "format")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "A", "format": ""}}, 422), "format")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "A", "inventory_management": true}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "A", "callback_url": "ftp://example.com/x"}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "A", "callback_url": "https://example.com/x?a=b"}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "A", "credential1": strings.Repeat("c", 256)}}, 422), "credential1")
	s.wantFields(s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "A", "inventory_management": "yes"}}, 422), "inventory_management")
	s.do(demoToken, "POST", list, M{"name": "A"}, 400)
	s.do(demoToken, "POST", list, M{"fulfillment_service": "A"}, 400)
	s.do(demoToken, "POST", list, `{"fulfillment_service": {`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(badToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)
	s.do(noScopeToken, "POST", list, valid, 403)

	// list: the caller's, or every app's with scope=all
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "fulfillment_services", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?scope=current_client", nil, 200), "fulfillment_services", 2)
	s.do(demoToken, "GET", list+"?scope=", nil, 400)
	s.wantLen(s.do(demoToken, "GET", list+"?scope=all", nil, 200), "fulfillment_services", 3)
	s.wantLen(s.do(warehouseToken, "GET", list, nil, 200), "fulfillment_services", 1)
	s.wantLen(s.do(warehouseToken, "GET", list+"?scope=all", nil, 200), "fulfillment_services", 3)
	s.do(demoToken, "GET", list+"?scope=everyone", nil, 400)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)

	// get: any app's service by id
	if res := s.do(demoToken, "GET", one(f1), nil, 200); strings.Contains(string(res.Body), "s3cret") {
		t.Errorf("credential2 shown: %s", res.Body)
	}
	s.do(warehouseToken, "GET", one(f1), nil, 200)
	s.do(demoToken, "GET", one(f3), nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(demoToken, "GET", "/admin/fulfillment_services/abc.json", nil, 404)
	s.do(noToken, "GET", one(f1), nil, 401)
	s.do(noScopeToken, "GET", one(f1), nil, 403)

	// update: the owner only
	if res := s.do(demoToken, "PUT", one(f1), M{"fulfillment_service": M{"id": f1, "name": "Jupiter Two", "format": "xml", "tracking_support": false}}, 200); res.Status == 200 {
		if f := res.Object(t, "fulfillment_service"); f["name"] != "Jupiter Two" || f["service_name"] != "Jupiter Two" ||
			f["handle"] != "jupiter-fulfillment" || f["format"] != "xml" || f["tracking_support"] != false || f["inventory_management"] != true {
			t.Errorf("update: %s", res.Body)
		}
	}
	if res := s.do(demoToken, "PUT", one(f1), M{"fulfillment_service": M{"inventory_management": false, "callback_url": nil, "credential2": nil}}, 200); res.Status == 200 {
		if f := res.Object(t, "fulfillment_service"); f["callback_url"] != nil || f["credential2_exists"] != false || f["credential1"] != "ops@jupiter.example.com" {
			t.Errorf("update clearing: %s", res.Body)
		}
	}
	s.wantFields(s.do(demoToken, "PUT", one(f2), M{"fulfillment_service": M{"tracking_support": true}}, 422), "callback_url")
	s.wantFields(s.do(demoToken, "PUT", one(f2), M{"fulfillment_service": M{"name": "", "format": "yaml"}}, 422), "name", "format")
	s.wantFields(s.do(demoToken, "PUT", one(f2), M{"fulfillment_service": M{"callback_url": "mailto:ops@mars.example.com"}}, 422), "callback_url")
	s.do(warehouseToken, "PUT", one(f1), M{"fulfillment_service": M{"name": "Mine"}}, 404) // another app's
	s.do(demoToken, "PUT", one(999999999), M{"fulfillment_service": M{"name": "x"}}, 404)
	s.do(demoToken, "PUT", one(f2), M{"name": "x"}, 400)
	s.do(demoToken, "PUT", one(f2), "not json", 400)
	s.do(demoToken, "PUT", one(f2), tooLarge, 413)
	s.do(noToken, "PUT", one(f2), M{"fulfillment_service": M{"name": "x"}}, 401)
	s.do(roToken, "PUT", one(f2), M{"fulfillment_service": M{"name": "x"}}, 403)

	// delete: the owner only; the handle is free again
	s.do(noToken, "DELETE", one(f1), nil, 401)
	s.do(roToken, "DELETE", one(f1), nil, 403)
	s.do(warehouseToken, "DELETE", one(f1), nil, 404)
	s.do(demoToken, "DELETE", one(f1), nil, 200)
	s.do(demoToken, "DELETE", one(f1), nil, 404)
	s.do(demoToken, "GET", one(f1), nil, 404)
	s.wantLen(s.do(demoToken, "GET", list+"?scope=all", nil, 200), "fulfillment_services", 2)
	if res := s.do(demoToken, "POST", list, M{"fulfillment_service": M{"name": "Jupiter Fulfillment"}}, 201); res.Status == 201 {
		if f := res.Object(t, "fulfillment_service"); f["handle"] != "jupiter-fulfillment" {
			t.Errorf("freed handle not reused: %s", res.Body)
		}
	}
}

// billing: recurring application charges, and their confirmation page
// (HTML, no token) with its two form actions.
func (s *scenario) billing(t *testing.T) {
	s.t = t
	const list = "/admin/recurring_application_charges.json"
	one := func(id int64) string { return fmt.Sprintf("/admin/recurring_application_charges/%d.json", id) }
	activate := func(id int64) string { return fmt.Sprintf("/admin/recurring_application_charges/%d/activate.json", id) }
	valid := M{"name": "Super Duper Plan", "price": 10.0, "return_url": "http://super-duper.example.com/back?x=1", "trial_days": 7, "test": true}

	r := s.do(demoToken, "POST", list, M{"recurring_application_charge": valid}, 201)
	c1 := s.id(r, "recurring_application_charge")
	confirm := r.Object(t, "recurring_application_charge")["confirmation_url"].(string)
	u, _ := url.Parse(confirm)
	pagePath := u.Path
	c2 := s.id(s.do(demoToken, "POST", list, M{"recurring_application_charge": M{"name": "Basic", "price": "4.99", "return_url": "https://app.example.com/"}}, 201), "recurring_application_charge")
	s.wantFields(s.do(demoToken, "POST", list, M{"recurring_application_charge": M{"price": 0}}, 422), "name", "price", "return_url")
	s.do(demoToken, "POST", list, `{"recurring_application_charge": `, 400)
	s.do(demoToken, "POST", list, `{"recurring_application_charge": {"name": "`+strings.Repeat("x", 1<<20)+`"}}`, 413)
	s.do("", "POST", list, M{"recurring_application_charge": valid}, 401)

	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "recurring_application_charges", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(c1, 10)+"&fields=id,status", nil, 200), "recurring_application_charges", 1)
	s.wantLen(s.do(readOnlyTokenForBilling, "GET", list, nil, 200), "recurring_application_charges", 0)
	s.do(demoToken, "GET", list+"?since_id=abc", nil, 400)
	s.do("", "GET", list, nil, 401)
	s.do(demoToken, "GET", one(c1), nil, 200)
	s.do(demoToken, "GET", one(c1)+"?fields=name", nil, 200)
	s.do(readOnlyTokenForBilling, "GET", one(c1), nil, 404)
	s.do("", "GET", one(c1), nil, 401)

	// The page and its forms.
	page := s.doPage("GET", pagePath, "", 200)
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(string(page.Body))
	if m == nil {
		t.Fatalf("page has no form: %s", page.Body)
	}
	form := "csrf_token=" + url.QueryEscape(m[1])
	s.doPage("GET", pagePath[:strings.LastIndex(pagePath, "/")]+"/wrong", "", 404)
	s.do(demoToken, "POST", activate(c1), M{"recurring_application_charge": M{"id": c1}}, 422)
	s.doPage("POST", pagePath+"/accept", "csrf_token=forged", 403)
	s.doPage("POST", pagePath+"/accept", "csrf_token=%zz", 400)
	s.doPage("POST", pagePath+"/accept", "csrf_token="+strings.Repeat("x", 9000), 413)
	s.doPage("POST", pagePath[:strings.LastIndex(pagePath, "/")]+"/wrong/accept", form, 404)
	if res := s.doPage("POST", pagePath+"/accept", form, 303); res.Header.Get("Location") != fmt.Sprintf("http://super-duper.example.com/back?x=1&charge_id=%d", c1) {
		t.Errorf("accept: Location %q", res.Header.Get("Location"))
	}
	s.doPage("POST", pagePath+"/decline", form, 409)
	s.doPage("POST", pagePath+"/decline", "csrf_token=forged", 403)
	s.doPage("POST", pagePath+"/decline", "csrf_token=%zz", 400)
	s.doPage("POST", pagePath+"/decline", "csrf_token="+strings.Repeat("x", 9000), 413)
	s.doPage("POST", pagePath[:strings.LastIndex(pagePath, "/")]+"/wrong/decline", form, 404)
	s.do(demoToken, "POST", activate(c1), nil, 200)
	s.do(demoToken, "POST", activate(c1), nil, 422)
	s.do(demoToken, "POST", activate(1), nil, 404)
	s.do("", "POST", activate(c1), nil, 401)
	// The second charge, declined on its page.
	r2 := s.do(demoToken, "GET", one(c2), nil, 200)
	u2, _ := url.Parse(r2.Object(t, "recurring_application_charge")["confirmation_url"].(string))
	page2 := s.doPage("GET", u2.Path, "", 200)
	m2 := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(string(page2.Body))
	s.doPage("POST", u2.Path+"/decline", "csrf_token="+url.QueryEscape(m2[1]), 303)
	s.doPage("POST", u2.Path+"/accept", "csrf_token="+url.QueryEscape(m2[1]), 409)

	s.do(demoToken, "DELETE", one(c2), nil, 422) // declined
	s.do(demoToken, "DELETE", one(c1), nil, 200)
	s.do(demoToken, "DELETE", one(1), nil, 404)
	s.do("", "DELETE", one(c1), nil, 401)
}

// oauth: an app of the seed installs through the authorization page, its
// forms and the token exchange; then its token's scopes.
func (s *scenario) oauth(t *testing.T) {
	s.t = t
	const authorize, install, decline, exchange = "/admin/oauth/authorize", "/admin/oauth/authorize/install", "/admin/oauth/authorize/decline", "/admin/oauth/access_token"
	ask := url.Values{"client_id": {"install-demo-api-key"}, "scope": {"read_content,write_script_tags"},
		"redirect_uri": {"http://localhost:3000/auth/callback"}, "state": {"s1"}}
	page := s.doPage("GET", authorize+"?"+ask.Encode(), "", 200)
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(string(page.Body))
	if m == nil {
		t.Fatalf("page has no form: %s", page.Body)
	}
	bad := url.Values{"client_id": {"nobody"}}
	s.doPage("GET", authorize+"?"+bad.Encode(), "", 400)
	form := url.Values{"csrf_token": {m[1]}}
	for k, v := range ask {
		form[k] = v
	}
	s.doPage("POST", install, bad.Encode(), 400)
	s.doPage("POST", decline, bad.Encode(), 400)
	forged := ask.Encode() + "&csrf_token=forged"
	s.doPage("POST", install, forged, 403)
	s.doPage("POST", decline, forged, 403)
	s.doPage("POST", install, "csrf_token="+strings.Repeat("x", oauth.MaxBody), 413)
	s.doPage("POST", decline, "csrf_token="+strings.Repeat("x", oauth.MaxBody), 413)
	s.doPage("POST", decline, form.Encode(), 200)
	res := s.doPage("POST", install, form.Encode(), 302)
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("install: Location %q", res.Header.Get("Location"))
	}
	code := loc.Query().Get("code")
	creds := M{"client_id": "install-demo-api-key", "client_secret": "install-demo-shared-secret", "code": code}
	s.do(noToken, "POST", exchange, M{"client_id": "install-demo-api-key", "client_secret": "wrong", "code": code}, 400)
	s.do(noToken, "POST", exchange, M{"client_id": "install-demo-api-key", "code": 5}, 422)
	s.do(noToken, "POST", exchange, `{"client_id": "install-demo-api-key", "code": "`+strings.Repeat("x", oauth.MaxBody)+`"}`, 413)
	tok := s.do(noToken, "POST", exchange, creds, 200).JSON(t)
	s.do(noToken, "POST", exchange, creds, 400)
	token, _ := tok["access_token"].(string)
	if tok["scope"] != "read_content,write_script_tags" || token == "" {
		t.Errorf("token answer %v", tok)
	}
	s.do(token, "GET", "/admin/oauth/access_scopes.json", nil, 200)
	s.do(demoToken, "GET", "/admin/oauth/access_scopes.json?limit=x&fields=", nil, 400)
	s.do(noToken, "GET", "/admin/oauth/access_scopes.json", nil, 401)
}

// readOnlyTokenForBilling is an app with no charges.
const readOnlyTokenForBilling = apitest.ReadOnlyToken

// doPage sends a token-less request to a page route (a form body when body
// is not empty) and checks the answer against the document: HTML for the
// page, a Location for the redirect, the documented JSON for errors.
func (s *scenario) doPage(method, target, body string, want int) *apitest.Response {
	s.t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rec := httptest.NewRecorder()
	s.env.Handler.ServeHTTP(rec, req)
	res := &apitest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	where := method + " " + target
	if res.Status != want {
		s.t.Errorf("%s: status %d, want %d: %s", where, res.Status, want, res.Body)
	}
	u, _ := url.Parse(target)
	op, _ := s.doc.find(method, u.Path)
	if op == nil || !isPage(op) {
		s.t.Errorf("%s: no page operation in docs/openapi.yaml", where)
		return res
	}
	if s.seen[op] == nil {
		s.seen[op] = map[string]bool{}
	}
	status := strconv.Itoa(res.Status)
	s.seen[op][status] = true
	if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		s.t.Errorf("%s: page headers %v", where, res.Header)
	}
	responses, _ := op.obj["responses"].(map[string]any)
	r, ok := responses[status]
	if !ok {
		s.t.Errorf("%s: status %d is not documented for %s", where, res.Status, op.path)
		return res
	}
	resp := s.doc.deref(r)
	switch {
	case res.Status == http.StatusSeeOther || res.Status == http.StatusFound:
		if res.Header.Get("Location") == "" {
			s.t.Errorf("%s: %d without Location", where, res.Status)
		}
	case htmlOf(resp["content"]):
		if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/html" {
			s.t.Errorf("%s: Content-Type %q, want text/html", where, res.Header.Get("Content-Type"))
		}
	default:
		s.checkBody(where, schemaOf(resp["content"]), res, false)
	}
	return res
}

func (s *scenario) themes(t *testing.T) {
	s.t = t
	const list = "/web/themes.json"
	one := func(id int64) string { return fmt.Sprintf("/web/themes/%d.json", id) }
	assets := func(id int64) string { return fmt.Sprintf("/web/themes/%d/assets.json", id) }
	valid := M{"theme": M{"name": "Spring"}}

	// create
	id := s.id(s.do(demoToken, "POST", list, valid, 201), "theme")
	s.wantFields(s.do(demoToken, "POST", list, M{"theme": M{"name": " "}}, 422), "name")
	s.wantFields(s.do(demoToken, "POST", list, M{"theme": M{"name": "A", "role": "boss"}}, 422), "role")
	s.wantFields(s.do(demoToken, "POST", list, M{"theme": M{"name": "A", "src": "ftp://x.example.com/t.zip"}}, 422), "src")
	s.do(demoToken, "POST", list, M{"name": "A"}, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list and get
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "themes", 2)
	s.do(demoToken, "GET", list+"?fields=id,role", nil, 200)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", one(id), nil, 200)
	s.do(demoToken, "GET", one(id)+"?fields=name", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(noToken, "GET", one(id), nil, 401)
	s.do(noScopeToken, "GET", one(id), nil, 403)

	// update
	s.do(demoToken, "PUT", one(id), M{"theme": M{"name": "Summer", "role": "mobile"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(id), M{"theme": M{"role": "x"}}, 422), "role")
	s.do(demoToken, "PUT", one(id), M{"theme": 1}, 400)
	s.do(demoToken, "PUT", one(id), tooLarge, 413)
	s.do(demoToken, "PUT", one(999999999), valid, 404)
	s.do(noToken, "PUT", one(id), valid, 401)
	s.do(roToken, "PUT", one(id), valid, 403)

	// assets
	main := int64(theme.MainID)
	s.wantLen(s.do(demoToken, "GET", assets(main), nil, 200), "assets", len(theme.Starter))
	s.do(demoToken, "GET", assets(main)+"?fields=key,size", nil, 200)
	s.do(demoToken, "GET", assets(main)+"?asset[key]=assets/theme.css&theme_id=1", nil, 200)
	s.do(demoToken, "GET", assets(main)+"?asset[key]=assets/none.css", nil, 404)
	s.do(demoToken, "GET", assets(999999999), nil, 404)
	s.do(noToken, "GET", assets(main), nil, 401)
	s.do(roToken, "GET", assets(main), nil, 403)
	put := M{"asset": M{"key": "snippets/a.liquid", "value": "a"}}
	s.do(demoToken, "PUT", assets(main), put, 200)
	s.do(demoToken, "PUT", assets(main), M{"asset": M{"key": "assets/logo.png", "attachment": base64.StdEncoding.EncodeToString(tinyPNG(t, 1, 1))}}, 200)
	s.wantFields(s.do(demoToken, "PUT", assets(main), M{"asset": M{"key": "../a.liquid", "value": "a"}}, 422), "key")
	s.wantFields(s.do(demoToken, "PUT", assets(main), M{"asset": M{"key": "layout/x.liquid", "value": "a"}}, 422), "asset")
	s.do(demoToken, "PUT", assets(main), M{"theme": put}, 400)
	s.do(demoToken, "PUT", assets(main), `{"asset": {"key": "assets/x.bin", "attachment": "`+strings.Repeat("A", themes.MaxAssetBody)+`"}}`, 413)
	s.do(demoToken, "PUT", assets(999999999), put, 404)
	s.do(noToken, "PUT", assets(main), put, 401)
	s.do(roToken, "PUT", assets(main), put, 403)
	s.do(demoToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 200)
	s.do(demoToken, "DELETE", assets(main)+"?asset[key]=layout/theme.liquid", nil, 403)
	s.do(demoToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 404)
	s.do(demoToken, "DELETE", assets(main), nil, 400)
	s.do(noToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 401)
	s.do(noScopeToken, "DELETE", assets(main)+"?asset[key]=snippets/a.liquid", nil, 403)
	s.do(demoToken, "PUT", assets(id), M{"asset": M{"key": "assets/x.css", "value": "x"}}, 200)
	// The theme still processing refuses asset writes.
	busy := s.id(s.do(demoToken, "POST", list, M{"theme": M{"name": "Busy", "src": "https://themes.example.com/busy.zip"}}, 201), "theme")
	s.wantFields(s.do(demoToken, "DELETE", assets(busy)+"?asset[key]=assets/x.css", nil, 422), "base")

	// delete: the theme itself, not wrapped; never the main theme
	s.wantFields(s.do(demoToken, "DELETE", one(main), nil, 422), "base")
	s.do(noToken, "DELETE", one(id), nil, 401)
	s.do(roToken, "DELETE", one(id), nil, 403)
	if res := s.do(demoToken, "DELETE", one(id), nil, 200); res.Status == 200 && res.JSON(t)["name"] != "Summer" {
		t.Errorf("delete answered %s", res.Body)
	}
	s.do(demoToken, "DELETE", one(id), nil, 404)
}

func (s *scenario) countries(t *testing.T) {
	s.t = t
	const list = "/com/countries.json"
	one := func(id int64) string { return fmt.Sprintf("/com/countries/%d.json", id) }
	provinces := func(id int64) string { return fmt.Sprintf("/com/countries/%d/provinces", id) }
	valid := M{"country": M{"code": "GB"}}

	// Every shop starts with Rest of World.
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "countries", 1)
	s.wantCount(s.do(demoToken, "GET", "/com/countries/count.json", nil, 200), 1)

	// create
	ca := s.do(demoToken, "POST", list, M{"country": M{"code": "ca",
		"price_based_shipping_rates": []any{M{"name": "Standard", "price": "10.00", "min_order_subtotal": "0", "max_order_subtotal": nil,
			"offsets": []any{M{"amount": "-1.00"}}}},
		"weight_based_shipping_rates": []any{M{"name": "Heavy", "price": 25, "weight_low": 5, "weight_high": nil}},
		"provinces":                   []any{M{"code": "QC", "tax_type": "compounded"}},
	}}, 201)
	caID := s.id(ca, "country")
	if c := ca.Object(t, "country"); c["name"] != "Canada" || c["tax"] != 0.05 {
		t.Errorf("create: %s", ca.Body)
	}
	fr := s.id(s.do(demoToken, "POST", list, M{"country": M{"code": "FR", "tax": 0.25, "tax_name": "TVA"}}, 201), "country")
	s.wantFields(s.do(demoToken, "POST", list, M{"country": M{}}, 422), "code")
	s.wantFields(s.do(demoToken, "POST", list, M{"country": M{"code": "XX"}}, 422), "code")
	s.wantFields(s.do(demoToken, "POST", list, M{"country": M{"code": "CA"}}, 422), "code")
	s.wantFields(s.do(demoToken, "POST", list, M{"country": M{"code": "DE", "tax": 1.5}}, 422), "tax")
	s.do(demoToken, "POST", list, M{"code": "DE"}, 400)
	s.do(demoToken, "POST", list, `{"country": {`, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list, count, get
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "countries", 3)
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s?since_id=%d&fields=id,code", list, caID), nil, 200), "countries", 1)
	s.do(demoToken, "GET", list+"?since_id=-1", nil, 400)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.wantCount(s.do(demoToken, "GET", "/com/countries/count.json", nil, 200), 3)
	s.do(noToken, "GET", "/com/countries/count.json", nil, 401)
	s.do(roToken, "GET", "/com/countries/count.json", nil, 403)
	s.do(demoToken, "GET", one(caID), nil, 200)
	s.do(demoToken, "GET", one(caID)+"?fields=name,tax", nil, 200)
	s.do(demoToken, "GET", one(999999999), nil, 404)
	s.do(noToken, "GET", one(caID), nil, 401)
	s.do(roToken, "GET", one(caID), nil, 403)

	// update
	s.do(demoToken, "PUT", one(fr), M{"country": M{"id": fr, "tax": 0.2, "tax_name": nil, "price_based_shipping_rates": []any{}}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(fr), M{"country": M{"tax": 0.1234567}}, 422), "tax")
	s.wantFields(s.do(demoToken, "PUT", one(fr), M{"country": M{"weight_based_shipping_rates": []any{M{"name": "A", "price": "1", "weight_low": 2, "weight_high": 1}}}}, 422),
		"weight_based_shipping_rates")
	s.do(demoToken, "PUT", one(999999999), M{"country": M{"tax": 0.1}}, 404)
	s.do(demoToken, "PUT", one(fr), M{"tax": 0.1}, 400)
	s.do(demoToken, "PUT", one(fr), tooLarge, 413)
	s.do(noToken, "PUT", one(fr), M{"country": M{"tax": 0.1}}, 401)
	s.do(roToken, "PUT", one(fr), M{"country": M{"tax": 0.1}}, 403)

	// provinces
	ps := s.do(demoToken, "GET", provinces(caID)+".json", nil, 200).List(t, "provinces")
	s.wantLen(s.do(demoToken, "GET", provinces(caID)+".json?fields=code", nil, 200), "provinces", len(ps))
	pid := int64(ps[0].(map[string]any)["id"].(float64))
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s.json?since_id=%d", provinces(caID), pid), nil, 200), "provinces", len(ps)-1)
	s.do(demoToken, "GET", provinces(caID)+".json?since_id=x", nil, 400)
	s.do(demoToken, "GET", provinces(999999999)+".json", nil, 404)
	s.do(noToken, "GET", provinces(caID)+".json", nil, 401)
	s.do(roToken, "GET", provinces(caID)+".json", nil, 403)
	s.wantCount(s.do(demoToken, "GET", provinces(caID)+"/count.json", nil, 200), len(ps))
	s.do(demoToken, "GET", provinces(999999999)+"/count.json", nil, 404)
	s.do(noToken, "GET", provinces(caID)+"/count.json", nil, 401)
	s.do(roToken, "GET", provinces(caID)+"/count.json", nil, 403)
	p1 := fmt.Sprintf("%s/%d.json", provinces(caID), pid)
	s.do(demoToken, "GET", p1, nil, 200)
	s.do(demoToken, "GET", p1+"?fields=tax_percentage", nil, 200)
	s.do(demoToken, "GET", fmt.Sprintf("%s/%d.json", provinces(caID), 999999999), nil, 404)
	s.do(noToken, "GET", p1, nil, 401)
	s.do(roToken, "GET", p1, nil, 403)
	if p := s.do(demoToken, "PUT", p1, M{"province": M{"tax_percentage": 4.5, "tax_name": "PST", "tax_type": nil}}, 200).Object(t, "province"); p["tax"] != 0.045 {
		t.Errorf("province update: %v", p)
	}
	s.wantFields(s.do(demoToken, "PUT", p1, M{"province": M{"tax_type": "flat", "tax": 2}}, 422), "tax_type", "tax")
	s.do(demoToken, "PUT", fmt.Sprintf("%s/%d.json", provinces(fr), pid), M{"province": M{"tax": 0.1}}, 404)
	s.do(demoToken, "PUT", p1, M{"tax": 0.1}, 400)
	s.do(demoToken, "PUT", p1, tooLarge, 413)
	s.do(noToken, "PUT", p1, M{"province": M{"tax": 0.1}}, 401)
	s.do(roToken, "PUT", p1, M{"province": M{"tax": 0.1}}, 403)

	// delete, under both roots
	for _, root := range []string{"/com", "/admin"} {
		s.do(noToken, "DELETE", fmt.Sprintf("%s/countries/%d.json", root, fr), nil, 401)
		s.do(roToken, "DELETE", fmt.Sprintf("%s/countries/%d.json", root, fr), nil, 403)
	}
	s.do(demoToken, "DELETE", fmt.Sprintf("/admin/countries/%d.json", fr), nil, 200)
	s.do(demoToken, "DELETE", one(fr), nil, 404)
	s.do(demoToken, "DELETE", one(caID), nil, 200)
	s.do(demoToken, "DELETE", fmt.Sprintf("/admin/countries/%d.json", caID), nil, 404)
	s.do(demoToken, "GET", p1, nil, 404)
	s.wantCount(s.do(demoToken, "GET", "/com/countries/count.json", nil, 200), 1)
}

func (s *scenario) metafields(t *testing.T) {
	s.t = t
	const blog = 241253187
	page := s.id(s.do(demoToken, "POST", "/web/pages.json", M{"page": M{"title": "Metafield owner"}}, 201), "page")
	article := s.id(s.do(demoToken, "POST", fmt.Sprintf("/web/blogs/%d/articles.json", blog), M{"article": M{"title": "Metafield owner"}}, 201), "article")
	cc := s.id(s.do(demoToken, "POST", "/com/custom_collections.json", M{"custom_collection": M{"title": "Metafield owner"}}, 201), "custom_collection")
	sc := s.id(s.do(demoToken, "POST", "/com/smart_collections.json", M{"smart_collection": M{"title": "Metafield owner"}}, 201), "smart_collection")
	// base path, the same path with an unknown owner ("" for the top-level ones)
	owners := [][2]string{
		{"/com/metafields", ""},
		{"/admin/metafields", ""},
		{"/com/products/632910392/metafields", "/com/products/1/metafields"},
		{"/admin/products/632910392/metafields", "/admin/products/1/metafields"},
		{"/com/variants/808950810/metafields", "/com/variants/1/metafields"},
		{fmt.Sprintf("/web/pages/%d/metafields", page), "/web/pages/1/metafields"},
		{fmt.Sprintf("/web/blogs/%d/metafields", blog), "/web/blogs/1/metafields"},
		{fmt.Sprintf("/web/blogs/%d/articles/%d/metafields", blog, article), fmt.Sprintf("/web/blogs/%d/articles/1/metafields", blog)},
		{fmt.Sprintf("/com/custom_collections/%d/metafields", cc), "/com/custom_collections/1/metafields"},
		{fmt.Sprintf("/com/smart_collections/%d/metafields", sc), "/com/smart_collections/1/metafields"},
		{"/com/customers/207119551/metafields", "/com/customers/1/metafields"},
		{"/com/orders/450789469/metafields", "/com/orders/1/metafields"},
	}
	valid := M{"metafield": M{"namespace": "inventory", "key": "warehouse", "value": 25, "value_type": "integer", "description": "Where"}}
	// A product metafield: the top-level paths answer 403 for it to an app without products.
	product := s.id(s.do(demoToken, "POST", "/com/products/632910392/metafields.json",
		M{"metafield": M{"namespace": "scoped", "key": "product", "value": "x", "value_type": "string"}}, 201), "metafield")
	for _, o := range owners {
		base, unknown := o[0], o[1]
		top := unknown == ""
		list, count := base+".json", base+"/count.json"
		one := func(id int64) string { return fmt.Sprintf("%s/%d.json", base, id) }

		res := s.do(demoToken, "POST", list, valid, 201)
		id := s.id(res, "metafield")
		if m := res.Object(t, "metafield"); m["value"] != 25.0 {
			t.Errorf("%s: created %v", list, m)
		}
		s.do(demoToken, "POST", list, valid, 422)
		s.do(demoToken, "POST", list, M{"metafield": M{"namespace": "ab", "value_type": "float"}}, 422)
		s.do(demoToken, "POST", list, `{"metafield": {`, 400)
		s.do(demoToken, "POST", list, tooLarge, 413)
		s.do(badToken, "POST", list, valid, 401)

		s.wantLen(s.do(demoToken, "GET", list+"?namespace=inventory", nil, 200), "metafields", 1)
		s.wantLen(s.do(demoToken, "GET", list+"?namepace=inventory&key=warehouse&value_type=integer&fields=id,value&created_at_min=2000-01-01", nil, 200), "metafields", 1)
		s.wantLen(s.do(demoToken, "GET", list+"?namespace=other&since_id=1&limit=5&page=1", nil, 200), "metafields", 0)
		s.do(demoToken, "GET", list+"?limit=0", nil, 400)
		s.do(noToken, "GET", list, nil, 401)
		s.wantCount(s.do(demoToken, "GET", count+"?key=warehouse&updated_at_max=2999-01-01", nil, 200), 1)
		s.do(demoToken, "GET", count+"?value_type=date", nil, 400)
		s.do(badToken, "GET", count, nil, 401)
		if top {
			q := "?metafield[owner_resource]=order&metafield[owner_id]="
			s.wantLen(s.do(demoToken, "GET", list+"?namespace=scoped&metafield[owner_resource]=product&metafield[owner_id]=632910392", nil, 200), "metafields", 1)
			s.do(noScopeToken, "GET", list+q+"450789469", nil, 403)
			s.do(noScopeToken, "GET", count+q+"450789469", nil, 403)
			s.do(demoToken, "GET", list+q+"1", nil, 404)
			s.do(demoToken, "GET", count+q+"1", nil, 404)
			s.wantCount(s.do(demoToken, "GET", count+"?metafield[owner_resource]=shop", nil, 200), 1)
		} else {
			s.do(noScopeToken, "GET", list, nil, 403)
			s.do(noScopeToken, "GET", count, nil, 403)
			s.do(noScopeToken, "POST", list, valid, 403)
			s.do(demoToken, "GET", unknown+".json", nil, 404)
			s.do(demoToken, "GET", unknown+"/count.json", nil, 404)
			s.do(demoToken, "POST", unknown+".json", valid, 404)
		}

		s.do(demoToken, "GET", one(id), nil, 200)
		s.do(demoToken, "GET", one(id)+"?fields=id,owner_resource", nil, 200)
		s.do(badToken, "GET", one(id), nil, 401)
		s.do(demoToken, "GET", one(1), nil, 404)
		s.do(demoToken, "PUT", one(id), M{"metafield": M{"id": id, "value": "30", "value_type": "integer", "description": ""}}, 200)
		s.do(demoToken, "PUT", one(id), M{"metafield": M{"namespace": "changed"}}, 422)
		s.do(demoToken, "PUT", one(id), "not json", 400)
		s.do(demoToken, "PUT", one(id), tooLarge, 413)
		s.do(badToken, "PUT", one(id), M{"metafield": M{"value": 1}}, 401)
		s.do(demoToken, "PUT", one(1), M{"metafield": M{"value": 1}}, 404)
		scoped := id
		if top {
			scoped = product
		}
		s.do(noScopeToken, "GET", one(scoped), nil, 403)
		s.do(noScopeToken, "PUT", one(scoped), M{"metafield": M{"value": "y"}}, 403)
		s.do(noScopeToken, "DELETE", one(scoped), nil, 403)
		s.do(badToken, "DELETE", one(id), nil, 401)
		s.do(demoToken, "DELETE", one(id), nil, 200)
		s.do(demoToken, "DELETE", one(id), nil, 404)
	}
}

func (s *scenario) addresses(t *testing.T) {
	s.t = t
	const bob, unknown = 207119551, 999999999
	list := fmt.Sprintf("/com/customers/%d/addresses.json", bob)
	one := func(id int64) string { return fmt.Sprintf("/com/customers/%d/addresses/%d.json", bob, id) }
	def := func(id int64) string { return fmt.Sprintf("/com/customers/%d/addresses/%d/default.json", bob, id) }
	set := func(q string) string { return fmt.Sprintf("/com/customers/%d/addresses/set.json?%s", bob, q) }
	valid := M{"address": M{"city": "Ottawa", "country": "Canada", "province": "Ontario"}}

	// create
	a := s.id(s.do(demoToken, "POST", list, M{"address": M{"first_name": "Ann", "last_name": "Lee", "address1": "1 Main St", "country_code": "CA", "province_code": "ON", "company": nil}}, 201), "customer_address")
	b := s.id(s.do(demoToken, "POST", list, valid, 201), "customer_address")
	s.wantFields(s.do(demoToken, "POST", list, M{"address": M{"country": "Atlantis"}}, 422), "country")
	s.wantFields(s.do(demoToken, "POST", list, M{"address": M{"country": "CA", "province": "Nowhere"}}, 422), "province")
	s.do(demoToken, "POST", list, M{"city": "x"}, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(demoToken, "POST", fmt.Sprintf("/com/customers/%d/addresses.json", unknown), valid, 404)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list, get
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "addresses", 3)
	s.wantLen(s.do(demoToken, "GET", list+"?limit=1&page=2", nil, 200), "addresses", 1)
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s?since_id=%d&fields=id,default", list, a), nil, 200), "addresses", 1)
	s.do(demoToken, "GET", list+"?limit=0", nil, 400)
	s.do(demoToken, "GET", fmt.Sprintf("/com/customers/%d/addresses.json", unknown), nil, 404)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", one(a), nil, 200)
	s.do(demoToken, "GET", one(unknown), nil, 404)
	s.do(noToken, "GET", one(a), nil, 401)
	s.do(roToken, "GET", one(a), nil, 403)

	// update
	s.do(demoToken, "PUT", one(a), M{"address": M{"id": a, "country": "United States", "province": "New York", "last_name": nil}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(a), M{"address": M{"country_code": "ZZ"}}, 422), "country_code")
	s.do(demoToken, "PUT", one(a), M{"city": "x"}, 400)
	s.do(demoToken, "PUT", one(a), tooLarge, 413)
	s.do(demoToken, "PUT", one(unknown), valid, 404)
	s.do(noToken, "PUT", one(a), valid, 401)
	s.do(roToken, "PUT", one(a), valid, 403)

	// default
	if d := s.do(demoToken, "PUT", def(a), nil, 200).Object(t, "customer_address"); d["default"] != true {
		t.Errorf("default.json: %v", d)
	}
	s.do(demoToken, "PUT", def(unknown), nil, 404)
	s.do(noToken, "PUT", def(a), nil, 401)
	s.do(roToken, "PUT", def(a), nil, 403)

	// delete and set
	s.wantFields(s.do(demoToken, "DELETE", one(a), nil, 422), "base")
	s.wantFields(s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&address_ids[]=%d&operation=destroy", a, b)), nil, 422), "base")
	s.wantFields(s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=archive", b)), nil, 422), "operation")
	s.do(demoToken, "PUT", set("address_ids[]=x&operation=destroy"), nil, 400)
	s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", unknown)), nil, 404)
	s.do(noToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", b)), nil, 401)
	s.do(roToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", b)), nil, 403)
	s.do(demoToken, "PUT", set(fmt.Sprintf("address_ids[]=%d&operation=destroy", b)), nil, 200)
	s.do(noToken, "DELETE", one(bob), nil, 401)
	s.do(roToken, "DELETE", one(bob), nil, 403)
	s.do(demoToken, "DELETE", one(bob), nil, 200)
	s.do(demoToken, "DELETE", one(bob), nil, 404)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "addresses", 1)
}

func (s *scenario) savedSearches(t *testing.T) {
	s.t = t
	const unknown = 999999999
	list, count := "/com/customer_saved_searches.json", "/com/customer_saved_searches/count.json"
	one := func(id int64) string { return fmt.Sprintf("/com/customer_saved_searches/%d.json", id) }
	admin := func(id int64) string { return fmt.Sprintf("/admin/customer_saved_searches/%d.json", id) }
	customers := func(id int64, q string) string {
		return fmt.Sprintf("/com/customer_saved_searches/%d/customers.json?%s", id, q)
	}
	valid := M{"customer_saved_search": M{"name": "Bob", "query": "bob state:disabled orders_count:>=1"}}

	// create
	a := s.id(s.do(demoToken, "POST", list, valid, 201), "customer_saved_search")
	b := s.id(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"name": "Marketing", "query": "accepts_marketing:1"}}, 201), "customer_saved_search")
	s.wantFields(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"name": "x", "query": " "}}, 422), "search_terms")
	s.wantFields(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"name": "x", "query": "shoe_size:42"}}, 422), "search_terms")
	s.wantFields(s.do(demoToken, "POST", list, M{"customer_saved_search": M{"query": "tag:vip"}}, 422), "name")
	s.do(demoToken, "POST", list, M{"name": "x"}, 400)
	s.do(demoToken, "POST", list, tooLarge, 413)
	s.do(noToken, "POST", list, valid, 401)
	s.do(roToken, "POST", list, valid, 403)

	// list, count, get
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "customer_saved_searches", 2)
	s.wantLen(s.do(demoToken, "GET", fmt.Sprintf("%s?since_id=%d&fields=id,name", list, a), nil, 200), "customer_saved_searches", 1)
	s.do(demoToken, "GET", list+"?limit=0", nil, 400)
	s.do(noToken, "GET", list, nil, 401)
	s.do(roToken, "GET", list, nil, 403)
	s.do(demoToken, "GET", count, nil, 200)
	s.do(demoToken, "GET", count+"?since_id=x", nil, 400)
	s.do(noToken, "GET", count, nil, 401)
	s.do(roToken, "GET", count, nil, 403)
	s.do(demoToken, "GET", one(a), nil, 200)
	s.do(demoToken, "GET", one(a)+"?fields=id,query", nil, 200)
	s.do(demoToken, "GET", one(unknown), nil, 404)
	s.do(noToken, "GET", one(a), nil, 401)
	s.do(roToken, "GET", one(a), nil, 403)

	// customers
	s.wantLen(s.do(demoToken, "GET", customers(a, ""), nil, 200), "customers", 1)
	s.wantLen(s.do(demoToken, "GET", customers(b, "order=last_order_date+desc&limit=5&page=1"), nil, 200), "customers", 0)
	s.wantLen(s.do(demoToken, "GET", customers(a, "order=email+asc&fields=id,email,default_address"), nil, 200), "customers", 1)
	s.do(demoToken, "GET", customers(a, "order=shoe_size+asc"), nil, 400)
	s.do(demoToken, "GET", customers(unknown, ""), nil, 404)
	s.do(noToken, "GET", customers(a, ""), nil, 401)
	s.do(roToken, "GET", customers(a, ""), nil, 403)

	// update
	s.do(demoToken, "PUT", one(a), M{"customer_saved_search": M{"id": a, "name": "Bob again"}}, 200)
	s.wantFields(s.do(demoToken, "PUT", one(a), M{"customer_saved_search": M{"query": ""}}, 422), "search_terms")
	s.do(demoToken, "PUT", one(a), M{"name": "x"}, 400)
	s.do(demoToken, "PUT", one(a), tooLarge, 413)
	s.do(demoToken, "PUT", one(unknown), valid, 404)
	s.do(noToken, "PUT", one(a), valid, 401)
	s.do(roToken, "PUT", one(a), valid, 403)

	// delete, on both roots
	s.do(noToken, "DELETE", one(a), nil, 401)
	s.do(roToken, "DELETE", one(a), nil, 403)
	s.do(demoToken, "DELETE", one(a), nil, 200)
	s.do(demoToken, "DELETE", one(a), nil, 404)
	s.do(noToken, "DELETE", admin(b), nil, 401)
	s.do(roToken, "DELETE", admin(b), nil, 403)
	s.do(demoToken, "DELETE", admin(b), nil, 200)
	s.do(demoToken, "DELETE", admin(b), nil, 404)
	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "customer_saved_searches", 0)
}

// Every string a JSON request body may carry has a pattern that refuses
// what httpapi.Decode refuses (issue 25, finding 8): control characters
// other than tab, line feed and carriage return, and those three too in
// single-line fields (handle, key, namespace, path, name, title). Either
// one of the shared anchors written for it, or an anchored pattern whose
// characters are printable ASCII (plus tab and line breaks outside
// single-line fields) and which negates no class.
func TestOpenAPIRequestStringsRefuseControls(t *testing.T) {
	doc := loadOpenAPI(t)
	shared := map[string]bool{}
	pats, _ := doc.root["components"].(map[string]any)["x-patterns"].(map[string]any)
	for _, name := range []string{"text", "line", "nonBlank", "nonBlankLine", "trimmedName3to20", "trimmedName3to30", "assetKey"} {
		p, _ := pats[name].(string)
		if p == "" {
			t.Fatalf("x-patterns has no %s", name)
		}
		shared[p] = true
	}
	// The service checks URL fields with the same patterns.
	for name, p := range map[string]string{"httpURL": admin.HTTPURLPattern, "httpsURL": admin.HTTPSURLPattern,
		"callbackURL": admin.CallbackURLPattern, "redirectTarget": admin.RedirectTargetPattern, "email": admin.EmailPattern} {
		if pats[name] != p {
			t.Errorf("x-patterns.%s differs from the service's pattern (shared/admin/urls.go)", name)
		}
	}
	re := func(p string) *regexp.Regexp {
		r, err := compilePattern(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	// The shared anchors themselves: what each refuses.
	for name, c := range map[string]struct{ ok, bad []string }{
		"text":             {[]string{"", "a\tb\r\nc", "café \u00a0😀"}, []string{"\x00", "a\x1fb", "\x7f", "\u0085", "\u009f", "\x0b", "\x0c"}},
		"line":             {[]string{"", "café \u00a0😀"}, []string{"a\tb", "\n", "\r", "\x00", "\x7f", "\u0085"}},
		"nonBlank":         {[]string{"a", " a\n\tb "}, []string{"", " \t\n", "a\x00", "\u0085", "a\x0b"}},
		"nonBlankLine":     {[]string{"a", " a b "}, []string{"", " ", "a\tb", "a\nb", "a\x00"}},
		"trimmedName3to20": {[]string{"abc", "a b", "12345678901234567890", "ab\u00a0c"}, []string{"ab", " abc", "abc ", "a\tb", "a\nb", "a\x00b", "a\u0085b", "123456789012345678901"}},
		"trimmedName3to30": {[]string{"abc", "a b", "123456789012345678901234567890"}, []string{"ab", " abc", "abc ", "a\tbc", "1234567890123456789012345678901"}},
		// theme.ValidKey's rule: a known bucket, then segments neither blank,
		// "." nor "..", without white space at either end.
		"assetKey": {[]string{"templates/index.liquid", "assets/a b.css", "assets/...", "assets/.x", "snippets/a/b.liquid", "assets/é"},
			[]string{"assets/.", "assets/..", "x/a.css", "assets", "assets/ a", "assets/a ", "assets/a\tb", "assets/a\x00",
				"assets//a", "assets/a/", "assets\\a", "/assets/a", "assets/a\u0085b", "assets/\u00a0a"}},
	} {
		r := re(pats[name].(string))
		for _, s := range c.ok {
			if !r.MatchString(s) {
				t.Errorf("x-patterns.%s refuses %q", name, s)
			}
		}
		for _, s := range c.bad {
			if r.MatchString(s) {
				t.Errorf("x-patterns.%s accepts %q", name, s)
			}
		}
	}
	// Objects the service reads whole refuse control characters in
	// properties it does not use, keys included.
	v := &validator{doc: doc}
	image := map[string]any{"$ref": "#/components/schemas/ArticleImageInput"}
	for body, valid := range map[string]bool{
		`{"src":"https://example.com/a.png","alt":"a\tb","x":{"y":["z\n"]}}`: true,
		`{"src":"https://example.com/a.png","x":"a\u0000"}`:                  false,
		`{"src":"https://example.com/a.png","x":{"k\u0085":1}}`:              false,
		`{"src":"https://example.com/a.png","x\u007f":1}`:                    false,
	} {
		if errs := v.validate(image, decodeJSON([]byte(body)), "$"); (len(errs) == 0) != valid {
			t.Errorf("ArticleImageInput %s: errors %q, want valid %v", body, errs, valid)
		}
	}
	singleLine := map[string]bool{"handle": true, "key": true, "namespace": true, "path": true, "name": true, "title": true}
	seen := map[string]bool{}
	var walk func(s any, key, at string)
	walk = func(s any, key, at string) {
		m, _ := s.(map[string]any)
		if m == nil {
			return
		}
		if ref, ok := m["$ref"].(string); ok {
			if seen[ref+"|"+key] {
				return
			}
			seen[ref+"|"+key] = true
			target, err := doc.resolve(ref)
			if err != nil {
				t.Fatal(err)
			}
			walk(target, key, ref)
			return
		}
		_, enum := m["enum"]
		_, cnst := m["const"]
		if typeIncludes(m["type"], "string") && !enum && !cnst {
			p, _ := m["pattern"].(string)
			switch {
			case p == "":
				t.Errorf("%s (%s): a request string without a pattern", at, key)
			case shared[p]:
				if singleLine[key] && p != pats["line"] && p != pats["nonBlankLine"] && p != pats["trimmedName3to20"] && p != pats["trimmedName3to30"] && p != pats["assetKey"] {
					t.Errorf("%s (%s): a single-line field with a pattern that allows line breaks", at, key)
				}
			default:
				ok := strings.HasPrefix(p, "^") && strings.HasSuffix(p, "$") && !strings.Contains(p, "[^")
				for _, r := range p {
					if r > 0x7e || r < 0x20 && (singleLine[key] || r != '\t' && r != '\n' && r != '\r') {
						ok = false
					}
				}
				if !ok {
					t.Errorf("%s (%s): pattern %q may allow control characters", at, key, p)
				}
			}
		}
		if props, ok := m["properties"].(map[string]any); ok {
			for _, k := range sortedKeys(props) {
				walk(props[k], k, at+"/properties/"+k)
			}
		}
		for _, kw := range []string{"items", "additionalProperties"} {
			walk(m[kw], key, at+"/"+kw)
		}
		for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
			for i, sub := range asSlice(m[kw]) {
				walk(sub, key, fmt.Sprintf("%s/%s/%d", at, kw, i))
			}
		}
	}
	for _, op := range doc.ops {
		rb := doc.deref(op.obj["requestBody"])
		content, _ := rb["content"].(map[string]any)
		if mt, ok := content["application/json"].(map[string]any); ok {
			walk(mt["schema"], "", op.method+" "+op.path)
		}
	}
}
