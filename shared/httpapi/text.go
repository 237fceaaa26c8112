package httpapi

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
)

// Messages of the text scan: 422 on the field that carries the character.
const (
	MsgControl    = "must not contain control characters"
	MsgSingleLine = "must be a single line (no tab, line feed or carriage return)"
	MsgUnicode    = "must be valid Unicode text (no unpaired surrogate, no invalid UTF-8)"
)

// singleLine names the fields (by their own key, at any depth, where the
// input type has them) that refuse tab, line feed and carriage return too:
// names, titles and what is used as a key or a path.
var singleLine = map[string]bool{"handle": true, "key": true, "namespace": true, "path": true, "name": true, "title": true}

// checkText refuses, in every string of a valid JSON object that dst
// takes (keys included inside maps and raw JSON), what encoding/json would
// store silently: C0 control characters other than tab, line feed and
// carriage return, DEL, the C1 controls U+0080–U+009F, and lone UTF-16
// surrogates or invalid UTF-8 (which it turns into U+FFFD); and tab, line
// feed and carriage return in singleLine fields of dst's types (not inside
// maps or raw JSON, which the scan cannot tell apart). Properties dst does not
// have are ignored, as the decoder ignores them. The error names the field
// as DecodeObject names it for a type error: the keys from the wrapper
// down, joined by dots, without array indexes.
func checkText(raw []byte, dst any) error {
	s := textScan{b: raw}
	s.value(nil, textNodeOf(reflect.TypeOf(dst)))
	return s.err
}

// textNode is what a JSON value decodes into, as far as the scan needs.
type textNode struct {
	kind   nodeKind
	fields map[string]*textNode // of a struct, by lower-cased name: the decoder matches them without regard to case
}

type nodeKind uint8

const (
	// typed: a string or a value with its own decoder (an amount, a
	// time), held to singleLine by its key.
	typed nodeKind = iota
	// free: a map, an interface or raw JSON, kept or read whole: every
	// string beneath it counts, keys included.
	free
	// fields: a struct; properties it does not have are ignored.
	fields
)

var (
	textMu      sync.Mutex
	textNodes   = map[reflect.Type]*textNode{} // under textMu; nodes are complete once it is released
	unmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textDecoder = reflect.TypeFor[encoding.TextUnmarshaler]()
	rawMessage  = reflect.TypeFor[json.RawMessage]()
)

func textNodeOf(t reflect.Type) *textNode {
	textMu.Lock()
	defer textMu.Unlock()
	return buildNode(t)
}

func buildNode(t reflect.Type) *textNode {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return &textNode{kind: free}
	}
	if n, ok := textNodes[t]; ok {
		return n
	}
	n := &textNode{}
	textNodes[t] = n // before the fields: a type may hold itself
	switch {
	case t.PkgPath() == optionalType.PkgPath() && strings.HasPrefix(t.Name(), "Optional["):
		v, _ := t.FieldByName("Value")
		*n = *buildNode(v.Type)
	case t == rawMessage:
		n.kind = free
	case reflect.PointerTo(t).Implements(unmarshaler) || reflect.PointerTo(t).Implements(textDecoder):
		n.kind = typed
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		*n = *buildNode(t.Elem())
	case t.Kind() == reflect.Struct:
		n.kind, n.fields = fields, map[string]*textNode{}
		addFields(n, t)
	case t.Kind() == reflect.Map || t.Kind() == reflect.Interface:
		n.kind = free
	default: // strings; numbers and booleans hold none
		n.kind = typed
	}
	return n
}

var optionalType = reflect.TypeFor[admin.Optional[bool]]()

// addFields adds the properties of struct t, those of untagged embedded
// structs included, as encoding/json sees them.
func addFields(n *textNode, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			addFields(n, ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		n.fields[strings.ToLower(name)] = buildNode(f.Type)
	}
}

type textScan struct {
	b   []byte
	i   int
	err error
}

