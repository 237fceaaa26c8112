// Package records holds the item conventions every resource shares on top
// of the store: id sort keys, creation with a fresh id, sharded counters
// for unfiltered counts, filtered paging, and optimistic updates.
package records

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/store"
)

// IDSK is the sort key of a record id: zero-padded so that byte order is
// numeric order.
func IDSK(id int64) string {
	var b [16]byte
	s := strconv.AppendInt(b[:0], id, 10)
	if len(s) > 16 || id < 0 {
		// No record has such an id (decoders refuse them); a key that
		// matches nothing is the answer, never a panic.
		return "~" + string(s)
	}
	out := make([]byte, 16)
	for i := range out {
		out[i] = '0'
	}
	copy(out[16-len(s):], s)
	return string(out)
}

// ParseIDSK is the inverse of IDSK.
func ParseIDSK(sk string) (int64, error) { return strconv.ParseInt(sk, 10, 64) }

// Counter shards: unfiltered counts read CountShards small items instead of
// every record, and no single item is written by every create.
const CountShards = 8

func shardKey(partition string, shard int) store.Key {
	return store.Key{PK: "count#" + partition, SK: strconv.Itoa(shard)}
}

// CountOp adjusts the count of a partition by delta, on a random shard.
func CountOp(partition string, delta int64) store.Op {
	return store.Add(shardKey(partition, rand.IntN(CountShards)), store.Always, map[string]int64{"n": delta})
}

// Count returns the number of records in a partition: one Query of its shards.
func Count(ctx context.Context, st store.Store, partition string) (int, error) {
	items, _, err := st.Query(ctx, store.Query{PK: "count#" + partition})
	if err != nil {
		return 0, err
	}
	n := int64(0)
	for _, it := range items {
		n += it.Nums["n"]
	}
	return int(n), nil
}

// MaxData is the largest record JSON an item may hold: DynamoDB items are at
// most 400 KB with keys and attributes, and JSON escaping can make HTML
// grow well past its input size, so resources check the encoded size.
const MaxData = 350 << 10

// Encode marshals a record for Item.Data.
func Encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("records: encode %T: %v", v, err)) // records are plain structs
	}
	return b
}

// Decode unmarshals Item.Data.
func Decode(it *store.Item, v any) error {
	if err := json.Unmarshal(it.Data, v); err != nil {
		return fmt.Errorf("records: decode %s/%s: %w", it.PK, it.SK, err)
	}
	return nil
}

// Create commits the ops build returns for a fresh id. The first op must be
// the IfAbsent put of the record itself: if another process drew the same id
// it fails, and Create tries again with a new one. Any other failed
// condition is returned for the caller to explain (a taken handle, say).
func Create(ctx context.Context, st store.Store, gen *ids.Generator, build func(id int64) ([]store.Op, error)) (int64, error) {
	var id int64
	err := Retry(ctx, func() (bool, error) {
		id = gen.Next()
		ops, err := build(id)
		if err != nil {
			return false, err
		}
		err = Transact(ctx, st, ops...)
		return store.FailedOn(err, ops[0].TargetKey()), err
	})
	return id, err
}

// Matcher reports whether a stored record passes a list's filters.
type Matcher func(it *store.Item) (bool, error)

// List reads the records of q that match, skipping offset matches and
// returning at most limit. Without a matcher it reads exactly what it
// returns plus the skipped offset, in query pages of at most 1,000; with
// one, every item it passes over, in pages of at least 100.
func List(ctx context.Context, st store.Store, q store.Query, match Matcher, offset, limit int) ([]store.Item, error) {
	out := make([]store.Item, 0, min(limit, 64))
	if match == nil {
		q.Limit = 0
		need := offset + limit
		err := each(ctx, st, q, func() int { return min(need, 1000) }, func(it *store.Item) error {
			need--
			if offset > 0 {
				offset--
			} else {
				out = append(out, *it)
			}
			if need == 0 {
				return ErrStop
			}
			return nil
		})
		if err != nil && err != ErrStop {
			return nil, err
		}
		return out, nil
	}
	q.Limit = max(limit, 100)
	err := Each(ctx, st, q, func(it *store.Item) error {
		if ok, err := match(it); err != nil || !ok {
			return err
		}
		if offset > 0 {
			offset--
			return nil
		}
		out = append(out, *it)
		if len(out) == limit {
			return ErrStop
		}
		return nil
	})
	if err != nil && err != ErrStop {
		return nil, err
	}
	return out, nil
}

// CountMatching counts the records of q that match; with no matcher it is
// the store's count of the partition range.
func CountMatching(ctx context.Context, st store.Store, q store.Query, match Matcher) (int, error) {
	if match == nil {
		return st.Count(ctx, q)
	}
	n := 0
	q.Limit = 500
	err := Each(ctx, st, q, func(it *store.Item) error {
		ok, err := match(it)
		if ok {
			n++
		}
		return err
	})
	return n, err
}

