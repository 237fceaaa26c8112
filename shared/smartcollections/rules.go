package smartcollections

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
)

// Rule is one condition of a smart collection (schema SmartCollection).
type Rule struct {
	Column    string `json:"column"`
	Relation  string `json:"relation"`
	Condition string `json:"condition"`
}

// Columns of schema SmartCollection, tag included.
const (
	ColumnTitle          = "title"
	ColumnType           = "type"
	ColumnVendor         = "vendor"
	ColumnVariantPrice   = "variant_price"
	ColumnCompareAtPrice = "variant_compare_at_price"
	ColumnWeight         = "variant_weight"
	ColumnInventory      = "variant_inventory"
	ColumnVariantTitle   = "variant_title"
	ColumnTag            = "tag"
)

// Relations of schema SmartCollection.
const (
	RelationEquals      = "equals"
	RelationGreaterThan = "greater_than"
	RelationLessThan    = "less_than"
	RelationStartsWith  = "starts_with"
	RelationEndsWith    = "ends_with"
	RelationContains    = "contains"
)

// Columns and Relations list the allowed values in the spec's order.
var (
	Columns = []string{ColumnTitle, ColumnType, ColumnVendor, ColumnVariantPrice, ColumnCompareAtPrice,
		ColumnWeight, ColumnInventory, ColumnVariantTitle, ColumnTag}
	Relations = []string{RelationEquals, RelationGreaterThan, RelationLessThan, RelationStartsWith, RelationEndsWith, RelationContains}
)

// numeric reports whether a column compares numbers: its condition must be
// a number, and it takes equals, greater_than and less_than; the text
// columns take equals, starts_with, ends_with and contains.
func numeric(column string) bool {
	switch column {
	case ColumnVariantPrice, ColumnCompareAtPrice, ColumnWeight, ColumnInventory:
		return true
	}
	return false
}

