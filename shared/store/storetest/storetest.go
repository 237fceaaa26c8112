// Package storetest is the conformance suite every store.Store passes.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/store"
)

// Run runs the suite. open returns a fresh, empty store for each subtest;
// Run closes it when the subtest ends.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s store.Store)
	}{
		{"GetMissing", testGetMissing},
		{"PutGetRoundtrip", testRoundtrip},
		{"PutReplacesWholeItem", testPutReplaces},
		{"Validate", testValidate},
		{"SingleOpConditions", testSingleConditions},
		{"MultiOpConditionIndex", testMultiConditionIndex},
		{"Atomicity", testAtomicity},
		{"QueryOrderAndPaging", testQueryPaging},
		{"QueryBounds", testQueryBounds},
		{"QueryPartitions", testQueryPartitions},
		{"QueryBadInput", testQueryBadInput},
		{"Indexes", testIndexes},
		{"IndexEntriesFollowItem", testIndexMoves},
		{"Count", testCount},
		{"Add", testAdd},
		{"Expiry", testExpiry},
		{"ConcurrentIfAbsent", testConcurrentIfAbsent},
		{"ConcurrentAdd", testConcurrentAdd},
		{"ConcurrentReadModifyWrite", testConcurrentRMW},
		{"ConcurrentTransactions", testConcurrentTransactions},
		{"LocalClockAndWipe", testLocal},
		{"RequestTokens", testRequestTokens},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := open(t)
			t.Cleanup(func() {
				if err := s.Close(); err != nil {
					t.Errorf("close: %v", err)
				}
			})
			tc.fn(t, s)
		})
	}
}

// ---- helpers ----

func k(pk, sk string) store.Key { return store.Key{PK: pk, SK: sk} }

func put(t *testing.T, s store.Store, it store.Item) {
	t.Helper()
	if err := s.Transact(t.Context(), store.Put(it, store.Always, 0)); err != nil {
		t.Fatalf("put %s/%s: %v", it.PK, it.SK, err)
	}
}

func get(t *testing.T, s store.Store, key store.Key) store.Item {
	t.Helper()
	it, err := s.Get(t.Context(), key)
	if err != nil {
		t.Fatalf("get %s/%s: %v", key.PK, key.SK, err)
	}
	return it
}

func mustMissing(t *testing.T, s store.Store, key store.Key) {
	t.Helper()
	it, err := s.Get(t.Context(), key)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get %s/%s: want ErrNotFound, got %+v, %v", key.PK, key.SK, it, err)
	}
}

// wantCond checks that err is the failed condition of the item at key.
func wantCond(t *testing.T, err error, key store.Key) {
	t.Helper()
	if err == nil {
		t.Fatalf("want condition failure on %v, got success", key)
	}
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("want condition failure on %v, got %v", key, err)
	}
	if got, _ := store.FailedKey(err); got != key || !store.FailedOn(err, key) {
		t.Fatalf("want condition failure on %v, got %v (%v)", key, got, err)
	}
}

// failsOn transacts ops and wants them to fail on the condition of ops[i].
func failsOn(t *testing.T, s store.Store, i int, ops ...store.Op) {
	t.Helper()
	wantCond(t, s.Transact(t.Context(), ops...), ops[i].TargetKey())
}

func ok(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// norm makes empty and nil Nums/Data compare equal.
func norm(it store.Item) store.Item {
	if len(it.Nums) == 0 {
		it.Nums = nil
	}
	if len(it.Data) == 0 {
		it.Data = nil
	}
	return it
}

func sameItem(t *testing.T, got, want store.Item) {
	t.Helper()
	g, w := norm(got), norm(want)
	if g.PK != w.PK || g.SK != w.SK || g.GSI1PK != w.GSI1PK || g.GSI1SK != w.GSI1SK ||
		g.GSI2PK != w.GSI2PK || g.GSI2SK != w.GSI2SK || g.Version != w.Version ||
		g.ExpiresAt != w.ExpiresAt || !maps.Equal(g.Nums, w.Nums) || string(g.Data) != string(w.Data) || string(g.Stamp) != string(w.Stamp) {
		t.Fatalf("item mismatch\n got: %s\nwant: %s", show(g), show(w))
	}
}

func show(it store.Item) string {
	return fmt.Sprintf("{PK:%q SK:%q GSI1:%q/%q GSI2:%q/%q v:%d nums:%v data:%q exp:%d stamp:%q}",
		it.PK, it.SK, it.GSI1PK, it.GSI1SK, it.GSI2PK, it.GSI2SK, it.Version, it.Nums, it.Data, it.ExpiresAt, it.Stamp)
}

// queryAll follows cursors to the end and returns all items and the page sizes.
func queryAll(t *testing.T, s store.Store, q store.Query) ([]store.Item, []int) {
	t.Helper()
	var all []store.Item
	var pages []int
	seen := map[string]bool{}
	for range 10000 {
		items, next, err := s.Query(t.Context(), q)
		if err != nil {
			t.Fatalf("query %+v: %v", q, err)
		}
		if q.Limit > 0 && len(items) > q.Limit {
			t.Fatalf("query %+v: %d items over limit", q, len(items))
		}
		all = append(all, items...)
		pages = append(pages, len(items))
		if next == "" {
			return all, pages
		}
		if seen[next] {
			t.Fatalf("query %+v: cursor %q repeats", q, next)
		}
		seen[next] = true
		q.Cursor = next
	}
	t.Fatalf("query %+v: too many pages", q)
	return nil, nil
}

func sks(items []store.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.SK
	}
	return out
}

func sameStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %q\nwant %q", what, got, want)
	}
}

func count(t *testing.T, s store.Store, q store.Query) int {
	t.Helper()
	n, err := s.Count(t.Context(), q)
	if err != nil {
		t.Fatalf("count %+v: %v", q, err)
	}
	return n
}

// ---- basics ----

func testGetMissing(t *testing.T, s store.Store) {
	mustMissing(t, s, k("nope", "nope"))
	put(t, s, store.Item{PK: "p", SK: "a"})
	mustMissing(t, s, k("p", "b"))
	mustMissing(t, s, k("p", "a0"))
	mustMissing(t, s, k("q", "a"))
}

func testRoundtrip(t *testing.T, s store.Store) {
	full := store.Item{
		PK: "shop#1", SK: "product#ü 🙂/\"x\"",
		GSI1PK: "g1#a", GSI1SK: "2024-01-01",
		GSI2PK: "g2#b", GSI2SK: "title#Zebra",
		Version:   7,
		Nums:      map[string]int64{"stock": 12, "neg": -5, "zero": 0, "big": 1 << 62, "a.b c#d": 3},
		Data:      []byte(`{"title":"Zebra ü \u2603","tags":["a","b"],"nested":{"n":1.5,"null":null},"esc":"\"\\\n\u0000"}`),
		ExpiresAt: time.Now().Add(24 * time.Hour).Unix(),
		Stamp:     []byte(`{"author":"Ünïcode App","zone":"Asia/Tokyo"}`),
	}
	put(t, s, full)
	sameItem(t, get(t, s, full.Key()), full)

	bare := store.Item{PK: "shop#1", SK: "bare"}
	put(t, s, bare)
	sameItem(t, get(t, s, bare.Key()), bare)

	// Only the second index.
	one := store.Item{PK: "shop#1", SK: "one", GSI2PK: "g2#b", GSI2SK: "x", Version: 1, Data: []byte(`{}`)}
	put(t, s, one)
	sameItem(t, get(t, s, one.Key()), one)

	// Query returns the same fields.
	items, _ := queryAll(t, s, store.Query{PK: "shop#1"})
	if len(items) != 3 {
		t.Fatalf("query: %d items", len(items))
	}
	sameItem(t, items[0], bare)
	sameItem(t, items[1], one)
	sameItem(t, items[2], full)
	items, _ = queryAll(t, s, store.Query{Index: store.GSI1, PK: "g1#a"})
	if len(items) != 1 {
		t.Fatalf("gsi1 query: %d items", len(items))
	}
	sameItem(t, items[0], full)
}

