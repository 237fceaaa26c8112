package ratelimit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// LeaseTime is how long a process may spend what it claimed of a bucket
// kept in the table (Shared, SharedPoints). It is the whole of their
// over-admission: every call (or point) is charged in the table when it
// is claimed and spent at most LeaseTime later, so in any span of L
// seconds a bucket of B calls leaking R a second lets through at most
// B + R×(L + LeaseTime) calls, however many instances share it: R more
// than Shopify's bucket allows (2 calls, or 100 GraphQL points, on the
// standard plans). TestLeasedBucketBounds checks it with several instances
// on one table.
const LeaseTime = time.Second

// leases keeps, per app, this process's claim on a GCRA bucket stored in
// the table under key(app): the bucket's theoretical arrival time (TAT) in
// Nums["tat"], Unix microseconds. A claim moves the TAT forward by
// several calls' worth at once in one conditional write; the calls are
// then spent in the process, with no request, until they run out or
// LeaseTime has passed. What a claim left unspent is given back by the
// process's next claim of that bucket, in the same write, as far as it
// has not leaked out yet (giving back what already leaked would free room
// that later claims took). Claims grow while they run out within
// LeaseTime (doubling up to the caller's most) and shrink to what was
// spent when they do not, so an app calling once in a while claims one
// call per call, and a busy one a write per many calls.
//
// What other instances hold unspent is room this one cannot use: a bucket
// shared by n instances lets through at least its size less the unspent
// claims of the others, (n−1)×(most−1) at worst, until those leak out or
// are given back.
type leases struct {
	st  store.Store
	now func() time.Time
	key func(appID int64) store.Key

	mu    sync.Mutex
	cells map[int64]*lease
}

// lease is one app's bucket as this process knows it, and its claim.
type lease struct {
	mu sync.Mutex // one claim at a time per app in the process

	known   bool      // tat and version are as last read or written
	tat     time.Time // the bucket's TAT then
	version int64     // 0: no item yet
	reread  bool      // the last write lost a race: read before the next

	end   time.Time     // the TAT the last claim wrote: its span ends there
	left  time.Duration // claimed and not spent
	until time.Time     // left may be spent until then
	size  time.Duration // the last claim's size
}

func (l *leases) cell(appID int64) *lease {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := l.cells[appID]
	if c == nil {
		if l.cells == nil {
			l.cells = map[int64]*lease{}
		}
		c = &lease{}
		l.cells[appID] = c
	}
	return c
}

// outcome is what take decided: ahead is how far the bucket's fill
// reaches past now (time to leak out), this process's unspent claim not
// counted; retry, when refused, how long until cost fits.
type outcome struct {
	ok           bool
	ahead, retry time.Duration
}

// take spends cost (one call's or some points' worth of time) of app's
// bucket, whose span is limit; a claim is at most most.
func (l *leases) take(ctx context.Context, appID int64, cost, limit, most time.Duration) (outcome, error) {
	c := l.cell(appID)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := l.now()
	if c.left >= cost && now.Before(c.until) {
		c.left -= cost
		return outcome{ok: true, ahead: c.ahead(now)}, nil
	}
	// A new claim, sized by how the last one went.
	want := cost
	switch {
	case c.size == 0:
	case now.Before(c.until):
		want = 2 * c.size // spent within its time: claim more
	default:
		want = c.size - max(0, c.left) // expired: claim what was spent
	}
	want = max(cost, min(want, most, limit))
	// Give back what is unspent and has not leaked out yet.
	back := max(0, min(c.left, c.end.Sub(now)))
	if c.known {
		// Other writers only move the TAT forward, so a refusal read from
		// what this process saw last refuses less than the table would.
		if o, full := refusal(c.tat.Add(-back), now, cost, limit); full {
			return o, nil
		}
	}
	var o outcome
	err := records.Retry(ctx, func() (bool, error) {
		if !c.known || c.reread {
			if err := l.read(ctx, appID, c); err != nil {
				return false, err
			}
		}
		base := c.tat.Add(-back)
		var full bool
		if o, full = refusal(base, now, cost, limit); full {
			return false, nil
		}
		base = later(base, now)
		claim := min(want, limit-base.Sub(now))
		next := base.Add(claim)
		k := l.key(appID)
		cond := store.IfVersion
		if c.version == 0 {
			cond = store.IfAbsent
		}
		err := l.st.Transact(ctx, store.Put(store.Item{PK: k.PK, SK: k.SK, Version: c.version + 1,
			Nums: map[string]int64{"tat": next.UnixMicro()}}, cond, c.version))
		if errors.Is(err, store.ErrConditionFailed) {
			c.known, c.reread = false, true // lost to another instance
			return true, err
		}
		if err != nil {
			c.known = false
			return false, err
		}
		c.tat, c.version, c.reread = next, c.version+1, false
		c.end, c.size, c.left, c.until = next, claim, claim-cost, now.Add(LeaseTime)
		o = outcome{ok: true, ahead: c.ahead(now)}
		return false, nil
	})
	return o, err
}

// give returns points a caller took and did not use to the claim, to be
// spent again within its time or given back with the next claim.
func (l *leases) give(appID int64, amount time.Duration, now time.Time) time.Duration {
	c := l.cell(appID)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.left += amount
	return c.ahead(now)
}

// ahead is the bucket's fill past now as this process knows it, its own
// unspent claim not counted.
func (c *lease) ahead(now time.Time) time.Duration {
	return max(0, c.tat.Sub(now)-c.left)
}

// refusal says whether cost does not fit a bucket whose TAT is tat, and
// the refusal if so.
func refusal(tat, now time.Time, cost, limit time.Duration) (outcome, bool) {
	ahead := max(0, tat.Sub(now))
	if ahead+cost <= limit {
		return outcome{}, false
	}
	return outcome{ahead: ahead, retry: ahead + cost - limit}, true
}

func later(a, b time.Time) time.Time {
	if a.Before(b) {
		return b
	}
	return a
}

func (l *leases) read(ctx context.Context, appID int64, c *lease) error {
	it, err := l.st.Get(ctx, l.key(appID))
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.tat, c.version = time.Time{}, 0
	case err != nil:
		return err
	default:
		c.tat, c.version = time.UnixMicro(it.Nums["tat"]), it.Version
	}
	c.known, c.reread = true, false
	return nil
}
