// Package idempotency makes a client's retry of a write safe: a request
// carrying an Idempotency-Key is done at most once per app and key, and a
// repeat within 24 hours gets the first answer again.
//
// Three steps, each one store write:
//
//  1. Begin claims the key (an item, IfAbsent) before the handler runs, or
//     finds it: the kept answer to replay, 422 for another request under
//     the same key, 409 while the first is still being processed.
//  2. Every transaction the request commits carries one more op, an Add
//     on the claim (the store Wrap returns): the change and the claim's commit
//     count are applied together or not at all. A change that committed
//     is therefore never done again, even when its answer was lost (a
//     timeout after the commit, a function cut off).
//  3. Finish keeps the answer with the key, or, when the answer is a
//     fault (5xx) and nothing committed, releases the key so that the
//     retry runs afresh (Delete IfVersion: it fails if a commit counted).
//
// The answer cannot join the change's own transaction: the handler writes
// it after the operation returns. What steps 2 and 3 leave between them is
// a committed change whose answer was not kept; a repeat then gets 409
// saying so, never a second change.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/textproto"
	"strconv"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/store"
)

// Header is the request header carrying the key, and ReplayedHeader the
// answer header marking a kept answer given again.
const (
	Header         = "Idempotency-Key"
	ReplayedHeader = "Idempotent-Replayed"
)

// MaxKey is the longest key taken, in bytes.
const MaxKey = 255

// TTL is how long a key and its answer are kept (Stripe's 24 hours).
const TTL = 24 * time.Hour

// Lease is how long a claim holds its key against repeats (409, with
// Retry-After) before a repeat whose claim found nothing committed may take
// it over: twice the longest a request runs (API Gateway ends them at
// 30 s), so a request still running never loses its key.
const Lease = time.Minute

// MaxAnswer is the largest answer body kept, under DynamoDB's 400 KB
// item limit with room for the rest of the item.
const MaxAnswer = 300 << 10

// Answer is a kept answer.
type Answer struct {
	Status int                 `json:"status"`
	Header map[string][]string `json:"header,omitempty"`
	Body   []byte              `json:"body,omitempty"`
}

// Claim is a request's hold on its key.
type Claim struct {
	key     store.Key
	fp      string
	version int64
	lease   int64
}

// States of a key's item.
const (
	processing = "processing" // claimed; the request runs (or ran and was cut off)
	done       = "done"       // the answer is kept
	lost       = "lost"       // the change committed, its answer was not kept
)

type record struct {
	Fingerprint string  `json:"fp"`
	State       string  `json:"state"`
	LeaseUntil  int64   `json:"lease,omitempty"` // unix seconds
	Answer      *Answer `json:"answer,omitempty"`
}

const commitsNum = "commits"

// Key returns the item key of an app's key: one partition per key, so
// that keys never share a hot partition.
func Key(appID int64, key string) store.Key {
	return store.Key{PK: "idem#" + strconv.FormatInt(appID, 10) + "#" + key, SK: "idem"}
}

// CheckKey refuses a key no client should send: empty, longer than
// MaxKey, or with a character outside printable ASCII.
func CheckKey(key string) error {
	msg := ""
	switch {
	case key == "":
		msg = "must not be empty"
	case len(key) > MaxKey:
		msg = "is too long (maximum is " + strconv.Itoa(MaxKey) + " characters)"
	default:
		for i := 0; i < len(key); i++ {
			if key[i] < 0x20 || key[i] > 0x7e {
				msg = "must be printable ASCII"
				break
			}
		}
	}
	if msg != "" {
		return admin.BadParam(Header, msg)
	}
	return nil
}

// Fingerprint identifies a request: its method, path and query, and body.
// A JSON body counts by what it says, not how it is spelled: a client that
// serializes the same object with its keys in another order, or other
// white space, sends the same request.
func Fingerprint(method, target string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(method + " " + target + "\n"))
	h.Write(canonicalJSON(body))
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalJSON is body re-encoded with sorted keys and no white space
// (numbers as written), or body itself when it is not one JSON document.
func canonicalJSON(body []byte) []byte {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return body
	}
	out, err := json.Marshal(v)
	if err != nil {
		return body
	}
	return out
}

