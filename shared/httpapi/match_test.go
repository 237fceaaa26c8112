package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/httpapi"
)

// The router's own matching (match.go) answers as ServeMux: the most
// specific route wins, a GET route serves HEAD, the wildcards' values are
// set, and a path served with other methods is 405 with their Allow.
func TestMatchingAsServeMux(t *testing.T) {
	var got string
	h := func(name string) httpapi.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) error {
			got = name + " " + r.PathValue("id") + " " + r.PathValue("sub")
			w.WriteHeader(http.StatusNoContent)
			return nil
		}
	}
	routes := []httpapi.Route{
		{Method: "GET", Path: "/web/things/{id}.json", Handler: h("thing")},
		{Method: "GET", Path: "/web/things/count.json", Handler: h("count")},
		{Method: "PUT", Path: "/web/things/{id}.json", Handler: h("put")},
		{Method: "GET", Path: "/web/things/{id}/parts/{sub}.json", Handler: h("part")},
		{Method: "GET", Path: "/web/things/{id}/parts/main.json", Handler: h("main part")},
	}
	if err := httpapi.CheckRoutes(routes); err != nil {
		t.Fatal(err)
	}
	rt := httpapi.NewRouter(fakeIdentity(), nil, clock.System{}, routes)
	for _, c := range []struct {
		method, path, want string
		status             int
		allow              string
	}{
		{"GET", "/web/things/7.json", "thing 7 ", 204, ""},
		{"HEAD", "/web/things/7.json", "thing 7 ", 204, ""},
		{"GET", "/web/things/count.json", "count  ", 204, ""},
		{"PUT", "/web/things/7.json", "put 7 ", 204, ""},
		{"GET", "/web/things/7/parts/9.json", "part 7 9", 204, ""},
		{"GET", "/web/things/7/parts/main.json", "main part 7 ", 204, ""},
		{"DELETE", "/web/things/7.json", "", 405, "GET, HEAD, PUT"},
		{"PUT", "/web/things/count.json", "", 405, "GET, HEAD"},
		{"GET", "/web/things/7/parts.json", "", 404, ""},
		{"GET", "/web/others/7.json", "", 404, ""},
		{"GET", "/web/things/7/parts/.json", "", 404, ""}, // an empty segment is no id
	} {
		got = ""
		w := httptest.NewRecorder()
		r := httptest.NewRequest(c.method, c.path, nil)
		r.Header.Set(httpapi.TokenHeader, "reader-token")
		rt.ServeHTTP(w, r)
		if got != c.want || w.Code != c.status || w.Header().Get("Allow") != c.allow {
			t.Errorf("%s %s: served %q (%d, Allow %q), want %q (%d, Allow %q)", c.method, c.path, got, w.Code, w.Header().Get("Allow"), c.want, c.status, c.allow)
		}
	}
}

func TestCheckRoutesFindsConflicts(t *testing.T) {
	nop := func(http.ResponseWriter, *http.Request) error { return nil }
	for _, routes := range [][]httpapi.Route{
		{{Method: "GET", Path: "/web/a/{id}.json", Handler: nop}, {Method: "GET", Path: "/web/a/{other}.json", Handler: nop}},
		{{Method: "GET", Path: "/web/a/{id}/c.json", Handler: nop}, {Method: "GET", Path: "/web/a/b/{id}.json", Handler: nop}},
	} {
		if err := httpapi.CheckRoutes(routes); err == nil || !strings.Contains(err.Error(), "conflicts") {
			t.Errorf("CheckRoutes(%s, %s) = %v, want a conflict", routes[0].Path, routes[1].Path, err)
		}
	}
}
