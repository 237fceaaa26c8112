package redirects

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
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

type fakeIdentity struct{}

func (fakeIdentity) AppByToken(_ context.Context, token string) (*admin.App, error) {
	switch token {
	case "content":
		return &admin.App{ID: 1, Name: "Writer", Scopes: []string{"write_content"}}, nil
	case "reader":
		return &admin.App{ID: 2, Name: "Reader", Scopes: []string{"read_content"}}, nil
	}
	return nil, admin.Unauthorized
}
func (fakeIdentity) Shop(context.Context) (*admin.Shop, error) {
	return &admin.Shop{ID: 1, Domain: "shop.example", IANATimezone: "UTC"}, nil
}
func (fakeIdentity) CursorKey(context.Context) ([]byte, error) {
	return []byte("0123456789abcdef"), nil
}

func serve(t *testing.T, ops *fakeOps, token, method, target, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	rt := httpapi.NewRouter(fakeIdentity{}, nil, routes(ops))
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if token != "" {
		req.Header.Set(httpapi.TokenHeader, token)
	}
	rec := httptest.NewRecorder()
	rt.ServeHTTP(rec, req)
	var v map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("%s %s: a body that is no JSON object: %q", method, target, rec.Body)
	}
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: Content-Type %q", method, target, ct)
	}
	return rec, v
}

func TestHandlersUnderTheConventions(t *testing.T) {
	ops := &fakeOps{}
	for _, c := range []struct {
		name, token, method, target, body string
		status                            int
		want                              string // a JSON fragment of the answer
	}{
		{"create answers 201 with the record", "content", "POST", "/web/redirects.json", `{"redirect":{"path":"/x","target":"/y"}}`, 201, `"redirect":{"id":11,"path":"/x","target":"/y"}`},
		{"an id as a string reads as its number", "content", "PUT", "/web/redirects/5.json", `{"redirect":{"id":"5","path":"/x"}}`, 200, `"id":5`},
		{"get", "reader", "GET", "/web/redirects/9.json", ``, 200, `"redirect":{"id":9,`},
		{"fields restrict the record", "reader", "GET", "/web/redirects/9.json?fields=id,target", ``, 200, `{"redirect":{"id":9,"target":"/b"}}`},
		{"list", "reader", "GET", "/web/redirects.json?path=/a", ``, 200, `"redirects":[{"id":1,`},
		{"count", "reader", "GET", "/web/redirects/count.json", ``, 200, `{"count":7}`},
		{"delete answers {}", "content", "DELETE", "/web/redirects/3.json", ``, 200, `{}`},
		{"no token", "", "GET", "/web/redirects.json", ``, 401, `"errors":"[API] Invalid API key`},
		{"a read scope cannot write", "reader", "POST", "/web/redirects.json", `{"redirect":{"path":"/x","target":"/y"}}`, 403, `write_content`},
		{"malformed JSON", "content", "POST", "/web/redirects.json", `{"redirect":`, 400, `"errors":`},
		{"the wrapper missing", "content", "POST", "/web/redirects.json", `{"path":"/x"}`, 400, `"redirect":"Required parameter missing or invalid"`},
		{"a field of the wrong type", "content", "POST", "/web/redirects.json", `{"redirect":{"path":5,"target":"/y"}}`, 422, `"path":["must be a string"]`},
		{"null where the document allows none", "content", "POST", "/web/redirects.json", `{"redirect":{"path":null,"target":"/y"}}`, 422, `"path":[`},
		{"an id past 2^53", "reader", "GET", "/web/redirects/9007199254740992.json", ``, 404, `"errors":"Not Found"`},
		{"an unknown path", "reader", "GET", "/web/redirect.json", ``, 404, `"errors":"Not Found"`},
		{"a method the path does not serve", "content", "PATCH", "/web/redirects/3.json", ``, 405, `"errors":`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec, _ := serve(t, ops, c.token, c.method, c.target, c.body)
			if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) {
				t.Errorf("%s %s: %d %s, want %d with %s", c.method, c.target, rec.Code, rec.Body, c.status, c.want)
			}
		})
	}
	if ops.gotFilt.Path != "/a" {
		t.Errorf("the list's path filter reached the operation as %q", ops.gotFilt.Path)
	}
}

// What an operation refuses reaches the client in the error map's shape.
func TestOperationErrorsReachTheClient(t *testing.T) {
	var v admin.Validation
	v.Add("path", admin.MsgTaken)
	for _, c := range []struct {
		err    error
		status int
		want   string
		header string
	}{
		{v.Err(), 422, `{"errors":{"path":["has already been taken"]}}`, ""},
		{admin.NotFound, 404, `{"errors":"Not Found"}`, ""},
		{&store.UnavailableError{Reason: "throttled"}, 503, `"errors":"Service Unavailable`, "Retry-After"},
		{context.DeadlineExceeded, 500, `"errors":`, ""},
	} {
		rec, _ := serve(t, &fakeOps{err: c.err}, "content", "POST", "/web/redirects.json", `{"redirect":{"path":"/x","target":"/y"}}`)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) || c.header != "" && rec.Header().Get(c.header) == "" {
			t.Errorf("%v: %d %s %v, want %d with %s", c.err, rec.Code, rec.Body, rec.Header(), c.status, c.want)
		}
	}
}
