package api_test

import (
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/oauth"
)

// billing: recurring application charges, and their confirmation page
// (HTML, no token) with its two form actions.
func (s *scenario) billing(t *testing.T) {
	s.t = t
	const list = "/admin/recurring_application_charges.json"
	one := func(id int64) string { return fmt.Sprintf("/admin/recurring_application_charges/%d.json", id) }
	activate := func(id int64) string { return fmt.Sprintf("/admin/recurring_application_charges/%d/activate.json", id) }
	valid := M{"name": "Super Duper Plan", "price": 10.0, "return_url": "http://super-duper.example.com/back?x=1", "trial_days": 7, "test": true}

	r := s.do(demoToken, "POST", list, M{"recurring_application_charge": valid}, 201)
	c1 := s.id(r, "recurring_application_charge")
	confirm := r.Object(t, "recurring_application_charge")["confirmation_url"].(string)
	u, _ := url.Parse(confirm)
	pagePath := u.Path
	c2 := s.id(s.do(demoToken, "POST", list, M{"recurring_application_charge": M{"name": "Basic", "price": "4.99", "return_url": "https://app.example.com/"}}, 201), "recurring_application_charge")
	s.wantFields(s.do(demoToken, "POST", list, M{"recurring_application_charge": M{"price": 0}}, 422), "name", "price", "return_url")
	s.do(demoToken, "POST", list, `{"recurring_application_charge": `, 400)
	s.do(demoToken, "POST", list, `{"recurring_application_charge": {"name": "`+strings.Repeat("x", 1<<20)+`"}}`, 413)
	s.do("", "POST", list, M{"recurring_application_charge": valid}, 401)

	s.wantLen(s.do(demoToken, "GET", list, nil, 200), "recurring_application_charges", 2)
	s.wantLen(s.do(demoToken, "GET", list+"?since_id="+strconv.FormatInt(c1, 10)+"&fields=id,status", nil, 200), "recurring_application_charges", 1)
	s.wantLen(s.do(readOnlyTokenForBilling, "GET", list, nil, 200), "recurring_application_charges", 0)
	s.do(demoToken, "GET", list+"?since_id=abc", nil, 400)
	s.do("", "GET", list, nil, 401)
	s.do(demoToken, "GET", one(c1), nil, 200)
	s.do(demoToken, "GET", one(c1)+"?fields=name", nil, 200)
	s.do(readOnlyTokenForBilling, "GET", one(c1), nil, 404)
	s.do("", "GET", one(c1), nil, 401)

	// The page and its forms.
	page := s.doPage("GET", pagePath, "", 200)
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(string(page.Body))
	if m == nil {
		t.Fatalf("page has no form: %s", page.Body)
	}
	form := "csrf_token=" + url.QueryEscape(m[1])
	s.doPage("GET", pagePath[:strings.LastIndex(pagePath, "/")]+"/wrong", "", 404)
	s.do(demoToken, "POST", activate(c1), M{"recurring_application_charge": M{"id": c1}}, 422)
	s.doPage("POST", pagePath+"/accept", "csrf_token=forged", 403)
	s.doPage("POST", pagePath+"/accept", "csrf_token=%zz", 400)
	s.doPage("POST", pagePath+"/accept", "csrf_token="+strings.Repeat("x", 9000), 413)
	s.doPage("POST", pagePath[:strings.LastIndex(pagePath, "/")]+"/wrong/accept", form, 404)
	if res := s.doPage("POST", pagePath+"/accept", form, 303); res.Header.Get("Location") != fmt.Sprintf("http://super-duper.example.com/back?x=1&charge_id=%d", c1) {
		t.Errorf("accept: Location %q", res.Header.Get("Location"))
	}
	s.doPage("POST", pagePath+"/decline", form, 409)
	s.doPage("POST", pagePath+"/decline", "csrf_token=forged", 403)
	s.doPage("POST", pagePath+"/decline", "csrf_token=%zz", 400)
	s.doPage("POST", pagePath+"/decline", "csrf_token="+strings.Repeat("x", 9000), 413)
	s.doPage("POST", pagePath[:strings.LastIndex(pagePath, "/")]+"/wrong/decline", form, 404)
	s.do(demoToken, "POST", activate(c1), nil, 200)
	s.do(demoToken, "POST", activate(c1), nil, 422)
	s.do(demoToken, "POST", activate(1), nil, 404)
	s.do("", "POST", activate(c1), nil, 401)
	// The second charge, declined on its page.
	r2 := s.do(demoToken, "GET", one(c2), nil, 200)
	u2, _ := url.Parse(r2.Object(t, "recurring_application_charge")["confirmation_url"].(string))
	page2 := s.doPage("GET", u2.Path, "", 200)
	m2 := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(string(page2.Body))
	s.doPage("POST", u2.Path+"/decline", "csrf_token="+url.QueryEscape(m2[1]), 303)
	s.doPage("POST", u2.Path+"/accept", "csrf_token="+url.QueryEscape(m2[1]), 409)

	s.do(demoToken, "DELETE", one(c2), nil, 422) // declined
	s.do(demoToken, "DELETE", one(c1), nil, 200)
	s.do(demoToken, "DELETE", one(1), nil, 404)
	s.do("", "DELETE", one(c1), nil, 401)
}

