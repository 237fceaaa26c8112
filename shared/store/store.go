// Package store is the narrow storage interface every resource talks to. It
// models DynamoDB single-table semantics (partition and sort key, two
// overloaded secondary indexes, conditional writes, transactions, atomic
// counters) so that the embedded store (boltstore) and DynamoDB
// (dynamostore) behave the same; storetest holds the suite both pass.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Key addresses one item.
type Key struct{ PK, SK string }

// Item is one stored record. Data is the record's JSON; Nums are numeric
// attributes kept beside it so that they can be changed atomically (Add).
type Item struct {
	PK, SK         string
	GSI1PK, GSI1SK string // optional secondary access path ("" = not indexed)
	GSI2PK, GSI2SK string
	// Version is written as given; writers pass old+1 and guard with IfVersion.
	Version int64
	Nums    map[string]int64
	Data    []byte
	// ExpiresAt (unix seconds, 0 = never) lets the store drop the item later
	// (DynamoDB TTL); readers must not rely on the exact moment.
	ExpiresAt int64
	// Stamp holds what the request that wrote a record stamped for the
	// change feed beside its numbers (ChangeNum...): facts as of the
	// commit that the derived items show, such as the author's name and
	// the shop's time zone (records.Stamp), as JSON; never returned.
	Stamp []byte
}

// Key returns the item's key.
func (it *Item) Key() Key { return Key{it.PK, it.SK} }

// Index names.
const (
	Table = ""
	GSI1  = "GSI1"
	GSI2  = "GSI2"
)

// Cond is a write condition on the item an Op targets.
type Cond int

const (
	Always    Cond = iota
	IfAbsent       // the item must not exist
	IfPresent      // the item must exist
	IfVersion      // the item must exist with Version == Op.Version
)

// OpKind says what an Op does.
type OpKind int

const (
	OpPut    OpKind = iota // write Item whole
	OpDelete               // delete Key
	OpAdd                  // add Deltas to Nums of Key (creating it if absent, unless Cond says otherwise) and bump Version
	OpCheck                // only check Cond on Key
)

// Op is one write of a transaction.
type Op struct {
	Kind    OpKind
	Item    Item // OpPut
	Key     Key  // OpDelete, OpAdd, OpCheck
	Cond    Cond
	Version int64            // for IfVersion
	Deltas  map[string]int64 // OpAdd
}

// Put, Delete, Add and Check build Ops.
func Put(it Item, c Cond, version int64) Op {
	return Op{Kind: OpPut, Item: it, Cond: c, Version: version}
}
func Delete(k Key, c Cond, version int64) Op {
	return Op{Kind: OpDelete, Key: k, Cond: c, Version: version}
}
func Add(k Key, c Cond, deltas map[string]int64) Op {
	return Op{Kind: OpAdd, Key: k, Cond: c, Deltas: deltas}
}
func Check(k Key, c Cond, version int64) Op {
	return Op{Kind: OpCheck, Key: k, Cond: c, Version: version}
}

func (o *Op) key() Key {
	if o.Kind == OpPut {
		return o.Item.Key()
	}
	return o.Key
}

// TargetKey returns the key the op writes or checks.
func (o *Op) TargetKey() Key { return o.key() }

// Query reads one partition of the table or of an index, in sort-key order.
type Query struct {
	Index    string // Table, GSI1 or GSI2
	PK       string
	SKPrefix string // sort key begins with
	// After and Before bound the sort key exclusively; "" means unbounded.
	After, Before string
	Desc          bool
	Limit         int    // at most this many items per call; 0 means all
	Cursor        string // from a previous call's next cursor
}

// Store is implemented by boltstore and dynamostore.
type Store interface {
	// Get reads one item; ErrNotFound when absent.
	Get(ctx context.Context, k Key) (Item, error)
	// Query returns one page of items and the cursor of the next page ("" at the end).
	Query(ctx context.Context, q Query) (items []Item, next string, err error)
	// Count counts the items a query matches (Limit and Cursor ignored).
	Count(ctx context.Context, q Query) (int, error)
	// Transact applies all ops or none (at most MaxTransactItems, on distinct
	// keys). A failed condition returns a *ConditionError naming its key.
	Transact(ctx context.Context, ops ...Op) error
	// Add atomically adds deltas to an item's Nums, bumps its Version and
	// returns the item as written.
	Add(ctx context.Context, k Key, c Cond, deltas map[string]int64) (Item, error)
	Close() error
}

// Local is what the local runner needs beyond Store, which both adapters
// implement and no request path calls.
type Local interface {
	// UseClock makes now the time items expire by (ExpiresAt): the service's
	// clock, which the local runner can move forward.
	UseClock(now func() time.Time)
	// Wipe deletes every item: the local runner's reset to the seed.
	Wipe(ctx context.Context) error
}

