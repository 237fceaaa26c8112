package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
)

// identity is a mock Identity made of function fields.
type identity struct {
	AppByTokenFn func(ctx context.Context, token string) (*admin.App, error)
	ShopFn       func(ctx context.Context) (*admin.Shop, error)
}

func (m identity) CursorKey(context.Context) ([]byte, error) { return []byte("test cursor key"), nil }

func (m identity) AppByToken(ctx context.Context, token string) (*admin.App, error) {
	return m.AppByTokenFn(ctx, token)
}
func (m identity) Shop(ctx context.Context) (*admin.Shop, error) { return m.ShopFn(ctx) }

var apps = map[string]*admin.App{
	"writer-token": {ID: 1, Name: "Writer", Scopes: []string{"write_content"}},
	"reader-token": {ID: 2, Name: "Reader", Scopes: []string{"read_content"}},
}

func fakeIdentity() identity {
	return identity{
		AppByTokenFn: func(_ context.Context, token string) (*admin.App, error) {
			if a, ok := apps[token]; ok {
				return a, nil
			}
			return nil, &admin.Error{Code: admin.EUNAUTHORIZED, Message: "[API] Invalid API key or access token (unrecognized login or wrong password)"}
		},
		ShopFn: func(context.Context) (*admin.Shop, error) {
			return &admin.Shop{ID: 1, IANATimezone: "Asia/Tokyo"}, nil
		},
	}
}

type thing struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
	Tags  []int  `json:"tags"`
}

func router() *httpapi.Router {
	return httpapi.NewRouter(fakeIdentity(), nil, []httpapi.Route{
		{Method: "GET", Path: "/web/things/{id}.json", Scope: admin.ScopeContent, Handler: func(w http.ResponseWriter, r *http.Request) error {
			id, err := httpapi.ParseID(r, "id")
			if err != nil {
				return err
			}
			return httpapi.WriteOne(w, 200, "thing", map[string]any{"id": id, "name": "x", "count": 2}, httpapi.ParseFields(r.URL.Query()))
		}},
		{Method: "GET", Path: "/web/things/count.json", Scope: admin.ScopeContent, Handler: func(w http.ResponseWriter, r *http.Request) error {
			return httpapi.WriteCount(w, 3)
		}},
		{Method: "POST", Path: "/web/things.json", Scope: admin.ScopeContent, Handler: func(w http.ResponseWriter, r *http.Request) error {
			var in thing
			if err := httpapi.Decode(r, "thing", &in); err != nil {
				return err
			}
			return httpapi.WriteOne(w, 201, "thing", in, nil)
		}},
		{Method: "GET", Path: "/web/boom.json", Handler: func(w http.ResponseWriter, r *http.Request) error {
			return errors.New("dynamodb: secret table arn:aws:... exploded")
		}},
		{Method: "GET", Path: "/web/panic.json", Handler: func(w http.ResponseWriter, r *http.Request) error {
			panic("nil map")
		}},
	})
}

func do(t *testing.T, h http.Handler, method, path, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if token != "" {
		req.Header.Set("x-service-access-token", token) // any case
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s %s: Content-Type %q", method, path, ct)
	}
	if rec.Header().Get("X-Request-Id") == "" {
		t.Fatalf("%s %s: no X-Request-Id", method, path)
	}
	return rec
}

func expect(t *testing.T, rec *httptest.ResponseRecorder, status int, body string) {
	t.Helper()
	if rec.Code != status || strings.TrimSpace(rec.Body.String()) != body {
		t.Fatalf("got %d %s, want %d %s", rec.Code, rec.Body, status, body)
	}
}

func TestRoutingConventions(t *testing.T) {
	h := router()
	expect(t, do(t, h, "GET", "/web/things/12.json", "writer-token", ""), 200, `{"thing":{"count":2,"id":12,"name":"x"}}`)
	expect(t, do(t, h, "GET", "/web/things/12.json?fields=name,id", "reader-token", ""), 200, `{"thing":{"id":12,"name":"x"}}`)
	expect(t, do(t, h, "GET", "/web/things/count.json", "reader-token", ""), 200, `{"count":3}`)
	notFound := `{"errors":"Not Found"}`
	for _, p := range []string{"/web/things/12", "/web/things/12.xml", "/web/things/abc.json", "/web/things/0.json", "/web/things/012.json", "/web/nothing.json", "/other/things/1.json", "/"} {
		expect(t, do(t, h, "GET", p, "writer-token", ""), 404, notFound)
	}
	// A served path with a method it is not served with: 405 naming those it is.
	rec := do(t, h, "DELETE", "/web/things/12.json", "writer-token", "")
	expect(t, rec, 405, `{"errors":"Method Not Allowed"}`)
	if got := rec.Header().Get("Allow"); got != "GET, HEAD" {
		t.Fatalf("Allow %q", got)
	}
	expect(t, do(t, h, "DELETE", "/web/nothing.json", "writer-token", ""), 404, notFound)
}

