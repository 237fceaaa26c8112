// Package faults makes a fraction of store and queue calls fail the way
// DynamoDB and SQS fail on a bad minute: throttled, a transaction cancelled
// by a conflicting one, a timeout; and a fifth of the failed writes fail
// after they were applied, as a timeout after the commit does. Tests use it
// on both stores, and the local runner with FAULT_RATE; the Lambda
// functions never do.
//
// Faults come as store.UnavailableError and queue.ErrUnavailable, exactly
// what the adapters hand on for the real services' failures, so the code
// that survives them here survives them in AWS. A write that fails after
// it was applied, or times out before it, says it may have been applied;
// the store beneath applies it at most once per request token, as
// DynamoDB does, so a retry under the token resolves it.
package faults

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/store"
)

// Injector decides which calls fail. It injects nothing until Start, so
// that start-up and seeding run clean.
type Injector struct {
	rate float64
	on   atomic.Bool

	reads, writes, applied, queueCalls atomic.Int64
}

// New returns an injector failing rate (0..1) of the calls it sees once
// started.
func New(rate float64) *Injector {
	return &Injector{rate: rate}
}

// Start turns faults on; Stop turns them off (a test's final check, the
// local runner's reset to the seed). Both do nothing on a nil Injector,
// the runner's without FAULT_RATE.
func (in *Injector) Start() {
	if in != nil {
		in.on.Store(true)
	}
}

func (in *Injector) Stop() {
	if in != nil {
		in.on.Store(false)
	}
}

// Counts are the faults injected so far.
type Counts struct {
	Reads, Writes int64 // store calls failed
	Applied       int64 // of Writes, those applied before failing
	Queue         int64 // queue calls failed
}

func (in *Injector) Counts() Counts {
	return Counts{in.reads.Load(), in.writes.Load(), in.applied.Load(), in.queueCalls.Load()}
}

// fail rolls the dice for one call.
func (in *Injector) fail() bool {
	return in.on.Load() && in.rate > 0 && rand.Float64() < in.rate
}

// afterCommit says whether a failing write fails after it was applied:
// a fifth of them.
func afterCommit() bool { return rand.IntN(5) == 0 }

var errInjected = errors.New("injected fault")

// readFault is what a failed read gets: DynamoDB throttling a hot
// partition, or a request timing out.
func readFault() error {
	if rand.IntN(2) == 0 {
		return store.Unavailable("throttled", false, errInjected)
	}
	return store.Unavailable("timeout", false, errInjected)
}

// Store wraps s.
func (in *Injector) Store(s store.Store) store.Store { return &faultyStore{s, in} }

type faultyStore struct {
	store.Store
	in *Injector
}

func (f *faultyStore) Unwrap() store.Store { return f.Store }

func (f *faultyStore) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if f.in.fail() {
		f.in.reads.Add(1)
		return store.Item{}, readFault()
	}
	return f.Store.Get(ctx, k)
}

func (f *faultyStore) Query(ctx context.Context, q store.Query) ([]store.Item, string, error) {
	if f.in.fail() {
		f.in.reads.Add(1)
		return nil, "", readFault()
	}
	return f.Store.Query(ctx, q)
}

func (f *faultyStore) Count(ctx context.Context, q store.Query) (int, error) {
	if f.in.fail() {
		f.in.reads.Add(1)
		return 0, readFault()
	}
	return f.Store.Count(ctx, q)
}

func (f *faultyStore) Transact(ctx context.Context, ops ...store.Op) error {
	if !f.in.fail() {
		return f.Store.Transact(ctx, ops...)
	}
	return f.writeFault(func() error { return f.Store.Transact(ctx, ops...) })
}

func (f *faultyStore) Add(ctx context.Context, k store.Key, c store.Cond, deltas map[string]int64) (store.Item, error) {
	if !f.in.fail() {
		return f.Store.Add(ctx, k, c, deltas)
	}
	return store.Item{}, f.writeFault(func() error {
		_, err := f.Store.Add(ctx, k, c, deltas)
		return err
	})
}

// writeFault fails a write: after applying it (a timeout after the
// commit), or before, throttled, cancelled by a conflict or timed out. A
// timeout leaves the outcome unknown either way.
func (f *faultyStore) writeFault(write func() error) error {
	f.in.writes.Add(1)
	if afterCommit() {
		if err := write(); err != nil {
			return err
		}
		f.in.applied.Add(1)
		return store.Unavailable("timeout", true, errInjected)
	}
	switch rand.IntN(3) {
	case 0:
		return store.Unavailable("throttled", false, errInjected)
	case 1:
		return store.Unavailable("conflict", false, errInjected)
	}
	return store.Unavailable("timeout", true, errInjected)
}

// Queue wraps q, keeping the optional interfaces (queue.Acker,
// queue.Deferrer) it has.
func (in *Injector) Queue(q queue.Queue) queue.Queue {
	f := &faultyQueue{q, in}
	if _, ok := q.(queue.Deferrer); ok {
		return faultyDeferrer{f}
	}
	return f
}

type faultyQueue struct {
	queue.Queue
	in *Injector
}

// queueFault counts a failed queue call and returns its error (the caller
// has done the call first when it fails after taking effect).
func (f *faultyQueue) queueFault() error {
	f.in.queueCalls.Add(1)
	return errors.Join(queue.ErrUnavailable, errInjected)
}

func (f *faultyQueue) Send(ctx context.Context, bodies ...[]byte) error {
	if !f.in.fail() {
		return f.Queue.Send(ctx, bodies...)
	}
	if afterCommit() {
		if err := f.Queue.Send(ctx, bodies...); err != nil {
			return err
		}
		f.in.applied.Add(1)
	}
	return f.queueFault()
}

func (f *faultyQueue) Receive(ctx context.Context, max int, wait time.Duration) ([]queue.Message, error) {
	if f.in.fail() {
		return nil, f.queueFault()
	}
	return f.Queue.Receive(ctx, max, wait)
}

func (f *faultyQueue) Ack(ctx context.Context, m queue.Message) error {
	if !f.in.fail() {
		return f.Queue.Ack(ctx, m)
	}
	if afterCommit() {
		if err := f.Queue.Ack(ctx, m); err != nil {
			return err
		}
		f.in.applied.Add(1)
	}
	return f.queueFault()
}

// AckAll acks through the inner queue's AckAll when it has one, else one
// by one; each message may fail on its own.
func (f *faultyQueue) AckAll(ctx context.Context, ms []queue.Message) []error {
	if a, ok := f.Queue.(queue.Acker); ok && !f.in.fail() {
		return a.AckAll(ctx, ms)
	}
	errs := make([]error, len(ms))
	for i, m := range ms {
		errs[i] = f.Ack(ctx, m)
	}
	return errs
}

func (f *faultyQueue) Retry(ctx context.Context, m queue.Message, after time.Duration) error {
	if !f.in.fail() {
		return f.Queue.Retry(ctx, m, after)
	}
	if afterCommit() {
		if err := f.Queue.Retry(ctx, m, after); err != nil {
			return err
		}
		f.in.applied.Add(1)
	}
	return f.queueFault()
}

type faultyDeferrer struct{ *faultyQueue }

func (f faultyDeferrer) Defer(ctx context.Context, m queue.Message, after time.Duration) error {
	if f.in.fail() {
		return f.queueFault()
	}
	return f.Queue.(queue.Deferrer).Defer(ctx, m, after)
}
