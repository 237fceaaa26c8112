// Package metafields holds the metafield record (docs/openapi.yaml: schema
// Metafield) and the metafield inputs that pages, articles, collections and
// variants accept. Inputs are validated here and written as metafield items owned
// by their resource, in the layout the metafields endpoints serve.
//
// Items: metafield/<id>; GSI1 metafield#owner#<owner resource>#<owner id>/<id>
// lists an owner's metafields, GSI2 metafield#owner#<resource>#<id>#namespace=
// <namespace>/<id> those of one namespace; the guard metafield#key#<owner resource>#<owner id>/
// <namespace>\n<key> keeps namespace and key unique per owner.
package metafields

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Metafield is the stored and returned record.
type Metafield struct {
	ID        int64           `json:"id"`
	Namespace string          `json:"namespace"`
	Key       string          `json:"key"`
	Value     json.RawMessage `json:"value"` // a JSON string or integer
	ValueType string          `json:"value_type"`
	Type      string          `json:"type"` // types.go; empty in records written before it

	Description   *string    `json:"description"`
	OwnerID       int64      `json:"owner_id"`
	OwnerResource string     `json:"owner_resource"`
	CreatedAt     admin.Time `json:"created_at"`
	UpdatedAt     admin.Time `json:"updated_at"`
}

// Input is a metafield as given inside a resource's metafields array.
type Input struct {
	Namespace   *string         `json:"namespace" null:"refuse"`
	Key         *string         `json:"key" null:"refuse"`
	Value       json.RawMessage `json:"value"`
	ValueType   *string         `json:"value_type" null:"refuse"`
	Type        *string         `json:"type" null:"refuse"`
	Description *string         `json:"description"`
	// kind is what Validate settled from type and value_type.
	kind kind
}

// Owner resources.
const (
	OwnerShop             = "shop"
	OwnerPage             = "page"
	OwnerArticle          = "article"
	OwnerBlog             = "blog"
	OwnerCustomCollection = "custom_collection"
	OwnerSmartCollection  = "smart_collection"
	OwnerProduct          = "product"
	OwnerVariant          = "variant"
	OwnerCustomer         = "customer"
	OwnerOrder            = "order"
	maxPerWrite           = 40 // each costs two transaction items; DynamoDB allows 100
	partition             = "metafield"
	namespaceMin, keyMin  = 3, 3
	namespaceMax, keyMax  = 20, 30
	valueMax              = 100_000
	descriptionMax        = 255
)

// OwnerPartition is the GSI1 partition of an owner's metafields.
func OwnerPartition(resource string, id int64) string {
	return "metafield#owner#" + resource + "#" + strconv.FormatInt(id, 10)
}

// NamespacePartition is the GSI2 partition of an owner's metafields in one
// namespace: the namespace filter reads only its own.
func NamespacePartition(resource string, id int64, namespace string) string {
	return records.ExactPartition(OwnerPartition(resource, id), "namespace", namespace)
}

func guardKey(resource string, owner int64, namespace, key string) store.Key {
	return store.Key{PK: "metafield#key#" + resource + "#" + strconv.FormatInt(owner, 10), SK: namespace + "\n" + key}
}

// guard is the metafield's namespace and key claim within its owner, a
// Ref entry that also indexes the metafield: by key (GSI1, in id order)
// and by updated_at (GSI2), so that those filters read only their matches.
func (m *Metafield) guard() records.Entry {
	gk := m.guardKey()
	owner := OwnerPartition(m.OwnerResource, m.OwnerID)
	return records.Entry{Partition: gk.PK, SK: gk.SK, Ref: true,
		GSI1PK: KeyPartition(m.OwnerResource, m.OwnerID, m.Key), GSI1SK: records.IDSK(m.ID),
		GSI2PK: records.TimePartition(owner, "updated_at"), GSI2SK: records.TimeSK(m.UpdatedAt.Time, m.ID)}
}

// guardKey is the key of the metafield's guard.
func (m *Metafield) guardKey() store.Key {
	return guardKey(m.OwnerResource, m.OwnerID, m.Namespace, m.Key)
}

// guardPut writes the guard of m, stored as it.
func (m *Metafield) guardPut(it *store.Item, c store.Cond) store.Op {
	g := m.guard()
	return store.Put(g.Item(it), c, 0)
}

// countOp moves the counter of the metafield's owner (OwnerPartition), so
// that an owner's unfiltered count is O(1): the change feed's (Derive).
func (m *Metafield) countOp(delta int64) store.Op {
	return records.CountOp(OwnerPartition(m.OwnerResource, m.OwnerID), delta)
}

