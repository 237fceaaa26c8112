// Package ids assigns resource ids without a shared counter item.
//
// An id is seconds since Epoch shifted left 21 bits, plus a 21-bit number
// that starts at a random point in each process and counts up. Ids are
// therefore below 2^53 (safe in JavaScript) until 2160, increase with
// creation time at the second precision timestamps are shown with, and
// strictly increase within a process. Two processes collide only when they
// draw overlapping numbers in the same second (about 1 in 2^21 per pair of
// creates); every create writes its item with IfAbsent and retries with a
// fresh id, so a collision within one resource type is never stored.
package ids

import (
	"math/rand/v2"
	"sync"
	"time"
)

// Epoch is the zero of the time part: 2024-01-01T00:00:00Z.
var Epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

const seqBits = 21

// SeedMax is the largest id a seed file may use: every id the service
// assigns is above it.
const SeedMax = 1<<40 - 1

// Max is the largest id the service accepts in a path or body.
const Max = 1<<53 - 1

// Generator hands out ids; the zero value is not usable, use New.
type Generator struct {
	mu   sync.Mutex
	last int64
	now  func() time.Time
}

// New returns a generator reading the wall clock.
func New() *Generator { return &Generator{now: time.Now} }

// Next returns a fresh id.
func (g *Generator) Next() int64 {
	secs := int64(g.now().Sub(Epoch) / time.Second)
	id := secs<<seqBits | rand.Int64N(1<<seqBits)
	g.mu.Lock()
	defer g.mu.Unlock()
	if id <= g.last {
		id = g.last + 1
	}
	g.last = id
	return id
}

// Reset forgets the ids handed out: the next follows the clock alone. The
// local runner's reset calls it after emptying the store and moving its
// clock back, so that ids (and the created_at they carry) follow the clock
// again rather than the last id of a clock that ran ahead.
func (g *Generator) Reset() {
	g.mu.Lock()
	g.last = 0
	g.mu.Unlock()
}

// Time returns the second an id was assigned in (meaningless for seed ids).
func Time(id int64) time.Time { return Epoch.Add(time.Duration(id>>seqBits) * time.Second) }

// At is the smallest id assigned in the second of t: ids below it were
// assigned before t.
func At(t time.Time) int64 { return int64(t.Sub(Epoch)/time.Second) << seqBits }

// NewClock returns a generator reading now: fixtures that stand for a shop
// grown over time assign ids (and so created_at) spread across that time.
func NewClock(now func() time.Time) *Generator { return &Generator{now: now} }
