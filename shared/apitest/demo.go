package apitest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/auth"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/boltstore"
)

// The demo shop is loaded into a test's fresh store as the items the seed
// loader leaves behind, written in one or two transactions, rather than by
// the loader's eighteen: on DynamoDB Local a transaction costs 70-150 ms, and
// seeding was half of every DynamoDB test's transactions. The items are the
// loader's own, taken once per test process from an embedded store it
// loaded, so a test sees exactly what seed.Load makes (seed's own tests run
// the loader on both stores). Every Env of the process shares the snapshot,
// so the loader dates it by the machine's clock, not one Env's.
var (
	demoOnce  sync.Once
	demoItems []store.Item
	demoErr   error
)

// loadDemo gives st the demo shop: the snapshot on a fresh store, the
// loader itself on one that holds a shop already (a second Env over the
// same store), which then writes nothing it has.
func loadDemo(t testing.TB, st store.Store) {
	t.Helper()
	ctx := context.Background()
	if _, err := st.Get(ctx, auth.ShopKey); !errors.Is(err, store.ErrNotFound) {
		if _, _, err := seed.Load(ctx, st, clock.System{}, seed.Demo); err != nil {
			t.Fatal(err)
		}
		return
	}
	demoOnce.Do(func() { demoItems, demoErr = snapshotDemo(t.TempDir()) })
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	var ops []store.Op
	size := 0
	for _, it := range demoItems {
		// DynamoDB's transaction limits: 100 items, 4 MB.
		if len(ops) == store.MaxTransactItems || len(ops) > 0 && size+len(it.Data) > 3<<20 {
			if err := st.Transact(ctx, ops...); err != nil {
				t.Fatal(err)
			}
			ops, size = nil, 0
		}
		ops = append(ops, store.Put(it, store.IfAbsent, 0))
		size += len(it.Data)
	}
	if err := st.Transact(ctx, ops...); err != nil {
		t.Fatal(err)
	}
}

// snapshotDemo loads the demo shop into an embedded store in dir and reads
// back every item the loader wrote.
func snapshotDemo(dir string) ([]store.Item, error) {
	bolt, err := boltstore.Open(dir)
	if err != nil {
		return nil, err
	}
	defer bolt.Close()
	rec := &writeRecorder{Store: bolt, seen: map[store.Key]bool{}}
	ctx := context.Background()
	if _, _, err := seed.Load(ctx, rec, clock.System{}, seed.Demo); err != nil {
		return nil, err
	}
	var items []store.Item
	for _, k := range rec.keys {
		it, err := bolt.Get(ctx, k)
		switch {
		case errors.Is(err, store.ErrNotFound): // written, then deleted
		case err != nil:
			return nil, err
		default:
			items = append(items, it)
		}
	}
	return items, nil
}

// writeRecorder notes, in order, every key a successful write touched.
type writeRecorder struct {
	store.Store
	keys []store.Key
	seen map[store.Key]bool
}

func (r *writeRecorder) note(k store.Key) {
	if !r.seen[k] {
		r.seen[k] = true
		r.keys = append(r.keys, k)
	}
}

func (r *writeRecorder) Transact(ctx context.Context, ops ...store.Op) error {
	err := r.Store.Transact(ctx, ops...)
	if err == nil {
		for i := range ops {
			r.note(ops[i].TargetKey())
		}
	}
	return err
}

func (r *writeRecorder) Add(ctx context.Context, k store.Key, c store.Cond, deltas map[string]int64) (store.Item, error) {
	it, err := r.Store.Add(ctx, k, c, deltas)
	if err == nil {
		r.note(k)
	}
	return it, err
}
