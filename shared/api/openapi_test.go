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
//
// The files: this one loads the document and validates against it;
// openapi_routes_test.go and openapi_validator_test.go hold the first check
// and the validator's own; openapi_scenario_test.go the scenario's driver,
// and scenario_<area>_test.go its steps by area (content, webhooks,
// catalog, billing, shop); openapi_patterns_test.go the shared patterns.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/santhosh-tekuri/jsonschema/v6"
	adminapi "github.com/storeadmin/adminapi"
)

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
