package main

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/store"
)

// The local runner's clock is the machine's moved forward by an offset an
// app developer grows with POST /_local/clock, to see what happens after 48
// hours without waiting for them. The offset is part of the shop's state:
// it is kept in the store, so a restart keeps it.
var clockKey = store.Key{PK: "local", SK: "clock"}

const offsetNum = "offset_ns"

// maxOffset bounds the clock's lead: timestamps stay far inside years
// 1-9999, and the seconds fit every integer a client reads.
const maxOffset = 100 * 365 * 24 * time.Hour

// restoreClock moves off to the offset the store keeps.
func restoreClock(ctx context.Context, st store.Store, off *clock.Offset) error {
	it, err := st.Get(ctx, clockKey)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	off.Advance(time.Duration(it.Nums[offsetNum]))
	return nil
}

// clockAnswer is what GET and POST /_local/clock answer.
type clockAnswer struct {
	Now           admin.Time `json:"now"`
	OffsetSeconds float64    `json:"offset_seconds"`
}

// clockHandler serves GET /_local/clock (the service's time and how far it
// is ahead of the machine's) and POST /_local/clock {"advance_seconds": N}
// (moves it N seconds forward, N > 0 and fractions allowed, as a client
// obeying a Retry-After of 0.025 s needs: time never runs back).
func clockHandler(st store.Store, off *clock.Offset) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			var in struct {
				AdvanceSeconds json.RawMessage `json:"advance_seconds"`
			}
			if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<10)).Decode(&in); err != nil {
				localError(w, http.StatusBadRequest, `"the body must be a JSON object: {\"advance_seconds\": N}"`)
				return
			}
			var secs float64
			err := json.Unmarshal(in.AdvanceSeconds, &secs)
			// The bound is checked on the seconds first: a huge number
			// would overflow the duration it is turned into.
			d := time.Duration(min(secs, maxOffset.Seconds()+1) * float64(time.Second))
			switch {
			case in.AdvanceSeconds == nil || string(in.AdvanceSeconds) == "null":
				localError(w, http.StatusUnprocessableEntity, `{"advance_seconds":["can't be blank"]}`)
				return
			case err != nil:
				localError(w, http.StatusUnprocessableEntity, `{"advance_seconds":["must be a number"]}`)
				return
			case d <= 0:
				localError(w, http.StatusUnprocessableEntity, `{"advance_seconds":["must be greater than 0"]}`)
				return
			case d > maxOffset-off.Offset():
				localError(w, http.StatusUnprocessableEntity, `{"advance_seconds":["would move the clock more than 100 years ahead"]}`)
				return
			}
			// Kept first, then moved: a crash between the two moves it at
			// the next start, never loses an advance that was answered.
			if _, err := st.Add(r.Context(), clockKey, store.Always, map[string]int64{offsetNum: int64(d)}); err != nil {
				localError(w, http.StatusInternalServerError, `"the clock could not be kept"`)
				return
			}
			off.Advance(d)
		}
		httpapi.WriteJSON(w, http.StatusOK, clockAnswer{Now: admin.At(off.Now()), OffsetSeconds: off.Offset().Seconds()})
	}
}
