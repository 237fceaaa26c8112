package httpapi

import (
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

// MaxPageBody caps the form a page accepts.
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

// SeeOther answers a form POST with a 303 to target, every byte of it
// outside printable ASCII percent-encoded: a header carries ASCII, and a
// browser reads %C3%BC in a path, query or host as the ü it stands for.
func SeeOther(w http.ResponseWriter, target string) error {
	w.Header().Set("Location", asciiURL(target))
	w.WriteHeader(http.StatusSeeOther)
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
		if r.ContentLength > MaxPageBody {
			err = errTooLarge
		} else {
			r.Body = http.MaxBytesReader(w, r.Body, MaxPageBody)
			err = route.Handler(w, r)
		}
		if err != nil {
			Error(w, r, err)
		}
		if ctx := r.Context(); slog.Default().Enabled(ctx, slog.LevelDebug) {
			slog.DebugContext(ctx, "request", "request_id", admin.RequestID(ctx), "method", r.Method,
				"route", route.Path, "duration", time.Since(start))
		}
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
