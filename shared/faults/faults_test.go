package faults_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/faults"
	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/storequeue"
	"github.com/storeadmin/adminapi/shared/store"
)

func put(pk string) store.Op {
	return store.Put(store.Item{PK: pk, SK: "x", Version: 1, Data: []byte(`{}`)}, store.IfAbsent, 0)
}

func TestFaultsComeAsTheServicesFail(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			ctx := context.Background()
			in := faults.New(1)
			st := in.Store(s.Open(t))
			if err := st.Transact(ctx, put("before-start")); err != nil {
				t.Fatalf("a fault before Start: %v", err)
			}
			in.Start()
			if _, err := st.Get(ctx, store.Key{PK: "before-start", SK: "x"}); !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("read: %v, want unavailable", err)
			}
			// A fifth of the failed writes were applied; which ones, the
			// store says after faults stop.
			const n = 300
			for i := range n {
				if err := st.Transact(ctx, put(fmt.Sprintf("w%d", i))); !errors.Is(err, store.ErrUnavailable) {
					t.Fatalf("write: %v, want unavailable", err)
				}
			}
			in.Stop()
			applied := 0
			for i := range n {
				if _, err := st.Get(ctx, store.Key{PK: fmt.Sprintf("w%d", i), SK: "x"}); err == nil {
					applied++
				}
			}
			if c := in.Counts(); applied < n/10 || applied > n*3/10 || int64(applied) != c.Applied {
				t.Fatalf("%d of %d failed writes applied (%d counted), want about a fifth", applied, n, c.Applied)
			}
		})
	}
}

// A write retried under its request token is applied once, however
// often its attempts time out after committing: a transaction (DynamoDB's
// ClientRequestToken) and a single-item write (the token left on the item)
// alike, which store.Retrying relies on to resolve an uncertain write.
func TestRetriedWritesApplyOnce(t *testing.T) {
	for _, s := range apitest.Stores {
		t.Run(s.Name, func(t *testing.T) {
			ctx := context.Background()
			in := faults.New(0.5)
			raw := s.Open(t)
			st := store.Retrying(in.Store(raw))
			in.Start()
			ok, unavailable := 0, 0
			acked := map[int]bool{}
			for i := range 120 {
				k := store.Key{PK: fmt.Sprintf("once%d", i), SK: "x"}
				var err error
				if i%2 == 0 {
					err = st.Transact(ctx, put(k.PK), store.Add(store.Key{PK: "count", SK: "x"}, store.Always, map[string]int64{"n": 1}))
				} else {
					_, err = st.Add(ctx, k, store.Always, map[string]int64{"n": 1})
				}
				switch {
				case err == nil:
					ok++
					acked[i] = true
				case errors.Is(err, store.ErrUnavailable):
					unavailable++
				default:
					t.Fatalf("write %d: %v (a retry must never meet its own commit)", i, err)
				}
			}
			in.Stop()
			records := int64(0)
			for i := range 120 {
				it, err := raw.Get(ctx, store.Key{PK: fmt.Sprintf("once%d", i), SK: "x"})
				switch {
				case err == nil && i%2 == 0:
					records++
				case err == nil && it.Nums["n"] != 1:
					t.Fatalf("add %d applied %d times", i, it.Nums["n"])
				case err != nil && acked[i]:
					t.Fatalf("acknowledged write %d missing: %v", i, err)
				}
			}
			count, err := raw.Get(ctx, store.Key{PK: "count", SK: "x"})
			if err != nil {
				t.Fatal(err)
			}
			if n := count.Nums["n"]; n != records {
				t.Fatalf("counted %d commits for %d records", n, records)
			}
			if c := in.Counts(); ok < 100 || c.Applied == 0 {
				t.Fatalf("%d acknowledged, %d unavailable, %d writes applied before failing: retries should get past most faults", ok, unavailable, c.Applied)
			}
		})
	}
}

func TestQueueFaults(t *testing.T) {
	ctx := context.Background()
	in := faults.New(1)
	q := in.Queue(storequeue.New(apitest.OpenEmbedded(t), "q"))
	if _, ok := q.(queue.Deferrer); !ok {
		t.Fatal("the faulty queue lost its Deferrer")
	}
	in.Start()
	for range 50 {
		if err := q.Send(ctx, []byte("m")); !errors.Is(err, queue.ErrUnavailable) {
			t.Fatalf("send: %v, want unavailable", err)
		}
	}
	in.Stop()
	got, err := q.Receive(ctx, queue.MaxReceive, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if c := in.Counts(); int64(len(got)) > c.Applied || c.Queue != 50 {
		t.Fatalf("%d sends arrived, %d counted applied, %d faults", len(got), c.Applied, c.Queue)
	}
}
