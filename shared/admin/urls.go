package admin

import (
	"regexp"
	"sync"
)

// The URL and e-mail fields' grammar: the document's x-patterns httpURL,
// httpsURL, callbackURL, redirectTarget and email, character for character
// (a test in shared/api compares them), so that what the document refuses
// the service refuses too. A host is dot-separated labels of letters,
// digits and inner hyphens; a port is 1 to 65535; path, query and fragment
// are in URI characters (non-ASCII percent-encoded, as a Location header
// needs).
const (
	urlHost     = `[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*`
	urlPort     = `(:([1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?`
	urlPchar    = `([A-Za-z0-9._~!$&'()*+,;=:@-]|%[0-9A-Fa-f]{2})`
	urlPath     = `(/(` + urlPchar + `|/)*)?`
	urlTail     = `(\?([A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*)?(#([A-Za-z0-9._~!$&'()*+,;=:@/?-]|%[0-9A-Fa-f]{2})*)?`
	urlAbsolute = `https?://` + urlHost + urlPort + urlPath

	// HTTPURLPattern: an absolute http(s) URL with a host.
	HTTPURLPattern = `^` + urlAbsolute + urlTail + `$`
	// HTTPSURLPattern: the same over https only.
	HTTPSURLPattern = `^https://` + urlHost + urlPort + urlPath + urlTail + `$`
	// CallbackURLPattern: an absolute http(s) URL without query or
	// fragment (paths are appended to it).
	CallbackURLPattern = `^` + urlAbsolute + `$`
	// RedirectTargetPattern: an absolute http(s) URL or an absolute path
	// (not "//").
	RedirectTargetPattern = `^(` + urlAbsolute + `|/(` + urlPchar + `(` + urlPchar + `|/)*)?)` + urlTail + `$`

	// EmailPattern: a plain local@domain address, the local part in
	// RFC 5322's atext with inner dots, the domain dotted labels as a
	// URL's host (at least two).
	emailAtext   = `[!#-'*+\-/-9=?A-Z^-~]`
	EmailPattern = `^` + emailAtext + `+(\.` + emailAtext + `+)*@[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$`
)

// Compiled on first use, not at init: most functions never check a URL,
// and every cold start would pay for it.
var (
	httpURLRE        = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(HTTPURLPattern) })
	callbackURLRE    = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(CallbackURLPattern) })
	redirectTargetRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(RedirectTargetPattern) })
	emailRE          = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(EmailPattern) })
)

// IsHTTPURL reports whether s matches HTTPURLPattern.
func IsHTTPURL(s string) bool { return httpURLRE().MatchString(s) }

// IsHTTPSURL reports whether s matches HTTPSURLPattern.
func IsHTTPSURL(s string) bool { return len(s) > 8 && s[:8] == "https://" && IsHTTPURL(s) }

// IsCallbackURL reports whether s matches CallbackURLPattern.
func IsCallbackURL(s string) bool { return callbackURLRE().MatchString(s) }

// IsRedirectTarget reports whether s matches RedirectTargetPattern.
func IsRedirectTarget(s string) bool { return redirectTargetRE().MatchString(s) }

// IsEmail reports whether s matches EmailPattern.
func IsEmail(s string) bool { return emailRE().MatchString(s) }
