package api_test

// These tests keep template.yaml, infra/sam.mk, functions/ and api.Groups in
// agreement: one Lambda function per group, built from functions/<group>,
// receiving every route of its group and nothing else; and the functions
// that serve no route (eventSourceFunctions) fed by their event sources.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

// eventSourceFunctions are the functions under functions/ that are no HTTP
// group: each consumes one event source (an event of Type reading Property,
// a !GetAtt Source of a resource of type SourceType), reports batch item
// failures, and has no HttpApi event.
var eventSourceFunctions = []eventSourceFunction{
	{"webhook-dispatch", "SQS", "Queue", "DeliveryQueue.Arn", "AWS::SQS::Queue"},
	{"change-feed", "DynamoDB", "Stream", "Table.StreamArn", "AWS::DynamoDB::Table"},
	{"provider-jobs", "DynamoDB", "Stream", "Table.StreamArn", "AWS::DynamoDB::Table"},
	{"theme-import", "SQS", "Queue", "ThemeImportQueue.Arn", "AWS::SQS::Queue"},
}

// scheduledFunctions are the functions run by an EventBridge schedule
// (the hourly provider polls): a Schedule event and no HttpApi event.
var scheduledFunctions = []string{"fetch-stock", "fetch-tracking-numbers"}

// pathFormFunctions serve every group at the paths Shopify's clients call,
// by these greedy events only (shared/httpapi/shopify.go rewrites each
// path to its route's). API Gateway routes a request to the most specific
// matching route, so a route whose own function has an event with a longer
// literal prefix never reaches them.
var pathFormFunctions = map[string][]string{
	"shopify-paths": {"ANY /admin/api/{proxy+}", "ANY /admin/{proxy+}"},
}

type eventSourceFunction struct {
	Dir, Type, Property, Source, SourceType string
}

func TestTemplate(t *testing.T) {
	root := repoRoot(t)
	tmpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	mk := loadSAMFunctions(t, filepath.Join(root, "infra", "sam.mk"))
	dirs := functionDirs(t, filepath.Join(root, "functions"))
	for _, p := range checkTemplate(root, api.Groups, tmpl, mk, dirs) {
		t.Error(p)
	}
}

// TestTemplateCheckReportsProblems makes sure checkTemplate notices a route
// no event serves and an event no route needs.
func TestTemplateCheckReportsProblems(t *testing.T) {
	root := repoRoot(t)
	tmpl := loadTemplate(t, filepath.Join(root, "template.yaml"))
	mk := loadSAMFunctions(t, filepath.Join(root, "infra", "sam.mk"))
	dirs := functionDirs(t, filepath.Join(root, "functions"))

	groups := slices.Clone(api.Groups)
	orig := groups[0].Routes
	groups[0].Routes = func(d *platform.Deps) []httpapi.Route {
		return append(orig(d), httpapi.Route{Method: "GET", Path: "/web/widgets/{id}.json"})
	}
	problems := checkTemplate(root, groups, tmpl, mk, dirs)
	want := fmt.Sprintf("route GET /web/widgets/{id}.json of group %q is not routed to %s", groups[0].Name, functionID(groups[0].Name))
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
		t.Errorf("missing route not reported; want a problem containing %q, got:\n%s", want, strings.Join(problems, "\n"))
	}

	groups = slices.Clone(api.Groups)
	groups[0].Routes = func(*platform.Deps) []httpapi.Route { return nil }
	problems = checkTemplate(root, groups, tmpl, mk, dirs)
	want = fmt.Sprintf("matches no route of group %q", groups[0].Name)
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
		t.Errorf("dead event not reported; want a problem containing %q, got:\n%s", want, strings.Join(problems, "\n"))
	}

	// An event-source function that lost its event source.
	id := functionID(eventSourceFunctions[0].Dir)
	fn := tmpl.functions[id]
	if fn == nil {
		t.Fatalf("template.yaml has no %s", id)
	}
	saved := fn.sources
	fn.sources = nil
	problems = checkTemplate(root, api.Groups, tmpl, mk, dirs)
	fn.sources = saved
	want = fmt.Sprintf("%s has no %s event", id, eventSourceFunctions[0].Type)
	if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, want) }) {
		t.Errorf("missing event source not reported; want a problem containing %q, got:\n%s", want, strings.Join(problems, "\n"))
	}
}

