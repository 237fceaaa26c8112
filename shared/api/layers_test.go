package api_test

import (
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/storeadmin/adminapi/"

// imports lists every package of the module with the module packages it
// imports directly (go list), test files excluded.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}:{{join .Imports " "}}`, "../../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, deps, _ := strings.Cut(line, ":")
		m[strings.TrimPrefix(pkg, module)] = strings.Fields(deps)
	}
	return m
}

// The layers of docs/architecture.md, kept: a forbidden import fails here.
func TestLayers(t *testing.T) {
	for pkg, deps := range imports(t) {
		for _, dep := range deps {
			own, ok := strings.CutPrefix(dep, module)
			switch {
			// The store and its adapters know nothing else of the service.
			case strings.HasPrefix(pkg, "shared/store") && ok && !strings.HasPrefix(own, "shared/store") && own != "shared/emulatortest":
				t.Errorf("%s imports %s: the store layer imports nothing else of the service", pkg, own)
			// Metrics are a leaf every layer may call: they import nothing of the service.
			case strings.HasPrefix(pkg, "shared/metrics") && ok && !strings.HasPrefix(own, "shared/metrics"):
				t.Errorf("%s imports %s: shared/metrics imports nothing else of the service", pkg, own)
			// The seed loader writes what resources read; no resource reads the loader.
			case own == "shared/seed" && !strings.HasPrefix(pkg, "infra/") && pkg != "shared/apitest" && pkg != "shared/api":
				t.Errorf("%s imports shared/seed: resources read parents' partitions from shared/parents", pkg)
			// Resources fire topics through outbox (uninstall too); the
			// delivery pipeline is wired by the composition root and the mains.
			case own == "shared/delivery" && !deliveryAllowed(pkg):
				t.Errorf("%s imports shared/delivery: fire a topic with outbox.Notify", pkg)
			// The AWS SDK lives in the adapters, the composition root and the mains.
			case strings.HasPrefix(dep, "github.com/aws/aws-sdk-go-v2") && !awsAllowed(pkg):
				t.Errorf("%s imports %s: only the store and queue adapters, shared/api and functions/ use the AWS SDK", pkg, dep)
			}
		}
	}
}

func deliveryAllowed(pkg string) bool {
	return pkg == "shared/api" || pkg == "shared/apitest" ||
		strings.HasPrefix(pkg, "functions/") || strings.HasPrefix(pkg, "infra/")
}

func awsAllowed(pkg string) bool {
	for _, p := range []string{"shared/store/dynamostore", "shared/queue/sqsqueue", "shared/api", "functions/", "infra/"} {
		if strings.HasPrefix(pkg, p) {
			return true
		}
	}
	return false
}

// Domain code does not import HTTP code: in a resource package only http.go
// may import net/http or shared/httpapi, and packages without an http.go
// import neither (shared/httpapi, the composition root and the harness aside).
func TestDomainFilesDoNotImportHTTP(t *testing.T) {
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../*/*/*.go")
	files = append(files, more...)
	allowed := map[string]bool{"httpapi": true, "api": true, "apitest": true, "outbound": true, "delivery": true, "providers": true}
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
