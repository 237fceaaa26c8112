package main

import (
	"io"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/httpapi"
)

// triggerHandler serves POST /_local/webhooks/trigger with an app's token
// and {"topic", "address", "format"}: the address receives one delivery of
// the topic as that app would (delivery.Trigger), and the answer is
// {"delivery_id", "status"} (the receiver's status, 0 when none answered).
func triggerHandler(deps *api.Deps) http.HandlerFunc {
	identity := auth.NewIdentity(deps.Store, deps.Clock)
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		token, ok := httpapi.RequestToken(r.Header)
		if !ok {
			httpapi.Error(w, r, admin.Unauthorized)
			return
		}
		app, err := identity.AppByToken(ctx, token)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		shop, err := identity.Shop(ctx)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		var in struct {
			Topic   string `json:"topic"`
			Address string `json:"address"`
			Format  string `json:"format"`
		}
		if err := httpapi.DecodeObject(readBody(w, r), &in); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		ctx = admin.WithShop(admin.WithApp(ctx, app), shop)
		t, err := delivery.Trigger(ctx, deps.Outbound, deps.IDs, deps.Clock, in.Topic, in.Address, in.Format)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, t)
	}
}

// readBody reads at most 64 KB of the request body (what it could read
// when it stops early: the decoder then says what is wrong).
func readBody(w http.ResponseWriter, r *http.Request) []byte {
	b, _ := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<10))
	return b
}
