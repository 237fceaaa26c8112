package apipermissions

import (
	"context"
	"net/http"

	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/platform"
)

// operations are what the handlers call: Service implements them, and
// a handler reaches nothing else (no store, no queue).
type operations interface {
	Uninstall(ctx context.Context) error
}

type handler struct{ operations }

// Routes returns the uninstall endpoint (no scope: any app may leave).
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{NewService(d)}
	return []httpapi.Route{{Method: "DELETE", Path: "/admin/api_permissions/current.json", Handler: h.uninstall}}
}

func (h handler) uninstall(w http.ResponseWriter, r *http.Request) error {
	if err := h.Uninstall(r.Context()); err != nil {
		return err
	}
	return httpapi.WriteDeleted(w)
}
