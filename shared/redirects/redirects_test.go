package redirects_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/redirects"
)

func create(t *testing.T, e *apitest.Env, path, target string) map[string]any {
	t.Helper()
	return e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": path, "target": target}}).
		Expect(t, http.StatusCreated).Object(t, "redirect")
}

func TestRedirects(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("create reduces a full URL to its path and keeps the query", func(t *testing.T) {
			r := create(t, e, "http://www.apple.com/forums?page=2", "http://forums.apple.com")
			if r["path"] != "/forums?page=2" || r["target"] != "http://forums.apple.com" {
				t.Fatalf("got %v", r)
			}
			if _, ok := r["id"].(float64); !ok {
				t.Fatalf("id is not a number: %v", r)
			}
		})
		t.Run("validation messages are the spec's", func(t *testing.T) {
			res := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{}}).Expect(t, 422)
			want := `{"errors":{"path":["can't be blank"],"target":["can't be blank"]}}`
			if got := string(res.Body); got != want+"\n" {
				t.Fatalf("got %s, want %s", got, want)
			}
			res = e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": "/a", "target": "not a uri"}}).Expect(t, 422)
			if got := string(res.Body); got != `{"errors":{"target":["URI is invalid"]}}`+"\n" {
				t.Fatalf("got %s", got)
			}
			e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": 5, "target": "/x"}}).Expect(t, 422)
			e.Do("POST", "/web/redirects.json", `{"redirect": `).Expect(t, 400)
			res = e.Do("POST", "/web/redirects.json", `{"redirects": {}}`).Expect(t, 400)
			if got := string(res.Body); got != `{"errors":{"redirect":"Required parameter missing or invalid"}}`+"\n" {
				t.Fatalf("got %s", got)
			}
		})
		t.Run("paths are unique, also on update", func(t *testing.T) {
			a := create(t, e, "/unique-a", "/a")
			create(t, e, "/unique-b", "/b")
			res := e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": "/unique-a", "target": "/c"}}).Expect(t, 422)
			if got := string(res.Body); got != `{"errors":{"path":["has already been taken"]}}`+"\n" {
				t.Fatalf("got %s", got)
			}
			id := int64(a["id"].(float64))
			e.Do("PUT", fmt.Sprintf("/web/redirects/%d.json", id), map[string]any{"redirect": map[string]any{"path": "/unique-b"}}).Expect(t, 422)
			// Moving a path frees the old one.
			e.Do("PUT", fmt.Sprintf("/web/redirects/%d.json", id), map[string]any{"redirect": map[string]any{"id": id, "path": "/unique-c"}}).Expect(t, 200)
			create(t, e, "/unique-a", "/again")
			got := e.Do("GET", "/web/redirects.json?path=/unique-c", nil).Expect(t, 200).List(t, "redirects")
			if len(got) != 1 || got[0].(map[string]any)["target"] != "/a" {
				t.Fatalf("path filter: %v", got)
			}
		})
		t.Run("read, update, delete", func(t *testing.T) {
			r := create(t, e, "/ipod", "/pages/itunes")
			path := fmt.Sprintf("/web/redirects/%d.json", int64(r["id"].(float64)))
			got := e.Do("GET", path+"?fields=id,target", nil).Expect(t, 200).Object(t, "redirect")
			if len(got) != 2 || got["target"] != "/pages/itunes" {
				t.Fatalf("fields: %v", got)
			}
			up := e.Do("PUT", path, map[string]any{"redirect": map[string]any{"target": "https://example.com/x"}}).Expect(t, 200).Object(t, "redirect")
			if up["target"] != "https://example.com/x" || up["path"] != "/ipod" {
				t.Fatalf("update: %v", up)
			}
			if string(e.Do("DELETE", path, nil).Expect(t, 200).Body) != "{}\n" {
				t.Fatal("delete body")
			}
			e.Do("GET", path, nil).Expect(t, 404)
			e.Do("DELETE", path, nil).Expect(t, 404)
			create(t, e, "/ipod", "/reused") // the deleted redirect's path is free
		})
		t.Run("unknown or malformed ids are 404", func(t *testing.T) {
			for _, p := range []string{"/web/redirects/1.json", "/web/redirects/abc.json", "/web/redirects/-1.json", "/web/redirects/1", "/web/redirects/99999999999999999999.json"} {
				res := e.Do("GET", p, nil).Expect(t, 404)
				if string(res.Body) != `{"errors":"Not Found"}`+"\n" {
					t.Fatalf("%s: %s", p, res.Body)
				}
			}
		})
	}, api.Redirects)
}

