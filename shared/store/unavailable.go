package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
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

func retryable(err error, write bool) bool {
	var u *UnavailableError
	return errors.As(err, &u) && !(write && u.MayHaveCommitted)
}

func (r retrying) do(ctx context.Context, write bool, call func() error) error {
	for attempt := 1; ; attempt++ {
		err := call()
		if err == nil || attempt >= RetryAttempts || !retryable(err, write) {
			return err
		}
		wait := time.Duration(mrand.N(int64(5*time.Millisecond) << attempt))
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
	}
}

func (r retrying) Get(ctx context.Context, k Key) (it Item, err error) {
	err = r.do(ctx, false, func() (e error) { it, e = r.Store.Get(ctx, k); return e })
	return it, err
}

func (r retrying) Query(ctx context.Context, q Query) (items []Item, next string, err error) {
	err = r.do(ctx, false, func() (e error) { items, next, e = r.Store.Query(ctx, q); return e })
	return items, next, err
}

func (r retrying) Count(ctx context.Context, q Query) (n int, err error) {
	err = r.do(ctx, false, func() (e error) { n, e = r.Store.Count(ctx, q); return e })
	return n, err
}

func (r retrying) Transact(ctx context.Context, ops ...Op) error {
	if RequestToken(ctx) == "" {
		var b [16]byte
		rand.Read(b[:])
		ctx = WithRequestToken(ctx, hex.EncodeToString(b[:]))
	}
	return r.do(ctx, true, func() error { return r.Store.Transact(ctx, ops...) })
}

func (r retrying) Add(ctx context.Context, k Key, c Cond, deltas map[string]int64) (it Item, err error) {
	err = r.do(ctx, true, func() (e error) { it, e = r.Store.Add(ctx, k, c, deltas); return e })
	return it, err
}

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
