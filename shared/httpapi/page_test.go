package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/httpapi"
)

// Page routes answer without a token, with the page headers, and only at
// their own paths: every .json path (the same path with .json included)
// still needs a token, and other paths without .json stay 404.
func TestPageRoutesDoNotWeakenAuth(t *testing.T) {
	rt := httpapi.NewRouter(fakeIdentity(), nil, clock.System{}, []httpapi.Route{
		{Method: "GET", Path: "/web/things/{id}.json", Handler: func(w http.ResponseWriter, r *http.Request) error {
			return httpapi.WriteDeleted(w)
		}},
		{Method: "GET", Path: "/web/things/{id}/page", Page: true, Handler: func(w http.ResponseWriter, r *http.Request) error {
			return httpapi.WritePage(w, 200, []byte("<p>"+r.PathValue("id")+"</p>"), httpapi.CSP{Styles: []string{"p{}"}, FormActions: []string{"https://a.example.com", "x; script-src *"}})
		}},
	})
	do := func(method, path, token string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, nil)
		if token != "" {
			req.Header.Set(httpapi.TokenHeader, token)
		}
		rec := httptest.NewRecorder()
		rt.ServeHTTP(rec, req)
		return rec
	}
	rec := do("GET", "/web/things/5/page", "")
	csp := rec.Header().Get("Content-Security-Policy")
	if rec.Code != 200 || rec.Body.String() != "<p>5</p>" || rec.Header().Get("X-Frame-Options") != "DENY" ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") || !strings.Contains(csp, "form-action 'self' https://a.example.com") ||
		!strings.Contains(csp, "style-src 'sha256-") || strings.Contains(csp, "script-src") {
		t.Errorf("page: %d %v %s", rec.Code, rec.Header(), rec.Body)
	}
	for _, c := range []struct {
		method, path, token string
		want                int
	}{
		{"GET", "/web/things/5.json", "", 401},
		{"GET", "/web/things/5/page.json", "", 404},
		{"GET", "/web/things/5/page.json", "writer-token", 404},
		{"POST", "/web/things/5/page", "", 405}, // with Allow: GET, HEAD
		{"GET", "/web/things/5", "", 404},
		{"GET", "/web/things/5/page/", "", 404},
		{"GET", "/web/things//page", "", 404},
		{"GET", "/web/things/5.json", "writer-token", 200},
	} {
		if rec := do(c.method, c.path, c.token); rec.Code != c.want || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			t.Errorf("%s %s (token %q): %d %s, want %d JSON", c.method, c.path, c.token, rec.Code, rec.Header().Get("Content-Type"), c.want)
		}
	}
}
