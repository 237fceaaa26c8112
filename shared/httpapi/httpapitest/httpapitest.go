// Package httpapitest serves a resource's routes against fake operations:
// the fast tests of the HTTP conventions, with no store. It imports no
// resource, so a resource's own (package-internal) tests can use it, where
// shared/apitest, which reaches every resource through shared/api, would
// be an import cycle.
package httpapitest

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/store"
)

// The tokens Identity knows: Writer holds write_<scope> of every scope,
// Reader only read_<scope>.
const (
	Writer = "writer"
	Reader = "reader"
)

// Identity is a fixed shop and its two apps, read from no store.
type Identity struct{}

// AppByToken returns the app of Writer or Reader.
func (Identity) AppByToken(_ context.Context, token string) (*admin.App, error) {
	var scopes []string
	switch token {
	case Writer:
		for _, s := range admin.Scopes {
			scopes = append(scopes, "write_"+string(s))
		}
		return &admin.App{ID: 1, Name: "Writer", Scopes: scopes}, nil
	case Reader:
		for _, s := range admin.Scopes {
			scopes = append(scopes, "read_"+string(s))
		}
		return &admin.App{ID: 2, Name: "Reader", Scopes: scopes}, nil
	}
	return nil, admin.Unauthorized
}

// Shop is in UTC, so answers' timestamps read as the fakes made them.
func (Identity) Shop(context.Context) (*admin.Shop, error) {
	return &admin.Shop{ID: 1, Domain: "shop.example", IANATimezone: "UTC"}, nil
}

// CursorKey signs the page_info of Link headers, so a test can follow them.
func (Identity) CursorKey(context.Context) ([]byte, error) {
	return []byte("0123456789abcdef"), nil
}

// Serve sends one request through a router of routes (no call limit) and
// returns the answer with its body as a JSON object. It fails t on a body
// that is no JSON object or a Content-Type that is not JSON: every answer
// of a .json route is one.
func Serve(t testing.TB, routes []httpapi.Route, token, method, target, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	rt := httpapi.NewRouter(Identity{}, nil, clock.System{}, routes)
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

// Case is one request and what its answer must hold. It is an alias of
// an unnamed struct so that tables of cases may leave the field names out.
type Case = struct {
	Name, Token, Method, Target, Body string
	Status                            int
	Want                              string // a fragment of the answer's body
}

// Run serves each case as a subtest.
func Run(t *testing.T, routes []httpapi.Route, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			rec, _ := Serve(t, routes, c.Token, c.Method, c.Target, c.Body)
			if rec.Code != c.Status || !strings.Contains(rec.Body.String(), c.Want) {
				t.Errorf("%s %s: %d %s, want %d with %s", c.Method, c.Target, rec.Code, rec.Body, c.Status, c.Want)
			}
		})
	}
}

// OperationErrors checks that what an operation refuses reaches the client
// in the convention's shape: a validation as the error map, admin.NotFound
// as 404, the store's unavailability as 503 with Retry-After (never 500),
// anything else as 500. failing returns the routes over operations that
// answer err; the request, made with the Writer token, must reach one.
func OperationErrors(t *testing.T, failing func(err error) []httpapi.Route, method, target, body string) {
	t.Helper()
	var v admin.Validation
	v.Add("base", admin.MsgTaken)
	for _, c := range []struct {
		err    error
		status int
		want   string
		header string
	}{
		{v.Err(), 422, `{"errors":{"base":["has already been taken"]}}`, ""},
		{admin.NotFound, 404, `{"errors":"Not Found"}`, ""},
		{&store.UnavailableError{Reason: "throttled"}, 503, `"errors":"Service Unavailable`, "Retry-After"},
		{context.DeadlineExceeded, 500, `"errors":`, ""},
	} {
		rec, _ := Serve(t, failing(c.err), Writer, method, target, body)
		if rec.Code != c.status || !strings.Contains(rec.Body.String(), c.want) || c.header != "" && rec.Header().Get(c.header) == "" {
			t.Errorf("%s %s answering %v: %d %s %v, want %d with %s", method, target, c.err, rec.Code, rec.Body, rec.Header(), c.status, c.want)
		}
	}
}