func TestTemplatePathMatching(t *testing.T) {
	for _, c := range []struct {
		event, route    string
		covers, overlap bool
	}{
		{"/web/redirects.json", "/web/redirects.json", true, true},
		{"/web/redirects.json", "/web/redirects/count.json", false, false},
		{"/web/redirects/{proxy+}", "/web/redirects/{id}.json", true, true},
		{"/web/redirects/{proxy+}", "/web/redirects/count.json", true, true},
		{"/web/redirects/{proxy+}", "/web/redirects/{id}/x/{y}.json", true, true},
		{"/web/redirects/{proxy+}", "/web/redirects.json", false, false},
		{"/web/redirects/{proxy+}", "/web/redirects", false, false},
		{"/web/{proxy+}", "/web/redirects.json", true, true},
		{"/web/redirects/{id}", "/web/redirects/{id}.json", true, true},
		{"/web/redirects/{id}", "/web/redirects/{id}/x.json", false, false},
		{"/web/redirects/count.json", "/web/redirects/{id}.json", false, true},
		{"/web/redirects/count", "/web/redirects/{id}.json", false, false},
		{"/web/script_tags/{proxy+}", "/web/redirects/{id}.json", false, false},
		// Routes nested under another resource: exact events, no
		// /com/products/{proxy+} (which would take other functions' routes).
		{"/com/products/{id}/variants.json", "/com/products/{product_id}/variants.json", true, true},
		{"/com/products/{id}/variants/{proxy+}", "/com/products/{product_id}/variants/{id}.json", true, true},
		{"/com/products/{id}/variants/{proxy+}", "/com/products/{product_id}/variants/count.json", true, true},
		{"/com/products/{id}/variants/{proxy+}", "/com/products/{product_id}/variants.json", false, false},
		{"/com/products/{id}/events.json", "/com/products/{product_id}/variants.json", false, false},
		{"/com/products/{id}/variants.json", "/com/products/{id}/events.json", false, false},
		{"/com/products/{proxy+}", "/com/products/{id}/events.json", true, true},
	} {
		if got := covers(c.event, c.route); got != c.covers {
			t.Errorf("covers(%s, %s) = %v, want %v", c.event, c.route, got, c.covers)
		}
		if got := overlaps(c.event, c.route); got != c.overlap {
			t.Errorf("overlaps(%s, %s) = %v, want %v", c.event, c.route, got, c.overlap)
		}
	}
}

// templateCheck collects the problems of template.yaml, infra/sam.mk's
// SAM_FUNCTIONS and the functions/ directories against the groups.
type templateCheck struct {
	root     string
	groups   []api.Group
	tmpl     *template
	mk       map[string]string
	dirs     []string
	problems []string
	groupOf  map[string]api.Group // by function logical id
	sourceFn map[string]bool      // functions that serve no route, by logical id
}

