package boltstore

import (
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"sync"

	"github.com/storeadmin/adminapi/shared/store"
)

// tokens remembers the request tokens of applied writes for
// store.TokenWindow, as DynamoDB remembers a ClientRequestToken: a repeat
// of an applied write succeeds without applying it again, one with other
// ops is store.ErrTokenReused, and one while the first is still being
// applied is unavailable (DynamoDB's TransactionInProgressException). In
// memory: a token outlives no request, and a request no process.
type tokens struct {
	mu      sync.Mutex
	applied map[string]appliedWrite
	order   []string // tokens in the order applied, for pruning
	running map[string]bool
}

type appliedWrite struct {
	sum [sha256.Size]byte
	at  int64 // unix seconds, by the store's clock
}

// begin says what to do with a write under token: run it (run true, and
// end must follow), or answer err (nil: applied before).
func (t *tokens) begin(token string, sum [sha256.Size]byte, now int64) (run bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(t.order) > 0 && now-t.applied[t.order[0]].at > int64(store.TokenWindow.Seconds()) {
		delete(t.applied, t.order[0])
		t.order = t.order[1:]
	}
	if a, ok := t.applied[token]; ok {
		if a.sum != sum {
			return false, store.ErrTokenReused
		}
		return false, nil
	}
	if t.running[token] {
		return false, store.Unavailable("conflict", true, errInProgress)
	}
	if t.running == nil {
		t.running, t.applied = map[string]bool{}, map[string]appliedWrite{}
	}
	t.running[token] = true
	return true, nil
}

// end records the outcome of a write begin let run.
func (t *tokens) end(token string, sum [sha256.Size]byte, now int64, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.running, token)
	if ok {
		t.applied[token] = appliedWrite{sum, now}
		t.order = append(t.order, token)
	}
}

// fingerprint identifies a write's ops, numbers in name order.
func fingerprint(ops []store.Op) [sha256.Size]byte {
	h := sha256.New()
	var b []byte
	nums := func(m map[string]int64) {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		slices.Sort(names)
		b = binary.AppendUvarint(b, uint64(len(names)))
		for _, n := range names {
			b = binary.AppendUvarint(b, uint64(len(n)))
			b = append(b, n...)
			b = binary.AppendVarint(b, m[n])
		}
	}
	for i := range ops {
		op := ops[i]
		b = append(b[:0], byte(op.Kind), byte(op.Cond))
		b = binary.AppendVarint(b, op.Version)
		for _, s := range [...]string{op.Key.PK, op.Key.SK} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		nums(op.Deltas)
		nums(op.Item.Nums)
		op.Item.Nums = nil
		b = append(b, encode(&op.Item)...)
		h.Write(b)
	}
	var sum [sha256.Size]byte
	h.Sum(sum[:0])
	return sum
}
