package scripttags_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/scripttags"
)

func body(fields map[string]any) map[string]any { return map[string]any{"script_tag": fields} }

func create(t *testing.T, e *apitest.Env, token, src string) map[string]any {
	t.Helper()
	return e.DoAs(token, "POST", "/web/script_tags.json", body(map[string]any{"event": "onload", "src": src})).
		Expect(t, http.StatusCreated).Object(t, "script_tag")
}

func TestScriptTags(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("create defaults and timestamps in the shop's zone", func(t *testing.T) {
			tag := create(t, e, apitest.DemoToken, "https://djavaskripped.org/fancy.js")
			if tag["display_scope"] != "all" || tag["event"] != "onload" || tag["src"] != "https://djavaskripped.org/fancy.js" {
				t.Fatalf("got %v", tag)
			}
			created, err := time.Parse(time.RFC3339, tag["created_at"].(string))
			if err != nil {
				t.Fatal(err)
			}
			// The demo shop is in America/New_York: the offset is -04:00 or -05:00.
			if _, off := created.Zone(); off != -4*3600 && off != -5*3600 {
				t.Fatalf("created_at %s not in the shop's zone", tag["created_at"])
			}
			if tag["created_at"] != tag["updated_at"] {
				t.Fatalf("updated_at %v != created_at %v", tag["updated_at"], tag["created_at"])
			}
		})
		t.Run("validation", func(t *testing.T) {
			cases := []struct {
				in   map[string]any
				want string
			}{
				{map[string]any{}, `{"errors":{"event":["can't be blank"],"src":["can't be blank"]}}`},
				{map[string]any{"event": "onload", "src": "http://insecure.example.com/a.js"}, `{"errors":{"src":["Source must be secure (HTTPS)"]}}`},
				{map[string]any{"event": "onclick", "src": "https://example.com/a.js"}, `{"errors":{"event":["is not included in the list"]}}`},
				{map[string]any{"event": "onload", "src": "https://example.com/a.js", "display_scope": "everywhere"}, `{"errors":{"display_scope":["is not included in the list"]}}`},
			}
			for _, c := range cases {
				res := e.Do("POST", "/web/script_tags.json", body(c.in)).Expect(t, 422)
				if strings.TrimSpace(string(res.Body)) != c.want {
					t.Errorf("%v: got %s, want %s", c.in, res.Body, c.want)
				}
			}
		})
		t.Run("update moves updated_at and keeps validation", func(t *testing.T) {
			clk := e.FixClock(time.Now()) // steps time instead of sleeping
			tag := create(t, e, apitest.DemoToken, "https://example.com/old.js")
			path := fmt.Sprintf("/web/script_tags/%d.json", int64(tag["id"].(float64)))
			clk.Advance(time.Second) // timestamps have second precision
			up := e.Do("PUT", path, body(map[string]any{"src": "https://example.com/new.js"})).Expect(t, 200).Object(t, "script_tag")
			if up["src"] != "https://example.com/new.js" || up["updated_at"] == tag["updated_at"] || up["created_at"] != tag["created_at"] {
				t.Fatalf("update: before %v after %v", tag, up)
			}
			e.Do("PUT", path, body(map[string]any{"src": "http://example.com/x.js"})).Expect(t, 422)
			if got := e.Do("GET", path, nil).Expect(t, 200).Object(t, "script_tag"); got["src"] != "https://example.com/new.js" {
				t.Fatalf("a rejected update changed the tag: %v", got)
			}
		})
	}, api.ScriptTags)
}