// oauth: an app of the seed installs through the authorization page, its
// forms and the token exchange; then its token's scopes.
func (s *scenario) oauth(t *testing.T) {
	s.t = t
	const authorize, install, decline, exchange = "/admin/oauth/authorize", "/admin/oauth/authorize/install", "/admin/oauth/authorize/decline", "/admin/oauth/access_token"
	ask := url.Values{"client_id": {"install-demo-api-key"}, "scope": {"read_content,write_script_tags"},
		"redirect_uri": {"http://localhost:3000/auth/callback"}, "state": {"s1"}}
	page := s.doPage("GET", authorize+"?"+ask.Encode(), "", 200)
	m := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(string(page.Body))
	if m == nil {
		t.Fatalf("page has no form: %s", page.Body)
	}
	bad := url.Values{"client_id": {"nobody"}}
	s.doPage("GET", authorize+"?"+bad.Encode(), "", 400)
	form := url.Values{"csrf_token": {m[1]}}
	for k, v := range ask {
		form[k] = v
	}
	s.doPage("POST", install, bad.Encode(), 400)
	s.doPage("POST", decline, bad.Encode(), 400)
	forged := ask.Encode() + "&csrf_token=forged"
	s.doPage("POST", install, forged, 403)
	s.doPage("POST", decline, forged, 403)
	s.doPage("POST", install, "csrf_token="+strings.Repeat("x", oauth.MaxBody), 413)
	s.doPage("POST", decline, "csrf_token="+strings.Repeat("x", oauth.MaxBody), 413)
	s.doPage("POST", decline, form.Encode(), 200)
	res := s.doPage("POST", install, form.Encode(), 302)
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("install: Location %q", res.Header.Get("Location"))
	}
	code := loc.Query().Get("code")
	creds := M{"client_id": "install-demo-api-key", "client_secret": "install-demo-shared-secret", "code": code}
	s.do(noToken, "POST", exchange, M{"client_id": "install-demo-api-key", "client_secret": "wrong", "code": code}, 400)
	s.do(noToken, "POST", exchange, M{"client_id": "install-demo-api-key", "code": 5}, 422)
	s.do(noToken, "POST", exchange, `{"client_id": "install-demo-api-key", "code": "`+strings.Repeat("x", oauth.MaxBody)+`"}`, 413)
	tok := s.do(noToken, "POST", exchange, creds, 200).JSON(t)
	s.do(noToken, "POST", exchange, creds, 400)
	token, _ := tok["access_token"].(string)
	if tok["scope"] != "read_content,write_script_tags" || token == "" {
		t.Errorf("token answer %v", tok)
	}
	s.do(token, "GET", "/admin/oauth/access_scopes.json", nil, 200)
	// Installed, asking for what it holds: straight back, no page.
	loc2, _ := url.Parse(s.doPage("GET", authorize+"?"+ask.Encode(), "", 302).Header.Get("Location"))
	if loc2 == nil || loc2.Query().Get("code") == "" {
		t.Fatalf("re-authorization: Location %v", loc2)
	}
	// An expiring offline token, its refresh, and the refresh grant's
	// errors in OAuth's shape.
	expiring := s.do(noToken, "POST", exchange, M{"client_id": "install-demo-api-key", "client_secret": "install-demo-shared-secret",
		"code": loc2.Query().Get("code"), "expiring": "1"}, 200).JSON(t)
	refresh := M{"client_id": "install-demo-api-key", "client_secret": "install-demo-shared-secret", "grant_type": "refresh_token",
		"refresh_token": expiring["refresh_token"]}
	s.do(noToken, "POST", exchange, refresh, 200)
	refresh["client_secret"] = "wrong"
	s.do(noToken, "POST", exchange, refresh, 401)
	s.do(noToken, "POST", exchange, M{"client_id": "install-demo-api-key", "client_secret": "install-demo-shared-secret", "grant_type": "refresh_token",
		"refresh_token": "shprt_unknown"}, 400)
	s.do(demoToken, "GET", "/admin/oauth/access_scopes.json?limit=x&fields=", nil, 400)
	s.do(noToken, "GET", "/admin/oauth/access_scopes.json", nil, 401)
}

