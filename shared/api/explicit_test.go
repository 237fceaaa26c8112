package api_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Issue 41: the context carries request-scoped values only (identity,
// request id, deadline); the clock and every other dependency is a field
// of the service that uses it, or a parameter. And no package-level
// variable is written after start-up, by the service or by its tests.
// These checks read the syntax of every Go file of the module, tests
// included; they need no type-checking and take well under a second.

// requestScoped lists the context keys the module may set, by package and
// key (the type of a struct{} key, or the constant), each with its reason.
var requestScoped = map[string]string{
	"shared/admin appKey":       "the app the request authenticated as",
	"shared/admin shopKey":      "the shop of the request (its zone dates answers)",
	"shared/admin requestIDKey": "the request id, for logs",
	"shared/idempotency claimCtxKey": "the request's claim on its Idempotency-Key, which the shared store (idempotency.Wrap) " +
		"counts the request's commits on; a field would need a store per request",
	"shared/store tokenCtxKey": "one store call's request token, from store.Retrying to the adapter beneath it (DynamoDB's " +
		"ClientRequestToken): the store.Store interface has no other channel",
	"shared/httpapi cursorCtxKey":     "the cursor of the request's verified page_info, for ParsePage",
	"shared/httpapi calledFormCtxKey": "the Shopify form the request was called in, so that its Link URLs keep it",
	"shared/httpapi baseCtxKey": "the request's public base URL: without PUBLIC_BASE_URL, the domain API Gateway received " +
		"it on; handlers get only (w, r)",
	"shared/httpapi identityCtxKey": "the router's Identity for WritePaged to sign cursors with: a dependency, left here " +
		"because handlers get only (w, r) and are built before the router (see its comment)",
}

// goFiles parses every Go file of the module, tests included, by its path
// from the module root.
func goFiles(t *testing.T) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		files[filepath.ToSlash(rel)] = f
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 200 {
		t.Fatalf("read only %d Go files", len(files))
	}
	return fset, files
}

// importName is the name f uses for the import path, "" when it does not
// import it.
func importName(f *ast.File, path string) string {
	for _, im := range f.Imports {
		if p, _ := strconv.Unquote(im.Path.Value); p == path {
			if im.Name != nil {
				return im.Name.Name
			}
			return path[strings.LastIndexByte(path, '/')+1:]
		}
	}
	return ""
}

// isCall reports whether n calls pkg.name, pkg being what f imports path as.
func isCall(f *ast.File, n ast.Node, path, name string) (*ast.CallExpr, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return nil, false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return nil, false
	}
	x, ok := sel.X.(*ast.Ident)
	return call, ok && x.Name == importName(f, path) && x.Name != ""
}

func TestContextCarriesRequestDataOnly(t *testing.T) {
	fset, files := goFiles(t)
	seen := map[string]bool{}
	for rel, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := isCall(f, n, "context", "WithValue")
			if !ok || len(call.Args) != 3 {
				return true
			}
			key := "?"
			switch k := call.Args[1].(type) {
			case *ast.Ident:
				key = k.Name
			case *ast.CompositeLit:
				if id, ok := k.Type.(*ast.Ident); ok {
					key = id.Name
				}
			}
			name := filepath.ToSlash(filepath.Dir(rel)) + " " + key
			seen[name] = true
			if _, ok := requestScoped[name]; !ok {
				t.Errorf("%s: context.WithValue with key %s: the context carries request-scoped values only; "+
					"make a dependency a field or a parameter, or list a request-scoped key in requestScoped with its reason",
					fset.Position(call.Pos()), name)
			}
			return true
		})
	}
	for name := range requestScoped {
		if !seen[name] {
			t.Errorf("requestScoped lists %s, which no context.WithValue sets any more: remove it", name)
		}
	}
}

