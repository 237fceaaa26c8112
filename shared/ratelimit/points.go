package ratelimit

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// PointsPlan is a bucket of GraphQL query cost points: Max points, Rate
// restored a second (Shopify's standard plan: 2000 and 100).
type PointsPlan struct{ Max, Rate float64 }

// DefaultPoints is every app's GraphQL bucket.
var DefaultPoints = PointsPlan{Max: 2000, Rate: 100}

// pointsAt is a bucket's state as a theoretical arrival time (GCRA, as
// decide for calls): the bucket is full when tat <= now, and each point
// spent moves tat 1/Rate s later.
func pointsAvailable(tat, now time.Time, p PointsPlan) float64 {
	ahead := tat.Sub(now).Seconds()
	if ahead < 0 {
		ahead = 0
	}
	return math.Max(0, p.Max-ahead*p.Rate)
}

// spendPoints takes cost points at now, or none when fewer are available.
func spendPoints(tat, now time.Time, p PointsPlan, cost float64) (time.Time, float64, bool) {
	if tat.Before(now) {
		tat = now
	}
	avail := pointsAvailable(tat, now, p)
	if cost > avail {
		return tat, avail, false
	}
	next := tat.Add(time.Duration(cost / p.Rate * float64(time.Second)))
	return next, pointsAvailable(next, now, p), true
}

// refundPoints gives back points spent and not used.
func refundPoints(tat, now time.Time, p PointsPlan, points float64) (time.Time, float64) {
	tat = tat.Add(-time.Duration(points / p.Rate * float64(time.Second)))
	if tat.Before(now) {
		tat = now
	}
	return tat, pointsAvailable(tat, now, p)
}

// MemoryPoints keeps each app's GraphQL bucket in the process: the local
// runner's, like Memory.
type MemoryPoints struct {
	Now  func() time.Time // the service's clock
	Plan PointsPlan

	mu   sync.Mutex
	tats map[int64]time.Time
}

// Spend takes cost points of app's bucket, or none when it holds fewer;
// it answers what the bucket holds after.
func (m *MemoryPoints) Spend(_ context.Context, appID int64, cost float64) (float64, bool, error) {
	now := m.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tats == nil {
		m.tats = map[int64]time.Time{}
	}
	tat, avail, ok := spendPoints(m.tats[appID], now, m.Plan, cost)
	m.tats[appID] = tat
	return avail, ok, nil
}

// Refund gives back points a query held and did not use.
func (m *MemoryPoints) Refund(_ context.Context, appID int64, points float64) (float64, error) {
	now := m.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	tat, avail := refundPoints(m.tats[appID], now, m.Plan, points)
	if m.tats != nil {
		m.tats[appID] = tat
	}
	return avail, nil
}

// Max and Rate are the plan's, for the answer's throttleStatus.
func (m *MemoryPoints) Max() float64  { return m.Plan.Max }
func (m *MemoryPoints) Rate() float64 { return m.Plan.Rate }

// PointsKey addresses an app's GraphQL bucket in the table.
func PointsKey(appID int64) store.Key {
	return store.Key{PK: "ratelimit#points", SK: records.IDSK(appID)}
}

// SharedPoints keeps each app's GraphQL bucket in the table, shared by
// every Lambda instance, spent by claims as Shared's calls are (lease.go):
// a query spends points its process claimed, a write claiming more only
// when they run out (up to an eighth of the bucket, or the query's cost
// when more), and gives back what it did not use to the claim, with no
// request. Its over-admission is at most Rate×LeaseTime points.
type SharedPoints struct {
	Store store.Store
	Now   func() time.Time
	Plan  PointsPlan

	once sync.Once
	l    *leases
}

func (s *SharedPoints) leases() *leases {
	s.once.Do(func() { s.l = &leases{st: s.Store, now: s.Now, key: PointsKey} })
	return s.l
}

// Max and Rate are the plan's.
func (s *SharedPoints) Max() float64  { return s.Plan.Max }
func (s *SharedPoints) Rate() float64 { return s.Plan.Rate }

// span is how long points take to be restored.
func (s *SharedPoints) span(points float64) time.Duration {
	return time.Duration(points / s.Plan.Rate * float64(time.Second))
}

// available is what the bucket holds when its fill reaches ahead past now.
func (s *SharedPoints) available(ahead time.Duration) float64 {
	return math.Max(0, s.Plan.Max-ahead.Seconds()*s.Plan.Rate)
}

// Spend implements the bucket on the table.
func (s *SharedPoints) Spend(ctx context.Context, appID int64, cost float64) (float64, bool, error) {
	o, err := s.leases().take(ctx, appID, s.span(cost), s.span(s.Plan.Max), s.span(s.Plan.Max/8))
	if err != nil {
		return 0, false, fmt.Errorf("ratelimit: the GraphQL bucket of app %d: %w", appID, err)
	}
	return s.available(o.ahead), o.ok, nil
}

// Refund gives back points a query held and did not use: to this
// process's claim, with no request.
func (s *SharedPoints) Refund(_ context.Context, appID int64, points float64) (float64, error) {
	return s.available(s.leases().give(appID, s.span(points), s.Now())), nil
}
