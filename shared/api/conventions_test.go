package api_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shortFuncFiles are the test code (globs from the module's root) that keeps
// every function within maxTestFuncLines: a scenario that grows is split
// into named steps or helpers by concern, so a reader finds a concern on
// one screen and a failure names its step. The resources' own end-to-end
// tests (TestArticles at about 285 lines, and some twenty others) are not
// split yet; add their packages here as they are.
var shortFuncFiles = []string{"shared/api/*_test.go", "shared/httpapi/httpapitest/*.go"}

const maxTestFuncLines = 80

func TestTestFunctionsStayShort(t *testing.T) {
	root := repoRoot(t)
	for _, glob := range shortFuncFiles {
		files, err := filepath.Glob(filepath.Join(root, glob))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no files (%v)", glob, err)
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