func testPutReplaces(t *testing.T, s store.Store) {
	a := store.Item{PK: "p", SK: "a", GSI1PK: "g", GSI1SK: "1", GSI2PK: "h", GSI2SK: "1",
		Version: 1, Nums: map[string]int64{"x": 1, "y": 2}, Data: []byte(`{"a":1}`), ExpiresAt: time.Now().Add(time.Hour).Unix()}
	put(t, s, a)
	b := store.Item{PK: "p", SK: "a", Version: 2, Nums: map[string]int64{"z": 3}}
	put(t, s, b)
	sameItem(t, get(t, s, b.Key()), b)
	if n := count(t, s, store.Query{Index: store.GSI1, PK: "g"}); n != 0 {
		t.Fatalf("old GSI1 entry still counted: %d", n)
	}
	if items, _ := queryAll(t, s, store.Query{Index: store.GSI2, PK: "h"}); len(items) != 0 {
		t.Fatalf("old GSI2 entry still listed: %d", len(items))
	}
}

func testValidate(t *testing.T, s store.Store) {
	ctx := t.Context()
	bad := map[string][]store.Op{
		"none":      nil,
		"dup":       {store.Put(store.Item{PK: "p", SK: "a"}, store.Always, 0), store.Delete(k("p", "a"), store.Always, 0)},
		"empty pk":  {store.Put(store.Item{SK: "a"}, store.Always, 0)},
		"empty sk":  {store.Check(k("p", ""), store.IfAbsent, 0)},
		"too many":  make([]store.Op, store.MaxTransactItems+1),
		"dup check": {store.Check(k("p", "a"), store.IfAbsent, 0), store.Add(k("p", "a"), store.Always, map[string]int64{"n": 1})},
	}
	for i := range bad["too many"] {
		bad["too many"][i] = store.Put(store.Item{PK: "p", SK: fmt.Sprint(i)}, store.Always, 0)
	}
	// DynamoDB's size limits: 4 MB a transaction, 400 KB an item.
	big := bytes.Repeat([]byte("x"), 390<<10)
	for i := range 11 {
		bad["over 4 MB"] = append(bad["over 4 MB"], store.Put(store.Item{PK: "p", SK: fmt.Sprint(i), Data: big}, store.Always, 0))
	}
	bad["item over 400 KB"] = []store.Op{store.Put(store.Item{PK: "p", SK: "a", Data: bytes.Repeat([]byte("x"), 400<<10)}, store.Always, 0)}
	for name, ops := range bad {
		err := s.Transact(ctx, ops...)
		if err == nil || errors.Is(err, store.ErrConditionFailed) {
			t.Errorf("%s: want a validation error, got %v", name, err)
		}
	}
	if _, err := s.Add(ctx, k("", "a"), store.Always, map[string]int64{"n": 1}); err == nil {
		t.Errorf("Add with empty PK: want error")
	}
	if items, _ := queryAll(t, s, store.Query{PK: "p"}); len(items) != 0 {
		t.Fatalf("invalid transactions wrote %d items", len(items))
	}
	// The largest transaction is fine.
	ops := make([]store.Op, store.MaxTransactItems)
	for i := range ops {
		ops[i] = store.Put(store.Item{PK: "p", SK: fmt.Sprintf("%03d", i)}, store.IfAbsent, 0)
	}
	ok(t, s.Transact(ctx, ops...))
	if n := count(t, s, store.Query{PK: "p"}); n != store.MaxTransactItems {
		t.Fatalf("count after max transaction: %d", n)
	}
}

// ---- conditions ----

func testSingleConditions(t *testing.T, s store.Store) {
	ctx := t.Context()
	it := store.Item{PK: "p", SK: "a", Version: 1, Data: []byte(`{"v":1}`)}

	// Put.
	failsOn(t, s, 0, store.Put(it, store.IfPresent, 0))
	failsOn(t, s, 0, store.Put(it, store.IfVersion, 0))
	mustMissing(t, s, it.Key())
	ok(t, s.Transact(ctx, store.Put(it, store.IfAbsent, 0)))
	sameItem(t, get(t, s, it.Key()), it)
	it2 := it
	it2.Version, it2.Data = 2, []byte(`{"v":2}`)
	failsOn(t, s, 0, store.Put(it2, store.IfAbsent, 0))
	failsOn(t, s, 0, store.Put(it2, store.IfVersion, 2))
	failsOn(t, s, 0, store.Put(it2, store.IfVersion, 0))
	sameItem(t, get(t, s, it.Key()), it)
	ok(t, s.Transact(ctx, store.Put(it2, store.IfVersion, 1)))
	sameItem(t, get(t, s, it.Key()), it2)
	it3 := it2
	it3.Version = 3
	ok(t, s.Transact(ctx, store.Put(it3, store.IfPresent, 0)))
	sameItem(t, get(t, s, it.Key()), it3)
	it4 := it3
	it4.Version = 4
	ok(t, s.Transact(ctx, store.Put(it4, store.Always, 0)))
	sameItem(t, get(t, s, it.Key()), it4)

	// Check.
	ok(t, s.Transact(ctx, store.Check(it.Key(), store.IfPresent, 0)))
	ok(t, s.Transact(ctx, store.Check(it.Key(), store.IfVersion, 4)))
	ok(t, s.Transact(ctx, store.Check(it.Key(), store.Always, 0)))
	ok(t, s.Transact(ctx, store.Check(k("p", "none"), store.IfAbsent, 0)))
	ok(t, s.Transact(ctx, store.Check(k("p", "none"), store.Always, 0)))
	failsOn(t, s, 0, store.Check(it.Key(), store.IfAbsent, 0))
	failsOn(t, s, 0, store.Check(it.Key(), store.IfVersion, 3))
	failsOn(t, s, 0, store.Check(k("p", "none"), store.IfPresent, 0))
	failsOn(t, s, 0, store.Check(k("p", "none"), store.IfVersion, 0))
	// An op that cannot fail does not shift the index of one that does.
	failsOn(t, s, 1, store.Check(k("p", "none"), store.Always, 0), store.Check(it.Key(), store.IfAbsent, 0))
	failsOn(t, s, 1, store.Check(k("p", "none"), store.Always, 0), store.Put(store.Item{PK: "p", SK: "a"}, store.IfAbsent, 0))

	// Delete.
	failsOn(t, s, 0, store.Delete(k("p", "none"), store.IfPresent, 0))
	failsOn(t, s, 0, store.Delete(k("p", "none"), store.IfVersion, 0))
	ok(t, s.Transact(ctx, store.Delete(k("p", "none"), store.Always, 0)))
	ok(t, s.Transact(ctx, store.Delete(k("p", "none"), store.IfAbsent, 0)))
	failsOn(t, s, 0, store.Delete(it.Key(), store.IfAbsent, 0))
	failsOn(t, s, 0, store.Delete(it.Key(), store.IfVersion, 3))
	sameItem(t, get(t, s, it.Key()), it4)
	ok(t, s.Transact(ctx, store.Delete(it.Key(), store.IfVersion, 4)))
	mustMissing(t, s, it.Key())
	put(t, s, it)
	ok(t, s.Transact(ctx, store.Delete(it.Key(), store.IfPresent, 0)))
	mustMissing(t, s, it.Key())
	put(t, s, it)
	ok(t, s.Transact(ctx, store.Delete(it.Key(), store.Always, 0)))
	mustMissing(t, s, it.Key())
}

