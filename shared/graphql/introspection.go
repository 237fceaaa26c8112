package graphql

import (
	"context"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// introspect answers __schema and __type over the schema, so that code
// generators and GraphiQL-style tools can read it.
func introspect(s *ast.Schema, f *ast.Field, vars map[string]any) (any, error) {
	if f.Name == "__schema" {
		return schemaObj{s}, nil
	}
	name, _ := f.ArgumentMap(vars)["name"].(string)
	def := s.Types[name]
	if def == nil {
		return nil, nil
	}
	return typeObj{s: s, def: def}, nil
}

type schemaObj struct{ s *ast.Schema }

func (schemaObj) TypeName() string { return "__Schema" }

func (o schemaObj) Field(_ context.Context, f *Field) (any, error) {
	switch f.Name {
	case "types":
		names := make([]string, 0, len(o.s.Types))
		for n := range o.s.Types {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make([]typeObj, len(names))
		for i, n := range names {
			out[i] = typeObj{s: o.s, def: o.s.Types[n]}
		}
		return out, nil
	case "queryType":
		return typeOrNil(o.s, o.s.Query), nil
	case "mutationType":
		return typeOrNil(o.s, o.s.Mutation), nil
	case "subscriptionType":
		return typeOrNil(o.s, o.s.Subscription), nil
	case "directives":
		names := make([]string, 0, len(o.s.Directives))
		for n := range o.s.Directives {
			names = append(names, n)
		}
		sort.Strings(names)
		out := make([]directiveObj, len(names))
		for i, n := range names {
			out[i] = directiveObj{o.s, o.s.Directives[n]}
		}
		return out, nil
	}
	return nil, nil // description
}

func typeOrNil(s *ast.Schema, def *ast.Definition) any {
	if def == nil {
		return nil
	}
	return typeObj{s: s, def: def}
}

// typeObj is a __Type: a named type (def), or a list or non-null wrapper
// of typ.
type typeObj struct {
	s   *ast.Schema
	def *ast.Definition
	typ *ast.Type
}

func (typeObj) TypeName() string { return "__Type" }

func typeOf(s *ast.Schema, t *ast.Type) typeObj {
	if t.NonNull || t.Elem != nil {
		return typeObj{s: s, typ: t}
	}
	return typeObj{s: s, def: s.Types[t.NamedType]}
}

func (o typeObj) Field(_ context.Context, f *Field) (any, error) {
	if o.typ != nil { // a wrapper
		switch f.Name {
		case "kind":
			if o.typ.NonNull {
				return "NON_NULL", nil
			}
			return "LIST", nil
		case "ofType":
			inner := *o.typ
			if inner.NonNull {
				inner.NonNull = false
				return typeOf(o.s, &inner), nil
			}
			return typeOf(o.s, o.typ.Elem), nil
		}
		return nil, nil
	}
	d := o.def
	deprecated, _ := f.Args["includeDeprecated"].(bool)
	switch f.Name {
	case "kind":
		return string(d.Kind), nil
	case "name":
		return d.Name, nil
	case "description":
		return nilIfEmpty(d.Description), nil
	case "specifiedByURL":
		return nil, nil
	case "isOneOf":
		return d.Kind == ast.InputObject && d.Directives.ForName("oneOf") != nil, nil
	case "fields":
		if d.Kind != ast.Object && d.Kind != ast.Interface {
			return nil, nil
		}
		var out []fieldObj
		for _, fd := range d.Fields {
			if strings.HasPrefix(fd.Name, "__") || (!deprecated && isDeprecated(fd.Directives)) {
				continue
			}
			out = append(out, fieldObj{o.s, fd})
		}
		return nonNilSlice(out), nil
	case "interfaces":
		if d.Kind != ast.Object && d.Kind != ast.Interface {
			return nil, nil
		}
		out := []typeObj{}
		for _, n := range d.Interfaces {
			out = append(out, typeObj{s: o.s, def: o.s.Types[n]})
		}
		return out, nil
	case "possibleTypes":
		if d.Kind != ast.Interface && d.Kind != ast.Union {
			return nil, nil
		}
		out := []typeObj{}
		for _, p := range o.s.GetPossibleTypes(d) {
			out = append(out, typeObj{s: o.s, def: p})
		}
		return out, nil
	case "enumValues":
		if d.Kind != ast.Enum {
			return nil, nil
		}
		out := []enumObj{}
		for _, v := range d.EnumValues {
			if deprecated || !isDeprecated(v.Directives) {
				out = append(out, enumObj{v})
			}
		}
		return out, nil
	case "inputFields":
		if d.Kind != ast.InputObject {
			return nil, nil
		}
		out := []inputObj{}
		for _, fd := range d.Fields {
			out = append(out, inputObj{o.s, fd.Name, fd.Type, fd.DefaultValue, fd.Directives})
		}
		return out, nil
	}
	return nil, nil // ofType of a named type
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func isDeprecated(ds ast.DirectiveList) bool { return ds.ForName("deprecated") != nil }

func deprecationReason(ds ast.DirectiveList) any {
	d := ds.ForName("deprecated")
	if d == nil {
		return nil
	}
	if a := d.Arguments.ForName("reason"); a != nil && a.Value != nil {
		return a.Value.Raw
	}
	return "No longer supported"
}

type fieldObj struct {
	s  *ast.Schema
	fd *ast.FieldDefinition
}

func (fieldObj) TypeName() string { return "__Field" }

func (o fieldObj) Field(_ context.Context, f *Field) (any, error) {
	switch f.Name {
	case "name":
		return o.fd.Name, nil
	case "description":
		return nilIfEmpty(o.fd.Description), nil
	case "args":
		out := []inputObj{}
		for _, a := range o.fd.Arguments {
			out = append(out, inputObj{o.s, a.Name, a.Type, a.DefaultValue, a.Directives})
		}
		return out, nil
	case "type":
		return typeOf(o.s, o.fd.Type), nil
	case "isDeprecated":
		return isDeprecated(o.fd.Directives), nil
	case "deprecationReason":
		return deprecationReason(o.fd.Directives), nil
	}
	return nil, nil
}

type inputObj struct {
	s    *ast.Schema
	name string
	typ  *ast.Type
	def  *ast.Value
	ds   ast.DirectiveList
}

func (inputObj) TypeName() string { return "__InputValue" }

func (o inputObj) Field(_ context.Context, f *Field) (any, error) {
	switch f.Name {
	case "name":
		return o.name, nil
	case "type":
		return typeOf(o.s, o.typ), nil
	case "defaultValue":
		if o.def == nil {
			return nil, nil
		}
		return o.def.String(), nil
	case "isDeprecated":
		return isDeprecated(o.ds), nil
	case "deprecationReason":
		return deprecationReason(o.ds), nil
	}
	return nil, nil
}

type enumObj struct{ v *ast.EnumValueDefinition }

func (enumObj) TypeName() string { return "__EnumValue" }

func (o enumObj) Field(_ context.Context, f *Field) (any, error) {
	switch f.Name {
	case "name":
		return o.v.Name, nil
	case "description":
		return nilIfEmpty(o.v.Description), nil
	case "isDeprecated":
		return isDeprecated(o.v.Directives), nil
	case "deprecationReason":
		return deprecationReason(o.v.Directives), nil
	}
	return nil, nil
}

type directiveObj struct {
	s *ast.Schema
	d *ast.DirectiveDefinition
}

func (directiveObj) TypeName() string { return "__Directive" }

func (o directiveObj) Field(_ context.Context, f *Field) (any, error) {
	switch f.Name {
	case "name":
		return o.d.Name, nil
	case "description":
		return nilIfEmpty(o.d.Description), nil
	case "isRepeatable":
		return o.d.IsRepeatable, nil
	case "locations":
		out := make([]string, len(o.d.Locations))
		for i, l := range o.d.Locations {
			out[i] = string(l)
		}
		return out, nil
	case "args":
		out := []inputObj{}
		for _, a := range o.d.Arguments {
			out = append(out, inputObj{o.s, a.Name, a.Type, a.DefaultValue, a.Directives})
		}
		return out, nil
	}
	return nil, nil
}
