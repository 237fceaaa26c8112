package api_test

import (
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/storeadmin/adminapi/"

// layer is one row of the table in docs/architecture.md.
type layer struct {
	name     string
	packages []string // paths relative to the module; "*" is one or more segments
	anything bool     // may import any package of the module
	imports  []string // the layers it may import
}

// layerTable reads the layer table of docs/architecture.md: the document
// is the rule, so the rule cannot drift from it.
func layerTable(t *testing.T) []layer {
	t.Helper()
	doc, err := os.ReadFile("../../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := strings.Cut(string(doc)[strings.Index(string(doc), "## Layers"):], "\n## ")
	ticked := regexp.MustCompile("`([^`]+)`")
	var table []layer
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || strings.HasPrefix(strings.TrimSpace(cells[1]), "---") || strings.TrimSpace(cells[1]) == "Layer" {
			continue
		}
		l := layer{name: strings.TrimSpace(cells[1])}
		for _, m := range ticked.FindAllStringSubmatch(cells[2], -1) {
			l.packages = append(l.packages, m[1])
		}
		switch may := strings.TrimSpace(cells[3]); may {
		case "anything":
			l.anything = true
		case "nothing":
		default:
			for _, name := range strings.Split(may, ",") {
				l.imports = append(l.imports, strings.TrimSpace(name))
			}
		}
		table = append(table, l)
	}
	if len(table) < 8 {
		t.Fatalf("docs/architecture.md: read %d layers from the table", len(table))
	}
	for _, l := range table {
		for _, name := range l.imports {
			if !slices.ContainsFunc(table, func(o layer) bool { return o.name == name }) {
				t.Fatalf("docs/architecture.md: layer %s may import %q, which is no layer", l.name, name)
			}
		}
	}
	return table
}

// holds reports how closely the row names pkg: 2 by its path, 1 by a
// pattern, 0 not at all. A path wins over a pattern (shared/store/storetest
// is the harness though shared/store/* is storage).
func (l layer) holds(pkg string) int {
	best := 0
	for _, p := range l.packages {
		switch {
		case p == "." && pkg == "" || p == pkg:
			return 2
		case strings.HasSuffix(p, "/*") && strings.HasPrefix(pkg, strings.TrimSuffix(p, "*")):
			best = 1
		}
	}
	return best
}

// packageDeps lists every package of the module (relative path, "" for the
// module's root) with its direct imports and every package it depends on,
// test files excluded.
func packageDeps(t *testing.T) (imports, deps map[string][]string) {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Imports " "}}|{{join .Deps " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	imports, deps = map[string][]string{}, map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], "github.com/storeadmin/adminapi"), "/")
		imports[pkg], deps[pkg] = strings.Fields(f[1]), strings.Fields(f[2])
	}
	return imports, deps
}

// The layers of docs/architecture.md, kept on every package's full
// dependency set: an import that climbs, directly or through another
// package, fails here, as does a package no row holds.
func TestLayers(t *testing.T) {
	table := layerTable(t)
	imports, deps := packageDeps(t)
	layerOf := map[string]*layer{}
	for pkg := range deps {
		best := 0
		for i := range table {
			switch m := table[i].holds(pkg); {
			case m > best:
				best, layerOf[pkg] = m, &table[i]
			case m > 0 && m == best:
				t.Errorf("%s is in two rows of the layer table: %s and %s", pkg, layerOf[pkg].name, table[i].name)
			}
		}
		if layerOf[pkg] == nil {
			t.Errorf("%s is in no row of the layer table in docs/architecture.md: place it", pkg)
		}
	}
	for pkg, l := range layerOf {
		for _, dep := range deps[pkg] {
			own, ok := strings.CutPrefix(dep, module)
			switch {
			case strings.HasPrefix(dep, "github.com/aws/aws-sdk-go-v2") && !awsAllowed(pkg) && slices.Contains(imports[pkg], dep):
				t.Errorf("%s imports %s: only awsconfig, the store and queue adapters, shared/api and functions/ use the AWS SDK", pkg, dep)
			case !ok || l.anything || layerOf[own] == nil:
			case layerOf[own] != l && !slices.Contains(l.imports, layerOf[own].name):
				t.Errorf("%s (%s) depends on %s (%s): docs/architecture.md lets %s import only %v", pkg, l.name, own, layerOf[own].name, l.name, l.imports)
			case layerOf[own] == l && !slices.Contains(l.imports, l.name):
				t.Errorf("%s (%s) depends on %s of its own layer, which may not import itself", pkg, l.name, own)
			}
		}
		if l.name == "Domain" && slices.Contains(imports[pkg], "net/http") {
			t.Errorf("%s imports net/http: a domain package reaches the network only through shared/outbound", pkg)
		}
	}
}

func awsAllowed(pkg string) bool {
	for _, p := range []string{"shared/awsconfig", "shared/store/dynamostore", "shared/queue/sqsqueue", "shared/api", "functions/", "infra/"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}

// Domain code does not import HTTP code: in a resource package only http.go
// may import net/http or shared/httpapi, and packages without an http.go
// import neither (shared/httpapi, the composition root, the harness and the
// one outbound client aside: the delivery and provider pipelines send their
// requests as outbound.Requests).
func TestDomainFilesDoNotImportHTTP(t *testing.T) {
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../*/*/*.go")
	files = append(files, more...)
	allowed := map[string]bool{"httpapi": true, "api": true, "apitest": true, "outbound": true}
	fset := token.NewFileSet()
	for _, f := range files {
		rel, _ := filepath.Rel("..", f)
		top := strings.Split(rel, string(filepath.Separator))[0]
		if strings.HasSuffix(f, "_test.go") || filepath.Base(f) == "http.go" || allowed[top] ||
			strings.Contains(rel, "test"+string(filepath.Separator)) || strings.Contains(rel, "sqsqueue") || strings.Contains(rel, "dynamostore") {
			continue
		}
		ast, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range ast.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if path == module+"shared/httpapi" || path == "net/http" {
				t.Errorf("shared/%s imports %s: parsing and writing HTTP belong in http.go", rel, path)
			}
		}
	}
}