var (
	// ErrInProgress answers a repeat while the first request runs.
	ErrInProgress = &admin.Error{Code: admin.ECONFLICT, Message: "A request with this Idempotency-Key is still being processed; retry it later"}
	// ErrAnswerLost answers a repeat of a request whose change committed
	// but whose answer could not be kept.
	ErrAnswerLost   = &admin.Error{Code: admin.ECONFLICT, Message: "The request with this Idempotency-Key was applied, but its answer could not be kept; read the resource to see the change"}
	errOtherRequest = admin.Invalid(Header, "was already used for a different request")
)

// Keeper keeps keys in a store.
type Keeper struct {
	st  store.Store
	clk clock.Clock // leases and TTLs
}

// NewKeeper returns a Keeper writing to st, its leases and TTLs by clk. Its
// writes carry no claim of their own: the context a request's claim travels
// in (WithClaim) is the handler's, not the one Begin and Finish are called
// with.
func NewKeeper(st store.Store, clk clock.Clock) *Keeper { return &Keeper{st, clk} }

// Begin claims key for a request, or returns the answer kept for an
// earlier one with the same fingerprint (replay non-nil).
func (k *Keeper) Begin(ctx context.Context, appID int64, key, fp string) (c *Claim, replay *Answer, err error) {
	now := k.clk.Now()
	c = &Claim{key: Key(appID, key), fp: fp, version: 1, lease: now.Add(Lease).Unix()}
	item := func(version int64) store.Item {
		return store.Item{PK: c.key.PK, SK: c.key.SK, Version: version, ExpiresAt: now.Add(TTL).Unix(),
			Data: encode(record{Fingerprint: fp, State: processing, LeaseUntil: c.lease})}
	}
	for attempt := 0; attempt < 3; attempt++ {
		// A claim whose write timed out after it was applied is resolved
		// by the store (store.Retrying, under the write's request token),
		// so a client never meets its own claim as another request.
		err = k.st.Transact(ctx, store.Put(item(1), store.IfAbsent, 0))
		if !errors.Is(err, store.ErrConditionFailed) {
			if err != nil {
				return nil, nil, err
			}
			return c, nil, nil
		}
		it, err := k.st.Get(ctx, c.key)
		if errors.Is(err, store.ErrNotFound) {
			continue // it expired or was released meanwhile: claim again
		}
		if err != nil {
			return nil, nil, err
		}
		var r record
		if err := json.Unmarshal(it.Data, &r); err != nil {
			return nil, nil, err
		}
		switch {
		case r.Fingerprint != fp:
			return nil, nil, errOtherRequest
		case r.State == done:
			return nil, r.Answer, nil
		case r.State == lost:
			return nil, nil, ErrAnswerLost
		case now.Unix() < r.LeaseUntil:
			return nil, nil, &InProgressError{RetryAfter: r.LeaseUntil - now.Unix()}
		case it.Nums[commitsNum] > 0:
			return nil, nil, ErrAnswerLost // cut off after its change committed
		}
		// Cut off before anything committed: take the key over.
		c.version = it.Version + 1
		err = k.st.Transact(ctx, store.Put(item(c.version), store.IfVersion, it.Version))
		if err == nil {
			return c, nil, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return nil, nil, err
		}
	}
	return nil, nil, &InProgressError{RetryAfter: 1}
}

// InProgressError answers a repeat while the first request holds the key:
// 409, and Retry-After the seconds left of its lease.
type InProgressError struct{ RetryAfter int64 }

func (e *InProgressError) Error() string { return ErrInProgress.Message }
func (e *InProgressError) Unwrap() error { return ErrInProgress }

// Keeps says whether an answer of status is kept for repeats: every answer
// but a fault (5xx) and the passing refusals (409, 429), which a retry
// may not meet again.
func Keeps(status int) bool {
	return status < 500 && status != 409 && status != 429
}