func testMultiConditionIndex(t *testing.T, s store.Store) {
	ctx := t.Context()
	x := store.Item{PK: "p", SK: "x", Version: 3, Nums: map[string]int64{"n": 1}, Data: []byte(`{"x":1}`)}
	put(t, s, x)
	pa := store.Put(store.Item{PK: "p", SK: "a", Version: 1}, store.Always, 0)
	pb := store.Put(store.Item{PK: "p", SK: "b", Version: 1}, store.Always, 0)
	pc := store.Put(store.Item{PK: "p", SK: "c", Version: 1}, store.IfAbsent, 0)
	cases := []struct {
		name string
		ops  []store.Op
		fail int
	}{
		{"put IfAbsent on present", []store.Op{pa, store.Put(store.Item{PK: "p", SK: "x"}, store.IfAbsent, 0), pc}, 1},
		{"delete IfPresent on absent", []store.Op{store.Check(x.Key(), store.IfVersion, 3), store.Delete(k("p", "y"), store.IfPresent, 0), pa}, 1},
		{"add IfPresent on absent", []store.Op{pa, pb, store.Add(k("p", "z"), store.IfPresent, map[string]int64{"n": 1})}, 2},
		{"check wrong version", []store.Op{store.Check(x.Key(), store.IfVersion, 4), pa}, 0},
		{"check IfAbsent on present", []store.Op{pa, store.Check(x.Key(), store.IfAbsent, 0)}, 1},
		{"delete wrong version", []store.Op{store.Delete(x.Key(), store.IfVersion, 2), pa}, 0},
		{"put IfVersion on absent", []store.Op{pa, pb, pc, store.Put(store.Item{PK: "p", SK: "d"}, store.IfVersion, 0)}, 3},
		{"add IfVersion wrong", []store.Op{pa, {Kind: store.OpAdd, Key: x.Key(), Cond: store.IfVersion, Version: 2, Deltas: map[string]int64{"n": 1}}}, 1},
		{"first of two failures", []store.Op{pa, store.Put(store.Item{PK: "p", SK: "x"}, store.IfAbsent, 0), store.Check(k("p", "nope"), store.IfPresent, 0)}, 1},
		{"after unfailing check", []store.Op{store.Check(k("p", "nope"), store.Always, 0), pa, store.Check(k("p", "nope3"), store.IfPresent, 0)}, 2},
	}
	for _, c := range cases {
		err := s.Transact(ctx, c.ops...)
		t.Run(c.name, func(t *testing.T) { wantCond(t, err, c.ops[c.fail].TargetKey()) })
		for _, sk := range []string{"a", "b", "c", "d", "y", "z"} {
			mustMissing(t, s, k("p", sk))
		}
		sameItem(t, get(t, s, x.Key()), x)
	}
	// And when every condition holds, everything is written.
	ok(t, s.Transact(ctx,
		store.Check(x.Key(), store.IfVersion, 3),
		store.Put(store.Item{PK: "p", SK: "a", Version: 1}, store.IfAbsent, 0),
		store.Check(k("p", "nope"), store.IfAbsent, 0),
		store.Add(k("p", "z"), store.IfAbsent, map[string]int64{"n": 5}),
		store.Check(k("p", "nope2"), store.Always, 0),
	))
	sameItem(t, get(t, s, k("p", "a")), store.Item{PK: "p", SK: "a", Version: 1})
	sameItem(t, get(t, s, k("p", "z")), store.Item{PK: "p", SK: "z", Version: 1, Nums: map[string]int64{"n": 5}})
	mustMissing(t, s, k("p", "nope"))
	mustMissing(t, s, k("p", "nope2"))
}

func testAtomicity(t *testing.T, s store.Store) {
	ctx := t.Context()
	x := store.Item{PK: "p", SK: "x", Version: 1, Data: []byte(`{"x":1}`), GSI1PK: "g", GSI1SK: "x"}
	y := store.Item{PK: "p", SK: "y", Version: 1, Nums: map[string]int64{"n": 10}}
	put(t, s, x)
	put(t, s, y)
	x2 := x
	x2.Version, x2.Data, x2.GSI1SK = 2, []byte(`{"x":2}`), "x2"
	err := s.Transact(ctx,
		store.Put(x2, store.IfVersion, 1),
		store.Delete(y.Key(), store.Always, 0),
		store.Put(store.Item{PK: "p", SK: "z"}, store.IfPresent, 0),
	)
	wantCond(t, err, k("p", "z"))
	sameItem(t, get(t, s, x.Key()), x)
	sameItem(t, get(t, s, y.Key()), y)
	mustMissing(t, s, k("p", "z"))
	gi, _ := queryAll(t, s, store.Query{Index: store.GSI1, PK: "g"})
	sameStrings(t, "gsi1 after failed transaction", sks(gi), []string{"x"})
	if gi[0].GSI1SK != "x" {
		t.Fatalf("index entry changed: %s", show(gi[0]))
	}

	err = s.Transact(ctx,
		store.Add(y.Key(), store.Always, map[string]int64{"n": 1}),
		store.Put(store.Item{PK: "p", SK: "new"}, store.IfAbsent, 0),
		store.Check(x.Key(), store.IfVersion, 5),
	)
	wantCond(t, err, x.Key())
	sameItem(t, get(t, s, y.Key()), y)
	mustMissing(t, s, k("p", "new"))

	// The successful version applies every op.
	ok(t, s.Transact(ctx,
		store.Put(x2, store.IfVersion, 1),
		store.Delete(y.Key(), store.IfPresent, 0),
		store.Add(k("p", "z"), store.Always, map[string]int64{"n": 2}),
		store.Put(store.Item{PK: "p", SK: "w", Version: 1}, store.IfAbsent, 0),
	))
	sameItem(t, get(t, s, x.Key()), x2)
	mustMissing(t, s, y.Key())
	sameItem(t, get(t, s, k("p", "z")), store.Item{PK: "p", SK: "z", Version: 1, Nums: map[string]int64{"n": 2}})
	sameItem(t, get(t, s, k("p", "w")), store.Item{PK: "p", SK: "w", Version: 1})
	gi, _ = queryAll(t, s, store.Query{Index: store.GSI1, PK: "g"})
	if len(gi) != 1 || gi[0].GSI1SK != "x2" {
		t.Fatalf("gsi1 after transaction: %v", gi)
	}
}

// ---- queries ----

