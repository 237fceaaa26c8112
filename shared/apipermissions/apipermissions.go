// Package apipermissions serves DELETE /admin/api_permissions/current.json,
// which uninstalls the calling app, as in the original API: its
// app/uninstalled webhooks are delivered (signed with its secret), its token
// is revoked, its script tags, webhooks and fulfillment services are deleted,
// and its active recurring charge is cancelled.
package apipermissions

import (
	"context"
	"encoding/json"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/charges"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/scripttags"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// Topic is the topic fired by an uninstall.
const Topic = "app/uninstalled"

// Uninstall uninstalls the calling app (in ctx). It runs in an order that a
// retry can repeat: the deliveries are queued (with a snapshot of each
// webhook, which is about to go) before the token is revoked, so a failure
// part way leaves a token to retry with, and a retry queues the same
// delivery ids again.
func Uninstall(ctx context.Context, d *platform.Deps) error {
	app, shop := admin.AppFrom(ctx), admin.ShopFrom(ctx)

	subs, err := webhooks.Subscribers(ctx, d.Store, Topic)
	if err != nil {
		return err
	}
	var bodies [][]byte
	var notification []store.Op
	for i := range subs {
		if subs[i].AppID != app.ID {
			continue
		}
		if notification == nil {
			ops, err := outbox.Notify(ctx, d.Store, d.IDs, Topic, "shop", shop, outbox.OnlyApp(app.ID))
			if err != nil {
				return err
			}
			notification = ops[:1] // no outbox marker: fanned out here
			if err := d.Store.Transact(ctx, notification...); err != nil {
				return err
			}
		}
		nid, _ := records.ParseIDSK(notification[0].Item.SK)
		b, _ := json.Marshal(delivery.Message{DeliveryID: delivery.DeliveryID(nid, subs[i].ID),
			NotificationID: nid, WebhookID: subs[i].ID, AppID: app.ID, Snapshot: &subs[i]})
		bodies = append(bodies, b)
	}
	if len(bodies) > 0 {
		if err := d.Queue.Send(ctx, bodies...); err != nil {
			return err
		}
	}
	// Revoke: 401 from now on. The app record stays, to sign the deliveries;
	// a seed load writes a token only with a new app record, so a restart
	// or re-import never gives the token back (shared/seed).
	if err := d.Store.Transact(ctx, store.Delete(auth.TokenKey(app.TokenHash), store.Always, 0)); err != nil {
		return err
	}
	if err := scripttags.DeleteAllOfApp(ctx, d.Store, app.ID); err != nil {
		return err
	}
	if err := webhooks.DeleteAllOfApp(ctx, d.Store, app.ID); err != nil {
		return err
	}
	if err := fulfillmentservices.DeleteAllOfApp(ctx, d.Store, app.ID); err != nil {
		return err
	}
	return charges.Service{Deps: d}.CancelActive(ctx, app.ID)
}