// Finish keeps a (Keeps) answer with the claim, or releases the claim so
// that a retry runs afresh; a change that committed keeps the key either
// way. It is best effort: what it cannot write, the lease settles.
func (k *Keeper) Finish(ctx context.Context, c *Claim, a Answer) error {
	if !Keeps(a.Status) {
		err := k.persist(ctx, store.Delete(c.key, store.IfVersion, c.version))
		if !errors.Is(err, store.ErrConditionFailed) {
			return err
		}
		// Its change committed: a repeat must not do it again.
		return k.write(ctx, c, record{Fingerprint: c.fp, State: lost})
	}
	if len(a.Body) > MaxAnswer {
		return k.write(ctx, c, record{Fingerprint: c.fp, State: lost})
	}
	return k.write(ctx, c, record{Fingerprint: c.fp, State: done, Answer: &a})
}

// keepRounds is how many times Finish's write or release goes through the
// store's own retries (store.Retrying: store.RetryAttempts each): a claim
// neither answered nor released stays "processing" for its Lease, and every
// retry of the client meets 409 meanwhile, so it is worth more tries than a
// request's own write. Every round sends the same op under one request
// token, so a round resolves an earlier round's uncertain commit rather
// than applying the op again (a second release could delete a newer
// request's claim of the key).
const keepRounds = 3

func (k *Keeper) write(ctx context.Context, c *Claim, r record) error {
	now := k.clk.Now()
	it := store.Item{PK: c.key.PK, SK: c.key.SK, Version: c.version + 1, ExpiresAt: now.Add(TTL).Unix(), Data: encode(r)}
	return k.persist(ctx, store.Put(it, store.IfPresent, 0))
}

// persist commits op, keepRounds times at most while the store is
// unavailable.
func (k *Keeper) persist(ctx context.Context, op store.Op) error {
	ctx = store.WithRequestToken(ctx, store.NewRequestToken())
	var err error
	for range keepRounds {
		if err = k.st.Transact(ctx, op); !errors.Is(err, store.ErrUnavailable) || ctx.Err() != nil {
			return err
		}
	}
	return err
}

// KeptHeaders are the answer headers kept with an answer; the others are
// the answering request's own (its id, the call limit).
var KeptHeaders = []string{"Content-Type", "Location", "Link"}

// HeaderOf picks the kept headers of h.
func HeaderOf(h map[string][]string) map[string][]string {
	out := map[string][]string{}
	for _, name := range KeptHeaders {
		if v := h[textproto.CanonicalMIMEHeaderKey(name)]; len(v) > 0 {
			out[name] = v
		}
	}
	return out
}

func encode(r record) []byte {
	b, _ := json.Marshal(r)
	return b
}

// claimCtxKey carries a request's claim: request-scoped data, like the
// request id. The store that counts commits on it (Wrap) is built once per
// process and shared by every request, so the claim cannot be a field of
// it; handing it to every operation instead would widen every signature
// for the few writes made under an Idempotency-Key.
type claimCtxKey struct{}

// WithClaim returns ctx carrying c: the store Wrap returns counts every
// transaction committed with it on c.
func WithClaim(ctx context.Context, c *Claim) context.Context {
	return context.WithValue(ctx, claimCtxKey{}, c)
}

// Wrap returns st with every transaction made under a claim (WithClaim)
// counting itself on the claim in the same transaction.
func Wrap(st store.Store) store.Store { return keyed{st} }

type keyed struct{ store.Store }

func (k keyed) Unwrap() store.Store { return k.Store }

// errClaimGone answers a change whose claim vanished before it committed
// (it outlived its TTL): nothing was applied.
var errClaimGone = &admin.Error{Code: admin.ECONFLICT, Message: "The Idempotency-Key of this request expired while it was processed; retry it"}

func (k keyed) Transact(ctx context.Context, ops ...store.Op) error {
	c, _ := ctx.Value(claimCtxKey{}).(*Claim)
	if c == nil || len(ops) >= store.MaxTransactItems {
		// A transaction of DynamoDB's 100 items cannot carry the count; no
		// operation writes so many under one request (data-model.md).
		return k.Store.Transact(ctx, ops...)
	}
	all := append(ops[:len(ops):len(ops)], store.Add(c.key, store.IfPresent, map[string]int64{commitsNum: 1}))
	err := k.Store.Transact(ctx, all...)
	if store.FailedOn(err, c.key) {
		return errClaimGone
	}
	return err
}