func (c *templateCheck) bad(format string, args ...any) {
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// checkTemplate returns every disagreement between the groups, the
// template's functions, sam.mk's build targets (logical id -> directory) and
// the directories under functions/.
func checkTemplate(root string, groups []api.Group, tmpl *template, mk map[string]string, dirs []string) []string {
	r := &templateCheck{root: root, groups: groups, tmpl: tmpl, mk: mk, dirs: dirs, sourceFn: map[string]bool{}}
	r.checkGroupFunctions()
	r.checkEventSourceFunctions()
	r.checkScheduledFunctions()
	r.checkPathFormFunctions()
	r.checkOrphans()
	r.checkEventKeys()
	r.checkRoutes()
	return r.problems
}

// checkGroupFunctions: each group has its directory, its SAM_FUNCTIONS entry and a
// function built by make from the repository root.
func (c *templateCheck) checkGroupFunctions() {
	c.groupOf = map[string]api.Group{} // by function logical id
	for _, g := range c.groups {
		id := functionID(g.Name)
		if _, dup := c.groupOf[id]; dup {
			c.bad("api.Groups: two groups map to the function %s", id)
		}
		c.groupOf[id] = g
		if !slices.Contains(c.dirs, g.Name) {
			c.bad("group %q has no directory functions/%s", g.Name, g.Name)
		}
		if dir, ok := c.mk[id]; !ok {
			c.bad("infra/sam.mk: SAM_FUNCTIONS has no entry for %s (group %q); add `%s=functions/%s`", id, g.Name, id, g.Name)
		} else if filepath.Clean(dir) != filepath.Join("functions", g.Name) {
			c.bad("infra/sam.mk: SAM_FUNCTIONS builds %s from %s, want functions/%s", id, dir, g.Name)
		}
		fn, ok := c.tmpl.functions[id]
		if !ok {
			c.bad("template.yaml: group %q has no function %s (AWS::Serverless::Function)", g.Name, id)
			continue
		}
		if fn.buildMethod != "makefile" {
			c.bad("template.yaml: %s: Metadata.BuildMethod is %q, want makefile (so that sam build runs make build-%s)", id, fn.buildMethod, id)
		}
		if abs := filepath.Join(c.root, fn.codeURI); fn.codeURI == "" || filepath.Clean(abs) != filepath.Clean(c.root) {
			c.bad("template.yaml: %s: CodeUri is %q, want . (the repository root, whose Makefile includes infra/sam.mk)", id, fn.codeURI)
		}
	}
}

// checkEventSourceFunctions: functions that serve no route are built the same
// way, fed by their event source, with no HTTP events.
func (c *templateCheck) checkEventSourceFunctions() {
	for _, e := range eventSourceFunctions {
		id := functionID(e.Dir)
		c.sourceFn[id] = true
		if _, dup := c.groupOf[id]; dup {
			c.bad("api.Groups: group %q is also listed as an event-source function", e.Dir)
		}
		if !slices.Contains(c.dirs, e.Dir) {
			c.bad("event-source function %s has no directory functions/%s", id, e.Dir)
		}
		if dir, ok := c.mk[id]; !ok {
			c.bad("infra/sam.mk: SAM_FUNCTIONS has no entry for %s; add `%s=functions/%s`", id, id, e.Dir)
		} else if filepath.Clean(dir) != filepath.Join("functions", e.Dir) {
			c.bad("infra/sam.mk: SAM_FUNCTIONS builds %s from %s, want functions/%s", id, dir, e.Dir)
		}
		fn, ok := c.tmpl.functions[id]
		if !ok {
			c.bad("template.yaml: no function %s (AWS::Serverless::Function) for functions/%s", id, e.Dir)
			continue
		}
		if fn.buildMethod != "makefile" {
			c.bad("template.yaml: %s: Metadata.BuildMethod is %q, want makefile (so that sam build runs make build-%s)", id, fn.buildMethod, id)
		}
		if abs := filepath.Join(c.root, fn.codeURI); fn.codeURI == "" || filepath.Clean(abs) != filepath.Clean(c.root) {
			c.bad("template.yaml: %s: CodeUri is %q, want . (the repository root, whose Makefile includes infra/sam.mk)", id, fn.codeURI)
		}
		for _, ev := range fn.events {
			c.bad("template.yaml: %s serves no route but has HttpApi event %s (%s %s)", id, ev.name, ev.method, ev.path)
		}
		src, _, _ := strings.Cut(e.Source, ".")
		found := false
		for _, ev := range fn.sources {
			if ev.typ != e.Type {
				continue
			}
			found = true
			if ev.source != e.Source {
				c.bad("template.yaml: %s event %s: %s is %q, want !GetAtt %s", id, ev.name, e.Property, ev.source, e.Source)
			}
			if !ev.reportsFailures {
				c.bad("template.yaml: %s event %s: FunctionResponseTypes must include ReportBatchItemFailures (the handler reports the records to retry)", id, ev.name)
			}
		}
		if !found {
			c.bad("template.yaml: %s has no %s event (on !GetAtt %s)", id, e.Type, e.Source)
		}
		if typ := c.tmpl.types[src]; typ != e.SourceType {
			c.bad("template.yaml: %s's event source %s is %q, want a %s", id, src, typ, e.SourceType)
		}
	}
}

// checkScheduledFunctions: built the same way, on a Schedule event, with no HTTP
// events.
func (c *templateCheck) checkScheduledFunctions() {
	for _, d := range scheduledFunctions {
		id := functionID(d)
		c.sourceFn[id] = true
		if !slices.Contains(c.dirs, d) {
			c.bad("scheduled function %s has no directory functions/%s", id, d)
		}
		if dir, ok := c.mk[id]; !ok || filepath.Clean(dir) != filepath.Join("functions", d) {
			c.bad("infra/sam.mk: SAM_FUNCTIONS needs `%s=functions/%s`", id, d)
		}
		fn, ok := c.tmpl.functions[id]
		if !ok {
			c.bad("template.yaml: no function %s (AWS::Serverless::Function) for functions/%s", id, d)
			continue
		}
		if fn.buildMethod != "makefile" {
			c.bad("template.yaml: %s: Metadata.BuildMethod is %q, want makefile", id, fn.buildMethod)
		}
		for _, ev := range fn.events {
			c.bad("template.yaml: %s serves no route but has HttpApi event %s (%s %s)", id, ev.name, ev.method, ev.path)
		}
		if !slices.ContainsFunc(fn.sources, func(e sourceEvent) bool { return e.typ == "Schedule" }) {
			c.bad("template.yaml: %s has no Schedule event", id)
		}
	}
}

// checkPathFormFunctions: built the same way, with exactly their events.
func (c *templateCheck) checkPathFormFunctions() {
	for d, want := range pathFormFunctions {
		id := functionID(d)
		c.sourceFn[id] = true
		if dir, ok := c.mk[id]; !ok || filepath.Clean(dir) != filepath.Join("functions", d) {
			c.bad("infra/sam.mk: SAM_FUNCTIONS needs `%s=functions/%s`", id, d)
		}
		fn, ok := c.tmpl.functions[id]
		if !ok {
			c.bad("template.yaml: no function %s (AWS::Serverless::Function) for functions/%s", id, d)
			continue
		}
		if fn.buildMethod != "makefile" {
			c.bad("template.yaml: %s: Metadata.BuildMethod is %q, want makefile", id, fn.buildMethod)
		}
		var got []string
		for _, ev := range fn.events {
			got = append(got, ev.method+" "+ev.path)
		}
		if slices.Sort(got); !slices.Equal(got, slices.Sorted(slices.Values(want))) {
			c.bad("template.yaml: %s has events %v, want %v", id, got, want)
		}
	}
}

// checkOrphans: every directory, SAM_FUNCTIONS entry and template function
// belongs to a group or a known function.
func (c *templateCheck) checkOrphans() {
	for _, d := range c.dirs {
		if _, ok := pathFormFunctions[d]; ok {
			continue
		}
		if !slices.ContainsFunc(c.groups, func(g api.Group) bool { return g.Name == d }) &&
			!slices.ContainsFunc(eventSourceFunctions, func(e eventSourceFunction) bool { return e.Dir == d }) &&
			!slices.Contains(scheduledFunctions, d) {
			c.bad("functions/%s has no group in api.Groups (nor is it an event-source or scheduled function)", d)
		}
	}
	for id, dir := range c.mk {
		if _, ok := c.groupOf[id]; !ok && !c.sourceFn[id] {
			c.bad("infra/sam.mk: SAM_FUNCTIONS entry %s=%s matches no group in api.Groups", id, dir)
		}
	}
	for _, id := range c.tmpl.order {
		if _, ok := c.groupOf[id]; !ok && !c.sourceFn[id] {
			c.bad("template.yaml: function %s matches no group in api.Groups (want CamelCase(group name)+\"Function\")", id)
		}
	}
}

// checkEventKeys: events are valid, with unique route keys, on the template's
// HTTP API.
func (c *templateCheck) checkEventKeys() {
	seen := map[string]string{}
	for _, id := range c.tmpl.order {
		for _, ev := range c.tmpl.functions[id].events {
			where := fmt.Sprintf("template.yaml: %s event %s (%s %s)", id, ev.name, ev.method, ev.path)
			if ev.problem != "" {
				c.bad("%s: %s", where, ev.problem)
			}
			key := ev.method + " " + ev.path
			if other, dup := seen[key]; dup {
				c.bad("%s: route key already used by %s", where, other)
			}
			seen[key] = id + " event " + ev.name
		}
	}
}

// checkRoutes: each served by its own function's events and by no other's;
// each event needed by some route of its group.
func (c *templateCheck) checkRoutes() {
	for _, g := range c.groups {
		id := functionID(g.Name)
		routes := g.Routes(&platform.Deps{})
		for _, r := range routes {
			// API Gateway takes a route without a greedy variable before
			// one with it: a route served by such an event of its own
			// function is not taken by another function's greedy event.
			exact := false
			if fn, ok := c.tmpl.functions[id]; ok {
				exact = slices.ContainsFunc(fn.events, func(ev event) bool {
					return methodMatches(ev.method, r.Method) && covers(ev.path, r.Path) && !isGreedy(lastSegment(ev.path))
				})
			}
			if fn, ok := c.tmpl.functions[id]; ok && !slices.ContainsFunc(fn.events, func(ev event) bool {
				return methodMatches(ev.method, r.Method) && covers(ev.path, r.Path)
			}) {
				c.bad("template.yaml: route %s %s of group %q is not routed to %s: no HttpApi event of %s matches it (add an event such as `ANY %s`)",
					r.Method, r.Path, g.Name, id, id, suggestEvent(r.Path))
			}
			for _, other := range c.tmpl.order {
				if other == id {
					continue
				}
				pathForm := false
				for d := range pathFormFunctions {
					pathForm = pathForm || functionID(d) == other
				}
				for _, ev := range c.tmpl.functions[other].events {
					if pathForm && ownMoreSpecific(c.tmpl.functions[id], r, ev.path) {
						continue
					}
					if methodMatches(ev.method, r.Method) && overlaps(ev.path, r.Path) && !(exact && isGreedy(lastSegment(ev.path))) {
						c.bad("template.yaml: route %s %s of group %q (%s) also matches event %s (%s %s) of %s",
							r.Method, r.Path, g.Name, id, ev.name, ev.method, ev.path, other)
					}
				}
			}
		}
		if fn, ok := c.tmpl.functions[id]; ok {
			for _, ev := range fn.events {
				// A versioned event (/admin/api/{version}/graphql.json) reaches
				// the route at its own path (/admin/graphql.json): the router
				// serves Shopify's form.
				unversioned := ev.path
				if rest, ok := strings.CutPrefix(ev.path, "/admin/api/{version}/"); ok {
					unversioned = "/admin/" + rest
				}
				if !slices.ContainsFunc(routes, func(r httpapi.Route) bool {
					return methodMatches(ev.method, r.Method) && (overlaps(ev.path, r.Path) || overlaps(unversioned, r.Path))
				}) {
					c.bad("template.yaml: %s event %s (%s %s) matches no route of group %q (dead route)", id, ev.name, ev.method, ev.path, g.Name)
				}
			}
		}
	}
}

// ownMoreSpecific reports whether fn has an event routing r whose literal
// prefix is longer than greedy's, which API Gateway therefore prefers.
func ownMoreSpecific(fn *function, r httpapi.Route, greedy string) bool {
	literal := func(path string) int {
		n := 0
		for _, seg := range strings.Split(strings.TrimPrefix(path, "/"), "/") {
			if strings.Contains(seg, "{") {
				break
			}
			n++
		}
		return n
	}
	return fn != nil && slices.ContainsFunc(fn.events, func(ev event) bool {
		return methodMatches(ev.method, r.Method) && covers(ev.path, r.Path) && literal(ev.path) > literal(greedy)
	})
}

// functionID is the template logical id of a group's function:
// script-tags -> ScriptTagsFunction.
func functionID(group string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(group, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + "Function"
}

// suggestEvent proposes an event path for a route: the route itself when it
// has no wildcard, else {proxy+} after its literal prefix.
func suggestEvent(route string) string {
	segs := strings.Split(strings.TrimPrefix(route, "/"), "/")
	for i, s := range segs {
		if strings.Contains(s, "{") {
			return "/" + strings.Join(append(segs[:i:i], "{proxy+}"), "/")
		}
	}
	return route
}

func methodMatches(eventMethod, routeMethod string) bool {
	return strings.EqualFold(eventMethod, "ANY") || strings.EqualFold(eventMethod, routeMethod)
}

// An event path (API Gateway HTTP API) has literal segments, {name} (one
// segment) and a last {name+} (one or more segments). A route path
// (httpapi.Route) has segments mixing literals and {name} wildcards, which
// stand for non-empty text without a slash, such as {id}.json.

// covers reports whether every request path of the route matches the event.
func covers(eventPath, routePath string) bool {
	ev, rt := segments(eventPath), segments(routePath)
	for i, e := range ev {
		switch {
		case isGreedy(e):
			return i == len(ev)-1 && len(rt) > i
		case i >= len(rt):
			return false
		case isParam(e):
		case strings.Contains(rt[i], "{") || e != rt[i]:
			return false
		}
	}
	return len(ev) == len(rt)
}

// overlaps reports whether some request path of the route matches the event.
func overlaps(eventPath, routePath string) bool {
	ev, rt := segments(eventPath), segments(routePath)
	for i, e := range ev {
		switch {
		case isGreedy(e):
			return i == len(ev)-1 && len(rt) > i
		case i >= len(rt):
			return false
		case isParam(e):
		case !segmentPattern(rt[i]).MatchString(e):
			return false
		}
	}
	return len(ev) == len(rt)
}

func segments(p string) []string { return strings.Split(strings.TrimPrefix(p, "/"), "/") }

func lastSegment(p string) string { segs := segments(p); return segs[len(segs)-1] }

func isGreedy(seg string) bool {
	return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "+}")
}

func isParam(seg string) bool {
	return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") && !isGreedy(seg)
}

var wildcard = regexp.MustCompile(`\{[^}]*\}`)

// segmentPattern matches the texts a route segment stands for.
func segmentPattern(seg string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	last := 0
	for _, m := range wildcard.FindAllStringIndex(seg, -1) {
		b.WriteString(regexp.QuoteMeta(seg[last:m[0]]) + "[^/]+")
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(seg[last:]) + "$")
	return regexp.MustCompile(b.String())
}

// template is what the tests need of template.yaml.
type template struct {
	functions map[string]*function
	order     []string          // logical ids in template order
	types     map[string]string // every resource's Type, by logical id
}

type function struct {
	codeURI, buildMethod string
	env                  []string      // the names of its own environment variables
	events               []event       // HttpApi events only
	sources              []sourceEvent // every other event
}

// sourceEvent is an event of another type than HttpApi (SQS, DynamoDB, ...).
type sourceEvent struct {
	name, typ       string
	source          string // its Queue or Stream as "Resource.Attribute" when a !GetAtt, else ""
	reportsFailures bool   // FunctionResponseTypes includes ReportBatchItemFailures
}

type event struct {
	name, method, path string
	problem            string // set when the event is malformed
}

// loadTemplate decodes into yaml.Node, which keeps CloudFormation's short
// tags (!Ref, !GetAtt, !Sub) as node tags instead of failing on them.
func loadTemplate(t *testing.T, path string) *template {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) != 1 {
		t.Fatalf("%s: not a YAML document", path)
	}
	top := doc.Content[0]
	resources := get(top, "Resources")
	if resources == nil || resources.Kind != yaml.MappingNode {
		t.Fatalf("%s: no Resources mapping", path)
	}
	globalCodeURI := get(top, "Globals", "Function", "CodeUri")

	apis := map[string]bool{} // AWS::Serverless::HttpApi logical ids
	for i := 0; i+1 < len(resources.Content); i += 2 {
		if scalar(get(resources.Content[i+1], "Type")) == "AWS::Serverless::HttpApi" {
			apis[resources.Content[i].Value] = true
		}
	}

	tm := &template{functions: map[string]*function{}, types: map[string]string{}}
	for i := 0; i+1 < len(resources.Content); i += 2 {
		id, res := resources.Content[i].Value, resources.Content[i+1]
		tm.types[id] = scalar(get(res, "Type"))
		if scalar(get(res, "Type")) != "AWS::Serverless::Function" {
			continue
		}
		fn := &function{
			codeURI:     scalar(get(res, "Properties", "CodeUri")),
			buildMethod: scalar(get(res, "Metadata", "BuildMethod")),
		}
		if fn.codeURI == "" {
			fn.codeURI = scalar(globalCodeURI)
		}
		if vars := get(res, "Properties", "Environment", "Variables"); vars != nil && vars.Kind == yaml.MappingNode {
			for j := 0; j+1 < len(vars.Content); j += 2 {
				fn.env = append(fn.env, vars.Content[j].Value)
			}
		}
		if events := get(res, "Properties", "Events"); events != nil {
			addEvents(fn, events, apis)
		}
		tm.functions[id] = fn
		tm.order = append(tm.order, id)
	}
	return tm
}