// DynamoDB's limits, which both stores enforce (Validate): items in one
// TransactWriteItems, their aggregate size, and one item's size.
const (
	MaxTransactItems = 100
	MaxTransactBytes = 4 << 20
	MaxItemBytes     = 400 << 10
)

var (
	ErrNotFound        = errors.New("store: item not found")
	ErrConditionFailed = errors.New("store: condition failed")
)

// ConditionError names the item whose condition failed: the key, never
// the op's position, so that callers ask "did the record's put fail?"
// (FailedOn) and reordering a transaction's ops changes no answer.
type ConditionError struct{ Key Key }

func (e *ConditionError) Error() string {
	return fmt.Sprintf("store: condition on %s/%s failed", e.Key.PK, e.Key.SK)
}
func (e *ConditionError) Is(target error) bool { return target == ErrConditionFailed }

// FailedKey returns the key of the item whose condition failed.
func FailedKey(err error) (Key, bool) {
	var ce *ConditionError
	if errors.As(err, &ce) {
		return ce.Key, true
	}
	return Key{}, false
}

// FailedOn says whether err is the failed condition of the item at k.
func FailedOn(err error, k Key) bool {
	f, ok := FailedKey(err)
	return ok && f == k
}

// FailedOnAny says whether err is the failed condition of one of ops' items.
func FailedOnAny(err error, ops []Op) bool {
	f, ok := FailedKey(err)
	if !ok {
		return false
	}
	for i := range ops {
		if ops[i].key() == f {
			return true
		}
	}
	return false
}

// Validate checks the invariants both stores enforce before writing, with
// DynamoDB's limits: at most MaxTransactItems ops of at most
// MaxTransactBytes together (Size), no item over MaxItemBytes. The local
// feed's pending items (PendingPartition, the images of the changes it
// derives: bookkeeping DynamoDB never sees) count toward neither limit, so
// that a transaction fits locally exactly when it fits in AWS.
func Validate(ops []Op) error {
	if len(ops) == 0 {
		return fmt.Errorf("store: transaction of no ops")
	}
	seen := make(map[Key]struct{}, len(ops))
	n, bytes := 0, 0
	for i := range ops {
		k := ops[i].key()
		if k.PK == "" || k.SK == "" {
			return fmt.Errorf("store: op %d has an empty key", i)
		}
		if _, dup := seen[k]; dup {
			return fmt.Errorf("store: two ops on %s/%s", k.PK, k.SK)
		}
		seen[k] = struct{}{}
		if k.PK == PendingPartition {
			continue
		}
		size := ops[i].Size()
		if ops[i].Kind == OpPut && size > MaxItemBytes {
			return fmt.Errorf("store: item %s/%s of %d bytes, over %d", k.PK, k.SK, size, MaxItemBytes)
		}
		n, bytes = n+1, bytes+size
	}
	if n > MaxTransactItems || bytes > MaxTransactBytes {
		return fmt.Errorf("store: transaction of %d ops and %d bytes, over %d or %d", n, bytes, MaxTransactItems, MaxTransactBytes)
	}
	return nil
}

// Size is an op's size as DynamoDB counts it toward a transaction's
// MaxTransactBytes: for a put, the item's (each attribute's name and value,
// as dynamostore stores it); for the others, the key's and the numbers
// they add.
func (o *Op) Size() int {
	k := o.key()
	n := len("PK") + len(k.PK) + len("SK") + len(k.SK)
	if o.Kind == OpAdd {
		for name := range o.Deltas {
			n += len("n_") + len(name) + numberSize
		}
	}
	if o.Kind != OpPut {
		return n
	}
	it := &o.Item
	for _, a := range [...][2]string{{"GSI1PK", it.GSI1PK}, {"GSI1SK", it.GSI1SK}, {"GSI2PK", it.GSI2PK}, {"GSI2SK", it.GSI2SK}} {
		if a[1] != "" {
			n += len(a[0]) + len(a[1])
		}
	}
	n += len("v") + numberSize + len("d") + len(it.Data)
	for name := range it.Nums {
		n += len("n_") + len(name) + numberSize
	}
	if it.ExpiresAt != 0 {
		n += len("ttl") + numberSize
	}
	if len(it.Stamp) > 0 {
		n += len("st") + len(it.Stamp)
	}
	return n
}

// numberSize bounds a number's size in DynamoDB (1 byte per two
// significant digits, plus 1): an int64 has at most 19 digits.
const numberSize = 11