// The clock is a dependency: admin has no Now(ctx), ClockFrom or WithClock,
// and nothing calls them.
func TestNoClockInTheContext(t *testing.T) {
	gone := map[string]bool{"Now": true, "ClockFrom": true, "WithClock": true}
	fset, files := goFiles(t)
	for rel, f := range files {
		if strings.HasPrefix(rel, "shared/admin/") {
			for _, d := range f.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv == nil && gone[fd.Name.Name] {
					t.Errorf("%s: admin.%s is back: services hold the clock (a Clock field from platform.Deps), plain functions take it",
						fset.Position(fd.Pos()), fd.Name.Name)
				}
			}
		}
		name := importName(f, module+"shared/admin")
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && gone[sel.Sel.Name] {
				if x, ok := sel.X.(*ast.Ident); ok && name != "" && x.Name == name {
					t.Errorf("%s: admin.%s: read the clock the service holds or is given", fset.Position(sel.Pos()), sel.Sel.Name)
				}
			}
			return true
		})
	}
}

// writtenAtStartUp lists the package-level variables of the module that
// are written outside their declaration, init, TestMain and a sync.Once's
// function, by package and name, each with its reason.
var writtenAtStartUp = map[string]string{
	"shared/httpapi textNodes":                      "a cache of decoded types' shapes, filled under textMu",
	"shared/store/dynamostore/dynamotest clients":   "the test process's client per emulator, made once under mu",
	"shared/store/dynamostore/dynamotest held":      "the emulator slot's lock, taken once (pick runs under pickOnce)",
	"shared/queue/sqsqueue/sqstest clients":         "the test process's client per emulator, made once under mu",
	"shared/smartcollections bench":                 "the benchmarks' shared fixture, built once (bench.once); each benchmark points its Env at itself (bench.e.T = b)",
	"shared/api SetupLogging calls slog.SetDefault": "the process's logger, set once by each main at start-up",
}

// No package-level variable is written after start-up: a dependency swapped
// at run time (a timeout, a logger, a clock) is shared by every request and
// every parallel test. Writes inside the declaration, init, TestMain and a
// sync.Once's function (x.Do(func() {...}), sync.OnceValue and its kin)
// are start-up; slog.SetDefault and log.Set* count as writes of the
// process's logger.
func TestNoPackageVariableWrittenAfterStartUp(t *testing.T) {
	fset, files := goFiles(t)
	vars := packageVars(files)
	seen := map[string]bool{}
	for rel, f := range files {
		dir := filepath.ToSlash(filepath.Dir(rel))
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || fd.Recv == nil && (fd.Name.Name == "init" || fd.Name.Name == "TestMain") {
				continue
			}
			for _, w := range packageWrites(f, fd, vars[packageOf(rel, f)]) {
				name := dir + " " + w.what
				seen[name] = true
				if _, ok := writtenAtStartUp[name]; !ok {
					t.Errorf("%s: %s after start-up: make it a field of what uses it (a test sets the field), "+
						"or list %q in writtenAtStartUp with its reason", fset.Position(w.pos), w.did, name)
				}
			}
		}
	}
	var stale []string
	for name := range writtenAtStartUp {
		if !seen[name] {
			stale = append(stale, name)
		}
	}
	sort.Strings(stale)
	for _, name := range stale {
		t.Errorf("writtenAtStartUp lists %s, which is no longer written: remove it", name)
	}
}

// packageOf names the package a file belongs to: its directory and package
// clause (an external test package is a package of its own).
func packageOf(rel string, f *ast.File) string {
	return filepath.ToSlash(filepath.Dir(rel)) + "\x00" + f.Name.Name
}

// packageVars are the package-level variables of each package (packageOf).
func packageVars(files map[string]*ast.File) map[string]map[string]bool {
	vars := map[string]map[string]bool{}
	for rel, f := range files {
		p := packageOf(rel, f)
		if vars[p] == nil {
			vars[p] = map[string]bool{}
		}
		for _, d := range f.Decls {
			if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if n.Name != "_" {
							vars[p][n.Name] = true
						}
					}
				}
			}
		}
	}
	return vars
}

