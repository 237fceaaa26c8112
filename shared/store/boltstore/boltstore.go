// Package boltstore is the embedded store: one bbolt file, every transaction
// fsynced on commit, so an acknowledged write survives kill -9. bbolt has a
// single writer, which makes every Transact trivially atomic and isolated;
// concurrent writes share commits (commit.go), so their fsyncs do not queue
// up one after another.
package boltstore

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/storeadmin/adminapi/shared/store"
)

var errInProgress = errors.New("boltstore: a write under this request token is being applied")

var (
	tableBucket = []byte("table")
	indexBucket = map[string][]byte{store.GSI1: []byte("gsi1"), store.GSI2: []byte("gsi2")}
)

const sep = "\x00"

// Store is the embedded implementation of store.Store.
type Store struct {
	db      *bolt.DB
	now     func() time.Time
	commits committer
	tokens  tokens
	writes  atomic.Uint64
}

// Writes counts the write calls that have returned (committed or not): a
// reader that loads it before reading an item knows the item unchanged
// while it stays the same (the file is this process's alone). auth keeps
// tokens' apps by it, so that a revocation holds at once with no read.
func (s *Store) Writes() uint64 { return s.writes.Load() }

var _ store.Store = (*Store)(nil)

// Open opens (creating) the store file store.db under dir.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	db, err := bolt.Open(filepath.Join(dir, "store.db"), 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("boltstore: open %s: %w", dir, err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		if _, err := tx.CreateBucketIfNotExists(tableBucket); err != nil {
			return err
		}
		for _, b := range indexBucket {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Store{db: db, now: time.Now}, nil
}

func (s *Store) Close() error { return s.db.Close() }

// UseClock makes now the time items expire by (store.Local).
func (s *Store) UseClock(now func() time.Time) { s.now = now }

// Wipe deletes every item and index entry (store.Local): the buckets are
// emptied in one transaction.
func (s *Store) Wipe(ctx context.Context) error {
	defer s.writes.Add(1)
	return s.db.Update(func(tx *bolt.Tx) error {
		names := [][]byte{tableBucket}
		for _, b := range indexBucket {
			names = append(names, b)
		}
		for _, name := range names {
			if err := tx.DeleteBucket(name); err != nil {
				return err
			}
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
		}
		return nil
	})
}

func tableKey(k store.Key) []byte { return []byte(k.PK + sep + k.SK) }

func indexKey(pk, sk string, k store.Key) []byte {
	return []byte(pk + sep + sk + sep + k.PK + sep + k.SK)
}

func (s *Store) live(it *store.Item) bool {
	return it.ExpiresAt == 0 || it.ExpiresAt > s.now().Unix()
}

func (s *Store) Get(ctx context.Context, k store.Key) (store.Item, error) {
	var it store.Item
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(tableBucket).Get(tableKey(k))
		if v == nil {
			return store.ErrNotFound
		}
		var err error
		it, err = decode(v)
		if err == nil && !s.live(&it) {
			return store.ErrNotFound
		}
		return err
	})
	return it, err
}

func (s *Store) Query(ctx context.Context, q store.Query) ([]store.Item, string, error) {
	var items []store.Item
	var next string
	err := s.db.View(func(tx *bolt.Tx) error {
		var err error
		items, next, err = s.scan(tx, q, false, nil)
		return err
	})
	return items, next, err
}

func (s *Store) Count(ctx context.Context, q store.Query) (int, error) {
	n := 0
	q.Limit, q.Cursor = 0, ""
	err := s.db.View(func(tx *bolt.Tx) error {
		_, _, err := s.scan(tx, q, true, &n)
		return err
	})
	return n, err
}

