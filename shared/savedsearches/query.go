package savedsearches

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/countries/country"
	"github.com/storeadmin/adminapi/shared/savedsearches/customerindex"
)

// Query is a parsed saved-search query: every term must match.
type Query struct {
	terms     []term
	byCountry bool // a country term: the default countries are read
}

type relation int8

const (
	eq relation = iota
	gt
	lt
	ge
	le
)

func (c relation) holds(a, b int64) bool {
	switch c {
	case gt:
		return a > b
	case lt:
		return a < b
	case ge:
		return a >= b
	case le:
		return a <= b
	}
	return a == b
}

type termKind int8

const (
	kMarketing termKind = iota
	kCountry
	kOrdersCount
	kSpent
	kOrderDate     // any order's day
	kLastOrderDate // the last order's day
	kState
	kTag
	kAbandoned // abandoned since (seconds before now)
	kPlaced    // last order since (seconds before now)
	kWord
)

type term struct {
	kind termKind
	op   relation
	num  int64
	str  string
}

// Term names (docs/openapi.yaml: schema CustomerSavedSearch's examples and the
// names chosen for the labels the spec leaves unnamed, docs/spec-gaps.md).
var termNames = map[string]termKind{
	"accepts_marketing": kMarketing,
	"country":           kCountry,
	"location":          kCountry,
	"orders_count":      kOrdersCount,
	"total_spent":       kSpent,
	"order_date":        kOrderDate,
	"last_order_date":   kLastOrderDate,
	"state":             kState,
	"tag":               kTag,
	"abandoned_order":   kAbandoned,
	"placed_order":      kPlaced,
}

// States are the account statuses of the state term.
var States = []string{"declined", "disabled", "enabled", "invited"}

const day = 24 * 60 * 60

var periods = map[string]int64{"last_week": 7 * day, "last_month": 30 * day, "last_3_months": 90 * day, "last_year": 365 * day}

