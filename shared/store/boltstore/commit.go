package boltstore

import (
	"sync"

	bolt "go.etcd.io/bbolt"
)

// Group commit. Every write transaction is fsynced before its caller hears
// back, and a commit costs about the same (two fsyncs) whatever it holds,
// so the writes that arrive while one commit is under way are applied
// together in the next bolt transaction and share its fsyncs. Nothing
// waits for company: a write that finds no commit under way starts one at
// once.
//
// Each write (a call) checks all its conditions before it writes anything,
// so a failed condition leaves the shared transaction as it was and fails
// only its own call. A bolt failure while writing (or a failed commit)
// rolls the whole batch back; its calls are then run again one per
// transaction, so that each gets its own answer.

// maxBatch bounds the calls of one commit.
const maxBatch = 1000

// call is one write: fn returns res, the caller's answer (a failed
// condition, having written nothing), or err, a bolt failure after which
// the transaction must not commit.
type call struct {
	fn   func(tx *bolt.Tx) (res, err error)
	done chan error
}

type committer struct {
	mu      sync.Mutex
	pending []*call
	running bool // a goroutine is committing batches
}

// update runs fn in a write transaction, possibly shared with other calls,
// and returns once that transaction is durably committed (or failed).
func (s *Store) update(fn func(tx *bolt.Tx) (res, err error)) error {
	c := &call{fn: fn, done: make(chan error, 1)}
	s.commits.mu.Lock()
	s.commits.pending = append(s.commits.pending, c)
	lead := !s.commits.running
	s.commits.running = true
	s.commits.mu.Unlock()
	if lead {
		// Commit the batch holding c; any calls that arrive meanwhile are
		// committed by a goroutine of their own, not on c's time.
		if s.commitNext() {
			go func() {
				for s.commitNext() {
				}
			}()
		}
	}
	err := <-c.done
	s.writes.Add(1) // before the writer hears back (Writes)
	return err
}

// commitNext commits the pending calls (up to maxBatch) and reports
// whether more arrived meanwhile; when it returns false, no goroutine is
// left committing and the next update starts one.
func (s *Store) commitNext() (more bool) {
	s.commits.mu.Lock()
	batch := s.commits.pending
	if len(batch) > maxBatch {
		batch = batch[:maxBatch:maxBatch]
	}
	s.commits.pending = s.commits.pending[len(batch):]
	s.commits.mu.Unlock()

	s.commit(batch)

	s.commits.mu.Lock()
	defer s.commits.mu.Unlock()
	if len(s.commits.pending) == 0 {
		s.commits.pending = nil
		s.commits.running = false
		return false
	}
	return true
}

// commit runs a batch of calls in one transaction and answers them.
func (s *Store) commit(batch []*call) {
	res := make([]error, len(batch))
	err := s.db.Update(func(tx *bolt.Tx) error {
		for i, c := range batch {
			var err error
			if res[i], err = c.fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case err == nil:
		for i, c := range batch {
			c.done <- res[i]
		}
	case len(batch) == 1:
		batch[0].done <- err
	default:
		// One call's failure must not answer for the others: each alone.
		for _, c := range batch {
			var res error
			err := s.db.Update(func(tx *bolt.Tx) error {
				var err error
				res, err = c.fn(tx)
				return err
			})
			if err == nil {
				err = res
			}
			c.done <- err
		}
	}
}
