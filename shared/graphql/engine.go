package graphql

import (
	"context"
	"errors"
	"sync"
	"unicode/utf8"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// Schema is a schema and its root resolvers. Its SDL is parsed on first
// use, never at package init: a function that serves no GraphQL pays
// nothing, and one that does pays once per process.
type Schema struct {
	SDL string
	// Query and Mutation resolve the root fields.
	Query, Mutation Object
	// MapError, when set, turns a resolver's error that is no *Error into
	// one (a nil or other answer: an internal error).
	MapError func(error) error

	once   sync.Once
	parsed *ast.Schema
	rules  *rules.Rules
	err    error
}

// AST returns the parsed schema.
func (s *Schema) AST() (*ast.Schema, error) {
	s.once.Do(func() {
		s.parsed, s.err = gqlparserLoad(s.SDL)
		s.rules = rules.NewDefaultRules()
	})
	return s.parsed, s.err
}

func gqlparserLoad(sdl string) (*ast.Schema, error) {
	return validator.LoadSchema(append([]*ast.Source{validator.Prelude}, &ast.Source{Name: "schema.graphql", Input: sdl})...)
}

// Request is a GraphQL request as Shopify's clients send it.
type Request struct {
	Query         string         `json:"query"`
	Variables     map[string]any `json:"variables"`
	OperationName string         `json:"operationName"`
}

// Prepared is a request parsed, validated and priced, ready to run.
type Prepared struct {
	schema *Schema
	ast    *ast.Schema
	doc    *ast.QueryDocument
	op     *ast.OperationDefinition
	vars   map[string]any
	// Cost is the requested cost (Cost).
	Cost int
	// Mutation says whether the operation is a mutation.
	Mutation bool
}

// MaxQueryLength bounds a query's text.
const MaxQueryLength = 100_000

// Prepare parses and validates req against s and prices it. Its errors
// are the answer's errors (a syntax error, an unknown field, a bad
// variable), each with its locations.
func (s *Schema) Prepare(req *Request) (*Prepared, []*Error) {
	sch, err := s.AST()
	if err != nil {
		return nil, []*Error{Errorf("INTERNAL_SERVER_ERROR", "the schema cannot be loaded: %v", err)}
	}
	if req.Query == "" {
		return nil, []*Error{Errorf("BAD_REQUEST", "No query string was present")}
	}
	if utf8.RuneCountInString(req.Query) > MaxQueryLength {
		return nil, []*Error{Errorf("BAD_REQUEST", "The query is longer than %d characters", MaxQueryLength)}
	}
	doc, perr := parser.ParseQuery(&ast.Source{Name: "query", Input: req.Query})
	if perr != nil {
		return nil, fromGQL(gqlerror.List{asGQL(perr)})
	}
	if errs := validator.ValidateWithRules(sch, doc, s.rules); len(errs) > 0 {
		return nil, fromGQL(errs)
	}
	op, gerr := operation(doc, req.OperationName)
	if gerr != nil {
		return nil, []*Error{gerr}
	}
	vars, verr := validator.VariableValues(sch, op, req.Variables)
	if verr != nil {
		return nil, fromGQL(gqlerror.List{asGQL(verr)})
	}
	p := &Prepared{schema: s, ast: sch, doc: doc, op: op, vars: vars, Mutation: op.Operation == ast.Mutation}
	cost, cerr := requestedCost(sch, doc, op, vars)
	if cerr != nil {
		return nil, []*Error{cerr}
	}
	p.Cost = cost
	return p, nil
}

// operation picks the operation to run: the one named, or the only one.
func operation(doc *ast.QueryDocument, name string) (*ast.OperationDefinition, *Error) {
	if name != "" {
		if op := doc.Operations.ForName(name); op != nil {
			return op, nil
		}
		return nil, Errorf("BAD_REQUEST", "An operation name is required: no operation named %q", name)
	}
	if len(doc.Operations) != 1 {
		return nil, Errorf("BAD_REQUEST", "An operation name is required when the document has several operations")
	}
	return doc.Operations[0], nil
}

// Result is the answer of a run.
type Result struct {
	Data   any
	Errors []*Error
	// Actual is the cost of what was resolved.
	Actual int
}

// Run executes p. Root fields of a mutation run one after the other, as
// the specification asks; a query's do too (the store serializes them
// anyway, and the order keeps answers reproducible).
func (p *Prepared) Run(ctx context.Context) Result {
	return p.RunOn(ctx, p.schema.Query, p.schema.Mutation)
}

// RunOn executes p over the roots given in place of the schema's: objects
// made for this one request, which carry what it shares between its
// fields (a loader batching their reads) explicitly, not in ctx.
func (p *Prepared) RunOn(ctx context.Context, query, mutation Object) Result {
	e := &executor{schema: p.ast, vars: p.vars, fragments: p.doc.Fragments, returned: map[*ast.Field]int{}, mapErr: p.schema.MapError}
	e.intro = func(f *ast.Field) (any, error) { return introspect(p.ast, f, e.vars) }
	root, def := query, p.ast.Query
	if p.Mutation {
		root, def = mutation, p.ast.Mutation
	}
	data, ok := e.object(ctx, def, root, p.op.SelectionSet, nil)
	r := Result{Errors: e.errors, Actual: actualCost(p, e)}
	if ok {
		r.Data = data
	}
	return r
}

// actualCost prices the operation with the nodes each connection
// answered in place of its page size, never above what was requested.
func actualCost(p *Prepared, e *executor) int {
	a, err := pricer{schema: p.ast, vars: p.vars, fragments: p.doc.Fragments, returned: e.returned}.operation(p.op)
	if err != nil || a > p.Cost {
		return p.Cost
	}
	return a
}

func asGQL(err error) *gqlerror.Error {
	var ge *gqlerror.Error
	if errors.As(err, &ge) {
		return ge
	}
	return gqlerror.Wrap(err)
}

// fromGQL turns gqlparser's errors into the answer's.
func fromGQL(list gqlerror.List) []*Error {
	out := make([]*Error, 0, len(list))
	for _, ge := range list {
		e := &Error{Message: ge.Message, Extensions: map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}}
		if ge.Rule == "" && len(ge.Locations) > 0 && ge.Path == nil {
			e.Extensions["code"] = "GRAPHQL_PARSE_FAILED"
		}
		for _, l := range ge.Locations {
			e.Locations = append(e.Locations, Location{l.Line, l.Column})
		}
		out = append(out, e)
	}
	return out
}
