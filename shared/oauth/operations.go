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
	Clock clock.Clock
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service { return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock} }

// Prompt is what the authorization page shows the owner: the shop, the app,
// the scopes it asks for, and the form that carries the request on.
type Prompt struct {
	Shop      admin.Shop
	AppName   string
	Request   Request
	Scopes    []string
	Lines     []ScopeLine // the scopes as the page shows them
	FormToken string
}

var (
	errForbidden = admin.Errorf(admin.EFORBIDDEN, "Invalid form token: reload the authorization page")
	errCode      = admin.BadParam("code", "was not found, has expired or was already used")
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

// prompt checks r and returns the page that asks the owner about it.
func (s Service) prompt(ctx context.Context, r *Request) (Prompt, *admin.App, []byte, error) {
	shop, app, err := s.shopAndApp(ctx, r.ClientID)
	if err != nil {
		return Prompt{}, nil, nil, err
	}
	scopes, err := r.Check(app)
	if err != nil {
		return Prompt{}, nil, nil, err
	}
	key, err := auth.Secret(ctx, s.Store, FormKey)
	if err != nil {
		return Prompt{}, nil, nil, err
	}
	p := Prompt{Shop: shop, AppName: app.Name, Request: *r, Scopes: scopes, Lines: Describe(scopes)}
	return p, app, key, nil
}

// Authorize returns the authorization page of r: an unknown client_id, a
// redirect_uri the app does not own, or an unknown scope is an error,
// which the page shows the owner instead of sending them anywhere.
func (s Service) Authorize(ctx context.Context, r Request) (Prompt, error) {
	p, _, key, err := s.prompt(ctx, &r)
	if err != nil {
		return p, err
	}
	p.FormToken = FormToken(key, &r, admin.At(s.Clock.Now()).Time)
	return p, nil
}

// Install grants r, as the owner did on the page whose form carried token:
// a code, kept until CodeTTL by the service's clock, and the address the
// owner is sent back to with it, signed with the app's secret.
func (s Service) Install(ctx context.Context, r Request, token string) (string, error) {
	p, app, key, err := s.prompt(ctx, &r)
	if err != nil {
		return "", err
	}
	now := admin.At(s.Clock.Now()).Time
	if !FormTokenValid(key, &r, token, now) {
		return "", errForbidden
	}
	code := random("")
	c := Code{AppID: app.ID, Scopes: p.Scopes, RedirectURI: r.RedirectURI, PerUser: r.GrantOption == PerUser,
		ExpiresAt: now.Add(CodeTTL).Unix()}
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
		"timestamp": {strconv.FormatInt(now.Unix(), 10)},
	}
	if r.State != "" {
		params.Set("state", r.State)
	}
	return Signed(r.RedirectURI, params, app.SharedSecret)
}

// Decline records nothing and tells the app nothing, as Shopify, whose
// owner who cancels an install stays in the shop's admin: the page says
// the app was not installed. The form's token is checked all the same.
func (s Service) Decline(ctx context.Context, r Request, token string) (Prompt, error) {
	p, _, key, err := s.prompt(ctx, &r)
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
// code exactly one succeeds), the token stored under its hash, the app
// record with the granted scopes (on condition of its version), the app's
// previous token revoked (an offline grant replaces it) and the install's
// event. The token is answered once and never kept in clear.
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
	var out Token
	err = records.Retry(ctx, func() (bool, error) {
		var rec admin.App
		it, err := records.Get(ctx, s.Store, auth.AppKey(app.ID), &rec)
		if err != nil {
			return false, err
		}
		ops, tok := grant(&rec, &c, now)
		ops = append([]store.Op{store.Delete(CodeKey(in.Code), store.IfPresent, 0)}, ops...)
		ops = append(ops, store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1, Data: records.Encode(rec)}, store.IfVersion, it.Version))
		if !c.PerUser {
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

// grant changes rec for the code's grant and returns the writes of its new
// token (but rec's own) and the answer.
func grant(rec *admin.App, c *Code, now time.Time) ([]store.Op, Token) {
	var ops []store.Op
	tok := Token{Scope: strings.Join(c.Scopes, ",")}
	holder := *rec // the copy kept under the token
	if c.PerUser {
		tok.AccessToken = random("shpua_")
		hash := auth.HashToken(tok.AccessToken)
		expires := now.Add(OnlineTTL).Unix()
		// The per-user token acts with the scopes granted; the app's own
		// token and scopes stay as they are.
		holder.TokenHash, holder.Scopes, holder.ExpiresAt, holder.Online = hash, c.Scopes, expires, nil
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
	} else {
		tok.AccessToken = random("shpat_")
		if rec.TokenHash != "" {
			ops = append(ops, store.Delete(auth.TokenKey(rec.TokenHash), store.Always, 0)) // a reinstall replaces the token
		}
		rec.TokenHash, rec.Scopes = auth.HashToken(tok.AccessToken), slices.Clone(c.Scopes)
		holder = *rec
	}
	tk := auth.TokenKey(holder.TokenHash)
	item := store.Item{PK: tk.PK, SK: tk.SK, Version: 1, Data: records.Encode(holder)}
	if holder.ExpiresAt != 0 {
		item.ExpiresAt = holder.ExpiresAt + 86400
	}
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
