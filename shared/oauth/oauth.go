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
	"slices"
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
	if err := CheckRedirectQuery(r.RedirectURI); err != nil {
		return nil, err
	}
	if r.GrantOption != "" && r.GrantOption != PerUser {
		return nil, admin.BadParam("grant_options[]", "must be per-user or empty")
	}
	return ParseScopes(r.Scope)
}

// Covers reports whether held (granted or configured scopes) covers
// scope: the scope itself, or its write scope for a read scope.
func Covers(held []string, scope string) bool {
	if slices.Contains(held, scope) {
		return true
	}
	rest, ok := strings.CutPrefix(scope, "read_")
	return ok && slices.Contains(held, "write_"+rest)
}

// beyond are the scopes of asked that held does not cover.
func beyond(held, asked []string) []string {
	var out []string
	for _, s := range asked {
		if !Covers(held, s) {
			out = append(out, s)
		}
	}
	return out
}

// Grant decides what r may get from app as it is now: the scopes its code
// grants, and whether the owner must approve them (a re-authorization for
// scopes already granted goes straight back to the app, as Shopify's does).
//   - An offline grant asks only for scopes the app's configuration lists
//     (AccessScopes); an installed app whose configuration lists none, only
//     for what it holds. It grants what the app holds and what it asks for:
//     a re-authorization never takes a scope away; only an uninstall does.
//   - A per-user grant needs the app installed and asks only for scopes
//     the app holds; the owner always approves it (it acts as them).
func (r *Request) Grant(app *admin.App) (scopes []string, approve bool, err error) {
	asked, err := r.Check(app)
	if err != nil {
		return nil, false, err
	}
	if r.GrantOption == PerUser {
		if !app.Installed() {
			return nil, false, admin.BadParam("grant_options[]", "per-user needs the app installed on the shop first")
		}
		if extra := beyond(app.Scopes, asked); len(extra) > 0 {
			return nil, false, admin.BadParam("scope", "asks for scopes the app was not granted: "+strings.Join(extra, ", "))
		}
		return asked, true, nil
	}
	switch {
	case len(app.AccessScopes) > 0:
		if extra := beyond(app.AccessScopes, asked); len(extra) > 0 {
			return nil, false, admin.BadParam("scope", "asks for scopes the app's configuration does not list: "+strings.Join(extra, ", "))
		}
	case app.Installed():
		if extra := beyond(app.Scopes, asked); len(extra) > 0 {
			return nil, false, admin.BadParam("scope", "asks for scopes beyond those granted, and the app's configuration lists none: "+strings.Join(extra, ", "))
		}
	}
	if !app.Installed() {
		return asked, true, nil
	}
	all, _ := ParseScopes(strings.Join(append(slices.Clone(app.Scopes), asked...), ","))
	return all, len(beyond(app.Scopes, asked)) > 0, nil
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

// Code is a stored authorization code: what it grants, to which app, for
// which redirect_uri, until when (unix seconds), and the app's install as
// it was then (its token and uninstall count), which the exchange finds
// unchanged or refuses the code.
type Code struct {
	AppID       int64    `json:"app_id"`
	Scopes      []string `json:"scopes"`
	RedirectURI string   `json:"redirect_uri"`
	PerUser     bool     `json:"per_user"`
	ExpiresAt   int64    `json:"expires_at"`
	Install     string   `json:"install,omitempty"`
	Uninstalls  int      `json:"uninstalls,omitempty"`
}

// TokenSecretKey holds the key offline tokens are made with where no
// OAUTH_TOKEN_KEY is configured (the local runner).
var TokenSecretKey = store.Key{PK: "secret", SK: "oauth_token"}

// OfflineToken is the offline token of an install: made from the key and
// the install's nonce, so that a re-authorization answers it again while
// the table holds only its hash.
func OfflineToken(key []byte, appID int64, nonce string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("offline\x00" + strconv.FormatInt(appID, 10) + "\x00" + nonce))
	return "shpat_" + hex.EncodeToString(m.Sum(nil)[:16])
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

// Added are the parameters the redirect adds to the redirect_uri's query
// (and signature, which Shopify's libraries leave out of the hmac as they
// do hmac): a redirect_uri whose query names one of them is refused, as
// the callback could not carry both.
var Added = [...]string{"code", "hmac", "host", "shop", "signature", "state", "timestamp"}

// CheckRedirectQuery says what keeps the query of uri (a redirect_uri the
// app owns) from being kept byte for byte and signed as Shopify's Node
// library reads it back: a name of Added, a name that is not printable
// ASCII once decoded (the library sorts names by ICU collation, written
// here for ASCII only), or a value that is not UTF-8 once decoded (the
// libraries would each replace it differently).
func CheckRedirectQuery(uri string) error {
	_, query, _ := strings.Cut(uri, "?")
	for _, p := range SearchParams(query) {
		switch {
		case slices.Contains(Added[:], p[0]):
			return admin.BadParam("redirect_uri", "must not have "+p[0]+" in its query: the redirect adds it")
		case strings.IndexFunc(p[0], func(r rune) bool { return r < ' ' || r > '~' }) >= 0:
			return admin.BadParam("redirect_uri", "must have only printable ASCII parameter names in its query, once decoded")
		case !utf8.ValidString(p[1]):
			return admin.BadParam("redirect_uri", "must have UTF-8 parameter values in its query, once decoded")
		}
	}
	return nil
}

// Signed returns uri with params added to its query, and hmac: the query
// uri has is kept byte for byte (CheckRedirectQuery accepted it), and the
// parameters follow it, encoded. The hmac signs the callback's query as
// the app reads it back (Message).
func Signed(uri string, params url.Values, secret string) string {
	_, query, _ := strings.Cut(uri, "?")
	pairs := SearchParams(query)
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(uri)
	sep := "?"
	switch {
	case strings.HasSuffix(uri, "?") || strings.HasSuffix(uri, "&"):
		sep = ""
	case strings.Contains(uri, "?"):
		sep = "&"
	}
	for _, k := range names {
		for _, v := range params[k] {
			b.WriteString(sep + formEncode(k) + "=" + formEncode(v))
			sep = "&"
			pairs = append(pairs, [2]string{k, v})
		}
	}
	b.WriteString(sep + "hmac=" + signPairs(pairs, secret))
	return b.String()
}

// Sign is the hmac of query (its own hmac and signature left out), each
// name with its last value.
func Sign(query url.Values, secret string) string {
	var pairs [][2]string
	for k, vs := range query {
		if len(vs) > 0 {
			pairs = append(pairs, [2]string{k, vs[len(vs)-1]})
		}
	}
	return signPairs(pairs, secret)
}

func signPairs(pairs [][2]string, secret string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(Message(pairs)))
	return hex.EncodeToString(m.Sum(nil))
}

