package api_test

// Lists that cost the page, not the shop: the requests of issue #11's
// table, over a shop of many pages and events, each read through the
// handler on a store that counts the items its reads return (what DynamoDB
// would bill). The test runs them at a few hundred records on both stores;
// the benchmark at a million on the embedded store, from a fixture built
// once through the pages operations (not HTTP) and cached under .cache/:
//
//	go test -run '^$' -bench ListsAtScale -benchtime 200x ./shared/api/
//	LIST_SCALE=20000 go test ...   (a smaller shop)

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
)

// scaleStart is the first page's created_at; page i is created i seconds later.
var scaleStart = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// fillShop creates n pages through the pages operations: page i titled
// "Title <i mod 1000>", with handle p-<i>, published when i is even,
// created at scaleStart + i s; every 100th unpublished page is then
// published. That also logs n Page create events and n/200 published ones.
// Writers run concurrently: many share the embedded store's group commits,
// and a few keep DynamoDB Local (one SQLite lock) from timing out.
func fillShop(tb testing.TB, d *platform.Deps, n, writers int) {
	ctx := context.Background()
	app, err := auth.NewIdentity(d.Store, d.Clock).AppByToken(ctx, apitest.DemoToken)
	if err != nil {
		tb.Fatal(err)
	}
	shop, err := auth.NewIdentity(d.Store, d.Clock).Shop(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	ctx = admin.WithShop(admin.WithApp(ctx, app), shop)
	var clock atomic.Int64
	d.IDs = ids.NewClock(func() time.Time { return scaleStart.Add(time.Duration(clock.Load()) * time.Second) })
	svc := pages.NewService(d)
	var next atomic.Int64
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	for range writers {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				clock.Store(int64(i))
				title, handle, body := "Title "+strconv.Itoa(i%1000), "p-"+strconv.Itoa(i), "<p>Page "+strconv.Itoa(i)+"</p>"
				published := i%2 == 0
				p, err := svc.Create(ctx, &pages.Input{Title: &title, Handle: &handle, BodyHTML: &body, Published: &published})
				if err == nil && i%200 == 1 {
					yes := true
					_, err = svc.Update(ctx, p.ID, &pages.Input{Published: &yes})
				}
				if err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		tb.Fatal(firstErr)
	}
}

// listCase is one request of the table and the most items it may read.
type listCase struct {
	name, path string
	maxItems   int
}

// listCases are issue #11's table and a few more: every single filter
// reads at most limit+1 items (+1 for the token's read is not counted: Gets
// are not Queries), a deep page its offset more, a count its counter's
// shards or its matching keys.
func listCases(n int) []listCase {
	mid := url.QueryEscape(scaleStart.Add(time.Duration(n-20) * time.Second).Format(time.RFC3339))
	return []listCase{
		{"pages limit=50", "/web/pages.json?limit=50", 51},
		{"pages title=nomatch", "/web/pages.json?title=nomatch", 51},
		{"pages title=Title 7", "/web/pages.json?title=Title%207", 51},
		{"pages created_at_min=2030", "/web/pages.json?created_at_min=2030-01-01", 51},
		{"pages created_at_min=last 20 s", "/web/pages.json?created_at_min=" + mid, 51},
		{"pages updated_at_min=last 20 s", "/web/pages.json?updated_at_min=" + mid, 51},
		{"pages published_at_min=last 20 s", "/web/pages.json?published_at_min=" + mid, 51},
		{"pages unpublished page=4", "/web/pages.json?published_status=unpublished&page=4", 3*50 + 51},
		{"pages count published", "/web/pages/count.json?published_status=published", 8},
		{"pages count title=Title 7", "/web/pages/count.json?title=Title%207", 8},
		{"events Page published", "/com/events.json?filter=Page&verb=published", 51},
		{"events verb=create", "/com/events.json?verb=create", 51},
		{"events created_at_min=2030", "/com/events.json?created_at_min=2030-01-01", 51},
		{"pages limit=250 page=3", "/web/pages.json?limit=250&page=3", 2*250 + 251},
		// The table's deep offsets: bounded (at most 25,000 skipped), but an
		// offset is read past item by item; page_info pages cost their own.
		{"pages unpublished page=200", "/web/pages.json?published_status=unpublished&page=200", 199*50 + 51},
		{"pages limit=250 page=80", "/web/pages.json?limit=250&page=80", 79*250 + 251},
	}
}

// TestListsReadOnlyThePage checks the items each request of the table reads
// in a shop of 300 pages (and 300 events) on both stores: a request that
// read its partition would read 300.
func TestListsReadOnlyThePage(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			e := apitest.New(t, s.Open(t), api.Groups...)
			rc := e.Reads
			const n = 300
			writers := 32
			if s.Name != "embedded" {
				writers = 4
			}
			fillShop(t, e.Deps, n, writers)
			for _, c := range listCases(n) {
				rc.Reset()
				r := e.Do("GET", c.path, nil).Expect(t, http.StatusOK)
				if got := rc.Reset(); got > int64(c.maxItems) {
					t.Errorf("%s: read %d items, want at most %d", c.name, got, c.maxItems)
				}
				if next := r.Link("next"); next != "" {
					rc.Reset()
					e.Do("GET", next, nil).Expect(t, http.StatusOK)
					if got := rc.Reset(); got > 251 {
						t.Errorf("%s, next page: read %d items", c.name, got)
					}
				}
			}
			// The answers are right, not only cheap.
			for path, want := range map[string]int{
				"/web/pages/count.json":                                            n,
				"/web/pages/count.json?published_status=published":                 n/2 + (n+198)/200,
				"/web/pages/count.json?title=Title%207":                            1,
				"/web/pages/count.json?created_at_min=2030-01-01":                  0,
				"/com/events/count.json?created_at_max=2024-12-31":                 0,
				"/web/pages/count.json?updated_at_min=2024-12-31":                  n,
				"/web/pages/count.json?published_status=unpublished":               n/2 - (n+198)/200,
				"/web/pages/count.json?title=Title%207&published_status=published": 0,
			} {
				if got := e.Do("GET", path, nil).Expect(t, http.StatusOK).JSON(t)["count"]; got != float64(want) {
					t.Errorf("GET %s: %v, want %d", path, got, want)
				}
			}
		})
	}
}