// Script tags belong to their app: others cannot see, change or delete them.
func TestScriptTagsAreAppScoped(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		mine := create(t, e, apitest.DemoToken, "https://example.com/mine.js")
		path := fmt.Sprintf("/web/script_tags/%d.json", int64(mine["id"].(float64)))
		other := apitest.ReadOnlyToken
		e.DoAs(other, "GET", path, nil).Expect(t, 404)
		if l := e.DoAs(other, "GET", "/web/script_tags.json", nil).Expect(t, 200).List(t, "script_tags"); len(l) != 0 {
			t.Fatalf("another app's list shows %v", l)
		}
		if c := e.DoAs(other, "GET", "/web/script_tags/count.json", nil).Expect(t, 200).JSON(t)["count"]; c != 0.0 {
			t.Fatalf("another app's count %v", c)
		}
		// The read-only app lacks write_script_tags: 403 names the scope.
		res := e.DoAs(other, "DELETE", path, nil).Expect(t, 403)
		if strings.TrimSpace(string(res.Body)) != `{"errors":"[API] This action requires merchant approval for write_script_tags scope."}` {
			t.Fatalf("403 body %s", res.Body)
		}
		e.Do("GET", path, nil).Expect(t, 200)
	}, api.ScriptTags)
}

func TestScriptTagFilters(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		a := create(t, e, apitest.DemoToken, "https://example.com/a.js")
		create(t, e, apitest.DemoToken, "https://example.com/b.js")
		create(t, e, apitest.DemoToken, "https://example.com/a.js")
		if l := e.Do("GET", "/web/script_tags.json?src="+url.QueryEscape("https://example.com/a.js"), nil).Expect(t, 200).List(t, "script_tags"); len(l) != 2 {
			t.Fatalf("src filter: %v", l)
		}
		if c := e.Do("GET", "/web/script_tags/count.json?src="+url.QueryEscape("https://example.com/b.js"), nil).JSON(t)["count"]; c != 1.0 {
			t.Fatalf("src count %v", c)
		}
		if c := e.Do("GET", "/web/script_tags/count.json", nil).JSON(t)["count"]; c != 3.0 {
			t.Fatalf("count %v", c)
		}
		// A src that is no absolute URL could match nothing: 400 naming it.
		for _, bad := range []string{"null", "a.js", "https://example.com/a b.js"} {
			for _, path := range []string{"/web/script_tags.json", "/web/script_tags/count.json"} {
				r := e.Do("GET", path+"?src="+url.QueryEscape(bad), nil).Expect(t, 400)
				if errs, _ := r.JSON(t)["errors"].(map[string]any); errs["src"] == nil {
					t.Errorf("%s?src=%s: %s", path, bad, r.Body)
				}
			}
		}
		created, _ := time.Parse(time.RFC3339, a["created_at"].(string))
		before := created.Add(-time.Hour).Format(time.RFC3339)
		after := created.Add(time.Hour).Format(time.RFC3339)
		if l := e.Do("GET", "/web/script_tags.json?created_at_min="+url.QueryEscape(before), nil).Expect(t, 200).List(t, "script_tags"); len(l) != 3 {
			t.Fatalf("created_at_min: %v", l)
		}
		if l := e.Do("GET", "/web/script_tags.json?created_at_min="+url.QueryEscape(after), nil).Expect(t, 200).List(t, "script_tags"); len(l) != 0 {
			t.Fatalf("created_at_min in the future: %v", l)
		}
		if l := e.Do("GET", "/web/script_tags.json?updated_at_max="+url.QueryEscape(before), nil).Expect(t, 200).List(t, "script_tags"); len(l) != 0 {
			t.Fatalf("updated_at_max in the past: %v", l)
		}
		e.Do("GET", "/web/script_tags.json?created_at_min=yesterday", nil).Expect(t, 400)
		if l := e.Do("GET", "/web/script_tags.json?fields=src", nil).Expect(t, 200).List(t, "script_tags"); len(l[0].(map[string]any)) != 1 {
			t.Fatalf("fields: %v", l)
		}
	}, api.ScriptTags)
}

func ptr(s string) *string { return &s }

