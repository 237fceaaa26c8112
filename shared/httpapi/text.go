package httpapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
)

// Messages of the text scan: 422 on the field that carries the character.
const (
	MsgControl    = "must not contain control characters"
	MsgSingleLine = "must be a single line (no tab, line feed or carriage return)"
	MsgUnicode    = "must be valid Unicode text (no unpaired surrogate, no invalid UTF-8)"
)

// singleLine names the fields (by their own key, at any depth) that refuse
// tab, line feed and carriage return too: names, titles and what is used
// as a key or a path.
var singleLine = map[string]bool{"handle": true, "key": true, "namespace": true, "path": true, "name": true, "title": true}

// checkText refuses, in every string of a valid JSON object (keys
// included), what encoding/json would store silently: C0 control
// characters other than tab, line feed and carriage return, DEL, the C1
// controls U+0080–U+009F, and lone UTF-16 surrogates or invalid UTF-8 (which
// it turns into U+FFFD); and tab, line feed and carriage return in
// singleLine fields. The error names the field as DecodeObject names it for
// a type error: the keys from the wrapper down, joined by dots, without
// array indexes.
func checkText(raw []byte) error {
	s := textScan{b: raw}
	s.value(nil)
	return s.err
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

// value scans the value at s.i, the field at path; it stops at the first
// refusal (the input is valid JSON: DecodeObject decoded it first).
func (s *textScan) value(path []string) {
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
			s.str(path, false) // a key is named by its object
			if s.err != nil {
				return
			}
			key := string(s.b[start+1 : s.i-1])
			if strings.IndexByte(key, '\\') >= 0 {
				json.Unmarshal(s.b[start:s.i], &key)
			}
			s.space()
			s.i++ // ':'
			s.value(append(path[:len(path):len(path)], key))
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
				s.value(path)
			}
		}
	case '"':
		s.str(path, len(path) > 0 && singleLine[path[len(path)-1]])
	default: // number, true, false, null
		for s.i < len(s.b) && !strings.ContainsRune(",}] \t\r\n", rune(s.b[s.i])) {
			s.i++
		}
	}
}

// str scans the string at s.i, leaving s.i after its closing quote.
func (s *textScan) str(path []string, line bool) {
	refuse := func(msg string) {
		field := strings.Join(path, ".")
		if field == "" {
			field = "base"
		}
		s.err = admin.Invalid(field, msg)
	}
	check := func(r rune) {
		switch {
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
				refuse(MsgUnicode)
				return
			}
			check(r)
			s.i += n
		case c < utf8.RuneSelf:
			check(rune(c))
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n == 1 {
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
