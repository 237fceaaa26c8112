package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
)

// A request commits what it must answer exactly (the record, its guards,
// the counters it keeps exact); what follows from the change (index
// entries, counts, events, notifications) is derived from the table's
// change feed: in AWS the DynamoDB stream, read by the change-feed function
// (ApplyOnce); locally the store's own feed (Fed), drained right after each
// commit. A change derives work only when a request stamped it: ChangeNum
// holds a fresh id on every request's write of a derived-from record (the
// event's and notification's id), so the seed's and the index rebuild's
// writes, and counter adds, derive nothing. Every removal of such a record
// derives its entries' removal.

// Change is one committed write of an item, as a change stream reports it:
// its image before and after (nil when absent).
type Change struct{ Old, New *Item }

// Key is the changed item's key.
func (c *Change) Key() Key {
	if c.New != nil {
		return c.New.Key()
	}
	return c.Old.Key()
}

// Nums a request stamps on the records whose changes derive work: the
// change's id, the app that made it, and the subscription clock of the
// topic it fires as read before the commit.
const (
	ChangeNum = "chg"
	ByNum     = "by"
	ClockNum  = "clk"
)

// Deriver returns the writes that follow from a change: its record's index
// entries and counts, its event, its notification. It reads through st and
// must depend only on the change and what it reads, so that applying it
// again (a replayed stream record) writes the same.
type Deriver func(ctx context.Context, st Store, c Change) ([]Op, error)

// Derivers holds the deriver of each partition whose records derive work.
type Derivers map[string]Deriver

// Derives says whether a change to an item of pk can derive work.
func (ds Derivers) Derives(pk string) bool { _, ok := ds[pk]; return ok }

// derive returns c's derived writes, or none when c is not a stamped
// change (a seed write, a counter add, an index rebuild's rewrite).
func (ds Derivers) derive(ctx context.Context, st Store, c Change) ([]Op, error) {
	if c.Old == nil && c.New == nil {
		return nil, nil
	}
	d, ok := ds[c.Key().PK]
	if !ok {
		return nil, nil
	}
	if c.New != nil {
		stamp := c.New.Nums[ChangeNum]
		if stamp == 0 || (c.Old != nil && c.Old.Nums[ChangeNum] == stamp) {
			return nil, nil
		}
	}
	return d(ctx, st, c)
}

// appliedPartition holds ApplyOnce's markers.
const appliedPartition = "feed#applied"

// AppliedTTL outlives a stream record's retention (24 hours) and its
// retries: a replay within it finds its marker.
const AppliedTTL = 48 * time.Hour

// ApplyOnce writes c's derived writes in one transaction with a marker
// naming the change (the item's key and stamp, or its last version for a
// removal), so that a replayed stream record changes nothing. now dates the
// marker's expiry.
func (ds Derivers) ApplyOnce(ctx context.Context, st Store, c Change, now time.Time) error {
	ops, err := ds.derive(ctx, st, c)
	if err != nil || len(ops) == 0 {
		return err
	}
	k := c.Key()
	sk := k.PK + "\n" + k.SK + "\n"
	if c.New != nil {
		sk += strconv.FormatInt(c.New.Nums[ChangeNum], 10)
	} else {
		sk += "removed " + strconv.FormatInt(c.Old.Version, 10)
	}
	marker := Key{PK: appliedPartition, SK: sk}
	ops = append(ops, Put(Item{PK: marker.PK, SK: marker.SK, Version: 1, Data: []byte("{}"), ExpiresAt: now.Add(AppliedTTL).Unix()}, IfAbsent, 0))
	return alreadyDone(ctx, st, st.Transact(ctx, ops...), marker, true)
}

// alreadyDone resolves err, a derived transaction's failure: a failed
// condition (DynamoDB names one of the items whose condition failed, not
// necessarily the marker's) is the change's earlier application when the
// marker at k says so: present for ApplyOnce's, gone for a pending item.
func alreadyDone(ctx context.Context, st Store, err error, k Key, present bool) error {
	if err == nil || !errors.Is(err, ErrConditionFailed) {
		return err
	}
	_, gerr := st.Get(ctx, k)
	switch {
	case gerr == nil && present, errors.Is(gerr, ErrNotFound) && !present:
		return nil
	case gerr != nil && !errors.Is(gerr, ErrNotFound):
		return gerr
	}
	return err
}

// PendingPartition holds the local feed's changes not yet derived.
const PendingPartition = "feed#pending"

// PendingItems is how many items the local feed adds to a transaction per
// change of a deriving record (its images before and after).
const PendingItems = 2

