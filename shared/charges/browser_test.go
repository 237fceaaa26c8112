package charges_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/browsertest"
)

// The confirmation page in a real browser: the owner sees the app, plan,
// price, trial and test notice, clicks Accept on one charge and Decline on
// another, and lands on the app's return_url (another local server) with
// charge_id; the API then shows the charges accepted and declined.
// WRITE_SCREENSHOT=1 rewrites docs/charge-confirmation.png.
func TestConfirmationPageInBrowser(t *testing.T) {
	if _, err := os.Stat(browsertest.Path); err != nil {
		if os.Getenv("REQUIRE_EMULATORS") != "" {
			t.Fatalf("%s is missing (apt-get install chromium; infra/test.sh installs it): %v", browsertest.Path, err)
		}
		t.Skipf("%s is missing; set REQUIRE_EMULATORS=1 to fail instead", browsertest.Path)
	}
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		// The service's public base URL is the test server's (127.0.0.1),
		// known once it listens and set before it serves.
		srv := httptest.NewUnstartedServer(nil)
		e.Deps.BaseURL = "http://" + srv.Listener.Addr().String()
		srv.Config.Handler = api.Handler(&api.Deps{Deps: e.Deps}, api.Billing)
		srv.Start()
		defer srv.Close()
		var mu sync.Mutex
		var landed []string
		app := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/billing/done" {
				http.NotFound(w, r) // the browser's /favicon.ico
				return
			}
			mu.Lock()
			landed = append(landed, r.URL.RequestURI())
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprintf(w, `<!DOCTYPE html><title>Back</title><p id="back">Back at the app: %s</p>`, r.URL.Query().Get("charge_id"))
		}))
		defer app.Close()

		gold := createOverHTTP(t, srv.URL, map[string]any{"name": "Gold <Plan> & more", "price": "29.99", "trial_days": 14, "test": true,
			"return_url": app.URL + "/billing/done?shop=demo"})
		basic := createOverHTTP(t, srv.URL, map[string]any{"name": "Basic", "price": 5, "return_url": app.URL + "/billing/done"})
		if !strings.HasPrefix(gold["confirmation_url"].(string), srv.URL+"/") {
			t.Fatalf("confirmation_url %v is not on %s", gold["confirmation_url"], srv.URL)
		}

		ctx := browsertest.Start(t, chromedp.WindowSize(900, 700))

		confirmationPageShows(t, ctx, gold)

		acceptGoldDeclineBasic(t, ctx, gold, basic)

		// The decided page shows the status and no buttons.
		var status string
		if err := chromedp.Run(ctx,
			chromedp.Navigate(gold["confirmation_url"].(string)),
			chromedp.Text("#status", &status, chromedp.ByID),
		); err != nil {
			t.Fatal(err)
		}
		if status != "This charge is accepted." {
			t.Errorf("decided page: %q", status)
		}

		if s := statusOf(t, e, idOf(gold)); s != "accepted" {
			t.Errorf("gold is %s", s)
		}
		if s := statusOf(t, e, idOf(basic)); s != "declined" {
			t.Errorf("basic is %s", s)
		}
		mu.Lock()
		defer mu.Unlock()
		want := []string{fmt.Sprintf("/billing/done?shop=demo&charge_id=%d", idOf(gold)), fmt.Sprintf("/billing/done?charge_id=%d", idOf(basic))}
		if strings.Join(landed, " ") != strings.Join(want, " ") {
			t.Errorf("the app saw %v, want %v", landed, want)
		}
	}, api.Billing)
}

// createOverHTTP creates a charge through the listening server at base.
func createOverHTTP(t *testing.T, base string, fields map[string]any) map[string]any {
	b, _ := json.Marshal(map[string]any{"recurring_application_charge": fields})
	req, _ := http.NewRequest("POST", base+list, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Service-Access-Token", apitest.DemoToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != 201 {
		t.Fatalf("create: %d %s", res.StatusCode, body)
	}
	var out map[string]map[string]any
	json.Unmarshal(body, &out)
	return out["recurring_application_charge"]
}

// confirmationPageShows: the page shows what the owner agrees to, escaped
// (WRITE_SCREENSHOT=1 saves it).
func confirmationPageShows(t *testing.T, ctx context.Context, gold map[string]any) {
	t.Helper()
	var appName, plan, price, trial, notice, title string
	var shot []byte
	if err := chromedp.Run(ctx,
		chromedp.Navigate(gold["confirmation_url"].(string)),
		chromedp.WaitVisible("#accept", chromedp.ByID),
		chromedp.Title(&title),
		chromedp.Text("#app", &appName, chromedp.ByID),
		chromedp.Text("#plan", &plan, chromedp.ByID),
		chromedp.Text("#price", &price, chromedp.ByID),
		chromedp.Text("#trial", &trial, chromedp.ByID),
		chromedp.Text("#test-notice", &notice, chromedp.ByID),
		chromedp.FullScreenshot(&shot, 100), // 100: PNG,
	); err != nil {
		t.Fatal(err)
	}
	if appName != "Demo App" || plan != "Gold <Plan> & more" || price != "$29.99 USD every 30 days" || trial != "14 days" ||
		!strings.Contains(notice, "no card will be charged") || !strings.Contains(title, "Demo App") {
		t.Errorf("page shows app %q plan %q price %q trial %q notice %q title %q", appName, plan, price, trial, notice, title)
	}
	if os.Getenv("WRITE_SCREENSHOT") != "" && t.Name() == "TestConfirmationPageInBrowser/embedded" {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "charge-confirmation.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// acceptGoldDeclineBasic clicks Accept on gold and Decline on basic; each
// lands on its decorated return_url.
func acceptGoldDeclineBasic(t *testing.T, ctx context.Context, gold, basic map[string]any) {
	t.Helper()
	// Accept: 303 to the decorated return_url, followed by the browser.
	var back, loc string
	if err := chromedp.Run(ctx,
		chromedp.Click("#accept", chromedp.ByID),
		chromedp.WaitVisible("#back", chromedp.ByID),
		chromedp.Text("#back", &back, chromedp.ByID),
		chromedp.Location(&loc),
	); err != nil {
		t.Fatal(err)
	}
	if loc != gold["decorated_return_url"] || !strings.HasSuffix(back, fmt.Sprint(idOf(gold))) {
		t.Errorf("after Accept at %q showing %q, want %v", loc, back, gold["decorated_return_url"])
	}

	// Decline the other; no test notice on a live charge.
	var notices []byte
	if err := chromedp.Run(ctx,
		chromedp.Navigate(basic["confirmation_url"].(string)),
		chromedp.WaitVisible("#decline", chromedp.ByID),
		chromedp.Evaluate(`JSON.stringify(document.querySelectorAll("#test-notice").length)`, &notices),
		chromedp.Click("#decline", chromedp.ByID),
		chromedp.WaitVisible("#back", chromedp.ByID),
		chromedp.Location(&loc),
	); err != nil {
		t.Fatal(err)
	}
	if loc != basic["decorated_return_url"] {
		t.Errorf("after Decline at %q, want %v", loc, basic["decorated_return_url"])
	}
	if string(notices) != `"0"` {
		t.Errorf("test notices on a live charge: %s", notices)
	}
}

func statusOf(t *testing.T, e *apitest.Env, id int64) string { return status(t, e, id) }
