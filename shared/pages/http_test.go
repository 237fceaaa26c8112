package pages

import (
	"context"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/httpapi/httpapitest"
	"github.com/storeadmin/adminapi/shared/publishing"
	"github.com/storeadmin/adminapi/shared/records"
)

// The HTTP conventions of a published resource, against fake operations:
// no store, milliseconds. The published filters, handle and paging reach
// the operation as parsed; what it answers reaches the client in the
// convention's shape.

type fakeOps struct {
	err     error        // answered by every operation when set
	span    records.Span // what List answers beside its pages
	got     *Input       // the last input a create or update received
	gotID   int64
	gotFilt Filter
	gotWin  records.Window
}

func (f *fakeOps) Count(_ context.Context, fl Filter) (int, error) {
	f.gotFilt = fl
	return 7, f.err
}
func (f *fakeOps) Create(_ context.Context, in *Input) (Page, error) {
	f.got = in
	return Page{ID: 11, Title: *in.Title, Handle: "about"}, f.err
}
func (f *fakeOps) Delete(_ context.Context, id int64) error { f.gotID = id; return f.err }
func (f *fakeOps) Get(_ context.Context, id int64) (Page, error) {
	f.gotID = id
	return Page{ID: id, Title: "About", Handle: "about"}, f.err
}
func (f *fakeOps) List(_ context.Context, fl Filter, _ int64, w records.Window) ([]Page, records.Span, error) {
	f.gotFilt, f.gotWin = fl, w
	return []Page{{ID: 1, Title: "A", Handle: "a"}, {ID: 2, Title: "B", Handle: "b"}}, f.span, f.err
}
func (f *fakeOps) Update(_ context.Context, id int64, in *Input) (Page, error) {
	f.gotID, f.got = id, in
	return Page{ID: id, Title: "About", Handle: "about"}, f.err
}

func TestHandlersUnderTheConventions(t *testing.T) {
	ops := &fakeOps{}
	w, r := httpapitest.Writer, httpapitest.Reader
	httpapitest.Run(t, routes(ops), []httpapitest.Case{
		{"create answers 201 with the record", w, "POST", "/web/pages.json", `{"page":{"title":"About"}}`, 201, `{"page":{"id":11,"shop_id":0,"title":"About","handle":"about",`},
		{"get", r, "GET", "/web/pages/9.json", ``, 200, `{"page":{"id":9,`},
		{"fields restrict the record", r, "GET", "/web/pages/9.json?fields=id,handle", ``, 200, `{"page":{"id":9,"handle":"about"}}`},
		{"fields restrict each listed record", r, "GET", "/web/pages.json?fields=id,title", ``, 200, `{"pages":[{"id":1,"title":"A"},{"id":2,"title":"B"}]}`},
		{"count", r, "GET", "/web/pages/count.json", ``, 200, `{"count":7}`},
		{"a read scope cannot create", r, "POST", "/web/pages.json", `{"page":{"title":"About"}}`, 403, `write_content`},
		{"a read scope cannot update", r, "PUT", "/web/pages/5.json", `{"page":{"title":"About"}}`, 403, `write_content`},
		{"a read scope cannot delete", r, "DELETE", "/web/pages/5.json", ``, 403, `write_content`},
		{"no token", "", "GET", "/web/pages.json", ``, 401, `"errors":"[API] Invalid API key`},
		{"a string field of the wrong type", w, "POST", "/web/pages.json", `{"page":{"title":5}}`, 422, `"title":["must be a string"]`},
		{"a boolean field of the wrong type", w, "POST", "/web/pages.json", `{"page":{"title":"x","published":"yes"}}`, 422, `"published":[`},
		{"null where the document allows none", w, "PUT", "/web/pages/5.json", `{"page":{"handle":null}}`, 422, `"handle":[`},
		{"the wrapper missing", w, "POST", "/web/pages.json", `{"title":"About"}`, 400, `"page":"Required parameter missing or invalid"`},
		{"a non-numeric id", r, "GET", "/web/pages/about.json", ``, 404, `{"errors":"Not Found"}`},
		{"a non-numeric id to update", w, "PUT", "/web/pages/about.json", `{"page":{"title":"x"}}`, 404, `{"errors":"Not Found"}`},
		{"a non-numeric id to delete", w, "DELETE", "/web/pages/1e3.json", ``, 404, `{"errors":"Not Found"}`},
	})
	// A whole record saved back, its id a string as Shopify's clients send
	// it: the update of the path's id, with the body's fields.
	httpapitest.Run(t, routes(ops), []httpapitest.Case{
		{"an id in the body as a string is accepted", w, "PUT", "/web/pages/5.json", `{"page":{"id":"5","title":"x"}}`, 200, `"id":5,`},
	})
	if ops.gotID != 5 || ops.got == nil || ops.got.Title == nil || *ops.got.Title != "x" {
		t.Errorf("the update reached the operation as id %d, input %+v", ops.gotID, ops.got)
	}
	httpapitest.Run(t, routes(ops), []httpapitest.Case{
		{"delete answers {}", w, "DELETE", "/web/pages/3.json", ``, 200, `{}`},
	})
	if ops.gotID != 3 {
		t.Errorf("the delete reached the operation as id %d", ops.gotID)
	}
}

