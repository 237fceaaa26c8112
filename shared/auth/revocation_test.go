package auth_test

import (
	"context"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Every kind of token is an item under its hash: what differs is its
// expiry (an online token's, an expiring offline token's) and the Fresh
// mark of an expiring token not used yet. Each kind, revoked (its item
// deleted, as an uninstall, a refresh or a new exchange does), is refused
// by an instance that keeps tokens for auth.TokenTTL once that long has
// passed, and at once by one that reads on every call (the local
// runner's). Expiry is judged on every call, cached or not.
func TestRevocationBound(t *testing.T) {
	start := time.Unix(1_800_000_000, 0)
	kinds := []struct {
		name string
		app  admin.App
	}{
		{"offline", admin.App{ID: 1}},
		{"online", admin.App{ID: 2, ExpiresAt: start.Add(time.Hour).Unix()}},
		{"expiring", admin.App{ID: 3, ExpiresAt: start.Add(time.Hour).Unix(), Fresh: true}},
	}
	ctx := context.Background()
	for _, s := range apitest.Stores {
		for _, k := range kinds {
			t.Run(s.Name+"/"+k.name, func(t *testing.T) {
				st := s.Open(t)
				clk := clock.NewFixed(start)
				token := "token-of-kind-" + k.name + "-0123456789abcdef"
				app := k.app
				app.TokenHash = auth.HashToken(token)
				key := auth.TokenKey(app.TokenHash)
				if err := st.Transact(ctx, store.Put(store.Item{PK: key.PK, SK: key.SK, Version: 1, Data: records.Encode(app)}, store.IfAbsent, 0)); err != nil {
					t.Fatal(err)
				}
				aws := auth.NewCachingIdentity(st, clk, auth.TokenTTL)
				local := auth.NewIdentity(st, clk)
				for range 2 { // the second kept, an expiring token's marked used
					for _, id := range []*auth.Identity{aws, local} {
						got, err := id.AppByToken(ctx, token)
						if err != nil || got.ID != app.ID || got.Fresh {
							t.Fatalf("before: %+v %v", got, err)
						}
					}
				}
				clk.Advance(300 * time.Millisecond)
				if err := st.Transact(ctx, store.Delete(key, store.IfPresent, 0)); err != nil {
					t.Fatal(err)
				}
				if _, err := local.AppByToken(ctx, token); admin.ErrorCode(err) != admin.EUNAUTHORIZED {
					t.Fatalf("read on every call: %v after the revocation", err)
				}
				// Within TTL of the cached read the AWS instance may still
				// serve it; from TTL after the revocation on, never.
				clk.Advance(auth.TokenTTL - 300*time.Millisecond - time.Millisecond)
				if _, err := aws.AppByToken(ctx, token); err != nil {
					t.Fatalf("refused before the TTL ran out: %v (no read should have been made)", err)
				}
				clk.Advance(300*time.Millisecond + time.Millisecond)
				if _, err := aws.AppByToken(ctx, token); admin.ErrorCode(err) != admin.EUNAUTHORIZED {
					t.Fatalf("%v after the revocation: %v", auth.TokenTTL, err)
				}
			})
		}
	}
}

// A cached token still expires on time, and a changed item (new scopes)
// is read again after the TTL, at once without one.
func TestCachedTokenExpiresAndChanges(t *testing.T) {
	ctx := context.Background()
	st := apitest.OpenEmbedded(t)
	start := time.Unix(1_800_000_000, 0)
	clk := clock.NewFixed(start)
	token := "an-online-token-0123456789abcdef"
	app := admin.App{ID: 5, TokenHash: auth.HashToken(token), Scopes: []string{"read_content"}, ExpiresAt: start.Add(10 * time.Second).Unix()}
	key := auth.TokenKey(app.TokenHash)
	put := func(v int64) {
		t.Helper()
		cond := store.IfAbsent
		if v > 1 {
			cond = store.IfVersion
		}
		if err := st.Transact(ctx, store.Put(store.Item{PK: key.PK, SK: key.SK, Version: v, Data: records.Encode(app)}, cond, v-1)); err != nil {
			t.Fatal(err)
		}
	}
	put(1)
	aws := auth.NewCachingIdentity(st, clk, auth.TokenTTL)
	local := auth.NewIdentity(st, clk)
	for _, id := range []*auth.Identity{aws, local} {
		if _, err := id.AppByToken(ctx, token); err != nil {
			t.Fatal(err)
		}
	}
	app.Scopes = []string{"write_content"}
	put(2)
	if got, _ := local.AppByToken(ctx, token); got.Scopes[0] != "write_content" {
		t.Fatalf("local: %v", got.Scopes)
	}
	clk.Advance(auth.TokenTTL)
	if got, _ := aws.AppByToken(ctx, token); got.Scopes[0] != "write_content" {
		t.Fatalf("after the TTL: %v", got.Scopes)
	}
	clk.Advance(9 * time.Second)
	for _, id := range []*auth.Identity{aws, local} {
		if _, err := id.AppByToken(ctx, token); admin.ErrorCode(err) != admin.EUNAUTHORIZED {
			t.Fatalf("expired: %v", err)
		}
	}
}
