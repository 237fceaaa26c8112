package oauth

import (
	"context"
	"crypto/subtle"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the OAuth operations, used by the handlers. It holds only
// what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	// Clock is the service's time: codes, forms and tokens expire by it.
	Clock clock.Clock
	// AppClock is the app's time, the callback's timestamp, which
	// Shopify's libraries check against their own clock within 90 s: the
	// machine's, so that an install still verifies after /_local/clock
	// moved the service's time.
	AppClock clock.Clock
	Owner    platform.Owner
	// TokenKey makes offline tokens; nil: TokenSecretKey in the store.
	TokenKey []byte
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, AppClock: clock.System{}, Owner: d.Owner, TokenKey: d.TokenKey}
}

// Prompt is what the authorization page shows the owner: the shop, the app,
// the scopes it asks for, and the form that carries the request on. A
// prompt with Redirect needs no page: the app asked for scopes it holds.
type Prompt struct {
	Shop      admin.Shop
	AppName   string
	Request   Request
	Scopes    []string
	Lines     []ScopeLine // the scopes as the page shows them
	FormToken string
	// AskSecret: the page asks for the owner's secret (in AWS); else the
	// page says its user is the owner (the local runner).
	AskSecret bool
	Redirect  string
}

var (
	errForbidden = admin.Errorf(admin.EFORBIDDEN, "Invalid form token: reload the authorization page")
	errOwner     = admin.Errorf(admin.EFORBIDDEN, "Only the shop's owner can approve an app: the owner's secret is missing or wrong")
	errNoOwner   = admin.Errorf(admin.EFORBIDDEN, "No owner's secret is configured for this shop (OWNER_SECRET_HASH, docs/deploying.md): no app can be approved")
	errCode      = admin.BadParam("code", "was not found, has expired or was already used")
	errInstall   = admin.BadParam("code", "was issued before the app was uninstalled or lost the scopes it grants")
)

// shopAndApp reads the shop (first: every operation reads the store before
// it judges its input, so a store that cannot answer is a 503 whatever was
// sent) and the app whose client_id is clientID.
func (s Service) shopAndApp(ctx context.Context, clientID string) (admin.Shop, *admin.App, error) {
	shop, err := auth.ReadShop(ctx, s.Store)
	if err != nil {
		return admin.Shop{}, nil, err
	}
	if clientID == "" {
		return *shop, nil, admin.BadParam("client_id", "is required")
	}
	app, err := auth.AppByClientID(ctx, s.Store, clientID)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return *shop, nil, admin.BadParam("client_id", "is not the client_id of an app of this shop")
	}
	return *shop, app, err
}

// prompt checks r and returns the page that asks the owner about it, the
// app, the scopes the code will grant and whether the owner must approve.
func (s Service) prompt(ctx context.Context, r *Request) (Prompt, *admin.App, []string, bool, []byte, error) {
	shop, app, err := s.shopAndApp(ctx, r.ClientID)
	if err != nil {
		return Prompt{}, nil, nil, false, nil, err
	}
	grant, approve, err := r.Grant(app)
	if err != nil {
		return Prompt{}, nil, nil, false, nil, err
	}
	asked, _ := ParseScopes(r.Scope)
	key, err := auth.Secret(ctx, s.Store, FormKey)
	if err != nil {
		return Prompt{}, nil, nil, false, nil, err
	}
	p := Prompt{Shop: shop, AppName: app.Name, Request: *r, Scopes: asked, Lines: Describe(asked), AskSecret: !s.Owner.Local || s.Owner.SecretHash != ""}
	return p, app, grant, approve, key, nil
}

// Authorize returns the authorization page of r: an unknown client_id, a
// redirect_uri the app does not own, or a scope it may not ask for is an
// error, which the page shows the owner instead of sending them anywhere.
// An installed app asking for scopes it holds is sent straight back with
// a code (Prompt.Redirect).
func (s Service) Authorize(ctx context.Context, r Request) (Prompt, error) {
	p, app, grant, approve, key, err := s.prompt(ctx, &r)
	if err != nil {
		return p, err
	}
	if !approve {
		p.Redirect, err = s.issue(ctx, &p, app, grant)
		return p, err
	}
	p.FormToken = FormToken(key, &r, admin.At(s.Clock.Now()).Time)
	return p, nil
}

