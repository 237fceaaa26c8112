package api_test

// The validator of the OpenAPI document's schemas: the JSON Schema subset
// the document uses, compiled by jsonschema, every other keyword refused
// (checkKeywords), so that the document cannot rely on what is not checked.

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

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