// CountOf counts the records of q that match, within partition: with no
// matcher and q reading the whole partition (no index, no bounds) it is the
// partition's counter (Count, a read of its shards); otherwise CountMatching
// (a count of the index partition, or a read of every record it passes).
func CountOf(ctx context.Context, st store.Store, partition string, q store.Query, match Matcher) (int, error) {
	if match == nil && q.Index == store.Table && q.PK == partition && q.SKPrefix == "" && q.After == "" && q.Before == "" {
		return Count(ctx, st, partition)
	}
	return CountMatching(ctx, st, q, match)
}

// Get reads one record by key into v; a missing item is admin.NotFound.
func Get(ctx context.Context, st store.Store, k store.Key, v any) (store.Item, error) {
	it, err := st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return it, admin.NotFound
	}
	if err != nil {
		return it, err
	}
	return it, Decode(&it, v)
}

// Update reads the record at k, lets change modify it and returns the ops to
// commit, and commits them; when a concurrent writer got there first
// (the record's version moved) it starts over, so changes never interleave.
// The ops returned must hold the IfVersion put of the record at k: its
// failed condition (FailedOn k) is the race that starts over.
func Update(ctx context.Context, st store.Store, k store.Key, change func(it *store.Item) ([]store.Op, error)) error {
	return Retry(ctx, func() (bool, error) {
		it, err := st.Get(ctx, k)
		if errors.Is(err, store.ErrNotFound) {
			return false, admin.NotFound
		}
		if err != nil {
			return false, err
		}
		ops, err := change(&it)
		if err != nil {
			return false, err
		}
		err = Transact(ctx, st, ops...)
		return store.FailedOn(err, k), err
	})
}

// PutNext is the IfVersion put of an updated item, bumping its version.
func PutNext(it store.Item) store.Op {
	old := it.Version
	it.Version++
	return store.Put(it, store.IfVersion, old)
}

