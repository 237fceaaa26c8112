package metafields

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

// Metafield types: Shopify's clients from 2021-07 on send and read `type`
// beside (or instead of) the contract's value_type. number_integer is
// value_type integer; every other type holds its value as a string, as
// value_type string does, and is kept and answered as sent
// (docs/spec-gaps.md).
const (
	TypeSingleLine = "single_line_text_field"
	TypeMultiLine  = "multi_line_text_field"
	TypeInteger    = "number_integer"
)

// MsgTypeValue refuses a value its type cannot hold (a boolean's "yes", a
// date's "2024-02-30").
const MsgTypeValue = "does not suit its type"

// Types are the types a metafield may have: Shopify's of 2024, and each of
// listTypes as list.<type>.
var Types = []string{
	TypeSingleLine, TypeMultiLine, "rich_text_field", TypeInteger, "number_decimal", "boolean", "date",
	"date_time", "json", "url", "color", "weight", "volume", "dimension", "rating", "money", "link",
	"id", "product_reference", "variant_reference", "collection_reference", "page_reference",
	"file_reference", "metaobject_reference", "mixed_reference", "customer_reference", "company_reference",
}

// listTypes may also be list.<type>.
var listTypes = []string{
	TypeSingleLine, TypeInteger, "number_decimal", "date", "date_time", "url", "color", "weight", "volume",
	"dimension", "rating", "link", "product_reference", "variant_reference", "collection_reference",
	"page_reference", "file_reference", "metaobject_reference", "mixed_reference", "customer_reference",
	"company_reference",
}

// KnownType reports whether t is a metafield type.
func KnownType(t string) bool {
	if e, ok := strings.CutPrefix(t, "list."); ok {
		return slices.Contains(listTypes, e)
	}
	return slices.Contains(Types, t)
}

// valueTypeOf is the contract's value_type of a type.
func valueTypeOf(t string) string {
	if t == TypeInteger {
		return "integer"
	}
	return "string"
}

// typeOf is the type of a record written with value_type alone: integer is
// number_integer, a string a single or multi-line text field by its value.
func typeOf(valueType string, value json.RawMessage) string {
	if valueType == "integer" {
		return TypeInteger
	}
	if strings.Contains(string(value), `\n`) || strings.Contains(string(value), `\r`) {
		return TypeMultiLine
	}
	return TypeSingleLine
}

// TypeName is the metafield's type, derived from value_type for a record
// written before types were kept.
func (m *Metafield) TypeName() string {
	if m.Type == "" {
		return typeOf(m.ValueType, m.Value)
	}
	return m.Type
}

// kind is a metafield's type and value_type, settled from an input.
type kind struct{ typ, valueType string }

// jsonText reports whether the type's string holds JSON, which a client
// may also send as the JSON itself.
func (k kind) jsonText() bool {
	switch k.typ {
	case "json", "weight", "volume", "dimension", "rating", "money", "link":
		return true
	}
	return strings.HasPrefix(k.typ, "list.")
}

// settle reads type and value_type into in.kind. Either names it; when
// the two disagree, type (the newer) wins, except on an update (stored
// non-nil) where it is the stored type, echoed by a whole-object save
// beside the value_type the client changed. value_type alone keeps the
// stored type if it holds that value_type, else the type follows it
// (typeOf). Neither keeps the stored kind, or is the contract's value_type
// error on create.
func (in *Input) settle(v *admin.Validation, prefix string, stored *Metafield) bool {
	var typ, vt string
	if in.Type != nil {
		if typ = strings.TrimSpace(*in.Type); !KnownType(typ) {
			v.Add(prefix+"type", admin.MsgNotInList)
			return false
		}
	}
	if in.ValueType != nil {
		vt = strings.TrimSpace(*in.ValueType)
	}
	switch {
	case vt == "" && typ == "" && stored != nil:
		in.kind = kind{stored.TypeName(), stored.ValueType}
		return true
	case vt == "" && typ == "":
		v.Add(prefix+"value_type", admin.MsgBlank)
		v.Add(prefix+"value_type", admin.MsgNotInList)
		return false
	case vt != "" && vt != "string" && vt != "integer":
		v.Add(prefix+"value_type", admin.MsgNotInList)
		return false
	case typ != "" && (vt == "" || vt == valueTypeOf(typ) || stored == nil || typ != stored.TypeName()):
		in.kind = kind{typ, valueTypeOf(typ)}
	case stored != nil && valueTypeOf(stored.TypeName()) == vt:
		in.kind = kind{stored.TypeName(), vt}
	default:
		in.kind = kind{"", vt} // validateValue derives the type from the value
	}
	return true
}

// validateValue settles the kind (settle) and checks the value against it:
// blank, or not what its type holds.
func (in *Input) validateValue(v *admin.Validation, prefix string, stored *Metafield) {
	ok := in.settle(v, prefix, stored)
	value, given := in.value()
	if !given {
		switch raw := strings.TrimSpace(string(in.Value)); {
		case ok && raw != "" && strings.ContainsRune("{[tf", rune(raw[0])):
			v.Add(prefix+"value", MsgTypeValue) // JSON or a boolean for a type that holds neither
		default:
			v.Add(prefix+"value", admin.MsgBlank)
		}
		return
	}
	if !ok {
		return
	}
	if in.kind.valueType == "integer" {
		if _, ok := in.integer(); !ok {
			v.Add(prefix+"value", "must be an integer")
		}
		return
	}
	var s string
	if err := json.Unmarshal(value, &s); err != nil { // value() answers a string here
		v.Add(prefix+"value", admin.MsgInvalid)
		return
	}
	if in.kind.typ == "" {
		in.kind.typ = typeOf(in.kind.valueType, value)
	}
	if !validText(in.kind.typ, s) {
		v.Add(prefix+"value", MsgTypeValue)
	}
}

// validText checks a string value against its type, as far as a client
// reading it back relies on: numbers, booleans, dates, URLs, colors and
// JSON parse; a single line has no line break.
func validText(typ, s string) bool {
	switch typ {
	case TypeSingleLine:
		return !strings.ContainsAny(s, "\r\n")
	case "number_decimal":
		return decimalText(s)
	case "boolean":
		return s == "true" || s == "false"
	case "date":
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	case "date_time":
		for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
			if _, err := time.Parse(layout, s); err == nil {
				return true
			}
		}
		return false
	case "url":
		u, err := url.Parse(s)
		return err == nil && slices.Contains([]string{"http", "https", "mailto", "sms", "tel"}, u.Scheme) && (u.Host != "" || u.Opaque != "")
	case "color":
		if len(s) != 7 || s[0] != '#' {
			return false
		}
		for _, c := range s[1:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", c) {
				return false
			}
		}
		return true
	}
	if strings.HasPrefix(typ, "list.") {
		var items []json.RawMessage
		return json.Unmarshal([]byte(s), &items) == nil
	}
	if typ == "json" || (kind{typ: typ}).jsonText() {
		return json.Valid([]byte(s))
	}
	return true
}

// decimalText reports whether s is a decimal number: digits, a sign and a
// fractional part at most.
func decimalText(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	return digitsOnly(whole) && (!dot || digitsOnly(frac))
}

func digitsOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}
