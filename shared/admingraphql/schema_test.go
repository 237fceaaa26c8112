package admingraphql

import (
	"compress/gzip"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
)

// introType is a type of Shopify's published introspection.
type introType struct {
	Kind          string       `json:"kind"`
	Name          string       `json:"name"`
	Fields        []introField `json:"fields"`
	InputFields   []introArg   `json:"inputFields"`
	Interfaces    []introRef   `json:"interfaces"`
	EnumValues    []introRef   `json:"enumValues"`
	PossibleTypes []introRef   `json:"possibleTypes"`
}

type introField struct {
	Name         string     `json:"name"`
	Args         []introArg `json:"args"`
	Type         introRef   `json:"type"`
	IsDeprecated bool       `json:"isDeprecated"`
}

type introArg struct {
	Name string   `json:"name"`
	Type introRef `json:"type"`
}

type introRef struct {
	Kind   string    `json:"kind"`
	Name   string    `json:"name"`
	OfType *introRef `json:"ofType"`
}

// String writes a type reference as SDL does: [Page!]!.
func (r introRef) String() string {
	switch r.Kind {
	case "NON_NULL":
		return r.OfType.String() + "!"
	case "LIST":
		return "[" + r.OfType.String() + "]"
	}
	return r.Name
}

// The service's schema is a subset of Shopify's Admin schema (2026-07, as
// @shopify/dev-mcp 1.16.0 ships its introspection; make test fetches it
// into SHOPIFY_ADMIN_SCHEMA): every type, field, argument, input field,
// enum value, interface and union member it has is Shopify's, with the
// same kind, type and nullability.
func TestSchemaMatchesShopify(t *testing.T) {
	theirs := shopifySchema(t)
	ours, err := Schema(Service{}).AST()
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range ours.Types {
		if def.BuiltIn || strings.HasPrefix(name, "__") {
			continue
		}
		th, ok := theirs[name]
		if !ok {
			t.Errorf("type %s is not Shopify's", name)
			continue
		}
		if string(def.Kind) != th.Kind {
			t.Errorf("%s is a %s here, a %s in Shopify's", name, def.Kind, th.Kind)
		}
		for _, fd := range def.Fields {
			if def.Kind == ast.InputObject {
				compareInput(t, name, fd, th)
			} else if !strings.HasPrefix(fd.Name, "__") {
				compareField(t, name, fd, th)
			}
		}
		compareMembers(t, name, def, th)
	}
}

// shopifySchema reads SHOPIFY_ADMIN_SCHEMA's types by name.
func shopifySchema(t *testing.T) map[string]introType {
	path := os.Getenv("SHOPIFY_ADMIN_SCHEMA")
	if path == "" {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatal("SHOPIFY_ADMIN_SCHEMA is not set (make shopify-schema, then make shopify-schema-path)")
		}
		t.Skip("SHOPIFY_ADMIN_SCHEMA is not set: make test fetches Shopify's schema")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Data struct {
			Schema struct {
				Types []introType `json:"types"`
			} `json:"__schema"`
		} `json:"data"`
	}
	if err := json.NewDecoder(z).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	theirs := map[string]introType{}
	for _, ty := range doc.Data.Schema.Types {
		theirs[ty.Name] = ty
	}
	return theirs
}

func compareInput(t *testing.T, name string, fd *ast.FieldDefinition, th introType) {
	i := slices.IndexFunc(th.InputFields, func(a introArg) bool { return a.Name == fd.Name })
	if i < 0 {
		t.Errorf("%s.%s is not Shopify's", name, fd.Name)
	} else if got, want := fd.Type.String(), th.InputFields[i].Type.String(); got != want {
		t.Errorf("%s.%s is %s here, %s in Shopify's", name, fd.Name, got, want)
	}
}

func compareField(t *testing.T, name string, fd *ast.FieldDefinition, th introType) {
	i := slices.IndexFunc(th.Fields, func(f introField) bool { return f.Name == fd.Name })
	if i < 0 {
		t.Errorf("%s.%s is not Shopify's", name, fd.Name)
		return
	}
	sf := th.Fields[i]
	if got, want := fd.Type.String(), sf.Type.String(); got != want {
		t.Errorf("%s.%s is %s here, %s in Shopify's", name, fd.Name, got, want)
	}
	if (fd.Directives.ForName("deprecated") != nil) != sf.IsDeprecated {
		t.Errorf("%s.%s: deprecated in Shopify's %v, not here", name, fd.Name, sf.IsDeprecated)
	}
	for _, a := range fd.Arguments {
		j := slices.IndexFunc(sf.Args, func(x introArg) bool { return x.Name == a.Name })
		if j < 0 {
			t.Errorf("%s.%s(%s) is not Shopify's", name, fd.Name, a.Name)
		} else if got, want := a.Type.String(), sf.Args[j].Type.String(); got != want {
			t.Errorf("%s.%s(%s) is %s here, %s in Shopify's", name, fd.Name, a.Name, got, want)
		}
	}
	for _, a := range sf.Args { // a required argument of Shopify's must be here
		if a.Type.Kind == "NON_NULL" && fd.Arguments.ForName(a.Name) == nil {
			t.Errorf("%s.%s lacks Shopify's required argument %s", name, fd.Name, a.Name)
		}
	}
}

// compareMembers: enum values, interfaces and union members are Shopify's.
func compareMembers(t *testing.T, name string, def *ast.Definition, th introType) {
	for _, v := range def.EnumValues {
		if !slices.ContainsFunc(th.EnumValues, func(r introRef) bool { return r.Name == v.Name }) {
			t.Errorf("enum value %s.%s is not Shopify's", name, v.Name)
		}
	}
	for _, n := range def.Interfaces {
		if !slices.ContainsFunc(th.Interfaces, func(r introRef) bool { return r.Name == n }) {
			t.Errorf("%s implements %s here, not in Shopify's", name, n)
		}
	}
	for _, n := range def.Types {
		if !slices.ContainsFunc(th.PossibleTypes, func(r introRef) bool { return r.Name == n }) {
			t.Errorf("union %s has %s here, not in Shopify's", name, n)
		}
	}
}
