package scripttags

import (
	"context"
	"testing"

	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/httpapi/httpapitest"
	"github.com/storeadmin/adminapi/shared/records"
)

// The HTTP conventions of a resource under its own scope (script_tags),
// whose list filters are a URL and dates, against fake operations: no
// store, milliseconds.

type fakeOps struct {
	err     error  // answered by every operation when set
	got     *Input // the last input a create or update received
	gotID   int64
	gotFilt Filter
}

func (f *fakeOps) Count(_ context.Context, fl Filter) (int, error) {
	f.gotFilt = fl
	return 7, f.err
}
func (f *fakeOps) Create(_ context.Context, in *Input) (ScriptTag, error) {
	f.got = in
	return ScriptTag{ID: 11, Src: *in.Src, Event: "onload", DisplayScope: "all"}, f.err
}
func (f *fakeOps) Delete(_ context.Context, id int64) error { f.gotID = id; return f.err }
func (f *fakeOps) Get(_ context.Context, id int64) (ScriptTag, error) {
	f.gotID = id
	return ScriptTag{ID: id, Src: "https://js.example.org/a.js", Event: "onload", DisplayScope: "all"}, f.err
}
func (f *fakeOps) List(_ context.Context, fl Filter, _ int64, _ records.Window) ([]ScriptTag, records.Span, error) {
	f.gotFilt = fl
	return []ScriptTag{{ID: 1, Src: "https://js.example.org/a.js"}, {ID: 2, Src: "https://js.example.org/b.js"}}, records.Span{}, f.err
}
func (f *fakeOps) Update(_ context.Context, id int64, in *Input) (ScriptTag, error) {
	f.gotID, f.got = id, in
	return ScriptTag{ID: id, Src: "https://js.example.org/a.js", Event: "onload", DisplayScope: "all"}, f.err
}

const validTag = `{"script_tag":{"event":"onload","src":"https://js.example.org/a.js"}}`

func TestHandlersUnderTheConventions(t *testing.T) {
	ops := &fakeOps{}
	w, r := httpapitest.Writer, httpapitest.Reader
	httpapitest.Run(t, routes(ops), []httpapitest.Case{
		{"create answers 201 with the record", w, "POST", "/web/script_tags.json", validTag, 201, `{"script_tag":{"id":11,"src":"https://js.example.org/a.js",`},
		{"an id in the body as a string is accepted", w, "PUT", "/web/script_tags/5.json", `{"script_tag":{"id":"5","display_scope":"all"}}`, 200, `{"script_tag":{"id":5,`},
		{"fields restrict the record", r, "GET", "/web/script_tags/9.json?fields=id,display_scope", ``, 200, `{"script_tag":{"id":9,"display_scope":"all"}}`},
		{"fields restrict each listed record", r, "GET", "/web/script_tags.json?fields=src", ``, 200, `{"script_tags":[{"src":"https://js.example.org/a.js"},{"src":"https://js.example.org/b.js"}]}`},
		{"count", r, "GET", "/web/script_tags/count.json", ``, 200, `{"count":7}`},
		{"delete answers {}", w, "DELETE", "/web/script_tags/3.json", ``, 200, `{}`},
		{"a read scope cannot create", r, "POST", "/web/script_tags.json", validTag, 403, `write_script_tags`},
		{"a read scope cannot update", r, "PUT", "/web/script_tags/5.json", validTag, 403, `write_script_tags`},
		{"a read scope cannot delete", r, "DELETE", "/web/script_tags/5.json", ``, 403, `write_script_tags`},
		{"a string field of the wrong type", w, "POST", "/web/script_tags.json", `{"script_tag":{"event":"onload","src":["https://js.example.org/a.js"]}}`, 422, `"src":[`},
		{"null where the document allows none", w, "PUT", "/web/script_tags/5.json", `{"script_tag":{"display_scope":null}}`, 422, `"display_scope":[`},
		{"a non-numeric id", r, "GET", "/web/script_tags/a.js.json", ``, 404, `{"errors":"Not Found"}`},
		{"id 0", w, "DELETE", "/web/script_tags/0.json", ``, 404, `{"errors":"Not Found"}`},
		{"a src filter that is no absolute URL", r, "GET", "/web/script_tags.json?src=a.js", ``, 400, `"src"`},
		{"a src filter counted that is no absolute URL", r, "GET", "/web/script_tags/count.json?src=" + "https://a.example/%20b", ``, 400, `"src"`},
		{"an unreadable date", r, "GET", "/web/script_tags.json?created_at_min=yesterday", ``, 400, `"created_at_min"`},
		{"limit 0", r, "GET", "/web/script_tags.json?limit=0", ``, 400, `"limit"`},
		{"a page too deep", r, "GET", "/web/script_tags.json?limit=250&page=102", ``, 400, `"page"`},
		{"a page_info beside a filter", r, "GET", "/web/script_tags.json?page_info=x&src=https://js.example.org/a.js", ``, 400, `"src"`},
	})
	if ops.got == nil || ops.got.DisplayScope == nil || *ops.got.DisplayScope != "all" || ops.gotID != 3 {
		t.Errorf("the operations received %+v and id %d", ops.got, ops.gotID)
	}
}

func TestFiltersReachTheOperation(t *testing.T) {
	ops := &fakeOps{}
	q := "?src=https://js.example.org/a.js&created_at_min=2024-03-11&updated_at_max=" + "2024-03-12T10:00:00-04:00"
	for _, path := range []string{"/web/script_tags.json", "/web/script_tags/count.json"} {
		ops.gotFilt = Filter{}
		rec, _ := httpapitest.Serve(t, routes(ops), httpapitest.Reader, "GET", path+q, "")
		if f := ops.gotFilt; rec.Code != 200 || f.Src != "https://js.example.org/a.js" || f.Created.Empty() || f.Updated.Empty() {
			t.Errorf("%s: %d, the operation's filter %+v", path, rec.Code, f)
		}
	}
}

func TestOperationErrorsReachTheClient(t *testing.T) {
	failing := func(err error) []httpapi.Route { return routes(&fakeOps{err: err}) }
	httpapitest.OperationErrors(t, failing, "POST", "/web/script_tags.json", validTag)
	httpapitest.OperationErrors(t, failing, "PUT", "/web/script_tags/5.json", validTag)
	httpapitest.OperationErrors(t, failing, "GET", "/web/script_tags/count.json", ``)
}
