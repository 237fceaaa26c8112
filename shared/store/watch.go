package store

import "context"

// Watched is a store that tells in-process workers when a transaction
// writing to one of their partitions commits (an outbox marker, a job
// marker), so that they look at once instead of polling the store many
// times a second. Wrap the store beneath the retry layer and the change
// feed (so the feed's derived writes wake workers too), above the fault
// injector: the local runner's watchCommits.
type Watched struct {
	Store
	wakes map[string]chan struct{}
}

// Watch wraps st, watching partitions.
func Watch(st Store, partitions ...string) *Watched {
	w := &Watched{Store: st, wakes: make(map[string]chan struct{}, len(partitions))}
	for _, pk := range partitions {
		w.wakes[pk] = make(chan struct{}, 1)
	}
	return w
}

// Unwrap returns the watched store.
func (w *Watched) Unwrap() Store { return w.Store }

// Woken receives after a commit that put an item in partition (one
// pending signal however many commits; nil for an unwatched partition,
// which never receives).
func (w *Watched) Woken(partition string) <-chan struct{} { return w.wakes[partition] }

// Transact commits ops, then signals the watched partitions they put into.
func (w *Watched) Transact(ctx context.Context, ops ...Op) error {
	if err := w.Store.Transact(ctx, ops...); err != nil {
		return err
	}
	for i := range ops {
		if ops[i].Kind != OpPut {
			continue
		}
		if c, ok := w.wakes[ops[i].Item.PK]; ok {
			select {
			case c <- struct{}{}:
			default: // a signal is already pending
			}
		}
	}
	return nil
}
