package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"
)

// ErrUnavailable is what every UnavailableError is: the storage service
// could not do it now, and the same call later may succeed. The HTTP layer
// answers it 503 with Retry-After, never 500 (which stays for bugs).
var ErrUnavailable = errors.New("store: unavailable")

// UnavailableError is a failure of the storage service rather than of the
// request: throttling, a transaction cancelled by a conflicting one, a
// timeout, a server error. Adapters turn their service's such errors into
// it once retrying them inside the adapter did not help (dynamostore), and
// the fault injector makes them up (shared/faults).
type UnavailableError struct {
	Reason string // "throttled", "conflict", "timeout", "server error"
	// MayHaveCommitted says a write timed out after it may have been
	// applied. Retrying it is safe only with the same request token
	// (WithRequestToken), which an adapter that honours tokens
	// (DynamoDB's ClientRequestToken: a transaction already committed with
	// the token succeeds again without being applied twice) says by
	// leaving this false.
	MayHaveCommitted bool
	Err              error
}

func (e *UnavailableError) Error() string {
	s := "store: unavailable (" + e.Reason + ")"
	if e.MayHaveCommitted {
		s += ", the write may have been applied"
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}
func (e *UnavailableError) Unwrap() error        { return e.Err }
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

type tokenCtxKey struct{}

// WithRequestToken marks the writes made with ctx as retries of one
// logical write: an adapter that honours it applies a transaction at most
// once per token (for DynamoDB's ten-minute window).
func WithRequestToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenCtxKey{}, token)
}

// RequestToken returns the token WithRequestToken put in ctx ("" if none).
func RequestToken(ctx context.Context) string {
	t, _ := ctx.Value(tokenCtxKey{}).(string)
	return t
}

// Retrying wraps s so that a call failing with an UnavailableError is
// tried again, with jittered backoff, up to RetryAttempts times within the
// caller's context: a throttled or conflicting moment usually passes in
// milliseconds, so a request should not fail for it. A write is tried
// again only when that cannot apply it twice (not MayHaveCommitted); each
// Transact carries its own request token over its attempts, so an adapter
// that honours tokens turns a timed-out commit into success on the retry.
// What is still unavailable after the last attempt is returned as is: the
// request answers 503 and the client retries, safely with an
// Idempotency-Key.
func Retrying(s Store) Store { return retrying{s} }

// RetryAttempts bounds the tries of one call: at a 10% fault rate, three
// tries leave one call in a thousand failing, and a request of a few calls
// waits at most about 30 ms more (the backoff below).
const RetryAttempts = 3

type retrying struct{ Store }

// Unwrap returns the wrapped store (for the local runner's store.Local).
func (r retrying) Unwrap() Store { return r.Store }

// again says whether a call that failed with err on its attempt-th try
// (from 1) is tried again, after waiting its jittered backoff. A write is
// tried again only when that cannot apply it twice.
func again(ctx context.Context, err error, write bool, attempt int) bool {
	var u *UnavailableError
	if attempt >= RetryAttempts || !errors.As(err, &u) || write && u.MayHaveCommitted {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Duration(mrand.N(int64(5*time.Millisecond) << attempt))):
		return true
	}
}

func (r retrying) Get(ctx context.Context, k Key) (Item, error) {
	it, err := r.Store.Get(ctx, k)
	for attempt := 1; err != nil && again(ctx, err, false, attempt); attempt++ {
		it, err = r.Store.Get(ctx, k)
	}
	return it, err
}

func (r retrying) Query(ctx context.Context, q Query) ([]Item, string, error) {
	items, next, err := r.Store.Query(ctx, q)
	for attempt := 1; err != nil && again(ctx, err, false, attempt); attempt++ {
		items, next, err = r.Store.Query(ctx, q)
	}
	return items, next, err
}

func (r retrying) Count(ctx context.Context, q Query) (int, error) {
	n, err := r.Store.Count(ctx, q)
	for attempt := 1; err != nil && again(ctx, err, false, attempt); attempt++ {
		n, err = r.Store.Count(ctx, q)
	}
	return n, err
}

func (r retrying) Transact(ctx context.Context, ops ...Op) error {
	if RequestToken(ctx) == "" {
		ctx = WithRequestToken(ctx, tokenPrefix+strconv.FormatUint(tokenSeq.Add(1), 36))
	}
	err := r.Store.Transact(ctx, ops...)
	for attempt := 1; err != nil && again(ctx, err, true, attempt); attempt++ {
		err = r.Store.Transact(ctx, ops...)
	}
	return err
}

func (r retrying) Add(ctx context.Context, k Key, c Cond, deltas map[string]int64) (Item, error) {
	it, err := r.Store.Add(ctx, k, c, deltas)
	for attempt := 1; err != nil && again(ctx, err, true, attempt); attempt++ {
		it, err = r.Store.Add(ctx, k, c, deltas)
	}
	return it, err
}

// Request tokens are unique per process (a random prefix) and within it
// (a sequence): made cheaply, since every transaction gets one.
var (
	tokenPrefix = func() string {
		var b [8]byte
		rand.Read(b[:])
		return hex.EncodeToString(b[:]) + "-"
	}()
	tokenSeq atomic.Uint64
)

// Unwrapper is a store wrapping another (Retrying, the fault injector).
type Unwrapper interface{ Unwrap() Store }

// Innermost returns the store at the bottom of s's wrappers, for the
// interfaces only the adapters implement (Local).
func Innermost(s Store) Store {
	for {
		u, ok := s.(Unwrapper)
		if !ok {
			return s
		}
		s = u.Unwrap()
	}
}

// Unavailable makes an UnavailableError; adapters call it.
func Unavailable(reason string, mayHaveCommitted bool, err error) error {
	return &UnavailableError{Reason: reason, MayHaveCommitted: mayHaveCommitted, Err: err}
}