// Install grants r, as the owner did on the page whose form carried token
// (and, in AWS, with the owner's secret): a code, kept until CodeTTL by the
// service's clock, and the address the owner is sent back to with it,
// signed with the app's secret.
func (s Service) Install(ctx context.Context, r Request, token, ownerSecret string) (string, error) {
	p, app, grant, _, key, err := s.prompt(ctx, &r)
	if err != nil {
		return "", err
	}
	if !FormTokenValid(key, &r, token, admin.At(s.Clock.Now()).Time) {
		return "", errForbidden
	}
	switch {
	case s.Owner.SecretHash != "":
		if !auth.OwnerSecretMatches(s.Owner.SecretHash, ownerSecret) {
			return "", errOwner
		}
	case !s.Owner.Local:
		return "", errNoOwner
	}
	return s.issue(ctx, &p, app, grant)
}

// issue stores a code granting scopes to app as it is now and returns the
// callback that carries it.
func (s Service) issue(ctx context.Context, p *Prompt, app *admin.App, scopes []string) (string, error) {
	r := &p.Request
	now := admin.At(s.Clock.Now()).Time
	code := random("")
	c := Code{AppID: app.ID, Scopes: scopes, RedirectURI: r.RedirectURI, PerUser: r.GrantOption == PerUser,
		ExpiresAt: now.Add(CodeTTL).Unix(), Install: app.TokenHash, Uninstalls: app.Uninstalls}
	k := CodeKey(code)
	// The store may drop the item a day after it expired; until then the
	// exchange judges its expiry by the service's clock.
	it := store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(c), ExpiresAt: c.ExpiresAt + 86400}
	if err := s.Store.Transact(ctx, store.Put(it, store.IfAbsent, 0)); err != nil {
		return "", err
	}
	params := url.Values{
		"code":      {code},
		"host":      {Host(p.Shop.Domain)},
		"shop":      {p.Shop.Domain},
		"timestamp": {strconv.FormatInt(s.AppClock.Now().Unix(), 10)},
	}
	if r.State != "" {
		params.Set("state", r.State)
	}
	return Signed(r.RedirectURI, params, app.SharedSecret), nil
}

// Decline records nothing and tells the app nothing, as Shopify, whose
// owner who cancels an install stays in the shop's admin: the page says
// the app was not installed. The form's token is checked all the same.
func (s Service) Decline(ctx context.Context, r Request, token string) (Prompt, error) {
	p, _, _, _, key, err := s.prompt(ctx, &r)
	if err != nil {
		return p, err
	}
	if !FormTokenValid(key, &r, token, admin.At(s.Clock.Now()).Time) {
		return p, errForbidden
	}
	return p, nil
}

// ExchangeInput is the body of POST /admin/oauth/access_token, for each
// grant: grant_type absent or authorization_code (code, expiring),
// refresh_token (refresh_token), or token exchange (subject_token,
// subject_token_type, requested_token_type, expiring, scope).
type ExchangeInput struct {
	ClientID           string `json:"client_id"`
	ClientSecret       string `json:"client_secret"`
	Code               string `json:"code"`
	GrantType          string `json:"grant_type"`
	Expiring           any    `json:"expiring"`
	RefreshToken       string `json:"refresh_token"`
	SubjectToken       string `json:"subject_token"`
	SubjectTokenType   string `json:"subject_token_type"`
	RequestedTokenType string `json:"requested_token_type"`
	Scope              string `json:"scope"`
}

// Exchange answers a token for any grant of in.
func (s Service) Exchange(ctx context.Context, in ExchangeInput) (Token, error) {
	switch in.GrantType {
	case "", GrantCode:
		return s.ExchangeCode(ctx, in)
	case GrantRefresh:
		return s.Refresh(ctx, in)
	case GrantTokenExchange:
		return s.TokenExchange(ctx, in)
	}
	return Token{}, &Error{400, "unsupported_grant_type", "grant_type must be " + GrantCode + ", " + GrantRefresh + " or " + GrantTokenExchange}
}

// tokenKey is the key offline and expiring tokens are made with.
func (s Service) tokenKey(ctx context.Context) ([]byte, error) {
	if s.TokenKey != nil {
		return s.TokenKey, nil
	}
	return auth.Secret(ctx, s.Store, TokenSecretKey)
}

