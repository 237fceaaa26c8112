package delivery

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/queue"
)

// Limits of Consume, per receiver (scheme://host:port of a webhook's
// address: the deliveries that share an HTTP server).
const (
	// PerReceiver is how many requests Consume has in flight to one
	// receiver at most; the outbound client keeps as many connections to
	// it open for reuse.
	PerReceiver = outbound.IdleConnsPerHost
	// ReceiverWait is how long a delivery waits for one of its receiver's
	// slots before its message is handed back to the queue (DeferDelay),
	// not counted as an attempt: a receiver that answers slowly holds at
	// most PerReceiver workers, and the messages it cannot take hold the
	// others only briefly.
	ReceiverWait = 250 * time.Millisecond
	// DeferDelay is how long a deferred message stays away, with up to as
	// much again of jitter.
	DeferDelay = DeliveryTimeout
)

// Consume delivers messages from q until ctx ends: the local runner's
// webhook-dispatch. Up to workers messages are in hand at once, each with
// a goroutine; one receiver gets at most PerReceiver of them at a time (see
// ReceiverWait), so a slow receiver holds up only its own deliveries.
// Messages are received in batches and, when q is a queue.Acker, acked in
// batches; a message is acked only after its outcome is recorded.
func Consume(ctx context.Context, q queue.Queue, d *Dispatcher, workers int) {
	c := &consumer{q: q, d: d, receivers: map[string]*receiverSlots{}}
	if a, ok := q.(queue.Acker); ok {
		c.acks = newAckBatcher(a)
		defer c.acks.stop()
	}
	slots := make(chan struct{}, workers)
	for ctx.Err() == nil {
		slots <- struct{}{} // wait for one free worker before asking for more
		free := 1 + (workers - len(slots))
		<-slots
		msgs, err := q.Receive(ctx, min(free, queue.MaxReceive), queue.MaxWait)
		if err != nil {
			if ctx.Err() == nil {
				slog.Error("delivery queue receive failed", "error", err.Error())
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
			continue
		}
		batch := NewBatch() // the messages of one receive share their reads
		for _, m := range msgs {
			slots <- struct{}{}
			go func() {
				defer func() { <-slots }()
				c.handle(ctx, batch, m)
			}()
		}
	}
	for range workers { // wait for deliveries in flight
		slots <- struct{}{}
	}
}

type consumer struct {
	q    queue.Queue
	d    *Dispatcher
	acks *ackBatcher // nil: ack one by one

	mu        sync.Mutex
	receivers map[string]*receiverSlots
}

// receiverSlots are a receiver's PerReceiver slots; users counts the
// deliveries holding or waiting for one, so that idle receivers are
// forgotten.
type receiverSlots struct {
	slots chan struct{}
	users int
}

func (c *consumer) handle(ctx context.Context, b *Batch, m queue.Message) {
	p, err := c.d.Prepare(ctx, b, m)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			slog.Error("delivery attempt failed", "message", m.ID, "error", err.Error())
		}
		return // the message comes back after its visibility timeout
	case p == nil:
		c.ack(ctx, m) // nothing to deliver
		return
	}
	r := c.enter(p.Receiver())
	defer c.leave(p.Receiver(), r)
	if !c.acquire(ctx, r) {
		if ctx.Err() == nil {
			c.deferMessage(ctx, m)
		}
		return
	}
	sent := c.d.Send(ctx, p)
	<-r.slots
	out, err := c.d.Record(ctx, p, sent)
	c.settle(ctx, m, out, err)
}

func (c *consumer) enter(receiver string) *receiverSlots {
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.receivers[receiver]
	if r == nil {
		r = &receiverSlots{slots: make(chan struct{}, PerReceiver)}
		c.receivers[receiver] = r
	}
	r.users++
	return r
}

func (c *consumer) leave(receiver string, r *receiverSlots) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r.users--; r.users == 0 {
		delete(c.receivers, receiver)
	}
}

