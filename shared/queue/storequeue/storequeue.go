// Package storequeue implements queue.Queue on the service's store, so that
// the local runner needs no SQS: on the embedded store (boltstore) a
// restart loses nothing. It also runs on DynamoDB (the suite checks it).
//
// Layout: one partition per queue, PK "queue#<name>"; a message is one item
// with SK "<visible-at, unix nanoseconds zero-padded to 20 digits>#<id>" and
// Data {"id", "body" (base64), "attempt" (receives so far)}. Sort-key order
// is visibility order, so the visible messages are the partition's keys
// before now's timestamp. Receiving a message moves its item to the key of
// its next visibility (one transaction: delete the old key if present, put
// the new one); whoever loses that race skips the message. The receipt is
// the new sort key, so only the latest receive can ack or retry. A Receive
// claims all it found in one transaction, AckAll deletes in one.
package storequeue

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/store"
)

// A Receive that finds only messages not yet visible looks again when the
// first of them becomes visible (it knows when: messages sort by that
// time), after PollInterval at least and MaxPollInterval at most, the
// latter for a clock that does not move with time (a test's). One that
// finds the queue empty looks again after IdleInterval: every look is a
// Query, and an idle consumer looking 20 times a second kept the store busy
// for nothing. A Send through the same Queue wakes it at once; another
// process's Send is seen within IdleInterval.
const (
	PollInterval    = 5 * time.Millisecond
	MaxPollInterval = 400 * time.Millisecond
	IdleInterval    = 5 * time.Second
)

// maxSendBytes bounds the encoded items of one Send transaction, well below
// DynamoDB's 4 MB per transaction.
const maxSendBytes = 2 << 20

// Queue is a queue.Queue in a store partition.
type Queue struct {
	st         store.Store
	pk         string
	visibility time.Duration
	now        func() time.Time

	mu   sync.Mutex
	sent chan struct{} // closed (and replaced) by each Send
}

var (
	_ queue.Queue    = (*Queue)(nil)
	_ queue.Deferrer = (*Queue)(nil)
	_ queue.Acker    = (*Queue)(nil)
)

// New returns the queue name kept in st, with the visibility timeout
// queue.DefaultVisibility. Queues are cheap; a Send wakes waiting Receives of the
// same *Queue at once, other processes' within MaxPollInterval. The queue
// reaches st through store.Retrying, the one retry layer requests use too:
// a moment's unavailability of the store (a dropped connection, a
// throttled read) is retried within the call rather than failing it.
func New(st store.Store, name string) *Queue {
	return &Queue{st: store.Retrying(st), pk: "queue#" + name, visibility: queue.DefaultVisibility, now: time.Now, sent: make(chan struct{})}
}

type record struct {
	ID      string `json:"id"`
	Body    []byte `json:"body"`
	Attempt int    `json:"attempt"`
}

// sk is the sort key of message id visible at t.
// UseClock makes now the queue's time for when messages become visible:
// the local runner's movable clock, so that moving it forward makes the
// retries it passed due at once.
func (q *Queue) UseClock(now func() time.Time) { q.now = now }

// UseVisibility sets how long a received message stays invisible (tests
// shorten it to see a redelivery); call it before the queue is used.
func (q *Queue) UseVisibility(d time.Duration) { q.visibility = d }

func sk(t time.Time, id string) string {
	return stamp(t) + "#" + id
}

// stamp is t in unix nanoseconds, zero-padded to 20 digits.
func stamp(t time.Time) string {
	var b [20]byte
	s := strconv.AppendInt(b[:0], t.UnixNano(), 10)
	return strings.Repeat("0", 20-len(s)) + string(s)
}

func newID() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (q *Queue) item(sk string, r *record) store.Item {
	data, err := json.Marshal(r)
	if err != nil {
		panic(err) // a string, bytes and an int
	}
	return store.Item{PK: q.pk, SK: sk, Data: data}
}

// Send writes the messages in as few transactions as the store allows.
func (q *Queue) Send(ctx context.Context, bodies ...[]byte) error {
	for _, b := range bodies {
		if err := queue.CheckBody(b); err != nil {
			return err
		}
	}
	now := q.now()
	ops := make([]store.Op, 0, min(len(bodies), store.MaxTransactItems))
	size := 0
	flush := func() error {
		if len(ops) == 0 {
			return nil
		}
		if err := q.st.Transact(ctx, ops...); err != nil {
			return fmt.Errorf("storequeue: send: %w", err)
		}
		ops, size = ops[:0], 0
		q.wake()
		return nil
	}
	for _, b := range bodies {
		id := newID()
		it := q.item(sk(now, id), &record{ID: id, Body: b})
		if len(ops) == store.MaxTransactItems || size+len(it.Data) > maxSendBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		ops = append(ops, store.Put(it, store.IfAbsent, 0))
		size += len(it.Data) + len(it.SK)
	}
	return flush()
}