func testQueryPaging(t *testing.T, s store.Store) {
	var want []string
	for i := range 25 {
		sk := fmt.Sprintf("item#%02d", i)
		want = append(want, sk)
		put(t, s, store.Item{PK: "p", SK: sk, Version: int64(i), Data: []byte(fmt.Sprintf(`{"i":%d}`, i))})
	}
	put(t, s, store.Item{PK: "p0", SK: "item#99"}) // neighbour partitions
	put(t, s, store.Item{PK: "o", SK: "item#00"})
	rev := slices.Clone(want)
	slices.Reverse(rev)

	items, pages := queryAll(t, s, store.Query{PK: "p", Limit: 10})
	sameStrings(t, "asc limit 10", sks(items), want)
	if !slices.Equal(pages, []int{10, 10, 5}) {
		t.Fatalf("asc pages %v, want [10 10 5]", pages)
	}
	for i, it := range items {
		if it.Version != int64(i) || string(it.Data) != fmt.Sprintf(`{"i":%d}`, i) {
			t.Fatalf("item %d: %s", i, show(it))
		}
	}
	items, pages = queryAll(t, s, store.Query{PK: "p", Limit: 10, Desc: true})
	sameStrings(t, "desc limit 10", sks(items), rev)
	if !slices.Equal(pages, []int{10, 10, 5}) {
		t.Fatalf("desc pages %v, want [10 10 5]", pages)
	}
	items, _ = queryAll(t, s, store.Query{PK: "p"})
	sameStrings(t, "asc", sks(items), want)
	items, _ = queryAll(t, s, store.Query{PK: "p", Desc: true})
	sameStrings(t, "desc", sks(items), rev)
	for _, lim := range []int{1, 3, 5, 24, 25, 26, 100} {
		items, _ = queryAll(t, s, store.Query{PK: "p", Limit: lim})
		sameStrings(t, fmt.Sprintf("asc limit %d", lim), sks(items), want)
		items, _ = queryAll(t, s, store.Query{PK: "p", Limit: lim, Desc: true})
		sameStrings(t, fmt.Sprintf("desc limit %d", lim), sks(items), rev)
	}
	// A page ending at the last item reports no next page.
	items, next, err := s.Query(t.Context(), store.Query{PK: "p", Limit: 25})
	ok(t, err)
	if len(items) != 25 || next != "" {
		t.Fatalf("limit 25 of 25: %d items, next %q", len(items), next)
	}
	// Paging with bounds.
	items, _ = queryAll(t, s, store.Query{PK: "p", After: "item#03", Before: "item#21", Limit: 4})
	sameStrings(t, "bounded asc", sks(items), want[4:21])
	items, _ = queryAll(t, s, store.Query{PK: "p", After: "item#03", Before: "item#21", Limit: 4, Desc: true})
	r := slices.Clone(want[4:21])
	slices.Reverse(r)
	sameStrings(t, "bounded desc", sks(items), r)
	items, _ = queryAll(t, s, store.Query{PK: "p", SKPrefix: "item#1", Limit: 3, Desc: true})
	sameStrings(t, "prefix desc", sks(items), rev[5:15])
	// Writes between pages: the cursor still continues after the last item seen.
	first, next, err := s.Query(t.Context(), store.Query{PK: "p", Limit: 10})
	ok(t, err)
	ok(t, s.Transact(t.Context(), store.Delete(k("p", "item#10"), store.Always, 0)))
	put(t, s, store.Item{PK: "p", SK: "item#10a"})
	rest, _ := queryAll(t, s, store.Query{PK: "p", Limit: 10, Cursor: next})
	got := append(sks(first), sks(rest)...)
	w := append(slices.Clone(want[:10]), "item#10a")
	w = append(w, want[11:]...)
	sameStrings(t, "paging across writes", got, w)
}

// testQueryBounds compares every combination of prefix and bounds, in both
// directions, whole and paged, with a reference filter.
func testQueryBounds(t *testing.T, s store.Store) {
	var all []string
	for i := range 25 {
		all = append(all, fmt.Sprintf("item#%02d", i))
	}
	all = append(all, "a", "item", "item#", "other#a", "other#b", "zz")
	for _, sk := range all {
		put(t, s, store.Item{PK: "b", SK: sk})
	}
	put(t, s, store.Item{PK: "b2", SK: "item#05"})
	slices.Sort(all)

	prefixes := []string{"", "item#", "item#1", "item#2", "zz", "nomatch", "item#05"}
	afters := []string{"", "item#", "item#09", "item#1", "item#15", "item#24", "b", "item#2"}
	befores := []string{"", "item#", "item#05", "item#1", "item#2", "item#20", "other#", "z"}
	for _, p := range prefixes {
		for _, a := range afters {
			for _, b := range befores {
				var want []string
				for _, sk := range all {
					if strings.HasPrefix(sk, p) && (a == "" || sk > a) && (b == "" || sk < b) {
						want = append(want, sk)
					}
				}
				rev := slices.Clone(want)
				slices.Reverse(rev)
				q := store.Query{PK: "b", SKPrefix: p, After: a, Before: b}
				name := fmt.Sprintf("prefix=%q after=%q before=%q", p, a, b)
				items, _ := queryAll(t, s, q)
				sameStrings(t, name+" asc", sks(items), want)
				q.Desc = true
				items, _ = queryAll(t, s, q)
				sameStrings(t, name+" desc", sks(items), rev)
				q.Limit = 4
				items, _ = queryAll(t, s, q)
				sameStrings(t, name+" desc limit 4", sks(items), rev)
				q.Desc = false
				items, _ = queryAll(t, s, q)
				sameStrings(t, name+" asc limit 4", sks(items), want)
				if n := count(t, s, q); n != len(want) {
					t.Fatalf("%s: count %d, want %d", name, n, len(want))
				}
			}
		}
	}
}

func testQueryPartitions(t *testing.T, s store.Store) {
	for _, pk := range []string{"a", "a#", "a#b", "ab", "b"} {
		for _, sk := range []string{"1", "2", "#", "a#b"} {
			put(t, s, store.Item{PK: pk, SK: sk, Data: []byte(`"` + pk + `"`)})
		}
	}
	for _, pk := range []string{"a", "a#", "a#b", "ab", "b"} {
		items, _ := queryAll(t, s, store.Query{PK: pk})
		sameStrings(t, "partition "+pk, sks(items), []string{"#", "1", "2", "a#b"})
		for _, it := range items {
			if it.PK != pk {
				t.Fatalf("partition %s returned %s", pk, show(it))
			}
		}
		items, _ = queryAll(t, s, store.Query{PK: pk, SKPrefix: "a"})
		sameStrings(t, "prefix a in "+pk, sks(items), []string{"a#b"})
	}
	items, _ := queryAll(t, s, store.Query{PK: "missing"})
	if len(items) != 0 {
		t.Fatalf("missing partition: %d items", len(items))
	}
	items, _ = queryAll(t, s, store.Query{Index: store.GSI1, PK: "a"})
	if len(items) != 0 {
		t.Fatalf("unindexed items in GSI1: %d", len(items))
	}
}

