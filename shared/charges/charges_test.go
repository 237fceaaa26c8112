package charges_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/charges"
)

type M = map[string]any

const list = "/admin/recurring_application_charges.json"

func one(id int64) string { return fmt.Sprintf("/admin/recurring_application_charges/%d.json", id) }
func activate(id int64) string {
	return fmt.Sprintf("/admin/recurring_application_charges/%d/activate.json", id)
}

func create(t *testing.T, e *apitest.Env, token string, fields M) M {
	t.Helper()
	in := M{"name": "Super Duper Plan", "price": 10, "return_url": "http://super-duper.example.com/back"}
	for k, v := range fields {
		in[k] = v
	}
	return e.DoAs(token, "POST", list, M{"recurring_application_charge": in}).Expect(t, http.StatusCreated).
		Object(t, "recurring_application_charge")
}

func idOf(c M) int64 { return int64(c["id"].(float64)) }

// page fetches a charge's confirmation page (no token) and returns its body.
func page(t *testing.T, e *apitest.Env, c M) (string, *httptest.ResponseRecorder) {
	t.Helper()
	u, err := url.Parse(c["confirmation_url"].(string))
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, httptest.NewRequest("GET", u.Path, nil))
	return u.Path, rec
}

var (
	tokenRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	tokens  sync.Map // confirmation path -> form token, as first shown
)

