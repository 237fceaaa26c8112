package api_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
)

// Shopify's libraries save a record by sending back the whole object as
// they read it, with the changed fields, and ids as strings (the Node
// library reads every id losslessly as a string). For every PUT of a record
// (docs/openapi.yaml, so a new resource is covered as soon as it is
// documented) and every path form: GET the record, change one writable
// field, PUT the whole object back; the answer and a new GET show that
// field changed, updated_at perhaps, and nothing else.
func TestWholeObjectRoundTrip(t *testing.T) {
	doc := loadOpenAPI(t)
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rt := &roundTrip{doc: doc, e: e, ids: map[string]int64{}}
		n := 0
		for _, op := range doc.ops {
			wrapper := rt.wrapper(op)
			if op.method != "PUT" || !strings.HasSuffix(op.path, "/{id}.json") || wrapper == "" {
				continue
			}
			n++
			t.Run(op.path, func(t *testing.T) { rt.run(t, op, wrapper) })
		}
		if n < 15 {
			t.Fatalf("%d record PUTs in the document", n)
		}
	}, api.Groups...)
}

type roundTrip struct {
	doc *openAPI
	e   *apitest.Env
	ids map[string]int64 // a record of each collection path, by that path
}

// Seeded parents the document's paths name (shared/seed/demo.json).
var roundTripSeeds = map[string]int64{
	"blog_id": 241253187, "product_id": 632910392, "customer_id": 207119551, "order_id": 450789469,
	"variant_id": 808950810,
}

// roundTripFields are the fields a round trip changes, the first the PUT
// takes and the record answers as a string (or an integer): plain text,
// which no other field derives from.
var roundTripFields = []string{
	"title", "author", "tracking_support", "name", "note", "company", "tax", "tax_name", "sku",
	"template_suffix", "address2", "description", "value", "query", "target", "address", "src",
}

// roundTripDerived are the read-only fields the service derives from a
// field (they change with it).
var roundTripDerived = map[string][]string{
	"tax": {"tax_percentage"},
}

// roundTripCollections are records of collections without a list.
var roundTripCollections = map[string]int64{"/com/variants": 808950810}