func known(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Limits of a rule set.
const (
	MaxRules     = 60
	maxCondition = 255
)

// parseRules reads the `rules` input: an array of {column, relation,
// condition} objects, null or [] for none. Every problem is a message on
// field "rules"; the rules are returned normalized (condition trimmed).
func parseRules(raw json.RawMessage, v *admin.Validation) []Rule {
	raw = bytes.TrimSpace(raw)
	if string(raw) == "null" {
		return []Rule{}
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		v.Add("rules", "must be an array of rules")
		return nil
	}
	if len(list) > MaxRules {
		v.Add("rules", admin.TooMany(MaxRules, "rules"))
		return nil
	}
	out := make([]Rule, 0, len(list))
	seen := map[string]bool{}
	add := func(msg string) {
		if !seen[msg] {
			seen[msg] = true
			v.Add("rules", msg)
		}
	}
	for _, item := range list {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(item, &fields); err != nil || fields == nil {
			add("must be an array of rules")
			continue
		}
		text := func(name string) (string, bool) {
			b := bytes.TrimSpace(fields[name])
			if len(b) == 0 || string(b) == "null" {
				return "", true
			}
			var s string
			if err := json.Unmarshal(b, &s); err == nil {
				return strings.TrimSpace(s), true
			}
			if name == "condition" && len(b) > 0 && (b[0] == '-' || b[0] >= '0' && b[0] <= '9') {
				var n json.Number
				if json.Unmarshal(b, &n) == nil {
					return n.String(), true // a number given for a numeric condition
				}
			}
			add(name + " must be a string")
			return "", false
		}
		r := Rule{}
		var ok1, ok2, ok3 bool
		r.Column, ok1 = text("column")
		r.Relation, ok2 = text("relation")
		r.Condition, ok3 = text("condition")
		if !ok1 || !ok2 || !ok3 {
			continue
		}
		if msg := r.problem(); msg != "" {
			add(msg)
			continue
		}
		out = append(out, r)
	}
	return out
}

// problem is what is wrong with a rule, or "".
func (r *Rule) problem() string {
	switch {
	case r.Column == "":
		return "column can't be blank"
	case !known(Columns, r.Column):
		return "column " + strconv.Quote(r.Column) + " is not included in the list (" + strings.Join(Columns, ", ") + ")"
	case r.Relation == "":
		return "relation can't be blank"
	case !known(Relations, r.Relation):
		return "relation " + strconv.Quote(r.Relation) + " is not included in the list (" + strings.Join(Relations, ", ") + ")"
	case numeric(r.Column) && textOnly(r.Relation):
		return "relation " + strconv.Quote(r.Relation) + " does not apply to the numeric column " + strconv.Quote(r.Column) + " (use equals, greater_than or less_than)"
	case !numeric(r.Column) && (r.Relation == RelationGreaterThan || r.Relation == RelationLessThan):
		return "relation " + strconv.Quote(r.Relation) + " applies only to the numeric columns (variant_price, variant_compare_at_price, variant_weight, variant_inventory), not " + strconv.Quote(r.Column)
	case r.Condition == "":
		return "condition can't be blank"
	case utf8.RuneCountInString(r.Condition) > maxCondition:
		return "condition is too long (maximum is 255 characters)"
	}
	if numeric(r.Column) {
		if _, ok := parseNumber(r.Column, r.Condition); !ok {
			if r.Column == ColumnInventory {
				return "condition " + strconv.Quote(r.Condition) + " must be an integer for column " + strconv.Quote(r.Column)
			}
			return "condition " + strconv.Quote(r.Condition) + " must be a number for column " + strconv.Quote(r.Column)
		}
	}
	return ""
}

func textOnly(relation string) bool {
	return relation == RelationStartsWith || relation == RelationEndsWith || relation == RelationContains
}

// parseNumber reads a numeric condition in the column's unit: cents for
// prices, the integer for inventory, the number itself for weight.
func parseNumber(column, s string) (float64, bool) {
	switch column {
	case ColumnVariantPrice, ColumnCompareAtPrice:
		m, err := admin.ParseMoney(s)
		return float64(m), err == nil
	case ColumnInventory:
		n, ok := admin.ParseIntegral(s)
		return float64(n), ok && n >= -maxNumber && n <= maxNumber
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil && !math.IsNaN(f) && math.Abs(f) <= maxNumber
}

// maxNumber bounds a weight or inventory condition (the document's
// minimum and maximum): no stock level or weight reaches it, and beyond it
// float64 comparisons lose the units.
const maxNumber = 1e15

// compiled is a rule ready to test many products: its condition lower-cased
// or parsed once.
type compiled struct {
	column, relation string
	text             string  // lower-cased condition (text columns)
	number           float64 // parsed condition (numeric columns)
	valid            bool
}

// matcher is a compiled rule set.
type matcher struct {
	rules       []compiled
	disjunctive bool
}

func compile(rules []Rule, disjunctive bool) matcher {
	m := matcher{rules: make([]compiled, len(rules)), disjunctive: disjunctive}
	for i, r := range rules {
		c := compiled{column: r.Column, relation: r.Relation, valid: r.problem() == ""}
		if numeric(r.Column) {
			c.number, _ = parseNumber(r.Column, r.Condition)
		} else {
			c.text = strings.ToLower(strings.TrimSpace(r.Condition))
		}
		m.rules[i] = c
	}
	return m
}

// Matches reports whether a product with its variants belongs to a smart
// collection with these rules: all of them must hold, or with disjunctive
// any one. A collection without rules holds no products. A variant_* rule
// holds when any variant satisfies it; text comparisons ignore case; a tag
// rule holds when any of the product's comma-separated tags satisfies it.
func Matches(rules []Rule, disjunctive bool, p *catalog.Product, vs []catalog.Variant) bool {
	m := compile(rules, disjunctive)
	return m.matches(p, vs)
}

func (m *matcher) matches(p *catalog.Product, vs []catalog.Variant) bool {
	if len(m.rules) == 0 || p == nil {
		return false
	}
	for i := range m.rules {
		ok := m.rules[i].holds(p, vs)
		if ok && m.disjunctive {
			return true
		}
		if !ok && !m.disjunctive {
			return false
		}
	}
	return !m.disjunctive
}

func (c *compiled) holds(p *catalog.Product, vs []catalog.Variant) bool {
	if !c.valid {
		return false
	}
	switch c.column {
	case ColumnTitle:
		return c.textHolds(p.Title)
	case ColumnType:
		return c.textHolds(p.ProductType)
	case ColumnVendor:
		return c.textHolds(p.Vendor)
	case ColumnTag:
		for t := range strings.SplitSeq(p.Tags, ",") {
			if t = strings.TrimSpace(t); t != "" && c.textHolds(t) {
				return true
			}
		}
		return false
	}
	for i := range vs {
		v := &vs[i]
		var ok bool
		switch c.column {
		case ColumnVariantTitle:
			ok = c.textHolds(v.Title)
		case ColumnVariantPrice:
			ok = c.numberHolds(float64(v.Price))
		case ColumnCompareAtPrice:
			ok = v.CompareAtPrice != nil && c.numberHolds(float64(*v.CompareAtPrice))
		case ColumnWeight:
			ok = c.numberHolds(v.Weight)
		case ColumnInventory:
			ok = c.numberHolds(float64(v.InventoryQuantity))
		}
		if ok {
			return true
		}
	}
	return false
}

func (c *compiled) textHolds(value string) bool {
	v := strings.ToLower(strings.TrimSpace(value))
	switch c.relation {
	case RelationEquals:
		return v == c.text
	case RelationStartsWith:
		return strings.HasPrefix(v, c.text)
	case RelationEndsWith:
		return strings.HasSuffix(v, c.text)
	case RelationContains:
		return strings.Contains(v, c.text)
	}
	return false
}

// weightEpsilon absorbs float noise in weights (0.1+0.2 and 0.3 are equal).
const weightEpsilon = 1e-9

func (c *compiled) numberHolds(value float64) bool {
	eps := 0.0
	if c.column == ColumnWeight {
		eps = weightEpsilon
	}
	switch c.relation {
	case RelationEquals:
		return math.Abs(value-c.number) <= eps
	case RelationGreaterThan:
		return value > c.number+eps
	case RelationLessThan:
		return value < c.number-eps
	}
	return false
}
