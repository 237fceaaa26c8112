package idempotency

import (
	"context"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/store"
)

func TestCheckKey(t *testing.T) {
	for key, ok := range map[string]bool{
		"5d1c6a0e-8f7b-4c1e-9a53-0e4b8f6f6a10": true,
		"a b~!":                                true,
		strings.Repeat("k", MaxKey):            true,
		"":                                     false,
		strings.Repeat("k", MaxKey+1):          false,
		"tab\there":                            false,
		"del\x7f":                              false,
		"café":                                 false,
	} {
		if err := CheckKey(key); (err == nil) != ok {
			t.Errorf("CheckKey(%q) = %v", key, err)
		}
	}
}

// A refusal is as final as a success; a fault, a conflict of the moment
// and a full bucket are not.
func TestKeeps(t *testing.T) {
	for status, want := range map[int]bool{200: true, 201: true, 400: true, 404: true, 422: true, 409: false, 429: false, 500: false, 503: false} {
		if Keeps(status) != want {
			t.Errorf("Keeps(%d) = %v", status, !want)
		}
	}
}

// The fingerprint tells requests apart by method, target and body.
func TestFingerprint(t *testing.T) {
	base := Fingerprint("POST", "/web/redirects", []byte(`{"a":1}`))
	for _, other := range []string{
		Fingerprint("PUT", "/web/redirects", []byte(`{"a":1}`)),
		Fingerprint("POST", "/web/redirects?x=1", []byte(`{"a":1}`)),
		Fingerprint("POST", "/web/redirects", []byte(`{"a":2}`)),
		Fingerprint("POST", "/web/redirects\n", []byte(`{"a":1}`)[1:]),
	} {
		if other == base {
			t.Errorf("two requests share fingerprint %s", base)
		}
	}
	if Fingerprint("POST", "/web/redirects", []byte(`{"a":1}`)) != base {
		t.Error("the same request has two fingerprints")
	}
}

// tokens records the request token of every transaction and fails each
// as unavailable, its outcome unknown.
type tokens struct {
	store.Store
	seen []string
}

func (s *tokens) Transact(ctx context.Context, _ ...store.Op) error {
	s.seen = append(s.seen, store.RequestToken(ctx))
	return &store.UnavailableError{Reason: "test", MayHaveCommitted: true}
}

// Every round of a kept answer's write goes under one request token: a
// round resolves an earlier round's uncertain commit, never applies the
// write again.
func TestPersistRoundsShareOneToken(t *testing.T) {
	st := &tokens{}
	k := NewKeeper(st, clock.System{})
	if err := k.persist(context.Background(), store.Delete(store.Key{PK: "idem#1#k", SK: "idem"}, store.IfVersion, 1)); err == nil {
		t.Fatal("a write that never succeeded reported success")
	}
	if len(st.seen) != keepRounds {
		t.Fatalf("%d rounds, want %d", len(st.seen), keepRounds)
	}
	for _, tok := range st.seen {
		if tok == "" || tok != st.seen[0] {
			t.Fatalf("tokens of the rounds: %q", st.seen)
		}
	}
}
