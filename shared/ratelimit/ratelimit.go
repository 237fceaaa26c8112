// Package ratelimit paces each app's calls with a leaky bucket, kept as a
// generic cell rate (GCRA): per app one theoretical arrival time (TAT), the
// moment the bucket would be empty again. A call is let through when adding
// one call's worth of time keeps the TAT within bucket × interval of now,
// and moves the TAT forward by one interval. There is no counter to sweep:
// leaking is the clock moving on.
//
// Memory keeps TATs in the process (the local runner); Shared keeps them in
// the table, one small item per app, so that every Lambda instance draws
// from the same bucket.
package ratelimit

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

// Limiter spends one call of an app's bucket: Memory or Shared.
type Limiter interface {
	Take(ctx context.Context, app *admin.App) (Decision, error)
}

// Decision is the outcome of one call.
type Decision struct {
	Allowed bool
	// Used is the bucket's fill after this call, in calls; Bucket its size.
	Used, Bucket int
	// RetryAfter is how long a refused call must wait before one passes.
	RetryAfter time.Duration
}

// Header is the value of the call-limit header: "<used>/<bucket>".
func (d Decision) Header() string { return strconv.Itoa(d.Used) + "/" + strconv.Itoa(d.Bucket) }

// RetryAfterHeader is Retry-After in seconds with one decimal, rounded up so
// that a retry after that long passes.
func (d Decision) RetryAfterHeader() string {
	return strconv.FormatFloat(math.Ceil(d.RetryAfter.Seconds()*10)/10, 'f', 1, 64)
}

// Err is the 429 of a refused call, worded as the original API's.
func (d Decision) Err(p admin.RatePlan) error {
	return admin.Errorf(admin.ETOOMANY, "Exceeded %s calls per second for api client. Reduce request rates to resume uninterrupted service.",
		strconv.FormatFloat(p.LeakPerSecond, 'f', -1, 64))
}

// interval is the time one call takes to leak out.
func interval(p admin.RatePlan) time.Duration {
	return time.Duration(float64(time.Second) / p.LeakPerSecond)
}

// decide applies one call at now to a bucket whose TAT is tat. It returns
// the TAT to store (unchanged when the call is refused).
func decide(tat, now time.Time, p admin.RatePlan) (time.Time, Decision) {
	t := interval(p)
	limit := time.Duration(p.Bucket) * t
	if tat.Before(now) {
		tat = now
	}
	next := tat.Add(t)
	d := Decision{Bucket: p.Bucket}
	if ahead := next.Sub(now); ahead > limit {
		d.Used, d.RetryAfter = p.Bucket, ahead-limit
		return tat, d
	}
	d.Allowed = true
	d.Used = int((next.Sub(now) + t - 1) / t)
	return next, d
}

// Memory is the in-process limiter of the local runner.
type Memory struct {
	Now func() time.Time // the service's clock; required

	mu   sync.Mutex
	tats map[int64]time.Time
}

// Take spends one call of app's bucket.
func (m *Memory) Take(ctx context.Context, app *admin.App) (Decision, error) {
	now := m.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tats == nil {
		m.tats = map[int64]time.Time{}
	}
	tat, d := decide(m.tats[app.ID], now, app.Plan())
	m.tats[app.ID] = tat
	return d, nil
}

// Reset empties every bucket (the local runner's reset).
func (m *Memory) Reset() {
	m.mu.Lock()
	m.tats = nil
	m.mu.Unlock()
}
