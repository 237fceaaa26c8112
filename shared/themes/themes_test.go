package themes_test

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"encoding/base64"
	"fmt"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/themes"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

type M = map[string]any

var mainPath = fmt.Sprintf("/web/themes/%d.json", theme.MainID)

func assetsPath(id int64) string { return fmt.Sprintf("/web/themes/%d/assets.json", id) }

func themeID(t *testing.T, r *apitest.Response) int64 {
	t.Helper()
	return int64(r.Object(t, "theme")["id"].(float64))
}

func TestThemesCRUD(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		list := e.Do("GET", "/web/themes.json", nil).Expect(t, 200).List(t, "themes")
		if len(list) != 1 || list[0].(M)["role"] != "main" || list[0].(M)["previewable"] != true {
			t.Fatalf("seeded themes: %v", list)
		}
		assets := e.Do("GET", assetsPath(theme.MainID), nil).Expect(t, 200).List(t, "assets")
		if len(assets) != len(theme.Starter) {
			t.Fatalf("seeded assets: %v", assets)
		}
		for _, a := range assets {
			if _, ok := a.(M)["value"]; ok {
				t.Errorf("listing carries content: %v", a)
			}
		}

		r := e.Do("POST", "/web/themes.json", M{"theme": M{"name": "  "}}).Expect(t, 422)
		if !strings.Contains(string(r.Body), `"name":["can't be blank"]`) {
			t.Errorf("blank name: %s", r.Body)
		}
		e.Do("POST", "/web/themes.json", M{"theme": M{"name": "x", "role": "boss"}}).Expect(t, 422)

		created := e.Do("POST", "/web/themes.json", M{"theme": M{"name": "Summer"}}).Expect(t, 201)
		th := created.Object(t, "theme")
		if th["role"] != "unpublished" || th["processing"] != false || th["previewable"] != true || th["theme_store_id"] != nil {
			t.Errorf("created: %s", created.Body)
		}
		id := themeID(t, created)
		one := fmt.Sprintf("/web/themes/%d.json", id)

		// Publish: the old main is demoted in the same change.
		e.Do("PUT", one, M{"theme": M{"role": "main"}}).Expect(t, 200)
		if role := e.Do("GET", mainPath, nil).Expect(t, 200).Object(t, "theme")["role"]; role != "unpublished" {
			t.Errorf("previous main is %v", role)
		}
		e.Do("DELETE", one, nil).Expect(t, 422)
		e.Do("PUT", one, M{"theme": M{"role": "unpublished"}}).Expect(t, 422)
		// A null name is refused, not taken as "unchanged", and nothing else changes.
		if r := e.Do("PUT", one, M{"theme": M{"name": nil, "role": "main"}}).Expect(t, 422); !strings.Contains(string(r.Body), `"name":["must be a string"]`) {
			t.Errorf("null name: %s", r.Body)
		}
		e.Do("PUT", mainPath, M{"theme": M{"role": "mobile", "name": "Old"}}).Expect(t, 200)
		e.Do("PUT", mainPath, M{"theme": M{"role": "main"}}).Expect(t, 200)
		if role := e.Do("GET", one, nil).Expect(t, 200).Object(t, "theme")["role"]; role != "unpublished" {
			t.Errorf("demoted theme is %v", role)
		}

		// Delete answers the theme itself.
		del := e.Do("DELETE", one, nil).Expect(t, 200).JSON(t)
		if del["name"] != "Summer" || del["id"].(float64) != float64(id) {
			t.Errorf("delete answered %v", del)
		}
		e.Do("GET", one, nil).Expect(t, 404)
		e.Do("GET", assetsPath(id), nil).Expect(t, 404)
		e.DoAs(apitest.ReadOnlyToken, "GET", "/web/themes.json", nil).Expect(t, 403)
	}, api.Themes)
}

func TestThemeLimitUnderConcurrentCreates(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var ok, refused atomic.Int32
		var wg sync.WaitGroup
		for i := range 22 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.Do("POST", "/web/themes.json", M{"theme": M{"name": fmt.Sprintf("t%d", i)}})
				switch r.Status {
				case 201:
					ok.Add(1)
				case 422:
					refused.Add(1)
				default:
					t.Errorf("status %d: %s", r.Status, r.Body)
				}
			}()
		}
		wg.Wait()
		if ok.Load() != theme.MaxThemes-1 || refused.Load() != 3 {
			t.Errorf("created %d, refused %d; want 19 and 3", ok.Load(), refused.Load())
		}
		if n := len(e.Do("GET", "/web/themes.json", nil).Expect(t, 200).List(t, "themes")); n != theme.MaxThemes {
			t.Errorf("%d themes", n)
		}
	}, api.Themes)
}

