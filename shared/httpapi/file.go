package httpapi

import (
	"context"
	"mime"
	"net/http"
	"strconv"
	"strings"
)

// FileCacheControl is the caching a public file is served with: browsers
// and CDNs may keep it five minutes, then revalidate with its ETag.
const FileCacheControl = "public, max-age=300"

// FileHeaders are set on every answer of a public route, errors and 304s
// included. A file anyone may upload is served from the API's own origin
// (the charge confirmation page's), so nothing in it may run there: the
// sandbox policy puts a document opened from it in an opaque origin
// without script, forms or plugins, and nosniff keeps a browser from
// taking a file for another type.
var FileHeaders = map[string]string{
	"Content-Security-Policy": "sandbox",
	"X-Content-Type-Options":  "nosniff",
}

// WriteFile answers a public file with its Content-Type, a strong ETag
// (etag, quoted) and cache headers; a request whose If-None-Match names the
// ETag is answered 304 without the body. A document type a browser would
// render as a page (HTML, SVG, XML) is also an attachment: it downloads
// rather than opens, even in a browser that ignores the sandbox, while
// <img src> and the like still load it.
func WriteFile(w http.ResponseWriter, r *http.Request, contentType, etag string, content []byte) error {
	h := w.Header()
	tag := `"` + etag + `"`
	h.Set("ETag", tag)
	h.Set("Cache-Control", FileCacheControl)
	if match := r.Header.Get("If-None-Match"); match != "" {
		for _, m := range strings.Split(match, ",") {
			if m = strings.TrimSpace(m); m == tag || m == "*" || m == "W/"+tag {
				w.WriteHeader(http.StatusNotModified)
				return nil
			}
		}
	}
	h.Set("Content-Type", contentType)
	if ActiveDocument(contentType) {
		h.Set("Content-Disposition", "attachment")
	}
	h.Set("Content-Length", strconv.Itoa(len(content)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(content)
	}
	return nil
}

// ActiveDocument reports whether a browser opening a file of contentType
// would render it as a document that may hold script: HTML, XHTML, SVG
// and every XML type.
func ActiveDocument(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return true // unreadable: assume the worst
	}
	return mt == "text/html" || mt == "text/xml" || mt == "application/xml" || strings.HasSuffix(mt, "+xml")
}

// baseCtxKey carries the base URL the router worked out for the request:
// without PUBLIC_BASE_URL it is the domain API Gateway received this
// request on, so it is the request's; handlers, which get only (w, r),
// read it with BaseURL.
type baseCtxKey struct{}

// BaseURL is the service's public base URL ("https://api.example.com", no
// trailing slash) for the absolute URLs of answers (paging links,
// confirmation_url, public_url): what the Router's Base gave, from
// configuration; "" when there is none, and the URLs are then relative.
// It never comes from the request's Host or its target.
func BaseURL(r *http.Request) string { return baseURL(r.Context()) }

// BaseURLOf is BaseURL for the context of a request the Router served:
// for code that handles a request past its handler (GraphQL resolvers).
func BaseURLOf(ctx context.Context) string { return baseURL(ctx) }

func baseURL(ctx context.Context) string {
	s, _ := ctx.Value(baseCtxKey{}).(string)
	return s
}
