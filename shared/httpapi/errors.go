package httpapi

import (
	"errors"
	"log/slog"
	"net/http"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/store"
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
	case admin.ECONFLICT:
		return http.StatusConflict
	case admin.EUNAVAILABLE:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// Error writes err as the JSON error body of its status. Unexpected errors
// are logged (on the default logger) with the request id and answered
// without detail.
func Error(w http.ResponseWriter, r *http.Request, err error) { writeError(slog.Default(), w, r, err) }

// writeError is Error logging on log.
func writeError(log *slog.Logger, w http.ResponseWriter, r *http.Request, err error) {
	var e *admin.Error
	if unavailable(err) {
		// A moment of the store's or a queue's, not a bug: logged as a
		// warning (the operator's alarms count 5xx answers), answered 503.
		log.WarnContext(r.Context(), "storage unavailable",
			"request_id", admin.RequestID(r.Context()), "method", r.Method, "path", r.URL.Path, "error", err.Error())
		e = admin.Unavailable
	} else if !errors.As(err, &e) {
		log.ErrorContext(r.Context(), "request failed",
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
	status := StatusOf(e.Code)
	if status == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", RetryAfterUnavailable)
	}
	WriteJSON(w, status, body)
}

// RetryAfterUnavailable is the Retry-After of a 503, in seconds: a
// throttled partition or a conflicting transaction passes within one.
const RetryAfterUnavailable = "1"

// unavailable says err is the store's or a queue's unavailability.
func unavailable(err error) bool {
	return errors.Is(err, store.ErrUnavailable) || errors.Is(err, queue.ErrUnavailable)
}

// Errors the conventions produce.
var (
	errTooLarge = &admin.Error{Code: admin.ETOOLARGE, Message: "Request body too large"}
)
