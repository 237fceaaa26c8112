package themes_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/metrics"
	"github.com/storeadmin/adminapi/shared/metrics/metricstest"
	"github.com/storeadmin/adminapi/shared/themes"
)

// A finished import is counted as a metric line: done for a good zip,
// failed for a refused one.
func TestImportMetrics(t *testing.T) {
	good := zipOf(t, [][2]string{{"layout/theme.liquid", goodLayout}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/good.zip" {
			w.Write(good)
			return
		}
		w.Write([]byte("not a zip"))
	}))
	defer srv.Close()

	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rec := metricstest.Capture(t, e.Deps.Metrics)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		consumer := themes.NewService(e.Deps)
		go func() { consumer.ConsumeImports(ctx); close(done) }()
		defer func() { cancel(); <-done }()

		for _, path := range []string{"/good.zip", "/bad.zip"} {
			r := e.Do("POST", "/web/themes.json", M{"theme": M{"name": path, "src": srv.URL + path}}).Expect(t, 201)
			id := themeID(t, r)
			deadline := time.Now().Add(30 * time.Second)
			for e.Do("GET", fmt.Sprintf("/web/themes/%d.json", id), nil).Expect(t, 200).Object(t, "theme")["processing"] != false {
				if time.Now().After(deadline) {
					t.Fatalf("%s still processing", path)
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		// The job writes its metric line just after the theme stops
		// processing: wait for both lines.
		lines := rec.With(t, metrics.ThemeImportsDone)
		for deadline := time.Now().Add(30 * time.Second); len(lines) < 2 && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			lines = rec.With(t, metrics.ThemeImportsDone)
		}
		if got := metricstest.Sum(lines, metrics.ThemeImportsDone); got != 1 {
			t.Errorf("ThemeImportsDone %v, want 1", got)
		}
		if got := metricstest.Sum(lines, metrics.ThemeImportsFailed); got != 1 {
			t.Errorf("ThemeImportsFailed %v, want 1", got)
		}
	}, api.Themes)
}
