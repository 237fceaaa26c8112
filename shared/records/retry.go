package records

import (
	"context"
	"math/rand/v2"
	"time"
)

// The one attempt policy of every optimistic write (record updates, id and
// handle claims, collect positions, bucket compare-and-sets): at most
// Attempts tries; the first retry is immediate, since a race is usually
// lost to a single writer; later ones wait a jittered 1 ms, 2 ms, 4 ms …
// up to MaxBackoff, so that writers racing for one item spread out rather
// than collide again. A cancelled request stops waiting at once.
const (
	Attempts   = 30
	MaxBackoff = 64 * time.Millisecond
)

// Retry calls try until it says not to try again, or Attempts tries are
// spent, and returns try's last error. try reports again=true when it lost
// a race that a fresh attempt can win.
func Retry(ctx context.Context, try func() (again bool, err error)) error {
	for attempt := 1; ; attempt++ {
		again, err := try()
		if !again || attempt >= Attempts {
			return err
		}
		if err := Wait(ctx, attempt); err != nil {
			return err
		}
	}
}

// Wait is the pause after the attempt-th try (from 1) of the policy, for
// the few loops that cannot be written as one Retry closure; it returns
// ctx's error when the request is cancelled meanwhile.
func Wait(ctx context.Context, attempt int) error {
	if attempt <= 1 {
		return nil
	}
	wait := min(time.Millisecond<<min(attempt-2, 7), MaxBackoff)
	select {
	case <-time.After(rand.N(wait) + 1):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
