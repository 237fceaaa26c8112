package api_test

import (
	"bufio"
	"bytes"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Handlers parse, call an operation and write: no http.go can reach the
// store, the queues or the dependencies they hang from (issue 26). The check
// is on types, not names: every expression of an http.go whose type is
// declared in shared/store or shared/queue, or that selects a field of
// platform.Deps, fails it, however it was reached (an embedded field, a
// type assertion, a helper's result).
func TestHandlersCannotReachTheStore(t *testing.T) {
	fset, imp := exportImporter(t)
	files, err := filepath.Glob("../*/http.go")
	if err != nil || len(files) < 20 {
		t.Fatalf("http.go files: %v, %v", files, err)
	}
	for _, httpFile := range files {
		info, parsed := typeCheck(t, fset, imp, "shared/"+filepath.Base(filepath.Dir(httpFile)))
		handlers := parsed[filepath.Base(httpFile)]
		reported := map[token.Pos]bool{}
		ast.Inspect(handlers, func(n ast.Node) bool {
			e, ok := n.(ast.Expr)
			if !ok {
				return true
			}
			why := ""
			if sel, ok := e.(*ast.SelectorExpr); ok {
				if s := info.Selections[sel]; s != nil && s.Kind() == types.FieldVal && s.Obj().Pkg() != nil && s.Obj().Pkg().Path() == module+"shared/platform" {
					why = "selects " + sel.Sel.Name + " of platform.Deps"
				}
			}
			if tv, ok := info.Types[e]; why == "" && ok && tv.IsValue() && (fromPackage(tv.Type, "shared/store") || fromPackage(tv.Type, "shared/queue")) {
				why = "is a " + types.TypeString(tv.Type, nil)
			}
			if why != "" && !reported[e.Pos()] {
				reported[e.Pos()] = true
				t.Errorf("%s: %s %s: a handler calls an operation, which reaches the store", fset.Position(e.Pos()), exprText(fset, e), why)
				return false
			}
			return true
		})
	}
}

// exportImporter imports the module's packages and their dependencies
// from compiled export data (go list -export), so that a test can
// type-check a package's source in about a second, without a new
// dependency.
func exportImporter(t *testing.T) (*token.FileSet, types.Importer) {
	exports := exportData(t)
	fset := token.NewFileSet()
	return fset, importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
}

// typeCheck parses and type-checks the non-test files of the module's
// package pkg ("shared/redirects"), returning the uses, types and
// selections of its expressions and its files by name.
func typeCheck(t *testing.T, fset *token.FileSet, imp types.Importer, pkg string) (*types.Info, map[string]*ast.File) {
	t.Helper()
	byName := map[string]*ast.File{}
	var files []*ast.File
	sources, _ := filepath.Glob(filepath.Join("../..", pkg, "*.go"))
	for _, src := range sources {
		if strings.HasSuffix(src, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, src, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
		byName[filepath.Base(src)] = f
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{},
		Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp}).Check(module+pkg, fset, files, info); err != nil {
		t.Fatalf("%s: %v", pkg, err)
	}
	return info, byName
}

// fromPackage reports whether t (or what it points to) is a named type
// declared in the module's package pkg or one below it.
func fromPackage(t types.Type, pkg string) bool {
	if p, ok := t.(*types.Pointer); ok {
		t = p.Elem()
	}
	n, ok := t.(*types.Named)
	if !ok || n.Obj().Pkg() == nil {
		return false
	}
	path := n.Obj().Pkg().Path()
	return path == module+pkg || strings.HasPrefix(path, module+pkg+"/")
}

func exprText(fset *token.FileSet, e ast.Expr) string {
	var b bytes.Buffer
	start, end := fset.Position(e.Pos()), fset.Position(e.End())
	src, _ := os.ReadFile(start.Filename)
	if start.Offset < end.Offset && end.Offset <= len(src) {
		b.Write(src[start.Offset:end.Offset])
	}
	return b.String()
}

// exportData maps each package the module builds to its compiled export
// data (go list -export builds what it lacks, from the build cache).
func exportData(t *testing.T) map[string]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", "../...").Output()
	if err != nil {
		t.Fatalf("go list -export: %v", err)
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if path, file, ok := strings.Cut(sc.Text(), " "); ok && file != "" {
			m[path] = file
		}
	}
	return m
}
