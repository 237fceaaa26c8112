package collects

import (
	"context"
	"testing"

	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/httpapi/httpapitest"
	"github.com/storeadmin/adminapi/shared/records"
)

// The HTTP conventions of a resource whose input and filters are ids,
// against fake operations: no store, milliseconds. Ids reach the operation
// as numbers however the client wrote them, or are refused naming the
// field; the answer writes them as JSON numbers.

type fakeOps struct {
	err     error // answered by every operation when set
	got     Input // the last input a create received
	gotID   int64
	gotFilt Filter
}

func (f *fakeOps) Count(_ context.Context, fl Filter) (int, error) {
	f.gotFilt = fl
	return 7, f.err
}
func (f *fakeOps) Create(_ context.Context, in Input) (Collect, error) {
	f.got = in
	return Collect{ID: 11, ProductID: *in.ProductID, CollectionID: *in.CollectionID, Position: 1}, f.err
}
func (f *fakeOps) Delete(_ context.Context, id int64) error { f.gotID = id; return f.err }
func (f *fakeOps) Get(_ context.Context, id int64) (Collect, error) {
	f.gotID = id
	return Collect{ID: id, ProductID: 5, CollectionID: 7}, f.err
}
func (f *fakeOps) List(_ context.Context, fl Filter, _ int64, _ records.Window) ([]Collect, records.Span, error) {
	f.gotFilt = fl
	return []Collect{{ID: 1, ProductID: 5, CollectionID: 7}, {ID: 2, ProductID: 6, CollectionID: 7}}, records.Span{}, f.err
}

func TestHandlersUnderTheConventions(t *testing.T) {
	ops := &fakeOps{}
	w, r := httpapitest.Writer, httpapitest.Reader
	httpapitest.Run(t, routes(ops), []httpapitest.Case{
		{"create answers 201 with ids as numbers", w, "POST", "/com/collects.json", `{"collect":{"product_id":"5","collection_id":7}}`, 201, `{"collect":{"id":11,"collection_id":7,"product_id":5,`},
		{"get", r, "GET", "/com/collects/9.json", ``, 200, `{"collect":{"id":9,`},
		{"fields restrict the record", r, "GET", "/com/collects/9.json?fields=id,product_id", ``, 200, `{"collect":{"id":9,"product_id":5}}`},
		{"fields restrict each listed record", r, "GET", "/com/collects.json?fields=product_id", ``, 200, `{"collects":[{"product_id":5},{"product_id":6}]}`},
		{"count", r, "GET", "/com/collects/count.json", ``, 200, `{"count":7}`},
		{"delete answers {}", w, "DELETE", "/com/collects/3.json", ``, 200, `{}`},
		{"a read scope cannot create", r, "POST", "/com/collects.json", `{"collect":{"product_id":5,"collection_id":7}}`, 403, `write_products`},
		{"a read scope cannot delete", r, "DELETE", "/com/collects/3.json", ``, 403, `write_products`},
		{"no update", w, "PUT", "/com/collects/3.json", `{"collect":{"product_id":5}}`, 405, `"errors":`},
		{"an id of the wrong type", w, "POST", "/com/collects.json", `{"collect":{"product_id":true,"collection_id":7}}`, 422, `"product_id":[`},
		{"an id string that is no number", w, "POST", "/com/collects.json", `{"collect":{"product_id":"5a","collection_id":7}}`, 422, `"product_id":[`},
		{"an id beyond 2^53 - 1", w, "POST", "/com/collects.json", `{"collect":{"product_id":5,"collection_id":9007199254740993}}`, 422, `"collection_id":["must be less than or equal to 9007199254740991"]`},
		{"a non-numeric id", r, "GET", "/com/collects/first.json", ``, 404, `{"errors":"Not Found"}`},
		{"a negative id", w, "DELETE", "/com/collects/-3.json", ``, 404, `{"errors":"Not Found"}`},
		{"an id filter that is no id", r, "GET", "/com/collects.json?product_id=abc", ``, 400, `"product_id"`},
		{"an id filter counted that is no id", r, "GET", "/com/collects/count.json?collection_id=1.5", ``, 400, `"collection_id"`},
		{"limit over 250", r, "GET", "/com/collects.json?limit=251", ``, 400, `"limit"`},
		{"page and page_info", r, "GET", "/com/collects.json?page_info=x&page=2", ``, 400, `"page"`},
	})
	if ops.got.ProductID == nil || *ops.got.ProductID != 5 || *ops.got.CollectionID != 7 {
		t.Errorf("the create's ids reached the operation as %+v", ops.got)
	}
}

func TestFiltersReachTheOperation(t *testing.T) {
	ops := &fakeOps{}
	rt := routes(ops)
	if rec, _ := httpapitest.Serve(t, rt, httpapitest.Reader, "GET", "/com/collects.json?product_id=5&collection_id=7", ""); rec.Code != 200 || ops.gotFilt != (Filter{ProductID: 5, CollectionID: 7}) {
		t.Errorf("list: %d, the operation's filter %+v", rec.Code, ops.gotFilt)
	}
	if rec, _ := httpapitest.Serve(t, rt, httpapitest.Reader, "GET", "/com/collects/count.json?collection_id=8", ""); rec.Code != 200 || ops.gotFilt != (Filter{CollectionID: 8}) {
		t.Errorf("count: %d, the operation's filter %+v", rec.Code, ops.gotFilt)
	}
	if rec, _ := httpapitest.Serve(t, rt, httpapitest.Writer, "DELETE", "/com/collects/12.json", ""); rec.Code != 200 || ops.gotID != 12 {
		t.Errorf("delete: %d, the operation's id %d", rec.Code, ops.gotID)
	}
}

func TestOperationErrorsReachTheClient(t *testing.T) {
	failing := func(err error) []httpapi.Route { return routes(&fakeOps{err: err}) }
	httpapitest.OperationErrors(t, failing, "POST", "/com/collects.json", `{"collect":{"product_id":5,"collection_id":7}}`)
	httpapitest.OperationErrors(t, failing, "GET", "/com/collects/3.json", ``)
}