// Paging and the published filters are refused naming the parameter, before
// any operation runs.
func TestListParametersRefused(t *testing.T) {
	r := httpapitest.Reader
	httpapitest.Run(t, routes(&fakeOps{}), []httpapitest.Case{
		{"limit 0", r, "GET", "/web/pages.json?limit=0", ``, 400, `"limit"`},
		{"limit over 250", r, "GET", "/web/pages.json?limit=251", ``, 400, `"limit"`},
		{"limit not a number", r, "GET", "/web/pages.json?limit=ten", ``, 400, `"limit"`},
		{"page 0", r, "GET", "/web/pages.json?page=0", ``, 400, `"page"`},
		{"since_id not an id", r, "GET", "/web/pages.json?since_id=abc", ``, 400, `"since_id"`},
		{"an unknown published_status", r, "GET", "/web/pages.json?published_status=draft", ``, 400, `"published_status"`},
		{"an unknown published_status counted", r, "GET", "/web/pages/count.json?published_status=draft", ``, 400, `"published_status"`},
		{"an unreadable published_at_min", r, "GET", "/web/pages.json?published_at_min=yesterday", ``, 400, `"published_at_min"`},
		{"a forged page_info", r, "GET", "/web/pages.json?page_info=abc.def", ``, 400, `"page_info"`},
		{"an empty page_info", r, "GET", "/web/pages.json?page_info=", ``, 400, `"page_info"`},
	})
}

func TestFiltersReachTheOperation(t *testing.T) {
	ops := &fakeOps{}
	rec, _ := httpapitest.Serve(t, routes(ops), httpapitest.Reader, "GET", "/web/pages.json?handle=about&title=About&published_status=published", "")
	if rec.Code != 200 || ops.gotFilt.Handle != "about" || ops.gotFilt.Title != "About" || ops.gotFilt.Status != publishing.OnlyPublished {
		t.Errorf("list: %d, the operation's filter %+v", rec.Code, ops.gotFilt)
	}
	ops = &fakeOps{}
	rec, _ = httpapitest.Serve(t, routes(ops), httpapitest.Reader, "GET", "/web/pages/count.json?published_status=unpublished&handle=x", "")
	if rec.Code != 200 || ops.gotFilt.Handle != "x" || ops.gotFilt.Status != publishing.OnlyUnpublished {
		t.Errorf("count: %d, the operation's filter %+v", rec.Code, ops.gotFilt)
	}
}

var nextLink = regexp.MustCompile(`<([^>]+)>; rel="next"`)

// A page with more after it links to the next: its page_info carries the
// filters and the list's position, keeps limit and fields, and serves only
// the app it was made for and only on its own.
func TestPagingLinks(t *testing.T) {
	ops := &fakeOps{span: records.Span{First: "k1", Last: "k2", After: true}}
	rt := routes(ops)
	rec, _ := httpapitest.Serve(t, rt, httpapitest.Reader, "GET", "/web/pages.json?limit=2&handle=about&fields=id", "")
	m := nextLink.FindStringSubmatch(rec.Header().Get("Link"))
	if rec.Code != 200 || m == nil {
		t.Fatalf("first page: %d, Link %q", rec.Code, rec.Header().Get("Link"))
	}
	u, err := url.Parse(m[1])
	if err != nil || u.Query().Get("limit") != "2" || u.Query().Get("fields") != "id" || u.Query().Has("handle") {
		t.Fatalf("next link %s: limit and fields kept, filters only inside page_info (%v)", m[1], err)
	}
	next := u.RequestURI()
	*ops = fakeOps{}
	rec, v := httpapitest.Serve(t, rt, httpapitest.Reader, "GET", next, "")
	if rec.Code != 200 || ops.gotFilt.Handle != "about" || ops.gotWin.Cursor != (records.Cursor{Key: "k2"}) || ops.gotWin.Limit != 2 {
		t.Errorf("next page: %d %v, the operation's filter %+v and window %+v", rec.Code, v, ops.gotFilt, ops.gotWin)
	}
	if rec.Header().Get("Link") != "" {
		t.Errorf("the last page links on: %q", rec.Header().Get("Link"))
	}
	for _, c := range []struct{ token, target, want string }{
		{httpapitest.Writer, next, `"page_info"`},            // another app's cursor
		{httpapitest.Reader, next + "&handle=x", `"handle"`}, // a filter beside page_info
		{httpapitest.Reader, next + "&page=2", `"page"`},
	} {
		rec, _ := httpapitest.Serve(t, rt, c.token, "GET", c.target, "")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), c.want) {
			t.Errorf("%s: %d %s, want 400 naming %s", c.target, rec.Code, rec.Body, c.want)
		}
	}
}

func TestOperationErrorsReachTheClient(t *testing.T) {
	failing := func(err error) []httpapi.Route { return routes(&fakeOps{err: err}) }
	httpapitest.OperationErrors(t, failing, "POST", "/web/pages.json", `{"page":{"title":"About"}}`)
	httpapitest.OperationErrors(t, failing, "GET", "/web/pages.json?published_status=any", ``)
	httpapitest.OperationErrors(t, failing, "DELETE", "/web/pages/3.json", ``)
}