// addEvents reads a function's events: HttpApi events with the problems
// that would break their routing, the other kinds as their sources.
func addEvents(fn *function, events *yaml.Node, apis map[string]bool) {
	for j := 0; j+1 < len(events.Content); j += 2 {
		evNode := events.Content[j+1]
		if typ := scalar(get(evNode, "Type")); typ != "HttpApi" {
			src := sourceEvent{name: events.Content[j].Value, typ: typ}
			for _, prop := range []string{"Queue", "Stream"} {
				if n := get(evNode, "Properties", prop); n != nil {
					src.source = getAtt(n)
				}
			}
			if frt := get(evNode, "Properties", "FunctionResponseTypes"); frt != nil && frt.Kind == yaml.SequenceNode {
				src.reportsFailures = slices.ContainsFunc(frt.Content, func(n *yaml.Node) bool { return scalar(n) == "ReportBatchItemFailures" })
			}
			fn.sources = append(fn.sources, src)
			continue
		}
		ev := event{
			name:   events.Content[j].Value,
			method: strings.ToUpper(scalar(get(evNode, "Properties", "Method"))),
			path:   scalar(get(evNode, "Properties", "Path")),
		}
		apiID := get(evNode, "Properties", "ApiId")
		pfv := scalar(get(evNode, "Properties", "PayloadFormatVersion"))
		switch {
		case ev.method == "" || ev.path == "":
			ev.problem = "needs Method and Path"
		case !strings.HasPrefix(ev.path, "/"):
			ev.problem = "Path must start with /"
		case slices.ContainsFunc(segments(ev.path)[:len(segments(ev.path))-1], isGreedy):
			ev.problem = "a {name+} wildcard must be the last segment"
		case apiID == nil || apiID.Tag != "!Ref" || !apis[apiID.Value]:
			ev.problem = "ApiId must be !Ref of the template's AWS::Serverless::HttpApi (else SAM creates a second, implicit API)"
		case pfv != "" && pfv != "2.0":
			ev.problem = fmt.Sprintf("PayloadFormatVersion is %q; the functions take 2.0 payloads (httpadapter.NewV2)", pfv)
		}
		fn.events = append(fn.events, ev)
	}
}