// scan walks one partition in order. Index entries are keyed
// idxPK\0idxSK\0PK\0SK and resolved to their table item.
func (s *Store) scan(tx *bolt.Tx, q store.Query, countOnly bool, count *int) ([]store.Item, string, error) {
	bucket := tx.Bucket(tableBucket)
	if q.Index != store.Table {
		name, ok := indexBucket[q.Index]
		if !ok {
			return nil, "", fmt.Errorf("boltstore: unknown index %q", q.Index)
		}
		bucket = tx.Bucket(name)
	}
	table := tx.Bucket(tableBucket)
	part := []byte(q.PK + sep)
	prefix := append(append([]byte{}, part...), q.SKPrefix...)
	// skBytes extracts the sort key from a bucket key.
	skOf := func(k []byte) string {
		rest := k[len(part):]
		if q.Index != store.Table {
			if i := bytes.Index(rest, []byte(sep)); i >= 0 {
				rest = rest[:i]
			}
		}
		return string(rest)
	}
	inRange := func(k []byte) bool {
		if !bytes.HasPrefix(k, prefix) {
			return false
		}
		sk := skOf(k)
		if q.After != "" && sk <= q.After {
			return false
		}
		if q.Before != "" && sk >= q.Before {
			return false
		}
		return true
	}

	c := bucket.Cursor()
	var k, v []byte
	var cursor []byte
	if q.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		if err != nil {
			return nil, "", fmt.Errorf("boltstore: bad cursor")
		}
		cursor = b
	}
	switch {
	case !q.Desc && cursor != nil:
		k, v = c.Seek(cursor)
		if bytes.Equal(k, cursor) {
			k, v = c.Next()
		}
	case !q.Desc:
		start := prefix
		if q.After != "" {
			// After may lie below the prefix range: start at the greater.
			if a := append(append([]byte{}, part...), q.After...); bytes.Compare(a, start) > 0 {
				start = a
			}
		}
		k, v = c.Seek(start)
	case cursor != nil:
		if k, _ = c.Seek(cursor); k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	default:
		// Seek past the last key that can match, then step back.
		end := append(append([]byte{}, prefix...), 0xff, 0xff, 0xff, 0xff)
		if q.Before != "" {
			// Before may lie above the prefix range: end at the lesser.
			if b := append(append([]byte{}, part...), q.Before...); bytes.Compare(b, end) < 0 {
				end = b
			}
		}
		k, _ = c.Seek(end)
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
	}
	step := c.Next
	if q.Desc {
		step = c.Prev
	}

	var items []store.Item
	for ; k != nil; k, v = step() {
		if !bytes.HasPrefix(k, prefix) {
			break
		}
		if !inRange(k) {
			// Outside the exclusive bounds: before the range keep going, after it stop.
			sk := skOf(k)
			if (!q.Desc && q.After != "" && sk <= q.After) || (q.Desc && q.Before != "" && sk >= q.Before) {
				continue
			}
			break
		}
		raw := v
		if q.Index != store.Table {
			rest := k[len(part):]
			i := bytes.Index(rest, []byte(sep))
			raw = table.Get(rest[i+1:])
			if raw == nil {
				continue
			}
		}
		it, err := decode(raw)
		if err != nil {
			return nil, "", err
		}
		if !s.live(&it) {
			continue
		}
		if countOnly {
			*count++
			continue
		}
		items = append(items, it)
		if q.Limit > 0 && len(items) == q.Limit {
			nk, _ := step()
			if nk != nil && bytes.HasPrefix(nk, prefix) {
				return items, base64.RawURLEncoding.EncodeToString(k), nil
			}
			return items, "", nil
		}
	}
	return items, "", nil
}

func (s *Store) Transact(ctx context.Context, ops ...store.Op) error {
	if err := store.Validate(ops); err != nil {
		return err
	}
	_, err := s.once(ctx, ops, func() error {
		return s.update(func(tx *bolt.Tx) (error, error) {
			return s.transact(tx, ops)
		})
	})
	return err
}

func (s *Store) Add(ctx context.Context, k store.Key, c store.Cond, deltas map[string]int64) (store.Item, error) {
	var out store.Item
	op := store.Add(k, c, deltas)
	if err := store.Validate([]store.Op{op}); err != nil {
		return out, err
	}
	ran, err := s.once(ctx, []store.Op{op}, func() error {
		return s.update(func(tx *bolt.Tx) (error, error) {
			if res, err := s.transact(tx, []store.Op{op}); res != nil || err != nil {
				return res, err
			}
			var err error
			out, err = decode(tx.Bucket(tableBucket).Get(tableKey(k)))
			return nil, err
		})
	})
	if err == nil && !ran {
		// Applied before under this token: the item as it is now, as
		// dynamostore answers it.
		return s.Get(ctx, k)
	}
	if errors.Is(err, store.ErrConditionFailed) {
		return out, store.ErrConditionFailed
	}
	return out, err
}

// once runs a write at most once per request token (store.WithRequestToken);
// ran says whether it ran now.
func (s *Store) once(ctx context.Context, ops []store.Op, write func() error) (ran bool, err error) {
	token := store.RequestToken(ctx)
	if token == "" {
		return true, write()
	}
	sum := fingerprint(ops)
	run, err := s.tokens.begin(token, sum, s.now().Unix())
	if !run {
		return false, err
	}
	err = write()
	s.tokens.end(token, sum, s.now().Unix(), err == nil)
	return true, err
}