// client authenticates the app of a refresh or a token exchange, with
// OAuth's errors.
func (s Service) client(ctx context.Context, in *ExchangeInput) (admin.Shop, *admin.App, error) {
	shop, err := auth.ReadShop(ctx, s.Store)
	if err != nil {
		return admin.Shop{}, nil, err
	}
	if in.ClientID == "" {
		return *shop, nil, invalidRequest("client_id", "is required")
	}
	app, err := auth.AppByClientID(ctx, s.Store, in.ClientID)
	switch {
	case admin.ErrorCode(err) == admin.ENOTFOUND:
		return *shop, nil, invalidClient("client_id", "is not the client_id of an app of this shop")
	case err != nil:
		return *shop, nil, err
	case in.ClientSecret == "":
		return *shop, nil, invalidRequest("client_secret", "is required")
	case app.SharedSecret == "" || subtle.ConstantTimeCompare([]byte(in.ClientSecret), []byte(app.SharedSecret)) != 1:
		return *shop, nil, invalidClient("client_secret", "is not the app's secret")
	}
	return *shop, app, nil
}

// putApp writes rec over it, on condition of its version.
func putApp(it store.Item, rec *admin.App) store.Op {
	return store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1, Data: records.Encode(*rec)}, store.IfVersion, it.Version)
}

// changeApp reads the record of app id and lets change decide on it: the
// writes change returns are committed with the changed record, on
// condition of the version read, so that a grant that lost to another
// grant, a refresh or an uninstall is judged again on what they wrote.
// change may answer without writing (write false). onFailed, when set,
// answers a condition failure on another item of the writes.
func (s Service) changeApp(ctx context.Context, id int64, change func(rec *admin.App) (ops []store.Op, write bool, err error),
	onFailed func(error) error) error {
	return records.Retry(ctx, func() (bool, error) {
		var rec admin.App
		it, err := records.Get(ctx, s.Store, auth.AppKey(id), &rec)
		if err != nil {
			return false, err
		}
		ops, write, err := change(&rec)
		if err != nil || !write {
			return false, err
		}
		switch err := s.Store.Transact(ctx, append(ops, putApp(it, &rec))...); {
		case store.FailedOn(err, it.Key()):
			return true, err
		case err != nil && onFailed != nil:
			if answer := onFailed(err); answer != nil {
				return false, answer
			}
			return false, err
		default:
			return false, err
		}
	})
}

// Refresh trades the refresh token of an install's expiring offline
// token for the next pair, rotating both: the access token it replaces is
// revoked, and the refresh token becomes the previous one, which is still
// good until the new access token is first used, so that an app whose
// answer was lost can ask again; it is answered the same pair (the tokens
// are made from the key, the grant's nonce and generation). Concurrent
// refreshes with one token are decided by the app record's version: one
// rotates, the others find the token previous and are answered the pair
// it made. A refresh token used after its replacement's access token was
// used, or past its life by the service's clock, is refused.
func (s Service) Refresh(ctx context.Context, in ExchangeInput) (Token, error) {
	_, app, err := s.client(ctx, &in)
	if err != nil {
		return Token{}, err
	}
	switch {
	case in.RefreshToken == "":
		return Token{}, invalidRequest("refresh_token", "is required")
	case len(in.RefreshToken) > 256:
		return Token{}, invalidGrant("is not valid")
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return Token{}, err
	}
	h := auth.HashToken(in.RefreshToken)
	same := func(a string) bool { return a != "" && subtle.ConstantTimeCompare([]byte(h), []byte(a)) == 1 }
	var out Token
	err = s.changeApp(ctx, app.ID, func(rec *admin.App) ([]store.Op, bool, error) {
		now := admin.At(s.Clock.Now()).Time
		g := rec.Expiring
		var ops []store.Op
		switch {
		case g == nil || !rec.Installed():
			return nil, false, invalidGrant("is not valid: it was revoked (an uninstall) or never issued")
		case same(g.RefreshHash):
			if now.Unix() >= g.RefreshExpires {
				return nil, false, invalidGrant("has expired")
			}
			ops = rotate(rec, key, now, false)
		case same(g.PrevHash):
			if now.Unix() >= g.PrevExpires {
				return nil, false, invalidGrant("has expired")
			}
			var acc admin.App
			_, err := records.Get(ctx, s.Store, auth.TokenKey(g.AccessHash), &acc)
			if admin.ErrorCode(err) == admin.ENOTFOUND || err == nil && !acc.Fresh {
				return nil, false, invalidGrant("was replaced, and the access token issued with its replacement has been used")
			} else if err != nil {
				return nil, false, err
			}
			if now.Unix() < g.AccessExpires {
				out = expiringAnswer(rec, key, now) // a retry: the same pair
				return nil, false, nil
			}
			// The pair it made expired unused: the next one, the previous
			// refresh token kept as it is.
			ops = rotate(rec, key, now, true)
		default:
			return nil, false, invalidGrant("is not valid: it was replaced, revoked or never issued")
		}
		out = expiringAnswer(rec, key, now) // answered only if the writes commit
		return ops, true, nil
	}, nil)
	return out, err
}