// readOnlyTokenForBilling is an app with no charges.
const readOnlyTokenForBilling = apitest.ReadOnlyToken

// doPage sends a token-less request to a page route (a form body when body
// is not empty) and checks the answer against the document: HTML for the
// page, a Location for the redirect, the documented JSON for errors.
func (s *scenario) doPage(method, target, body string, want int) *apitest.Response {
	s.t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	rec := httptest.NewRecorder()
	s.env.Handler.ServeHTTP(rec, req)
	res := &apitest.Response{Status: rec.Code, Header: rec.Header(), Body: rec.Body.Bytes()}
	where := method + " " + target
	if res.Status != want {
		s.t.Errorf("%s: status %d, want %d: %s", where, res.Status, want, res.Body)
	}
	u, _ := url.Parse(target)
	op, _ := s.doc.find(method, u.Path)
	if op == nil || !isPage(op) {
		s.t.Errorf("%s: no page operation in docs/openapi.yaml", where)
		return res
	}
	if s.seen[op] == nil {
		s.seen[op] = map[string]bool{}
	}
	status := strconv.Itoa(res.Status)
	s.seen[op][status] = true
	if res.Header.Get("X-Frame-Options") != "DENY" || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		s.t.Errorf("%s: page headers %v", where, res.Header)
	}
	responses, _ := op.obj["responses"].(map[string]any)
	r, ok := responses[status]
	if !ok {
		s.t.Errorf("%s: status %d is not documented for %s", where, res.Status, op.path)
		return res
	}
	resp := s.doc.deref(r)
	switch {
	case res.Status == http.StatusSeeOther || res.Status == http.StatusFound:
		if res.Header.Get("Location") == "" {
			s.t.Errorf("%s: %d without Location", where, res.Status)
		}
	case htmlOf(resp["content"]):
		if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/html" {
			s.t.Errorf("%s: Content-Type %q, want text/html", where, res.Header.Get("Content-Type"))
		}
	default:
		s.checkBody(where, schemaOf(resp["content"]), res, false)
	}
	return res
}

// graphql: a query, a bad query (200 with its errors), no token, a body
// too large.
func (s *scenario) graphql(t *testing.T) {
	s.t = t
	const path = "/admin/graphql.json"
	if res := s.do(demoToken, "POST", path, M{"query": "{ shop { name } }"}, 200); !strings.Contains(string(res.Body), `"Demo Shop"`) {
		t.Errorf("shop: %s", res.Body)
	}
	if res := s.do(demoToken, "POST", path, M{"query": "{ shop { nope } }", "variables": nil, "operationName": nil}, 200); !strings.Contains(string(res.Body), "GRAPHQL_VALIDATION_FAILED") {
		t.Errorf("bad query: %s", res.Body)
	}
	s.do(noToken, "POST", path, M{"query": "{ shop { name } }"}, 401)
	s.do(demoToken, "POST", path, M{"query": strings.Repeat("x", 1<<20)}, 413)
}
