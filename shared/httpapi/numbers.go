package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
)

// MsgIDTooLarge refuses an id no record can have (ids.Max, 2^53-1).
var MsgIDTooLarge = "must be less than or equal to " + strconv.FormatInt(ids.Max, 10)

// MsgIDNegative refuses a negative id.
const MsgIDNegative = "must be greater than or equal to 0"

// needsNumberPass reports whether a body holds a number that the plain
// decoder would mishandle: one with a fraction or exponent (2.0 is an
// integer to JSON clients) or of 16 or more digits (ids.Max, 2^53 − 1, has
// 16: such a number may be beyond any id). It
// scans bytes without allocating, so ordinary bodies pay only this.
func needsNumberPass(b []byte) bool {
	inString, escaped, digits := false, false, 0
	for i := 0; i < len(b); i++ {
		c := b[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch {
		case c == '"':
			inString, digits = true, 0
		case c >= '0' && c <= '9':
			if digits++; digits > 15 {
				return true
			}
		case c == '.' || c == 'e' || c == 'E':
			if digits > 0 || c == '.' {
				return true
			}
		default:
			digits = 0
		}
	}
	return false
}

// normalizeNumbers rewrites integral numbers written with a fraction or
// exponent (2.0, 1e3) as plain integers, so integer fields take them as
// the original API did, and refuses ids (keys "id" or ending in "_id")
// beyond ids.Max with a 422 naming the key. Only bodies needsNumberPass
// flags come here.
func normalizeNumbers(raw []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw, nil // the real decode reports it
	}
	v, err := walkNumbers(v, "")
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func walkNumbers(v any, key string) (any, error) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			n, err := walkNumbers(e, k)
			if err != nil {
				return nil, err
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, err := walkNumbers(e, key)
			if err != nil {
				return nil, err
			}
			x[i] = n
		}
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			if n, ok := admin.ParseIntegral(s); ok {
				s = strconv.FormatInt(n, 10)
				x = json.Number(s)
			}
		}
		if key == "id" || strings.HasSuffix(key, "_id") {
			if msg := idRange(s); msg != "" {
				return nil, admin.Invalid(key, msg)
			}
		}
		return x, nil
	}
	return v, nil
}

// idRange explains why an integer literal cannot be an id ("" if it can,
// or if it is no integer at all and the decoder will say so).
func idRange(s string) string {
	if strings.ContainsAny(s, ".eE") {
		return ""
	}
	n, err := strconv.ParseInt(s, 10, 64)
	switch {
	case strings.HasPrefix(s, "-") && (err != nil || n < 0):
		return MsgIDNegative
	case err != nil || n > ids.Max:
		return MsgIDTooLarge
	}
	return ""
}

// digitStringsPass reports whether err is the decoder's refusal of a string
// where an integer goes: Shopify took "123" for 123 wherever it read an
// integer (its libraries send ids back as strings), so such a body is read
// again with those strings as numbers. Every other body never gets here.
func digitStringsPass(err error) bool {
	var typeErr *json.UnmarshalTypeError
	if !errors.As(err, &typeErr) || typeErr.Value != "string" {
		return false
	}
	return isInteger(typeErr.Type)
}

func isInteger(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// integerStrings rewrites raw, an object decoded into t, with every string
// of decimal digits (an optional minus sign first) that lands in an integer
// of t written as that number, then normalizes its numbers and checks its
// ids' range as normalizeNumbers does. Strings anywhere else, and strings
// that are not digits, stay as they are: the decoder refuses them, naming
// the field.
func integerStrings(raw []byte, t reflect.Type) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw, nil // the real decode reports it
	}
	v, err := walkNumbers(digitsToNumbers(t, v), "")
	if err != nil {
		return nil, err
	}
	if b, err := json.Marshal(v); err == nil {
		return b, nil
	}
	return raw, nil // the real decode reports it
}

// digitsToNumbers walks v beside the type it decodes into. A type with a
// decoder of its own is left to it, except a wrapper like admin.Optional (a
// struct with a decoder and a Value field), whose Value is what the JSON
// value decodes into.
func digitsToNumbers(t reflect.Type, v any) any {
	for {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if !reflect.PointerTo(t).Implements(unmarshaler) {
			break
		}
		if t.Kind() != reflect.Struct {
			return v
		}
		f, ok := t.FieldByName("Value")
		if !ok {
			return v
		}
		t = f.Type
	}
	switch x := v.(type) {
	case string:
		if isInteger(t) && isDigits(x) {
			return canonicalDigits(x)
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i, e := range x {
				x[i] = digitsToNumbers(t.Elem(), e)
			}
		}
	case map[string]any:
		switch t.Kind() {
		case reflect.Map:
			for k, e := range x {
				x[k] = digitsToNumbers(t.Elem(), e)
			}
		case reflect.Struct:
			for k, e := range x {
				if ft := fieldByJSONName(t, k); ft != nil {
					x[k] = digitsToNumbers(ft, e)
				}
			}
		}
	}
	return v
}

// canonicalDigits writes digits as a JSON number: without leading zeros
// ("007" is 7, as Rails read it) and without the minus sign of a zero.
func canonicalDigits(s string) json.Number {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0")
	switch {
	case s == "":
		return "0"
	case neg:
		return json.Number("-" + s)
	}
	return json.Number(s)
}

// isDigits reports whether s is an integer literal: decimal digits, a minus
// sign first at most (so "-1" gets the message -1 gets).
func isDigits(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
