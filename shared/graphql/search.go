package graphql

import (
	"net/url"
	"strings"
)

// Term is one term of Shopify's search syntax: field, a comparison
// (":", ":>", ":>=", ":<", ":<="), and a value.
type Term struct {
	Field, Op, Value string
}

// ParseSearch reads a query: argument as Shopify's search syntax: terms
// separated by spaces (AND, which may be written), each field:value, the
// value in double quotes when it holds spaces. OR, NOT, negation and
// terms without a field are refused by name: the lists here filter by
// fields alone.
func ParseSearch(q string) ([]Term, error) {
	var out []Term
	rest := strings.TrimSpace(q)
	for rest != "" {
		var tok string
		tok, rest = nextToken(rest)
		switch {
		case tok == "AND":
			continue
		case tok == "OR" || tok == "NOT" || strings.HasPrefix(tok, "-"):
			return nil, Errorf("BAD_REQUEST", "query: %s is not supported here: give field:value terms, all of which must match", tok)
		}
		field, value, ok := strings.Cut(tok, ":")
		if !ok || field == "" {
			return nil, Errorf("BAD_REQUEST", "query: %q is not a field:value term", tok)
		}
		op := ":"
		for _, o := range []string{">=", "<=", ">", "<"} {
			if v, ok := strings.CutPrefix(value, o); ok {
				op, value = ":"+o, v
				break
			}
		}
		out = append(out, Term{Field: field, Op: op, Value: unquote(value)})
	}
	return out, nil
}

// nextToken splits off the first token, keeping a quoted value whole.
func nextToken(s string) (string, string) {
	inQuote := false
	for i, r := range s {
		switch {
		case r == '"':
			inQuote = !inQuote
		case r == ' ' && !inQuote:
			return s[:i], strings.TrimLeft(s[i:], " ")
		}
	}
	return s, ""
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		return s[1 : len(s)-1]
	}
	return s
}

// RESTFilters turns terms into the REST list's query parameters: exact
// fields by their name (title, handle, path, ...), created_at and
// updated_at comparisons as their _min and _max, published_status as it
// is. allowed lists the fields a list takes; another is refused by name.
func RESTFilters(terms []Term, allowed ...string) (url.Values, error) {
	v := url.Values{}
	for _, t := range terms {
		ok := false
		for _, a := range allowed {
			ok = ok || a == t.Field
		}
		if !ok {
			return nil, Errorf("BAD_REQUEST", "query: %s is not a filter of this list; it takes %s", t.Field, strings.Join(allowed, ", "))
		}
		switch {
		case strings.HasSuffix(t.Field, "_at") && t.Op != ":":
			bound := "_min"
			if strings.HasPrefix(t.Op, ":<") {
				bound = "_max"
			}
			v.Set(t.Field+bound, t.Value)
		case strings.HasSuffix(t.Field, "_at"):
			v.Set(t.Field+"_min", t.Value)
			v.Set(t.Field+"_max", t.Value)
		case t.Op != ":":
			return nil, Errorf("BAD_REQUEST", "query: %s takes only field:value", t.Field)
		default:
			v.Set(t.Field, t.Value)
		}
	}
	return v, nil
}