func TestAuthentication(t *testing.T) {
	h := router()
	unauthorized := `{"errors":"[API] Invalid API key or access token (unrecognized login or wrong password)"}`
	expect(t, do(t, h, "GET", "/web/things/1.json", "", ""), 401, unauthorized)
	expect(t, do(t, h, "GET", "/web/things/1.json", "wrong", ""), 401, unauthorized)
	expect(t, do(t, h, "POST", "/web/things.json", "reader-token", `{"thing":{}}`), 403,
		`{"errors":"[API] This action requires merchant approval for write_content scope."}`)
	expect(t, do(t, h, "POST", "/web/things.json", "writer-token", `{"thing":{"name":"a"}}`), 201, `{"thing":{"name":"a","count":0,"tags":null}}`)
}

func TestBadBodies(t *testing.T) {
	h := router()
	post := func(body string) *httptest.ResponseRecorder {
		return do(t, h, "POST", "/web/things.json", "writer-token", body)
	}
	for _, b := range []string{`{`, `{"thing": {"name": "a",}}`, `nonsense`, ``} {
		rec := post(b)
		if rec.Code != 400 {
			t.Fatalf("%q: %d %s", b, rec.Code, rec.Body)
		}
		var v struct{ Errors string }
		if json.Unmarshal(rec.Body.Bytes(), &v) != nil || v.Errors == "" {
			t.Fatalf("%q: body %s", b, rec.Body)
		}
	}
	missing := `{"errors":{"thing":"Required parameter missing or invalid"}}`
	for _, b := range []string{`{}`, `{"thing": null}`, `{"thing": "x"}`, `{"thing": []}`, `[]`, `"thing"`} {
		expect(t, post(b), 400, missing)
	}
	expect(t, post(`{"thing": {"name": 5}}`), 422, `{"errors":{"name":["must be a string"]}}`)
	expect(t, post(`{"thing": {"count": "five"}}`), 422, `{"errors":{"count":["must be an integer"]}}`)
	expect(t, post(`{"thing": {"count": 1.5}}`), 422, `{"errors":{"count":["must be an integer"]}}`)
	expect(t, post(`{"thing": {"tags": {}}}`), 422, `{"errors":{"tags":["must be an array"]}}`)
	expect(t, post(`{"thing": {"name": "ok", "unknown": true}}`), 201, `{"thing":{"name":"ok","count":0,"tags":null}}`)
	big := `{"thing": {"name": "` + strings.Repeat("a", httpapi.DefaultMaxBody) + `"}}`
	expect(t, post(big), 413, `{"errors":"Request body too large"}`)
	// Without a Content-Length the limit still holds.
	req := httptest.NewRequest("POST", "/web/things.json", struct{ *strings.Reader }{strings.NewReader(big)})
	req.ContentLength = -1
	req.Header.Set("X-Service-Access-Token", "writer-token")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	expect(t, rec, 413, `{"errors":"Request body too large"}`)
}

func TestInternalErrorsAreLoggedNotShown(t *testing.T) {
	var logs bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&logs, nil)))
	defer slog.SetDefault(old)
	h := router()
	for _, p := range []string{"/web/boom.json", "/web/panic.json"} {
		logs.Reset()
		rec := do(t, h, "GET", p, "writer-token", "")
		expect(t, rec, 500, `{"errors":"Internal Server Error"}`)
		id := rec.Header().Get("X-Request-Id")
		if !strings.Contains(logs.String(), id) {
			t.Fatalf("%s: log lacks request id %s: %s", p, id, logs.String())
		}
		if strings.Contains(logs.String(), "writer-token") {
			t.Fatalf("token logged: %s", logs.String())
		}
	}
}

func TestParseRange(t *testing.T) {
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	q := map[string][]string{"created_at_min": {"2024-01-02 03:04"}, "created_at_max": {"2024-01-05"}}
	r, err := dates.ParseRange(q, "created_at", tokyo)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Min.Equal(time.Date(2024, 1, 1, 18, 4, 0, 0, time.UTC)) || !r.Max.Equal(time.Date(2024, 1, 4, 15, 0, 0, 0, time.UTC)) {
		t.Fatalf("range %v", r)
	}
	// A "+" offset decoded as a space by the query string still parses.
	r, err = dates.ParseRange(map[string][]string{"x_min": {"2024-01-02T03:04:05 09:00"}}, "x", time.UTC)
	if err != nil || !r.Min.Equal(time.Date(2024, 1, 1, 18, 4, 5, 0, time.UTC)) {
		t.Fatalf("range %v %v", r, err)
	}
	if r.Contains(r.Min) {
		t.Fatal("_min is strict outside events")
	}
	r.Inclusive = true
	if !r.Contains(r.Min) {
		t.Fatal("inclusive range excludes its bound")
	}
	if _, err := dates.ParseRange(map[string][]string{"x_max": {"soon"}}, "x", time.UTC); admin.ErrorCode(err) != admin.EBADREQUEST {
		t.Fatalf("bad date: %v", err)
	}
}
