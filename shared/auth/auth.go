// Package auth keeps the shop and its apps in the store and resolves access
// tokens. Tokens are kept only as SHA-256 hashes: they are random secrets of
// high entropy, so an unsalted hash lets a request find its app with one
// GetItem while a leaked table reveals no usable token.
package auth

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Item keys.
var ShopKey = store.Key{PK: "shop", SK: "shop"}

// TokenKey addresses the app record stored under the hash of its token.
func TokenKey(hash string) store.Key { return store.Key{PK: "token", SK: hash} }

// AppKey addresses an app by id (for signing webhooks, uninstalling).
func AppKey(id int64) store.Key { return store.Key{PK: "app", SK: records.IDSK(id)} }

// ClientKey addresses the id of the app whose OAuth client_id (api_key) is
// clientID: written with the app record by the seed load.
func ClientKey(clientID string) store.Key { return store.Key{PK: "app#client", SK: clientID} }

// ClientApp is the item under ClientKey.
type ClientApp struct {
	AppID int64 `json:"app_id"`
}

// AppByClientID reads the app whose client_id is clientID (two GetItems);
// admin.NotFound when there is none.
func AppByClientID(ctx context.Context, st store.Store, clientID string) (*admin.App, error) {
	if clientID == "" || len(clientID) > 255 {
		return nil, admin.NotFound
	}
	var c ClientApp
	if _, err := records.Get(ctx, st, ClientKey(clientID), &c); err != nil {
		return nil, err
	}
	return App(ctx, st, c.AppID)
}

// HashToken returns the stored form of a token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// Identity implements httpapi.Identity on the store.
type Identity struct {
	st  store.Store
	clk clock.Clock // per-user tokens expire by it
	// ttl is how long a token's app is used without reading its item
	// again (TokenTTL in AWS); 0 reads the item on every call and decodes
	// it only when it changed (the local runner: a revocation holds at
	// once).
	ttl time.Duration
	// writes, without a TTL over the embedded store, counts its writes:
	// a token read while it stood where it stands is unchanged, with no
	// read (a write of any item, such as a revocation, makes the next call
	// read it again).
	writes writeCounter

	tokMu  sync.RWMutex
	tokens map[[sha256.Size]byte]*knownToken

	knownShop atomic.Pointer[knownShop]
	mu        sync.Mutex
	shop      *admin.Shop
	shopUntil time.Time
	cursorKey []byte
}

// TokenTTL is how long a process in AWS keeps a token's app without
// reading its item again: a revoked, uninstalled, refreshed or replaced
// token (offline, online or expiring; REST or GraphQL) is refused by every
// instance within TokenTTL of its revocation. Expiry itself is judged on
// every call, by the service's clock.
const TokenTTL = time.Second

// maxKnownTokens bounds the cache: past it, it starts again empty. Only
// tokens that authenticated enter it.
const maxKnownTokens = 4096

// knownToken is a token's app as last read: its item's Data, to tell
// whether it changed, and until when it may be used unread (ttl > 0), or
// while the store's writes stay at writes.
type knownToken struct {
	app    admin.App
	data   []byte
	until  time.Time
	writes uint64
}

type knownShop struct {
	shop  *admin.Shop
	until time.Time
}

// writeCounter is the embedded store's count of its writes
// (boltstore.Store.Writes).
type writeCounter interface{ Writes() uint64 }

// CursorKeyKey holds the shop's page_info signing key: 32 random bytes (in
// hex) made
// by the first process that needs them (IfAbsent, so every process ends up
// with the same key) and never changed, so cursors outlive deploys.
var CursorKeyKey = store.Key{PK: "secret", SK: "page_info"}

// CursorKey returns the page_info signing key: one GetItem per process.
func (id *Identity) CursorKey(ctx context.Context) ([]byte, error) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.cursorKey != nil {
		return id.cursorKey, nil
	}
	key, err := Secret(ctx, id.st, CursorKeyKey)
	if err == nil {
		id.cursorKey = key
	}
	return key, err
}

// Secret returns the shop's signing key kept under k: the hex of 32
// random bytes, made by the first process that needs it (IfAbsent, so
// every process ends up with the same key) and never changed.
func Secret(ctx context.Context, st store.Store, k store.Key) ([]byte, error) {
	for range 3 {
		it, err := st.Get(ctx, k)
		if err == nil {
			return it.Data, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		fresh := make([]byte, 64) // the hex of 32 random bytes: Data is text
		var raw [32]byte
		rand.Read(raw[:])
		hex.Encode(fresh, raw[:])
		err = st.Transact(ctx, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: fresh}, store.IfAbsent, 0))
		if err == nil {
			return fresh, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return nil, err
		}
		// Another process made the key first: read theirs.
	}
	return nil, errors.New("auth: a signing key cannot be read")
}

// ShopTTL bounds how stale the cached shop record may be. The shop has no
// endpoint of its own; it changes only by import.
const ShopTTL = time.Minute

// NewIdentity returns the store-backed identity, expiring per-user tokens
// by clk; it reads a token's item on every call (the local runner's: a
// revocation holds at once).
func NewIdentity(st store.Store, clk clock.Clock) *Identity { return NewCachingIdentity(st, clk, 0) }

