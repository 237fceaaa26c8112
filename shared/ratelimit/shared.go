package ratelimit

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Key is an app's bucket item: Nums["tat"] is the TAT in Unix microseconds.
func Key(appID int64) store.Key { return store.Key{PK: "ratelimit", SK: records.IDSK(appID)} }

// Shared keeps each app's TAT in the store, shared by every instance, and
// spends it by claims (leases, lease.go): one conditional write claims up
// to an eighth of the bucket, spent in the process for up to LeaseTime
// with no request. A call that finds its claim spent claims again; a
// refusal decided from the TAT this process saw last costs nothing (other
// writers only move it forward). Over-admission and the room other
// instances' claims hold are stated at LeaseTime.
type Shared struct {
	Store store.Store
	Now   func() time.Time // the service's clock; required

	once sync.Once
	l    *leases
}

// NewShared returns the store-backed limiter, deciding by now.
func NewShared(st store.Store, now func() time.Time) *Shared { return &Shared{Store: st, Now: now} }

func (s *Shared) leases() *leases {
	s.once.Do(func() { s.l = &leases{st: s.Store, now: s.Now, key: Key} })
	return s.l
}

// MostClaimed is the most calls of a bucket of size bucket one claim
// takes: an eighth of it, at least one.
func MostClaimed(bucket int) int { return max(1, bucket/8) }

// Take spends one call of app's bucket.
func (s *Shared) Take(ctx context.Context, app *admin.App) (Decision, error) {
	p := app.Plan()
	t := interval(p)
	o, err := s.leases().take(ctx, app.ID, t, time.Duration(p.Bucket)*t, time.Duration(MostClaimed(p.Bucket))*t)
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: app %d: %w", app.ID, err)
	}
	d := Decision{Bucket: p.Bucket}
	if !o.ok {
		d.Used, d.RetryAfter = p.Bucket, o.retry
		return d, nil
	}
	d.Allowed = true
	d.Used = min(p.Bucket, max(1, int((o.ahead+t-1)/t)))
	return d, nil
}