// The rules of a script tag, without HTTP or a store: validation fails before
// anything is read or written.
func TestScriptTagRules(t *testing.T) {
	var s scripttags.Service
	ctx := admin.WithApp(t.Context(), &admin.App{ID: 1})
	onload := ptr("onload")
	for _, c := range []struct {
		name string
		in   scripttags.Input
		want string
	}{
		{"src and event required", scripttags.Input{}, `invalid event=["can't be blank"] src=["can't be blank"]`},
		{"https only", scripttags.Input{Src: ptr("http://example.com/a.js"), Event: onload}, `invalid src=["Source must be secure (HTTPS)"]`},
		{"another scheme", scripttags.Input{Src: ptr("ftp://example.com/a.js"), Event: onload}, `invalid src=["Source must be secure (HTTPS)"]`},
		{"no host", scripttags.Input{Src: ptr("/a.js"), Event: onload}, `invalid src=["is invalid"]`},
		{"a wildcard host", scripttags.Input{Src: ptr("https://*/a.js"), Event: onload}, `invalid src=["is invalid"]`},
		{"an empty label", scripttags.Input{Src: ptr("https://a..b.example/a.js"), Event: onload}, `invalid src=["is invalid"]`},
		{"a label with outer hyphens", scripttags.Input{Src: ptr("https://-bad-.example/a.js"), Event: onload}, `invalid src=["is invalid"]`},
		{"a port past 65535", scripttags.Input{Src: ptr("https://example.com:65536/a.js"), Event: onload}, `invalid src=["is invalid"]`},
		{"spaces", scripttags.Input{Src: ptr("https://example.com/a b.js"), Event: onload}, `invalid src=["is invalid"]`},
		{"too long", scripttags.Input{Src: ptr("https://example.com/" + strings.Repeat("a", 1024)), Event: onload}, `invalid src=["is too long (maximum is 1024 characters)"]`},
		{"event onload only", scripttags.Input{Src: ptr("https://example.com/a.js"), Event: ptr("onclick")}, `invalid event=["is not included in the list"]`},
		{"display scope in the list", scripttags.Input{Src: ptr("https://example.com/a.js"), Event: onload, DisplayScope: ptr("everywhere")}, `invalid display_scope=["is not included in the list"]`},
	} {
		_, err := s.Create(ctx, &c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
}

// Every filter, alone and combined, answers what filtering the whole list
// would, after updates and deletes have moved tags in their updated_at
// entries; counts agree, and each reads only its matches.
func TestFiltersAgreeWithTheWholeList(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now()) // steps time instead of sleeping
		srcs := []string{"https://example.com/a.js", "https://example.com/b.js", "https://example.com/c.js"}
		var made []map[string]any
		for i := range 9 {
			if i == 5 {
				clk.Advance(time.Second) // two seconds of created_at at least, for the range edges
			}
			made = append(made, create(t, e, apitest.DemoToken, srcs[i%3]))
		}
		clk.Advance(time.Second)
		path := func(tag map[string]any) string {
			return fmt.Sprintf("/web/script_tags/%d.json", int64(tag["id"].(float64)))
		}
		e.Do("PUT", path(made[0]), body(map[string]any{"src": srcs[1]})).Expect(t, 200)
		e.Do("PUT", path(made[6]), body(map[string]any{"display_scope": "online_store"})).Expect(t, 200)
		e.Do("DELETE", path(made[2]), nil).Expect(t, 200)

		whole := e.Do("GET", "/web/script_tags.json?limit=250", nil).Expect(t, 200).List(t, "script_tags")
		if len(whole) != 8 {
			t.Fatalf("%d tags, want 8", len(whole))
		}
		third := int64(whole[2].(map[string]any)["id"].(float64))
		src := func(s string) func(map[string]any) bool { return func(r map[string]any) bool { return r["src"] == s } }
		updatedAfter := func(r map[string]any) bool { return r["created_at"] != r["updated_at"] }
		filters := []apitest.Filter{
			{Query: "", Keep: func(map[string]any) bool { return true }},
			{Query: "src=" + url.QueryEscape(srcs[1]), Keep: src(srcs[1])},
			{Query: "src=" + url.QueryEscape("https://example.com/none.js"), Keep: src("")},
			{Query: fmt.Sprintf("src=%s&since_id=%d", url.QueryEscape(srcs[1]), third), NoCount: true, Keep: func(r map[string]any) bool {
				return r["src"] == srcs[1] && int64(r["id"].(float64)) > third
			}},
			{Query: "src=" + url.QueryEscape(srcs[0]) + "&updated_at_min=" + url.QueryEscape(made[8]["updated_at"].(string)), Source: src(srcs[0]), Keep: func(r map[string]any) bool {
				return r["src"] == srcs[0] && updatedAfter(r)
			}},
		}
		for _, field := range []string{"created_at", "updated_at"} {
			filters = append(filters, apitest.RangeFilters(t, field, whole)...)
		}
		apitest.CheckFilters(t, e, apitest.FilterCheck{List: "/web/script_tags.json", Count: "/web/script_tags/count.json", Key: "script_tags"}, whole, filters)

		// Uninstalling the app takes its tags' entries too.
		if err := scripttags.DeleteAllOfApp(t.Context(), e.Deps.Store, 1001); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{"", "updated_at_min=2000-01-01", "src=" + url.QueryEscape(srcs[1])} {
			if l := e.Do("GET", "/web/script_tags.json?"+q, nil).Expect(t, 200).List(t, "script_tags"); len(l) != 0 {
				t.Errorf("after uninstall, ?%s lists %v", q, l)
			}
		}
	}, api.ScriptTags)
}