// decide posts the page's form (accept or decline) with the given token
// ("" takes the page's).
func decide(t *testing.T, e *apitest.Env, c M, action, token string) *httptest.ResponseRecorder {
	t.Helper()
	path, rec := page(t, e, c)
	if m := tokenRE.FindStringSubmatch(rec.Body.String()); m != nil {
		tokens.Store(path, m[1])
	}
	if token == "" {
		v, ok := tokens.Load(path)
		if !ok {
			t.Fatalf("page has no form token: %s", rec.Body)
		}
		token = v.(string)
	}
	req := httptest.NewRequest("POST", path+"/"+action, strings.NewReader(url.Values{"csrf_token": {token}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	out := httptest.NewRecorder()
	e.Handler.ServeHTTP(out, req)
	return out
}

// flip changes the secret's last character.
func flip(path string) string {
	last := "A"
	if strings.HasSuffix(path, "A") {
		last = "B"
	}
	return path[:len(path)-1] + last
}

func status(t *testing.T, e *apitest.Env, id int64) string {
	t.Helper()
	return e.Do("GET", one(id), nil).Expect(t, 200).Object(t, "recurring_application_charge")["status"].(string)
}

func TestCharges(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("validation", func(t *testing.T) { chargeValidation(t, e) })
		t.Run("create", func(t *testing.T) {
			c := create(t, e, apitest.DemoToken, M{"price": "10000.00", "return_url": "https://app.example.com/back?shop=demo&x=a%20b#frag", "test": true, "trial_days": 7})
			id := idOf(c)
			want := M{"status": "pending", "price": "10000.00", "api_client_id": float64(1001), "test": true, "trial_days": float64(7),
				"decorated_return_url": fmt.Sprintf("https://app.example.com/back?shop=demo&x=a%%20b&charge_id=%d#frag", id),
				"billing_on":           nil, "activated_on": nil, "cancelled_on": nil, "trial_ends_on": nil}
			for k, v := range want {
				if c[k] != v {
					t.Errorf("%s = %v, want %v", k, c[k], v)
				}
			}
			cu, _ := c["confirmation_url"].(string)
			if !regexp.MustCompile(fmt.Sprintf(`^%s/admin/recurring_application_charges/%d/confirm/[A-Za-z0-9_-]{43}$`, regexp.QuoteMeta(apitest.BaseURL), id)).MatchString(cu) {
				t.Errorf("confirmation_url %q", cu)
			}
			if _, ok := c["secret"]; ok {
				t.Errorf("the secret is shown: %v", c)
			}
			c2 := create(t, e, apitest.DemoToken, M{"price": 1.5})
			if c2["price"] != "1.50" || c2["test"] != nil || c2["trial_days"] != float64(0) ||
				c2["decorated_return_url"] != fmt.Sprintf("http://super-duper.example.com/back?charge_id=%d", idOf(c2)) {
				t.Errorf("defaults: %v", c2)
			}
		})
		t.Run("page, accept, activate, cancel", func(t *testing.T) { chargeLifecycle(t, e) })
		t.Run("app scoped list", func(t *testing.T) {
			mine := create(t, e, apitest.DemoToken, nil)
			theirs := create(t, e, apitest.ReadOnlyToken, M{"name": "Theirs"})
			e.DoAs(apitest.ReadOnlyToken, "GET", one(idOf(mine)), nil).Expect(t, 404)
			e.DoAs(apitest.ReadOnlyToken, "DELETE", one(idOf(mine)), nil).Expect(t, 404)
			e.DoAs(apitest.ReadOnlyToken, "POST", activate(idOf(mine)), nil).Expect(t, 404)
			e.Do("GET", one(idOf(theirs)), nil).Expect(t, 404)
			items := e.DoAs(apitest.ReadOnlyToken, "GET", list, nil).Expect(t, 200).List(t, "recurring_application_charges")
			if len(items) != 1 || items[0].(M)["name"] != "Theirs" {
				t.Errorf("other app's list: %v", items)
			}
			all := e.Do("GET", list, nil).Expect(t, 200).List(t, "recurring_application_charges")
			since := e.Do("GET", fmt.Sprintf("%s?since_id=%d&fields=id,status", list, idOf(all[0].(M))), nil).Expect(t, 200).List(t, "recurring_application_charges")
			if len(since) != len(all)-1 || len(since[0].(M)) != 2 {
				t.Errorf("since_id/fields: %d of %d: %v", len(since), len(all), since)
			}
			if f := e.Do("GET", one(idOf(mine))+"?fields=name", nil).Expect(t, 200).Object(t, "recurring_application_charge"); len(f) != 1 {
				t.Errorf("fields: %v", f)
			}
		})
	}, api.Billing)
}

func chargeValidation(t *testing.T, e *apitest.Env) {
	cases := []struct {
		in   M
		want string
	}{
		{M{}, `{"errors":{"name":["can't be blank"],"price":["can't be blank"],"return_url":["can't be blank"]}}`},
		{M{"name": " ", "price": 0, "return_url": "http://x.example.com"}, `{"errors":{"name":["can't be blank"],"price":["must be greater than zero"]}}`},
		{M{"name": "P", "price": "-1", "return_url": "ftp://x.example.com"}, `{"errors":{"price":["must be greater than zero"],"return_url":["must be an absolute http or https URL"]}}`},
		{M{"name": "P", "price": "1.005", "return_url": "/relative"}, `{"errors":{"price":["must have at most two decimal places"],"return_url":["must be an absolute http or https URL"]}}`},
		{M{"name": "P", "price": "10000.01", "return_url": "https://x.example.com"}, `{"errors":{"price":["must be less than or equal to 10000.00"]}}`},
		{M{"name": "P", "price": "abc", "return_url": "https://x.example.com", "test": false}, `{"errors":{"price":["is not a number"],"test":["must be true or null"]}}`},
		{M{"name": "P", "price": 1, "return_url": "https://x.example.com", "trial_days": -1}, `{"errors":{"trial_days":["must be an integer between 0 and 1000"]}}`},
	}
	for _, c := range cases {
		res := e.Do("POST", list, M{"recurring_application_charge": c.in}).Expect(t, 422)
		if got := strings.TrimSpace(string(res.Body)); got != c.want {
			t.Errorf("%v: got %s, want %s", c.in, got, c.want)
		}
	}
	e.Do("POST", list, M{"recurring_application_charge": M{"name": "P", "price": true, "return_url": "https://x.example.com"}}).Expect(t, 422)
}

func chargeLifecycle(t *testing.T, e *apitest.Env) {
	c := create(t, e, apitest.DemoToken, M{"name": `<b>Gold</b> & "more"`, "test": true, "trial_days": 3, "price": "19.99"})
	id := idOf(c)
	chargePageIsSafe(t, e, c, id)
	// Without a valid form token nothing happens.
	if r := decide(t, e, c, "accept", "forged"); r.Code != 403 {
		t.Fatalf("forged token: %d %s", r.Code, r.Body)
	}
	e.Do("POST", activate(id), nil).Expect(t, 422)
	if got := string(e.Do("POST", activate(id), nil).Body); !strings.Contains(got, `"status":["is pending; only an accepted charge can be activated"]`) {
		t.Errorf("activate pending: %s", got)
	}
	r := decide(t, e, c, "accept", "")
	if r.Code != http.StatusSeeOther || r.Header().Get("Location") != c["decorated_return_url"] {
		t.Fatalf("accept: %d %v", r.Code, r.Header())
	}
	got := e.Do("GET", one(id), nil).Expect(t, 200).Object(t, "recurring_application_charge")
	if got["status"] != "accepted" || got["billing_on"] == nil || got["confirmation_url"] != nil {
		t.Fatalf("after accept: %v", got)
	}
	// Accepting again sends the owner back again; declining now shows the status.
	if r := decide(t, e, c, "accept", ""); r.Code != http.StatusSeeOther {
		t.Errorf("second accept: %d", r.Code)
	}
	if r := decide(t, e, c, "decline", ""); r.Code != http.StatusConflict || !strings.Contains(r.Body.String(), "This charge is accepted.") {
		t.Errorf("decline after accept: %d %s", r.Code, r.Body)
	}
	act := e.Do("POST", activate(id), M{"recurring_application_charge": got}).Expect(t, 200).Object(t, "recurring_application_charge")
	if act["status"] != "active" || act["activated_on"] == nil || act["trial_ends_on"] == nil || act["billing_on"] != act["trial_ends_on"] {
		t.Fatalf("activate: %v", act)
	}
	if body := string(e.Do("POST", activate(id), nil).Expect(t, 422).Body); !strings.Contains(body, "is active") {
		t.Errorf("activate twice: %s", body)
	}
	// A second activated charge replaces the first.
	c2 := create(t, e, apitest.DemoToken, nil)
	decide(t, e, c2, "accept", "")
	e.Do("POST", activate(idOf(c2)), nil).Expect(t, 200)
	if s := status(t, e, id); s != "cancelled" {
		t.Errorf("first charge %s after the second's activation", s)
	}
	if got := e.Do("DELETE", one(idOf(c2)), nil).Expect(t, 200); strings.TrimSpace(string(got.Body)) != "{}" {
		t.Errorf("cancel: %s", got.Body)
	}
	done := e.Do("GET", one(idOf(c2)), nil).Expect(t, 200).Object(t, "recurring_application_charge")
	if done["status"] != "cancelled" || done["cancelled_on"] == nil {
		t.Errorf("after cancel: %v", done)
	}
	if body := string(e.Do("POST", activate(idOf(c2)), nil).Expect(t, 422).Body); !strings.Contains(body, "is cancelled") {
		t.Errorf("activate cancelled: %s", body)
	}
	e.Do("DELETE", one(idOf(c2)), nil).Expect(t, 422)
	// Declined.
	c3 := create(t, e, apitest.DemoToken, nil)
	if r := decide(t, e, c3, "decline", ""); r.Code != http.StatusSeeOther {
		t.Fatalf("decline: %d", r.Code)
	}
	if body := string(e.Do("POST", activate(idOf(c3)), nil).Expect(t, 422).Body); !strings.Contains(body, "is declined") {
		t.Errorf("activate declined: %s", body)
	}
	if _, rec := page(t, e, c3); !strings.Contains(rec.Body.String(), "This charge is declined.") || strings.Contains(rec.Body.String(), `id="accept"`) {
		t.Errorf("declined page: %s", rec.Body)
	}
}

// chargePageIsSafe: the confirmation page shows the charge escaped, with strict headers, and only at its own secret path.
func chargePageIsSafe(t *testing.T, e *apitest.Env, c M, id int64) {
	t.Helper()
	path, rec := page(t, e, c)
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %v", rec.Code, rec.Header())
	}
	body := rec.Body.String()
	for _, s := range []string{"Demo App", "&lt;b&gt;Gold&lt;/b&gt; &amp; &#34;more&#34;", "$19.99 USD every 30 days", "3 days", "test charge", `id="accept"`, `id="decline"`} {
		if !strings.Contains(body, s) {
			t.Errorf("page lacks %q:\n%s", s, body)
		}
	}
	if strings.Contains(body, "<b>Gold") || strings.Contains(body, "<script") {
		t.Errorf("page is not escaped or has a script:\n%s", body)
	}
	h := rec.Header()
	if h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") ||
		!strings.Contains(h.Get("Content-Security-Policy"), "form-action 'self' http://super-duper.example.com") ||
		h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Service-Shop-Api-Call-Limit") != "" {
		t.Errorf("page headers: %v", h)
	}
	// A wrong secret, or a right one of another id, is 404; so is the page as .json with a token.
	for _, p := range []string{flip(path), strings.Replace(path, fmt.Sprint(id), fmt.Sprint(id+1), 1), path + "/"} {
		r := httptest.NewRecorder()
		e.Handler.ServeHTTP(r, httptest.NewRequest("GET", p, nil))
		if r.Code != 404 {
			t.Errorf("GET %s: %d", p, r.Code)
		}
	}
	e.Do("GET", path+".json", nil).Expect(t, 404)
}

