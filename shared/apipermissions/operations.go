package apipermissions

import (
	"context"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/charges"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/scripttags"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Service holds the uninstall operation: a plain function of a context,
// used by the handler. It holds only what it uses (NewService takes it
// from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// Charges cancels the app's active charge.
	Charges charges.Service
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, Charges: charges.NewService(d)}
}

// Uninstall uninstalls the calling app (in ctx). The uninstall itself is one
// transaction: the token deleted on condition that it is still there, the
// app's other tokens (its own when a per-user token calls, its per-user
// ones) deleted with it, the app record written without them, its scopes
// and its install (on condition of its version, which every grant
// conditions on too, so that no grant outlives the uninstall), the
// uninstall's event, and the app/uninstalled notification and its outbox
// marker. Concurrent
// uninstalls with one token are decided by the store: one commits, the
// others fail the condition and are 401, as any call with a revoked token,
// so the app is notified once. The notification carries copies of the
// app's app/uninstalled webhooks, which are deleted next, so that its
// fan-out finds them however late it runs. The app record stays, to sign
// the delivery; a seed load writes a token only with a new app record, so
// a restart or re-import never gives the token back (shared/seed).
func (s Service) Uninstall(ctx context.Context) error {
	app, shop := admin.AppFrom(ctx), admin.ShopFrom(ctx)

	subs, err := webhooks.Subscribers(ctx, s.Store, Topic)
	if err != nil {
		return err
	}
	var mine []webhooks.Webhook
	for i := range subs {
		if subs[i].AppID == app.ID {
			mine = append(mine, subs[i])
		}
	}
	var notify []store.Op
	if len(mine) > 0 {
		if notify, err = outbox.Notify(ctx, s.Store, s.IDs, s.Clock, Topic, "shop", shop, outbox.ToWebhooks(app.ID, mine)); err != nil {
			return err
		}
	}
	err = records.Retry(ctx, func() (bool, error) {
		var rec admin.App
		it, err := records.Get(ctx, s.Store, auth.AppKey(app.ID), &rec)
		if err != nil {
			return false, err
		}
		ops := []store.Op{store.Delete(auth.TokenKey(app.TokenHash), store.IfPresent, 0)}
		others := []string{rec.TokenHash, rec.SeedTokenHash}
		if rec.Expiring != nil {
			// The expiring offline token; its refresh tokens live only on
			// the record, cleared below.
			others = append(others, rec.Expiring.AccessHash)
		}
		for _, o := range rec.Online {
			others = append(others, o.Hash)
		}
		for _, h := range others {
			if h != "" && h != app.TokenHash {
				ops = append(ops, store.Delete(auth.TokenKey(h), store.Always, 0))
			}
		}
		// The record says the app is no longer installed, on condition of
		// the version read: a grant racing the uninstall conditions on it
		// too, so one of them sees the other's write.
		rec.TokenHash, rec.SeedTokenHash, rec.InstallNonce, rec.Scopes, rec.Online = "", "", "", nil, nil
		rec.Expiring, rec.OfflineRevoked = nil, false
		rec.Uninstalls++
		ops = append(ops, store.Put(store.Item{PK: it.PK, SK: it.SK, Version: it.Version + 1, Data: records.Encode(rec)}, store.IfVersion, it.Version))
		ops = append(ops, events.Ops(events.OfApp(s.IDs, app.ID, rec.Name, events.Uninstalled))...)
		ops = append(ops, notify...)
		switch err := s.Store.Transact(ctx, ops...); {
		case store.FailedOn(err, auth.TokenKey(app.TokenHash)):
			return false, admin.Unauthorized // another uninstall revoked the token first
		case store.FailedOn(err, it.Key()):
			return true, err // a grant changed the record meanwhile
		default:
			return false, err
		}
	})
	if err != nil {
		return err
	}
	// The app's things go after the token: nobody can use them any more.
	if err := scripttags.DeleteAllOfApp(ctx, s.Store, app.ID); err != nil {
		return err
	}
	if err := webhooks.DeleteAllOfApp(ctx, s.Store, app.ID); err != nil {
		return err
	}
	if err := fulfillmentservices.DeleteAllOfApp(ctx, s.Store, app.ID); err != nil {
		return err
	}
	return s.Charges.CancelActive(ctx, app.ID)
}