// TokenExchange trades a session token (App Bridge's JWT, signed with the
// app's secret) for an online or offline token, expiring or not, of an
// installed app: installing stays the owner's decision, through the
// authorization page, and an app holding its secret can sign any session
// token. The token holds what the app was granted (scope may narrow an
// online one). With subject_token_type offline access token it migrates
// the install's non-expiring offline token to an expiring one, revoking
// it. The session token's times are checked against the app's clock (the
// machine's), as the callback's timestamp.
func (s Service) TokenExchange(ctx context.Context, in ExchangeInput) (Token, error) {
	shop, app, err := s.client(ctx, &in)
	if err != nil {
		return Token{}, err
	}
	expiring := ParseFlag(in.Expiring)
	if expiring.Bad {
		return Token{}, invalidRequest("expiring", "must be 0 or 1")
	}
	online := false
	switch in.RequestedTokenType {
	case TokenTypeOnline:
		online = true
	case TokenTypeOffline:
	case "":
		return Token{}, invalidRequest("requested_token_type", "is required")
	default:
		return Token{}, invalidRequest("requested_token_type", "must be "+TokenTypeOnline+" or "+TokenTypeOffline)
	}
	var asked []string
	if in.Scope != "" {
		if asked, err = ParseScopes(in.Scope); err != nil {
			return Token{}, &Error{400, "invalid_scope", "scope " + strings.TrimPrefix(err.Error(), "scope ")}
		}
	}
	if in.SubjectToken == "" {
		return Token{}, invalidRequest("subject_token", "is required")
	}
	migrate := false
	switch in.SubjectTokenType {
	case TokenTypeID:
		c, err := VerifySession(in.SubjectToken, app.SharedSecret, app.APIKey, shop.Domain, s.AppClock.Now())
		if err != nil {
			return Token{}, err
		}
		if c.Sub != strconv.FormatInt(shop.ID, 10) {
			return Token{}, invalidSubject("has a sub that is not a user of this shop")
		}
	case TokenTypeOffline:
		switch {
		case online:
			return Token{}, invalidRequest("requested_token_type", "must be "+TokenTypeOffline+" to migrate an offline token")
		case !expiring.Set:
			return Token{}, invalidRequest("expiring", "must be 1 to migrate a non-expiring offline token")
		case len(in.SubjectToken) > 512:
			return Token{}, invalidSubject("is not the app's non-expiring offline token on this shop")
		}
		migrate = true
	case "":
		return Token{}, invalidRequest("subject_token_type", "is required")
	default:
		return Token{}, invalidRequest("subject_token_type", "must be "+TokenTypeID+" or "+TokenTypeOffline)
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return Token{}, err
	}
	var out Token
	subject := auth.TokenKey(auth.HashToken(in.SubjectToken))
	err = s.changeApp(ctx, app.ID, func(rec *admin.App) ([]store.Op, bool, error) {
		if !rec.Installed() {
			return nil, false, &Error{400, "invalid_grant", "client_id names an app that is not installed on this shop: the owner installs it through /admin/oauth/authorize first"}
		}
		if extra := beyond(rec.Scopes, asked); len(extra) > 0 {
			return nil, false, &Error{400, "invalid_scope", "scope asks for scopes the app was not granted: " + strings.Join(extra, ", ")}
		}
		now := admin.At(s.Clock.Now()).Time
		var ops []store.Op
		var tok Token
		switch {
		case migrate:
			h := auth.HashToken(in.SubjectToken)
			switch {
			case !rec.OfflineRevoked && subtle.ConstantTimeCompare([]byte(h), []byte(rec.TokenHash)) == 1:
				rec.OfflineRevoked = true
			case rec.SeedTokenHash != "" && subtle.ConstantTimeCompare([]byte(h), []byte(rec.SeedTokenHash)) == 1:
				rec.SeedTokenHash = ""
			default:
				return nil, false, invalidSubject("is not the app's non-expiring offline token on this shop")
			}
			ops = append([]store.Op{store.Delete(auth.TokenKey(h), store.IfPresent, 0)}, startExpiring(rec, key, now)...)
			tok = expiringAnswer(rec, key, now)
		default:
			scopes := asked
			if !online || len(scopes) == 0 {
				scopes = rec.Scopes
			}
			ops, tok = grant(rec, &Code{AppID: rec.ID, Scopes: scopes, PerUser: online}, key, now, expiring.Set)
		}
		out = tok // answered only if the writes commit
		return ops, true, nil
	}, func(err error) error {
		if migrate && store.FailedOn(err, subject) {
			return invalidSubject("is not the app's non-expiring offline token on this shop")
		}
		return nil
	})
	if err != nil {
		return Token{}, err
	}
	if online {
		perUserAnswer(&out, &shop)
	}
	return out, nil
}

