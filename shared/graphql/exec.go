// Package graphql runs GraphQL operations over a schema of this service's
// own (docs/graphql.md): it parses and validates a request (gqlparser),
// prices it as Shopify does before it runs (Cost), executes it over
// resolvers, answers introspection, and writes the answer with Shopify's
// error shapes. It knows no resource: shared/admingraphql holds the Admin
// schema and its resolvers, which call the resources' operations.
package graphql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"time"

	"github.com/vektah/gqlparser/v2/ast"
)

// Object is a value of an object type: it names its type (which an
// interface or union field needs) and resolves each of its fields.
type Object interface {
	TypeName() string
	Field(ctx context.Context, f *Field) (any, error)
}

// Field is a field being resolved: its name, its arguments coerced (with
// the variables and defaults applied), and what the query selects under it
// (a connection reads as many records as its selection needs).
type Field struct {
	Name      string
	Args      map[string]any
	Selection ast.SelectionSet
	Path      []any
}

// Selects reports whether the query selects name directly under f (through
// fragments too).
func (f *Field) Selects(name string) bool {
	return selects(f.Selection, name)
}

func selects(set ast.SelectionSet, name string) bool {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name == name {
				return true
			}
		case *ast.InlineFragment:
			if selects(s.SelectionSet, name) {
				return true
			}
		case *ast.FragmentSpread:
			if s.Definition != nil && selects(s.Definition.SelectionSet, name) {
				return true
			}
		}
	}
	return false
}

// Map is an object whose fields are its entries: for the small objects of
// a schema (PageInfo, Count, a user error).
type Map struct {
	Type   string
	Fields map[string]any
}

// TypeName implements Object.
func (m Map) TypeName() string { return m.Type }

// Field implements Object.
func (m Map) Field(_ context.Context, f *Field) (any, error) { return m.Fields[f.Name], nil }