// DecodeAll decodes the Data of each item.
func DecodeAll[T any](items []store.Item) ([]T, error) {
	out := make([]T, len(items))
	for i := range items {
		if err := Decode(&items[i], &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Transact commits ops as one transaction after folding the count-shard
// adjustments of each partition into one op (two ops may not share a key).
func Transact(ctx context.Context, st store.Store, ops ...store.Op) error {
	var kept []store.Op
	var counts map[string]int64
	var order []string
	for _, op := range ops {
		if op.Kind == store.OpAdd && strings.HasPrefix(op.Key.PK, "count#") && op.Cond == store.Always {
			if counts == nil {
				counts = map[string]int64{}
			}
			part := strings.TrimPrefix(op.Key.PK, "count#")
			if _, ok := counts[part]; !ok {
				order = append(order, part)
			}
			counts[part] += op.Deltas["n"]
			continue
		}
		kept = append(kept, op)
	}
	if counts == nil {
		return st.Transact(ctx, ops...)
	}
	for _, part := range order {
		if counts[part] != 0 {
			kept = append(kept, CountOp(part, counts[part]))
		}
	}
	return st.Transact(ctx, kept...)
}

// Fits reports whether ops, plus extra more, make one transaction once
// Transact has folded the count-shard ops (one per partition). The local
// change feed's pending items count toward no limit (store.Validate), so a
// change fits in AWS exactly when it fits locally.
func Fits(ops []store.Op, extra int) bool {
	n, counts := extra, map[string]bool{}
	for i := range ops {
		op := &ops[i]
		if op.Kind == store.OpAdd && op.Cond == store.Always && strings.HasPrefix(op.Key.PK, "count#") {
			counts[op.Key.PK] = true
			continue
		}
		n++
	}
	return n+len(counts) <= store.MaxTransactItems
}

// WithLeftovers joins the leftovers of a deleted record (its image file,
// its metafields: idempotent deletes) to the deletion's transaction when
// all fit in one, so that a small record goes at once; otherwise they are
// returned as later, for TransactBatches after the deletion commits.
func WithLeftovers(ops, leftovers []store.Op) (now, later []store.Op) {
	if all := append(slices.Clip(ops), leftovers...); Fits(all, 0) {
		return all, nil
	}
	return ops, leftovers
}

// TransactBatches commits ops in as many transactions as they need. It is
// for clean-up after a record's own deletion has committed (its metafields,
// stored files): each op must be idempotent, since a failure part way
// leaves the earlier batches applied.
func TransactBatches(ctx context.Context, st store.Store, ops []store.Op) error {
	for len(ops) > 0 {
		n := min(len(ops), store.MaxTransactItems-10) // room for folded counter ops
		if err := Transact(ctx, st, ops[:n]...); err != nil {
			return err
		}
		ops = ops[n:]
	}
	return nil
}

// AfterCommit runs the clean-up of a change that has committed (the
// leftovers of a deleted record: its collects, memberships, metafields,
// comments, file chunks; idempotent deletes of items whose owner is gone)
// without failing the request: the change is done, and is answered so.
// Answering a failed clean-up 503 would make a client's retry meet its own
// change (a 404 for its own delete) and leave the leftovers all the same.
// What it could not remove is logged.
func AfterCommit(ctx context.Context, what string, cleanUp func() error) {
	if err := cleanUp(); err != nil {
		slog.WarnContext(ctx, "records: clean-up after a commit failed; its leftovers stay",
			"request_id", admin.RequestID(ctx), "what", what, "error", err.Error())
	}
}

// ErrStop ends an Each early without an error: Each returns it as is, so
// callers that use it compare and drop it.
var ErrStop = errors.New("records: stop")

// Each calls fn for every item q matches, page by page, following the
// store's cursors: the one loop over query pages in the service. It stops
// at fn's first error (ErrStop included) and returns it.
func Each(ctx context.Context, st store.Store, q store.Query, fn func(it *store.Item) error) error {
	return each(ctx, st, q, nil, fn)
}

// each is Each with the page size chosen before each query by pageLimit
// (nil keeps q.Limit): a reader that knows how many items it still needs
// asks for no more.
func each(ctx context.Context, st store.Store, q store.Query, pageLimit func() int, fn func(it *store.Item) error) error {
	for {
		if pageLimit != nil {
			q.Limit = pageLimit()
		}
		items, next, err := st.Query(ctx, q)
		if err != nil {
			return err
		}
		for i := range items {
			if err := fn(&items[i]); err != nil {
				return err
			}
		}
		if next == "" {
			return nil
		}
		q.Cursor = next
	}
}

// Stamp marks it as a request's change whose derived work the change feed
// does (store.ChangeNum): change is the change's id (from the service's
// ids: its event's and notification's id, dated by it), made by the
// request's app (store.ByNum), with the Facts its derived items show as
// of the commit (Item.Stamp). Stamp the record's item in every write of a
// request.
func Stamp(ctx context.Context, it *store.Item, change int64) {
	nums := make(map[string]int64, len(it.Nums)+2)
	for k, v := range it.Nums {
		if k != store.ClockNum {
			nums[k] = v
		}
	}
	var f Facts
	if app := admin.AppFrom(ctx); app != nil {
		nums[store.ByNum], f.Author = app.ID, app.Name
	}
	if shop := admin.ShopFrom(ctx); shop != nil {
		f.Zone = shop.IANATimezone
	}
	nums[store.ChangeNum] = change
	it.Nums, it.Stamp = nums, Encode(&f)
}

// Remove returns the writes of a request's removal of the record it: its
// delete, conditioned on the version read, and its tomb (store.TombKey),
// stamped as Stamp stamps a write (change is the change's id), so that the
// change feed can say who removed it, as of the commit: the event and
// notification of a delete are derived, like every other change's. Stamp
// the tomb's subscription clock (outbox.StampClock) before committing when
// a topic fires. The tomb is one small item; it expires after
// store.AppliedTTL, beyond the stream's retention.
func Remove(ctx context.Context, it *store.Item, change int64, now time.Time) (ops []store.Op, tomb *store.Item) {
	k := store.TombKey(it.Key(), it.Version)
	t := store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: []byte("{}"), ExpiresAt: now.Add(store.AppliedTTL).Unix()}
	Stamp(ctx, &t, change)
	ops = []store.Op{store.Delete(it.Key(), store.IfVersion, it.Version), store.Put(t, store.IfAbsent, 0)}
	return ops, &ops[1].Item
}

// Facts are what a change's derived items show as they were when it
// committed, whenever the change feed derives them: the name of the app
// that made it (an event's author), the shop's time zone (the times of a
// notification's payload), as the request saw them.
type Facts struct {
	Author string `json:"author"`
	Zone   string `json:"zone"`
	// Names are what the derived items show of records other than the
	// changed one (a comment's event names its article's title and path),
	// as the request read them (StampNames).
	Names map[string]string `json:"names,omitempty"`
}

// StampNames adds names to the facts Stamp stamped on it: what its derived
// items show of other records, as of the commit. Call it after Stamp.
func StampNames(it *store.Item, names map[string]string) {
	var f Facts
	if len(it.Stamp) > 0 {
		if err := json.Unmarshal(it.Stamp, &f); err != nil {
			panic(err) // Stamp encoded it
		}
	}
	f.Names = names
	it.Stamp = Encode(&f)
}

// FactsOf returns the facts stamped on a change's item; ok is false for
// an item stamped before facts were (read them from the store then).
func FactsOf(it *store.Item) (f Facts, ok bool, err error) {
	if len(it.Stamp) == 0 {
		return f, false, nil
	}
	if err := json.Unmarshal(it.Stamp, &f); err != nil {
		return f, false, fmt.Errorf("records: stamp of %s/%s: %w", it.PK, it.SK, err)
	}
	return f, true, nil
}

// DecodeChange decodes a change's images (nil where absent).
func DecodeChange[T any](c store.Change) (old, next *T, err error) {
	if c.Old != nil {
		old = new(T)
		if err := Decode(c.Old, old); err != nil {
			return nil, nil, err
		}
	}
	if c.New != nil {
		next = new(T)
		if err := Decode(c.New, next); err != nil {
			return nil, nil, err
		}
	}
	return old, next, nil
}
