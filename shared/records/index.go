package records

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/store"
)

// Index entries list a record a second time, in a partition of their own
// ("page#title=About us", "page#updated"), so that a filter reads only its
// matches: an exact filter is one partition in id order, a time range a key
// range of a partition ordered by that time. An entry is a copy of the
// record's item (its Data, no secondary keys unless given), so a page of
// matches is one Query with no follow-up reads; entries are written in the
// record's own transaction (IndexOps), so they never disagree with it.
type Entry struct {
	Partition, SK string
	// GSI1 and GSI2 keys, when set, index the entry itself: one entry then
	// serves more filters (an event's verb, and its type and verb).
	GSI1PK, GSI1SK string
	GSI2PK, GSI2SK string
	// Counted entries keep a counter of their partition (Count), so that a
	// count by that filter is O(1).
	Counted bool
	// Ref entries hold only the record's key, not a copy: for records up to
	// MaxData that share a transaction with large writes (an image's
	// chunks), where copies would break DynamoDB's 4 MB transaction limit.
	// Readers resolve them (ListRefWindow).
	Ref bool
}

// ref is the Data of a Ref entry: the key of its record.
type ref struct {
	PK string `json:"ref_pk"`
	SK string `json:"ref_sk"`
}

// maxExactValue is the longest value an ExactPartition names as it is.
const maxExactValue = 200

// ExactPartition is the partition of the records whose field equals value.
// Long values are hashed to keep keys small; readers check the field on
// what they read, so a hash collision costs a read, never a wrong answer.
func ExactPartition(partition, field, value string) string {
	if len(value) > maxExactValue {
		sum := sha256.Sum256([]byte(value))
		value = "sha256:" + hex.EncodeToString(sum[:])
	}
	return partition + "#" + field + "=" + value
}

// TimePartition is the partition of a record type's entries ordered by one
// of its times.
func TimePartition(partition, field string) string { return partition + "#by:" + field }

// stampLayout sorts as time does for years 1 to 9999 (Go pads years to four
// digits), which is every time the service accepts.
const stampLayout = "2006-01-02T15:04:05Z"

// TimeSK is the sort key of a record at time t in a TimePartition.
func TimeSK(t time.Time, id int64) string { return t.UTC().Format(stampLayout) + "#" + IDSK(id) }

// TimeRange is the exclusive key bounds, in a TimePartition, of the times
// r contains (dates.Range.Seconds).
func TimeRange(r dates.Range) (after, before string) {
	from, to := r.Seconds()
	if !from.IsZero() {
		after = from.UTC().Format(stampLayout) // every key of that second sorts after it
	}
	if !to.IsZero() {
		before = to.UTC().Format(stampLayout) + "#~" // and before this
	} else if !r.Max.IsZero() {
		before = "0" // the end rounded below year 1: nothing
	}
	return after, before
}

// IDRange is the exclusive IDSK bounds of the ids assigned in the seconds
// r contains (ids carry their second, see ids.At). It answers created_at
// ranges exactly for records whose created_at is their id's second
// (ids.Time).
func IDRange(r dates.Range) (after, before string) {
	from, to := r.Seconds()
	if !from.IsZero() {
		if at := ids.At(from); at > 0 {
			after = IDSK(at - 1)
		}
	}
	if !to.IsZero() {
		before = IDSK(max(ids.At(to.Add(time.Second)), 0))
	} else if !r.Max.IsZero() {
		before = IDSK(0)
	}
	return after, before
}

// Tighten narrows q's key range to (after, before), keeping whichever bound
// of each side is tighter.
func Tighten(q store.Query, after, before string) store.Query {
	if after > q.After {
		q.After = after
	}
	if before != "" && (q.Before == "" || before < q.Before) {
		q.Before = before
	}
	return q
}

// IndexOps keep a record's entries in step with it: it is the record's item
// as written (nil when deleted), old and next its entries before and after
// the change (old nil on create). Copies are rewritten whole on every
// change, since they carry the record's data, Ref entries only when they
// come; counters move only when an entry comes or goes.
func IndexOps(it *store.Item, old, next []Entry) []store.Op {
	var ops []store.Op
	keep := make(map[store.Key]bool, len(next))
	if it != nil {
		for _, e := range next {
			keep[store.Key{PK: e.Partition, SK: e.SK}] = true
		}
	}
	had := make(map[store.Key]bool, len(old))
	for _, e := range old {
		k := store.Key{PK: e.Partition, SK: e.SK}
		had[k] = true
		if keep[k] {
			continue
		}
		ops = append(ops, store.Delete(k, store.Always, 0))
		if e.Counted {
			ops = append(ops, CountOp(e.Partition, -1))
		}
	}
	if it == nil {
		return ops
	}
	for _, e := range next {
		k := store.Key{PK: e.Partition, SK: e.SK}
		if e.Ref && had[k] {
			continue // it holds only the record's key: nothing to rewrite
		}
		ops = append(ops, store.Put(e.Item(it), store.Always, 0))
		if e.Counted && !had[k] {
			ops = append(ops, CountOp(e.Partition, 1))
		}
	}
	return ops
}

// WriteOps write a record's item and its entries, the item first (as Create
// and Update require): a create when old is 0 (version 1, if absent), else
// an update of version old; its entries go from before to next (IndexOps).
func WriteOps(it store.Item, old int64, before, next []Entry) []store.Op {
	it.Version = old + 1
	first := store.Put(it, store.IfVersion, old)
	if old == 0 {
		first = store.Put(it, store.IfAbsent, 0)
	}
	return append([]store.Op{first}, IndexOps(&it, before, next)...)
}

// Item is the entry's item for the record item it: a copy of its data, or
// for a Ref entry its key.
func (e *Entry) Item(it *store.Item) store.Item {
	data := it.Data
	if e.Ref {
		data = Encode(ref{PK: it.PK, SK: it.SK})
	}
	return store.Item{PK: e.Partition, SK: e.SK, GSI1PK: e.GSI1PK, GSI1SK: e.GSI1SK, GSI2PK: e.GSI2PK, GSI2SK: e.GSI2SK,
		Version: it.Version, Data: data}
}
