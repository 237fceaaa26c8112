package ratelimit

import (
	"context"
	"errors"
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
// every Lambda instance: one conditional write per query, and one more
// when a query used less than it held.
type SharedPoints struct {
	Store store.Store
	Now   func() time.Time
	Plan  PointsPlan
}

// Max and Rate are the plan's.
func (s *SharedPoints) Max() float64  { return s.Plan.Max }
func (s *SharedPoints) Rate() float64 { return s.Plan.Rate }

// Spend implements the bucket on the table.
func (s *SharedPoints) Spend(ctx context.Context, appID int64, cost float64) (float64, bool, error) {
	var avail float64
	var ok bool
	err := s.update(ctx, appID, func(tat, now time.Time) (time.Time, bool) {
		var next time.Time
		next, avail, ok = spendPoints(tat, now, s.Plan, cost)
		return next, ok
	})
	return avail, ok, err
}

// Refund implements the bucket on the table.
func (s *SharedPoints) Refund(ctx context.Context, appID int64, points float64) (float64, error) {
	var avail float64
	err := s.update(ctx, appID, func(tat, now time.Time) (time.Time, bool) {
		var next time.Time
		next, avail = refundPoints(tat, now, s.Plan, points)
		return next, true
	})
	return avail, err
}

// update reads the bucket and writes what change makes of it, on
// condition that no other instance wrote it meanwhile.
func (s *SharedPoints) update(ctx context.Context, appID int64, change func(tat, now time.Time) (time.Time, bool)) error {
	k := PointsKey(appID)
	err := records.Retry(ctx, func() (bool, error) {
		var tat time.Time
		var version int64
		it, err := s.Store.Get(ctx, k)
		switch {
		case err == nil:
			tat, version = time.UnixMicro(it.Nums["tat"]), it.Version
		case !errors.Is(err, store.ErrNotFound):
			return false, err
		}
		next, write := change(tat, s.Now())
		if !write {
			return false, nil
		}
		cond := store.IfVersion
		if version == 0 {
			cond = store.IfAbsent
		}
		err = s.Store.Transact(ctx, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: version + 1,
			Nums: map[string]int64{"tat": next.UnixMicro()}}, cond, version))
		return errors.Is(err, store.ErrConditionFailed), err
	})
	if err != nil {
		return fmt.Errorf("ratelimit: the GraphQL bucket of app %d: %w", appID, err)
	}
	return nil
}
