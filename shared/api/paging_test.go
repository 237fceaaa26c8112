package api_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
)

// pagedList is one list served with page_info paging: setup creates at
// least 5 records in it.
type pagedList struct {
	path, key string
	setup     func(t *testing.T, e *apitest.Env)
}

func create(t *testing.T, e *apitest.Env, path string, body func(i int) any) {
	t.Helper()
	for i := range 5 {
		e.Do("POST", path, body(i)).Expect(t, http.StatusCreated)
	}
}

var pagedLists = []pagedList{
	{"/web/redirects.json", "redirects", func(t *testing.T, e *apitest.Env) {
		create(t, e, "/web/redirects.json", func(i int) any {
			return map[string]any{"redirect": map[string]any{"path": fmt.Sprintf("/old-%d", i), "target": "/new"}}
		})
	}},
}

// TestPageInfoPaging pages every list as shopify-api-node does: limit=2,
// then rel="next" until there is none, then rel="previous" back to the
// start. The pages together are the list read in one request, in order,
// each link reproduces its page, and the ends carry no link beyond them.
func TestPageInfoPaging(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, l := range pagedLists {
			t.Run(strings.TrimPrefix(l.path, "/"), func(t *testing.T) {
				l.setup(t, e)
				sep := "?"
				if strings.Contains(l.path, "?") {
					sep = "&"
				}
				whole := e.Do("GET", l.path+sep+"limit=250", nil).Expect(t, http.StatusOK).IDs(t, l.key)
				if len(whole) < 5 {
					t.Fatalf("setup made %d records, want at least 5", len(whole))
				}
				first := e.Do("GET", l.path+sep+"limit=2", nil).Expect(t, http.StatusOK)
				if first.Link("previous") != "" {
					t.Fatalf("first page links to a previous one: %s", first.Header.Get("Link"))
				}
				var pages [][]int64
				var got []int64
				r := first
				for {
					ids := r.IDs(t, l.key)
					pages = append(pages, ids)
					got = append(got, ids...)
					next := r.Link("next")
					if next == "" {
						break
					}
					if len(pages) > len(whole) {
						t.Fatalf("next links do not end: %s", next)
					}
					r = e.Do("GET", next, nil).Expect(t, http.StatusOK)
				}
				if !slices.Equal(got, whole) {
					t.Fatalf("pages by next links %v, want the whole list %v", pages, whole)
				}
				for i := len(pages) - 1; i > 0; i-- {
					prev := r.Link("previous")
					if prev == "" {
						t.Fatalf("page %d has no previous link", i+1)
					}
					r = e.Do("GET", prev, nil).Expect(t, http.StatusOK)
					if ids := r.IDs(t, l.key); !slices.Equal(ids, pages[i-1]) {
						t.Fatalf("previous of page %d is %v, want %v", i+1, ids, pages[i-1])
					}
				}
				if r.Link("previous") != "" {
					t.Fatalf("the first page reached back has a previous link: %s", r.Header.Get("Link"))
				}

				// Only limit and fields go with a page_info, which must be
				// unchanged and this list's.
				next := first.Link("next")
				u, _ := url.Parse(next)
				info := u.Query().Get("page_info")
				for param, want := range map[string]string{
					"&page=2":                    "page",
					"&since_id=1":                "since_id",
					"&created_at_min=2020-01-01": "created_at_min",
				} {
					r := e.Do("GET", next+param, nil).Expect(t, http.StatusBadRequest)
					if errs, _ := r.JSON(t)["errors"].(map[string]any); errs[want] == nil {
						t.Errorf("%s with page_info: 400 does not name %s: %s", param, want, r.Body)
					}
				}
				e.Do("GET", next+"&fields=id&limit=1", nil).Expect(t, http.StatusOK)
				tampered := info[:len(info)-2] + map[bool]string{true: "AA", false: "AB"}[strings.HasSuffix(info, "AA")]
				for _, bad := range []string{tampered, "x" + info, "", "not.base64!"} {
					r := e.Do("GET", u.Path+"?page_info="+url.QueryEscape(bad), nil).Expect(t, http.StatusBadRequest)
					if errs, _ := r.JSON(t)["errors"].(map[string]any); errs["page_info"] == nil {
						t.Errorf("page_info %q: 400 does not name page_info: %s", bad, r.Body)
					}
				}
				other := "/com/events.json"
				if l.path == other {
					other = "/web/redirects.json"
				}
				e.Do("GET", other+"?page_info="+url.QueryEscape(info), nil).Expect(t, http.StatusBadRequest)
			})
		}
	}, api.Groups...)
}
