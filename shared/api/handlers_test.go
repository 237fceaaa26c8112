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
	exports := exportData(t)
	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(f)
	})
	files, err := filepath.Glob("../*/http.go")
	if err != nil || len(files) < 20 {
		t.Fatalf("http.go files: %v, %v", files, err)
	}
	for _, httpFile := range files {
		dir := filepath.Dir(httpFile)
		pkgPath := module + "shared/" + filepath.Base(dir)
		var parsed []*ast.File
		var handlers *ast.File
		sources, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, src := range sources {
			if strings.HasSuffix(src, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, src, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			parsed = append(parsed, f)
			if src == httpFile {
				handlers = f
			}
		}
		info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Selections: map[*ast.SelectorExpr]*types.Selection{}}
		if _, err := (&types.Config{Importer: imp}).Check(pkgPath, fset, parsed, info); err != nil {
			t.Fatalf("%s: %v", pkgPath, err)
		}
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