func TestAssets(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		p := assetsPath(theme.MainID)
		put := func(asset M, want int) *apitest.Response {
			t.Helper()
			return e.Do("PUT", p, M{"asset": asset}).Expect(t, want)
		}
		a := put(M{"key": "snippets/hello.liquid", "value": "Hello {{ name }}"}, 200).Object(t, "asset")
		if a["size"].(float64) != 16 || a["content_type"] != "text/x-liquid" || a["public_url"] != nil || a["value"] != nil {
			t.Errorf("put answered %v", a)
		}
		got := e.Do("GET", p+"?asset[key]=snippets/hello.liquid", nil).Expect(t, 200).Object(t, "asset")
		if got["value"] != "Hello {{ name }}" {
			t.Errorf("read %v", got)
		}
		png := []byte("\x89PNG\r\n\x1a\n\x00\x00binary\xff\xfe")
		a = put(M{"key": "assets/logo.png", "attachment": base64.StdEncoding.EncodeToString(png)}, 200).Object(t, "asset")
		url, _ := a["public_url"].(string)
		if a["content_type"] != "image/png" || !strings.HasSuffix(url, fmt.Sprintf("/web/themes/%d/assets/logo.png", theme.MainID)) {
			t.Errorf("binary put answered %v", a)
		}
		got = e.Do("GET", p+"?asset[key]=assets/logo.png", nil).Expect(t, 200).Object(t, "asset")
		if got["attachment"] != base64.StdEncoding.EncodeToString(png) || got["value"] != nil {
			t.Errorf("binary read %v", got)
		}
		// Copy and download.
		put(M{"key": "snippets/copy.liquid", "source_key": "snippets/hello.liquid"}, 200)
		if v := e.Do("GET", p+"?asset[key]=snippets/copy.liquid", nil).Expect(t, 200).Object(t, "asset")["value"]; v != "Hello {{ name }}" {
			t.Errorf("copy %v", v)
		}
		put(M{"key": "snippets/x.liquid", "source_key": "snippets/none.liquid"}, 422)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("a{}")) }))
		defer srv.Close()
		put(M{"key": "assets/remote.css", "src": srv.URL + "/x.css"}, 200)

		// Keys and sources.
		for _, k := range []string{"../x.liquid", "/layout/x.liquid", "layout\\x.liquid", "assets/a\x01.css", "assets/../x", "nowhere/x.css", "assets", "assets/"} {
			r := put(M{"key": k, "value": "x"}, 422)
			if !strings.Contains(string(r.Body), `"key"`) {
				t.Errorf("key %q: %s", k, r.Body)
			}
		}
		put(M{"key": "snippets/a.liquid"}, 422)
		put(M{"key": "snippets/a.liquid", "value": "a", "source_key": "snippets/hello.liquid"}, 422)
		r := put(M{"key": "layout/alt.liquid", "value": "<body>{{ content_for_layout }}</body>"}, 422)
		if !strings.Contains(string(r.Body), `"asset":["must contain`) {
			t.Errorf("layout check: %s", r.Body)
		}
		put(M{"key": "layout/alt.liquid", "value": "{{content_for_header}}{{ content_for_layout }}"}, 200)

		// Deletes.
		r = e.Do("DELETE", p+"?asset[key]=layout/theme.liquid", nil).Expect(t, 403)
		if strings.TrimSpace(string(r.Body)) != "{}" {
			t.Errorf("403 body %s", r.Body)
		}
		e.Do("DELETE", p+"?asset[key]=snippets/copy.liquid", nil).Expect(t, 200)
		e.Do("GET", p+"?asset[key]=snippets/copy.liquid", nil).Expect(t, 404)
		e.Do("DELETE", p, nil).Expect(t, 400)

		// The public route: no token, file headers, revalidation.
		res := e.DoAs("", "GET", fmt.Sprintf("/web/themes/%d/assets/logo.png", theme.MainID), nil).Expect(t, 200)
		if !bytes.Equal(res.Body, png) || res.Header.Get("Content-Type") != "image/png" || res.Header.Get("ETag") == "" ||
			res.Header.Get("Cache-Control") == "" {
			t.Errorf("public file: %v %q", res.Header, res.Body)
		}
		req := httptest.NewRequest("GET", fmt.Sprintf("/web/themes/%d/assets/logo.png", theme.MainID), nil)
		req.Header.Set("If-None-Match", res.Header.Get("ETag"))
		rec := httptest.NewRecorder()
		e.Handler.ServeHTTP(rec, req)
		if rec.Code != 304 {
			t.Errorf("revalidation: %d", rec.Code)
		}
		e.DoAs("", "GET", fmt.Sprintf("/web/themes/%d/assets/none.png", theme.MainID), nil).Expect(t, 404)
		e.DoAs("", "GET", fmt.Sprintf("/web/themes/%d/assets/../layout/theme.liquid", theme.MainID), nil).Expect(t, 404)
		// Token-less access stops at assets/ files.
		e.DoAs("", "GET", p, nil).Expect(t, 401)
	}, api.Themes)
}