// Fed is the local runner's and the tests' change feed: each transaction
// writing a record of a deriving partition also writes the change (the
// record's image before, read first, and after) as pending items, in the
// same transaction, so a change is never lost; right after the commit the
// pending changes are derived, in commit order, each in one transaction
// with the removal of its pending items, so each is derived once. While
// every change this process committed was derived, the commit derives from
// the images it holds; after a failure (or at start, when an earlier
// process may have left some) a drain reads the pending partition (Drain):
// the next commit's, or the runner's at start and every few seconds. So
// what a request changed is visible to the next request, as on a
// development store. In AWS the DynamoDB stream plays this part.
type Fed struct {
	Store          // Retrying's: the requests' commits and reads
	once     Store // beneath it: a drain tries each call once (see Feed)
	derivers Derivers
	prefix   string // this process's pending keys sort after earlier ones'

	mu  sync.Mutex // one drain at a time: changes derive in order
	seq uint64     // the last change's
	// clean says every pending change is in ready or in flight: none left
	// by a failure or by an earlier process.
	clean bool
	// A change's seq is taken after it read its record, so of two changes
	// to one record the later has the larger seq, and the earlier had
	// committed when the later took it. ready holds the committed changes
	// not yet derived, inflight the seqs of those still committing; a
	// change derives once none before it is in flight, so each record's
	// changes derive in order.
	ready    []pendingChange
	inflight map[uint64]bool
}

// pendingChange is a committed change and its pending items.
type pendingChange struct {
	seq  uint64
	c    Change
	keys []Key
}

// Feed is st under the retry layer (Retrying) with its changes deriving
// ds's work. A drain, which holds the feed's lock, tries each of its calls
// once: a retry's backoff there would hold up every other commit's
// drain, and what fails the next drain does.
func Feed(st Store, ds Derivers) *Fed {
	return &Fed{Store: Retrying(st), once: st, derivers: ds, prefix: fmt.Sprintf("%020d-", time.Now().UnixNano()), inflight: map[uint64]bool{}}
}

// Unwrap returns the fed store.
func (f *Fed) Unwrap() Store { return f.Store }

// A pending item holds one image of a change: a header line (the image's
// keys, version, numbers and expiry, as JSON), then its Data as it is, so
// that the largest record (MaxData) still fits an item.
type pendingHeader struct {
	Old    bool             `json:"old,omitempty"`
	Absent bool             `json:"absent,omitempty"`
	PK     string           `json:"pk,omitempty"`
	SK     string           `json:"sk,omitempty"`
	GSI1PK string           `json:"g1pk,omitempty"`
	GSI1SK string           `json:"g1sk,omitempty"`
	GSI2PK string           `json:"g2pk,omitempty"`
	GSI2SK string           `json:"g2sk,omitempty"`
	V      int64            `json:"v,omitempty"`
	Nums   map[string]int64 `json:"nums,omitempty"`
	TTL    int64            `json:"ttl,omitempty"`
}

func encodePending(old bool, it *Item) []byte {
	h := pendingHeader{Old: old, Absent: it == nil}
	var data []byte
	if it != nil {
		h = pendingHeader{Old: old, PK: it.PK, SK: it.SK, GSI1PK: it.GSI1PK, GSI1SK: it.GSI1SK, GSI2PK: it.GSI2PK, GSI2SK: it.GSI2SK,
			V: it.Version, Nums: it.Nums, TTL: it.ExpiresAt}
		data = it.Data
	}
	b, err := json.Marshal(h)
	if err != nil {
		panic(err) // a header always marshals
	}
	return append(append(b, '\n'), data...)
}

func decodePending(b []byte) (old bool, it *Item, err error) {
	line, data, _ := bytes.Cut(b, []byte("\n"))
	var h pendingHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return false, nil, err
	}
	if h.Absent {
		return h.Old, nil, nil
	}
	return h.Old, &Item{PK: h.PK, SK: h.SK, GSI1PK: h.GSI1PK, GSI1SK: h.GSI1SK, GSI2PK: h.GSI2PK, GSI2SK: h.GSI2SK,
		Version: h.V, Nums: h.Nums, ExpiresAt: h.TTL, Data: bytes.Clone(data)}, nil
}

// Transact commits ops with the pending changes of the deriving records
// they write, then derives them.
func (f *Fed) Transact(ctx context.Context, ops ...Op) error {
	changes, err := f.derivers.ChangesOf(ctx, f.Store, ops)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return f.Store.Transact(ctx, ops...)
	}
	pend := make([]pendingChange, len(changes))
	f.mu.Lock()
	for i := range pend {
		f.seq++
		pend[i].seq = f.seq
		f.inflight[f.seq] = true
	}
	f.mu.Unlock()
	all := ops[:len(ops):len(ops)]
	for i, c := range changes {
		sk := f.prefix + fmt.Sprintf("%012d", pend[i].seq)
		pend[i].c = c
		if c.Old != nil {
			k := Key{PK: PendingPartition, SK: sk + "#0"}
			all = append(all, Put(Item{PK: k.PK, SK: k.SK, Version: 1, Data: encodePending(true, c.Old)}, Always, 0))
			pend[i].keys = append(pend[i].keys, k)
		}
		k := Key{PK: PendingPartition, SK: sk + "#1"}
		all = append(all, Put(Item{PK: k.PK, SK: k.SK, Version: 1, Data: encodePending(false, c.New)}, Always, 0))
		pend[i].keys = append(pend[i].keys, k)
	}
	err = f.Store.Transact(ctx, all...)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range pend {
		delete(f.inflight, p.seq)
	}
	switch {
	case err == nil:
		f.ready = append(f.ready, pend...)
	case errors.Is(err, ErrUnavailable):
		f.clean = false // it may have committed: read the partition
	}
	// The changes after these may have waited for them.
	if derr := f.drain(ctx); derr != nil {
		slog.Warn("change feed: derived work left for the next drain", "error", derr.Error())
	}
	return err
}

