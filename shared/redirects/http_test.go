package redirects

import (
	"context"
	"testing"

	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/httpapi/httpapitest"
	"github.com/storeadmin/adminapi/shared/records"
)

// The HTTP conventions, against fake operations and a fake identity: no
// store, milliseconds. What the handlers parse reaches the operation; what
// the operation answers (a record, a list, a refusal, an outage) reaches
// the client in the convention's shape.

type fakeOps struct {
	err     error  // answered by every operation when set
	got     *Input // the last input a create or update received
	gotID   int64
	gotFilt Filter
}

func (f *fakeOps) Count(context.Context, Filter) (int, error) { return 7, f.err }
func (f *fakeOps) Create(_ context.Context, in *Input) (Redirect, error) {
	f.got = in
	return Redirect{ID: 11, Path: *in.Path, Target: *in.Target}, f.err
}
func (f *fakeOps) Delete(_ context.Context, id int64) error { f.gotID = id; return f.err }
func (f *fakeOps) Get(_ context.Context, id int64) (Redirect, error) {
	f.gotID = id
	return Redirect{ID: id, Path: "/a", Target: "/b"}, f.err
}
func (f *fakeOps) List(_ context.Context, fl Filter, _ int64, _ records.Window) ([]Redirect, records.Span, error) {
	f.gotFilt = fl
	return []Redirect{{ID: 1, Path: "/a", Target: "/b"}, {ID: 2, Path: "/c", Target: "/d"}}, records.Span{}, f.err
}
func (f *fakeOps) Update(_ context.Context, id int64, in *Input) (Redirect, error) {
	f.gotID, f.got = id, in
	return Redirect{ID: id, Path: "/a", Target: "/b"}, f.err
}

func TestHandlersUnderTheConventions(t *testing.T) {
	ops := &fakeOps{}
	w, r := httpapitest.Writer, httpapitest.Reader
	httpapitest.Run(t, routes(ops), []httpapitest.Case{
		{"create answers 201 with the record", w, "POST", "/web/redirects.json", `{"redirect":{"path":"/x","target":"/y"}}`, 201, `"redirect":{"id":11,"path":"/x","target":"/y"}`},
		{"get", r, "GET", "/web/redirects/9.json", ``, 200, `"redirect":{"id":9,`},
		{"fields restrict the record", r, "GET", "/web/redirects/9.json?fields=id,target", ``, 200, `{"redirect":{"id":9,"target":"/b"}}`},
		{"list", r, "GET", "/web/redirects.json?path=/a", ``, 200, `"redirects":[{"id":1,`},
		{"count", r, "GET", "/web/redirects/count.json", ``, 200, `{"count":7}`},
		{"delete answers {}", w, "DELETE", "/web/redirects/3.json", ``, 200, `{}`},
		{"no token", "", "GET", "/web/redirects.json", ``, 401, `"errors":"[API] Invalid API key`},
		{"a read scope cannot write", r, "POST", "/web/redirects.json", `{"redirect":{"path":"/x","target":"/y"}}`, 403, `write_content`},
		{"malformed JSON", w, "POST", "/web/redirects.json", `{"redirect":`, 400, `"errors":`},
		{"the wrapper missing", w, "POST", "/web/redirects.json", `{"path":"/x"}`, 400, `"redirect":"Required parameter missing or invalid"`},
		{"a field of the wrong type", w, "POST", "/web/redirects.json", `{"redirect":{"path":5,"target":"/y"}}`, 422, `"path":["must be a string"]`},
		{"null where the document allows none", w, "POST", "/web/redirects.json", `{"redirect":{"path":null,"target":"/y"}}`, 422, `"path":[`},
		{"an id past 2^53", r, "GET", "/web/redirects/9007199254740992.json", ``, 404, `"errors":"Not Found"`},
		{"an unknown path", r, "GET", "/web/redirect.json", ``, 404, `"errors":"Not Found"`},
		{"a method the path does not serve", w, "PATCH", "/web/redirects/3.json", ``, 405, `"errors":`},
	})
	if ops.gotFilt.Path != "/a" {
		t.Errorf("the list's path filter reached the operation as %q", ops.gotFilt.Path)
	}
	// A whole record saved back, its id a string as Shopify's clients send
	// it: the update of the path's id, with the body's fields.
	httpapitest.Run(t, routes(ops), []httpapitest.Case{
		{"an id as a string is accepted", w, "PUT", "/web/redirects/5.json", `{"redirect":{"id":"5","path":"/x"}}`, 200, `"id":5`},
	})
	if ops.gotID != 5 || ops.got == nil || ops.got.Path == nil || *ops.got.Path != "/x" {
		t.Errorf("the update reached the operation as id %d, input %+v", ops.gotID, ops.got)
	}
}

// What an operation refuses reaches the client in the convention's shape.
func TestOperationErrorsReachTheClient(t *testing.T) {
	httpapitest.OperationErrors(t, func(err error) []httpapi.Route { return routes(&fakeOps{err: err}) },
		"POST", "/web/redirects.json", `{"redirect":{"path":"/x","target":"/y"}}`)
}
