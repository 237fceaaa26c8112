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

// ExchangeInput is the body of POST /admin/oauth/access_token.
type ExchangeInput struct {
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	Code         string `json:"code"`
}

// Exchange trades a code for a token, in one transaction: the code deleted
// on condition that it is still there (so of concurrent exchanges of one
// code exactly one succeeds), the token stored under its hash, and the app
// record on condition of its version, which an uninstall writes too, so
// that a grant and an uninstall never both succeed on what the other
// changed. The code must find the app's install as it was when it was
// issued. An offline grant installs the app (a new token and the install's
// event) or, on an installed app, answers the same token with the scopes
// widened; a per-user one adds a token bounded by the app's scopes. The
// token is answered and never kept in clear.
func (s Service) Exchange(ctx context.Context, in ExchangeInput) (Token, error) {
	shop, app, err := s.shopAndApp(ctx, in.ClientID)
	if err != nil {
		return Token{}, err
	}
	switch {
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
	key := s.TokenKey
	if key == nil && !c.PerUser {
		if key, err = auth.Secret(ctx, s.Store, TokenSecretKey); err != nil {
			return Token{}, err
		}
	}
	var out Token
	err = records.Retry(ctx, func() (bool, error) {
		var rec admin.App
		it, err := records.Get(ctx, s.Store, auth.AppKey(app.ID), &rec)
		if err != nil {
			return false, err
		}
		if !c.current(&rec) {
			return false, errInstall
		}
		installs := !c.PerUser && !rec.Installed()
		ops, tok := grant(&rec, &c, key, now)
		ops = append([]store.Op{store.Delete(CodeKey(in.Code), store.IfPresent, 0)}, ops...)
		ops = append(ops, store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1, Data: records.Encode(rec)}, store.IfVersion, it.Version))
		if installs {
			ops = append(ops, events.Ops(events.OfApp(s.IDs, rec.ID, rec.Name, events.Installed))...)
		}
		switch err := s.Store.Transact(ctx, ops...); {
		case store.FailedOn(err, CodeKey(in.Code)):
			return false, errCode // exchanged by another request first
		case store.FailedOn(err, it.Key()):
			return true, err // the app record changed meanwhile (an uninstall, another grant)
		case err != nil:
			return false, err
		}
		out = tok
		return false, nil
	})
	if err != nil {
		return Token{}, err
	}
	if c.PerUser {
		secs := int64(OnlineTTL / time.Second)
		scope := out.Scope
		out.ExpiresIn, out.AssociatedUserScope, out.AssociatedUser = &secs, &scope, owner(&shop)
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
// tokens (but rec's own) and the answer.
func grant(rec *admin.App, c *Code, key []byte, now time.Time) ([]store.Op, Token) {
	if c.PerUser {
		return grantPerUser(rec, c, now)
	}
	var ops []store.Op
	tok := Token{}
	if rec.Installed() && rec.InstallNonce != "" && auth.HashToken(OfflineToken(key, rec.ID, rec.InstallNonce)) == rec.TokenHash {
		// A re-authorization: the same token, the scopes widened.
		tok.AccessToken = OfflineToken(key, rec.ID, rec.InstallNonce)
	} else {
		if rec.Installed() {
			// The seed's token cannot be answered again: it stays valid
			// beside the one issued now, until an uninstall.
			rec.SeedTokenHash = rec.TokenHash
		}
		rec.InstallNonce = random("")
		tok.AccessToken = OfflineToken(key, rec.ID, rec.InstallNonce)
		rec.TokenHash = auth.HashToken(tok.AccessToken)
	}
	rec.Scopes, _ = ParseScopes(strings.Join(append(slices.Clone(rec.Scopes), c.Scopes...), ","))
	tok.Scope = strings.Join(rec.Scopes, ",")
	// Every offline token holds a copy of the record: rewritten, guarded by
	// the record's version in the same transaction.
	for _, h := range []string{rec.TokenHash, rec.SeedTokenHash} {
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
