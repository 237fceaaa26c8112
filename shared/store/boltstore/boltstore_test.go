package boltstore_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
	"github.com/storeadmin/adminapi/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := boltstore.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestDurability(t *testing.T) {
	dir := t.TempDir()
	s, err := boltstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	it := store.Item{
		PK: "p", SK: "a", GSI1PK: "g", GSI1SK: "1", GSI2PK: "h", GSI2SK: "2", Version: 3,
		Nums: map[string]int64{"n": 7}, Data: []byte(`{"x":1}`), ExpiresAt: time.Now().Add(time.Hour).Unix(),
	}
	if err := s.Transact(t.Context(), store.Put(it, store.IfAbsent, 0), store.Put(store.Item{PK: "p", SK: "b"}, store.Always, 0)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(t.Context(), it.Key(), store.IfPresent, map[string]int64{"n": 1}); err != nil {
		t.Fatal(err)
	}
	if err := s.Transact(t.Context(), store.Delete(store.Key{PK: "p", SK: "b"}, store.IfPresent, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, err = boltstore.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.Get(t.Context(), it.Key())
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 4 || got.Nums["n"] != 8 || string(got.Data) != `{"x":1}` || got.GSI1SK != "1" || got.ExpiresAt != it.ExpiresAt {
		t.Fatalf("after reopen: %+v", got)
	}
	if _, err := s.Get(t.Context(), store.Key{PK: "p", SK: "b"}); err != store.ErrNotFound {
		t.Fatalf("deleted item after reopen: %v", err)
	}
	items, _, err := s.Query(t.Context(), store.Query{Index: store.GSI1, PK: "g"})
	if err != nil || len(items) != 1 || items[0].SK != "a" {
		t.Fatalf("index after reopen: %v, %v", items, err)
	}
}

// Concurrent writes share commits, yet each gets its own answer: a failed
// condition or a write bolt refuses fails only its own transaction, and
// writes nothing of it.
func TestSharedCommitsAnswerEachWrite(t *testing.T) {
	s, err := boltstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	if err := s.Transact(ctx, store.Put(store.Item{PK: "p", SK: "taken"}, store.Always, 0)); err != nil {
		t.Fatal(err)
	}
	const n = 300
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mine := store.Put(store.Item{PK: "p", SK: fmt.Sprint("item#", i)}, store.IfAbsent, 0)
			switch i % 3 {
			case 0: // succeeds
				errs[i] = s.Transact(ctx, mine)
			case 1: // fails its condition after an op that would have written
				errs[i] = s.Transact(ctx, mine, store.Put(store.Item{PK: "p", SK: "taken"}, store.IfAbsent, 0))
			case 2: // bolt refuses the key (longer than 32 KiB) after a first write
				errs[i] = s.Transact(ctx, mine, store.Put(store.Item{PK: "p", SK: strings.Repeat("k", 40<<10)}, store.Always, 0))
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		_, getErr := s.Get(ctx, store.Key{PK: "p", SK: fmt.Sprint("item#", i)})
		switch i % 3 {
		case 0:
			if err != nil || getErr != nil {
				t.Fatalf("write %d: %v, then read: %v", i, err, getErr)
			}
		case 1:
			if !store.FailedOn(err, store.Key{PK: "p", SK: "taken"}) || getErr != store.ErrNotFound {
				t.Fatalf("write %d: %v (want p/taken's condition), then read: %v", i, err, getErr)
			}
		case 2:
			if err == nil || errors.Is(err, store.ErrConditionFailed) || getErr != store.ErrNotFound {
				t.Fatalf("write %d: %v (want bolt's error), then read: %v", i, err, getErr)
			}
		}
	}
}

// A request token reused for other ops is a caller's bug, refused as
// DynamoDB refuses it (IdempotentParameterMismatch), and nothing of the
// second write is applied; a token is forgotten after its window.
func TestRequestTokenReused(t *testing.T) {
	s, err := boltstore.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Unix(1_800_000_000, 0)
	s.UseClock(func() time.Time { return now })
	ctx := store.WithRequestToken(t.Context(), "tok")
	put := func(sk string) store.Op { return store.Put(store.Item{PK: "p", SK: sk, Version: 1}, store.IfAbsent, 0) }
	if err := s.Transact(ctx, put("a")); err != nil {
		t.Fatal(err)
	}
	if err := s.Transact(ctx, put("b")); !errors.Is(err, store.ErrTokenReused) {
		t.Fatalf("another write under an applied token: %v, want ErrTokenReused", err)
	}
	if _, err := s.Get(t.Context(), store.Key{PK: "p", SK: "b"}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the refused write was applied: %v", err)
	}
	now = now.Add(store.TokenWindow + time.Second)
	if err := s.Transact(ctx, put("b")); err != nil {
		t.Fatalf("a token past its window: %v", err)
	}
}
