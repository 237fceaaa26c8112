// Package queuetest is the conformance suite every queue.Queue passes.
package queuetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/store"
)

// The visibility timeouts of the subtests that wait past one: short, for a
// redelivery to come soon; AckAll's long enough that the first of its two
// looks stays invisible on a loaded emulator.
const (
	shortVisibility  = time.Second
	ackAllVisibility = 5 * time.Second
	// Bodies' is short enough for a lost receive's messages to come again
	// within its 30 s, long enough to ack each before it would.
	bodiesVisibility = 5 * time.Second
)

// Visible is a queue whose visibility timeout can be set before use.
type Visible interface {
	queue.Queue
	UseVisibility(time.Duration)
}

// Run runs the suite. open must return a fresh, empty queue; each subtest
// sets its visibility timeout (1 s where the test waits for a redelivery,
// 5 s for AckAll, 60 s elsewhere) before using it.
func Run(t *testing.T, open func(t *testing.T) Visible) {
	sub := func(name string, vis time.Duration, f func(t *testing.T, q queue.Queue)) {
		t.Run(name, func(t *testing.T) {
			q := open(t)
			q.UseVisibility(vis)
			f(t, q)
		})
	}
	sub("SendReceiveAck", shortVisibility, testSendReceiveAck)
	sub("Redelivery", shortVisibility, testRedelivery)
	sub("RetryDelay", time.Minute, testRetryDelay)
	sub("Batch", time.Minute, testBatch)
	sub("ConcurrentConsumers", time.Minute, testConcurrent)
	sub("Bodies", bodiesVisibility, testBodies)
	sub("Cancel", time.Minute, testCancel)
	// AckAll receives 12 messages in two looks before acking them: 5 s
	// keeps the first look's invisible on a loaded emulator.
	sub("AckAll", ackAllVisibility, testAckAll)
	sub("Defer", time.Minute, testDefer)
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func receive(t *testing.T, q queue.Queue, max int, wait time.Duration) []queue.Message {
	t.Helper()
	msgs, err := q.Receive(ctx(t), max, wait)
	if err != nil {
		t.Fatalf("Receive(%d, %v): %v", max, wait, err)
	}
	if len(msgs) > max {
		t.Fatalf("Receive(%d, %v) returned %d messages", max, wait, len(msgs))
	}
	return msgs
}

// receiveOne waits up to wait for exactly one message.
func receiveOne(t *testing.T, q queue.Queue, wait time.Duration) queue.Message {
	t.Helper()
	msgs := receive(t, q, queue.MaxReceive, wait)
	if len(msgs) != 1 {
		t.Fatalf("received %d messages, want 1: %v", len(msgs), msgs)
	}
	return msgs[0]
}

func expectNone(t *testing.T, q queue.Queue, wait time.Duration, why string) {
	t.Helper()
	if msgs := receive(t, q, queue.MaxReceive, wait); len(msgs) != 0 {
		t.Fatalf("%s: received %d messages, first %q attempt %d", why, len(msgs), msgs[0].Body, msgs[0].Attempt)
	}
}

func send(t *testing.T, q queue.Queue, bodies ...[]byte) {
	t.Helper()
	if err := q.Send(ctx(t), bodies...); err != nil {
		t.Fatalf("Send of %d bodies: %v", len(bodies), err)
	}
}

func ack(t *testing.T, q queue.Queue, m queue.Message) {
	t.Helper()
	if err := q.Ack(ctx(t), m); err != nil {
		t.Fatalf("Ack %s: %v", m.ID, err)
	}
}

func testSendReceiveAck(t *testing.T, q queue.Queue) {
	if err := q.Send(ctx(t)); err != nil {
		t.Fatalf("Send of nothing: %v", err)
	}
	for _, b := range [][]byte{nil, {}, make([]byte, queue.MaxBody+1)} {
		if err := q.Send(ctx(t), []byte("ok"), b); !errors.Is(err, queue.ErrBody) {
			t.Fatalf("Send of a %d-byte body: %v, want ErrBody", len(b), err)
		}
	}
	if _, err := q.Receive(ctx(t), 0, 0); err == nil {
		t.Fatal("Receive(0) succeeded")
	}
	expectNone(t, q, 0, "refused sends wrote nothing")

	send(t, q, []byte(`{"topic":"orders/create","id":1}`))
	m := receiveOne(t, q, 5*time.Second)
	if string(m.Body) != `{"topic":"orders/create","id":1}` || m.Attempt != 1 || m.ID == "" || m.Receipt == "" {
		t.Fatalf("received %+v", m)
	}
	ack(t, q, m)
	// Past the visibility timeout: an acked message never comes back.
	expectNone(t, q, shortVisibility+time.Second, "after Ack")
}

func testRedelivery(t *testing.T, q queue.Queue) {
	send(t, q, []byte("redeliver me"))
	// The timeout runs from the claim, which happens inside Receive: on a
	// slow store the claim's write returns well after it was made, so the
	// earliest honest start is before the call.
	t0 := time.Now()
	m1 := receiveOne(t, q, 5*time.Second)
	expectNone(t, q, 0, "while invisible")
	m2 := receiveOne(t, q, shortVisibility+5*time.Second)
	if d := time.Since(t0); d < shortVisibility {
		t.Errorf("redelivered after %v, before the visibility timeout %v", d, shortVisibility)
	}
	if m2.ID != m1.ID || m2.Attempt != 2 || string(m2.Body) != "redeliver me" || m2.Receipt == m1.Receipt {
		t.Fatalf("first %+v, redelivered %+v", m1, m2)
	}
	// The first receipt is outdated: acking it must not delete the message.
	if err := q.Ack(ctx(t), m1); err != nil && !errors.Is(err, queue.ErrStaleReceipt) {
		t.Fatalf("Ack with an outdated receipt: %v", err)
	}
	m3 := receiveOne(t, q, shortVisibility+5*time.Second)
	if m3.ID != m1.ID || m3.Attempt != 3 {
		t.Fatalf("first %+v, third %+v", m1, m3)
	}
	ack(t, q, m3)
	expectNone(t, q, shortVisibility+time.Second, "after Ack of the latest receipt")
	if err := q.Retry(ctx(t), m3, 0); err != nil && !errors.Is(err, queue.ErrStaleReceipt) {
		t.Fatalf("Retry after Ack: %v", err)
	}
	expectNone(t, q, 0, "after Retry of an acked message")
}

func testRetryDelay(t *testing.T, q queue.Queue) {
	send(t, q, []byte("retry me"))
	m1 := receiveOne(t, q, 5*time.Second)
	const delay = 2 * time.Second
	if err := q.Retry(ctx(t), m1, delay); err != nil {
		t.Fatalf("Retry: %v", err)
	}
	t0 := time.Now()
	expectNone(t, q, time.Second, "before the retry delay")
	m2 := receiveOne(t, q, delay+5*time.Second)
	if d := time.Since(t0); d < delay-200*time.Millisecond {
		t.Errorf("received %v after Retry(%v)", d, delay)
	}
	if m2.ID != m1.ID || m2.Attempt != 2 || string(m2.Body) != "retry me" {
		t.Fatalf("first %+v, retried %+v", m1, m2)
	}
	// Retry(0): visible again at once.
	if err := q.Retry(ctx(t), m2, 0); err != nil {
		t.Fatalf("Retry(0): %v", err)
	}
	m3 := receiveOne(t, q, 3*time.Second)
	if m3.ID != m1.ID || m3.Attempt != 3 {
		t.Fatalf("first %+v, after Retry(0) %+v", m1, m3)
	}
	ack(t, q, m3)
	expectNone(t, q, 0, "after Ack")
}

func testBatch(t *testing.T, q queue.Queue) {
	const n = 25
	var bodies [][]byte
	want := map[string]bool{}
	for i := range n {
		b := fmt.Sprintf(`{"n":%d}`, i)
		bodies = append(bodies, []byte(b))
		want[b] = true
	}
	send(t, q, bodies...)
	ids := map[string]bool{}
	// A budget, not a speed target: on an emulator shared with other test
	// runs one receive-and-ack round can take seconds.
	deadline := time.Now().Add(90 * time.Second)
	for len(ids) < n && time.Now().Before(deadline) {
		for _, m := range receive(t, q, queue.MaxReceive, 2*time.Second) {
			if ids[m.ID] {
				t.Fatalf("message %s received twice", m.ID)
			}
			if !want[string(m.Body)] {
				t.Fatalf("unexpected or repeated body %q", m.Body)
			}
			ids[m.ID] = true
			delete(want, string(m.Body))
			if m.Attempt != 1 {
				t.Errorf("attempt %d, want 1", m.Attempt)
			}
			ack(t, q, m)
		}
	}
	if len(ids) != n {
		t.Fatalf("received %d of %d messages; missing %v", len(ids), n, want)
	}
	expectNone(t, q, 500*time.Millisecond, "after all were acked")
}

func testConcurrent(t *testing.T, q queue.Queue) {
	const n, consumers = 100, 4
	var bodies [][]byte
	for i := range n {
		bodies = append(bodies, fmt.Appendf(nil, "m%03d", i))
	}
	send(t, q, bodies...)

	var (
		mu       sync.Mutex
		inFlight = map[string]int{} // id -> consumer holding it
		acked    = map[string]int{} // body -> acks
		received = map[int]int{}    // consumer -> messages
		total    int
		wg       sync.WaitGroup
	)
	c := ctx(t)
	deadline := time.Now().Add(60 * time.Second)
	for w := range consumers {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				mu.Lock()
				done := total >= n
				mu.Unlock()
				if done {
					return
				}
				msgs, err := q.Receive(c, 1+w%3*4, time.Second) // 1, 5 and 9 at a time
				if err != nil {
					t.Errorf("consumer %d: Receive: %v", w, err)
					return
				}
				for _, m := range msgs {
					mu.Lock()
					if other, ok := inFlight[m.ID]; ok {
						t.Errorf("message %s (%q) delivered to consumers %d and %d at once", m.ID, m.Body, other, w)
					}
					inFlight[m.ID] = w
					received[w]++
					mu.Unlock()
					time.Sleep(time.Duration(rand.IntN(3)) * time.Millisecond)
					mu.Lock()
					delete(inFlight, m.ID)
					mu.Unlock()
					if err := q.Ack(c, m); err != nil {
						t.Errorf("consumer %d: Ack: %v", w, err)
						return
					}
					mu.Lock()
					acked[string(m.Body)]++
					total++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	if len(acked) != n || total != n {
		t.Fatalf("%d acks of %d distinct messages, want %d of %d", total, len(acked), n, n)
	}
	for b, k := range acked {
		if k != 1 {
			t.Errorf("%s acked %d times", b, k)
		}
	}
	t.Logf("messages per consumer: %v", received)
	expectNone(t, q, 0, "after all were acked")
}

func testBodies(t *testing.T, q queue.Queue) {
	random := make([]byte, 100<<10)
	for i := range random {
		random[i] = byte(rand.IntN(256))
	}
	bodies := [][]byte{
		[]byte(`{"title":"Ünïcödé — 日本語 🎉","note":"line\nbreak \"quoted\" \\ back","sep":"` + "\u2028\u2029" + `","nul":"\u0000"}`),
		[]byte("raw \u2028 separators, tab\t, CR\r, emoji 👩‍💻 and \U0010FFFD"),
		[]byte("noncharacters SQS refuses: \uFFFE \uFFFF"),
		{0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff, '\n', 0xc3}, // not UTF-8
		[]byte(" "),
		[]byte(strings.Repeat("x", queue.MaxBody)),
		random,
		bytes.Repeat([]byte{0xff}, queue.MaxBody), // the largest body SQS carries base64 encoded
	}
	send(t, q, bodies...)
	// Each is acked as it arrives: a receive whose answer was lost on the
	// way (a dropped connection on a loaded machine) leaves its messages
	// invisible for the subtest's short visibility timeout, after which they
	// come again, while those acked do not. A receive that failed as
	// unavailable (DynamoDB Local reset a connection while it moved these
	// bodies) is made again, as a consumer does.
	left := append([][]byte(nil), bodies...)
	deadline := time.Now().Add(30 * time.Second)
	for len(left) > 0 && time.Now().Before(deadline) {
		msgs, err := q.Receive(ctx(t), queue.MaxReceive, 2*time.Second)
		if errors.Is(err, queue.ErrUnavailable) || errors.Is(err, store.ErrUnavailable) {
			t.Logf("Receive: %v; again", err)
			pause := time.NewTimer(200 * time.Millisecond) // a real emulator's pause, not the test's time
			<-pause.C
			continue
		}
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		for _, m := range msgs {
			i := 0
			for i < len(left) && !bytes.Equal(left[i], m.Body) {
				i++
			}
			if i == len(left) {
				t.Errorf("unexpected body (%d bytes) %.80q", len(m.Body), m.Body)
				continue
			}
			left = append(left[:i], left[i+1:]...)
			ack(t, q, m)
		}
	}
	for _, b := range left {
		t.Errorf("body not received (%d bytes) %.80q", len(b), b)
	}
}

func testCancel(t *testing.T, q queue.Queue) {
	c, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	msgs, err := q.Receive(c, 1, 10*time.Second)
	if err == nil || len(msgs) != 0 {
		t.Fatalf("Receive with an ending context: %d messages, error %v", len(msgs), err)
	}
	if d := time.Since(t0); d > 3*time.Second {
		t.Fatalf("Receive returned %v after its context ended", d)
	}
}

// testAckAll acks received messages together, one of them through a
// receipt gone stale: the others are acked all the same.
func testAckAll(t *testing.T, q queue.Queue) {
	a, ok := q.(queue.Acker)
	if !ok {
		t.Skip("not a queue.Acker")
	}
	const n = 12
	var bodies [][]byte
	for i := range n {
		bodies = append(bodies, fmt.Appendf(nil, "ack-all %d", i))
	}
	send(t, q, bodies...)
	var got []queue.Message
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		got = append(got, receive(t, q, queue.MaxReceive, 2*time.Second)...)
	}
	if len(got) != n {
		t.Fatalf("received %d of %d", len(got), n)
	}
	ack(t, q, got[3]) // its receipt is stale for AckAll
	errs := a.AckAll(ctx(t), got)
	if len(errs) != n {
		t.Fatalf("AckAll returned %d errors for %d messages", len(errs), n)
	}
	for i, err := range errs {
		if i != 3 && err != nil {
			t.Fatalf("AckAll, message %d: %v", i, err)
		}
	}
	if errs[3] != nil && !errors.Is(errs[3], queue.ErrStaleReceipt) {
		t.Fatalf("AckAll of an acked message: %v, want nil or ErrStaleReceipt", errs[3])
	}
	// Past the visibility timeout: none comes back.
	expectNone(t, q, ackAllVisibility+time.Second, "after AckAll")
}

// testDefer hands a message back: it comes back after the delay, with the
// attempt count it had before the receive that deferred it.
func testDefer(t *testing.T, q queue.Queue) {
	d, ok := q.(queue.Deferrer)
	if !ok {
		t.Skip("not a queue.Deferrer")
	}
	send(t, q, []byte("defer me"))
	m1 := receiveOne(t, q, 5*time.Second)
	if err := q.Retry(ctx(t), m1, 0); err != nil {
		t.Fatalf("Retry(0): %v", err)
	}
	m2 := receiveOne(t, q, 3*time.Second) // attempt 2
	const delay = 2 * time.Second
	if err := d.Defer(ctx(t), m2, delay); err != nil {
		t.Fatalf("Defer: %v", err)
	}
	t0 := time.Now()
	expectNone(t, q, time.Second, "before the deferral's delay")
	m3 := receiveOne(t, q, delay+5*time.Second)
	if dt := time.Since(t0); dt < delay-200*time.Millisecond {
		t.Errorf("received %v after Defer(%v)", dt, delay)
	}
	if m3.ID != m1.ID || m3.Attempt != 2 || string(m3.Body) != "defer me" {
		t.Fatalf("before %+v, after Defer %+v (want attempt 2 again)", m2, m3)
	}
	if err := d.Defer(ctx(t), m2, 0); !errors.Is(err, queue.ErrStaleReceipt) {
		t.Fatalf("Defer with an old receipt: %v, want ErrStaleReceipt", err)
	}
	ack(t, q, m3)
}