// get follows mapping keys from n; nil when one is missing.
func get(n *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		if n == nil || n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == k {
				next = n.Content[i+1]
				break
			}
		}
		n = next
	}
	return n
}

// getAtt returns the "Resource.Attribute" of a GetAtt (!GetAtt R.A,
// !GetAtt [R, A] or Fn::GetAtt: [R, A]), "" for anything else.
func getAtt(n *yaml.Node) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.MappingNode && len(n.Content) == 2 && n.Content[0].Value == "Fn::GetAtt" {
		n = n.Content[1]
	} else if n.Tag != "!GetAtt" {
		return ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value
	case yaml.SequenceNode:
		parts := make([]string, len(n.Content))
		for i, c := range n.Content {
			parts[i] = c.Value
		}
		return strings.Join(parts, ".")
	}
	return ""
}

// scalar returns a plain scalar's value, "" for anything else (including
// intrinsic functions such as !Ref).
func scalar(n *yaml.Node) string {
	if n == nil || n.Kind != yaml.ScalarNode || strings.HasPrefix(n.Tag, "!") && !strings.HasPrefix(n.Tag, "!!") {
		return ""
	}
	return n.Value
}

// loadSAMFunctions reads the SAM_FUNCTIONS variable of infra/sam.mk: words
// LogicalId=functions/<dir>.
func loadSAMFunctions(t *testing.T, path string) map[string]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(data), "\\\n", " ") // join continued lines
	assign := regexp.MustCompile(`^SAM_FUNCTIONS\s*(\+=|:=|::=|=)(.*)$`)
	m := map[string]string{}
	found := false
	for _, line := range strings.Split(text, "\n") {
		line, _, _ = strings.Cut(line, "#")
		sub := assign.FindStringSubmatch(strings.TrimSpace(line))
		if sub == nil {
			continue
		}
		found = true
		if sub[1] != "+=" {
			clear(m)
		}
		for _, w := range strings.Fields(sub[2]) {
			id, dir, ok := strings.Cut(w, "=")
			if !ok || id == "" || dir == "" {
				t.Fatalf("%s: SAM_FUNCTIONS word %q is not LogicalId=functions/<dir>", path, w)
			}
			if _, dup := m[id]; dup {
				t.Errorf("%s: SAM_FUNCTIONS lists %s twice", path, id)
			}
			m[id] = dir
		}
	}
	if !found {
		t.Fatalf("%s: no SAM_FUNCTIONS variable", path)
	}
	return m
}

