package store

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
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
type Change struct {
	Old, New *Item
	// Attempt counts the derivations of the change that failed on a
	// condition that was not its own earlier application (Derivers.apply):
	// a race lost to another publisher of the events log, or an item
	// keyed by the change's stamp that another change, which drew the
	// same id, holds. A deriver keying an item by the stamp takes another
	// key when it is above 0 (outbox.OfChange).
	Attempt int
	// At is when the change is derived (the change-feed function's clock;
	// the local feed's machine time): what a derived item must know of its
	// own writing, such as an outbox marker for the sweep (outbox.OfChange),
	// which no later replay rewrites (ApplyOnce's marker stops it).
	At time.Time
	// Tomb, for a removal a request made, is what it committed beside it
	// (TombKey): who removed the record, stamped as a write's item is
	// (ChangeNum, ByNum, ClockNum, Stamp). The stream's image of a removal
	// cannot say it; the feed reads it before deriving (derive). Nil for a
	// removal no request stamped (an owner's clean-up, the seed's).
	Tomb *Item
}

// Stamped is the item that carries the change's stamp: the record's new
// image, or a removal's tomb (nil when none).
func (c *Change) Stamped() *Item {
	if c.New != nil {
		return c.New
	}
	return c.Tomb
}

// TombKey addresses the tomb of the removal of the record at k, at version
// (the version removed: a key reused by a later record has its own). Its
// partition is no deriving record's, so in AWS the stream filter drops its
// writes, and it expires by TTL, which DynamoDB does for free.
func TombKey(k Key, version int64) Key {
	return Key{PK: "tomb#" + k.PK, SK: k.SK + "#" + strconv.FormatInt(version, 10)}
}

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

// Derivers holds the deriver of each partition whose records derive work,
// by its name: a partition's own ("page"), or, for a family of partitions
// one per owner ("script_tag#app#<app id>"), the family's prefix ending in
// "#" ("script_tag#app#"), which names exactly the partitions that append
// a decimal id to it (not "script_tag#app#5#by:updated_at", an entry's).
type Derivers map[string]Deriver

// Derives says whether a change to an item of pk can derive work.
func (ds Derivers) Derives(pk string) bool { _, ok := ds.of(pk); return ok }

// of is the deriver of partition pk (see Derivers).
func (ds Derivers) of(pk string) (Deriver, bool) {
	if d, ok := ds[pk]; ok && !strings.HasSuffix(pk, "#") {
		return d, true
	}
	i := strings.LastIndexByte(pk, '#')
	if i < 0 || i == len(pk)-1 || strings.TrimLeft(pk[i+1:], "0123456789") != "" {
		return nil, false
	}
	d, ok := ds[pk[:i+1]]
	return d, ok
}

// derive returns c's derived writes, or none when c is not a stamped
// change (a seed write, a counter add, an index rebuild's rewrite).
func (ds Derivers) derive(ctx context.Context, st Store, c Change) ([]Op, error) {
	if c.Old == nil && c.New == nil {
		return nil, nil
	}
	d, ok := ds.of(c.Key().PK)
	if !ok {
		return nil, nil
	}
	if c.New != nil {
		stamp := c.New.Nums[ChangeNum]
		if stamp == 0 || (c.Old != nil && c.Old.Nums[ChangeNum] == stamp) {
			return nil, nil
		}
	} else if c.Tomb == nil {
		// One GetItem per removal: its tomb, committed with it, is there
		// when the removal is (read consistently), and gone only after
		// AppliedTTL, beyond the stream's retention.
		t, err := st.Get(ctx, TombKey(c.Old.Key(), c.Old.Version))
		switch {
		case err == nil:
			c.Tomb = &t
		case !errors.Is(err, ErrNotFound):
			return nil, err
		}
	}
	return d(ctx, st, c)
}

// appliedPartition, with its record's key, names the partition of
// ApplyOnce's markers of a record's changes.
const appliedPartition = "feed#applied"

// AppliedTTL outlives a stream record's retention (24 hours) and its
// retries: a replay within it finds its marker.
const AppliedTTL = 48 * time.Hour