// ChangesOf returns the changes ops would make to deriving records, read
// through st before they commit: for each put or delete of such a record,
// its image before (read now; the op's version condition makes it exact)
// and after. The local feed's, and a benchmark's stand-in for the stream.
func (ds Derivers) ChangesOf(ctx context.Context, st Store, ops []Op) ([]Change, error) {
	var changes []Change
	for i := range ops {
		op := &ops[i]
		if (op.Kind != OpPut && op.Kind != OpDelete) || !ds.Derives(op.key().PK) {
			continue
		}
		var c Change
		if op.Cond != IfAbsent {
			it, err := st.Get(ctx, op.key())
			switch {
			case err == nil:
				c.Old = &it
			case !errors.Is(err, ErrNotFound):
				return nil, err
			}
		}
		if op.Kind == OpPut {
			next := op.Item
			c.New = &next
		}
		if c.Old != nil || c.New != nil {
			changes = append(changes, c)
		}
	}
	return changes, nil
}

// Drain derives every pending change, oldest first, reading them from the
// pending partition: what failures and earlier processes left.
func (f *Fed) Drain(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.clean = false
	return f.drain(ctx)
}

// drain derives the ready changes that no change in flight precedes, or,
// unless clean, every stored one. Called with mu held.
func (f *Fed) drain(ctx context.Context) error {
	if !f.clean {
		// Every ready change is committed, so the partition holds it; one
		// still in flight that the read finds committed is derived now,
		// and its own drain then finds its pending items gone.
		f.ready = f.ready[:0]
		if err := f.drainStored(ctx); err != nil {
			return err
		}
		f.clean = true
		return nil
	}
	slices.SortFunc(f.ready, func(a, b pendingChange) int { return cmp.Compare(a.seq, b.seq) })
	first := uint64(math.MaxUint64)
	for s := range f.inflight {
		first = min(first, s)
	}
	for len(f.ready) > 0 && f.ready[0].seq < first {
		p := f.ready[0]
		if err := f.derivePendingChange(ctx, p.c, p.keys); err != nil {
			f.clean = false
			return err
		}
		f.ready = f.ready[1:]
	}
	return nil
}

// drainStored derives the pending partition's changes, oldest first.
func (f *Fed) drainStored(ctx context.Context) error {
	for {
		items, _, err := f.once.Query(ctx, Query{PK: PendingPartition, Limit: 100})
		if err != nil || len(items) == 0 {
			return err
		}
		done := 0
		for done < len(items) {
			n, err := f.derivePending(ctx, items[done:])
			if err != nil {
				return err
			}
			if n == 0 {
				break // a change cut by the page: read it whole again
			}
			done += n
		}
		if done == 0 {
			return fmt.Errorf("store: pending change %s unreadable", items[0].SK)
		}
	}
}

// derivePending derives the change at the head of items (its "#0" item, if
// any, then its "#1"), returning how many items it took; 0 when the page
// ends inside it.
func (f *Fed) derivePending(ctx context.Context, items []Item) (int, error) {
	var c Change
	var keys []Key
	for i := range items {
		old, it, err := decodePending(items[i].Data)
		if err != nil {
			return 0, fmt.Errorf("store: pending change %s: %w", items[i].SK, err)
		}
		keys = append(keys, items[i].Key())
		if old {
			c.Old = it
			continue
		}
		c.New = it
		if err := f.derivePendingChange(ctx, c, keys); err != nil {
			return 0, err
		}
		return i + 1, nil
	}
	return 0, nil
}

// derivePendingChange writes c's derived work and removes its pending
// items (keys, the last its "#1"), in one transaction.
func (f *Fed) derivePendingChange(ctx context.Context, c Change, keys []Key) error {
	ops, err := f.derivers.derive(ctx, f.once, c)
	if err != nil {
		return err
	}
	for _, k := range keys {
		ops = append(ops, Delete(k, IfPresent, 0))
	}
	// Its pending items already gone: another process derived it.
	return alreadyDone(ctx, f.once, f.once.Transact(ctx, ops...), keys[len(keys)-1], false)
}