// perUserAnswer adds what a per-user token's answer carries.
func perUserAnswer(out *Token, shop *admin.Shop) {
	secs := int64(OnlineTTL / time.Second)
	scope := out.Scope
	out.ExpiresIn, out.AssociatedUserScope, out.AssociatedUser = &secs, &scope, owner(shop)
}

// startExpiring gives rec a new expiring grant (a fresh nonce, its first
// pair), revoking the access token of the one it had.
func startExpiring(rec *admin.App, key []byte, now time.Time) []store.Op {
	var ops []store.Op
	if old := rec.Expiring; old != nil && old.AccessHash != "" {
		ops = append(ops, store.Delete(auth.TokenKey(old.AccessHash), store.Always, 0))
	}
	rec.Expiring = &admin.ExpiringGrant{Nonce: random("")}
	return append(ops, rotate(rec, key, now, false)...)
}

// rotate moves rec's expiring grant to its next pair: the access token
// it replaces is revoked, a new one is written (Fresh) and expires after
// AccessTTL, the refresh token after RefreshTTL; the refresh token
// replaced becomes the previous one, unless keepPrev (the previous one
// stays).
func rotate(rec *admin.App, key []byte, now time.Time, keepPrev bool) []store.Op {
	g := rec.Expiring
	var ops []store.Op
	if g.AccessHash != "" {
		ops = append(ops, store.Delete(auth.TokenKey(g.AccessHash), store.Always, 0))
	}
	if !keepPrev && g.RefreshHash != "" {
		g.PrevHash, g.PrevExpires = g.RefreshHash, g.RefreshExpires
	}
	g.Gen++
	g.AccessHash = auth.HashToken(Derived(key, "access", rec.ID, g.Nonce, g.Gen))
	g.AccessExpires = now.Add(AccessTTL).Unix()
	g.RefreshHash = auth.HashToken(Derived(key, "refresh", rec.ID, g.Nonce, g.Gen))
	g.RefreshExpires = now.Add(RefreshTTL).Unix()
	return append(ops, putAccess(rec, true))
}

// putAccess writes the copy of rec kept under its expiring access token:
// fresh until its first use.
func putAccess(rec *admin.App, fresh bool) store.Op {
	g := rec.Expiring
	holder := *rec
	holder.TokenHash, holder.ExpiresAt, holder.Fresh, holder.Online, holder.SeedTokenHash, holder.Expiring = g.AccessHash, g.AccessExpires, fresh, nil, "", nil
	tk := auth.TokenKey(g.AccessHash)
	return store.Put(store.Item{PK: tk.PK, SK: tk.SK, Version: 1, Data: records.Encode(holder), ExpiresAt: g.AccessExpires + 86400}, store.Always, 0)
}

// expiringAnswer is the answer of rec's expiring grant at now.
func expiringAnswer(rec *admin.App, key []byte, now time.Time) Token {
	g := rec.Expiring
	in, rin := g.AccessExpires-now.Unix(), g.RefreshExpires-now.Unix()
	return Token{AccessToken: Derived(key, "access", rec.ID, g.Nonce, g.Gen), Scope: strings.Join(rec.Scopes, ","), ExpiresIn: &in,
		RefreshToken: Derived(key, "refresh", rec.ID, g.Nonce, g.Gen), RefreshTokenExpiresIn: &rin}
}