func testQueryBadInput(t *testing.T, s store.Store) {
	put(t, s, store.Item{PK: "p", SK: "a"})
	if _, _, err := s.Query(t.Context(), store.Query{Index: "GSI9", PK: "p"}); err == nil {
		t.Errorf("unknown index: want error")
	}
	if _, err := s.Count(t.Context(), store.Query{Index: "GSI9", PK: "p"}); err == nil {
		t.Errorf("count on unknown index: want error")
	}
	if _, _, err := s.Query(t.Context(), store.Query{PK: "p", Cursor: "!!not a cursor!!"}); err == nil {
		t.Errorf("bad cursor: want error")
	}
}

func testIndexes(t *testing.T, s store.Store) {
	type ref struct{ idxSK, sk string }
	var g1, g2even []ref
	for i := range 25 {
		sk := fmt.Sprintf("item#%02d", i)
		it := store.Item{
			PK: "p", SK: sk,
			GSI1PK: "g1#a", GSI1SK: fmt.Sprintf("s#%d", i%10), // ties
			GSI2PK: fmt.Sprintf("g2#%d", i%2), GSI2SK: fmt.Sprintf("t#%02d", 24-i),
			Version: int64(i),
		}
		if i == 24 {
			it.PK = "other" // index partitions span table partitions
		}
		put(t, s, it)
		g1 = append(g1, ref{it.GSI1SK, sk})
		if i%2 == 0 {
			g2even = append(g2even, ref{it.GSI2SK, sk})
		}
	}
	put(t, s, store.Item{PK: "p", SK: "noindex"})
	put(t, s, store.Item{PK: "p", SK: "g1b", GSI1PK: "g1#b", GSI1SK: "s#0"})

	// GSI1 has ties in its sort key: check order by index key and that every
	// item comes exactly once, in any page size.
	checkIdx := func(name string, q store.Query, want []ref) {
		t.Helper()
		for _, lim := range []int{0, 1, 4, 7} {
			for _, desc := range []bool{false, true} {
				q.Limit, q.Desc = lim, desc
				items, _ := queryAll(t, s, q)
				label := fmt.Sprintf("%s limit %d desc %v", name, lim, desc)
				if len(items) != len(want) {
					t.Fatalf("%s: %d items, want %d: %q", label, len(items), len(want), sks(items))
				}
				wantSKs := map[string]string{}
				for _, r := range want {
					wantSKs[r.sk] = r.idxSK
				}
				seen := map[string]bool{}
				prev := ""
				for i, it := range items {
					if seen[it.SK] {
						t.Fatalf("%s: %s twice", label, it.SK)
					}
					seen[it.SK] = true
					idxSK := it.GSI1SK
					if q.Index == store.GSI2 {
						idxSK = it.GSI2SK
					}
					if w, ok := wantSKs[it.SK]; !ok || w != idxSK {
						t.Fatalf("%s: unexpected %s", label, show(it))
					}
					if i > 0 && ((!desc && idxSK < prev) || (desc && idxSK > prev)) {
						t.Fatalf("%s: out of order at %d: %q after %q", label, i, idxSK, prev)
					}
					prev = idxSK
				}
				if n := count(t, s, q); n != len(want) {
					t.Fatalf("%s: count %d, want %d", label, n, len(want))
				}
			}
		}
	}
	filter := func(rs []ref, f func(string) bool) []ref {
		var out []ref
		for _, r := range rs {
			if f(r.idxSK) {
				out = append(out, r)
			}
		}
		return out
	}
	checkIdx("gsi1", store.Query{Index: store.GSI1, PK: "g1#a"}, g1)
	checkIdx("gsi1 prefix", store.Query{Index: store.GSI1, PK: "g1#a", SKPrefix: "s#3"}, filter(g1, func(s string) bool { return s == "s#3" }))
	checkIdx("gsi1 after", store.Query{Index: store.GSI1, PK: "g1#a", After: "s#3"}, filter(g1, func(s string) bool { return s > "s#3" }))
	checkIdx("gsi1 before", store.Query{Index: store.GSI1, PK: "g1#a", Before: "s#3"}, filter(g1, func(s string) bool { return s < "s#3" }))
	checkIdx("gsi1 between", store.Query{Index: store.GSI1, PK: "g1#a", After: "s#2", Before: "s#7"}, filter(g1, func(s string) bool { return s > "s#2" && s < "s#7" }))
	checkIdx("gsi1 b", store.Query{Index: store.GSI1, PK: "g1#b"}, []ref{{"s#0", "g1b"}})
	checkIdx("gsi2", store.Query{Index: store.GSI2, PK: "g2#0"}, g2even)
	checkIdx("gsi2 prefix", store.Query{Index: store.GSI2, PK: "g2#0", SKPrefix: "t#1"}, filter(g2even, func(s string) bool { return strings.HasPrefix(s, "t#1") }))

	// GSI2 sort keys are unique: the order is fully defined.
	items, _ := queryAll(t, s, store.Query{Index: store.GSI2, PK: "g2#1", Limit: 3})
	var want []string
	for i := 23; i >= 1; i -= 2 {
		want = append(want, fmt.Sprintf("item#%02d", i))
	}
	sameStrings(t, "gsi2 odd", sks(items), want)
	for _, it := range items {
		var i int64
		if _, err := fmt.Sscanf(it.SK, "item#%d", &i); err != nil || it.PK != "p" || it.Version != i || it.GSI2PK != "g2#1" {
			t.Fatalf("gsi2 item %s", show(it))
		}
	}
	// Index queries return whole items.
	items, _ = queryAll(t, s, store.Query{Index: store.GSI2, PK: "g2#0", SKPrefix: "t#00"})
	if len(items) != 1 {
		t.Fatalf("gsi2 t#00: %d items", len(items))
	}
	sameItem(t, items[0], store.Item{PK: "other", SK: "item#24", GSI1PK: "g1#a", GSI1SK: "s#4", GSI2PK: "g2#0", GSI2SK: "t#00", Version: 24})
}