func TestLargeAssetRoundTrip(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		p := assetsPath(theme.MainID)
		big := make([]byte, 5<<20)
		rng := rand.NewChaCha8([32]byte{1})
		rng.Read(big)
		e.Do("PUT", p, M{"asset": M{"key": "assets/big.bin", "attachment": base64.StdEncoding.EncodeToString(big)}}).Expect(t, 200)
		got := e.Do("GET", p+"?asset[key]=assets/big.bin", nil).Expect(t, 200).Object(t, "asset")
		b, _ := base64.StdEncoding.DecodeString(got["attachment"].(string))
		if !bytes.Equal(b, big) || got["size"].(float64) != 5<<20 {
			t.Fatalf("5 MB asset came back as %d bytes", len(b))
		}
		// Replace it while readers read: each sees one whole version.
		big2 := bytes.Repeat([]byte{7}, 3<<20)
		ctx := context.Background()
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := theme.Put(ctx, e.Deps.Store, e.Deps.Clock, theme.MainID, "assets/big.bin", big2); err != nil {
				t.Error(err)
			}
		}()
		for range 3 {
			_, c, err := theme.Read(ctx, e.Deps.Store, theme.MainID, "assets/big.bin")
			if err != nil || !(bytes.Equal(c, big) || bytes.Equal(c, big2)) {
				t.Errorf("read a mixed asset (%d bytes): %v", len(c), err)
			}
		}
		wg.Wait()
		res := e.DoAs("", "GET", fmt.Sprintf("/web/themes/%d/assets/big.bin", theme.MainID), nil).Expect(t, 200)
		if !bytes.Equal(res.Body, big2) {
			t.Errorf("public read after replace: %d bytes", len(res.Body))
		}
	}, api.Themes)
}