// Error is an error of the answer's errors list, with Shopify's
// extensions.code (ACCESS_DENIED, THROTTLED, ...).
type Error struct {
	Message    string         `json:"message"`
	Locations  []Location     `json:"locations,omitempty"`
	Path       []any          `json:"path,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
	// Cause is the resolver's error this one reports.
	Cause error `json:"-"`
}

// Location is a place in the query, 1-based.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

func (e *Error) Error() string { return e.Message }

// Errorf is an error with an extensions code.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Message: fmt.Sprintf(format, args...), Extensions: map[string]any{"code": code}}
}

// executor runs one operation.
type executor struct {
	schema    *ast.Schema
	vars      map[string]any
	fragments ast.FragmentDefinitionList
	errors    []*Error
	// returned is how many nodes each connection field answered (its most,
	// where it ran more than once): the actual cost prices those.
	returned map[*ast.Field]int
	// intro answers __schema and __type.
	intro func(f *ast.Field) (any, error)
	// mapErr gives a resolver's other errors their answer (Schema.MapError).
	mapErr func(error) error
}

// field is one response key's fields, merged.
type field struct {
	key    string
	fields []*ast.Field
}

// collect returns the fields of set that apply to an object of type def,
// in query order, those of one response key merged (fragments expanded,
// @skip and @include applied).
func (e *executor) collect(def *ast.Definition, set ast.SelectionSet, out []field, seen map[string]int, visited map[string]bool) []field {
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if !e.included(s.Directives) {
				continue
			}
			key := s.Alias
			if key == "" {
				key = s.Name
			}
			if i, ok := seen[key]; ok {
				out[i].fields = append(out[i].fields, s)
				continue
			}
			seen[key] = len(out)
			out = append(out, field{key: key, fields: []*ast.Field{s}})
		case *ast.InlineFragment:
			if e.included(s.Directives) && e.applies(s.TypeCondition, def) {
				out = e.collect(def, s.SelectionSet, out, seen, visited)
			}
		case *ast.FragmentSpread:
			if !e.included(s.Directives) || visited[s.Name] {
				continue
			}
			visited[s.Name] = true
			fd := e.fragments.ForName(s.Name)
			if fd != nil && e.applies(fd.TypeCondition, def) {
				out = e.collect(def, fd.SelectionSet, out, seen, visited)
			}
		}
	}
	return out
}

// included applies @skip and @include.
func (e *executor) included(ds ast.DirectiveList) bool {
	if d := ds.ForName("skip"); d != nil && d.ArgumentMap(e.vars)["if"] == true {
		return false
	}
	if d := ds.ForName("include"); d != nil && d.ArgumentMap(e.vars)["if"] == false {
		return false
	}
	return true
}

// applies reports whether a fragment on typeCond applies to def.
func (e *executor) applies(typeCond string, def *ast.Definition) bool {
	if typeCond == "" || typeCond == def.Name {
		return true
	}
	cond := e.schema.Types[typeCond]
	if cond == nil {
		return false
	}
	for _, p := range e.schema.GetPossibleTypes(cond) {
		if p.Name == def.Name {
			return true
		}
	}
	return false
}

// object resolves the selection of one object; ok is false when a
// non-null field was null (the object is then null).
func (e *executor) object(ctx context.Context, def *ast.Definition, v Object, set ast.SelectionSet, path []any) (*ordered, bool) {
	fields := e.collect(def, set, nil, map[string]int{}, map[string]bool{})
	out := &ordered{keys: make([]string, 0, len(fields)), vals: make([]any, 0, len(fields))}
	for _, f := range fields {
		first := f.fields[0]
		fpath := append(path[:len(path):len(path)], f.key)
		var val any
		var err error
		switch first.Name {
		case "__typename":
			out.add(f.key, def.Name)
			continue
		case "__schema", "__type":
			val, err = e.intro(first)
		default:
			sel := first.SelectionSet
			for _, more := range f.fields[1:] {
				sel = append(sel[:len(sel):len(sel)], more.SelectionSet...)
			}
			args := first.ArgumentMap(e.vars)
			for _, a := range first.Definition.Arguments {
				if v, ok := args[a.Name]; ok {
					args[a.Name] = coerceIDs(e.schema, a.Type, v)
				}
			}
			val, err = v.Field(ctx, &Field{Name: first.Name, Args: args, Selection: sel, Path: fpath})
		}
		if c, ok := val.(interface{ Len() int }); ok && IsConnection(first.Definition.Type.Name()) {
			if n := c.Len(); n > e.returned[first] {
				e.returned[first] = n
			} else if _, seen := e.returned[first]; !seen {
				e.returned[first] = n
			}
		}
		typ := first.Definition.Type
		if err != nil {
			e.fail(err, first, fpath)
			val = nil
		}
		c, ok := e.complete(ctx, typ, val, f.fields, fpath, err != nil)
		if !ok {
			return nil, false
		}
		out.add(f.key, c)
	}
	return out, true
}

// fail records a resolver's error at the field.
func (e *executor) fail(err error, f *ast.Field, path []any) {
	var ge *Error
	if !errors.As(err, &ge) && (e.mapErr == nil || !errors.As(e.mapErr(err), &ge)) {
		ge = Errorf("INTERNAL_SERVER_ERROR", "Internal error. Looks like something went wrong on our end.")
	}
	c := *ge
	c.Cause = err
	c.Path = path
	if f.Position != nil {
		c.Locations = []Location{{f.Position.Line, f.Position.Column}}
	}
	e.errors = append(e.errors, &c)
}

// complete turns a resolved value into the answer's value for typ; ok is
// false when typ is non-null and the value is null (reported, unless
// failed: the resolver's error was).
func (e *executor) complete(ctx context.Context, typ *ast.Type, v any, fields []*ast.Field, path []any, failed bool) (any, bool) {
	if isNil(v) {
		if typ.NonNull {
			if !failed {
				e.fail(Errorf("INTERNAL_SERVER_ERROR", "Cannot return null for non-nullable field"), fields[0], path)
			}
			return nil, false
		}
		return nil, true
	}
	if typ.Elem != nil {
		rv := reflect.ValueOf(v)
		if rv.Kind() != reflect.Slice {
			e.fail(fmt.Errorf("graphql: %s is no list", path), fields[0], path)
			return nil, !typ.NonNull
		}
		out := make([]any, rv.Len())
		for i := range out {
			c, ok := e.complete(ctx, typ.Elem, rv.Index(i).Interface(), fields, append(path[:len(path):len(path)], i), false)
			if !ok {
				return nil, !typ.NonNull
			}
			out[i] = c
		}
		return out, true
	}
	def := e.schema.Types[typ.NamedType]
	switch def.Kind {
	case ast.Scalar:
		return serialize(def.Name, v), true
	case ast.Enum:
		return fmt.Sprint(v), true
	}
	obj, ok := v.(Object)
	if !ok {
		e.fail(fmt.Errorf("graphql: %T is no object", v), fields[0], path)
		return nil, !typ.NonNull
	}
	if def.Kind != ast.Object {
		def = e.schema.Types[obj.TypeName()]
	}
	var sel ast.SelectionSet
	for _, f := range fields {
		sel = append(sel, f.SelectionSet...)
	}
	res, ok := e.object(ctx, def, obj, sel, path)
	if !ok {
		return nil, !typ.NonNull
	}
	return res, true
}

// serialize writes a scalar as the schema's scalar type answers it.
func serialize(scalar string, v any) any {
	switch v := v.(type) {
	case time.Time:
		return v.UTC().Format(time.RFC3339)
	case int64:
		if scalar == "ID" || scalar == "UnsignedInt64" {
			return strconv.FormatInt(v, 10)
		}
	case json.RawMessage:
		return v
	}
	return v
}

func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface:
		return rv.IsNil()
	}
	return false
}

// ordered is a JSON object that keeps its keys in query order.
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) add(k string, v any) { o.keys, o.vals = append(o.keys, k), append(o.vals, v) }

// MarshalJSON writes the keys in order.
func (o *ordered) MarshalJSON() ([]byte, error) {
	b := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			b = append(b, ',')
		}
		kb, _ := json.Marshal(k)
		b = append(b, kb...)
		b = append(b, ':')
		vb, err := json.Marshal(o.vals[i])
		if err != nil {
			return nil, err
		}
		b = append(b, vb...)
	}
	return append(b, '}'), nil
}

// coerceIDs gives an ID argument given as a number (a literal 5, a JSON
// number in the variables) as the string GraphQL's ID input coerces it to,
// in lists and input objects too, so that resolvers read every ID as a
// string.
func coerceIDs(s *ast.Schema, t *ast.Type, v any) any {
	switch {
	case v == nil:
		return nil
	case t.Elem != nil:
		if l, ok := v.([]any); ok {
			for i := range l {
				l[i] = coerceIDs(s, t.Elem, l[i])
			}
		}
		return v
	case t.NamedType == "ID":
		switch n := v.(type) {
		case int64:
			return strconv.FormatInt(n, 10)
		case int:
			return strconv.Itoa(n)
		case float64:
			return strconv.FormatFloat(n, 'f', -1, 64)
		}
		return v
	}
	if def := s.Types[t.NamedType]; def != nil && def.Kind == ast.InputObject {
		if m, ok := v.(map[string]any); ok {
			for _, f := range def.Fields {
				if x, ok := m[f.Name]; ok {
					m[f.Name] = coerceIDs(s, f.Type, x)
				}
			}
		}
	}
	return v
}
