package storequeue_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/queuetest"
	"github.com/storeadmin/adminapi/shared/queue/storequeue"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
)

func openBolt(t *testing.T, dir string) store.Store {
	t.Helper()
	s, err := boltstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEmbedded(t *testing.T) {
	queuetest.Run(t, func(t *testing.T) queuetest.Visible {
		st := openBolt(t, t.TempDir())
		t.Cleanup(func() { st.Close() })
		return storequeue.New(st, "webhooks")
	})
}

func TestDynamoDB(t *testing.T) {
	dynamotest.Endpoint(t)
	queuetest.Run(t, func(t *testing.T) queuetest.Visible {
		return storequeue.New(dynamotest.Open(t), "webhooks")
	})
}

// TestRestart: messages, in flight or not, survive closing and reopening
// the embedded store, and keep their ids and attempts.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openBolt(t, dir)
	q := storequeue.New(st, "webhooks")
	if err := q.Send(ctx, []byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	msgs, err := q.Receive(ctx, 1, time.Second)
	if err != nil || len(msgs) != 1 {
		t.Fatalf("receive: %v %v", msgs, err)
	}
	if err := q.Retry(ctx, msgs[0], 0); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st = openBolt(t, dir)
	defer st.Close()
	q = storequeue.New(st, "webhooks")
	msgs2, err := q.Receive(ctx, 10, time.Second)
	if err != nil || len(msgs2) != 2 {
		t.Fatalf("after reopening: %v %v", msgs2, err)
	}
	for _, m := range msgs2 {
		want := 1
		if m.ID == msgs[0].ID {
			want = 2
		}
		if m.Attempt != want {
			t.Errorf("%q: attempt %d, want %d", m.Body, m.Attempt, want)
		}
	}
}

// TestQueuesAreSeparate: two names in one store do not share messages.
func TestQueuesAreSeparate(t *testing.T) {
	ctx := context.Background()
	st := openBolt(t, t.TempDir())
	defer st.Close()
	a, b := storequeue.New(st, "a"), storequeue.New(st, "b")
	if err := a.Send(ctx, []byte("for a")); err != nil {
		t.Fatal(err)
	}
	if msgs, err := b.Receive(ctx, 10, 100*time.Millisecond); err != nil || len(msgs) != 0 {
		t.Fatalf("b received %v %v", msgs, err)
	}
	if msgs, err := a.Receive(ctx, 10, time.Second); err != nil || len(msgs) != 1 {
		t.Fatalf("a received %v %v", msgs, err)
	}
}

// TestStaleReceipt: after a redelivery only the new receipt acts.
func TestStaleReceipt(t *testing.T) {
	ctx := context.Background()
	st := openBolt(t, t.TempDir())
	defer st.Close()
	q := storequeue.New(st, "webhooks")
	q.UseVisibility(100 * time.Millisecond)
	if err := q.Send(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	m1, err := q.Receive(ctx, 1, time.Second)
	if err != nil || len(m1) != 1 {
		t.Fatal(m1, err)
	}
	m2, err := q.Receive(ctx, 1, 2*time.Second)
	if err != nil || len(m2) != 1 || m2[0].Attempt != 2 {
		t.Fatal(m2, err)
	}
	if err := q.Retry(ctx, m1[0], 0); !errors.Is(err, queue.ErrStaleReceipt) {
		t.Fatalf("Retry with the old receipt: %v", err)
	}
	if err := q.Ack(ctx, m1[0]); !errors.Is(err, queue.ErrStaleReceipt) {
		t.Fatalf("Ack with the old receipt: %v", err)
	}
	if err := q.Ack(ctx, m2[0]); err != nil {
		t.Fatal(err)
	}
	if msgs, err := q.Receive(ctx, 1, 300*time.Millisecond); err != nil || len(msgs) != 0 {
		t.Fatalf("after Ack: %v %v", msgs, err)
	}
	if err := q.Retry(ctx, m2[0], 0); !errors.Is(err, queue.ErrStaleReceipt) {
		t.Fatalf("Retry after Ack: %v", err)
	}
}

// TestWake: a Send through the same Queue ends a waiting Receive at once.
func TestWake(t *testing.T) {
	ctx := context.Background()
	st := openBolt(t, t.TempDir())
	defer st.Close()
	q := storequeue.New(st, "webhooks")
	go func() {
		time.Sleep(200 * time.Millisecond)
		q.Send(ctx, []byte("x"))
	}()
	t0 := time.Now()
	msgs, err := q.Receive(ctx, 1, 10*time.Second)
	if err != nil || len(msgs) != 1 {
		t.Fatal(msgs, err)
	}
	if d := time.Since(t0); d > time.Second {
		t.Fatalf("received after %v", d)
	}
}
