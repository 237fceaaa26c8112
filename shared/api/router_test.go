package api_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/themes/theme"
)

var mainTheme = fmt.Sprintf("/web/themes/%d", theme.MainID)

// send serves one request as a client would send it, with whatever Host,
// forwarding headers and request target it likes.
func send(e *apitest.Env, method, target, host string, body string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	if host != "" {
		req.Host = host
	}
	req.Header.Set("X-Service-Access-Token", apitest.DemoToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-Host", "evil.example")
	req.Header.Set("X-Forwarded-Proto", "http")
	req.Header.Set("Forwarded", "host=evil.example;proto=http")
	rec := httptest.NewRecorder()
	e.Handler.ServeHTTP(rec, req)
	return rec
}

// Absolute URLs in answers (paging links, confirmation_url, an asset's
// public_url) are on the configured base URL, whatever the Host header,
// the forwarding headers or an absolute-form request target say.
func TestAbsoluteURLsAreOnTheConfiguredBase(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		for _, p := range []string{"/a", "/b"} {
			e.Do("POST", "/web/redirects.json", map[string]any{"redirect": map[string]any{"path": p, "target": "/t"}}).Expect(t, 201)
		}
		for _, c := range []struct{ target, host string }{
			{"/web/redirects.json?limit=1", "evil.example"},
			{"/web/redirects.json?limit=1", "evil.example:8443"},
			{"http://evil.example/web/redirects.json?limit=1", ""},
			{"https://evil.example:444/web/redirects.json?limit=1", "other.example"},
		} {
			rec := send(e, "GET", c.target, c.host, "")
			link := rec.Header().Get("Link")
			if rec.Code != 200 || !strings.HasPrefix(link, "<"+apitest.BaseURL+"/web/redirects.json?limit=1&page_info=") || strings.Contains(link, "evil") {
				t.Errorf("GET %s (Host %s): %d Link %q", c.target, c.host, rec.Code, link)
			}
		}
		charge := `{"recurring_application_charge":{"name":"P","price":1,"return_url":"https://app.example.com/back"}}`
		for _, target := range []string{"/admin/recurring_application_charges.json", "http://evil.example/admin/recurring_application_charges.json"} {
			rec := send(e, "POST", target, "evil.example", charge)
			c := (&apitest.Response{Status: rec.Code, Body: rec.Body.Bytes()}).Expect(t, 201).Object(t, "recurring_application_charge")
			if u, _ := c["confirmation_url"].(string); !strings.HasPrefix(u, apitest.BaseURL+"/admin/recurring_application_charges/") {
				t.Errorf("POST %s: confirmation_url %q", target, u)
			}
		}
		rec := send(e, "GET", "http://evil.example/admin/recurring_application_charges.json", "", "")
		if body := rec.Body.String(); rec.Code != 200 || strings.Contains(body, "evil") || !strings.Contains(body, `"confirmation_url":"`+apitest.BaseURL+"/") {
			t.Errorf("charge list: %d %s", rec.Code, body)
		}
		asset := `{"asset":{"key":"assets/a.css","value":"a{}"}}`
		rec = send(e, "PUT", "http://evil.example"+mainTheme+"/assets.json", "", asset)
		if body := rec.Body.String(); rec.Code != 200 || !strings.Contains(body, `"public_url":"`+apitest.BaseURL+mainTheme+`/assets/a.css"`) {
			t.Errorf("asset put: %d %s", rec.Code, body)
		}
		rec = send(e, "GET", "http://evil.example"+mainTheme+"/assets.json?asset[key]=assets/a.css", "", "")
		if body := rec.Body.String(); rec.Code != 200 || strings.Contains(body, "evil") {
			t.Errorf("asset get: %d %s", rec.Code, body)
		}
	}, api.Redirects, api.Billing, api.Themes)
}

// In Lambda without PUBLIC_BASE_URL the base is https and the domain API
// Gateway received the request on (its request context), not the Host
// header the client sent; a domain that is not a plain host name makes
// the URLs relative.
func TestLambdaBaseIsTheGatewayDomain(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Billing)
	d := *e.Deps
	d.BaseURL = ""
	proxy := httpadapter.NewV2(api.Handler(&api.Deps{Deps: &d}, api.Billing)).ProxyWithContext
	for domain, want := range map[string]string{
		"abc123.execute-api.us-east-1.amazonaws.com": "https://abc123.execute-api.us-east-1.amazonaws.com/admin/",
		"evil_example.com":                           "/admin/",
	} {
		ev := events.APIGatewayV2HTTPRequest{
			Version: "2.0", RawPath: "/admin/recurring_application_charges.json",
			Headers: map[string]string{"host": "evil.example", "x-forwarded-host": "evil.example",
				"content-type": "application/json", "x-service-access-token": apitest.DemoToken},
			RequestContext: events.APIGatewayV2HTTPRequestContext{DomainName: domain,
				HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/admin/recurring_application_charges.json"}},
			Body:            base64.StdEncoding.EncodeToString([]byte(`{"recurring_application_charge":{"name":"P","price":1,"return_url":"https://app.example.com/"}}`)),
			IsBase64Encoded: true,
		}
		res, err := proxy(context.Background(), ev)
		if err != nil || res.StatusCode != http.StatusCreated || !strings.Contains(res.Body, `"confirmation_url":"`+want) {
			t.Errorf("domain %q: %v %d %s", domain, err, res.StatusCode, res.Body)
		}
	}
}

// Every near spelling of a route's path, with or without a token, is the
// 404 JSON of an unknown path: no redirect, no HTML.
func TestUnknownPathsAreJSONNotRedirects(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t), api.Groups...)
	e.Do("PUT", mainTheme+"/assets.json", map[string]any{"asset": map[string]any{"key": "assets/a.css", "value": "a{}"}}).Expect(t, 200)
	for _, p := range []string{
		mainTheme + "/assets", mainTheme + "/assets/", mainTheme + "/assets//a.css",
		mainTheme + "/assets/./a.css", mainTheme + "/assets/x/../a.css", "/web/themes//assets/a.css",
		mainTheme + "/", mainTheme, "/web/themes", "/web/themes/", "//web/themes.json",
		"/web/themes.json/", "/web/./themes.json", "/web/pages/", "/web/pages", "/admin/recurring_application_charges/1/confirm/x/",
		"/admin/recurring_application_charges/1/confirm", mainTheme + "/assets/%2e%2e/a.css",
	} {
		for _, token := range []string{"", apitest.DemoToken} {
			r := e.DoAs(token, "GET", p, nil)
			if r.Status != 404 || r.Header.Get("Location") != "" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
				t.Errorf("GET %s (token %t): %d %v %s", p, token != "", r.Status, r.Header, r.Body)
			}
		}
	}
	r := e.DoAs("", "GET", mainTheme+"/assets/a.css", nil).Expect(t, 200)
	if string(r.Body) != "a{}" {
		t.Errorf("the file: %s", r.Body)
	}
}

// The router matches routes itself (httpapi's table) and so never sees the
// routes ServeMux would refuse together; every group's routes, all served
// by ShopifyPathsFunction and the local runner, must not be such.
func TestRoutesServeTogether(t *testing.T) {
	e := apitest.New(t, apitest.OpenEmbedded(t))
	if err := httpapi.CheckRoutes(api.Handler(&api.Deps{Deps: e.Deps}, api.Groups...).Routes()); err != nil {
		t.Error(err)
	}
}