// ApplyOnce writes c's derived writes in one transaction with a marker
// naming the change (the item's key and stamp, or its last version for a
// removal: the stamp is fresh for every change of a record, so a marker
// names one version of it), so that a replayed stream record changes
// nothing. now dates the marker's expiry. The marker's key is what a
// replay across a deploy is recognised by: a version that changes it (as
// the one that moved markers out of the one feed#applied partition did)
// is deployed with the stream caught up (docs/operations.md, Deploying).
func (ds Derivers) ApplyOnce(ctx context.Context, st Store, c Change, now time.Time) error {
	m := marker(c, now)
	c.At = now
	return ds.apply(ctx, st, c, []Op{m}, false, m.Item.Key(), true)
}

// marker is ApplyOnce's marker of c, expiring AppliedTTL after now: in a
// partition of its record's own, so that the markers of a busy feed spread
// over the table's partitions instead of all writing one key.
func marker(c Change, now time.Time) Op {
	k := c.Key()
	return Put(Item{PK: appliedPartition + "#" + k.PK + "\n" + k.SK, SK: version(c), Version: 1, Data: []byte("{}"), ExpiresAt: now.Add(AppliedTTL).Unix()}, IfAbsent, 0)
}

// version names the version of its record a change made: its stamp, or,
// for a removal, the version removed.
func version(c Change) string {
	if c.New != nil {
		return strconv.FormatInt(c.New.Nums[ChangeNum], 10)
	}
	return "removed " + strconv.FormatInt(c.Old.Version, 10)
}

// RaceTries bounds how often a change's derivation is made again after its
// transaction lost a race: a failed condition that is not its own earlier
// application, such as another publisher moving the events log's head
// between the derivation's read of it and its commit. Tries after the
// second wait a jittered backoff first (raceBackoff), so that publishers
// contending for the head (the change-feed function on several shards)
// take turns instead of colliding again at once.
const RaceTries = 30

// raceBackoff is the longest wait before a try, doubling from 1 ms.
const raceBackoff = 64 * time.Millisecond

// apply derives c and commits its writes with guard, the ops that make it
// happen once (ApplyOnce's marker, the local feed's removal of its pending
// items; always written when always, else only with derived work), in one
// transaction. A failed condition is the change's earlier application when
// done says so (present or gone, alreadyDone); otherwise a lost race, and
// the change is derived again from fresh reads, at most RaceTries times.
func (ds Derivers) apply(ctx context.Context, st Store, c Change, guard []Op, always bool, done Key, present bool) error {
	for try := 1; ; try++ {
		c.Attempt = try - 1
		ops, err := ds.derive(ctx, st, c)
		if err != nil || (len(ops) == 0 && !always) {
			return err
		}
		// What a change derives fits one transaction with the stream's
		// marker, whichever feed applies it: the same limits everywhere.
		if err := Validate(append(slices.Clip(ops), marker(c, time.Unix(0, 0)))); err != nil {
			return err
		}
		err = alreadyDone(ctx, st, st.Transact(ctx, append(ops, guard...)...), done, present)
		if err == nil || !errors.Is(err, ErrConditionFailed) || try == RaceTries {
			return err
		}
		if try > 1 {
			wait := min(time.Millisecond<<(try-2), raceBackoff)
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(rand.N(wait) + 1):
			}
		}
	}
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

// ParkedPartition holds the local feed's changes whose derivation failed
// MaxDeriveTries times: their pending items, as they were, for an operator
// to redrive (docs/operations.md).
const ParkedPartition = "feed#parked"

// MaxDeriveTries is how often the local feed tries to derive a change that
// fails for a reason other than the store's unavailability (a deriver's
// error, a transaction the store refuses) before it parks it. Until then
// the change holds back the later changes of its record, and only those;
// unavailability is retried without a bound, as it heals.
const MaxDeriveTries = 5

