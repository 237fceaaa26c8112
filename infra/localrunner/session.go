package main

import (
	"net/http"

	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/oauth"
	"github.com/storeadmin/adminapi/shared/platform"
)

// sessionTokenHandler serves POST /_local/session_token with
// {"client_id", "user_id"} (user_id optional: the shop's owner): a session
// token of the app as App Bridge would give its embedded page, which the
// app exchanges at POST /admin/oauth/access_token (oauth.MintSession). The
// answer is {"session_token", "expires_at"}. Only the runner serves it.
func sessionTokenHandler(d *platform.Deps) http.HandlerFunc {
	svc := oauth.NewService(d)
	return func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			ClientID string `json:"client_id"`
			UserID   int64  `json:"user_id"`
		}
		if err := httpapi.DecodeObject(readBody(w, r), &in); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		token, c, err := svc.MintSession(r.Context(), in.ClientID, in.UserID)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"session_token": token, "expires_at": c.Exp})
	}
}