// Concurrent activations of one app's accepted charges: every one succeeds
// in turn, and exactly one charge ends up active.
func TestConcurrentActivations(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const n = 6
		var ids []int64
		for range n {
			c := create(t, e, apitest.DemoToken, nil)
			if r := decide(t, e, c, "accept", ""); r.Code != http.StatusSeeOther {
				t.Fatalf("accept: %d", r.Code)
			}
			ids = append(ids, idOf(c))
		}
		var wg sync.WaitGroup
		codes := make([]int, n)
		for i, id := range ids {
			wg.Go(func() { codes[i] = e.Do("POST", activate(id), nil).Status })
		}
		wg.Wait()
		activeCount := 0
		for i, id := range ids {
			if codes[i] != 200 {
				t.Errorf("activation %d: %d", id, codes[i])
			}
			switch s := status(t, e, id); s {
			case "active":
				activeCount++
			case "cancelled":
			default:
				t.Errorf("charge %d is %s", id, s)
			}
		}
		if activeCount != 1 {
			t.Errorf("%d active charges, want 1", activeCount)
		}
	}, api.Billing)
}

// Uninstalling an app cancels its active charge.
func TestUninstallCancelsActiveCharge(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		c := create(t, e, apitest.ReadOnlyToken, nil)
		decide(t, e, c, "accept", "")
		e.DoAs(apitest.ReadOnlyToken, "POST", activate(idOf(c)), nil).Expect(t, 200)
		other := create(t, e, apitest.DemoToken, nil)
		decide(t, e, other, "accept", "")
		e.Do("POST", activate(idOf(other)), nil).Expect(t, 200)
		e.DoAs(apitest.ReadOnlyToken, "DELETE", "/admin/api_permissions/current.json", nil).Expect(t, 200)
		e.DoAs(apitest.ReadOnlyToken, "GET", list, nil).Expect(t, 401)
		_, rec := page(t, e, c)
		if !strings.Contains(rec.Body.String(), "This charge is cancelled.") {
			t.Errorf("after uninstall the page shows: %s", rec.Body)
		}
		if s := status(t, e, idOf(other)); s != "active" {
			t.Errorf("another app's charge is %s", s)
		}
	}, api.Billing, api.Webhooks)
}

