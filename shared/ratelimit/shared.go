package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Key is an app's bucket item: Nums["tat"] is the TAT in Unix microseconds.
func Key(appID int64) store.Key { return store.Key{PK: "ratelimit", SK: records.IDSK(appID)} }

// Shared keeps each app's TAT in the store. A call costs one conditional
// write when this process saw the bucket last (the TAT and the item's
// version are cached); a refusal decided from the cache costs nothing, since
// other writers only ever move a TAT forward, which refuses more, not less.
// When another process wrote in between, the write fails, and the call
// reads the item and tries again.
type Shared struct {
	Store store.Store
	Now   func() time.Time // the service's clock; required

	mu    sync.Mutex
	cache map[int64]cell
}

type cell struct {
	tat     time.Time
	version int64 // 0: no item yet
}

// NewShared returns the store-backed limiter, deciding by now.
func NewShared(st store.Store, now func() time.Time) *Shared { return &Shared{Store: st, Now: now} }

// Take spends one call of app's bucket.
func (s *Shared) Take(ctx context.Context, app *admin.App) (Decision, error) {
	plan := app.Plan()
	c, ok := s.cached(app.ID)
	var d Decision
	err := records.Retry(ctx, func() (bool, error) {
		if !ok {
			var err error
			if c, err = s.read(ctx, app.ID); err != nil {
				return false, err
			}
		}
		var tat time.Time
		if tat, d = decide(c.tat, s.Now(), plan); !d.Allowed {
			return false, nil
		}
		k := Key(app.ID)
		it := store.Item{PK: k.PK, SK: k.SK, Version: c.version + 1, Nums: map[string]int64{"tat": tat.UnixMicro()}}
		cond := store.IfVersion
		if c.version == 0 {
			cond = store.IfAbsent
		}
		err := s.Store.Transact(ctx, store.Put(it, cond, c.version))
		if err == nil {
			s.remember(app.ID, cell{tat, it.Version})
		}
		ok = false // lost to another writer: read the bucket again
		return errors.Is(err, store.ErrConditionFailed), err
	})
	if err != nil {
		return Decision{}, fmt.Errorf("ratelimit: app %d: %w", app.ID, err)
	}
	return d, nil
}

func (s *Shared) read(ctx context.Context, appID int64) (cell, error) {
	it, err := s.Store.Get(ctx, Key(appID))
	if errors.Is(err, store.ErrNotFound) {
		return cell{}, nil
	}
	if err != nil {
		return cell{}, err
	}
	return cell{time.UnixMicro(it.Nums["tat"]), it.Version}, nil
}

func (s *Shared) cached(appID int64) (cell, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.cache[appID]
	return c, ok
}

func (s *Shared) remember(appID int64, c cell) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cache == nil {
		s.cache = map[int64]cell{}
	}
	if old, ok := s.cache[appID]; !ok || c.version > old.version {
		s.cache[appID] = c
	}
}