// wake wakes the Receives waiting on this Queue.
func (q *Queue) wake() {
	q.mu.Lock()
	close(q.sent)
	q.sent = make(chan struct{})
	q.mu.Unlock()
}

func (q *Queue) sentChan() <-chan struct{} {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.sent
}

// Receive claims up to max visible messages, polling until wait elapses.
func (q *Queue) Receive(ctx context.Context, max int, wait time.Duration) ([]queue.Message, error) {
	if max < 1 {
		return nil, fmt.Errorf("storequeue: receive max %d", max)
	}
	max = min(max, queue.MaxReceive)
	deadline := time.Now().Add(wait)
	var timer *time.Timer
	for {
		// Taken before looking, so that a Send after the look wakes us.
		sent := q.sentChan()
		msgs, next, err := q.receive(ctx, max)
		if len(msgs) > 0 || err != nil {
			return msgs, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return nil, nil
		}
		d := min(left, IdleInterval)
		if !next.IsZero() {
			wait := min(MaxPollInterval, next.Sub(q.now()))
			if wait < PollInterval {
				wait = PollInterval
			}
			d = min(left, wait)
		}
		if timer == nil {
			timer = time.NewTimer(d)
			defer timer.Stop()
		} else {
			timer.Reset(d)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-sent:
		case <-timer.C:
		}
	}
}

// receive is one look: one Query, then one transaction claiming every
// visible message it found (a message another consumer claimed first is
// dropped from the claim, which is tried again without it). Messages sort
// by the time they become visible, so the visible ones are the first; when
// there are none, next is when the first of the others becomes visible
// (zero: the queue is empty).
func (q *Queue) receive(ctx context.Context, max int) (msgs []queue.Message, next time.Time, err error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	now := q.now()
	items, _, err := q.st.Query(ctx, store.Query{PK: q.pk, Limit: max})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("storequeue: receive: %w", err)
	}
	if len(items) == 0 {
		return nil, time.Time{}, nil
	}
	visibleBefore := stamp(now) + "~"
	if items[0].SK >= visibleBefore {
		return nil, visibleAt(items[0].SK, now), nil
	}
	items = slices.DeleteFunc(items, func(it store.Item) bool { return it.SK >= visibleBefore })
	msgs, err = q.claim(ctx, items)
	return msgs, time.Time{}, err
}

// visibleAt is when the message of sort key sk becomes visible (now when
// unreadable: look again soon).
func visibleAt(sk string, now time.Time) time.Time {
	ns, err := strconv.ParseInt(strings.TrimLeft(sk[:min(len(sk), 20)], "0"), 10, 64)
	if err != nil {
		return now
	}
	return time.Unix(0, ns)
}

// claim claims the visible items.
func (q *Queue) claim(ctx context.Context, items []store.Item) ([]queue.Message, error) {
	// Concurrent consumers see the same first items; claiming in random
	// order spreads them out instead of making all but one lose each race.
	mrand.Shuffle(len(items), func(i, j int) { items[i], items[j] = items[j], items[i] })
	type claim struct {
		old, receipt store.Key
		r            record
	}
	claims := make([]claim, 0, len(items))
	for i := range items {
		var r record
		if err := json.Unmarshal(items[i].Data, &r); err != nil {
			if len(claims) > 0 {
				break // claim those before; this one stays visible
			}
			return nil, fmt.Errorf("storequeue: message %s: %w", items[i].SK, err)
		}
		r.Attempt++
		claims = append(claims, claim{old: items[i].Key(), r: r})
	}
	for len(claims) > 0 {
		// Invisible for the full timeout from the claim.
		visible := q.now().Add(q.visibility)
		ops := make([]store.Op, 0, 2*len(claims))
		msgs := make([]queue.Message, len(claims))
		for i := range claims {
			c := &claims[i]
			receipt := sk(visible, c.r.ID)
			c.receipt = store.Key{PK: q.pk, SK: receipt}
			ops = append(ops, store.Delete(c.old, store.IfPresent, 0), store.Put(q.item(receipt, &c.r), store.IfAbsent, 0))
			msgs[i] = queue.Message{ID: c.r.ID, Receipt: receipt, Body: c.r.Body, Attempt: c.r.Attempt}
		}
		err := q.st.Transact(ctx, ops...)
		if err == nil {
			return msgs, nil
		}
		failed, ok := store.FailedKey(err)
		if !ok {
			return nil, fmt.Errorf("storequeue: claim: %w", err)
		}
		// Another consumer claimed that one first: claim the others.
		n := len(claims)
		claims = slices.DeleteFunc(claims, func(c claim) bool { return c.old == failed || c.receipt == failed })
		if len(claims) == n {
			return nil, fmt.Errorf("storequeue: claim failed on %v, no message of its own: %w", failed, err)
		}
	}
	return nil, nil
}

