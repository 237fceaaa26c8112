package admin

import (
	"errors"
	"net/url"
	"strings"
)

// CheckRedirectURL says what is wrong with an app's redirect URL, or an
// OAuth redirect_uri: an absolute http or https URL with a host and no user
// info, fragment, whitespace, control character, backslash or dot segment
// (which a browser would resolve outside the path it was allowed under).
func CheckRedirectURL(s string) error {
	if s == "" || len(s) > 2048 {
		return errors.New("must be a URL of 1 to 2048 characters")
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return errors.New("must not contain whitespace, control characters, backslashes or non-ASCII characters")
		}
	}
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return errors.New("is not a valid URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("must be an http or https URL")
	case u.Host == "" || u.Opaque != "":
		return errors.New("must name a host")
	case u.User != nil:
		return errors.New("must not carry user info")
	case strings.Contains(s, "#"):
		return errors.New("must not have a fragment")
	}
	p := strings.ToLower(u.EscapedPath())
	for _, seg := range strings.Split(p, "/") {
		if seg == "." || seg == ".." || strings.Contains(seg, "%2e") || strings.Contains(seg, "%2f") || strings.Contains(seg, "%5c") {
			return errors.New("must not have dot segments or encoded slashes")
		}
	}
	return nil
}

// AllowsRedirect reports whether uri is one of the app's redirect URLs or
// starts with one on a boundary (the allowed URL ends in "/", or uri goes on
// with "/" or "?"), so that https://app.example.com allows
// https://app.example.com/auth/callback but not
// https://app.example.com.evil.net/.
func (a *App) AllowsRedirect(uri string) bool {
	if CheckRedirectURL(uri) != nil {
		return false
	}
	for _, allowed := range a.RedirectURLs {
		rest, ok := strings.CutPrefix(uri, allowed)
		if ok && (rest == "" || strings.HasSuffix(allowed, "/") || rest[0] == '/' || rest[0] == '?') {
			return true
		}
	}
	return false
}