// acquire takes one of r's slots, waiting at most ReceiverWait.
func (c *consumer) acquire(ctx context.Context, r *receiverSlots) bool {
	select {
	case r.slots <- struct{}{}:
		return true
	default:
	}
	t := time.NewTimer(ReceiverWait)
	defer t.Stop()
	select {
	case r.slots <- struct{}{}:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// deferMessage hands m back for DeferDelay plus jitter: not an attempt
// where the queue can take the receive back (queue.Deferrer), else (SQS)
// a retry.
func (c *consumer) deferMessage(ctx context.Context, m queue.Message) {
	after := DeferDelay + rand.N(DeferDelay)
	var err error
	if d, ok := c.q.(queue.Deferrer); ok {
		err = d.Defer(ctx, m, after)
	} else {
		err = c.q.Retry(ctx, m, after)
	}
	if err != nil && ctx.Err() == nil {
		slog.Error("delivery deferral failed", "message", m.ID, "error", err.Error())
	}
}

// settle acks, retries or leaves m after an attempt, as Handle does.
func (c *consumer) settle(ctx context.Context, m queue.Message, out Outcome, err error) {
	switch {
	case err != nil:
		if ctx.Err() == nil {
			slog.Error("delivery attempt failed", "message", m.ID, "error", err.Error())
		}
	case out.Retry:
		if err := c.q.Retry(ctx, m, out.After); err != nil {
			slog.Error("delivery retry failed", "message", m.ID, "error", err.Error())
		}
	default:
		c.ack(ctx, m)
	}
}

func (c *consumer) ack(ctx context.Context, m queue.Message) {
	if c.acks != nil {
		c.acks.ack(m)
		return
	}
	if err := c.q.Ack(ctx, m); err != nil {
		slog.Error("delivery ack failed", "message", m.ID, "error", err.Error())
	}
}

// ackBatcher acks messages in batches: whatever arrived while the previous
// batch was being acked, so that nothing waits for company. Its context is
// not the consumer's: the acks of settled deliveries are made even while
// the consumer stops.
type ackBatcher struct {
	a    queue.Acker
	in   chan queue.Message
	done chan struct{}
}

// maxAckBatch is the most messages one AckAll gets.
const maxAckBatch = 50

func newAckBatcher(a queue.Acker) *ackBatcher {
	b := &ackBatcher{a: a, in: make(chan queue.Message, 4*maxAckBatch), done: make(chan struct{})}
	go b.run()
	return b
}

func (b *ackBatcher) ack(m queue.Message) { b.in <- m }

// stop acks what is pending and returns; call it after the last ack.
func (b *ackBatcher) stop() {
	close(b.in)
	<-b.done
}

func (b *ackBatcher) run() {
	defer close(b.done)
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	batch := make([]queue.Message, 0, maxAckBatch)
	for m := range b.in {
		batch = append(batch[:0], m)
	more:
		for len(batch) < maxAckBatch {
			select {
			case m, ok := <-b.in:
				if !ok {
					break more
				}
				batch = append(batch, m)
			default:
				break more
			}
		}
		for i, err := range b.a.AckAll(ctx, batch) {
			if err != nil {
				slog.Error("delivery ack failed", "message", batch[i].ID, "error", err.Error())
			}
		}
	}
}

// Handle makes one attempt at m and settles it on q: acked when done,
// delayed when to be retried, left to reappear when the attempt failed.
func Handle(ctx context.Context, q queue.Queue, d *Dispatcher, m queue.Message) (retry bool) {
	out, err := d.Deliver(ctx, nil, m)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			slog.Error("delivery attempt failed", "message", m.ID, "error", err.Error())
		}
		return true
	case out.Retry:
		if err := q.Retry(ctx, m, out.After); err != nil {
			slog.Error("delivery retry failed", "message", m.ID, "error", err.Error())
		}
		return true
	}
	if err := q.Ack(ctx, m); err != nil {
		slog.Error("delivery ack failed", "message", m.ID, "error", err.Error())
	}
	return false
}
