package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
)

// The clean-up of a removed owner (its metafields, its collects, its image
// file's chunks) is derived like the rest of its removal: the owner's
// deriver writes a clean-up marker (CleanUpOp) in the removal's derived
// transaction, so it is never lost and made once, and the marker's clean-up
// runs afterwards through the store requests use, so that the removals it
// makes are changes like any other: their counts and entries follow from
// the feed (locally before the request answers, in AWS from the stream).
// A clean-up may take many transactions; each of its removals is
// idempotent, so one that stopped part way is simply run again, until it
// deletes its marker.

// CleanUpPartition holds the clean-ups still to run.
const CleanUpPartition = "feed#cleanup"

// CleanUp removes what belonged to owner, the image of a removed record,
// through st; running it again removes nothing more.
type CleanUp func(ctx context.Context, st Store, owner *Item) error

// CleanUps holds the clean-up of each partition whose records own others.
type CleanUps map[string]CleanUp

// CleanUpOp is the marker of the clean-up of c's removed record, for its
// deriver to return: the removed image, keyed by the record's key and the
// version removed, so a replay writes the same marker.
func CleanUpOp(c Change) Op {
	return Put(Item{PK: CleanUpPartition, SK: parkedName(c), Version: 1, Data: encodePending(true, c.Old, "")}, Always, 0)
}

// Run runs the clean-up its marker at k names, then deletes the marker.
func (cs CleanUps) Run(ctx context.Context, st Store, k Key) error {
	it, err := st.Get(ctx, k)
	if errors.Is(err, ErrNotFound) {
		return nil // done already
	}
	if err != nil {
		return err
	}
	_, owner, _, err := decodePending(it.Data)
	if err != nil || owner == nil {
		return fmt.Errorf("store: clean-up %s: not an owner's image: %v", strings.ReplaceAll(k.SK, "\n", "/"), err)
	}
	if clean, ok := cs[owner.PK]; ok {
		if err := clean(ctx, st, owner); err != nil {
			return fmt.Errorf("store: clean-up of %s/%s: %w", owner.PK, owner.SK, err)
		}
	}
	return st.Transact(ctx, Delete(k, IfVersion, it.Version))
}

// RunAll runs every clean-up still to run (a drain's, after a failure or a
// kill), and returns the first failure; the others are still run.
func (cs CleanUps) RunAll(ctx context.Context, st Store) error {
	var first error
	q := Query{PK: CleanUpPartition}
	for {
		items, next, err := st.Query(ctx, q)
		if err != nil {
			return err
		}
		for i := range items {
			if err := cs.Run(ctx, st, items[i].Key()); err != nil {
				slog.Warn("change feed: a clean-up failed; the next drain runs it again", "error", err.Error())
				if first == nil {
					first = err
				}
			}
		}
		if next == "" {
			return first
		}
		q.Cursor = next
	}
}