// wrapper is the one property a PUT's body requires ("" for none).
func (rt *roundTrip) wrapper(op *operation) string {
	body := rt.doc.deref(op.obj["requestBody"])
	content, _ := body["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	schema := rt.doc.deref(media["schema"])
	if req := asSlice(schema["required"]); len(req) == 1 {
		s, _ := req[0].(string)
		return s
	}
	return ""
}

func (rt *roundTrip) run(t *testing.T, op *operation, wrapper string) {
	path := rt.fill(t, op.path)
	rest := path[strings.Index(path[1:], "/")+1:]
	forms := []string{path, "/admin/api/2024-10" + rest}
	// Unversioned, unless the spec serves the path at /admin itself (then it
	// keeps the spec's meaning: PUT /admin/countries/{id}.json is 405).
	if restTemplate := op.path[strings.Index(op.path[1:], "/")+1:]; !rt.servedAtAdmin(restTemplate) {
		forms = append(forms, "/admin"+rest)
	}
	for i, p := range forms {
		before, answer := rt.read(t, p)
		field := rt.writable(t, op, before)
		if i == 0 {
			t.Logf("changes %s", field)
		}
		body := stringIDs(maps.Clone(before), "").(map[string]any)
		switch v := before[field].(type) {
		case string: // a suffix that keeps a URL or path one
			body[field] = fmt.Sprintf("%s-r%d", strings.TrimSpace(v), i+2)
		case float64: // a rate stays within 0 to 1
			body[field] = v + 1
			if v < 1 {
				body[field] = v + 0.01
			}
		case bool:
			body[field] = !v
		}
		put := rt.e.Do("PUT", p, map[string]any{wrapper: body})
		if put.Status != 200 {
			t.Errorf("%s: PUT of the whole object with %s changed: %d %s", p, field, put.Status, put.Body)
			continue
		}
		after, _ := rt.read(t, p)
		for _, got := range []map[string]any{put.Object(t, answer), after} {
			if fmt.Sprint(got[field]) != fmt.Sprint(body[field]) {
				t.Errorf("%s: %s = %v, sent %v", p, field, got[field], body[field])
			}
			for _, k := range sortedKeys(got) {
				if k != field && k != "updated_at" && !slices.Contains(roundTripDerived[field], k) && !reflect.DeepEqual(got[k], before[k]) {
					t.Errorf("%s: changing %s also changed %s: %v, was %v", p, field, k, got[k], before[k])
				}
			}
			if len(got) != len(before) {
				t.Errorf("%s: fields %v, were %v", p, sortedKeys(got), sortedKeys(before))
			}
		}
		rt.readOnly(t, op, p, answer, after)
	}
}

// readOnly sends the whole object back with every read-only field (one the
// PUT's schema does not take) changed: each is ignored, as Shopify ignored
// them (docs/spec-gaps.md), and the record stays as it was.
func (rt *roundTrip) readOnly(t *testing.T, op *operation, p, answer string, before map[string]any) {
	takes := rt.takes(op)
	body := stringIDs(maps.Clone(before), "").(map[string]any)
	var changed []string
	for k, v := range before {
		if takes[k] {
			continue
		}
		switch v := v.(type) {
		case string:
			if strings.HasSuffix(k, "_at") {
				body[k] = "2001-02-03T04:05:06Z"
			} else {
				body[k] = v + "-changed"
			}
		case float64:
			body[k] = fmt.Sprint(int64(v) + 1)
		case bool:
			body[k] = !v
		default:
			continue
		}
		changed = append(changed, k)
	}
	slices.Sort(changed)
	if strings.HasPrefix(p, "/admin/api/") {
		t.Logf("read-only: %v", changed)
	}
	wrapper := rt.wrapper(op)
	put := rt.e.Do("PUT", p, map[string]any{wrapper: body})
	if put.Status != 200 {
		t.Errorf("%s: PUT with the read-only %v changed: %d %s", p, changed, put.Status, put.Body)
		return
	}
	after, _ := rt.read(t, p)
	for _, k := range sortedKeys(after) {
		if k != "updated_at" && !reflect.DeepEqual(after[k], before[k]) {
			t.Errorf("%s: read-only fields %v sent changed: %s = %v, was %v", p, changed, k, after[k], before[k])
		}
	}
}

// takes are the properties the PUT's wrapped object takes.
func (rt *roundTrip) takes(op *operation) map[string]bool {
	body := rt.doc.deref(op.obj["requestBody"])
	content, _ := body["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	schema := rt.doc.deref(media["schema"])
	props, _ := schema["properties"].(map[string]any)
	inner := rt.doc.deref(props[rt.wrapper(op)])
	takes := map[string]bool{}
	for _, s := range append([]any{inner}, asSlice(inner["allOf"])...) {
		p, _ := rt.doc.deref(s)["properties"].(map[string]any)
		for k := range p {
			takes[k] = true
		}
	}
	return takes
}

func (rt *roundTrip) servedAtAdmin(restTemplate string) bool {
	for _, op := range rt.doc.ops {
		if op.path == "/admin"+restTemplate {
			return true
		}
	}
	return false
}

// writable is the first of roundTripFields the PUT's body schema has and
// the record holds as a string or a number.
func (rt *roundTrip) writable(t *testing.T, op *operation, rec map[string]any) string {
	t.Helper()
	takes := rt.takes(op)
	for _, f := range roundTripFields {
		switch rec[f].(type) {
		case string, float64, bool:
			if takes[f] {
				return f
			}
		}
	}
	t.Fatalf("no field of %v to change among %v (extend roundTripFields)", slices.Sorted(maps.Keys(takes)), roundTripFields)
	return ""
}

// read GETs the record at p: the object and its wrapper. A record without
// a GET of its own (a saved search) is read from its collection's list.
func (rt *roundTrip) read(t *testing.T, p string) (map[string]any, string) {
	t.Helper()
	res := rt.e.Do("GET", p, nil)
	if res.Status == 405 {
		dir, file := p[:strings.LastIndex(p, "/")], p[strings.LastIndex(p, "/")+1:]
		id := strings.TrimSuffix(file, ".json")
		for wrapper, item := range listed(rt.e.Do("GET", dir+".json", nil).Expect(t, 200)) {
			if fmt.Sprint(int64(item["id"].(float64))) == id {
				return item, strings.TrimSuffix(wrapper, "s")
			}
		}
		t.Fatalf("%s: no GET, and not in its collection's list", p)
	}
	var v map[string]map[string]any
	if err := json.Unmarshal(res.Expect(t, 200).Body, &v); err != nil || len(v) != 1 {
		t.Fatalf("GET %s: %s", p, res.Body)
	}
	for w, obj := range v {
		return obj, w
	}
	return nil, ""
}

// listed is every object of a list answer, with the list's name.
func listed(res *apitest.Response) map[string]map[string]any {
	var v map[string]any
	json.Unmarshal(res.Body, &v)
	out := map[string]map[string]any{}
	for name, items := range v {
		for _, it := range asSlice(items) {
			if m, ok := it.(map[string]any); ok {
				if _, ok := m["id"].(float64); ok {
					out[name+fmt.Sprint(len(out))] = m
				}
			}
		}
	}
	return out
}

// fill gives a path template's parameters the ids of records: seeded
// parents, else a record of the collection the parameter names (one
// listed whose own collections the rest of the path reaches, else one
// created from the document's example).
func (rt *roundTrip) fill(t *testing.T, template string) string {
	t.Helper()
	p, ok := rt.fillFrom(t, template, template)
	if !ok {
		t.Fatalf("%s: no records to fill it with", template)
	}
	return p
}

func (rt *roundTrip) fillFrom(t *testing.T, template, out string) (string, bool) {
	i := strings.Index(out, "{")
	if i < 0 {
		return out, true
	}
	j := strings.Index(out[i:], "}") + i
	name := out[i+1 : j]
	var candidates []int64
	if id, ok := roundTripSeeds[name]; ok {
		candidates = []int64{id}
	} else {
		candidates = rt.records(t, template, out[:i-1])
	}
	for _, id := range candidates {
		next := fmt.Sprintf("%s%d%s", out[:i], id, out[j+1:])
		if k := strings.Index(next, "{"); k >= 0 && strings.Contains(next[k:], "/") {
			// A parent: its child collection must hold a record.
			if res := rt.e.Do("GET", next[:k-1]+".json", nil); res.Status == 200 && len(listed(res)) == 0 {
				if op, _ := rt.doc.find("POST", next[:k-1]+".json"); op == nil {
					continue
				}
			}
		}
		if p, ok := rt.fillFrom(t, template, next); ok {
			return p, true
		}
	}
	if body, ok := roundTripParents[out[:i-1]]; ok {
		var created map[string]struct{ ID int64 }
		json.Unmarshal(rt.e.Do("POST", out[:i-1]+".json", body).Expect(t, 201).Body, &created)
		for _, c := range created {
			return rt.fillFrom(t, template, fmt.Sprintf("%s%d%s", out[:i], c.ID, out[j+1:]))
		}
	}
	return "", false
}

// roundTripParents create a parent whose children the listed ones lack (a
// country with provinces).
var roundTripParents = map[string]any{"/com/countries": map[string]any{"country": map[string]any{"code": "CA", "tax": 0.05}}}

// records are the ids of the collection at path (concrete, without .json):
// those listed, else one created from the create's example.
func (rt *roundTrip) records(t *testing.T, template, path string) []int64 {
	t.Helper()
	if id, ok := roundTripCollections[path]; ok {
		return []int64{id}
	}
	var ids []int64
	if res := rt.e.Do("GET", path+".json", nil); res.Status == 200 {
		for _, m := range listed(res) {
			ids = append(ids, int64(m["id"].(float64)))
		}
	}
	slices.Sort(ids)
	if len(ids) > 0 {
		return ids
	}
	if id, ok := rt.ids[path]; ok {
		return []int64{id}
	}
	create, _ := rt.doc.find("POST", path+".json")
	if create == nil {
		return nil
	}
	body := rt.doc.deref(create.obj["requestBody"])
	content, _ := body["content"].(map[string]any)
	media, _ := content["application/json"].(map[string]any)
	example := rt.parents(t, media["example"])
	res := rt.e.Do("POST", path+".json", example)
	if res.Status != 201 {
		t.Fatalf("%s: creating from the example of POST %s: %d %s", template, create.path, res.Status, res.Body)
	}
	var v map[string]map[string]any
	json.Unmarshal(res.Body, &v)
	for _, obj := range v {
		id := int64(obj["id"].(float64))
		rt.ids[path] = id
		return []int64{id}
	}
	return nil
}

// parents gives an example's *_id properties records: seeded ones, else
// one of the collection a path names the parameter after.
func (rt *roundTrip) parents(t *testing.T, example any) any {
	wrapped, _ := example.(map[string]any)
	for _, inner := range wrapped {
		obj, _ := inner.(map[string]any)
		for k := range obj {
			if !strings.HasSuffix(k, "_id") {
				continue
			}
			if id, ok := roundTripSeeds[k]; ok {
				obj[k] = id
				continue
			}
			for _, op := range rt.doc.ops {
				if i := strings.Index(op.path, "/{"+k+"}"); i > 0 {
					obj[k] = rt.records(t, op.path, rt.fill(t, op.path[:i]))[0]
					break
				}
			}
		}
	}
	return example
}

// stringIDs writes every id (id, *_id) inside v as a string, as Shopify's
// Node library reads and sends them back.
func stringIDs(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = stringIDs(e, k)
		}
	case []any:
		for i, e := range x {
			x[i] = stringIDs(e, key)
		}
	case float64:
		if key == "id" || strings.HasSuffix(key, "_id") {
			return fmt.Sprintf("%d", int64(x))
		}
	}
	return v
}
