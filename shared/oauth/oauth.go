// Package oauth installs an app the way Shopify installs one, by the OAuth
// authorization code grant: the authorization page where the shop owner
// installs or declines an app (GET /admin/oauth/authorize), the signed
// redirect back to the app with a code, the exchange of the code for an
// access token (POST /admin/oauth/access_token), and the scopes a token
// holds (GET /admin/oauth/access_scopes.json). docs/oauth.md has the flow.
//
// Items: a code is kept under the hash of its value (oauth#code/<hash>)
// until it is exchanged (deleted in the exchange's transaction, so it is
// used once however many exchanges race) or expires by the service's clock.
// A token is kept as every token is (shared/auth: token/<hash>, a copy of
// the app record), and the app record holds the granted scopes.
package oauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/store"
)

const (
	// CodeTTL is how long a code may be exchanged after the owner
	// installed (RFC 6749 advises at most ten minutes).
	CodeTTL = 10 * time.Minute
	// FormTTL is how long the authorization page's form may be submitted
	// after it was shown.
	FormTTL = time.Hour
	// OnlineTTL is the life of a per-user token: Shopify's online tokens
	// answered expires_in 86399.
	OnlineTTL = 86399 * time.Second
	// MaxState bounds the state an app passes through.
	MaxState = 1024
	// MaxOnline bounds an app's live per-user tokens, which its record
	// lists for an uninstall to revoke: a new one past it revokes the
	// oldest, so the record stays small.
	MaxOnline = 100
)

// PerUser is the grant option of an online (per-user) token.
const PerUser = "per-user"

// Request is what an app asks for: GET /admin/oauth/authorize's query, and
// the authorization page's form, which carries it on.
type Request struct {
	ClientID    string
	Scope       string
	RedirectURI string
	State       string
	// GrantOption is "" (an offline token) or PerUser.
	GrantOption string
}

// Check validates r against app (the app whose client_id r names) and
// returns the scopes asked for, without duplicates and with a read scope
// dropped when its write scope is asked for too (write implies read).
// Unknown scopes are refused by name.
func (r *Request) Check(app *admin.App) ([]string, error) {
	if !app.AllowsRedirect(r.RedirectURI) {
		return nil, admin.BadParam("redirect_uri", "is not one of the app's redirect URLs")
	}
	if utf8.RuneCountInString(r.State) > MaxState {
		return nil, admin.BadParam("state", "is longer than "+strconv.Itoa(MaxState)+" characters")
	}
	if r.GrantOption != "" && r.GrantOption != PerUser {
		return nil, admin.BadParam("grant_options[]", "must be per-user or empty")
	}
	return ParseScopes(r.Scope)
}

// ParseScopes reads a comma-separated scope list as Shopify's clients send
// it (spaces around names and empty entries ignored); unknown scopes are
// refused by name.
func ParseScopes(s string) ([]string, error) {
	var asked, unknown []string
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.Trim(name, " ")
		switch {
		case name == "" || seen[name]:
			continue
		case !admin.ValidScope(name):
			unknown = append(unknown, name)
		}
		seen[name] = true
		asked = append(asked, name)
	}
	if len(unknown) > 0 {
		return nil, admin.BadParam("scope", "has unknown scopes: "+strings.Join(unknown, ", "))
	}
	out := asked[:0]
	for _, name := range asked {
		if rest, ok := strings.CutPrefix(name, "read_"); ok && seen["write_"+rest] {
			continue
		}
		out = append(out, name)
	}
	return out, nil
}

// scopeTexts say what each scope family reaches, for the page.
var scopeTexts = map[admin.Scope]string{
	admin.ScopeContent:      "pages, blogs, articles, comments and redirects",
	admin.ScopeScriptTags:   "script tags",
	admin.ScopeProducts:     "products, variants and collections",
	admin.ScopeCustomers:    "customers, their addresses and saved searches",
	admin.ScopeOrders:       "orders and their transactions",
	admin.ScopeFulfillments: "fulfillment services",
	admin.ScopeThemes:       "themes and their files",
	admin.ScopeShipping:     "countries, provinces, taxes and shipping rates",
}

// ScopeLine is a scope as the page shows it: its handle and what it allows.
type ScopeLine struct {
	Handle, Text string
}

// Describe says what each of scopes (valid ones) lets the app do.
func Describe(scopes []string) []ScopeLine {
	out := make([]ScopeLine, len(scopes))
	for i, s := range scopes {
		verb, family, _ := strings.Cut(s, "_")
		text := "View " + scopeTexts[admin.Scope(family)]
		if verb == "write" {
			text = "View and change " + scopeTexts[admin.Scope(family)]
		}
		out[i] = ScopeLine{Handle: s, Text: text}
	}
	return out
}

// Code is a stored authorization code: what the owner granted, to which
// app, for which redirect_uri, until when (unix seconds).
type Code struct {
	AppID       int64    `json:"app_id"`
	Scopes      []string `json:"scopes"`
	RedirectURI string   `json:"redirect_uri"`
	PerUser     bool     `json:"per_user"`
	ExpiresAt   int64    `json:"expires_at"`
}

