package graphql

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Shopify's calculated query cost, worked out before a query runs: a
// scalar or enum field costs 0, an object 1, a connection 2 plus its page
// size (first or last) times one node's cost, a mutation 10.
const (
	MutationCost = 10
	// MaxPage is the most a connection answers at once.
	MaxPage = 250
	// MaxCost is the most a single query may cost (MAX_COST_EXCEEDED).
	MaxCost = 1000
)

// pricer walks an operation.
type pricer struct {
	schema    *ast.Schema
	vars      map[string]any
	fragments ast.FragmentDefinitionList
	// returned, when pricing what ran, is the nodes each connection
	// answered; a connection that never ran answered none.
	returned map[*ast.Field]int
}

// requestedCost prices op, or refuses a connection without a page size or
// with one above MaxPage.
func requestedCost(sch *ast.Schema, doc *ast.QueryDocument, op *ast.OperationDefinition, vars map[string]any) (int, *Error) {
	return pricer{schema: sch, vars: vars, fragments: doc.Fragments}.operation(op)
}

func (p pricer) operation(op *ast.OperationDefinition) (int, *Error) {
	if op.Operation == ast.Mutation {
		total := 0
		for _, f := range p.fields(op.SelectionSet, map[string]bool{}) {
			total += MutationCost
			if _, err := p.set(f.SelectionSet); err != nil { // page sizes are checked all the same
				return 0, err
			}
		}
		return total, nil
	}
	return p.set(op.SelectionSet)
}

// fields lists the fields of set, fragments expanded.
func (p pricer) fields(set ast.SelectionSet, visited map[string]bool) []*ast.Field {
	var out []*ast.Field
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			out = append(out, s)
		case *ast.InlineFragment:
			out = append(out, p.fields(s.SelectionSet, visited)...)
		case *ast.FragmentSpread:
			if !visited[s.Name] {
				visited[s.Name] = true
				if fd := p.fragments.ForName(s.Name); fd != nil {
					out = append(out, p.fields(fd.SelectionSet, visited)...)
				}
			}
		}
	}
	return out
}

func (p pricer) set(set ast.SelectionSet) (int, *Error) {
	total := 0
	for _, f := range p.fields(set, map[string]bool{}) {
		c, err := p.field(f)
		if err != nil {
			return 0, err
		}
		total += c
	}
	return total, nil
}

// field prices one field and what it selects.
func (p pricer) field(f *ast.Field) (int, *Error) {
	if f.Definition == nil || strings.HasPrefix(f.Name, "__") {
		return 0, nil
	}
	def := p.schema.Types[f.Definition.Type.Name()]
	if def == nil || def.Kind == ast.Scalar || def.Kind == ast.Enum {
		return 0, nil
	}
	if IsConnection(def.Name) {
		n, err := PageSize(f.ArgumentMap(p.vars))
		if err != nil {
			err.Path = []any{f.Alias}
			if f.Alias == "" {
				err.Path = []any{f.Name}
			}
			if f.Position != nil {
				err.Locations = []Location{{f.Position.Line, f.Position.Column}}
			}
			return 0, err
		}
		if p.returned != nil {
			n = p.returned[f]
		}
		node, err := p.node(f.SelectionSet)
		if err != nil {
			return 0, err
		}
		return 2 + n*node, nil
	}
	inner, err := p.set(f.SelectionSet)
	if err != nil {
		return 0, err
	}
	if ids, ok := f.ArgumentMap(p.vars)["ids"].([]any); ok && f.Definition.Type.Elem != nil {
		return len(ids) * (1 + inner), nil // nodes(ids:)
	}
	return 1 + inner, nil
}

// node is the cost of one node of a connection: the larger of what edges {
// node } and nodes select (pageInfo and cursors are free).
func (p pricer) node(set ast.SelectionSet) (int, *Error) {
	most := 0
	for _, f := range p.fields(set, map[string]bool{}) {
		var c int
		var err *Error
		switch f.Name {
		case "nodes":
			c, err = p.set(f.SelectionSet)
			c++
		case "edges":
			for _, g := range p.fields(f.SelectionSet, map[string]bool{}) {
				if g.Name == "node" {
					var inner int
					inner, err = p.set(g.SelectionSet)
					c = max(c, inner+1)
				}
			}
		}
		if err != nil {
			return 0, err
		}
		most = max(most, c)
	}
	return most, nil
}

// IsConnection reports whether a type is a Relay connection.
func IsConnection(typeName string) bool { return strings.HasSuffix(typeName, "Connection") }

// PageSize reads a connection's first or last: one of them, from 0 to
// MaxPage.
func PageSize(args map[string]any) (int, *Error) {
	first, hasFirst := intArg(args, "first")
	last, hasLast := intArg(args, "last")
	switch {
	case !hasFirst && !hasLast:
		return 0, Errorf("BAD_REQUEST", "you must provide one of first or last")
	case hasFirst && hasLast:
		return 0, Errorf("BAD_REQUEST", "providing both first and last is not supported")
	}
	n := first
	if hasLast {
		n = last
	}
	if n < 0 || n > MaxPage {
		return 0, Errorf("BAD_REQUEST", "The first and last arguments must be between 0 and %d", MaxPage)
	}
	return n, nil
}

func intArg(args map[string]any, name string) (int, bool) {
	switch v := args[name].(type) {
	case int64:
		return int(v), true
	case int:
		return v, true
	case float64:
		return int(v), true
	}
	return 0, false
}