// Partition holds the metafields.
const Partition = partition

// Derive is the change feed's work for a change to a metafield
// (store.Deriver): its owner's count, when it comes or goes. Metafields
// log no event and fire no notification; the guard of their namespace and
// key, which also indexes them, is the request's.
func Derive(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	old, next, err := records.DecodeChange[Metafield](c)
	switch {
	case err != nil:
		return nil, err
	case old == nil:
		return []store.Op{next.countOp(1)}, nil
	case next == nil:
		return []store.Op{old.countOp(-1)}, nil
	}
	return nil, nil
}

// KeyPartition is the GSI1 partition of an owner's metafields with one key
// (their guards).
func KeyPartition(resource string, id int64, key string) string {
	return records.ExactPartition(OwnerPartition(resource, id), "key", key)
}

// guardID reads the metafield id a guard names (a Ref entry, or the
// {"id"} of a store written before guards indexed).
func guardID(it *store.Item) (int64, error) {
	var g struct {
		ID int64  `json:"id"`
		SK string `json:"ref_sk"`
	}
	if err := records.Decode(it, &g); err != nil || g.SK == "" {
		return g.ID, err
	}
	return records.ParseIDSK(g.SK)
}

// Indexer rebuilds the metafields' guards as indexing entries in a store
// written before them (records.Reindex).
var Indexer = records.Indexer{
	Name:       "metafields",
	Partitions: records.OnePartition(partition),
	Rewrite: func(it *store.Item) (records.Rewritten, error) {
		var m Metafield
		err := records.Decode(it, &m)
		owner := OwnerPartition(m.OwnerResource, m.OwnerID)
		return records.Rewritten{Item: *it, Entries: []records.Entry{m.guard()},
			Counted: []records.Counted{{Counter: owner, Query: store.Query{Index: store.GSI1, PK: owner}}}}, err
	},
}

// Key is the item key of a metafield.
func Key(id int64) store.Key { return store.Key{PK: partition, SK: records.IDSK(id)} }

// Item is the stored item of m.
func (m *Metafield) Item(version int64) store.Item {
	return store.Item{
		PK: partition, SK: records.IDSK(m.ID),
		GSI1PK: OwnerPartition(m.OwnerResource, m.OwnerID), GSI1SK: records.IDSK(m.ID),
		GSI2PK: NamespacePartition(m.OwnerResource, m.OwnerID, m.Namespace), GSI2SK: records.IDSK(m.ID),
		Version: version, Data: records.Encode(m),
	}
}

// Validate checks one metafield's fields as schema Metafield says,
// adding messages under prefix+field ("" for the metafield resource itself,
// "metafields." inside another resource's input).
func (in *Input) Validate(v *admin.Validation, prefix string) {
	length := func(field string, s *string, min, max int) {
		n := 0
		if s != nil {
			n = utf8.RuneCountInString(strings.TrimSpace(*s))
		}
		switch {
		case n == 0:
			v.Add(prefix+field, admin.MsgBlank)
			v.Add(prefix+field, admin.TooShort(min))
		case n < min:
			v.Add(prefix+field, admin.TooShort(min))
		case n > max:
			v.Add(prefix+field, admin.TooLong(max))
		case strings.ContainsAny(*s, "\n\r\x00"):
			v.Add(prefix+field, admin.MsgInvalid)
		}
	}
	length("namespace", in.Namespace, namespaceMin, namespaceMax)
	length("key", in.Key, keyMin, keyMax)
	in.validateValue(v, prefix, nil)
	if in.Description != nil && utf8.RuneCountInString(*in.Description) > descriptionMax {
		v.Add(prefix+"description", admin.TooLong(descriptionMax))
	}
}

// value returns the value as stored JSON: an integer for value_type
// integer (sent as a number or a numeric string), else a string (a number,
// boolean or JSON given for a type that holds one kept as its text).
func (in *Input) value() (json.RawMessage, bool) {
	raw := strings.TrimSpace(string(in.Value))
	if raw == "" || raw == "null" || raw == `""` || len(raw) > valueMax {
		return nil, false
	}
	if in.kind.valueType == "integer" {
		if n, ok := in.integer(); ok {
			return json.RawMessage(strconv.FormatInt(n, 10)), true
		}
		return json.RawMessage(raw), true
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal([]byte(raw), &s) != nil || strings.TrimSpace(s) == "" {
			return nil, false
		}
		return json.RawMessage(raw), true
	case '{', '[':
		if !in.kind.jsonText() {
			return nil, false
		}
		var c bytes.Buffer
		if json.Compact(&c, []byte(raw)) != nil {
			return nil, false
		}
		raw = c.String()
	case 't', 'f':
		if in.kind.typ != "boolean" {
			return nil, false
		}
	}
	b, _ := json.Marshal(raw) // a number, boolean or JSON given for a string: keep its text
	return b, true
}

