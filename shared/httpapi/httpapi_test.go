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
	"github.com/storeadmin/adminapi/shared/clock"
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
	return httpapi.NewRouter(fakeIdentity(), nil, clock.System{}, []httpapi.Route{
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
	// A body id is ignored (the path names the record) but must be an id.
	for _, id := range []string{`{}`, `"5x"`, `""`, `null`, `1.5`, `true`, `[1]`, `1e400`} {
		expect(t, post(`{"thing": {"name": "ok", "id": `+id+`}}`), 422, `{"errors":{"id":["must be an integer"]}}`)
	}
	expect(t, post(`{"thing": {"name": "ok", "id": -1}}`), 422, `{"errors":{"id":["must be greater than or equal to 0"]}}`)
	expect(t, post(`{"thing": {"name": "ok", "id": 9007199254740992}}`), 422, `{"errors":{"id":["`+httpapi.MsgIDTooLarge+`"]}}`)
	expect(t, post(`{"thing": {"name": "ok", "id": "9007199254740992"}}`), 422, `{"errors":{"id":["`+httpapi.MsgIDTooLarge+`"]}}`)
	// Any id key, at 16 digits as at 17.
	expect(t, post(`{"thing": {"name": "ok", "owner_id": 9007199254740993}}`), 422, `{"errors":{"owner_id":["`+httpapi.MsgIDTooLarge+`"]}}`)
	for _, id := range []string{`0`, `12`, `2.0`, `9007199254740991`, `"12"`, `"9007199254740991"`} {
		expect(t, post(`{"thing": {"name": "ok", "id": `+id+`}}`), 201, `{"thing":{"name":"ok","count":0,"tags":null}}`)
	}
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
	h := router()
	h.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
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

// A request that takes the router's SlowRequest or longer is logged at
// warning level with its route; a quicker one is not.
func TestSlowRequestsAreLogged(t *testing.T) {
	h := router()
	var logs bytes.Buffer
	h.Logger = slog.New(slog.NewJSONHandler(&logs, nil))
	h.SlowRequest = time.Hour
	do(t, h, "GET", "/web/things/count.json", "writer-token", "")
	if logs.Len() != 0 {
		t.Errorf("a request under SlowRequest was logged: %s", logs.String())
	}
	h.SlowRequest = time.Nanosecond
	rec := do(t, h, "GET", "/web/things/count.json", "writer-token", "")
	if l := logs.String(); !strings.Contains(l, `"level":"WARN","msg":"slow request"`) || !strings.Contains(l, `"route":"/web/things/count.json"`) ||
		!strings.Contains(l, rec.Header().Get("X-Request-Id")) {
		t.Errorf("the slow request's log: %s", l)
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

// A request carrying the token header more than once is refused whatever
// the values, in either order, even both valid: the router never picks one.
func TestTwoTokenHeadersAreRefused(t *testing.T) {
	h := router()
	unauthorized := `{"errors":"[API] Invalid API key or access token (unrecognized login or wrong password)"}`
	for _, pair := range [][2]string{{"writer-token", "bogus"}, {"bogus", "writer-token"}, {"writer-token", "writer-token"}, {"writer-token", ""}} {
		req := httptest.NewRequest("GET", "/web/things/1.json", nil)
		req.Header.Add(httpapi.TokenHeader, pair[0])
		req.Header.Add(httpapi.TokenHeader, pair[1])
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("tokens %q: Content-Type %q", pair, ct)
		}
		expect(t, rec, 401, unauthorized)
	}
}

// Unknown spellings of paths, near a public route whose last wildcard
// matches several segments, are 404 JSON: ServeMux never answers one with
// its own redirect and HTML body.
func TestNearPathsAreNotRedirected(t *testing.T) {
	file := func(w http.ResponseWriter, r *http.Request) error {
		return httpapi.WriteFile(w, r, "text/css", "tag", []byte("a{}"))
	}
	h := httpapi.NewRouter(fakeIdentity(), nil, clock.System{}, []httpapi.Route{
		{Method: "GET", Path: "/web/things/{id}/files/{name...}", Public: true, Handler: file},
		{Method: "GET", Path: "/web/things/{id}/files.json", Scope: admin.ScopeContent, Handler: file},
		{Method: "GET", Path: "/web/things/{id}/page", Page: true, Handler: file},
	})
	for _, p := range []string{"/web/things/1/files", "/web/things/1/files/", "/web/things/1/files//a.css",
		"/web/things/1/files/./a.css", "/web/things/1/files/../files/a.css", "/web/things//files/a.css",
		"//web/things/1/files/a.css", "/web/things/1/page/", "/web/things/1/files.json/", "/web/things/1/files/%2e%2e/x",
		"/web/things/1/files.json/..", "/web/things/1", "/web/things/1/"} {
		rec := do(t, h, "GET", p, "writer-token", "")
		if rec.Code != 404 || rec.Header().Get("Location") != "" {
			t.Errorf("GET %s: %d Location %q: %s", p, rec.Code, rec.Header().Get("Location"), rec.Body)
		}
	}
	if rec := httptest.NewRecorder(); true {
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/web/things/1/files/a/b.css", nil))
		if rec.Code != 200 || rec.Body.String() != "a{}" {
			t.Errorf("the file itself: %d %s", rec.Code, rec.Body)
		}
	}
}

// Control characters, lone surrogates and invalid UTF-8 are refused in
// every string of a body, naming the field (issue 25, finding 8); tab, line
// feed and carriage return only in single-line fields.
func TestControlCharacters(t *testing.T) {
	h := router()
	post := func(body string) *httptest.ResponseRecorder {
		return do(t, h, "POST", "/web/things.json", "writer-token", body)
	}
	refused := func(field, msg string) string { return `{"errors":{"` + field + `":["` + msg + `"]}}` }
	for body, want := range map[string]string{
		`{"thing":{"name":"a\u0000b"}}`:       refused("name", httpapi.MsgControl),
		`{"thing":{"name":"a\u001fb"}}`:       refused("name", httpapi.MsgControl),
		`{"thing":{"name":"a\bb"}}`:           refused("name", httpapi.MsgControl),
		`{"thing":{"name":"a\fb"}}`:           refused("name", httpapi.MsgControl),
		`{"thing":{"name":"a\u007fb"}}`:       refused("name", httpapi.MsgControl),
		"{\"thing\":{\"name\":\"a\x7fb\"}}":   refused("name", httpapi.MsgControl),
		`{"thing":{"name":"a\u0085b"}}`:       refused("name", httpapi.MsgControl),
		"{\"thing\":{\"name\":\"a\u009fb\"}}": refused("name", httpapi.MsgControl),
		`{"thing":{"name":"a\tb"}}`:           refused("name", httpapi.MsgSingleLine),
		`{"thing":{"name":"a\nb"}}`:           refused("name", httpapi.MsgSingleLine),
		`{"thing":{"name":"a\u000db"}}`:       refused("name", httpapi.MsgSingleLine),
		`{"thing":{"name":"\ud800"}}`:         refused("name", httpapi.MsgUnicode),
		`{"thing":{"name":"\ud800x"}}`:        refused("name", httpapi.MsgUnicode),
		`{"thing":{"name":"\udc00\ud800"}}`:   refused("name", httpapi.MsgUnicode),
		`{"thing":{"name":"\ud800\u0041"}}`:   refused("name", httpapi.MsgUnicode),
		"{\"thing\":{\"name\":\"a\xffb\"}}":   refused("name", httpapi.MsgUnicode),
		// Accepted: what text may hold.
		`{"thing":{"name":"caf\u00e9 \ud83d\ude00 \u00a0\/\"\\"}}`:                "{\"thing\":{\"name\":\"café 😀 \u00a0/\\\"\\\\\",\"count\":0,\"tags\":null}}",
		`{"thing":{"name":"ok","body":"a\tb\r\nc","other":"\u0000","x\u0000":1}}`: `{"thing":{"name":"ok","count":0,"tags":null}}`,
		"{\"thing\":{\"name\":\"\u00a0\u00ff\ufffd\"}}":                           "{\"thing\":{\"name\":\"\u00a0\u00ff\ufffd\",\"count\":0,\"tags\":null}}",
		`{"thing":{"count":2.0,"name":"x"}}`:                                      `{"thing":{"name":"x","count":2,"tags":null}}`,
	} {
		rec := post(body)
		want := want
		if strings.HasPrefix(want, `{"errors"`) {
			expect(t, rec, 422, want)
		} else {
			var got, exp any
			json.Unmarshal(rec.Body.Bytes(), &got)
			json.Unmarshal([]byte(want), &exp)
			if rec.Code != 201 || !jsonEq(got, exp) {
				t.Errorf("%q: %d %s, want 201 %s", body, rec.Code, rec.Body, want)
			}
		}
	}
	// Nested: the path of keys names the field, whatever the case of the
	// keys; maps and raw JSON are kept whole, so every string of them counts.
	type rich struct {
		Name  string          `json:"name"`
		Body  string          `json:"body"`
		Note  map[string]any  `json:"note"`
		Raw   json.RawMessage `json:"raw"`
		Metas []struct {
			Key   admin.Optional[string]          `json:"key"`
			Value admin.Optional[json.RawMessage] `json:"value"`
		} `json:"metafields"`
	}
	for body, want := range map[string]string{
		`{"note":{"deep":["ok","\u0001"]}}`:            refused("note.deep", httpapi.MsgControl),
		`{"note":{"x\u0000":1}}`:                       refused("note", httpapi.MsgControl),
		`{"raw":{"k\u001f":1}}`:                        refused("raw", httpapi.MsgControl),
		`{"metafields":[{"key":"ok"},{"key":"a\tb"}]}`: refused("metafields.key", httpapi.MsgSingleLine),
		`{"metafields":[{"value":"\ud800"}]}`:          refused("metafields.value", httpapi.MsgUnicode),
		`{"NAME":"a\u0000"}`:                           refused("NAME", httpapi.MsgControl),
		`{"body":"a\tb\nc","unknown":"\u0000\ud800","x\u0000":{"y":"\u0001"},"metafields":[{"other":"\u0000"}],"note":{"name":"a\nb"}}`: "",
	} {
		var in rich
		err := httpapi.DecodeObject([]byte(body), &in)
		got := ""
		if err != nil {
			b, _ := json.Marshal(map[string]any{"errors": err.(*admin.Error).Fields})
			got = string(b)
		}
		if got != want {
			t.Errorf("%s: %s, want %s", body, got, want)
		}
	}
	// The number pass re-encodes the body: the scan reads what was sent.
	expect(t, post(`{"thing":{"count":2.0,"name":"\ud800"}}`), 422, refused("name", httpapi.MsgUnicode))
}

// The properties of an untagged embedded struct are the object's own: a
// wrong type or a refused null in one is named as the client wrote it.
func TestDecodeObjectNamesEmbeddedFields(t *testing.T) {
	type shared struct {
		Title *string `json:"title" null:"refuse"`
		Count *int    `json:"count"`
	}
	type kind struct {
		shared
		Rules []struct {
			Column *string `json:"column" null:"refuse"`
		} `json:"rules"`
	}
	for body, field := range map[string]string{
		`{"title":5}`:                 "title",
		`{"count":"x"}`:               "count",
		`{"title":null}`:              "title",
		`{"rules":[{"column":null}]}`: "rules.column",
		`{"rules":[{"column":7}]}`:    "rules.column",
	} {
		var in kind
		err := httpapi.DecodeObject([]byte(body), &in)
		var ae *admin.Error
		if !errors.As(err, &ae) || ae.Fields[field] == nil || len(ae.Fields) != 1 {
			t.Errorf("%s: %v, want a 422 naming %s", body, err, field)
		}
	}
}

func jsonEq(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
