package delivery

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"sort"
	"strings"
)

// toXML renders a payload the way the original API's XML webhooks looked:
// the resource name as root, dasherized element names, arrays marked
// type="array" with singular children, nulls marked nil="true".
func toXML(root string, obj map[string]json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(xml.Header)
	raw, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	writeXML(&b, dasherize(root), v)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

func writeXML(b *bytes.Buffer, name string, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("<" + name + ` nil="true"/>`)
	case map[string]any:
		b.WriteString("<" + name + ">")
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			writeXML(b, dasherize(k), x[k])
		}
		b.WriteString("</" + name + ">")
	case []any:
		b.WriteString("<" + name + ` type="array">`)
		child := singular(name)
		for _, e := range x {
			writeXML(b, child, e)
		}
		b.WriteString("</" + name + ">")
	case json.Number:
		typ := "integer"
		if strings.ContainsAny(string(x), ".eE") {
			typ = "decimal"
		}
		b.WriteString("<" + name + ` type="` + typ + `">` + string(x) + "</" + name + ">")
	case bool:
		val := "false"
		if x {
			val = "true"
		}
		b.WriteString("<" + name + ` type="boolean">` + val + "</" + name + ">")
	case string:
		b.WriteString("<" + name + ">")
		_ = xml.EscapeText(b, []byte(x)) // a buffer's writes do not fail
		b.WriteString("</" + name + ">")
	}
}

// dasherize turns a JSON key into an element name: underscores become
// hyphens, and anything not allowed in a name is dropped.
func dasherize(k string) string {
	var s strings.Builder
	for i, r := range k {
		switch {
		case r == '_':
			s.WriteByte('-')
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r == '-' && i > 0, r >= '0' && r <= '9' && i > 0:
			s.WriteRune(r)
		}
	}
	if s.Len() == 0 {
		return "value"
	}
	return s.String()
}

func singular(name string) string {
	switch {
	case strings.HasSuffix(name, "ies"):
		return strings.TrimSuffix(name, "ies") + "y"
	case strings.HasSuffix(name, "ses"), strings.HasSuffix(name, "xes"):
		return strings.TrimSuffix(name, "es")
	case strings.HasSuffix(name, "s") && len(name) > 1:
		return strings.TrimSuffix(name, "s")
	}
	return name + "-item"
}
