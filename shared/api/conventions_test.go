package api_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every _test.go file of the module (found by walking it, so a new package
// needs no listing) and the non-test files of the shortFuncFiles globs
// (from the module's root; test helpers) keep every function within
// maxTestFuncLines: a scenario that grows is split into named steps or
// helpers by concern, so a reader finds a concern on one screen and a
// failure names its step.
var shortFuncFiles = []string{"shared/httpapi/httpapitest/*.go"}

const maxTestFuncLines = 80

func TestTestFunctionsStayShort(t *testing.T) {
	root := repoRoot(t)
	files := moduleTestFiles(t, root)
	for _, glob := range shortFuncFiles {
		matched, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil || len(matched) == 0 {
			t.Fatalf("%s: no files (%v)", glob, err)
		}
		for _, f := range matched {
			if !strings.HasSuffix(f, "_test.go") { // those are listed already
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		long, err := longFuncs(rel, src)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range long {
			t.Error(l)
		}
	}
}

// moduleTestFiles lists every _test.go file under root, leaving out
// hidden directories, testdata, node_modules and vendor.
func moduleTestFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), "_test.go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s: no _test.go files", root)
	}
	return files
}

// longFuncs names each function declared in src that runs over
// maxTestFuncLines, counted from its func keyword to its closing brace.
func longFuncs(name string, src []byte) ([]string, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var long []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok {
			continue
		}
		start, end := fset.Position(fd.Pos()).Line, fset.Position(fd.End()).Line
		if n := end - start + 1; n > maxTestFuncLines {
			long = append(long, fmt.Sprintf("%s:%d: %s is %d lines, over %d: split it into named steps or helpers by concern",
				name, start, funcName(fd), n, maxTestFuncLines))
		}
	}
	return long, nil
}

// funcName is a function's name, a method's with its receiver's type.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	recv := fd.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		return fmt.Sprintf("(*%s).%s", star.X, fd.Name.Name)
	}
	return fmt.Sprintf("%s.%s", recv, fd.Name.Name)
}

// The guard counts the lines it should: 80 pass, 81 do not, and a method
// is named with its receiver.
func TestLongFuncsCountsLines(t *testing.T) {
	body := func(lines int) string { return strings.Repeat("\t_ = 0\n", lines-2) }
	src := "package x\n\nfunc ok() {\n" + body(80) + "}\n\ntype s struct{}\n\n// A doc comment is not counted.\nfunc (*s) long() {\n" + body(81) + "}\n"
	long, err := longFuncs("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if len(long) != 1 || !strings.HasPrefix(long[0], "x.go:") || !strings.Contains(long[0], "(*s).long is 81 lines") {
		t.Errorf("longFuncs: %q, want only (*s).long at 81 lines", long)
	}
}