// Fed is the local runner's and the tests' change feed: each transaction
// writing a record of a deriving partition also writes the change (the
// record's image before, read first, and after) as pending items, in the
// same transaction, so a change is never lost; right after its commit, and
// before Transact returns, the change is derived, in one transaction with
// the removal of its pending items, so each is derived once and what a
// request changed is visible to the next request. A record's changes derive
// in the order they committed; changes of different records do not wait
// for each other. What a failure left pending is derived by the record's
// next change or the next Drain (the runner's every few seconds); what an
// earlier process left, by the first commit or Drain (the pending partition
// is read once per process). A change that keeps failing is parked after
// MaxDeriveTries. In AWS the DynamoDB stream plays this part.
type Fed struct {
	Store          // Retrying's: the requests' commits and reads
	once     Store // beneath it: a derivation tries each call once (see Feed)
	derivers Derivers
	prefix   string // this process's pending keys sort after earlier ones'
	// OnPark, when set, is told of every change parked (the composition
	// root counts it in a metric); set before the feed is used.
	OnPark func(ctx context.Context, record Key)
	// CleanUps are the removed owners' clean-ups (cleanup.go), run through
	// the feed right after the removal's derivation wrote their marker, and
	// by every Drain; set before the feed is used.
	CleanUps CleanUps

	mu     sync.Mutex // derivations, one at a time, and the fields below
	waited *sync.Cond // on mu: a change in flight settled
	seq    uint64     // the last change's
	// A change's seq is taken after it read its record, so of two changes
	// to one record the later has the larger seq, and the earlier had
	// committed when the later took it. inflight holds the records of the
	// changes still committing, by seq; queues the committed changes not
	// yet derived, by record, in commit order. A change derives once no
	// earlier change of its record is in flight or queued.
	inflight map[uint64]Key
	queues   map[Key][]*pendingChange
	// loaded says the pending partition was read: what an earlier process
	// left is in queues, before this process's changes of the same records.
	loaded bool
}

// pendingChange is a committed change and its pending items.
type pendingChange struct {
	seq  uint64 // 0 for one an earlier process left
	name string // its pending items' keys without "#0" or "#1"
	c    Change
	keys []Key // its pending items, the last its "#1"
	// uncertain says its commit's outcome is unknown (store.ErrUnavailable):
	// it is derived only if its pending items are there.
	uncertain bool
	fails     int // failed derivations, unavailability not counted
	// spill, for a change whose images were written ahead of its
	// transaction (spilled), is what says that transaction committed.
	spill *spill
}

// spill is the commit marker of a transaction whose pending images did
// not fit it (Fed.Transact): they are written ahead, in transactions of
// their own, and the transaction commits only the marker, so that a
// change fits the store's limits locally exactly when it fits them in
// AWS, where no pending image is written (DynamoDB counts them all:
// DynamoDB Local under the local feed would refuse a transaction of 40
// metafields with their 40 images). Images whose marker is absent belong
// to a transaction that never committed. The last of its changes derived
// removes the marker; it expires anyway (AppliedTTL).
type spill struct {
	key  Key
	left int // its changes not yet derived
}

// Feed is st under the retry layer (Retrying) with its changes deriving
// ds's work. A derivation, which holds the feed's lock, tries each of its
// calls once: a retry's backoff there would hold up every other commit's
// derivation, and what fails the next drain does.
func Feed(st Store, ds Derivers) *Fed {
	f := &Fed{Store: Retrying(st), once: st, derivers: ds, prefix: fmt.Sprintf("%020d-", time.Now().UnixNano()),
		inflight: map[uint64]Key{}, queues: map[Key][]*pendingChange{}}
	f.waited = sync.NewCond(&f.mu)
	return f
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
	Stamp  []byte           `json:"st,omitempty"`
	// Commit, for a spilled image, is its transaction's commit marker (SK).
	Commit string `json:"commit,omitempty"`
}

func encodePending(old bool, it *Item, commit string) []byte {
	h := pendingHeader{Old: old, Absent: it == nil, Commit: commit}
	var data []byte
	if it != nil {
		h = pendingHeader{Old: old, PK: it.PK, SK: it.SK, GSI1PK: it.GSI1PK, GSI1SK: it.GSI1SK, GSI2PK: it.GSI2PK, GSI2SK: it.GSI2SK,
			V: it.Version, Nums: it.Nums, TTL: it.ExpiresAt, Stamp: it.Stamp, Commit: commit}
		data = it.Data
	}
	b, err := json.Marshal(h)
	if err != nil {
		panic(err) // a header always marshals
	}
	return append(append(b, '\n'), data...)
}

