package admin

import (
	"context"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // Lambda images may lack zoneinfo; shop zones must always resolve
)

// Shop is the one shop this deployment administers.
type Shop struct {
	ID           int64  `json:"id"`
	Name         string `json:"name"`
	Domain       string `json:"domain"`
	Email        string `json:"email"`
	Currency     string `json:"currency"`
	IANATimezone string `json:"iana_timezone"`
}

// Location is the shop's time zone; UTC when unset or unknown.
func (s *Shop) Location() *time.Location {
	if s == nil || s.IANATimezone == "" {
		return time.UTC
	}
	if loc, ok := zones.Load(s.IANATimezone); ok {
		return loc.(*time.Location)
	}
	loc, err := time.LoadLocation(s.IANATimezone)
	if err != nil {
		return time.UTC
	}
	zones.Store(s.IANATimezone, loc)
	return loc
}

// zones caches loaded time zones: loading one parses tzdata each time.
var zones sync.Map

// App is an installed application. Only the hash of its token is kept.
type App struct {
	ID           int64    `json:"id"`
	Name         string   `json:"name"`
	TokenHash    string   `json:"token_hash"`
	SharedSecret string   `json:"shared_secret"`
	Scopes       []string `json:"scopes"`
	// RateLimit is the app's call plan; nil means DefaultRatePlan.
	RateLimit *RatePlan `json:"rate_limit,omitempty"`
	// APIKey is the app's OAuth client_id ("" for an app that cannot be
	// installed through OAuth); RedirectURLs are the addresses an
	// authorization may send the owner back to (a redirect_uri starting
	// with one of them, shared/oauth).
	APIKey       string   `json:"api_key,omitempty"`
	RedirectURLs []string `json:"redirect_urls,omitempty"`
	// ExpiresAt (unix seconds of the service's clock) is set only on the
	// copy kept under a per-user (online) token, which expires.
	ExpiresAt int64 `json:"expires_at,omitempty"`
	// Online are the app's per-user tokens (hashes) not yet known to have
	// expired: an uninstall revokes them with the app's own token.
	Online []OnlineToken `json:"online,omitempty"`
	// AccessScopes are the scopes the app's configuration lets it ask for
	// (the seed's access_scopes, as a Shopify app's configuration lists
	// them); none: an installed app may ask only for what it holds.
	AccessScopes []string `json:"access_scopes,omitempty"`
	// InstallNonce makes the install's offline token (shared/oauth), which
	// a re-authorization answers again; "" when the token came from the
	// seed or the app is not installed.
	InstallNonce string `json:"install_nonce,omitempty"`
	// SeedTokenHash is the seed's token, kept valid beside the one a
	// re-authorization had to issue (a seeded token cannot be answered
	// again); an uninstall revokes both.
	SeedTokenHash string `json:"seed_token_hash,omitempty"`
	// Uninstalls counts the app's uninstalls: an authorization code is
	// good only while it is what it was when the code was issued.
	Uninstalls int `json:"uninstalls,omitempty"`
	// Public marks an app of public distribution (the seed's "public"):
	// from NonExpiringDeadline on the service's clock its non-expiring
	// offline tokens are refused, as Shopify's are; a custom app is exempt.
	Public bool `json:"public,omitempty"`
	// OfflineRevoked: the install's non-expiring offline token (TokenHash,
	// which still names the install) is not valid: the install got an
	// expiring token instead, or migrated to one.
	OfflineRevoked bool `json:"offline_revoked,omitempty"`
	// Expiring is the install's expiring offline token and its refresh
	// tokens, as hashes (shared/oauth).
	Expiring *ExpiringGrant `json:"expiring,omitempty"`
	// Fresh is set only on the copy kept under an expiring offline token
	// not yet used: until its first use the refresh token it replaced is
	// still good (shared/oauth).
	Fresh bool `json:"fresh,omitempty"`
}