// ExchangeCode trades a code for a token, in one transaction: the code deleted
// on condition that it is still there (so of concurrent exchanges of one
// code exactly one succeeds), the token stored under its hash, and the app
// record on condition of its version, which an uninstall writes too, so
// that a grant and an uninstall never both succeed on what the other
// changed. The code must find the app's install as it was when it was
// issued. An offline grant installs the app (a new token and the install's
// event) or, on an installed app, answers the same token with the scopes
// widened; a per-user one adds a token bounded by the app's scopes. The
// token is answered and never kept in clear. With expiring, an offline
// grant answers an expiring offline token and its refresh token.
func (s Service) ExchangeCode(ctx context.Context, in ExchangeInput) (Token, error) {
	shop, app, err := s.shopAndApp(ctx, in.ClientID)
	if err != nil {
		return Token{}, err
	}
	expiring := ParseFlag(in.Expiring)
	switch {
	case expiring.Bad:
		return Token{}, admin.BadParam("expiring", "must be 0 or 1")
	case in.ClientSecret == "":
		return Token{}, admin.BadParam("client_secret", "is required")
	case app.SharedSecret == "" || subtle.ConstantTimeCompare([]byte(in.ClientSecret), []byte(app.SharedSecret)) != 1:
		return Token{}, admin.BadParam("client_secret", "is not the app's secret")
	case in.Code == "":
		return Token{}, admin.BadParam("code", "is required")
	case len(in.Code) > 256:
		return Token{}, errCode
	}
	var c Code
	if _, err := records.Get(ctx, s.Store, CodeKey(in.Code), &c); admin.ErrorCode(err) == admin.ENOTFOUND {
		return Token{}, errCode
	} else if err != nil {
		return Token{}, err
	}
	now := admin.At(s.Clock.Now()).Time
	if c.AppID != app.ID || now.Unix() >= c.ExpiresAt {
		return Token{}, errCode
	}
	key, err := s.tokenKey(ctx)
	if err != nil {
		return Token{}, err
	}
	var out Token
	err = s.changeApp(ctx, app.ID, func(rec *admin.App) ([]store.Op, bool, error) {
		if !c.current(rec) {
			return nil, false, errInstall
		}
		installs := !c.PerUser && !rec.Installed()
		ops, tok := grant(rec, &c, key, now, expiring.Set)
		ops = append([]store.Op{store.Delete(CodeKey(in.Code), store.IfPresent, 0)}, ops...)
		if installs {
			ops = append(ops, events.Ops(events.OfApp(s.IDs, rec.ID, rec.Name, events.Installed))...)
		}
		out = tok // answered only if the writes commit
		return ops, true, nil
	}, func(err error) error {
		if store.FailedOn(err, CodeKey(in.Code)) {
			return errCode // exchanged by another request first
		}
		return nil
	})
	if err != nil {
		return Token{}, err
	}
	if c.PerUser {
		perUserAnswer(&out, &shop)
	}
	return out, nil
}

// current reports whether the code may still be exchanged on rec: no
// uninstall since it was issued, an offline code issued on an installed
// app still finds that install, and a per-user one finds the app installed
// holding the scopes it grants.
func (c *Code) current(rec *admin.App) bool {
	switch {
	case rec.Uninstalls != c.Uninstalls:
		return false
	case c.PerUser:
		return rec.Installed() && rec.TokenHash == c.Install && len(beyond(rec.Scopes, c.Scopes)) == 0
	default:
		return c.Install == "" || rec.TokenHash == c.Install
	}
}

