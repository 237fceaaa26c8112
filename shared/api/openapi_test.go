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
// The files: this one loads the document and finds operations, references
// and schemas in it; openapi_schema_test.go is the validator, and
// openapi_validator_test.go its own tests; openapi_routes_test.go holds the
// first check; openapi_scenario_test.go the scenario's driver, and
// scenario_<area>_test.go its steps by area (content, webhooks, catalog,
// billing, shop); openapi_patterns_test.go the shared patterns.

import (
	"bytes"
	"encoding/json"
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