func testIndexMoves(t *testing.T, s store.Store) {
	for i := range 6 {
		put(t, s, store.Item{PK: "p", SK: fmt.Sprint(i), GSI1PK: "a", GSI1SK: fmt.Sprint(i), GSI2PK: "x", GSI2SK: fmt.Sprint(i)})
	}
	idx := func(index, pk string) []string {
		t.Helper()
		items, _ := queryAll(t, s, store.Query{Index: index, PK: pk})
		return sks(items)
	}
	sameStrings(t, "gsi1 a", idx(store.GSI1, "a"), []string{"0", "1", "2", "3", "4", "5"})
	// Move 1 to another GSI1 partition, keep GSI2.
	put(t, s, store.Item{PK: "p", SK: "1", GSI1PK: "b", GSI1SK: "1", GSI2PK: "x", GSI2SK: "1"})
	// Move 2 within the partition (new sort key).
	put(t, s, store.Item{PK: "p", SK: "2", GSI1PK: "a", GSI1SK: "9", GSI2PK: "x", GSI2SK: "2"})
	// Drop 3 from both indexes.
	put(t, s, store.Item{PK: "p", SK: "3"})
	// Drop 4 from GSI2 only.
	put(t, s, store.Item{PK: "p", SK: "4", GSI1PK: "a", GSI1SK: "4"})
	// Delete 5.
	ok(t, s.Transact(t.Context(), store.Delete(k("p", "5"), store.IfPresent, 0)))
	// Add keeps the index keys of 0.
	_, err := s.Add(t.Context(), k("p", "0"), store.IfPresent, map[string]int64{"n": 1})
	ok(t, err)

	sameStrings(t, "gsi1 a", idx(store.GSI1, "a"), []string{"0", "4", "2"})
	sameStrings(t, "gsi1 b", idx(store.GSI1, "b"), []string{"1"})
	sameStrings(t, "gsi2 x", idx(store.GSI2, "x"), []string{"0", "1", "2"})
	if n := count(t, s, store.Query{Index: store.GSI1, PK: "a"}); n != 3 {
		t.Fatalf("gsi1 a count %d", n)
	}
	// And back.
	put(t, s, store.Item{PK: "p", SK: "1", GSI1PK: "a", GSI1SK: "1"})
	sameStrings(t, "gsi1 a again", idx(store.GSI1, "a"), []string{"0", "1", "4", "2"})
	sameStrings(t, "gsi1 b again", idx(store.GSI1, "b"), nil)
	sameStrings(t, "gsi2 x again", idx(store.GSI2, "x"), []string{"0", "2"})
	ok(t, s.Transact(t.Context(), store.Delete(k("p", "0"), store.Always, 0), store.Delete(k("p", "2"), store.Always, 0)))
	sameStrings(t, "gsi2 x emptied", idx(store.GSI2, "x"), nil)
	if n := count(t, s, store.Query{Index: store.GSI2, PK: "x"}); n != 0 {
		t.Fatalf("gsi2 x count %d", n)
	}
}

func testCount(t *testing.T, s store.Store) {
	if n := count(t, s, store.Query{PK: "p"}); n != 0 {
		t.Fatalf("empty count %d", n)
	}
	for i := range 30 {
		put(t, s, store.Item{PK: "p", SK: fmt.Sprintf("%c#%02d", 'a'+i%3, i), GSI1PK: "g", GSI1SK: fmt.Sprintf("%02d", i)})
	}
	put(t, s, store.Item{PK: "q", SK: "a#00"})
	cases := []struct {
		q    store.Query
		want int
	}{
		{store.Query{PK: "p"}, 30},
		{store.Query{PK: "p", Desc: true}, 30},
		{store.Query{PK: "p", Limit: 3, Cursor: "ignored"}, 30},
		{store.Query{PK: "p", SKPrefix: "a#"}, 10},
		{store.Query{PK: "p", SKPrefix: "b"}, 10},
		{store.Query{PK: "p", SKPrefix: "d"}, 0},
		{store.Query{PK: "p", After: "a#99"}, 20},
		{store.Query{PK: "p", Before: "b#"}, 10},
		{store.Query{PK: "p", After: "a#00", Before: "c#02"}, 19},
		{store.Query{PK: "p", SKPrefix: "b#", After: "b#10"}, 6},
		{store.Query{PK: "p", SKPrefix: "b#", Before: "b#10"}, 3},
		{store.Query{PK: "q"}, 1},
		{store.Query{PK: "none"}, 0},
		{store.Query{Index: store.GSI1, PK: "g"}, 30},
		{store.Query{Index: store.GSI1, PK: "g", SKPrefix: "1"}, 10},
		{store.Query{Index: store.GSI1, PK: "g", After: "05", Before: "10"}, 4},
	}
	for _, c := range cases {
		if n := count(t, s, c.q); n != c.want {
			t.Errorf("count %+v = %d, want %d", c.q, n, c.want)
		}
	}
}

func testAdd(t *testing.T, s store.Store) {
	ctx := t.Context()
	key := k("p", "c")
	it, err := s.Add(ctx, key, store.Always, map[string]int64{"a": 2, "b": -1})
	ok(t, err)
	want := store.Item{PK: "p", SK: "c", Version: 1, Nums: map[string]int64{"a": 2, "b": -1}}
	sameItem(t, it, want)
	sameItem(t, get(t, s, key), want)

	it, err = s.Add(ctx, key, store.IfPresent, map[string]int64{"a": 3, "c": 5, "odd name.x#y": 7})
	ok(t, err)
	want = store.Item{PK: "p", SK: "c", Version: 2, Nums: map[string]int64{"a": 5, "b": -1, "c": 5, "odd name.x#y": 7}}
	sameItem(t, it, want)
	sameItem(t, get(t, s, key), want)

	// No deltas still bumps the version.
	it, err = s.Add(ctx, key, store.Always, nil)
	ok(t, err)
	want.Version = 3
	sameItem(t, it, want)

	// Add keeps every other field.
	full := store.Item{PK: "p", SK: "full", GSI1PK: "g", GSI1SK: "1", GSI2PK: "h", GSI2SK: "2", Version: 10,
		Nums: map[string]int64{"x": 1, "y": 9}, Data: []byte(`{"k":"v"}`), ExpiresAt: time.Now().Add(time.Hour).Unix()}
	put(t, s, full)
	it, err = s.Add(ctx, full.Key(), store.Always, map[string]int64{"x": 4})
	ok(t, err)
	full.Version, full.Nums = 11, map[string]int64{"x": 5, "y": 9}
	sameItem(t, it, full)
	sameItem(t, get(t, s, full.Key()), full)
	items, _ := queryAll(t, s, store.Query{Index: store.GSI1, PK: "g"})
	if len(items) != 1 {
		t.Fatalf("gsi1 after add: %d items", len(items))
	}
	sameItem(t, items[0], full)

	// Conditions.
	_, err = s.Add(ctx, k("p", "absent"), store.IfPresent, map[string]int64{"a": 1})
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Add IfPresent on absent: %v", err)
	}
	mustMissing(t, s, k("p", "absent"))
	_, err = s.Add(ctx, key, store.IfAbsent, map[string]int64{"a": 1})
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Add IfAbsent on present: %v", err)
	}
	sameItem(t, get(t, s, key), want)
	it, err = s.Add(ctx, k("p", "fresh"), store.IfAbsent, map[string]int64{"a": 1})
	ok(t, err)
	sameItem(t, it, store.Item{PK: "p", SK: "fresh", Version: 1, Nums: map[string]int64{"a": 1}})

	// As a transaction op, with IfVersion.
	addV := func(v int64) store.Op {
		return store.Op{Kind: store.OpAdd, Key: full.Key(), Cond: store.IfVersion, Version: v, Deltas: map[string]int64{"y": -9}}
	}
	ok(t, s.Transact(ctx, addV(11)))
	failsOn(t, s, 0, addV(11))
	full.Version, full.Nums = 12, map[string]int64{"x": 5, "y": 0}
	sameItem(t, get(t, s, full.Key()), full)
	ok(t, s.Transact(ctx, store.Add(k("p", "t1"), store.Always, map[string]int64{"n": 1}), addV(12)))
	failsOn(t, s, 1, store.Add(k("p", "t2"), store.Always, map[string]int64{"n": 1}), addV(12))
	mustMissing(t, s, k("p", "t2"))
	sameItem(t, get(t, s, k("p", "t1")), store.Item{PK: "p", SK: "t1", Version: 1, Nums: map[string]int64{"n": 1}})

	// Put after Add replaces the numbers.
	put(t, s, store.Item{PK: "p", SK: "c", Version: 1})
	it, err = s.Add(ctx, key, store.IfVersion, nil) // store.Add passes version 0
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Add IfVersion 0 on version 1: %v, %s", err, show(it))
	}
	it, err = s.Add(ctx, key, store.Always, map[string]int64{"a": 1})
	ok(t, err)
	sameItem(t, it, store.Item{PK: "p", SK: "c", Version: 2, Nums: map[string]int64{"a": 1}})
}