func decodePending(b []byte) (old bool, it *Item, commit string, err error) {
	line, data, _ := bytes.Cut(b, []byte("\n"))
	var h pendingHeader
	if err := json.Unmarshal(line, &h); err != nil {
		return false, nil, "", err
	}
	if h.Absent {
		return h.Old, nil, h.Commit, nil
	}
	return h.Old, &Item{PK: h.PK, SK: h.SK, GSI1PK: h.GSI1PK, GSI1SK: h.GSI1SK, GSI2PK: h.GSI2PK, GSI2SK: h.GSI2SK,
		Version: h.V, Nums: h.Nums, ExpiresAt: h.TTL, Stamp: h.Stamp, Data: bytes.Clone(data)}, h.Commit, nil
}

// Transact commits ops with the pending changes of the deriving records
// they write, then derives them (after any earlier change of the same
// records) before it returns.
func (f *Fed) Transact(ctx context.Context, ops ...Op) error {
	changes, err := f.derivers.ChangesOf(ctx, f.Store, ops)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return f.Store.Transact(ctx, ops...)
	}
	pend := make([]*pendingChange, len(changes))
	f.mu.Lock()
	for i := range pend {
		f.seq++
		pend[i] = &pendingChange{seq: f.seq, name: f.prefix + fmt.Sprintf("%012d", f.seq), c: changes[i]}
		f.inflight[f.seq] = changes[i].Key()
	}
	f.mu.Unlock()
	all := ops[:len(ops):len(ops)]
	var sp *spill
	if !fitsWith(ops, pend) {
		sp = &spill{key: Key{PK: PendingPartition, SK: pend[0].name + "#c"}, left: len(pend)}
	}
	images := make([]Op, 0, 2*len(pend))
	for _, p := range pend {
		p.spill = sp
		commit := ""
		if sp != nil {
			commit = sp.key.SK
		}
		if p.c.Old != nil {
			k := Key{PK: PendingPartition, SK: p.name + "#0"}
			images = append(images, Put(Item{PK: k.PK, SK: k.SK, Version: 1, Data: encodePending(true, p.c.Old, commit)}, Always, 0))
			p.keys = append(p.keys, k)
		}
		k := Key{PK: PendingPartition, SK: p.name + "#1"}
		images = append(images, Put(Item{PK: k.PK, SK: k.SK, Version: 1, Data: encodePending(false, p.c.New, commit)}, Always, 0))
		p.keys = append(p.keys, k)
	}
	if sp == nil {
		all = append(all, images...)
		err = f.Store.Transact(ctx, all...)
	} else if err = f.writeSpilled(ctx, images); err == nil {
		marker := Item{PK: sp.key.PK, SK: sp.key.SK, Version: 1, Data: []byte("{}"), ExpiresAt: time.Now().Add(AppliedTTL).Unix()}
		err = f.Store.Transact(ctx, append(all, Put(marker, IfAbsent, 0))...)
		if err != nil && !errors.Is(err, ErrUnavailable) {
			f.dropSpilled(ctx, images) // it did not commit
		}
	}
	f.commit(ctx, pend, err)
	if err == nil {
		// A removed owner's clean-up, once its derivation wrote the marker:
		// through the feed, so its removals derive too, before the request
		// answers. One that fails is the next Drain's.
		for _, p := range pend {
			if p.c.New == nil && f.CleanUps[p.c.Key().PK] != nil {
				if cerr := f.CleanUps.Run(ctx, f, Key{PK: CleanUpPartition, SK: parkedName(p.c)}); cerr != nil {
					slog.Warn("change feed: a clean-up left for the next drain", "error", cerr.Error())
				}
			}
		}
	}
	return err
}

