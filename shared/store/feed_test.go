package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
)

// A deriver that keeps a count of the "rec" partition's records and a copy
// of each under its title, as index entries do.
func countAndCopy(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	var ops []store.Op
	if c.Old != nil {
		ops = append(ops, store.Delete(store.Key{PK: "rec#title=" + string(c.Old.Data), SK: c.Old.SK}, store.Always, 0))
	}
	if c.New != nil {
		ops = append(ops, store.Put(store.Item{PK: "rec#title=" + string(c.New.Data), SK: c.New.SK, Version: c.New.Version, Data: c.New.Data}, store.Always, 0))
	}
	switch {
	case c.Old == nil:
		ops = append(ops, store.Add(store.Key{PK: "count", SK: "rec"}, store.Always, map[string]int64{"n": 1}))
	case c.New == nil:
		ops = append(ops, store.Add(store.Key{PK: "count", SK: "rec"}, store.Always, map[string]int64{"n": -1}))
	}
	return ops, nil
}

// failing fails every transaction while on, writing nothing; with
// thenFail, the next transaction commits and turns it on.
type failing struct {
	store.Store
	on, thenFail bool
}

func (f *failing) Transact(ctx context.Context, ops ...store.Op) error {
	if f.on {
		return &store.UnavailableError{Reason: "test"}
	}
	f.on = f.thenFail
	return f.Store.Transact(ctx, ops...)
}