// A tag's updated_at entry and its app's count are the change feed's
// (scripttags.Derive): a request commits only the stamped tag (a delete its
// tomb), and what it changed is listed and counted before it answers, with
// concurrent writers too; an uninstall's removals are counted down once.
func TestEntriesAndCountFollowTheFeed(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		count := func(q string) float64 {
			t.Helper()
			return e.Do("GET", "/web/script_tags/count.json?"+q, nil).Expect(t, 200).JSON(t)["count"].(float64)
		}
		const n = 6
		tags := make([]int64, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				r := e.Do("POST", "/web/script_tags.json", body(map[string]any{"event": "onload", "src": fmt.Sprintf("https://example.com/%d.js", i)}))
				if r.Status == http.StatusCreated {
					tags[i] = int64(r.JSON(t)["script_tag"].(map[string]any)["id"].(float64))
				}
			})
		}
		wg.Wait()
		if c := count(""); c != n {
			t.Fatalf("count %v after %d creates", c, n)
		}
		clk.Advance(time.Hour)
		later := url.QueryEscape(clk.Now().Add(-time.Minute).Format(time.RFC3339))
		for _, id := range tags[:3] {
			wg.Go(func() {
				e.Do("PUT", fmt.Sprintf("/web/script_tags/%d.json", id), body(map[string]any{"display_scope": "online_store"}))
			})
		}
		wg.Wait()
		if l := e.Do("GET", "/web/script_tags.json?updated_at_min="+later, nil).Expect(t, 200).List(t, "script_tags"); len(l) != 3 {
			t.Fatalf("updated_at_min after 3 updates lists %d: %v", len(l), l)
		}
		if c, all := count("updated_at_min="+later), count(""); c != 3 || all != n {
			t.Fatalf("counts %v (updated) and %v (all) after 3 updates", c, all)
		}
		e.Do("DELETE", fmt.Sprintf("/web/script_tags/%d.json", tags[0]), nil).Expect(t, 200)
		e.Do("DELETE", fmt.Sprintf("/web/script_tags/%d.json", tags[0]), nil).Expect(t, 404)
		if c, all := count("updated_at_min="+later), count(""); c != 2 || all != n-1 {
			t.Fatalf("counts %v (updated) and %v (all) after a delete", c, all)
		}
		if err := scripttags.DeleteAllOfApp(t.Context(), e.Deps.Store, 1001); err != nil {
			t.Fatal(err)
		}
		if c, all := count("updated_at_min="+later), count(""); c != 0 || all != 0 {
			t.Fatalf("counts %v (updated) and %v (all) after the uninstall's removals", c, all)
		}
		create(t, e, apitest.DemoToken, "https://example.com/again.js")
		if c := count(""); c != 1 {
			t.Fatalf("count %v after a create following the uninstall", c)
		}
	}, api.ScriptTags)
}