func (s *textScan) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// value scans the value at s.i, the field at path that decodes into n
// (nil: into nothing, unchecked); it stops at the first refusal (the input
// is valid JSON: DecodeObject decoded it first).
func (s *textScan) value(path []string, n *textNode) {
	s.space()
	if s.err != nil || s.i >= len(s.b) {
		return
	}
	switch s.b[s.i] {
	case '{':
		s.i++
		for s.err == nil && s.i < len(s.b) {
			if s.space(); s.i >= len(s.b) {
				return
			}
			if s.b[s.i] == '}' {
				s.i++
				return
			}
			if s.b[s.i] == ',' {
				s.i++
				continue
			}
			start := s.i
			s.str(path, n != nil && n.kind == free, false) // a key is named by its object
			if s.err != nil {
				return
			}
			key := string(s.b[start+1 : s.i-1])
			if strings.IndexByte(key, '\\') >= 0 {
				_ = json.Unmarshal(s.b[start:s.i], &key) // the document parsed already
			}
			s.space()
			s.i++ // ':'
			child := n
			if n != nil && n.kind == fields {
				child = n.fields[strings.ToLower(key)]
			}
			s.value(append(path[:len(path):len(path)], key), child)
		}
	case '[':
		s.i++
		for s.err == nil && s.i < len(s.b) {
			if s.space(); s.i >= len(s.b) {
				return
			}
			switch s.b[s.i] {
			case ']':
				s.i++
				return
			case ',':
				s.i++
			default:
				s.value(path, n)
			}
		}
	case '"':
		s.str(path, n != nil, n != nil && n.kind == typed && len(path) > 0 && singleLine[path[len(path)-1]])
	default: // number, true, false, null
		for s.i < len(s.b) && !strings.ContainsRune(",}] \t\r\n", rune(s.b[s.i])) {
			s.i++
		}
	}
}

// str scans the string at s.i, leaving s.i after its closing quote;
// checked, it refuses what checkText says (line: tab and line breaks too).
func (s *textScan) str(path []string, checked, line bool) {
	refuse := func(msg string) {
		field := strings.Join(path, ".")
		if field == "" {
			field = "base"
		}
		s.err = admin.Invalid(field, msg)
	}
	check := func(r rune) {
		switch {
		case !checked:
		case r == '\t' || r == '\n' || r == '\r':
			if line {
				refuse(MsgSingleLine)
			}
		case r < 0x20 || r >= 0x7f && r <= 0x9f:
			refuse(MsgControl)
		}
	}
	s.i++ // opening quote
	for s.err == nil && s.i < len(s.b) {
		c := s.b[s.i]
		switch {
		case c == '"':
			s.i++
			return
		case c == '\\':
			r, n := s.escape()
			if r < 0 {
				if checked {
					refuse(MsgUnicode)
				}
				s.i += n
				continue
			}
			check(r)
			s.i += n
		case c < utf8.RuneSelf:
			check(rune(c))
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 && checked {
				refuse(MsgUnicode)
				return
			}
			check(r)
			s.i += n
		}
	}
}

// escape reads the escape at s.i: the rune and its length in bytes, or -1
// for a surrogate without its pair.
func (s *textScan) escape() (rune, int) {
	if s.i+1 >= len(s.b) {
		return -1, 1
	}
	switch s.b[s.i+1] {
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
	default: // " \ /
		return rune(s.b[s.i+1]), 2
	}
	r := s.hex(s.i + 2)
	switch {
	case r < 0 || r >= 0xdc00 && r <= 0xdfff:
		return -1, 6
	case r < 0xd800 || r > 0xdbff:
		return r, 6
	}
	// A high surrogate counts only with a low one right after it.
	if s.i+7 < len(s.b) && s.b[s.i+6] == '\\' && s.b[s.i+7] == 'u' {
		if lo := s.hex(s.i + 8); lo >= 0xdc00 && lo <= 0xdfff {
			return 0x10000 + (r-0xd800)<<10 + (lo - 0xdc00), 12
		}
	}
	return -1, 6
}

// hex reads the four hex digits at i, or -1.
func (s *textScan) hex(i int) rune {
	if i+4 > len(s.b) {
		return -1
	}
	n, err := strconv.ParseUint(string(s.b[i:i+4]), 16, 32)
	if err != nil {
		return -1
	}
	return rune(n)
}
