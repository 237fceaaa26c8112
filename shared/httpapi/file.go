package httpapi

import (
	"net/http"
	"strconv"
	"strings"
)

// FileCacheControl is the caching a public file is served with: browsers
// and CDNs may keep it five minutes, then revalidate with its ETag.
const FileCacheControl = "public, max-age=300"

// WriteFile answers a public file with its Content-Type, a strong ETag
// (etag, quoted) and cache headers; a request whose If-None-Match names the
// ETag is answered 304 without the body.
func WriteFile(w http.ResponseWriter, r *http.Request, contentType, etag string, content []byte) error {
	h := w.Header()
	tag := `"` + etag + `"`
	h.Set("ETag", tag)
	h.Set("Cache-Control", FileCacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	if match := r.Header.Get("If-None-Match"); match != "" {
		for _, m := range strings.Split(match, ",") {
			if m = strings.TrimSpace(m); m == tag || m == "*" || m == "W/"+tag {
				w.WriteHeader(http.StatusNotModified)
				return nil
			}
		}
	}
	h.Set("Content-Type", contentType)
	h.Set("Content-Length", strconv.Itoa(len(content)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(content)
	}
	return nil
}

// BaseURL is the scheme and host the request reached the service at
// (X-Forwarded-Proto, set by API Gateway, else the connection), for
// addresses of the service given in answers.
func BaseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	return scheme + "://" + r.Host
}