// transact applies ops in tx: first every condition is checked, and only
// when all hold are the ops written. So a failed condition (res) leaves tx
// as it was, and the transactions sharing a commit with this one are not
// affected; err is a failure of bolt itself, after which tx must be rolled
// back.
func (s *Store) transact(tx *bolt.Tx, ops []store.Op) (res, err error) {
	olds := make([]oldItem, len(ops))
	for i := range ops {
		old, err := s.check(tx, &ops[i])
		if err != nil {
			if _, ok := err.(*store.ConditionError); ok {
				return err, nil
			}
			return nil, err
		}
		olds[i] = old
	}
	for i := range ops {
		if err := s.write(tx, &ops[i], olds[i]); err != nil {
			return nil, err
		}
	}
	return nil, nil
}

// oldItem is what an op's key holds before the op: a live item, or an
// expired one that the write clears (readers already hide it).
type oldItem struct {
	live, expired *store.Item
}

// check reads the op's item and checks the op's condition on it, writing
// nothing.
func (s *Store) check(tx *bolt.Tx, op *store.Op) (oldItem, error) {
	var old oldItem
	if raw := tx.Bucket(tableBucket).Get(tableKey(op.TargetKey())); raw != nil {
		it, err := decode(raw)
		if err != nil {
			return old, err
		}
		if s.live(&it) {
			old.live = &it
		} else {
			old.expired = &it
		}
	}
	ok := true
	switch op.Cond {
	case store.IfAbsent:
		ok = old.live == nil
	case store.IfPresent:
		ok = old.live != nil
	case store.IfVersion:
		ok = old.live != nil && old.live.Version == op.Version
	}
	if !ok {
		return old, &store.ConditionError{Key: op.TargetKey()}
	}
	return old, nil
}

// write applies an op whose condition check returned old.
func (s *Store) write(tx *bolt.Tx, op *store.Op, old oldItem) error {
	table := tx.Bucket(tableBucket)
	k := op.TargetKey()
	tk := tableKey(k)
	if old.expired != nil {
		if err := s.unindex(tx, old.expired); err != nil {
			return err
		}
	}
	switch op.Kind {
	case store.OpCheck:
		return nil
	case store.OpDelete:
		if old.live != nil {
			if err := s.unindex(tx, old.live); err != nil {
				return err
			}
		}
		return table.Delete(tk) // also clears an expired item
	case store.OpPut:
		if old.live != nil {
			if err := s.unindex(tx, old.live); err != nil {
				return err
			}
		}
		return s.put(tx, &op.Item)
	case store.OpAdd:
		it := store.Item{PK: k.PK, SK: k.SK}
		if old.live != nil {
			it = *old.live
			if err := s.unindex(tx, old.live); err != nil {
				return err
			}
		}
		nums := make(map[string]int64, len(it.Nums)+len(op.Deltas))
		for n, v := range it.Nums {
			nums[n] = v
		}
		for n, d := range op.Deltas {
			nums[n] += d
		}
		it.Nums = nums
		it.Version++
		return s.put(tx, &it)
	}
	return fmt.Errorf("boltstore: unknown op kind %d", op.Kind)
}

func (s *Store) put(tx *bolt.Tx, it *store.Item) error {
	if err := tx.Bucket(tableBucket).Put(tableKey(it.Key()), encode(it)); err != nil {
		return err
	}
	if it.GSI1PK != "" {
		if err := tx.Bucket(indexBucket[store.GSI1]).Put(indexKey(it.GSI1PK, it.GSI1SK, it.Key()), nil); err != nil {
			return err
		}
	}
	if it.GSI2PK != "" {
		if err := tx.Bucket(indexBucket[store.GSI2]).Put(indexKey(it.GSI2PK, it.GSI2SK, it.Key()), nil); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) unindex(tx *bolt.Tx, it *store.Item) error {
	if it.GSI1PK != "" {
		if err := tx.Bucket(indexBucket[store.GSI1]).Delete(indexKey(it.GSI1PK, it.GSI1SK, it.Key())); err != nil {
			return err
		}
	}
	if it.GSI2PK != "" {
		if err := tx.Bucket(indexBucket[store.GSI2]).Delete(indexKey(it.GSI2PK, it.GSI2SK, it.Key())); err != nil {
			return err
		}
	}
	return nil
}