// NonExpiringDeadline is when public apps' non-expiring offline tokens
// stop working (Shopify's deadline for expiring offline tokens).
var NonExpiringDeadline = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// ExpiringGrant is an install's expiring offline token: its generation
// (the tokens are made from a key, Nonce and Gen, so a retried refresh is
// answered the same pair), the hashes of the access token and of the
// refresh token, and of the previous refresh token, good until the access
// token is first used; each with its expiry (unix seconds of the
// service's clock).
type ExpiringGrant struct {
	Nonce          string `json:"nonce"`
	Gen            int    `json:"gen"`
	AccessHash     string `json:"access_hash"`
	AccessExpires  int64  `json:"access_expires"`
	RefreshHash    string `json:"refresh_hash"`
	RefreshExpires int64  `json:"refresh_expires"`
	PrevHash       string `json:"prev_hash,omitempty"`
	PrevExpires    int64  `json:"prev_expires,omitempty"`
}

// Installed reports whether the app holds an offline token.
func (a *App) Installed() bool { return a.TokenHash != "" }

// OnlineToken is a per-user token of an app: its hash and its expiry (unix
// seconds).
type OnlineToken struct {
	Hash      string `json:"hash"`
	ExpiresAt int64  `json:"expires_at"`
}

// RatePlan is a leaky bucket: Bucket calls of capacity, leaking
// LeakPerSecond calls each second.
type RatePlan struct {
	Bucket        int     `json:"bucket"`
	LeakPerSecond float64 `json:"leak_per_second"`
}

// DefaultRatePlan is the original API's standard plan.
var DefaultRatePlan = RatePlan{Bucket: 40, LeakPerSecond: 2}

// Plan returns the app's call plan.
func (a *App) Plan() RatePlan {
	if a.RateLimit != nil {
		return *a.RateLimit
	}
	return DefaultRatePlan
}

// Scope names a resource family; apps hold read_<scope> and write_<scope>.
// The empty scope means no scope is needed (events, webhooks, charges).
type Scope string

const (
	ScopeNone         Scope = ""
	ScopeContent      Scope = "content"
	ScopeScriptTags   Scope = "script_tags"
	ScopeProducts     Scope = "products"
	ScopeCustomers    Scope = "customers"
	ScopeOrders       Scope = "orders"
	ScopeFulfillments Scope = "fulfillments"
	ScopeThemes       Scope = "themes"
	ScopeShipping     Scope = "shipping"
)

// Scopes lists every scope an app may request.
var Scopes = []Scope{ScopeContent, ScopeScriptTags, ScopeProducts, ScopeCustomers, ScopeOrders, ScopeFulfillments, ScopeThemes, ScopeShipping}

// Allows reports whether the app may make a request that only reads (write
// false) or changes (write true) resources of the scope. write_x implies read_x.
func (a *App) Allows(s Scope, write bool) bool {
	if s == ScopeNone {
		return true
	}
	for _, held := range a.Scopes {
		if held == "write_"+string(s) || (!write && held == "read_"+string(s)) {
			return true
		}
	}
	return false
}

// ValidScope reports whether name is read_<scope> or write_<scope>.
func ValidScope(name string) bool {
	rest, ok := strings.CutPrefix(name, "read_")
	if !ok {
		rest, ok = strings.CutPrefix(name, "write_")
	}
	if !ok {
		return false
	}
	for _, s := range Scopes {
		if string(s) == rest {
			return true
		}
	}
	return false
}

// ctxKey carries a request's identity (the app and shop the router
// authenticated) and its id: request-scoped values, the only kind the
// context holds (docs/architecture.md); dependencies are fields or
// parameters.
type ctxKey int

const (
	appKey ctxKey = iota
	shopKey
	requestIDKey
)

// WithApp returns a context carrying the authenticated app.
func WithApp(ctx context.Context, a *App) context.Context { return context.WithValue(ctx, appKey, a) }

// AppFrom returns the authenticated app; every API route has one.
func AppFrom(ctx context.Context) *App { a, _ := ctx.Value(appKey).(*App); return a }

// WithShop returns a context carrying the shop.
func WithShop(ctx context.Context, s *Shop) context.Context {
	return context.WithValue(ctx, shopKey, s)
}

// ShopFrom returns the shop of the request.
func ShopFrom(ctx context.Context) *Shop { s, _ := ctx.Value(shopKey).(*Shop); return s }

// WithRequestID returns a context carrying the request id used in logs.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey, id)
}

// RequestID returns the request id, or "".
func RequestID(ctx context.Context) string { s, _ := ctx.Value(requestIDKey).(string); return s }