// commit settles pend after their transaction returned err: queued when
// it committed or may have, and derived. Called without mu held.
func (f *Fed) commit(ctx context.Context, pend []*pendingChange, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	maybe := errors.Is(err, ErrUnavailable) // it may have committed
	for _, p := range pend {
		delete(f.inflight, p.seq)
		if err == nil || maybe {
			p.uncertain = maybe
			f.enqueue(p)
		}
	}
	f.waited.Broadcast()
	if err == nil || maybe {
		for _, p := range pend {
			if derr := f.deriveRecord(ctx, p.c.Key(), p.seq); derr != nil {
				slog.Warn("change feed: derived work left for the next drain", "record", p.c.Key().PK+"/"+p.c.Key().SK, "error", derr.Error())
			}
		}
		f.heal(ctx)
	}
}

// fitsWith says whether ops fit one transaction with the pending images of
// pend, as DynamoDB counts them (store.Validate counts them not).
func fitsWith(ops []Op, pend []*pendingChange) bool {
	n, size := len(ops), 0
	for i := range ops {
		size += ops[i].Size()
	}
	image := func(it *Item) {
		n++
		if it != nil {
			size += len(it.Data) + 1024 // its header, at most
		}
	}
	for _, p := range pend {
		if p.c.Old != nil {
			image(p.c.Old)
		}
		image(p.c.New) // "#1", written also when absent
	}
	return n <= MaxTransactItems && size <= MaxTransactBytes
}

// writeSpilled writes a spilled transaction's pending images ahead of it,
// in as many transactions as they need.
func (f *Fed) writeSpilled(ctx context.Context, images []Op) error {
	for len(images) > 0 {
		n, size := 0, 0
		for n < len(images) && n < MaxTransactItems && size+images[n].Size() <= MaxTransactBytes {
			size += images[n].Size()
			n++
		}
		if err := f.Store.Transact(ctx, images[:n]...); err != nil {
			f.dropSpilled(ctx, images)
			return err
		}
		images = images[n:]
	}
	return nil
}

// dropSpilled removes the images of a spilled transaction that did not
// commit (the keys ops write); what it cannot remove the next process's
// load does (their marker is absent).
func (f *Fed) dropSpilled(ctx context.Context, images []Op) {
	for len(images) > 0 {
		n := min(len(images), MaxTransactItems)
		dels := make([]Op, n)
		for i := range dels {
			dels[i] = Delete(images[i].TargetKey(), Always, 0)
		}
		if err := f.Store.Transact(ctx, dels...); err != nil {
			slog.Warn("change feed: images of a transaction that did not commit left for the next process", "error", err.Error())
			return
		}
		images = images[n:]
	}
}

// heal derives what the store's unavailability left queued of records
// with nothing in flight: a commit heals what an earlier one's failure
// left, as the next Drain would. A change that failed otherwise is left
// to Drain, so that its tries (MaxDeriveTries) are the runner's, seconds
// apart. Called with mu held.
func (f *Fed) heal(ctx context.Context) {
	for k, q := range f.queues {
		if len(q) == 0 || q[0].fails > 0 || f.earlierInFlight(k, q[len(q)-1].seq+1) {
			continue
		}
		if err := f.deriveRecord(ctx, k, q[len(q)-1].seq); err != nil {
			return // the next commit or Drain tries again
		}
	}
}

// enqueue adds p to its record's queue, in commit order (what an earlier
// process left first, in its keys' order). Called with mu held.
func (f *Fed) enqueue(p *pendingChange) {
	k := p.c.Key()
	q := f.queues[k]
	i, _ := slices.BinarySearchFunc(q, p, func(a, b *pendingChange) int {
		return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.name, b.name))
	})
	f.queues[k] = slices.Insert(q, i, p)
}

// deriveRecord derives the queued changes of record k up to seq upTo, in
// order, once no earlier change of k is in flight. A change that fails
// stops it (it holds back the record's later changes) until it is parked.
// Called with mu held; it may wait on waited.
func (f *Fed) deriveRecord(ctx context.Context, k Key, upTo uint64) error {
	if err := f.load(ctx); err != nil {
		return err
	}
	for f.earlierInFlight(k, upTo) {
		f.waited.Wait()
	}
	for q := f.queues[k]; len(q) > 0 && q[0].seq <= upTo; q = f.queues[k] {
		p := q[0]
		err := f.derivePendingChange(ctx, p)
		if err != nil && !errors.Is(err, ErrUnavailable) {
			p.fails++
		}
		if err != nil && p.fails >= MaxDeriveTries {
			err = f.park(ctx, p, err)
		}
		if err != nil {
			return err
		}
		if len(q) == 1 {
			delete(f.queues, k)
		} else {
			f.queues[k] = q[1:]
		}
	}
	return nil
}

