package httpapi

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/idempotency"
)

// serveRoute calls the route's handler; a write carrying an
// Idempotency-Key goes through the app's kept keys first (keyed).
func (rt *Router) serveRoute(w http.ResponseWriter, r *http.Request, route *Route) error {
	if rt.Keys == nil || r.Method == http.MethodGet || r.Method == http.MethodHead || len(r.Header.Values(idempotency.Header)) == 0 {
		return route.Handler(w, r)
	}
	return rt.keyed(w, r, route)
}

// keyed serves a write made with an Idempotency-Key: the first time it is
// done, under a claim that joins every transaction it commits, and its
// answer kept; a repeat gets the kept answer with Idempotent-Replayed.
func (rt *Router) keyed(w http.ResponseWriter, r *http.Request, route *Route) error {
	values := r.Header.Values(idempotency.Header)
	if len(values) > 1 {
		return admin.BadParam(idempotency.Header, "must be given once")
	}
	if err := idempotency.CheckKey(values[0]); err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge
		}
		return admin.Errorf(admin.EBADREQUEST, "could not read the request body")
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	ctx := r.Context()
	claim, replay, err := rt.Keys.Begin(ctx, admin.AppFrom(ctx).ID, values[0],
		idempotency.Fingerprint(r.Method, r.URL.RequestURI(), body))
	if err != nil {
		var busy *idempotency.InProgressError
		if errors.As(err, &busy) {
			w.Header().Set("Retry-After", strconv.FormatInt(max(busy.RetryAfter, 1), 10))
		}
		return err
	}
	if replay != nil {
		for name, v := range replay.Header {
			w.Header()[name] = v
		}
		w.Header().Set(idempotency.ReplayedHeader, "true")
		w.WriteHeader(replay.Status)
		w.Write(replay.Body)
		return nil
	}
	rec := &answerRecorder{ResponseWriter: w, status: http.StatusOK}
	if err := route.Handler(rec, r.WithContext(idempotency.WithClaim(ctx, claim))); err != nil {
		Error(rec, r, err)
	}
	answer := idempotency.Answer{Status: rec.status, Header: idempotency.HeaderOf(w.Header()), Body: rec.body.Bytes()}
	// Kept even when the client has gone: its retry will ask.
	if err := rt.Keys.Finish(context.WithoutCancel(ctx), claim, answer); err != nil {
		slog.WarnContext(ctx, "idempotency key not settled; its lease will",
			"request_id", admin.RequestID(ctx), "status", strconv.Itoa(rec.status), "error", err.Error())
	}
	w.WriteHeader(rec.status)
	w.Write(rec.body.Bytes())
	return nil
}

// answerRecorder holds a keyed request's answer until its key is settled;
// headers go straight to the real writer, whose header map it shares.
type answerRecorder struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
	body        bytes.Buffer
}

func (a *answerRecorder) WriteHeader(status int) {
	if !a.wroteHeader {
		a.status, a.wroteHeader = status, true
	}
}

func (a *answerRecorder) Write(b []byte) (int, error) {
	a.wroteHeader = true
	return a.body.Write(b)
}
