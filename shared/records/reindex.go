package records

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/storeadmin/adminapi/shared/store"
)

// An Indexer rebuilds one record type's index keys and entries from its
// records: a store written by a version before they existed lacks them, so
// its filtered lists would miss those records and its counters by filter
// would be short (and an update would decrement a counter that never
// counted the record).
type Indexer struct {
	Name string
	// Partitions lists the partitions holding the records (one for most
	// types; one per app for script tags and webhooks).
	Partitions func(ctx context.Context, st store.Store) ([]string, error)
	// Rewrite returns what the current version stores for a record item
	// as read: the item itself (index keys set; Version, Nums and
	// ExpiresAt as read), its entries, and the counters its filters keep.
	Rewrite func(it *store.Item) (Rewritten, error)
}

// Rewritten is a record as the current version stores it.
type Rewritten struct {
	Item    store.Item
	Entries []Entry
	// Counted are the counters the record is counted in besides its
	// entries' (a published-state partition of an index, say), each with
	// the query that lists what it counts.
	Counted []Counted
}

// Counted is a counter (named by the partition it counts, as CountOp is)
// and the query listing what it counts.
type Counted struct {
	Counter string
	Query   store.Query
}

// Reindex rewrites every record of each indexer with its index keys and
// entries, then sets each counter the records are counted in to what its
// query lists. Every write is idempotent, so a run that stopped part way
// is simply run again. It is an offline step: a write racing the recount
// could be counted twice or not at all, so run it while the API is stopped
// (the local runner runs it before it serves, see api.Reindex).
func Reindex(ctx context.Context, st store.Store, ixs ...Indexer) error {
	counters := map[string]store.Query{}
	for _, ix := range ixs {
		parts, err := ix.Partitions(ctx, st)
		if err != nil {
			return fmt.Errorf("reindex %s: %w", ix.Name, err)
		}
		for _, part := range parts {
			err := Each(ctx, st, store.Query{PK: part}, func(it *store.Item) error {
				rw, err := ix.Rewrite(it)
				if err != nil {
					return err
				}
				for _, c := range rw.Counted {
					counters[c.Counter] = c.Query
				}
				for _, e := range rw.Entries {
					if e.Counted {
						counters[e.Partition] = store.Query{PK: e.Partition}
					}
				}
				return rewrite(ctx, st, it.Version, rw)
			})
			if err != nil {
				return fmt.Errorf("reindex %s: %w", ix.Name, err)
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(counters)) {
		if err := setCount(ctx, st, name, counters[name]); err != nil {
			return fmt.Errorf("reindex: counter %s: %w", name, err)
		}
	}
	return nil
}

// rewrite writes a record's item (only if unchanged since read) and its
// entries, as many transactions as it takes.
func rewrite(ctx context.Context, st store.Store, version int64, rw Rewritten) error {
	it := rw.Item
	ops := []store.Op{store.Put(it, store.IfVersion, version)}
	for _, e := range rw.Entries {
		ops = append(ops, store.Put(e.Item(&it), store.Always, 0))
	}
	err := TransactBatches(ctx, st, ops)
	if errors.Is(err, store.ErrConditionFailed) {
		return nil // changed meanwhile: that write kept its index
	}
	return err
}

// setCount sets a sharded counter to the number of items q lists.
func setCount(ctx context.Context, st store.Store, counter string, q store.Query) error {
	n, err := st.Count(ctx, q)
	if err != nil {
		return err
	}
	ops := make([]store.Op, CountShards)
	for i := range ops {
		k := shardKey(counter, i)
		it := store.Item{PK: k.PK, SK: k.SK, Version: 1, Nums: map[string]int64{"n": 0}}
		if i == 0 {
			it.Nums["n"] = int64(n)
		}
		ops[i] = store.Put(it, store.Always, 0)
	}
	return st.Transact(ctx, ops...)
}

// OnePartition is Indexer.Partitions for a type kept in one partition.
func OnePartition(partition string) func(context.Context, store.Store) ([]string, error) {
	return func(context.Context, store.Store) ([]string, error) { return []string{partition}, nil }
}

// PerParent is Indexer.Partitions for a type kept in one partition per
// parent (an app, say), the parents' ids being the SKs of parents.
func PerParent(parents string, partition func(id int64) string) func(context.Context, store.Store) ([]string, error) {
	return func(ctx context.Context, st store.Store) ([]string, error) {
		var out []string
		err := Each(ctx, st, store.Query{PK: parents}, func(it *store.Item) error {
			id, err := strconv.ParseInt(it.SK, 10, 64)
			if err != nil {
				return fmt.Errorf("%s/%s: %w", it.PK, it.SK, err)
			}
			out = append(out, partition(id))
			return nil
		})
		return out, err
	}
}