func testExpiry(t *testing.T, s store.Store) {
	ctx := t.Context()
	past := time.Now().Unix() - 100
	future := time.Now().Unix() + 3600
	dead := store.Item{PK: "p", SK: "dead", GSI1PK: "g", GSI1SK: "dead", GSI2PK: "h", GSI2SK: "dead", Version: 4,
		Nums: map[string]int64{"n": 100}, ExpiresAt: past, Data: []byte(`{"old":true}`)}
	live := store.Item{PK: "p", SK: "live", GSI1PK: "g", GSI1SK: "live", Version: 1, ExpiresAt: future}
	forever := store.Item{PK: "p", SK: "zforever", GSI1PK: "g", GSI1SK: "zforever", Version: 1}
	put(t, s, dead)
	put(t, s, live)
	put(t, s, forever)

	mustMissing(t, s, dead.Key())
	sameItem(t, get(t, s, live.Key()), live)
	for _, desc := range []bool{false, true} {
		for _, lim := range []int{0, 1} {
			items, _ := queryAll(t, s, store.Query{PK: "p", Desc: desc, Limit: lim})
			if len(items) != 2 {
				t.Fatalf("query desc=%v limit=%d: %q", desc, lim, sks(items))
			}
			items, _ = queryAll(t, s, store.Query{Index: store.GSI1, PK: "g", Desc: desc, Limit: lim})
			if len(items) != 2 {
				t.Fatalf("gsi1 query desc=%v limit=%d: %q", desc, lim, sks(items))
			}
		}
	}
	items, _ := queryAll(t, s, store.Query{Index: store.GSI2, PK: "h"})
	if len(items) != 0 {
		t.Fatalf("gsi2 lists expired item")
	}
	for _, q := range []store.Query{{PK: "p"}, {PK: "p", SKPrefix: "d"}, {PK: "p", After: "a", Before: "e"}, {Index: store.GSI1, PK: "g"}} {
		want := 2
		if q.SKPrefix != "" || q.After != "" {
			want = 0
		}
		if n := count(t, s, q); n != want {
			t.Fatalf("count %+v = %d, want %d", q, n, want)
		}
	}

	// Conditions see an expired item as absent.
	failsOn(t, s, 0, store.Check(dead.Key(), store.IfPresent, 0))
	failsOn(t, s, 0, store.Check(dead.Key(), store.IfVersion, 4))
	failsOn(t, s, 0, store.Put(dead, store.IfVersion, 4))
	failsOn(t, s, 0, store.Delete(dead.Key(), store.IfPresent, 0))
	failsOn(t, s, 1, store.Put(store.Item{PK: "x", SK: "x"}, store.Always, 0), store.Check(dead.Key(), store.IfPresent, 0))
	if _, err := s.Add(ctx, dead.Key(), store.IfPresent, map[string]int64{"n": 1}); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Add IfPresent on expired: %v", err)
	}
	ok(t, s.Transact(ctx, store.Check(dead.Key(), store.IfAbsent, 0)))
	ok(t, s.Transact(ctx, store.Put(store.Item{PK: "x", SK: "y"}, store.Always, 0), store.Check(dead.Key(), store.IfAbsent, 0)))
	reborn := store.Item{PK: "p", SK: "dead", Version: 1, Data: []byte(`{"new":true}`)}
	ok(t, s.Transact(ctx, store.Put(reborn, store.IfAbsent, 0)))
	sameItem(t, get(t, s, dead.Key()), reborn)

	// Add on an expired item starts from nothing.
	for i, c := range []store.Cond{store.Always, store.IfAbsent} {
		d := dead
		d.SK = fmt.Sprint("dead", i)
		put(t, s, d)
		it, err := s.Add(ctx, d.Key(), c, map[string]int64{"n": 1})
		ok(t, err)
		want := store.Item{PK: "p", SK: d.SK, Version: 1, Nums: map[string]int64{"n": 1}}
		sameItem(t, it, want)
		sameItem(t, get(t, s, d.Key()), want)
	}
	d := dead
	d.SK = "dead-tx"
	put(t, s, d)
	ok(t, s.Transact(ctx,
		store.Add(d.Key(), store.Always, map[string]int64{"n": 2}),
		store.Put(store.Item{PK: "x", SK: "z"}, store.IfAbsent, 0)))
	sameItem(t, get(t, s, d.Key()), store.Item{PK: "p", SK: "dead-tx", Version: 1, Nums: map[string]int64{"n": 2}})
	d.SK = "dead-tx2"
	put(t, s, d)
	ok(t, s.Transact(ctx, store.Add(d.Key(), store.IfAbsent, map[string]int64{"n": 3})))
	sameItem(t, get(t, s, d.Key()), store.Item{PK: "p", SK: "dead-tx2", Version: 1, Nums: map[string]int64{"n": 3}})

	// Deleting an expired item is fine.
	d.SK = "dead-del"
	put(t, s, d)
	ok(t, s.Transact(ctx, store.Delete(d.Key(), store.Always, 0)))
	ok(t, s.Transact(ctx, store.Put(store.Item{PK: "p", SK: "dead-del"}, store.IfAbsent, 0)))
}

// ---- concurrency ----

// race runs n goroutines released together.
func race(n int, f func(i int)) {
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			f(i)
		}()
	}
	close(start)
	wg.Wait()
}

func testConcurrentIfAbsent(t *testing.T, s store.Store) {
	var wins atomic.Int32
	errs := make(chan error, 24)
	race(24, func(i int) {
		err := s.Transact(t.Context(), store.Put(store.Item{PK: "p", SK: "k", Version: int64(i + 1)}, store.IfAbsent, 0))
		switch {
		case err == nil:
			wins.Add(1)
		case store.FailedOn(err, k("p", "k")):
		default:
			errs <- err
		}
	})
	close(errs)
	for err := range errs {
		t.Errorf("unexpected error: %v", err)
	}
	if wins.Load() != 1 {
		t.Fatalf("%d IfAbsent puts succeeded, want 1", wins.Load())
	}
	get(t, s, k("p", "k"))
}

func testConcurrentAdd(t *testing.T, s store.Store) {
	errs := make(chan error, 40)
	race(40, func(i int) {
		if _, err := s.Add(t.Context(), k("p", "n"), store.Always, map[string]int64{"n": 1, fmt.Sprint("g", i%2): 1}); err != nil {
			errs <- err
		}
	})
	close(errs)
	for err := range errs {
		t.Fatalf("add: %v", err)
	}
	it := get(t, s, k("p", "n"))
	if it.Nums["n"] != 40 || it.Nums["g0"] != 20 || it.Nums["g1"] != 20 || it.Version != 40 {
		t.Fatalf("after 40 adds: %s", show(it))
	}
}

