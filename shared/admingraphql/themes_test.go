package admingraphql_test

import (
	"archive/zip"
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

const goodLayout = "<html><head>{{ content_for_header }}</head><body>{{ content_for_layout }}</body></html>"

// themeZip serves a theme zip at /summer.zip.
func themeZip(t *testing.T) *httptest.Server {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range [][2]string{
		{"summer/layout/theme.liquid", goodLayout},
		{"summer/templates/index.liquid", "<h1>{{ shop.name }}</h1>"},
		{"summer/templates/product.liquid", "{{ product.title }}"},
		{"summer/assets/app.css", "body{}"},
	} {
		w, err := zw.Create(f[0])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/summer.zip" {
			http.NotFound(w, r)
			return
		}
		w.Write(buf.Bytes())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// runImports runs the theme imports queued so far, as the theme-import
// function does: no waiting, the queue's messages handled in the test.
func runImports(t *testing.T, e *apitest.Env) int {
	t.Helper()
	svc := themes.NewService(e.Deps)
	n := 0
	for {
		msgs, err := e.Deps.ThemeImports.Receive(t.Context(), 10, 0)
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) == 0 {
			return n
		}
		for _, m := range msgs {
			if err := svc.HandleMessage(t.Context(), m.Body, m.Attempt); err != nil {
				t.Fatal(err)
			}
			if err := e.Deps.ThemeImports.Ack(t.Context(), m); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
}

// A theme from a zip to published through GraphQL, through REST's import
// queue; its files written, copied and deleted with REST's rules, read by
// REST; the seeded theme (REST's) read by GraphQL.
func TestThemeZipToPublished(t *testing.T) {
	srv := themeZip(t)
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		made := gql(t, e, apitest.DemoToken, `mutation($src: URL!) { themeCreate(source: $src, name: "Summer") { theme { id name role processing processingFailed } userErrors { field message code } } }`,
			map[string]any{"src": srv.URL + "/summer.zip"})
		th := dig(made, "data", "themeCreate", "theme")
		gid, _ := dig(th, "id").(string)
		if !strings.HasPrefix(gid, "gid://shopify/OnlineStoreTheme/") || dig(th, "role") != "UNPUBLISHED" || dig(th, "processing") != true {
			t.Fatalf("themeCreate: %v", made)
		}
		id := strings.TrimPrefix(gid, "gid://shopify/OnlineStoreTheme/")
		vars := map[string]any{"id": gid}

		early := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themePublish(id: $id) { theme { id } userErrors { field message code } } }`, vars)
		if ue := dig(early, "data", "themePublish", "userErrors", 0); dig(ue, "code") != "CANNOT_PUBLISH_THEME_DURING_INSTALL" ||
			dig(ue, "message") != "Role "+themes.MsgProcessing || fmt.Sprint(dig(ue, "field")) != "[id]" {
			t.Errorf("publish while processing: %v", early)
		}
		if n := runImports(t, e); n != 1 {
			t.Fatalf("%d imports queued", n)
		}
		rest := e.Do("GET", "/web/themes/"+id+".json", nil).Expect(t, 200).Object(t, "theme")
		if rest["processing"] != false || rest["previewable"] != true || rest["name"] != "Summer" {
			t.Errorf("REST reads %v", rest)
		}

		themeFilesRead(t, e, gid, id)
		themeFilesWrite(t, e, gid, id)
		themePublishAndDelete(t, e, gid, id)
	}, api.GraphQL, api.Themes)
}

// themeFilesRead reads the imported theme's files through GraphQL, a page at a time.
func themeFilesRead(t *testing.T, e *apitest.Env, gid string, id string) {
	vars := map[string]any{"id": gid}
	files := gql(t, e, apitest.DemoToken, `query($id: ID!) { theme(id: $id) { processing files(first: 1, filenames: ["templates/*"]) {
		nodes { filename contentType size checksumMd5 body { __typename ... on OnlineStoreThemeFileBodyText { content } } } pageInfo { hasNextPage endCursor } } } }`, vars)
	f0 := dig(files, "data", "theme", "files", "nodes", 0)
	if dig(files, "data", "theme", "processing") != false || dig(f0, "filename") != "templates/index.liquid" ||
		dig(f0, "body", "content") != "<h1>{{ shop.name }}</h1>" || dig(f0, "checksumMd5") != fmt.Sprintf("%x", md5.Sum([]byte("<h1>{{ shop.name }}</h1>"))) {
		t.Errorf("files: %v", files)
	}
	next := gql(t, e, apitest.DemoToken, `query($id: ID!, $after: String) { theme(id: $id) { files(first: 5, after: $after, filenames: ["templates/*"]) { nodes { filename } pageInfo { hasNextPage } } } }`,
		map[string]any{"id": gid, "after": dig(files, "data", "theme", "files", "pageInfo", "endCursor")})
	if fmt.Sprint(dig(next, "data", "theme", "files", "nodes")) != "[map[filename:templates/product.liquid]]" ||
		dig(files, "data", "theme", "files", "pageInfo", "hasNextPage") != true || dig(next, "data", "theme", "files", "pageInfo", "hasNextPage") != false {
		t.Errorf("next page: %v", next)
	}
}

// themeFilesWrite upserts, copies and deletes files through GraphQL, each read back through REST.
func themeFilesWrite(t *testing.T, e *apitest.Env, gid string, id string) {
	vars := map[string]any{"id": gid}
	png := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\nxx"))
	up := gql(t, e, apitest.DemoToken, `mutation($id: ID!, $files: [OnlineStoreThemeFilesUpsertFileInput!]!) { themeFilesUpsert(themeId: $id, files: $files) {
		upsertedThemeFiles { filename size checksumMd5 } userErrors { field filename message code } } }`,
		map[string]any{"id": gid, "files": []any{
			map[string]any{"filename": "templates/page.liquid", "body": map[string]any{"type": "TEXT", "value": "{{ page.content }}"}},
			map[string]any{"filename": "assets/logo.png", "body": map[string]any{"type": "BASE64", "value": png}},
			map[string]any{"filename": "layout/theme.liquid", "body": map[string]any{"type": "TEXT", "value": "<html></html>"}},
			map[string]any{"filename": "bad/x.liquid", "body": map[string]any{"type": "TEXT", "value": "x"}},
		}})
	res := dig(up, "data", "themeFilesUpsert")
	if fmt.Sprintf("%v %v %v", dig(res, "upsertedThemeFiles", 0, "filename"), dig(res, "upsertedThemeFiles", 1, "filename"), dig(res, "upsertedThemeFiles", 1, "size")) != "templates/page.liquid assets/logo.png 10" {
		t.Errorf("upserted: %v", up)
	}
	if ue := dig(res, "userErrors", 0); dig(ue, "filename") != "layout/theme.liquid" || dig(ue, "code") != "FILE_VALIDATION_ERROR" ||
		dig(ue, "message") != "Body "+theme.MsgLayout || fmt.Sprint(dig(ue, "field")) != "[files 2]" {
		t.Errorf("bad layout: %v", up)
	}
	if ue := dig(res, "userErrors", 1); dig(ue, "filename") != "bad/x.liquid" || !strings.HasPrefix(dig(ue, "message").(string), "Filename must be <bucket>/<name>") {
		t.Errorf("bad key: %v", up)
	}
	a := e.Do("GET", "/web/themes/"+id+"/assets.json?asset[key]=templates/page.liquid", nil).Expect(t, 200).Object(t, "asset")
	if a["value"] != "{{ page.content }}" {
		t.Errorf("REST reads %v", a)
	}
	if l := e.Do("GET", "/web/themes/"+id+"/assets.json?asset[key]=layout/theme.liquid", nil).Expect(t, 200).Object(t, "asset"); l["value"] != goodLayout {
		t.Errorf("the refused layout was written: %v", l)
	}

	cp := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themeFilesCopy(themeId: $id, files: [{srcFilename: "templates/page.liquid", dstFilename: "templates/page.alt.liquid"}, {srcFilename: "templates/none.liquid", dstFilename: "templates/y.liquid"}]) {
		copiedThemeFiles { filename } userErrors { filename message code } } }`, vars)
	if dig(cp, "data", "themeFilesCopy", "copiedThemeFiles", 0, "filename") != "templates/page.alt.liquid" ||
		dig(cp, "data", "themeFilesCopy", "userErrors", 0, "message") != "SrcFilename does not exist" {
		t.Errorf("copy: %v", cp)
	}
	del := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themeFilesDelete(themeId: $id, files: ["templates/page.alt.liquid", "layout/theme.liquid", "templates/none.liquid"]) {
		deletedThemeFiles { filename } userErrors { filename code } } }`, vars)
	if fmt.Sprint(dig(del, "data", "themeFilesDelete")) != "map[deletedThemeFiles:[map[filename:templates/page.alt.liquid]] userErrors:[map[code:ACCESS_DENIED filename:layout/theme.liquid] map[code:NOT_FOUND filename:templates/none.liquid]]]" {
		t.Errorf("delete: %v", del)
	}
	e.Do("GET", "/web/themes/"+id+"/assets.json?asset[key]=templates/page.alt.liquid", nil).Expect(t, 404)
}

// themePublishAndDelete publishes the theme, lists themes by role, and refuses and makes deletes and updates.
func themePublishAndDelete(t *testing.T, e *apitest.Env, gid string, id string) {
	vars := map[string]any{"id": gid}
	pub := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themePublish(id: $id) { theme { id role } userErrors { message } } }`, vars)
	if dig(pub, "data", "themePublish", "theme", "role") != "MAIN" {
		t.Fatalf("themePublish: %v", pub)
	}
	if r := e.Do("GET", fmt.Sprintf("/web/themes/%d.json", theme.MainID), nil).Expect(t, 200).Object(t, "theme")["role"]; r != "unpublished" {
		t.Errorf("the seeded theme is %v", r)
	}
	list := gql(t, e, apitest.DemoToken, `{ main: themes(first: 5, roles: [MAIN]) { nodes { id name } } all: themes(first: 5) { nodes { name role } } }`, nil)
	if fmt.Sprint(dig(list, "data", "main", "nodes")) != fmt.Sprintf("[map[id:%s name:Summer]]", gid) || len(dig(list, "data", "all", "nodes").([]any)) != 2 {
		t.Errorf("themes: %v", list)
	}

	mainDel := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themeDelete(id: $id) { deletedThemeId userErrors { field message code } } }`, vars)
	if fmt.Sprint(dig(mainDel, "data", "themeDelete")) != "map[deletedThemeId:<nil> userErrors:[map[code:<nil> field:<nil> message:"+themes.MsgMainDelete+"]]]" {
		t.Errorf("main delete: %v", mainDel)
	}
	blank := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themeUpdate(id: $id, input: {name: " "}) { theme { id } userErrors { field message code } } }`, vars)
	if fmt.Sprint(dig(blank, "data", "themeUpdate", "userErrors")) != "[map[code:INVALID field:[name] message:Name can't be blank]]" {
		t.Errorf("blank name: %v", blank)
	}
	old := fmt.Sprintf("gid://shopify/OnlineStoreTheme/%d", theme.MainID)
	gone := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themeDelete(id: $id) { deletedThemeId userErrors { message } } }`, map[string]any{"id": old})
	if dig(gone, "data", "themeDelete", "deletedThemeId") != old {
		t.Errorf("themeDelete: %v", gone)
	}
	e.Do("GET", fmt.Sprintf("/web/themes/%d.json", theme.MainID), nil).Expect(t, 404)
	again := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { themeDelete(id: $id) { userErrors { field message code } } }`, map[string]any{"id": old})
	if fmt.Sprint(dig(again, "data", "themeDelete", "userErrors")) != "[map[code:NOT_FOUND field:[id] message:Theme does not exist]]" {
		t.Errorf("delete again: %v", again)
	}

	bad := gql(t, e, apitest.DemoToken, `mutation { a: themeCreate(source: "ftp://x/y.zip") { theme { id } userErrors { field message } } b: themeCreate(source: "https://x.example/t.zip", role: MAIN) { userErrors { code } } }`, nil)
	if fmt.Sprint(dig(bad, "data", "a", "userErrors")) != "[map[field:[source] message:Source is invalid]]" ||
		dig(bad, "data", "b", "userErrors", 0, "code") != "INVALID_THEME_ROLE_FOR_THEME_CREATION" {
		t.Errorf("bad creates: %v", bad)
	}
}