// Ack deletes the message's item; ErrStaleReceipt when it has moved.
func (q *Queue) Ack(ctx context.Context, m queue.Message) error {
	if err := checkReceipt(m.Receipt); err != nil {
		return err
	}
	err := q.st.Transact(ctx, store.Delete(store.Key{PK: q.pk, SK: m.Receipt}, store.IfPresent, 0))
	if errors.Is(err, store.ErrConditionFailed) {
		return queue.ErrStaleReceipt
	}
	if err != nil {
		return fmt.Errorf("storequeue: ack: %w", err)
	}
	return nil
}

// AckAll deletes the messages' items in one transaction (a stale receipt
// in it makes each be acked on its own).
func (q *Queue) AckAll(ctx context.Context, ms []queue.Message) []error {
	errs := make([]error, len(ms))
	ops := make([]store.Op, 0, len(ms))
	for i := range ms {
		if errs[i] = checkReceipt(ms[i].Receipt); errs[i] != nil {
			continue
		}
		ops = append(ops, store.Delete(store.Key{PK: q.pk, SK: ms[i].Receipt}, store.IfPresent, 0))
	}
	switch {
	case len(ops) == 0:
		return errs
	case len(ops) <= store.MaxTransactItems && len(ops) == len(ms):
		if err := q.st.Transact(ctx, ops...); err == nil {
			return errs
		} else if !errors.Is(err, store.ErrConditionFailed) {
			for i := range errs {
				errs[i] = fmt.Errorf("storequeue: ack: %w", err)
			}
			return errs
		}
	}
	for i := range ms {
		if errs[i] == nil {
			errs[i] = q.Ack(ctx, ms[i])
		}
	}
	return errs
}

// Retry moves the message's item to the key of its next visibility.
func (q *Queue) Retry(ctx context.Context, m queue.Message, after time.Duration) error {
	return q.move(ctx, m, after, false)
}

// Defer moves the message's item to the key of its next visibility and
// takes back the receive's attempt count.
func (q *Queue) Defer(ctx context.Context, m queue.Message, after time.Duration) error {
	return q.move(ctx, m, after, true)
}

func (q *Queue) move(ctx context.Context, m queue.Message, after time.Duration, uncount bool) error {
	if err := checkReceipt(m.Receipt); err != nil {
		return err
	}
	after = min(max(after, 0), queue.MaxRetry)
	k := store.Key{PK: q.pk, SK: m.Receipt}
	it, err := q.st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return queue.ErrStaleReceipt
	}
	if err != nil {
		return fmt.Errorf("storequeue: retry: %w", err)
	}
	next := it
	next.SK = sk(q.now().Add(after), m.Receipt[21:])
	if uncount {
		var r record
		if err := json.Unmarshal(it.Data, &r); err != nil {
			return fmt.Errorf("storequeue: message %s: %w", it.SK, err)
		}
		r.Attempt = max(r.Attempt-1, 0)
		next = q.item(next.SK, &r)
	} else if next.SK == k.SK {
		return nil
	}
	err = q.st.Transact(ctx, store.Delete(k, store.IfPresent, 0), store.Put(next, store.IfAbsent, 0))
	if errors.Is(err, store.ErrConditionFailed) {
		return queue.ErrStaleReceipt
	}
	if err != nil {
		return fmt.Errorf("storequeue: retry: %w", err)
	}
	if after == 0 {
		q.wake()
	}
	return nil
}

func checkReceipt(r string) error {
	if len(r) < 22 || r[20] != '#' {
		return fmt.Errorf("storequeue: malformed receipt %q", r)
	}
	return nil
}