func testConcurrentRMW(t *testing.T, s store.Store) {
	key := k("p", "rmw")
	type doc struct{ Count int }
	errs := make(chan error, 20)
	var conflicts atomic.Int32
	race(20, func(i int) {
		ctx := t.Context()
		for range 2000 {
			cur, err := s.Get(ctx, key)
			var d doc
			var op store.Op
			switch {
			case errors.Is(err, store.ErrNotFound):
				op = store.Put(store.Item{PK: key.PK, SK: key.SK, Version: 1, Data: []byte(`{"Count":1}`)}, store.IfAbsent, 0)
			case err != nil:
				errs <- err
				return
			default:
				if err := json.Unmarshal(cur.Data, &d); err != nil {
					errs <- err
					return
				}
				d.Count++
				data, _ := json.Marshal(d)
				next := cur
				next.Version, next.Data = cur.Version+1, data
				op = store.Put(next, store.IfVersion, cur.Version)
			}
			err = s.Transact(ctx, op)
			if err == nil {
				return
			}
			if !errors.Is(err, store.ErrConditionFailed) {
				errs <- err
				return
			}
			conflicts.Add(1)
		}
		errs <- fmt.Errorf("goroutine %d: gave up", i)
	})
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	it := get(t, s, key)
	var d doc
	ok(t, json.Unmarshal(it.Data, &d))
	if d.Count != 20 || it.Version != 20 {
		t.Fatalf("after 20 increments: count %d version %d", d.Count, it.Version)
	}
	t.Logf("%d condition failures retried", conflicts.Load())
}

// testConcurrentTransactions races multi-op transactions on a shared item.
func testConcurrentTransactions(t *testing.T, s store.Store) {
	const n = 10
	errs := make(chan error, n)
	race(n, func(i int) {
		err := s.Transact(t.Context(),
			store.Add(k("p", "total"), store.Always, map[string]int64{"n": 1}),
			store.Put(store.Item{PK: "p", SK: fmt.Sprint("part#", i), Version: 1}, store.IfAbsent, 0),
		)
		if err != nil {
			errs <- err
		}
	})
	close(errs)
	for err := range errs {
		t.Fatalf("transaction: %v", err)
	}
	it := get(t, s, k("p", "total"))
	if it.Nums["n"] != n || it.Version != n {
		t.Fatalf("after %d transactions: %s", n, show(it))
	}
	if c := count(t, s, store.Query{PK: "p", SKPrefix: "part#"}); c != n {
		t.Fatalf("%d parts, want %d", c, n)
	}
}

// testLocal: the local runner's needs (store.Local), which both adapters
// have: items expire by the clock given, and a wipe leaves nothing, index
// entries included, and a store that works as before.
func testLocal(t *testing.T, s store.Store) {
	l, isLocal := s.(store.Local)
	if !isLocal {
		t.Fatal("the store does not implement store.Local")
	}
	soon := store.Item{PK: "p", SK: "soon", GSI1PK: "g", GSI1SK: "soon", Version: 1, ExpiresAt: time.Now().Unix() + 3600}
	put(t, s, soon)
	put(t, s, store.Item{PK: "q", SK: "kept", GSI2PK: "h", GSI2SK: "kept", Version: 1})
	l.UseClock(func() time.Time { return time.Now().Add(2 * time.Hour) })
	mustMissing(t, s, soon.Key())
	l.UseClock(time.Now)
	get(t, s, soon.Key())

	ok(t, l.Wipe(t.Context()))
	mustMissing(t, s, soon.Key())
	mustMissing(t, s, k("q", "kept"))
	for _, q := range []store.Query{{PK: "p"}, {PK: "q"}, {Index: store.GSI1, PK: "g"}, {Index: store.GSI2, PK: "h"}} {
		if items, _ := queryAll(t, s, q); len(items) != 0 {
			t.Fatalf("after a wipe %+v lists %q", q, sks(items))
		}
	}
	put(t, s, soon)
	get(t, s, soon.Key())
}

// testRequestTokens: a write repeated under its request token (a retry of
// an attempt whose answer was lost) succeeds without being applied again,
// single-item writes (an owner on the item) and transactions
// (ClientRequestToken) alike; another writer's item still fails the
// condition; and a token whose attempt was not applied is not used up.
func testRequestTokens(t *testing.T, s store.Store) {
	ctx := t.Context()
	// DynamoDB remembers tokens across tables for ten minutes: each run
	// its own.
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	under := func(token string) context.Context { return store.WithRequestToken(ctx, run+token) }
	twice := func(token string, ops ...store.Op) {
		t.Helper()
		ok(t, s.Transact(under(token), ops...))
		ok(t, s.Transact(under(token), ops...))
	}
	n := func(key store.Key) int64 { t.Helper(); return get(t, s, key).Nums["n"] }

	// A transaction.
	twice("t-txn", store.Put(store.Item{PK: "p", SK: "rec", Version: 1}, store.IfAbsent, 0),
		store.Add(k("p", "count"), store.Always, map[string]int64{"n": 1}))
	if got := n(k("p", "count")); got != 1 {
		t.Fatalf("transaction repeated under its token: count %d, want 1", got)
	}
	// Single items: each kind of write, each condition that its own
	// applied attempt makes fail.
	twice("t-absent", store.Put(store.Item{PK: "p", SK: "one", Version: 1, Data: []byte(`{"a":1}`)}, store.IfAbsent, 0))
	twice("t-version", store.Put(store.Item{PK: "p", SK: "one", Version: 2, Data: []byte(`{"a":2}`)}, store.IfVersion, 1))
	sameItem(t, get(t, s, k("p", "one")), store.Item{PK: "p", SK: "one", Version: 2, Data: []byte(`{"a":2}`)})
	twice("t-add", store.Add(k("p", "single"), store.Always, map[string]int64{"n": 1}))
	if got := n(k("p", "single")); got != 1 {
		t.Fatalf("add repeated under its token: n %d, want 1", got)
	}
	for range 2 {
		it, err := s.Add(under("t-addcall"), k("p", "single"), store.IfPresent, map[string]int64{"n": 10})
		ok(t, err)
		if it.Nums["n"] != 11 {
			t.Fatalf("Add repeated under its token answered %+v, want n 11", it)
		}
	}
	if got := n(k("p", "single")); got != 11 {
		t.Fatalf("Add repeated under its token: n %d, want 11", got)
	}
	twice("t-delete", store.Delete(k("p", "one"), store.IfVersion, 2))
	mustMissing(t, s, k("p", "one"))

	// Another writer's item is not this write's.
	failsOn(t, s, 0, store.Put(store.Item{PK: "p", SK: "rec", Version: 1}, store.IfAbsent, 0))
	wantCond(t, s.Transact(under("t-other"), store.Put(store.Item{PK: "p", SK: "rec", Version: 1}, store.IfAbsent, 0)), k("p", "rec"))
	wantCond(t, s.Transact(under("t-other2"), store.Delete(k("p", "one"), store.IfPresent, 0)), k("p", "one"))

	// A failed attempt does not use its token up: once the condition
	// holds, the same write under the same token is applied.
	op := store.Put(store.Item{PK: "p", SK: "later", Version: 1}, store.IfPresent, 0)
	wantCond(t, s.Transact(under("t-later"), op), k("p", "later"))
	put(t, s, store.Item{PK: "p", SK: "later"})
	ok(t, s.Transact(under("t-later"), op))
	if get(t, s, k("p", "later")).Version != 1 {
		t.Fatal("write under a token whose first attempt failed was not applied")
	}
}