// earlierInFlight says whether a change of k before seq is still
// committing. Called with mu held.
func (f *Fed) earlierInFlight(k Key, seq uint64) bool {
	for s, r := range f.inflight {
		if s < seq && r == k {
			return true
		}
	}
	return false
}

// park moves p's pending items to the parked partition, in one
// transaction, and says so in the log and to OnPark: the record's later
// changes then go on. Called with mu held.
func (f *Fed) park(ctx context.Context, p *pendingChange, cause error) error {
	ops := make([]Op, 0, 2*len(p.keys))
	for i, k := range p.keys {
		img := p.c.New
		if i < len(p.keys)-1 {
			img = p.c.Old
		}
		ops = append(ops, Put(Item{PK: ParkedPartition, SK: k.SK, Version: 1, Data: encodePending(i < len(p.keys)-1, img, "")}, Always, 0), Delete(k, Always, 0))
	}
	if err := f.once.Transact(ctx, ops...); err != nil {
		return err
	}
	if p.spill != nil {
		p.spill.left-- // its marker expires (AppliedTTL) if it was the last
	}
	k := p.c.Key()
	slog.Error("change feed: a change whose derivation keeps failing is parked; the record's later changes go on",
		"record", k.PK+"/"+k.SK, "parked", ParkedPartition+"/"+p.name, "tries", p.fails, "error", cause.Error())
	if f.OnPark != nil {
		f.OnPark(ctx, k)
	}
	return nil
}