func openBolt(t *testing.T) store.Store {
	st, err := boltstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func rec(id int, title string, version int64, stamp int64) store.Item {
	return store.Item{PK: "rec", SK: strconv.Itoa(id), Version: version, Data: []byte(title), Nums: map[string]int64{store.ChangeNum: stamp}}
}

func count(t *testing.T, st store.Store) int64 {
	it, err := st.Get(context.Background(), store.Key{PK: "count", SK: "rec"})
	if errors.Is(err, store.ErrNotFound) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return it.Nums["n"]
}

func exists(t *testing.T, st store.Store, k store.Key) bool {
	_, err := st.Get(context.Background(), k)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// A commit's derived work is done when Transact returns; a change derives
// from its image before (the old entry goes) and after; an unstamped write
// (the seed's) derives nothing.
func TestFedDerivesEachCommitInOrder(t *testing.T) {
	ctx := context.Background()
	base := openBolt(t)
	fed := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := fed.Transact(ctx, store.Put(rec(1, "a", 1, 10), store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	if count(t, base) != 1 || !exists(t, base, store.Key{PK: "rec#title=a", SK: "1"}) {
		t.Fatal("the create's count or entry is missing when Transact returned")
	}
	if err := fed.Transact(ctx, store.Put(rec(1, "b", 2, 11), store.IfVersion, 1)); err != nil {
		t.Fatal(err)
	}
	if exists(t, base, store.Key{PK: "rec#title=a", SK: "1"}) || !exists(t, base, store.Key{PK: "rec#title=b", SK: "1"}) || count(t, base) != 1 {
		t.Fatal("the update did not move the entry from a to b, or changed the count")
	}
	if err := fed.Transact(ctx, store.Put(store.Item{PK: "rec", SK: "2", Version: 1, Data: []byte("seeded")}, store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	if count(t, base) != 1 {
		t.Fatal("an unstamped write was counted")
	}
	if err := fed.Transact(ctx, store.Delete(store.Key{PK: "rec", SK: "1"}, store.IfVersion, 2)); err != nil {
		t.Fatal(err)
	}
	if count(t, base) != 0 || exists(t, base, store.Key{PK: "rec#title=b", SK: "1"}) {
		t.Fatal("the delete left its count or entry")
	}
	if items, _, _ := base.Query(ctx, store.Query{PK: store.PendingPartition}); len(items) != 0 {
		t.Fatalf("%d pending items left", len(items))
	}
}

// A failure after the commit leaves the change pending, never lost; the
// next drain derives it, once.
func TestFedHealsAfterAFailureOnce(t *testing.T) {
	ctx := context.Background()
	// The commit succeeds, every transaction after it (the drain's) fails.
	base := &failing{Store: openBolt(t), thenFail: true}
	fed := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := fed.Transact(ctx, store.Put(rec(1, "a", 1, 10), store.IfAbsent, 0)); err != nil {
		t.Fatalf("a commit whose derived work failed answered %v", err)
	}
	if count(t, base) != 0 {
		t.Fatal("derived work applied although its transaction failed")
	}
	base.thenFail = false
	if err := fed.Drain(ctx); err == nil {
		t.Fatal("a failing drain reported success")
	}
	base.on = false
	for range 2 {
		if err := fed.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if count(t, base) != 1 || !exists(t, base, store.Key{PK: "rec#title=a", SK: "1"}) {
		t.Fatalf("after healing: count %d, want 1, with the entry", count(t, base))
	}
}

// ApplyOnce, the stream's path, applies a replayed change once.
func TestApplyOnceIgnoresReplays(t *testing.T) {
	ctx := context.Background()
	st := openBolt(t)
	ds := store.Derivers{"rec": countAndCopy}
	it := rec(1, "a", 1, 10)
	c := store.Change{New: &it}
	now := time.Unix(1_800_000_000, 0)
	for range 3 {
		if err := ds.ApplyOnce(ctx, st, c, now); err != nil {
			t.Fatal(err)
		}
	}
	removed := store.Change{Old: &it}
	for range 2 {
		if err := ds.ApplyOnce(ctx, st, removed, now); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, st); n != 0 {
		t.Fatalf("count %d after a create and a delete, each replayed, want 0", n)
	}
	if err := ds.ApplyOnce(ctx, st, c, now); err != nil || count(t, st) != 0 {
		t.Fatalf("a create replayed after its delete was applied again: %v", err)
	}
}

// Concurrent writers of one record, each committing on the version it
// read: its changes derive in the order they committed, so one entry is
// left, under the last title.
func TestFedKeepsEachRecordsOrderUnderConcurrentWriters(t *testing.T) {
	ctx := context.Background()
	base := openBolt(t)
	fed := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := fed.Transact(ctx, store.Put(rec(1, "t0", 1, 1), store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	var stamp atomic.Int64
	stamp.Store(1)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; {
				it, err := fed.Get(ctx, store.Key{PK: "rec", SK: "1"})
				if err != nil {
					t.Error(err)
					return
				}
				next := rec(1, fmt.Sprintf("t%d-%d", w, i), it.Version+1, stamp.Add(1))
				err = fed.Transact(ctx, store.Put(next, store.IfVersion, it.Version))
				if errors.Is(err, store.ErrConditionFailed) {
					continue // another writer went first: read again
				}
				if err != nil {
					t.Error(err)
					return
				}
				i++
			}
		}()
	}
	wg.Wait()
	last, err := base.Get(ctx, store.Key{PK: "rec", SK: "1"})
	if err != nil {
		t.Fatal(err)
	}
	for w := range 4 {
		for i := range 25 {
			title := fmt.Sprintf("t%d-%d", w, i)
			if title != string(last.Data) && exists(t, base, store.Key{PK: "rec#title=" + title, SK: "1"}) {
				t.Errorf("a stale entry under %q is left (the record's title is %q)", title, last.Data)
			}
		}
	}
	if !exists(t, base, store.Key{PK: "rec#title=" + string(last.Data), SK: "1"}) || count(t, base) != 1 {
		t.Fatalf("the entry of the last title %q is missing, or the count is %d", last.Data, count(t, base))
	}
}

// One change whose derivation always fails holds back only the later
// changes of its record: every other record's changes are derived when
// their commits return. After MaxDeriveTries it is parked (its pending
// items moved to the parked partition, OnPark told), and its record's
// later changes go on.
func TestFedFailingChangeBlocksOnlyItsRecord(t *testing.T) {
	ctx := context.Background()
	base := openBolt(t)
	const poisoned = 666
	ds := store.Derivers{"rec": func(ctx context.Context, st store.Store, c store.Change) ([]store.Op, error) {
		if c.New != nil && c.New.Nums[store.ChangeNum] == poisoned {
			return nil, errors.New("this change cannot be derived")
		}
		return countAndCopy(ctx, st, c)
	}}
	fed := store.Feed(base, ds)
	var parked []store.Key
	fed.OnPark = func(_ context.Context, k store.Key) { parked = append(parked, k) }
	if err := fed.Transact(ctx, store.Put(rec(0, "poison", 1, poisoned), store.IfAbsent, 0)); err != nil {
		t.Fatalf("a commit whose derivation fails answered %v", err)
	}
	for i := 1; i < 20; i++ {
		if err := fed.Transact(ctx, store.Put(rec(i, "ok", 1, int64(i)), store.IfAbsent, 0)); err != nil {
			t.Fatal(err)
		}
		if n := count(t, base); n != int64(i) {
			t.Fatalf("after %d good creates behind a failing one, the count is %d", i, n)
		}
	}
	// The failing record's next change waits for the failing one.
	if err := fed.Transact(ctx, store.Put(rec(0, "later", 2, 1000), store.IfVersion, 1)); err != nil {
		t.Fatal(err)
	}
	if exists(t, base, store.Key{PK: "rec#title=later", SK: "0"}) {
		t.Fatal("a record's later change was derived before its earlier one")
	}
	for range store.MaxDeriveTries {
		fed.Drain(ctx)
	}
	if len(parked) != 1 || parked[0] != (store.Key{PK: "rec", SK: "0"}) {
		t.Fatalf("parked %v, want the failing change's record", parked)
	}
	items, _, err := base.Query(ctx, store.Query{PK: store.ParkedPartition})
	if err != nil || len(items) != 1 { // a create: its image after only
		t.Fatalf("%d parked items (%v), want the failing create's", len(items), err)
	}
	if err := fed.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if !exists(t, base, store.Key{PK: "rec#title=later", SK: "0"}) {
		t.Fatal("the record's later change was not derived once the failing one was parked")
	}
	if items, _, _ := base.Query(ctx, store.Query{PK: store.PendingPartition}); len(items) != 0 {
		t.Fatalf("%d pending items left", len(items))
	}
}

// A change an earlier process left pending (killed between its commit and
// its derivation) is derived by the next process, before that process's
// own change of the same record.
func TestFedDerivesWhatAnEarlierProcessLeft(t *testing.T) {
	ctx := context.Background()
	base := &failing{Store: openBolt(t), thenFail: true}
	first := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := first.Transact(ctx, store.Put(rec(1, "a", 1, 10), store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	base.on, base.thenFail = false, false // the first process is gone; its change is pending
	second := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := second.Transact(ctx, store.Put(rec(1, "b", 2, 11), store.IfVersion, 1)); err != nil {
		t.Fatal(err)
	}
	if count(t, base) != 1 || exists(t, base, store.Key{PK: "rec#title=a", SK: "1"}) || !exists(t, base, store.Key{PK: "rec#title=b", SK: "1"}) {
		t.Fatalf("after a change left by an earlier process and one of the next: count %d, want 1, one entry under b", count(t, base))
	}
}

// The local feed's pending images count toward neither of DynamoDB's
// limits: a transaction that fits in AWS (100 items, 4 MB) fits locally
// with the images of the deriving record it changes, and one that does
// not fit in AWS fails locally too.
func TestFedLimitsAreAWSs(t *testing.T) {
	ctx := context.Background()
	base := openBolt(t)
	fed := store.Feed(base, store.Derivers{"rec": func(context.Context, store.Store, store.Change) ([]store.Op, error) { return nil, nil }})
	big := bytes.Repeat([]byte("x"), 350<<10) // records.MaxData
	if err := fed.Transact(ctx, store.Put(rec(1, string(big), 1, 10), store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	fill := func(n, size int) []store.Op {
		var ops []store.Op
		for i := range n {
			ops = append(ops, store.Put(store.Item{PK: "other", SK: fmt.Sprint(i), Data: bytes.Repeat([]byte("y"), size)}, store.Always, 0))
		}
		return ops
	}
	// 100 items: the record's update (its images before and after are
	// 700 KB more, 2 items more) and 99 others.
	ops := append([]store.Op{store.Put(rec(1, string(big), 2, 11), store.IfVersion, 1)}, fill(store.MaxTransactItems-1, 10)...)
	if err := fed.Transact(ctx, ops...); err != nil {
		t.Fatalf("100 items with a deriving record's update: %v", err)
	}
	// 3.9 MB: the update and 9 items of 390 KB.
	ops = append([]store.Op{store.Put(rec(1, string(big), 3, 12), store.IfVersion, 2)}, fill(9, 390<<10)...)
	if err := fed.Transact(ctx, ops...); err != nil {
		t.Fatalf("3.9 MB with a deriving record's update: %v", err)
	}
	// Over AWS's limits: refused here too.
	ops = append([]store.Op{store.Put(rec(1, string(big), 4, 13), store.IfVersion, 3)}, fill(10, 390<<10)...)
	if err := fed.Transact(ctx, ops...); err == nil {
		t.Fatal("4.2 MB committed locally")
	}
	ops = append([]store.Op{store.Put(rec(1, string(big), 4, 13), store.IfVersion, 3)}, fill(store.MaxTransactItems, 10)...)
	if err := fed.Transact(ctx, ops...); err == nil {
		t.Fatal("101 items committed locally")
	}
}

// The stream's markers of different records are written to different
// partition keys, so a busy feed spreads its writes over the table's
// partitions instead of writing one key with every change.
func TestApplyOnceSpreadsItsMarkers(t *testing.T) {
	ctx := context.Background()
	rw := &keyRecorder{Store: openBolt(t)}
	ds := store.Derivers{"rec": countAndCopy}
	now := time.Unix(1_800_000_000, 0)
	for id := 1; id <= 3; id++ {
		it := rec(id, "a", 1, int64(10+id))
		if err := ds.ApplyOnce(ctx, rw, store.Change{New: &it}, now); err != nil {
			t.Fatal(err)
		}
	}
	markers := map[string]bool{}
	for _, k := range rw.keys {
		if strings.HasPrefix(k.PK, "feed#applied") {
			markers[k.PK] = true
		}
	}
	if len(markers) != 3 {
		t.Fatalf("3 records' markers in %d partitions (%v), want 3", len(markers), markers)
	}
}

// keyRecorder notes the keys its transactions write.
type keyRecorder struct {
	store.Store
	keys []store.Key
}

func (r *keyRecorder) Transact(ctx context.Context, ops ...store.Op) error {
	for i := range ops {
		r.keys = append(r.keys, ops[i].TargetKey())
	}
	return r.Store.Transact(ctx, ops...)
}

// A family of partitions, one per owner, derives by its prefix: exactly
// the partitions that append a decimal id to it, not its entries'.
func TestDerivesAFamilyOfPartitions(t *testing.T) {
	d := func(context.Context, store.Store, store.Change) ([]store.Op, error) { return nil, nil }
	ds := store.Derivers{"page": d, "script_tag#app#": d}
	for pk, want := range map[string]bool{
		"page": true, "page#1": false, "script_tag#app#5": true, "script_tag#app#123456": true,
		"script_tag#app#": false, "script_tag#app#5#by:updated_at": false, "script_tag#app#x": false,
		"count#script_tag#app#5": false, "tomb#script_tag#app#5": false, "script_tag": false,
	} {
		if got := ds.Derives(pk); got != want {
			t.Errorf("Derives(%q) = %v, want %v", pk, got, want)
		}
	}
}

// hooked lets a test decide each transaction's fate before it commits.
type hooked struct {
	store.Store
	mu      sync.Mutex
	largest int // the most ops one transaction committed
	before  func(ops []store.Op) error
}

func (h *hooked) Transact(ctx context.Context, ops ...store.Op) error {
	h.mu.Lock()
	before := h.before
	h.mu.Unlock()
	if before != nil {
		if err := before(ops); err != nil {
			return err
		}
	}
	err := h.Store.Transact(ctx, ops...)
	if err == nil {
		h.mu.Lock()
		h.largest = max(h.largest, len(ops))
		h.mu.Unlock()
	}
	return err
}

func creates(from, n int) []store.Op {
	var ops []store.Op
	for i := range n {
		ops = append(ops, store.Put(rec(from+i, "t", 1, int64(100+from+i)), store.IfAbsent, 0))
	}
	return ops
}

func pendingLeft(t *testing.T, st store.Store) int {
	items, _, err := st.Query(context.Background(), store.Query{PK: store.PendingPartition})
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

// A transaction whose pending images would not fit it with DynamoDB's
// 100 items (the store counts them; AWS writes none) has them written
// ahead and commits only a marker: each of its 80 changes is derived, no
// transaction is over 100 items, and nothing is left pending. One that
// fails leaves none of its images and derives nothing.
func TestFedSpillsImagesThatDoNotFit(t *testing.T) {
	ctx := context.Background()
	base := &hooked{Store: openBolt(t)}
	fed := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := fed.Transact(ctx, creates(0, 80)...); err != nil {
		t.Fatal(err)
	}
	if c := count(t, base); c != 80 || base.largest > store.MaxTransactItems {
		t.Fatalf("count %d, want 80; largest transaction %d items", c, base.largest)
	}
	if n := pendingLeft(t, base); n != 0 {
		t.Fatalf("%d pending items left", n)
	}
	// The 61st create meets a record that is there: nothing commits.
	if err := fed.Transact(ctx, creates(20, 61)...); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("got %v, want a failed condition", err)
	}
	if c, n := count(t, base), pendingLeft(t, base); c != 80 || n != 0 {
		t.Fatalf("after a failed spilled transaction: count %d, want 80; %d pending items left", c, n)
	}
}

// Images spilled by an earlier process are derived by the next when their
// transaction committed (its marker is there), and dropped when it did
// not.
func TestFedSpilledImagesOfAnEarlierProcess(t *testing.T) {
	ctx := context.Background()
	base := &hooked{Store: openBolt(t)}
	hasMarker := func(ops []store.Op) bool {
		for i := range ops {
			if k := ops[i].TargetKey(); k.PK == store.PendingPartition && strings.HasSuffix(k.SK, "#c") && ops[i].Kind == store.OpPut {
				return true
			}
		}
		return false
	}
	// The first process: one spilled transaction commits but its
	// derivations fail; another's commit never happens, and the removal of
	// its images fails too.
	committed := false
	base.before = func(ops []store.Op) error {
		if committed && ops[0].TargetKey().PK != store.PendingPartition {
			return &store.UnavailableError{Reason: "test"} // a derivation
		}
		if hasMarker(ops) {
			if committed {
				return &store.UnavailableError{Reason: "test"}
			}
			committed = true
		}
		if committed && ops[0].Kind == store.OpDelete {
			return &store.UnavailableError{Reason: "test"} // the images' removal
		}
		return nil
	}
	first := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := first.Transact(ctx, creates(0, 60)...); err != nil {
		t.Fatal(err)
	}
	if err := first.Transact(ctx, creates(100, 60)...); err == nil {
		t.Fatal("a transaction that never committed answered success")
	}
	if c := count(t, base); c != 0 {
		t.Fatalf("count %d before the next process", c)
	}
	base.before = nil
	second := store.Feed(base, store.Derivers{"rec": countAndCopy})
	if err := second.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if c, n := count(t, base), pendingLeft(t, base); c != 60 || n != 0 {
		t.Fatalf("the next process: count %d, want 60; %d pending items left", c, n)
	}
	if exists(t, base, store.Key{PK: "rec", SK: "100"}) {
		t.Fatal("a record of the transaction that never committed is there")
	}
}