// Message is what the hmac signs, as Shopify's Node library (15.0.0)
// computes it from the callback's query: each name once with its last
// value (Object.fromEntries), hmac and signature left out, the names
// sorted by String.prototype.localeCompare (Collate), each name and value
// encoded as URLSearchParams encodes it with a space as %20, k=v joined by
// &. For names of lowercase letters, digits and _ and values of letters,
// digits and -._* (a code, a shop domain, a timestamp, a nonce state) it
// is also the documented raw form and what the Python library signs.
func Message(pairs [][2]string) string {
	last := map[string]string{}
	for _, p := range pairs {
		last[p[0]] = p[1]
	}
	names := make([]string, 0, len(last))
	for k := range last {
		if k != "hmac" && k != "signature" {
			names = append(names, k)
		}
	}
	slices.SortFunc(names, Collate)
	parts := make([]string, len(names))
	for i, k := range names {
		parts[i] = formEncode(k) + "=" + formEncode(last[k])
	}
	return strings.Join(parts, "&")
}

// collationOrder is printable ASCII in the order of ICU's root collation
// at its first level (letters by their lowercase), which is what
// localeCompare uses in Node: TestCollateAsNode compares it with node.
const collationOrder = " _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$0123456789abcdefghijklmnopqrstuvwxyz"

// Collate compares two printable ASCII strings as ICU's root collation
// does: by each character's place in collationOrder (a prefix first),
// then, where those agree, a lowercase letter before its uppercase one
// at the first place they differ.
func Collate(a, b string) int {
	weight := func(c byte) int {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		return strings.IndexByte(collationOrder, c)
	}
	for i := 0; i < len(a) && i < len(b); i++ {
		if d := weight(a[i]) - weight(b[i]); d != 0 {
			return d
		}
	}
	if d := len(a) - len(b); d != 0 {
		return d
	}
	for i := 0; i < len(a); i++ {
		if a[i] != b[i] { // the same letter: lowercase first
			return int(b[i]) - int(a[i])
		}
	}
	return 0
}

// SearchParams reads a query as a browser's URLSearchParams does (the URL
// standard's application/x-www-form-urlencoded parser): split on &, each
// at its first =, + as a space, %XX decoded and any other % kept.
func SearchParams(query string) [][2]string {
	var out [][2]string
	for _, seq := range strings.Split(query, "&") {
		if seq == "" {
			continue
		}
		name, value, _ := strings.Cut(seq, "=")
		out = append(out, [2]string{formDecode(name), formDecode(value)})
	}
	return out
}

func formDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b.WriteByte(' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			n, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b.WriteByte(byte(n))
			i += 2
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

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
	// RefreshToken and RefreshTokenExpiresIn come with an expiring
	// offline token (ExpiresIn 3600).
	RefreshToken          string `json:"refresh_token,omitempty"`
	RefreshTokenExpiresIn *int64 `json:"refresh_token_expires_in,omitempty"`
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