// A theme's HTML never runs on the API's origin: a file written through
// GraphQL comes back inside the JSON answer, and the token-less route
// serves it under the sandbox policy, as an attachment.
func TestThemeHTMLNeverRuns(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		html := `<!DOCTYPE html><script>fetch("/admin/recurring_application_charges.json")</script>`
		gid := fmt.Sprintf("gid://shopify/OnlineStoreTheme/%d", theme.MainID)
		up := gql(t, e, apitest.DemoToken, `mutation($id: ID!, $v: String!) { themeFilesUpsert(themeId: $id, files: [{filename: "assets/x.html", body: {type: TEXT, value: $v}}]) { upsertedThemeFiles { filename } userErrors { message } } }`,
			map[string]any{"id": gid, "v": html})
		if dig(up, "data", "themeFilesUpsert", "upsertedThemeFiles", 0, "filename") != "assets/x.html" {
			t.Fatalf("upsert: %v", up)
		}
		res := e.DoWith(http.Header{"X-Shopify-Access-Token": {apitest.DemoToken}, "Content-Type": {"application/json"}}, "POST", "/admin/api/2026-07/graphql.json",
			map[string]any{"query": `query($id: ID!) { theme(id: $id) { files(first: 1, filenames: ["assets/x.html"]) { nodes { body { ... on OnlineStoreThemeFileBodyText { content } } } } } }`,
				"variables": map[string]any{"id": gid}}).Expect(t, 200)
		if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") || !strings.Contains(string(res.Body), `\u003cscript\u003e`) && !strings.Contains(string(res.Body), `<script>`) {
			t.Errorf("answer %s: %s", ct, res.Body)
		}
		file := e.DoAs("", "GET", fmt.Sprintf("/web/themes/%d/assets/x.html", theme.MainID), nil).Expect(t, 200)
		if file.Header.Get("Content-Security-Policy") != "sandbox" || file.Header.Get("Content-Disposition") != "attachment" {
			t.Errorf("public file %v", file.Header)
		}
	}, api.GraphQL, api.Themes)
}

// Themes need the themes access: reading read_themes, writing
// write_themes, each named.
func TestThemesAccessDenied(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		e.SetApp(4243, "content-only-token-0123456789", "read_content", "read_themes")
		ans := gql(t, e, "content-only-token-0123456789", `mutation { themeCreate(source: "https://x.example/t.zip") { theme { id } } }`, nil)
		if dig(ans, "errors", 0, "extensions", "code") != "ACCESS_DENIED" ||
			dig(ans, "errors", 0, "message") != "Access denied for themeCreate field. Required access: `write_themes` access scope." {
			t.Errorf("write: %v", ans)
		}
		e.SetApp(4244, "pages-only-token-0123456789", "read_content")
		read := gql(t, e, "pages-only-token-0123456789", `{ shop { name } themes(first: 1) { nodes { id } } }`, nil)
		if dig(read, "errors", 0, "message") != "Access denied for themes field. Required access: `read_themes` access scope." || dig(read, "data", "shop", "name") == nil {
			t.Errorf("read: %v", read)
		}
	}, api.GraphQL, api.Themes)
}