// CodeKey addresses a code by the hash of its value: a leaked table holds
// no usable code.
func CodeKey(code string) store.Key { return store.Key{PK: "oauth#code", SK: auth.HashToken(code)} }

// FormKey addresses the shop's key for signing the authorization page's
// forms.
var FormKey = store.Key{PK: "secret", SK: "oauth_form"}

// random returns prefix and the hex of 16 random bytes (Shopify's tokens
// are shpat_ or shpua_ and 32 hex digits).
func random(prefix string) string {
	var b [16]byte
	rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// FormToken is the CSRF token of the authorization page's form: an HMAC,
// under the shop's form key, of the request it carries and when it was
// shown, so that only a form the service rendered, for exactly what the
// owner saw, installs, and only within FormTTL.
func FormToken(key []byte, r *Request, shown time.Time) string {
	ts := strconv.FormatInt(shown.Unix(), 10)
	m := hmac.New(sha256.New, key)
	for _, s := range []string{"authorize", r.ClientID, r.Scope, r.RedirectURI, r.State, r.GrantOption, ts} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return ts + "." + hex.EncodeToString(m.Sum(nil))
}

// FormTokenValid checks a form's token at now.
func FormTokenValid(key []byte, r *Request, token string, now time.Time) bool {
	ts, _, ok := strings.Cut(token, ".")
	secs, err := strconv.ParseInt(ts, 10, 64)
	if !ok || err != nil {
		return false
	}
	shown := time.Unix(secs, 0)
	if now.Before(shown.Add(-time.Minute)) || now.After(shown.Add(FormTTL)) {
		return false
	}
	return hmac.Equal([]byte(token), []byte(FormToken(key, r, shown)))
}

// Host is the host parameter of the redirect: as Shopify's, the base64
// (standard alphabet, unpadded) of the shop's admin address.
func Host(shopDomain string) string {
	return base64.RawStdEncoding.EncodeToString([]byte(shopDomain + "/admin"))
}

// Signed returns uri with params added to its query and hmac: the hex
// HMAC-SHA256, keyed with secret, of every other query parameter sorted by
// name, each k=v joined by & (Message).
func Signed(uri string, params url.Values, secret string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	q := u.Query()
	for k, vs := range params {
		q[k] = vs
	}
	q.Del("hmac")
	q.Set("hmac", Sign(q, secret))
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// Sign is the hmac of query (its own hmac and signature left out).
func Sign(query url.Values, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(Message(query)))
	return hex.EncodeToString(m.Sum(nil))
}

// Message is what the hmac signs: the parameters but hmac and signature,
// sorted by name, as k=v joined by &, each name and value encoded as a
// browser's URLSearchParams encodes it (space as %20), which is how
// Shopify's Node library checks it; a value of letters, digits and -._*
// (a code, a shop domain, a timestamp) is written as it is, as Shopify's
// documentation shows. Values of a repeated name are joined by a comma.
func Message(query url.Values) string {
	names := make([]string, 0, len(query))
	for k := range query {
		if k != "hmac" && k != "signature" {
			names = append(names, k)
		}
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = formEncode(k) + "=" + formEncode(strings.Join(query[k], ","))
	}
	return strings.Join(parts, "&")
}

// formEncode is the application/x-www-form-urlencoded serializer of the
// URL standard, with a space as %20.
func formEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '.', c == '_', c == '*':
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// Token is the answer of the token exchange, as Shopify's: an offline
// token has access_token and scope; a per-user one also expires_in,
// associated_user_scope and associated_user.
type Token struct {
	AccessToken         string          `json:"access_token"`
	Scope               string          `json:"scope"`
	ExpiresIn           *int64          `json:"expires_in,omitempty"`
	AssociatedUserScope *string         `json:"associated_user_scope,omitempty"`
	AssociatedUser      *AssociatedUser `json:"associated_user,omitempty"`
}

// AssociatedUser is the user a per-user token acts for: the shop has one,
// its owner (docs/spec-gaps.md).
type AssociatedUser struct {
	ID            int64  `json:"id"`
	FirstName     string `json:"first_name"`
	LastName      string `json:"last_name"`
	Email         string `json:"email"`
	EmailVerified bool   `json:"email_verified"`
	AccountOwner  bool   `json:"account_owner"`
	Locale        string `json:"locale"`
	Collaborator  bool   `json:"collaborator"`
}

// owner is the shop's owner, the one user of a per-user token.
func owner(shop *admin.Shop) *AssociatedUser {
	return &AssociatedUser{ID: shop.ID, FirstName: "Shop", LastName: "Owner", Email: shop.Email, EmailVerified: true,
		AccountOwner: true, Locale: "en"}
}

// AccessScope is one entry of GET /admin/oauth/access_scopes.json.
type AccessScope struct {
	Handle string `json:"handle"`
}