// BenchmarkListsAtScale times the table's requests in a shop of LIST_SCALE
// pages (a million by default) and a million-odd events, and reports the
// items each read (items/op) and its median latency (p50-ms).
func BenchmarkListsAtScale(b *testing.B) {
	n := 1_000_000
	if s := os.Getenv("LIST_SCALE"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	dir := filepath.Join("..", "..", ".cache", fmt.Sprintf("lists-%d", n))
	if _, err := os.Stat(filepath.Join(dir, "complete")); err != nil {
		b.Logf("building the %d-page fixture in %s (once)", n, dir)
		start := time.Now()
		os.RemoveAll(dir)
		st, err := boltstore.Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		e := apitest.New(b, st, api.Pages)
		fillShop(b, e.Deps, n, 32)
		st.Close()
		if err := os.WriteFile(filepath.Join(dir, "complete"), nil, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Logf("fixture built in %s", time.Since(start).Round(time.Second))
	}
	st, err := boltstore.Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	e := apitest.New(b, st, api.Groups...)
	rc := e.Reads
	for _, c := range listCases(n) {
		b.Run(c.name, func(b *testing.B) {
			req := request("GET", c.path, nil)
			w := newSink()
			var lat []time.Duration
			rc.Reset()
			b.ReportAllocs()
			for b.Loop() {
				w.reset()
				start := time.Now()
				e.Handler.ServeHTTP(w, req)
				lat = append(lat, time.Since(start))
				if w.code != http.StatusOK {
					b.Fatalf("GET %s: %d", c.path, w.code)
				}
			}
			slices.Sort(lat)
			read := rc.Reset()
			b.ReportMetric(float64(read)/float64(len(lat)), "items/op")
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			if per := read / int64(len(lat)); per > int64(c.maxItems) {
				b.Errorf("%s read %d items per request, want at most %d", c.name, per, c.maxItems)
			}
		})
	}
}
