package apipermissions

import (
	"net/http"

	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

type handler struct{ *platform.Deps }

// Routes returns the uninstall endpoint (no scope: any app may leave).
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	return []httpapi.Route{{Method: "DELETE", Path: "/admin/api_permissions/current.json", Handler: h.uninstall}}
}

func (h handler) uninstall(w http.ResponseWriter, r *http.Request) error {
	if err := Uninstall(r.Context(), h.Deps); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