// tokens splits a query on white space outside single quotes, dropping the
// quotes: country:'United States' is one token.
func tokens(q string) []string {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range q {
		switch {
		case r == '\'':
			quoted, any = !quoted, true
		case unicode.IsSpace(r) && !quoted:
			if any {
				out = append(out, cur.String())
			}
			cur.Reset()
			any = false
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if any {
		out = append(out, cur.String())
	}
	return out
}

// comparison splits an optional >, <, >= or <= from a value; > means
// greater (more orders, more spent, a later day), as in the spec's
// example names (docs/spec-gaps.md).
func comparison(v string) (relation, string) {
	for _, p := range []struct {
		s string
		c relation
	}{{">=", ge}, {"<=", le}, {">", gt}, {"<", lt}} {
		if strings.HasPrefix(v, p.s) {
			return p.c, v[len(p.s):]
		}
	}
	return eq, v
}

// dayOf reads a yyyy-m-d date as a yyyymmdd number.
func dayOf(s string) (int64, bool) {
	t, err := time.Parse("2006-1-2", s)
	if err != nil {
		return 0, false
	}
	return int64(customerindex.Day(t)), true
}

// isName is a term name's shape: a letter, then letters, digits and _.
func isName(s string) bool {
	if s == "" || !unicode.IsLetter(rune(s[0])) {
		return false
	}
	for _, r := range s {
		if r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return true
}

// ParseQuery parses a query; a blank one, an unknown term or a value a
// term does not take is a 422 on search_terms.
func ParseQuery(q string) (Query, error) {
	parsed, msg := parseQuery(q)
	if msg != "" {
		return parsed, admin.Invalid(searchTerms, msg)
	}
	return parsed, nil
}

func parseQuery(q string) (Query, string) {
	var out Query
	toks := tokens(q)
	if len(toks) == 0 {
		return out, admin.MsgBlank
	}
	for _, tok := range toks {
		name, value, isTerm := strings.Cut(tok, ":")
		if !isTerm || !isName(name) {
			out.terms = append(out.terms, term{kind: kWord, str: strings.ToLower(tok)})
			continue
		}
		kind, known := termNames[strings.ToLower(name)]
		if !known {
			return out, "has an unknown term: " + name
		}
		t, ok := parseTerm(kind, strings.TrimSpace(value))
		if !ok {
			return out, "has an invalid value for " + strings.ToLower(name) + ": " + value
		}
		out.byCountry = out.byCountry || kind == kCountry
		out.terms = append(out.terms, t)
	}
	return out, ""
}

func parseTerm(kind termKind, v string) (term, bool) {
	t := term{kind: kind}
	switch kind {
	case kMarketing:
		t.num = map[string]int64{"0": 0, "1": 1, "false": 0, "true": 1}[v]
		return t, v == "0" || v == "1" || v == "true" || v == "false"
	case kCountry:
		code, _, ok := country.Lookup(v)
		t.str = code
		return t, ok
	case kOrdersCount:
		var rest string
		t.op, rest = comparison(v)
		n, err := strconv.ParseInt(rest, 10, 64)
		t.num = n
		return t, err == nil && n >= 0
	case kSpent:
		var rest string
		t.op, rest = comparison(v)
		c, ok := customerindex.Cents(rest)
		t.num = c
		return t, ok && rest != "" && !strings.ContainsAny(rest, "eE+")
	case kOrderDate, kLastOrderDate:
		var rest string
		t.op, rest = comparison(v)
		d, ok := dayOf(rest)
		t.num = d
		return t, ok
	case kPlaced:
		if p, ok := periods[v]; ok {
			t.num = p
			return t, true
		}
		var rest string
		t.op, rest = comparison(v) // a date prefixed by > or < (schema CustomerSavedSearch)
		d, ok := dayOf(rest)
		t.kind, t.num = kOrderDate, d
		return t, ok
	case kAbandoned:
		p, ok := periods[v]
		t.num = p
		return t, ok && (v == "last_week" || v == "last_month")
	case kState:
		t.str = strings.ToLower(v)
		for _, s := range States {
			if s == t.str {
				return t, true
			}
		}
		return t, false
	case kTag:
		t.str = strings.ToLower(v)
		return t, v != ""
	}
	return t, false
}

// Match reports whether every term holds for the entry; countryOf is the
// customer's default address's country code, now the time of the request.
func (q *Query) Match(e *customerindex.Entry, countryOf string, now int64) bool {
	for i := range q.terms {
		t := &q.terms[i]
		ok := false
		switch t.kind {
		case kMarketing:
			ok = e.AcceptsMarketing == (t.num == 1)
		case kCountry:
			ok = countryOf == t.str
		case kOrdersCount:
			ok = t.op.holds(e.OrdersCount, t.num)
		case kSpent:
			ok = t.op.holds(e.SpentCents, t.num)
		case kOrderDate:
			ok = e.OrderDay(func(d int64) bool { return t.op.holds(d, t.num) })
		case kLastOrderDate:
			last := e.LastOrderDay()
			ok = last != 0 && t.op.holds(last, t.num)
		case kState:
			ok = e.State == t.str
		case kTag:
			ok = e.HasTag(t.str)
		case kPlaced:
			ok = e.LastOrderAt != 0 && e.LastOrderAt >= now-t.num
		case kAbandoned:
			ok = e.AbandonedAt != 0 && e.AbandonedAt >= now-t.num
		case kWord:
			ok = strings.Contains(e.Email, t.str) || strings.Contains(e.FirstName, t.str) ||
				strings.Contains(e.LastName, t.str) || strings.Contains(e.Note, t.str) ||
				(strings.Contains(t.str, " ") && strings.Contains(e.FirstName+" "+e.LastName, t.str))
		}
		if !ok {
			return false
		}
	}
	return true
}

// Money is a decimal amount, read from a JSON string or number and written
// as a string with two decimals (spec conventions 6).
type Money string

func (m *Money) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*m = "0.00"
		return nil
	}
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	c, ok := customerindex.Cents(s)
	if !ok {
		return &json.UnsupportedValueError{Str: s}
	}
	*m = Money(centsString(c))
	return nil
}

func centsString(c int64) string {
	sign := ""
	if c < 0 {
		sign, c = "-", -c
	}
	return sign + strconv.FormatInt(c/100, 10) + "." + strconv.FormatInt(100+c%100, 10)[1:]
}