// grant changes rec for the code's grant and returns the writes of its
// tokens (but rec's own) and the answer. An expiring offline grant starts
// a new expiring grant; on an app not installed it installs it without a
// valid non-expiring token (the install's TokenHash still names it).
func grant(rec *admin.App, c *Code, key []byte, now time.Time, expiring bool) ([]store.Op, Token) {
	if c.PerUser {
		return grantPerUser(rec, c, now)
	}
	var ops []store.Op
	tok := Token{}
	switch {
	case expiring:
		if !rec.Installed() {
			rec.InstallNonce = random("")
			rec.TokenHash = auth.HashToken(OfflineToken(key, rec.ID, rec.InstallNonce))
			rec.OfflineRevoked = true
		}
	case rec.Installed() && !rec.OfflineRevoked && rec.InstallNonce != "" && auth.HashToken(OfflineToken(key, rec.ID, rec.InstallNonce)) == rec.TokenHash:
		// A re-authorization: the same token, the scopes widened.
		tok.AccessToken = OfflineToken(key, rec.ID, rec.InstallNonce)
	default:
		if rec.Installed() && !rec.OfflineRevoked {
			// The seed's token cannot be answered again: it stays valid
			// beside the one issued now, until an uninstall.
			rec.SeedTokenHash = rec.TokenHash
		}
		rec.InstallNonce, rec.OfflineRevoked = random(""), false
		tok.AccessToken = OfflineToken(key, rec.ID, rec.InstallNonce)
		rec.TokenHash = auth.HashToken(tok.AccessToken)
	}
	rec.Scopes, _ = ParseScopes(strings.Join(append(slices.Clone(rec.Scopes), c.Scopes...), ","))
	tok.Scope = strings.Join(rec.Scopes, ",")
	switch {
	case expiring:
		ops = startExpiring(rec, key, now)
		tok = expiringAnswer(rec, key, now)
	case rec.Expiring != nil:
		// The expiring token keeps up with the scopes; its previous refresh
		// token is no longer good.
		ops = append(ops, putAccess(rec, false))
	}
	// Every offline token holds a copy of the record: rewritten, guarded by
	// the record's version in the same transaction.
	live := []string{rec.SeedTokenHash}
	if !rec.OfflineRevoked {
		live = append(live, rec.TokenHash)
	}
	for _, h := range live {
		if h != "" {
			holder := *rec
			holder.TokenHash = h
			tk := auth.TokenKey(h)
			ops = append(ops, store.Put(store.Item{PK: tk.PK, SK: tk.SK, Version: 1, Data: records.Encode(holder)}, store.Always, 0))
		}
	}
	return ops, tok
}

// grantPerUser adds a per-user token to rec, with the code's scopes (which
// the app holds), expiring after OnlineTTL; the app's own token and scopes
// stay as they are.
func grantPerUser(rec *admin.App, c *Code, now time.Time) ([]store.Op, Token) {
	var ops []store.Op
	tok := Token{Scope: strings.Join(c.Scopes, ","), AccessToken: random("shpua_")}
	hash := auth.HashToken(tok.AccessToken)
	expires := now.Add(OnlineTTL).Unix()
	holder := *rec // the copy kept under the token
	holder.TokenHash, holder.Scopes, holder.ExpiresAt, holder.Online, holder.SeedTokenHash = hash, c.Scopes, expires, nil, ""
	live := rec.Online[:0:0]
	for _, o := range rec.Online {
		if o.ExpiresAt > now.Unix() {
			live = append(live, o)
		}
	}
	for len(live) >= MaxOnline {
		ops = append(ops, store.Delete(auth.TokenKey(live[0].Hash), store.Always, 0))
		live = live[1:]
	}
	rec.Online = append(live, admin.OnlineToken{Hash: hash, ExpiresAt: expires})
	tk := auth.TokenKey(hash)
	item := store.Item{PK: tk.PK, SK: tk.SK, Version: 1, Data: records.Encode(holder), ExpiresAt: expires + 86400}
	return append(ops, store.Put(item, store.IfAbsent, 0)), tok
}

// AccessScopes are the scopes the calling token holds.
func AccessScopes(app *admin.App) []AccessScope {
	out := make([]AccessScope, len(app.Scopes))
	for i, s := range app.Scopes {
		out[i] = AccessScope{Handle: s}
	}
	return out
}

// MintSession is a session token of the app whose client_id is clientID
// for the shop's user userID (0: its owner, the one user), as App Bridge
// gives an embedded app's page: the local runner's stand-in
// (POST /_local/session_token), never served in AWS. It is issued at the
// app's clock (the machine's), which the exchange checks it against.
func (s Service) MintSession(ctx context.Context, clientID string, userID int64) (string, SessionClaims, error) {
	shop, app, err := s.shopAndApp(ctx, clientID)
	if err != nil {
		return "", SessionClaims{}, err
	}
	switch {
	case userID == 0:
		userID = shop.ID
	case userID != shop.ID:
		return "", SessionClaims{}, admin.BadParam("user_id", "is not a user of this shop: its one user is the owner, id "+strconv.FormatInt(shop.ID, 10))
	}
	c := NewSessionClaims(shop.Domain, app.APIKey, userID, s.AppClock.Now())
	return SignSession(c, app.SharedSecret), c, nil
}
