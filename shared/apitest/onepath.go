package apitest

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/store"
)

// One write path (docs/architecture.md): a request commits its record, its
// guards and its exact counters, and nothing else; what follows from the
// change (index and filter entries, counts, events, notifications, the
// clean-ups of a deleted owner) is the change feed's. Every Env checks it
// on every write a request makes through its handler, for every resource
// and every test that drives one: a write to a partition that is neither a
// deriving record's (api.Derivers), a removal's tomb, nor listed below
// fails the test. A new resource therefore states here what its requests
// write, and why it is not derived.

// requestPartitions are what a request may write besides the records of
// api.Derivers and their tombs, by partition shape (digits as N, an exact
// filter's value as *), with the reason.
var requestPartitions = map[string]string{
	// Records whose changes derive nothing: no entries, counts, events or
	// notifications follow from them.
	"app":                 "the app's record: its grants and uninstall",
	"token":               "a token's hash: auth reads it",
	"secret":              "the shop's secrets (the OAuth token key): written once",
	"theme":               "a theme's record",
	"themeset":            "the shop's theme roles: the guard of one main theme",
	"asset#N":             "a theme file's record",
	"assetblob#N#N":       "a theme file's content chunks, by hash, with its record",
	"file#N":              "an image's file chunks, with the record showing it",
	"charge":              "a charge's record",
	"charge#app#N":        "a charge's record, by app",
	"charge_active":       "the guard of one active recurring charge an app",
	"charge_page":         "a charge's confirmation link",
	"fulfillment_service": "a fulfillment service's record",
	"providerjob":         "a provider poll the request asks for: a job, not derived state",
	"membershipjob":       "a smart collection's membership job: its own queue",
	"order":               "an order's record (its financial status with its transaction)",
	"ordermoney":          "an order's ledger: the exact captured and refunded sums a transaction checks",
	"deadletter#N":        "a webhook delivery's dead letter, retried by its app",
	"variantorder":        "the exact positions of a product's variants",
	"variantoptions#N":    "the guard of a variant's unique options",
	"customerdefault":     "the guard of one default address a customer",
	"webhook#clock":       "the subscription clock a webhook takes a tick of before its write (outbox.Tick)",
	// Guards: uniqueness and limits, exact in the request.
	"handle#article#N":                  "an article's handle, unique in its blog",
	"handle#collection":                 "a collection's handle",
	"handle#fulfillment_service":        "a fulfillment service's handle",
	"handle#page":                       "a page's handle",
	"redirect#path":                     "a redirect's path, unique",
	"country#code":                      "a country's code, unique",
	"collect#guard#N":                   "one collect per collection and product",
	"webhook#guard#N":                   "one webhook per app, topic and address",
	"metafield#key#article#N":           "a metafield's namespace and key, unique per owner",
	"metafield#key#blog#N":              "a metafield's namespace and key, unique per owner",
	"metafield#key#custom_collection#N": "a metafield's namespace and key, unique per owner",
	"metafield#key#customer#N":          "a metafield's namespace and key, unique per owner",
	"metafield#key#order#N":             "a metafield's namespace and key, unique per owner",
	"metafield#key#page#N":              "a metafield's namespace and key, unique per owner",
	"metafield#key#product#N":           "a metafield's namespace and key, unique per owner",
	"metafield#key#shop#N":              "a metafield's namespace and key, unique per owner",
	"metafield#key#smart_collection#N":  "a metafield's namespace and key, unique per owner",
	"metafield#key#variant#N":           "a metafield's namespace and key, unique per owner",
	"smart_rules":                       "a smart collection's rules, with its record",
}

// notYetOnFeed are the derived items resources still commit in their
// requests: the issue "one write path for every resource" moves each onto
// the change feed and removes its lines. Nothing may be added here.
//
// A smart collection's membership (smart_member#N, smart_product) is
// recomputed after its commit, by the request and its membershipjob, in as
// many transactions as the catalog takes: more than one derivation can
// hold, so it needs the feed to run jobs before it can move.
var notYetOnFeed = map[string]string{
	"smart_member#N":            "smart collections' membership",
	"smart_product":             "smart collections' membership",
	"customer#N#address":        "addresses",
	"count#customer#N#address":  "addresses",
	"customer":                  "addresses (customer/update)",
	"order#N#transaction":       "transactions",
	"count#order#N#transaction": "transactions",
	"variant":                   "variants",
	"count#variant":             "variants",
	"event#staged":              "transactions, variants, uninstalls, installs",
	"notification":              "addresses, transactions, variants, uninstalls",
	"outbox":                    "addresses, transactions, variants, uninstalls",
}

var (
	digits = regexp.MustCompile(`[0-9a-f]{12,}|[0-9]+`) // ids, and content hashes
	value  = regexp.MustCompile(`=.*$`)
)

// shape names a partition without its ids, hashes and an exact filter's
// value.
func shape(pk string) string { return digits.ReplaceAllString(value.ReplaceAllString(pk, "=*"), "N") }

// onePath checks a request's writes (see above).
type onePath struct {
	t        testing.TB
	deriving store.Derivers
	mu       sync.Mutex
	seen     map[string]bool // shapes already reported
}

func newOnePath(t testing.TB) *onePath {
	return &onePath{t: t, deriving: api.Derivers(), seen: map[string]bool{}}
}

// allowed says whether a request may write an item of partition pk.
func (o *onePath) allowed(pk string) bool {
	if o.deriving.Derives(strings.TrimPrefix(pk, "tomb#")) || strings.HasPrefix(pk, "idem#") { // an Idempotency-Key's claim
		return true
	}
	s := shape(pk)
	_, ok := requestPartitions[s]
	_, legacy := notYetOnFeed[s]
	return ok || legacy
}

func (o *onePath) check(ctx context.Context, ops []store.Op) {
	if admin.AppFrom(ctx) == nil { // a job's, the seed's, a test's own
		return
	}
	for i := range ops {
		pk := ops[i].TargetKey().PK
		if o.allowed(pk) {
			continue
		}
		o.mu.Lock()
		first := !o.seen[shape(pk)]
		o.seen[shape(pk)] = true
		o.mu.Unlock()
		if first {
			o.t.Errorf("one write path: a request wrote an item of %q, which is neither a deriving record's (api.Derivers) nor listed in apitest's requestPartitions: derive it from the change feed", pk)
		}
	}
}

// requestWrites is the store as requests see it, above the change feed:
// it sees what a request commits, not what the feed derives.
type requestWrites struct {
	store.Store
	path *onePath
}

func (r *requestWrites) Unwrap() store.Store { return r.Store }

func (r *requestWrites) Transact(ctx context.Context, ops ...store.Op) error {
	r.path.check(ctx, ops)
	return r.Store.Transact(ctx, ops...)
}

func (r *requestWrites) Add(ctx context.Context, k store.Key, c store.Cond, deltas map[string]int64) (store.Item, error) {
	r.path.check(ctx, []store.Op{store.Add(k, c, deltas)})
	return r.Store.Add(ctx, k, c, deltas)
}

// checked wraps d's store in the check, once.
func checked(t testing.TB, st store.Store) store.Store {
	if _, ok := st.(*requestWrites); ok {
		return st
	}
	return &requestWrites{Store: st, path: newOnePath(t)}
}
