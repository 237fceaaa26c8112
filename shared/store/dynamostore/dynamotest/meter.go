package dynamotest

import (
	"context"
	"fmt"
	"maps"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
)

// Usage is what a run of DynamoDB calls consumed, as AWS bills it on demand.
type Usage struct {
	Calls int     // round trips
	Items int     // items returned by reads
	RU    float64 // read request units
	WU    float64 // write request units, the indexes' included
}

// Meter counts the read and write units of every call of the store it
// opened (OpenMetered). Reads take DynamoDB Local's own figure
// (ReturnConsumedCapacity, asked for on every read). Writes are computed,
// since DynamoDB Local misreports transactional writes and leaves out the
// indexes: each written item costs ceil(KB) units of the larger of its
// images before and after (2 in a transaction), plus, per GSI whose key it
// has before or after, ceil(KB) of that image (an index entry removed and
// another written when the key moves); a ConditionCheck costs 2 read units.
// The images are read around each write with a client the meter does not
// count.
type Meter struct {
	raw   *dynamodb.Client
	table string

	mu     sync.Mutex
	u      Usage
	detail map[string]float64 // write units by call and partition, since the last Take
}

// OpenMetered returns a store on a fresh table whose calls m counts.
func OpenMetered(t testing.TB) (store.Store, *Meter) {
	t.Helper()
	raw := Client(t)
	m := &Meter{raw: raw, table: NewTable(t)}
	metered := dynamodb.New(raw.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("meter", m.handle), middleware.Before)
		})
	})
	return dynamostore.New(metered, m.table), m
}

// Take returns what was consumed since the last Take and starts again.
func (m *Meter) Take() Usage {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.u
	m.u, m.detail = Usage{}, nil
	return u
}

// Detail is the write units since the last Take by call and partition
// (digits as N), to see where they went.
func (m *Meter) Detail() map[string]float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.detail)
}

// write is one item a call writes: its key and the unit multiplier (2 in
// a transaction).
type write struct {
	key    map[string]types.AttributeValue
	factor float64
}

func (m *Meter) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
	var writes []write
	checks := 0
	op := strings.TrimSuffix(strings.TrimPrefix(fmt.Sprintf("%T", in.Parameters), "*dynamodb."), "Input")
	switch p := in.Parameters.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity = types.ReturnConsumedCapacityTotal
	case *dynamodb.PutItemInput:
		writes = append(writes, write{keyOf(p.Item), 1})
	case *dynamodb.UpdateItemInput:
		writes = append(writes, write{p.Key, 1})
	case *dynamodb.DeleteItemInput:
		writes = append(writes, write{p.Key, 1})
	case *dynamodb.TransactWriteItemsInput:
		for _, ti := range p.TransactItems {
			switch {
			case ti.Put != nil:
				writes = append(writes, write{keyOf(ti.Put.Item), 2})
			case ti.Update != nil:
				writes = append(writes, write{ti.Update.Key, 2})
			case ti.Delete != nil:
				writes = append(writes, write{ti.Delete.Key, 2})
			case ti.ConditionCheck != nil:
				checks++
			}
		}
	}
	before := make([]map[string]types.AttributeValue, len(writes))
	for i, w := range writes {
		before[i] = m.image(ctx, w.key)
	}
	out, md, err := next.HandleInitialize(ctx, in)
	var u Usage
	u.Calls = 1
	u.RU = 2 * float64(checks)
	switch o := out.Result.(type) {
	case *dynamodb.GetItemOutput:
		u.RU += consumed(o.ConsumedCapacity)
		if o.Item != nil {
			u.Items = 1
		}
	case *dynamodb.QueryOutput:
		u.RU += consumed(o.ConsumedCapacity)
		u.Items = int(o.Count)
	}
	for i, w := range writes {
		// A refused write is billed for the table only: no index changes.
		wu := w.factor * tableKB(before[i], before[i])
		if err == nil {
			wu = writeUnits(before[i], m.image(ctx, w.key), w.factor)
		}
		u.WU += wu
		m.mu.Lock()
		if m.detail == nil {
			m.detail = map[string]float64{}
		}
		m.detail[op+" "+partitionOf(w.key)] += wu
		m.mu.Unlock()
	}
	m.mu.Lock()
	m.u.Calls += u.Calls
	m.u.Items += u.Items
	m.u.RU += u.RU
	m.u.WU += u.WU
	m.mu.Unlock()
	return out, md, err
}

// image reads an item as it stands, uncounted (nil when absent).
func (m *Meter) image(ctx context.Context, key map[string]types.AttributeValue) map[string]types.AttributeValue {
	out, err := m.raw.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(m.table), Key: key, ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil
	}
	return out.Item
}

func partitionOf(key map[string]types.AttributeValue) string {
	pk, _ := key["PK"].(*types.AttributeValueMemberS)
	if pk == nil {
		return "?"
	}
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return 'N'
		}
		return r
	}, pk.Value)
}

func consumed(c *types.ConsumedCapacity) float64 {
	if c == nil || c.CapacityUnits == nil {
		return 0
	}
	return *c.CapacityUnits
}

func keyOf(item map[string]types.AttributeValue) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{"PK": item["PK"], "SK": item["SK"]}
}

// writeUnits is the units of one item's write from before to after (nil
// when absent): the table's, times factor, and each index's.
func writeUnits(before, after map[string]types.AttributeValue, factor float64) float64 {
	units := factor * tableKB(before, after)
	for _, idx := range []string{"GSI1", "GSI2"} {
		bk, ak := indexKey(before, idx), indexKey(after, idx)
		switch {
		case bk == "" && ak == "":
		case bk == ak:
			units += kb(after)
		default:
			if bk != "" {
				units += kb(before)
			}
			if ak != "" {
				units += kb(after)
			}
		}
	}
	return units
}

// kb is an item's size in billed kilobytes (at least 1).
func kb(it map[string]types.AttributeValue) float64 {
	return math.Max(1, math.Ceil(float64(itemSize(it))/1024))
}

// tableKB is the table's kilobytes of one item's write from before to
// after: the larger image's.
func tableKB(before, after map[string]types.AttributeValue) float64 {
	switch {
	case before == nil && after == nil:
		return 1 // a delete of nothing, or a refused write: still billed
	case before == nil:
		return kb(after)
	case after == nil:
		return kb(before)
	}
	return math.Max(kb(before), kb(after))
}

func indexKey(it map[string]types.AttributeValue, idx string) string {
	pk, ok := it[idx+"PK"].(*types.AttributeValueMemberS)
	if !ok {
		return ""
	}
	sk, _ := it[idx+"SK"].(*types.AttributeValueMemberS)
	if sk == nil {
		return pk.Value
	}
	return pk.Value + "\x00" + sk.Value
}

// itemSize is DynamoDB's size of an item: each attribute's name and value.
func itemSize(it map[string]types.AttributeValue) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberSS:
		n := 0
		for _, s := range v.Value {
			n += len(s)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, s := range v.Value {
			n += numberSize(s)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += len(k) + valueSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += valueSize(e) + 1
		}
		return n
	}
	return 0
}

// numberSize is about one byte per two significant digits, plus one.
func numberSize(s string) int {
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0.")
	s = strings.ReplaceAll(s, ".", "")
	return (len(s)+1)/2 + 1
}

// Unmetered is a store on the same table whose calls m does not count: a
// benchmark's own look at what a call changed.
func (m *Meter) Unmetered() store.Store { return dynamostore.New(m.raw, m.table) }