// zipOf builds a zip of name → content; a name ending in "@" is a symlink.
func zipOf(t *testing.T, files [][2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		name := f[0]
		h := &zip.FileHeader{Name: strings.TrimSuffix(name, "@"), Method: zip.Deflate}
		if strings.HasSuffix(name, "@") {
			h.SetMode(fs.ModeSymlink | 0o777)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(f[1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const goodLayout = "<html>{{ content_for_header }}<body>{{ content_for_layout }}</body></html>"

// bombOf is a zip of a good layout and names, each size bytes of "a" that
// deflate to almost nothing. The entry is compressed once, at BestSpeed, and
// written raw under every name: compressing 220 MB at the default level
// took 35 s under the race detector.
func bombOf(t *testing.T, size int, names ...string) []byte {
	t.Helper()
	var raw bytes.Buffer
	fw, err := flate.NewWriter(&raw, flate.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	crc := crc32.NewIEEE()
	for n := 0; n < size; n += len(chunk) {
		c := chunk[:min(len(chunk), size-n)]
		fw.Write(c)
		crc.Write(c)
	}
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create("layout/theme.liquid")
	w.Write([]byte(goodLayout))
	for _, name := range names {
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: crc.Sum32(),
			CompressedSize64: uint64(raw.Len()), UncompressedSize64: uint64(size)})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(raw.Bytes())
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestImport(t *testing.T) {
	srv := themeZipServer(t)

	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		consumer := themes.NewService(e.Deps)
		consumer.DownloadTimeout = 500 * time.Millisecond
		go func() { consumer.ConsumeImports(ctx); close(done) }()
		defer func() { cancel(); <-done }()

		create := func(path, role string) int64 {
			t.Helper()
			body := M{"name": path, "src": srv.URL + path}
			if role != "" {
				body["role"] = role
			}
			r := e.Do("POST", "/web/themes.json", M{"theme": body}).Expect(t, 201)
			th := r.Object(t, "theme")
			if th["role"] != "unpublished" || th["processing"] != true || th["previewable"] != false {
				t.Errorf("created %s", r.Body)
			}
			return themeID(t, r)
		}
		wait := func(id int64) M {
			t.Helper()
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				th := e.Do("GET", fmt.Sprintf("/web/themes/%d.json", id), nil).Expect(t, 200).Object(t, "theme")
				if th["processing"] == false {
					return th
				}
				time.Sleep(50 * time.Millisecond)
			}
			t.Fatalf("theme %d still processing", id)
			return nil
		}

		id := create("/good.zip", "main")
		// A processing theme takes no role.
		e.Do("PUT", fmt.Sprintf("/web/themes/%d.json", id), M{"theme": M{"role": "mobile"}}).Expect(t, 422)
		th := wait(id)
		if th["previewable"] != true || th["role"] != "main" || th["import_error"] != nil {
			t.Errorf("good import: %v", th)
		}
		assets := e.Do("GET", assetsPath(id), nil).Expect(t, 200).List(t, "assets")
		var keys []string
		for _, a := range assets {
			keys = append(keys, a.(M)["key"].(string))
		}
		if strings.Join(keys, ",") != "assets/app.css,config/settings_data.json,layout/theme.liquid,templates/customers/account.liquid,templates/index.liquid" {
			t.Errorf("imported %v", keys)
		}
		if role := e.Do("GET", mainPath, nil).Expect(t, 200).Object(t, "theme")["role"]; role != "unpublished" {
			t.Errorf("previous main is %v", role)
		}

		for path, reason := range map[string]string{
			"/slip.zip": "unsafe path", "/symlink.zip": "symbolic link", "/bomb.zip": "200 MB",
			"/notzip.zip": "not a zip", "/nolayout.zip": "no layout", "/slow.zip": "timed out", "/missing.zip": "404",
		} {
			id := create(path, "main")
			th := wait(id)
			msg, _ := th["import_error"].(string)
			if th["previewable"] != false || th["role"] != "unpublished" || !strings.Contains(msg, reason) {
				t.Errorf("%s: %v", path, th)
			}
			if n := len(e.Do("GET", assetsPath(id), nil).Expect(t, 200).List(t, "assets")); n != 0 {
				t.Errorf("%s left %d assets", path, n)
			}
			e.Do("PUT", fmt.Sprintf("/web/themes/%d.json", id), M{"theme": M{"role": "main"}}).Expect(t, 422)
		}
	}, api.Themes)
}

// themeZipServer serves TestImport's theme zips: a good one, unsafe and
// broken ones, and /slow.zip that answers nothing for 3 s.
func themeZipServer(t *testing.T) *httptest.Server {
	t.Helper()
	good := zipOf(t, [][2]string{
		{"mytheme/layout/theme.liquid", goodLayout},
		{"mytheme/templates/index.liquid", "index"},
		{"mytheme/templates/customers/account.liquid", "account"},
		{"mytheme/assets/app.css", "body{}"},
		{"mytheme/config/settings_data.json", "{}"},
		{"mytheme/README.md", "ignored"},
	})
	zips := map[string][]byte{
		"/good.zip":     good,
		"/slip.zip":     zipOf(t, [][2]string{{"layout/theme.liquid", goodLayout}, {"assets/../../evil.css", "x"}}),
		"/symlink.zip":  zipOf(t, [][2]string{{"layout/theme.liquid", goodLayout}, {"assets/passwd@", "/etc/passwd"}}),
		"/bomb.zip":     bombOf(t, 110<<20, "assets/a.css", "assets/b.css"),
		"/notzip.zip":   []byte("this is not a zip"),
		"/nolayout.zip": zipOf(t, [][2]string{{"templates/index.liquid", "x"}}),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow.zip" {
			select {
			case <-time.After(3 * time.Second):
			case <-r.Context().Done():
			}
			return
		}
		if b, ok := zips[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// Public asset files never run script on the service's origin: every
// answer of the public route (the file, its 304, a 404) carries the
// sandbox policy and nosniff, and documents a browser would render (HTML,
// SVG, XML) are attachments; a stylesheet or image is not.
func TestPublicAssetsCannotRunScript(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		files := map[string]string{
			"x.html": `<!DOCTYPE html><script>fetch("/admin/recurring_application_charges.json")</script>`,
			"x.htm":  `<script>alert(document.domain)</script>`,
			"x.svg":  `<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.domain)</script></svg>`,
			"x.xml":  `<x:script xmlns:x="http://www.w3.org/1999/xhtml">alert(document.domain)</x:script>`,
			"x.css":  `a{}`,
			"x.js":   `alert(1)`,
		}
		for name, value := range files {
			e.Do("PUT", assetsPath(theme.MainID), M{"asset": M{"key": "assets/" + name, "value": value}}).Expect(t, 200)
		}
		for name, value := range files {
			path := fmt.Sprintf("/web/themes/%d/assets/%s", theme.MainID, name)
			res := e.DoAs("", "GET", path, nil).Expect(t, 200)
			h := res.Header
			active := name != "x.css" && name != "x.js"
			if string(res.Body) != value || h.Get("Content-Security-Policy") != "sandbox" || h.Get("X-Content-Type-Options") != "nosniff" ||
				(h.Get("Content-Disposition") == "attachment") != active {
				t.Errorf("GET %s: %v", name, h)
			}
			req := httptest.NewRequest("GET", path, nil)
			req.Header.Set("If-None-Match", h.Get("ETag"))
			rec := httptest.NewRecorder()
			e.Handler.ServeHTTP(rec, req)
			if rec.Code != 304 || rec.Header().Get("Content-Security-Policy") != "sandbox" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("revalidate %s: %d %v", name, rec.Code, rec.Header())
			}
		}
		res := e.DoAs("", "GET", fmt.Sprintf("/web/themes/%d/assets/none.html", theme.MainID), nil).Expect(t, 404)
		if res.Header.Get("Content-Security-Policy") != "sandbox" || res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("404: %v", res.Header)
		}
	}, api.Themes)
}

// TestImportResumesAfterFaults: import attempts made while a third of the
// store's calls fail either fail, to be tried again, or finish; the
// attempt that finishes leaves the zip's files exactly once and the
// theme previewable in its role, as a clean import does.
func TestImportResumesAfterFaults(t *testing.T) {
	zip := zipOf(t, [][2]string{
		{"layout/theme.liquid", goodLayout},
		{"templates/index.liquid", "index"},
		{"assets/app.css", "body{}"},
		{"assets/app.js", "x()"},
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(zip) }))
	defer srv.Close()
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		// An import makes few store calls, so 30% faults miss all of them
		// now and then (0.7^8 is 6%): a theme is imported again until
		// some fault met its import.
		var id int64
		failed := 0
		for try := 1; ; try++ {
			id = themeID(t, e.Do("POST", "/web/themes.json", M{"theme": M{"name": "faulty", "src": srv.URL + "/t.zip", "role": "main"}}).Expect(t, 201))
			in := e.InjectFaults(0.3)
			in.Start()
			svc := themes.NewService(e.Deps)
			for attempt := 1; svc.Import(t.Context(), id) != nil; attempt++ {
				if attempt == 50 {
					t.Fatal("50 import attempts under faults and none finished")
				}
				failed++
			}
			in.Stop()
			if c := in.Counts(); c.Reads+c.Writes > 0 {
				break
			}
			if try == 10 {
				t.Fatal("ten imports met no fault")
			}
		}
		th := e.Do("GET", fmt.Sprintf("/web/themes/%d.json", id), nil).Expect(t, 200).Object(t, "theme")
		if th["processing"] != false || th["previewable"] != true || th["role"] != "main" || th["import_error"] != nil {
			t.Fatalf("after %d failed attempts: %v", failed, th)
		}
		var keys []string
		for _, a := range e.Do("GET", assetsPath(id), nil).Expect(t, 200).List(t, "assets") {
			keys = append(keys, a.(M)["key"].(string))
		}
		if strings.Join(keys, ",") != "assets/app.css,assets/app.js,layout/theme.liquid,templates/index.liquid" {
			t.Errorf("after %d failed attempts: assets %v", failed, keys)
		}
	}, api.Themes)
}
