package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	mrand "math/rand/v2"
	"strconv"
	"sync"
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
// it (dynamostore), and the fault injector makes them up (shared/faults);
// Retrying is the one layer that tries them again.
type UnavailableError struct {
	Reason string // "throttled", "conflict", "timeout", "server error", "network"
	// MayHaveCommitted says the write's outcome is unknown: it timed out
	// or lost its connection after it may have been applied. Retrying
	// resolves it by trying it again under the same request token, which
	// every adapter honours (a write applied under a token succeeds again
	// without being applied twice); false means the write certainly was
	// not applied.
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

// tokenCtxKey carries a write's request token: data of one store call, made
// by Retrying and read by the adapter beneath it through the store.Store
// interface, which has no other channel between the two; a parameter would
// change every Transact and Add of every store and wrapper.
type tokenCtxKey struct{}

// WithRequestToken marks the writes made with ctx as attempts of one
// logical write: every adapter applies a Transact or Add at most once per
// token within TokenWindow, and answers a repeat of an applied one with
// success (DynamoDB's ClientRequestToken; for a single-item write, the
// token kept on the item as its owner nonce). Only Retrying makes tokens,
// one per call, over that call's attempts.
func WithRequestToken(ctx context.Context, token string) context.Context {
	return context.WithValue(ctx, tokenCtxKey{}, token)
}

// RequestToken returns the token WithRequestToken put in ctx ("" if none).
func RequestToken(ctx context.Context) string {
	t, _ := ctx.Value(tokenCtxKey{}).(string)
	return t
}

// TokenWindow is how long an adapter remembers a request token: DynamoDB's
// idempotency window. A write is resolved well within it (a request lasts
// at most 30 s).
const TokenWindow = 10 * time.Minute

// ErrTokenReused is an adapter's answer to a request token applied before
// with other ops (DynamoDB's IdempotentParameterMismatch): a bug of the
// caller, never a retry of the same write.
var ErrTokenReused = errors.New("store: request token reused for another write")

// Retrying wraps s with the service's one retry layer for the storage
// service's unavailability. The budget, stated here once:
//
//   - A call that failed for the moment and certainly did not apply
//     (throttled, a conflict; any read) is tried RetryAttempts times in
//     all.
//   - A write whose outcome is unknown (MayHaveCommitted: a timeout, a
//     server error, a lost connection, a transaction in progress) is
//     tried again under its request token until an attempt answers what
//     happened (success, applied now or before; or a failed condition,
//     which under the token means it was not applied), ResolveAttempts
//     tries in all: at a 30% fault rate, one uncertain write in 50,000
//     stays unresolved, and a request answers 503 after its commit only
//     then.
//   - Below it nothing retries: dynamostore turns off the AWS SDK's
//     retryer and makes one request per call (but for removing an
//     expired item that blocks a write, which is no failure). Above it,
//     records.Retry retries something else: a failed condition (an
//     optimistic version race lost), at most records.Attempts times, each
//     a fresh read and a fresh write under a fresh token.
//
// So one store call makes at most ResolveAttempts service requests (one
// TransactWriteItems each), where it made up to 24 adapter tries before
// (the adapter's 8 under this layer's 3), each up to 3 SDK attempts.
// Waits are jittered and exponential, capped at MaxRetryWait, and end
// with the caller's context.
// What is still unavailable after the last attempt is returned: the
// request answers 503 and the client retries it.
func Retrying(s Store) Store { return retrying{s} }

const (
	RetryAttempts   = 3
	ResolveAttempts = 10
	MaxRetryWait    = 200 * time.Millisecond
)

type retrying struct{ Store }

// Unwrap returns the wrapped store (for the local runner's store.Local).
func (r retrying) Unwrap() Store { return r.Store }

// again says whether a call that failed with err on its attempt-th try
// (from 1) is tried again, after waiting its jittered backoff; uncertain
// says an attempt of this write may have been applied.
func again(ctx context.Context, err error, uncertain bool, attempt int) bool {
	var u *UnavailableError
	if !errors.As(err, &u) {
		return false
	}
	limit := RetryAttempts
	if uncertain {
		limit = ResolveAttempts
	}
	if attempt >= limit {
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(time.Duration(mrand.N(int64(min(5*time.Millisecond<<attempt, MaxRetryWait))))):
		return true
	}
}

// mayHaveCommitted says whether err leaves a write's outcome unknown.
func mayHaveCommitted(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u) && u.MayHaveCommitted
}

// unresolved is the error of a write some attempt of which may have been
// applied, whatever its last attempt said.
func unresolved(err error, uncertain bool) error {
	var u *UnavailableError
	if uncertain && errors.As(err, &u) && !u.MayHaveCommitted {
		return &UnavailableError{Reason: u.Reason, MayHaveCommitted: true, Err: err}
	}
	return err
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
	ctx = withToken(ctx)
	err := r.Store.Transact(ctx, ops...)
	uncertain := mayHaveCommitted(err)
	for attempt := 1; err != nil && again(ctx, err, uncertain, attempt); attempt++ {
		err = r.Store.Transact(ctx, ops...)
		uncertain = uncertain || mayHaveCommitted(err)
	}
	return unresolved(err, uncertain)
}

func (r retrying) Add(ctx context.Context, k Key, c Cond, deltas map[string]int64) (Item, error) {
	ctx = withToken(ctx)
	it, err := r.Store.Add(ctx, k, c, deltas)
	uncertain := mayHaveCommitted(err)
	for attempt := 1; err != nil && again(ctx, err, uncertain, attempt); attempt++ {
		it, err = r.Store.Add(ctx, k, c, deltas)
		uncertain = uncertain || mayHaveCommitted(err)
	}
	return it, unresolved(err, uncertain)
}

// withToken gives a write its own request token; a write made under one
// already (a caller resolving its own write) keeps it.
func withToken(ctx context.Context) context.Context {
	if RequestToken(ctx) != "" {
		return ctx
	}
	return WithRequestToken(ctx, NewRequestToken())
}

// NewRequestToken is a fresh request token: a caller that tries one write
// in rounds of Retrying's attempts puts it on the context first
// (WithRequestToken), so that a later round resolves an earlier one's
// uncertain commit instead of applying the write again.
func NewRequestToken() string { return tokenPrefix() + strconv.FormatUint(tokenSeq.Add(1), 36) }

// Request tokens are unique per process (a random prefix) and within it
// (a sequence): made cheaply, since every transaction gets one. The prefix
// is drawn on first use, not at init: a cold start that answers before any
// transaction never pays for crypto/rand's first read.
var (
	tokenPrefix = sync.OnceValue(func() string {
		var b [8]byte
		rand.Read(b[:])
		return hex.EncodeToString(b[:]) + "-"
	})
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