// A return_url is what the document's httpURL pattern accepts: non-ASCII
// text percent-encoded (a Location header is ASCII), which the 303 that
// sends the owner back keeps as given; the raw characters are 422.
func TestNonASCIIReturnURL(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, u := range []string{"https://bücher.example/", "https://x.example/zurück", "https://*/", "https://a..b.example/",
			"https://-bad-.example/", "https://x.example:65536/", "https://x.example:99999/"} {
			body := e.Do("POST", list, M{"recurring_application_charge": M{"name": "P", "price": "1.00", "return_url": u}}).
				Expect(t, 422).Body
			if !strings.Contains(string(body), `"return_url"`) {
				t.Errorf("%s: %s", u, body)
			}
		}
		encoded := "https://xn--bcher-kva.example/zur%C3%BCck?q=gr%C3%BC%C3%9Fe#%C3%9F"
		for _, action := range []string{"accept", "decline"} {
			c := create(t, e, apitest.DemoToken, M{"return_url": encoded})
			if c["return_url"] != encoded {
				t.Errorf("return_url %v", c["return_url"])
			}
			r := decide(t, e, c, action, "")
			want := fmt.Sprintf("https://xn--bcher-kva.example/zur%%C3%%BCck?q=gr%%C3%%BC%%C3%%9Fe&charge_id=%d#%%C3%%9F", idOf(c))
			if r.Code != http.StatusSeeOther || r.Header().Get("Location") != want {
				t.Errorf("%s: %d Location %q, want %q", action, r.Code, r.Header().Get("Location"), want)
			}
		}
	}, api.Billing)
}

// A charge left pending reads expired once 48 hours have passed on the
// service's clock, end to end and on both stores: its page says so and
// offers no decision, and activating it is refused. The clock is stepped, not
// waited for.
func TestPendingChargeExpiresOnTheServiceClock(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		clk := e.FixClock(time.Now())
		c := create(t, e, apitest.DemoToken, nil)
		clk.Advance(charges.ExpiresAfter - time.Second)
		if s := status(t, e, idOf(c)); s != charges.StatusPending {
			t.Fatalf("a second before 48 hours: %s", s)
		}
		clk.Advance(time.Second)
		if s := status(t, e, idOf(c)); s != charges.StatusExpired {
			t.Fatalf("after 48 hours: %s, want expired", s)
		}
		if got := e.Do("GET", list, nil).Expect(t, 200).List(t, "recurring_application_charges"); len(got) == 0 || got[0].(map[string]any)["status"] != charges.StatusExpired {
			t.Fatalf("the list shows %v", got)
		}
		if _, rec := page(t, e, c); !strings.Contains(rec.Body.String(), "expired") || tokenRE.MatchString(rec.Body.String()) {
			t.Fatalf("the page of an expired charge still offers a decision: %s", rec.Body)
		}
		e.Do("POST", activate(idOf(c)), M{}).Expect(t, 422)
	}, api.Billing)
}