// NewCachingIdentity is NewIdentity keeping each token's app for ttl
// (TokenTTL) by clk before reading it again: where other processes write
// the table (Lambda), which is also the bound on a revocation there.
func NewCachingIdentity(st store.Store, clk clock.Clock, ttl time.Duration) *Identity {
	id := &Identity{st: st, clk: clk, ttl: ttl}
	if wc, ok := store.Innermost(st).(writeCounter); ok && ttl == 0 {
		id.writes = wc
	}
	return id
}

// AppByToken finds the app holding token: one GetItem, none while the
// identity's TTL keeps it or the embedded store wrote nothing since, and
// no decoding while the item is unchanged.
// The app answered is the caller's own copy.
func (id *Identity) AppByToken(ctx context.Context, token string) (*admin.App, error) {
	if len(token) > 512 {
		return nil, admin.Unauthorized
	}
	sum := sha256.Sum256([]byte(token))
	now := id.clk.Now()
	var writes uint64
	if id.writes != nil {
		writes = id.writes.Writes() // before the read: a write after it moves it
	}
	id.tokMu.RLock()
	known := id.tokens[sum]
	id.tokMu.RUnlock()
	if known != nil && (now.Before(known.until) || id.writes != nil && known.writes == writes) {
		app := known.app
		return &app, id.valid(&app, now)
	}
	hash := hex.EncodeToString(sum[:])
	it, err := id.st.Get(ctx, TokenKey(hash))
	if errors.Is(err, store.ErrNotFound) {
		id.forget(sum)
		return nil, admin.Unauthorized
	}
	if err != nil {
		return nil, err
	}
	var app admin.App
	if known != nil && bytes.Equal(known.data, it.Data) {
		app = known.app
	} else if err := records.Decode(&it, &app); err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(app.TokenHash), []byte(hash)) != 1 {
		return nil, admin.Unauthorized
	}
	if err := id.valid(&app, now); err != nil {
		return nil, err
	}
	if app.Fresh {
		// An expiring offline token's first use: from now on the refresh
		// token it replaced is refused (shared/oauth). Kept once marked.
		if err := id.markUsed(ctx, it, &app); err != nil {
			return nil, err
		}
		return &app, nil
	}
	k := &knownToken{app: app, data: it.Data, writes: writes}
	if id.ttl > 0 {
		k.until = now.Add(id.ttl)
	}
	id.remember(sum, k)
	return &app, nil
}

// valid refuses an app's token that expired by now.
func (id *Identity) valid(app *admin.App, now time.Time) error {
	now = admin.At(now).Time
	switch {
	case app.ExpiresAt != 0 && now.Unix() >= app.ExpiresAt:
		// A per-user or expiring offline token expires by the service's clock.
		return admin.Unauthorized
	case app.ExpiresAt == 0 && app.Public && !now.Before(admin.NonExpiringDeadline):
		// A public app's non-expiring offline token, past Shopify's
		// deadline: invalidated, as Shopify's are.
		return admin.Unauthorized
	}
	return nil
}

func (id *Identity) remember(sum [sha256.Size]byte, k *knownToken) {
	id.tokMu.Lock()
	defer id.tokMu.Unlock()
	if id.tokens == nil || len(id.tokens) >= maxKnownTokens {
		id.tokens = make(map[[sha256.Size]byte]*knownToken)
	}
	id.tokens[sum] = k
}

func (id *Identity) forget(sum [sha256.Size]byte) {
	id.tokMu.Lock()
	defer id.tokMu.Unlock()
	delete(id.tokens, sum)
}

// markUsed writes the copy under an expiring offline token without its
// Fresh mark, on condition of its version: a refresh that revoked the
// token meanwhile wins, and the call is 401.
func (id *Identity) markUsed(ctx context.Context, it store.Item, app *admin.App) error {
	app.Fresh = false
	next := store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1, Data: records.Encode(*app), ExpiresAt: it.ExpiresAt}
	err := id.st.Transact(ctx, store.Put(next, store.IfVersion, it.Version))
	if !errors.Is(err, store.ErrConditionFailed) {
		return err
	}
	var again admin.App
	if _, err := records.Get(ctx, id.st, it.Key(), &again); admin.ErrorCode(err) == admin.ENOTFOUND {
		return admin.Unauthorized
	} else if err != nil {
		return err
	}
	return nil // another request marked it first
}

// ReadShop reads the shop record: one GetItem.
func ReadShop(ctx context.Context, st store.Store) (*admin.Shop, error) {
	var shop admin.Shop
	if _, err := records.Get(ctx, st, ShopKey, &shop); err != nil {
		return nil, err
	}
	return &shop, nil
}

// Shop returns the shop, cached for ShopTTL.
func (id *Identity) Shop(ctx context.Context) (*admin.Shop, error) {
	if k := id.knownShop.Load(); k != nil && time.Now().Before(k.until) {
		return k.shop, nil // no lock on every call
	}
	id.mu.Lock()
	defer id.mu.Unlock()
	if id.shop != nil && time.Now().Before(id.shopUntil) {
		return id.shop, nil
	}
	shop, err := ReadShop(ctx, id.st)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return nil, errors.New("auth: the store holds no shop record; load a seed file")
	}
	if err != nil {
		return nil, err
	}
	id.shop, id.shopUntil = shop, time.Now().Add(ShopTTL)
	id.knownShop.Store(&knownShop{shop, id.shopUntil})
	return id.shop, nil
}

// App reads an app by id.
func App(ctx context.Context, st store.Store, appID int64) (*admin.App, error) {
	var app admin.App
	if _, err := records.Get(ctx, st, AppKey(appID), &app); err != nil {
		return nil, err
	}
	return &app, nil
}