func TestRedirectListAndCount(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var ids []float64
		for i := range 7 {
			target := "/odd"
			if i%2 == 0 {
				target = "/even"
			}
			ids = append(ids, create(t, e, fmt.Sprintf("/p%d", i), target)["id"].(float64))
		}
		list := func(q string) []any {
			return e.Do("GET", "/web/redirects.json"+q, nil).Expect(t, 200).List(t, "redirects")
		}
		count := func(q string) float64 {
			return e.Do("GET", "/web/redirects/count.json"+q, nil).Expect(t, 200).JSON(t)["count"].(float64)
		}
		all := list("")
		if len(all) != 7 {
			t.Fatalf("len %d", len(all))
		}
		for i, r := range all {
			if r.(map[string]any)["id"] != ids[i] {
				t.Fatalf("not in id order: %v", all)
			}
		}
		if p := list("?limit=3&page=3"); len(p) != 1 || p[0].(map[string]any)["id"] != ids[6] {
			t.Fatalf("page 3: %v", p)
		}
		if p := list(fmt.Sprintf("?since_id=%d&limit=2", int64(ids[4]))); len(p) != 2 || p[0].(map[string]any)["id"] != ids[5] {
			t.Fatalf("since_id: %v", p)
		}
		if p := list("?target=/even"); len(p) != 4 {
			t.Fatalf("target filter: %v", p)
		}
		if n := count(""); n != 7 {
			t.Fatalf("count %v", n)
		}
		if n := count("?target=/odd"); n != 3 {
			t.Fatalf("count target %v", n)
		}
		if n := count("?path=/p3"); n != 1 {
			t.Fatalf("count path %v", n)
		}
		for _, bad := range []string{"0", "-1", "251", "x"} {
			res := e.Do("GET", "/web/redirects.json?limit="+bad, nil).Expect(t, 400)
			if _, ok := res.JSON(t)["errors"].(map[string]any)["limit"]; !ok {
				t.Fatalf("limit=%s: %s", bad, res.Body)
			}
		}
	}, api.Redirects)
}

// Concurrent creates of one path: exactly one wins, the others are told why.
func TestRedirectPathUniqueUnderConcurrency(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 24
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": "/contested", "target": "/x"}}).Status
			}()
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for s := range statuses {
			got[s]++
		}
		if got[201] != 1 || got[422] != n-1 {
			t.Fatalf("statuses %v, want one 201 and %d 422", got, n-1)
		}
		if c := e.Do("GET", "/web/redirects/count.json", nil).JSON(t)["count"].(float64); c != 1 {
			t.Fatalf("count %v", c)
		}
	}, api.Redirects)
}

func ptr(s string) *string { return &s }

// The rules of a redirect, without HTTP or a store: validation fails before
// anything is read or written.
func TestRedirectRules(t *testing.T) {
	var s redirects.Service
	long := "/" + strings.Repeat("a", 1024)
	for _, c := range []struct {
		name string
		in   redirects.Input
		want string
	}{
		{"both required", redirects.Input{}, `invalid path=["can't be blank"] target=["can't be blank"]`},
		{"blank after trimming", redirects.Input{Path: ptr("  "), Target: ptr(" ")}, `invalid path=["can't be blank"] target=["can't be blank"]`},
		{"too long", redirects.Input{Path: ptr(long), Target: ptr(long)}, `invalid path=["is too long (maximum is 1024 characters)"] target=["is too long (maximum is 1024 characters)"]`},
		{"target not a URI", redirects.Input{Path: ptr("/a"), Target: ptr("not a uri")}, `invalid target=["URI is invalid"]`},
		{"target of another scheme", redirects.Input{Path: ptr("/a"), Target: ptr("ftp://example.com/x")}, `invalid target=["URI is invalid"]`},
		{"target protocol-relative", redirects.Input{Path: ptr("/a"), Target: ptr("//example.com/x")}, `invalid target=["URI is invalid"]`},
	} {
		_, err := s.Create(t.Context(), &c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
	for in, want := range map[string]string{
		"ipod": "/ipod", " /ipod ": "/ipod", "http://www.apple.com/forums?page=2": "/forums?page=2",
		"https://example.com": "/", "/a?b=c": "/a?b=c", "": "",
	} {
		if got := redirects.NormalizePath(in); got != want {
			t.Errorf("NormalizePath(%q) = %q, want %q", in, got, want)
		}
	}
}
