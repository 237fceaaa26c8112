package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"html/template"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

// MaxPageBody caps the form a page accepts, unless its route sets MaxBody.
const MaxPageBody = 8 << 10

// PageHeaders are set on every answer of a page route, errors included:
// nothing may frame it, sniff it, cache it, or learn its address (which
// holds a secret) from a Referer.
var PageHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
	"X-Frame-Options":         "DENY",
	"X-Content-Type-Options":  "nosniff",
	"Referrer-Policy":         "no-referrer",
	"Cache-Control":           "no-store",
}

// CSP is the Content-Security-Policy of one page: nothing is allowed but
// the stylesheets given (by hash, so inline <style> blocks work without
// 'unsafe-inline') and form submissions to 'self' and FormActions (the
// origins a form's redirect may lead to; browsers check the redirect too).
// There is never a script.
type CSP struct {
	Styles      []string
	FormActions []string
}

func (c CSP) String() string {
	var b strings.Builder
	b.WriteString("default-src 'none'; base-uri 'none'; frame-ancestors 'none'")
	if len(c.Styles) > 0 {
		b.WriteString("; style-src")
		for _, s := range c.Styles {
			sum := sha256.Sum256([]byte(s))
			b.WriteString(" 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'")
		}
	}
	b.WriteString("; form-action 'self'")
	for _, o := range c.FormActions {
		if strings.ContainsAny(o, " ;,'\"\r\n\t") {
			continue // never let an origin end the directive
		}
		b.WriteString(" " + o)
	}
	return b.String()
}

// WritePage writes an HTML page under csp.
func WritePage(w http.ResponseWriter, status int, body []byte, csp CSP) error {
	h := w.Header()
	h.Set("Content-Security-Policy", csp.String())
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
	return nil
}

// PageCSS is the one style of every page (the charge confirmation page, the
// app authorization page, their error pages), inline and allowed by its hash
// in the page's Content-Security-Policy. Pages have no script: they work
// without JavaScript, and their policy allows none.
const PageCSS = `body{font-family:system-ui,sans-serif;background:#f4f5f7;color:#1f2328;margin:0}` +
	`main{max-width:32rem;margin:3rem auto;background:#fff;border:1px solid #d0d7de;border-radius:8px;padding:2rem}` +
	`h1{font-size:1.3rem;margin-top:0}dl{display:grid;grid-template-columns:max-content auto;gap:.5rem 1.5rem}` +
	`dt{color:#57606a}dd{margin:0;font-weight:600}.test{background:#fff8c5;border:1px solid #d4a72c;padding:.6rem;border-radius:6px}` +
	`.actions{display:flex;gap:1rem;margin-top:1.5rem}form{margin:0}button{font-size:1rem;padding:.6rem 1.4rem;border-radius:6px;border:1px solid #8c959f;background:#f6f8fa;cursor:pointer}` +
	`button.accept{background:#1f883d;border-color:#1a7f37;color:#fff}.note{color:#57606a;font-size:.9rem}` +
	`ul.scopes{padding-left:1.2rem}.error{color:#cf222e}`

// pageShell is the document every page is: a page's template defines
// "title" and "main" (escaped by html/template like everything it shows).
const pageShell = `{{define "page"}}<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>{{template "title" .}}</title>
<style>{{pageCSS}}</style>
</head>
<body>
<main>
{{template "main" .}}</main>
</body>
</html>
{{end}}`

// PageTemplate returns a page's template, its body (the "title" and "main"
// definitions) in the shared shell, parsed once when first used.
func PageTemplate(body string) func() *template.Template {
	return sync.OnceValue(func() *template.Template {
		t := template.New("page").Funcs(template.FuncMap{"pageCSS": func() template.CSS { return PageCSS }})
		return template.Must(template.Must(t.Parse(pageShell)).Parse(body))
	})
}

// RenderPage renders a page's template with data.
func RenderPage(t *template.Template, data any) []byte {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "page", data); err != nil {
		panic(err) // the templates and their data are fixed: a failure is a bug
	}
	return b.Bytes()
}

// WriteHTMLPage renders a page's template with data and writes it under the
// shared style; its forms may lead to formActions (origins) besides 'self'.
func WriteHTMLPage(w http.ResponseWriter, status int, t *template.Template, data any, formActions ...string) error {
	return WritePage(w, status, RenderPage(t, data), CSP{Styles: []string{PageCSS}, FormActions: formActions})
}

var errorPage = PageTemplate(`{{define "title"}}{{.Title}}{{end}}{{define "main"}}<h1>{{.Title}}</h1>
<p class="error" id="error">{{.Message}}</p>
{{end}}`)

// WritePageError answers a page's request with an HTML page naming what is
// wrong, for a person in a browser who must not be sent on (an app's page
// given an unknown app or an address it does not own). The store's
// unavailability, a body too large and errors that are no *admin.Error
// (bugs) are answered as on every route.
func WritePageError(w http.ResponseWriter, r *http.Request, title string, err error) {
	var e *admin.Error
	if unavailable(err) || !errors.As(err, &e) || e.Code == admin.ETOOLARGE || e.Message == "" && e.Fields == nil {
		Error(w, r, err)
		return
	}
	msg := e.Message
	if msg == "" {
		var parts []string
		for field, msgs := range e.Fields {
			for _, m := range msgs {
				parts = append(parts, field+" "+m)
			}
		}
		sort.Strings(parts)
		msg = strings.Join(parts, "; ")
	}
	_ = WriteHTMLPage(w, StatusOf(e.Code), errorPage(), struct{ Title, Message string }{title, msg}) // it cannot fail: a page is written whole
}

// SeeOther answers a form POST with a 303 to target, every byte of it
// outside printable ASCII percent-encoded: a header carries ASCII, and a
// browser reads %C3%BC in a path, query or host as the ü it stands for.
func SeeOther(w http.ResponseWriter, target string) error {
	w.Header().Set("Location", asciiURL(target))
	w.WriteHeader(http.StatusSeeOther)
	return nil
}

// Found answers with a 302 to target, encoded as SeeOther's: the redirect an
// OAuth authorization answers with (Shopify's, which its clients expect).
func Found(w http.ResponseWriter, target string) error {
	w.Header().Set("Location", asciiURL(target))
	w.WriteHeader(http.StatusFound)
	return nil
}

// wrapPage serves a page route: no token, the page headers, a small body.
func (rt *Router) wrapPage(route *Route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		for k, v := range PageHeaders {
			w.Header().Set(k, v)
		}
		var err error
		max := route.MaxBody
		if max == 0 {
			max = MaxPageBody
		}
		if r.ContentLength > max {
			err = errTooLarge
		} else {
			r.Body = http.MaxBytesReader(w, r.Body, max)
			err = route.Handler(w, r)
		}
		if err != nil {
			writeError(rt.log(), w, r, err)
		}
		rt.logRequest(r.Context(), r.Method, route, start)
	})
}

func asciiURL(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f {
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}
