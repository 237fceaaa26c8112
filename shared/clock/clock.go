// Package clock is the service's time. Domain code reads it from the Clock
// its service holds (platform.Deps.Clock, copied by NewService) or takes as
// a parameter, never from the machine or the context: in AWS it is the
// machine's clock, in the local runner a clock an app developer can move
// forward, and in tests one that moves only when told.
package clock

import (
	"sync"
	"time"
)

// Clock tells the service's time.
type Clock interface{ Now() time.Time }

// System is the machine's clock.
type System struct{}

func (System) Now() time.Time { return time.Now() }

// Offset is the machine's clock moved forward by an offset that only
// grows: time keeps flowing, and Advance skips ahead (the local runner's
// clock, moved by POST /_local/clock).
type Offset struct {
	mu sync.RWMutex
	d  time.Duration
}

func (o *Offset) Now() time.Time { return time.Now().Add(o.Offset()) }

// Offset is how far the clock is ahead of the machine's.
func (o *Offset) Offset() time.Duration {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return o.d
}

// Advance moves the clock forward by d (a d of zero or less does nothing:
// time never runs back).
func (o *Offset) Advance(d time.Duration) {
	if d <= 0 {
		return
	}
	o.mu.Lock()
	o.d += d
	o.mu.Unlock()
}

// Reset brings the clock back to the machine's time.
func (o *Offset) Reset() {
	o.mu.Lock()
	o.d = 0
	o.mu.Unlock()
}

// Fixed is a clock that moves only when told: tests step it instead of
// sleeping.
type Fixed struct {
	mu sync.RWMutex
	t  time.Time
}

// NewFixed returns a clock standing at t.
func NewFixed(t time.Time) *Fixed { return &Fixed{t: t} }

func (f *Fixed) Now() time.Time {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.t
}

// Advance moves the clock forward by d.
func (f *Fixed) Advance(d time.Duration) {
	f.mu.Lock()
	f.t = f.t.Add(d)
	f.mu.Unlock()
}