// ChangesOf returns the changes ops would make to deriving records, read
// through st before they commit: for each put or delete of such a record,
// its image before (read now; the op's version condition makes it exact)
// and after. A put without a stamp derives nothing (derive) and is left
// out: it costs the local feed no pending images. The local feed's, and a
// benchmark's stand-in for the stream.
func (ds Derivers) ChangesOf(ctx context.Context, st Store, ops []Op) ([]Change, error) {
	var changes []Change
	for i := range ops {
		op := &ops[i]
		if (op.Kind != OpPut && op.Kind != OpDelete) || !ds.Derives(op.key().PK) ||
			(op.Kind == OpPut && op.Item.Nums[ChangeNum] == 0) {
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

// Drain derives every change left pending: by a failure, or, the first
// time, by an earlier process. It returns the first failure.
func (f *Fed) Drain(ctx context.Context) error {
	err := f.drain(ctx)
	if cerr := f.CleanUps.RunAll(ctx, f); err == nil {
		err = cerr
	}
	return err
}

func (f *Fed) drain(ctx context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.load(ctx); err != nil {
		return err
	}
	var first error
	for _, k := range slices.Collect(maps.Keys(f.queues)) {
		q := f.queues[k]
		if len(q) == 0 {
			continue
		}
		if err := f.deriveRecord(ctx, k, q[len(q)-1].seq); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// load reads, once, the changes an earlier process left pending into the
// queues, ahead of this process's. Called with mu held.
func (f *Fed) load(ctx context.Context) error {
	if f.loaded {
		return nil
	}
	var found []*pendingChange
	var cur *pendingChange
	commits := map[string]string{} // a found change's spill marker, by its name
	markers := map[string]bool{}   // the spill markers present
	q := Query{PK: PendingPartition, Limit: 100}
	for {
		items, next, err := f.once.Query(ctx, q)
		if err != nil {
			return err
		}
		for i := range items {
			name, _, _ := strings.Cut(items[i].SK, "#")
			if strings.HasPrefix(name, f.prefix) {
				continue // this process's: queued when it committed
			}
			if strings.HasSuffix(items[i].SK, "#c") { // a spilled transaction's marker
				markers[items[i].SK] = true
				continue
			}
			old, it, commit, err := decodePending(items[i].Data)
			if err != nil {
				slog.Error("change feed: unreadable pending item left as it is", "item", PendingPartition+"/"+items[i].SK, "error", err.Error())
				continue
			}
			if cur == nil || cur.name != name {
				cur = &pendingChange{name: name}
			}
			if commit != "" {
				commits[name] = commit
			}
			cur.keys = append(cur.keys, items[i].Key())
			if old {
				cur.c.Old = it
				continue
			}
			cur.c.New = it
			if cur.c.Old != nil || cur.c.New != nil {
				found = append(found, cur)
			}
			cur = nil
		}
		if next == "" {
			break
		}
		q.Cursor = next
	}
	spills := map[string]*spill{}
	var orphans []Op
	for _, p := range found {
		if commit, ok := commits[p.name]; ok {
			if !markers[commit] { // its transaction never committed
				for _, k := range p.keys {
					orphans = append(orphans, Delete(k, Always, 0))
				}
				continue
			}
			if spills[commit] == nil {
				spills[commit] = &spill{key: Key{PK: PendingPartition, SK: commit}}
			}
			p.spill = spills[commit]
			p.spill.left++
		}
		f.enqueue(p)
	}
	f.dropSpilled(ctx, orphans)
	f.loaded = true
	return nil
}

// derivePendingChange writes p's derived work and removes its pending
// items, in one transaction.
func (f *Fed) derivePendingChange(ctx context.Context, p *pendingChange) error {
	last := p.keys[len(p.keys)-1]
	if p.uncertain {
		witness := last // its images commit with it
		if p.spill != nil {
			witness = p.spill.key
		}
		_, err := f.once.Get(ctx, witness)
		if errors.Is(err, ErrNotFound) {
			if p.spill != nil { // its images, written ahead
				dels := make([]Op, len(p.keys))
				for i, k := range p.keys {
					dels[i] = Delete(k, Always, 0)
				}
				f.dropSpilled(ctx, dels)
			}
			return nil // it never committed
		}
		if err != nil {
			return err
		}
		p.uncertain = false
	}
	deletes := make([]Op, len(p.keys))
	for i, k := range p.keys {
		deletes[i] = Delete(k, IfPresent, 0)
	}
	if p.spill != nil && p.spill.left == 1 { // the last of its transaction's
		deletes = append(deletes, Delete(p.spill.key, Always, 0))
	}
	// Its pending items already gone: another process derived it.
	c := p.c
	c.At = time.Now()
	err := f.derivers.apply(ctx, f.once, c, deletes, true, last, false)
	if err == nil && p.spill != nil {
		p.spill.left--
	}
	return err
}

// Parking in AWS and redriving on both stores. The change-feed function
// derives each stream record with ApplyOrPark: a change whose derivation
// fails MaxDeriveTries times in a row for a reason other than the store's
// unavailability is parked, its images written to the parked partition as
// the local feed parks them, so that the stream goes on with the shard's
// other changes instead of retrying the record until its retention ends
// and losing it. Unavailability is returned, for the stream to retry the
// record in order: it heals. Redrive derives what was parked, on either
// store, once its cause is fixed.

// parkedName names a parked change's items in AWS: the record's key and
// the version the change made (its stamp, or the version a removal
// removed), as its marker does, so parking it twice writes the same items.
func parkedName(c Change) string {
	k := c.Key()
	return k.PK + "\n" + k.SK + "\n" + version(c)
}

// ApplyOrPark applies c once (ApplyOnce), trying a failing derivation
// MaxDeriveTries times; then it parks c (Park) and calls onPark with the
// record and the cause. It returns only what the stream must retry: the
// store's unavailability, or a park that could not be written.
func (ds Derivers) ApplyOrPark(ctx context.Context, st Store, c Change, now time.Time, onPark func(record Key, cause error)) error {
	var err error
	for try := 1; try <= MaxDeriveTries; try++ {
		if err = ds.ApplyOnce(ctx, st, c, now); err == nil || errors.Is(err, ErrUnavailable) || ctx.Err() != nil {
			return err
		}
	}
	if perr := Park(ctx, st, c); perr != nil {
		return perr
	}
	k := c.Key()
	slog.Error("change feed: a change whose derivation keeps failing is parked; the record's later changes go on",
		"record", k.PK+"/"+k.SK, "parked", ParkedPartition+"/"+parkedName(c), "tries", MaxDeriveTries, "error", err.Error())
	if onPark != nil {
		onPark(k, err)
	}
	return nil
}

// Park writes c's images to the parked partition (two items, the image
// before and after, in the pending items' format), and a removal's tomb
// (a third, "#2"), which would expire before a late redrive, in one
// transaction.
func Park(ctx context.Context, st Store, c Change) error {
	name := parkedName(c)
	ops := []Op{
		Put(Item{PK: ParkedPartition, SK: name + "#0", Version: 1, Data: encodePending(true, c.Old, "")}, Always, 0),
		Put(Item{PK: ParkedPartition, SK: name + "#1", Version: 1, Data: encodePending(false, c.New, "")}, Always, 0),
	}
	if c.New == nil {
		t, err := st.Get(ctx, TombKey(c.Old.Key(), c.Old.Version))
		switch {
		case err == nil:
			ops = append(ops, Put(Item{PK: ParkedPartition, SK: name + "#2", Version: 1, Data: encodePending(false, &t, "")}, Always, 0))
		case !errors.Is(err, ErrNotFound):
			return err
		}
	}
	return st.Transact(ctx, ops...)
}

// Parked returns the parked changes, by name (their items' key without
// "#0" or "#1"), with the keys of their items.
func Parked(ctx context.Context, st Store) (map[string]Change, map[string][]Key, error) {
	changes, keys := map[string]Change{}, map[string][]Key{}
	q := Query{PK: ParkedPartition}
	for {
		items, next, err := st.Query(ctx, q)
		if err != nil {
			return nil, nil, err
		}
		for i := range items {
			name := items[i].SK[:max(len(items[i].SK)-2, 0)] // without "#0", "#1" or "#2"
			old, img, _, err := decodePending(items[i].Data)
			if err != nil {
				return nil, nil, fmt.Errorf("store: parked item %s: %w", items[i].SK, err)
			}
			c := changes[name]
			switch {
			case strings.HasSuffix(items[i].SK, "#2"):
				c.Tomb = img
			case old:
				c.Old = img
			default:
				c.New = img
			}
			changes[name], keys[name] = c, append(keys[name], items[i].Key())
		}
		if next == "" {
			for name, c := range changes {
				if c.Old == nil && c.New == nil {
					delete(changes, name) // a tomb alone: not a change
				}
			}
			return changes, keys, nil
		}
		q.Cursor = next
	}
}

// Redrive derives every parked change whose both images are there, each
// once (ApplyOnce's marker) in one transaction with the removal of its
// parked items, and returns how many it derived and the first failure
// (the others are still tried). Run it once a parked change's cause is
// fixed (docs/operations.md); running it again, or at once from two
// places, derives nothing twice.
func (ds Derivers) Redrive(ctx context.Context, st Store, now time.Time) (int, error) {
	changes, keys, err := Parked(ctx, st)
	if err != nil {
		return 0, err
	}
	// A record's changes in the order they committed: by the version
	// each made (a removal's is the one after the version it removed).
	made := func(c Change) int64 {
		if c.New != nil {
			return c.New.Version
		}
		return c.Old.Version + 1
	}
	names := slices.Collect(maps.Keys(changes))
	slices.SortFunc(names, func(a, b string) int {
		ca, cb := changes[a], changes[b]
		ka, kb := ca.Key(), cb.Key()
		return cmp.Or(cmp.Compare(ka.PK, kb.PK), cmp.Compare(ka.SK, kb.SK), cmp.Compare(made(ca), made(cb)))
	})
	var first error
	n := 0
	for _, name := range names {
		c := changes[name]
		m := marker(c, now)
		c.At = now
		guard := []Op{m}
		for _, k := range keys[name] {
			guard = append(guard, Delete(k, IfPresent, 0))
		}
		if err := ds.apply(ctx, st, c, guard, true, m.Item.Key(), true); err != nil {
			if first == nil {
				first = fmt.Errorf("store: redrive of %s: %w", name, err)
			}
			continue
		}
		n++
	}
	return n, first
}