func functionDirs(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

// repoRoot is the directory of go.mod above the test's directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
}

// The change-feed function's stream filter passes every change to a record
// of a deriving partition (api.Derivers): a partition it drops would never
// get its entries, counts, events or notifications in AWS.
func TestChangeFeedFilterPassesDerivedPartitions(t *testing.T) {
	data, err := os.ReadFile("../../template.yaml")
	if err != nil {
		t.Fatal(err)
	}
	type filters struct {
		Filters []struct {
			Pattern string `yaml:"Pattern"`
		} `yaml:"Filters"`
	}
	var doc struct {
		Resources map[string]struct {
			Properties struct {
				Events map[string]struct {
					Properties struct {
						FilterCriteria filters `yaml:"FilterCriteria"`
					} `yaml:"Properties"`
				} `yaml:"Events"`
			} `yaml:"Properties"`
		} `yaml:"Resources"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	passed := map[string]bool{}
	var prefixes []string
	for _, ev := range doc.Resources["ChangeFeedFunction"].Properties.Events {
		for _, f := range ev.Properties.FilterCriteria.Filters {
			var p struct {
				EventName []string `json:"eventName"`
				Dynamodb  struct {
					Keys struct{ PK struct{ S []json.RawMessage } }
				} `json:"dynamodb"`
			}
			if err := json.Unmarshal([]byte(f.Pattern), &p); err != nil {
				t.Fatalf("pattern %s: %v", f.Pattern, err)
			}
			if len(p.EventName) == 0 { // inserts, modifications and removals
				for _, v := range p.Dynamodb.Keys.PK.S {
					// An exact partition, or a family's prefix
					// ({"prefix": "script_tag#app#"}: api.Derivers names
					// a family by it).
					var pk string
					var prefix struct{ Prefix string }
					if json.Unmarshal(v, &pk) == nil {
						passed[pk] = true
						continue
					}
					if err := json.Unmarshal(v, &prefix); err != nil || prefix.Prefix == "" {
						t.Fatalf("pattern %s: %s is neither a partition nor a prefix", f.Pattern, v)
					}
					prefixes = append(prefixes, prefix.Prefix)
				}
			}
		}
	}
	for pk := range api.Derivers() {
		family := strings.HasSuffix(pk, "#") // a family of partitions: its prefix must pass
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(pk, p) }) && (family || !passed[pk]) {
			t.Errorf("template.yaml: ChangeFeedFunction's FilterCriteria drops changes to %q, which api.Derivers derives from", pk)
		}
	}
}

// The shopify-paths function serves every group but GraphQL (whose
// function API Gateway sends both its paths to): PathGroups lists them
// all, in Groups' order.
func TestPathGroupsAreEveryGroupButGraphQL(t *testing.T) {
	var want []string
	for _, g := range api.Groups {
		if g.Name != api.GraphQL.Name {
			want = append(want, g.Name)
		}
	}
	var got []string
	for _, g := range api.PathGroups {
		got = append(got, g.Name)
	}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("PathGroups %v, want %v", got, want)
	}
}