// integer reads an integer value, given as a JSON number or a string of one.
// A fraction or an exponent is allowed when the value is integral ("2.0",
// 1e3): JSON has no integer type, and clients send integers as they print
// their numbers.
func (in *Input) integer() (int64, bool) {
	raw := strings.TrimSpace(string(in.Value))
	return admin.ParseIntegral(strings.Trim(raw, `"`))
}

// ValidateInputs checks a resource's metafields array.
func ValidateInputs(v *admin.Validation, inputs []Input) {
	if len(inputs) > maxPerWrite {
		v.Add("metafields", admin.TooMany(maxPerWrite, "metafields per request"))
		return
	}
	seen := map[string]bool{}
	for i := range inputs {
		inputs[i].Validate(v, "metafields.")
		if inputs[i].Namespace != nil && inputs[i].Key != nil {
			k := *inputs[i].Namespace + "\n" + *inputs[i].Key
			if seen[k] && !v.Has("metafields.key") {
				v.Add("metafields.key", "must be unique within this namespace")
			}
			seen[k] = true
		}
	}
}

// Ops returns the writes storing inputs (already validated) as metafields of
// an owner: a new metafield per new namespace and key, an update of the
// existing one otherwise (one GetItem per input to find it). They belong in
// the owner's transaction; a concurrent writer of the same key makes the
// guard or version condition fail and the whole write retry or fail.
func Ops(ctx context.Context, st store.Store, gen *ids.Generator, resource string, owner int64, inputs []Input, now admin.Time) ([]store.Op, error) {
	var ops []store.Op
	for i := range inputs {
		in := &inputs[i]
		ns, k := strings.TrimSpace(*in.Namespace), strings.TrimSpace(*in.Key)
		value, _ := in.value()
		g, err := st.Get(ctx, guardKey(resource, owner, ns, k))
		switch {
		case errors.Is(err, store.ErrNotFound):
			m := Metafield{ID: gen.Next(), Namespace: ns, Key: k, Value: value, ValueType: in.kind.valueType, Type: in.kind.typ,
				Description: in.Description, OwnerID: owner, OwnerResource: resource}
			m.stamp(now)
			it := m.Item(1)
			records.Stamp(ctx, &it, m.ID) // its owner's count is the change feed's (Derive)
			ops = append(ops, store.Put(it, store.IfAbsent, 0), m.guardPut(&it, store.IfAbsent))
		case err != nil:
			return nil, err
		default:
			id, err := guardID(&g)
			if err != nil {
				return nil, err
			}
			var m Metafield
			it, err := records.Get(ctx, st, Key(id), &m)
			if err != nil {
				return nil, err
			}
			m.Value, m.ValueType, m.Type, m.UpdatedAt = value, in.kind.valueType, in.kind.typ, now
			if in.Description != nil {
				m.Description = in.Description
			}
			put := records.PutNext(m.Item(it.Version))
			records.Stamp(ctx, &put.Item, gen.Next())
			ops = append(ops, put, m.guardPut(&put.Item, store.Always))
		}
	}
	return ops, nil
}

// stamp sets a new metafield's times: created_at is its id's second, so
// that created_at ranges are id ranges.
func (m *Metafield) stamp(now admin.Time) {
	m.CreatedAt = admin.Time{Time: ids.Time(m.ID)}
	m.UpdatedAt = now
	if now.Before(m.CreatedAt.Time) {
		m.UpdatedAt = m.CreatedAt
	}
}

// DeleteOwnerOps returns the writes deleting every metafield of an owner
// (when the owner is deleted): one Query of the owner's index partition.
// They may be more than one transaction holds; owners commit their own
// deletion first and these after it with records.TransactBatches.
func DeleteOwnerOps(ctx context.Context, st store.Store, resource string, owner int64) ([]store.Op, error) {
	items, err := records.List(ctx, st, store.Query{Index: store.GSI1, PK: OwnerPartition(resource, owner)}, nil, 0, 1<<31-1)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	for i := range items {
		var m Metafield
		if err := records.Decode(&items[i], &m); err != nil {
			return nil, err
		}
		// The change feed counts each removal (Derive).
		ops = append(ops,
			store.Delete(items[i].Key(), store.Always, 0),
			store.Delete(guardKey(resource, owner, m.Namespace, m.Key), store.Always, 0))
	}
	return ops, nil
}
