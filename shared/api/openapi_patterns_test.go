package api_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
)

// Every string a JSON request body may carry has a pattern that refuses
// what httpapi.Decode refuses (issue 25, finding 8): control characters
// other than tab, line feed and carriage return, and those three too in
// single-line fields (handle, key, namespace, path, name, title). Either
// one of the shared anchors written for it, or an anchored pattern whose
// characters are printable ASCII (plus tab and line breaks outside
// single-line fields) and which negates no class.
func TestOpenAPIRequestStringsRefuseControls(t *testing.T) {
	doc := loadOpenAPI(t)
	pats, shared := sharedPatterns(t, doc)
	t.Run("anchors", func(t *testing.T) { checkSharedAnchors(t, pats) })
	t.Run("whole objects", func(t *testing.T) { checkWholeObjects(t, doc) })
	w := &controlWalk{t: t, doc: doc, pats: pats, shared: shared, seen: map[string]bool{},
		singleLine: map[string]bool{"handle": true, "key": true, "namespace": true, "path": true, "name": true, "title": true}}
	for _, op := range doc.ops {
		rb := doc.deref(op.obj["requestBody"])
		content, _ := rb["content"].(map[string]any)
		if mt, ok := content["application/json"].(map[string]any); ok {
			w.walk(mt["schema"], "", op.method+" "+op.path)
		}
	}
}

// sharedPatterns returns the document's x-patterns and the set of the
// shared anchors among them, and checks that the URL patterns are the
// service's.
func sharedPatterns(t *testing.T, doc *openAPI) (pats map[string]any, shared map[string]bool) {
	shared = map[string]bool{}
	pats, _ = doc.root["components"].(map[string]any)["x-patterns"].(map[string]any)
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
	return pats, shared
}

// checkSharedAnchors: the shared anchors themselves, and what each refuses.
func checkSharedAnchors(t *testing.T, pats map[string]any) {
	re := func(p string) *regexp.Regexp {
		r, err := compilePattern(p)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
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
}

// checkWholeObjects: objects the service reads whole refuse control
// characters in properties it does not use, keys included.
func checkWholeObjects(t *testing.T, doc *openAPI) {
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
}

// controlWalk walks request schemas for strings that could hold control
// characters; singleLine names the fields that must refuse line breaks.
type controlWalk struct {
	t          *testing.T
	doc        *openAPI
	pats       map[string]any
	shared     map[string]bool // the shared anchors' patterns
	singleLine map[string]bool
	seen       map[string]bool // $ref|key pairs walked
}

// walk checks schema s of property key, found at at.
func (w *controlWalk) walk(s any, key, at string) {
	t := w.t
	m, _ := s.(map[string]any)
	if m == nil {
		return
	}
	if ref, ok := m["$ref"].(string); ok {
		if w.seen[ref+"|"+key] {
			return
		}
		w.seen[ref+"|"+key] = true
		target, err := w.doc.resolve(ref)
		if err != nil {
			t.Fatal(err)
		}
		w.walk(target, key, ref)
		return
	}
	_, enum := m["enum"]
	_, cnst := m["const"]
	if typeIncludes(m["type"], "string") && !enum && !cnst {
		p, _ := m["pattern"].(string)
		switch {
		case p == "":
			t.Errorf("%s (%s): a request string without a pattern", at, key)
		case w.shared[p]:
			if w.singleLine[key] && p != w.pats["line"] && p != w.pats["nonBlankLine"] && p != w.pats["trimmedName3to20"] && p != w.pats["trimmedName3to30"] && p != w.pats["assetKey"] {
				t.Errorf("%s (%s): a single-line field with a pattern that allows line breaks", at, key)
			}
		default:
			ok := strings.HasPrefix(p, "^") && strings.HasSuffix(p, "$") && !strings.Contains(p, "[^")
			for _, r := range p {
				if r > 0x7e || r < 0x20 && (w.singleLine[key] || r != '\t' && r != '\n' && r != '\r') {
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
			w.walk(props[k], k, at+"/properties/"+k)
		}
	}
	for _, kw := range []string{"items", "additionalProperties"} {
		w.walk(m[kw], key, at+"/"+kw)
	}
	for _, kw := range []string{"oneOf", "anyOf", "allOf"} {
		for i, sub := range asSlice(m[kw]) {
			w.walk(sub, key, fmt.Sprintf("%s/%s/%d", at, kw, i))
		}
	}
}