// localNames are the names fd declares anywhere in it: they shadow the
// package's (a coarse scope, the whole function, which can only miss a write).
func localNames(fd *ast.FuncDecl) map[string]bool {
	locals := map[string]bool{}
	add := func(fields *ast.FieldList) {
		if fields != nil {
			for _, fl := range fields.List {
				for _, n := range fl.Names {
					locals[n.Name] = true
				}
			}
		}
	}
	add(fd.Recv)
	add(fd.Type.Params)
	add(fd.Type.Results)
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		var names []ast.Expr
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				names = s.Lhs
			}
		case *ast.RangeStmt:
			if s.Tok == token.DEFINE {
				names = []ast.Expr{s.Key, s.Value}
			}
		case *ast.ValueSpec:
			for _, id := range s.Names {
				locals[id.Name] = true
			}
		case *ast.FuncLit:
			add(s.Type.Params)
			add(s.Type.Results)
		}
		for _, e := range names {
			if id, ok := e.(*ast.Ident); ok {
				locals[id.Name] = true
			}
		}
		return true
	})
	return locals
}

// packageWrite is a write of a package-level variable: what names it (by
// the allowlist's key, without the directory), did says it for a message.
type packageWrite struct {
	pos       token.Pos
	what, did string
}

// packageWrites are fd's writes of pkgVars, of an imported package's
// variables and of the process's logger, outside a sync.Once's function.
func packageWrites(f *ast.File, fd *ast.FuncDecl, pkgVars map[string]bool) []packageWrite {
	locals := localNames(fd)
	slogName, logName, syncName := importName(f, "log/slog"), importName(f, "log"), importName(f, "sync")
	var writes []packageWrite
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		var lhs []ast.Expr
		switch s := n.(type) {
		case *ast.CallExpr:
			sel, ok := s.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			x, _ := sel.X.(*ast.Ident)
			switch {
			case sel.Sel.Name == "Do" && len(s.Args) == 1,
				x != nil && syncName != "" && x.Name == syncName && strings.HasPrefix(sel.Sel.Name, "Once"):
				return false // a sync.Once's function: lazy start-up
			case x != nil && slogName != "" && x.Name == slogName && sel.Sel.Name == "SetDefault",
				x != nil && logName != "" && x.Name == logName && strings.HasPrefix(sel.Sel.Name, "Set"):
				what := x.Name + "." + sel.Sel.Name
				writes = append(writes, packageWrite{s.Pos(), fd.Name.Name + " calls " + what, "calls " + what + ", which writes the process's logger,"})
			}
		case *ast.AssignStmt:
			if s.Tok != token.DEFINE {
				lhs = s.Lhs
			}
		case *ast.IncDecStmt:
			lhs = []ast.Expr{s.X}
		}
		for _, e := range lhs {
			if w, ok := writtenVar(f, e, pkgVars, locals); ok {
				writes = append(writes, w)
			}
		}
		return true
	})
	return writes
}

// writtenVar says whether assigning to e writes a package-level variable
// (of pkgVars, or of an imported package): e itself, a field or an element.
func writtenVar(f *ast.File, e ast.Expr, pkgVars, locals map[string]bool) (packageWrite, bool) {
	for {
		switch x := e.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && !locals[id.Name] && !pkgVars[id.Name] && importedAs(f, id.Name) {
				what := id.Name + "." + x.Sel.Name
				return packageWrite{e.Pos(), what, "writes " + what}, true
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			if pkgVars[x.Name] && !locals[x.Name] {
				return packageWrite{x.Pos(), x.Name, "writes the package-level " + x.Name}, true
			}
			return packageWrite{}, false
		default:
			return packageWrite{}, false
		}
	}
}

// importedAs reports whether f imports a package under name.
func importedAs(f *ast.File, name string) bool {
	for _, im := range f.Imports {
		p, _ := strconv.Unquote(im.Path.Value)
		if im.Name != nil && im.Name.Name == name || im.Name == nil && p[strings.LastIndexByte(p, '/')+1:] == name {
			return true
		}
	}
	return false
}
