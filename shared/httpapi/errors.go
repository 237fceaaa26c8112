package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
)

// StatusOf maps an application error code to its HTTP status. It is the only
// place that does.
func StatusOf(code string) int {
	switch code {
	case admin.ENOTFOUND:
		return http.StatusNotFound
	case admin.EINVALID:
		return http.StatusUnprocessableEntity
	case admin.EBADREQUEST:
		return http.StatusBadRequest
	case admin.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case admin.EFORBIDDEN:
		return http.StatusForbidden
	case admin.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case admin.ETOOMANY:
		return http.StatusTooManyRequests
	case admin.EMETHOD:
		return http.StatusMethodNotAllowed
	}
	return http.StatusInternalServerError
}

// Error writes err as the JSON error body of its status. Unexpected errors
// are logged with the request id and answered without detail.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	var e *admin.Error
	if !errors.As(err, &e) {
		slog.ErrorContext(r.Context(), "request failed",
			"request_id", admin.RequestID(r.Context()), "method", r.Method, "path", r.URL.Path, "error", err.Error())
		e = &admin.Error{Code: admin.EINTERNAL, Message: "Internal Server Error"}
	}
	var body any
	switch {
	case e.Plain != nil:
		body = map[string]any{"errors": e.Plain}
	case e.Fields != nil:
		body = map[string]any{"errors": e.Fields}
	case e.Message != "":
		body = map[string]any{"errors": e.Message}
	default:
		body = struct{}{}
	}
	WriteJSON(w, StatusOf(e.Code), body)
}

// Errors the conventions produce.
var (
	errTooLarge = &admin.Error{Code: admin.ETOOLARGE, Message: "Request body too large"}
)
