// Package dynamostore implements store.Store on one DynamoDB table.
//
// Layout: PK and SK (S) are the table keys; GSI1PK/GSI1SK and GSI2PK/GSI2SK
// (S, omitted when empty) key the indexes GSI1 and GSI2 (projection ALL);
// v (N) is the Version, d (S) the Data JSON, n_<name> (N) each of Nums,
// ttl (N, omitted when 0) the table's TTL attribute, and tok (S) the request
// token of the last single-item write (single), never read into an Item. The attribute
// conversion is hand-written: it runs on every request.
//
// DynamoDB deletes expired items lazily, so every read filters them out and
// every condition treats an expired item as absent, like boltstore does.
package dynamostore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/storeadmin/adminapi/shared/awsconfig"
	"github.com/storeadmin/adminapi/shared/store"
)

// Attribute names.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	attrVer    = "v"
	attrData   = "d"
	attrTTL    = "ttl"
	attrStamp  = "st" // Item.Stamp
	attrOwner  = "tok"
	numPrefix  = "n_"
)

// expiredAttempts bounds the tries of one write that an expired item
// blocks (each removes it first). It is not a retry of a failure: the
// service's unavailability is retried by store.Retrying alone, and each
// call here makes one request (noRetries).
const expiredAttempts = 3

// noRetries turns the AWS SDK's retryer off for a call: store.Retrying is
// the one retry layer (its doc states the budget), and retries stacked
// beneath it would multiply.
func noRetries(o *dynamodb.Options) { o.Retryer = aws.NopRetryer{} }

type av = types.AttributeValue

// Store is the DynamoDB implementation of store.Store. It is safe for
// concurrent use and cheap; share one *dynamodb.Client between Stores.
type Store struct {
	db    *dynamodb.Client
	table string
	now   func() time.Time
}

var _ store.Store = (*Store)(nil)

// New returns a Store on table. The client is created once (NewClient) and
// reused; the Store calls it with the SDK's retryer off (noRetries).
func New(client *dynamodb.Client, table string) *Store {
	return &Store{db: dynamodb.New(client.Options(), noRetries), table: table, now: time.Now}
}

// Close does nothing: the client belongs to the caller.
func (s *Store) Close() error { return nil }

// UseClock makes now the time items expire by (store.Local).
func (s *Store) UseClock(now func() time.Time) { s.now = now }

// Wipe deletes every item of the table (store.Local): a Scan of keys and
// batches of 25 deletes, the local runner's reset; no request calls it.
func (s *Store) Wipe(ctx context.Context) error {
	p := dynamodb.NewScanPaginator(s.db, &dynamodb.ScanInput{TableName: &s.table,
		ProjectionExpression: aws.String("#pk, #sk"), ExpressionAttributeNames: map[string]string{"#pk": attrPK, "#sk": attrSK}})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return err
		}
		for start := 0; start < len(page.Items); start += 25 {
			var reqs []types.WriteRequest
			for _, key := range page.Items[start:min(start+25, len(page.Items))] {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key}})
			}
			for len(reqs) > 0 {
				out, err := s.db.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{s.table: reqs}})
				if err != nil {
					return err
				}
				reqs = out.UnprocessedItems[s.table]
			}
		}
	}
	return nil
}

// NewClient makes the DynamoDB client of the configuration awsconfig.Load
// loads; with a non-empty endpoint (DynamoDB Local) it sets BaseEndpoint.
// Create the client once per process and reuse it.
func NewClient(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	cfg, err := awsconfig.Load(ctx, endpoint)
	if err != nil {
		return nil, fmt.Errorf("dynamostore: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			// DynamoDB Local omits x-amz-crc32 on error responses and the
			// SDK then logs a spurious checksum warning for every failed
			// condition (aws/aws-sdk-go-v2#3545).
			o.DisableValidateResponseChecksum = true
		}
	}), nil
}

// TableOption changes the table CreateTable makes.
type TableOption func(*dynamodb.CreateTableInput)

// WithoutStream leaves the change stream off, for tests that never read it:
// DynamoDB Local keeps every stream record it is given, deleted tables'
// too, and slows down with them (200 writes took 0.4 s on a fresh server
// and 3.2 s after forty tables with streams had come and gone; without
// streams they stayed at 0.4 s).
func WithoutStream() TableOption {
	return func(in *dynamodb.CreateTableInput) { in.StreamSpecification = nil }
}

// CreateTable creates table as template.yaml does (on-demand, GSI1 and GSI2
// with projection ALL, stream NEW_AND_OLD_IMAGES, TTL on ttl), waits until
// it is ACTIVE and enables TTL. An existing table is not an error.
func CreateTable(ctx context.Context, client *dynamodb.Client, table string, opts ...TableOption) error {
	s := func(name string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(name), AttributeType: types.ScalarAttributeTypeS}
	}
	keys := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	gsi := func(name, pk, sk string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName:  aws.String(name),
			KeySchema:  keys(pk, sk),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(table),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{s(attrPK), s(attrSK), s(attrGSI1PK), s(attrGSI1SK), s(attrGSI2PK), s(attrGSI2SK)},
		KeySchema:            keys(attrPK, attrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(store.GSI1, attrGSI1PK, attrGSI1SK),
			gsi(store.GSI2, attrGSI2PK, attrGSI2SK),
		},
		StreamSpecification: &types.StreamSpecification{
			StreamEnabled:  aws.Bool(true),
			StreamViewType: types.StreamViewTypeNewAndOldImages,
		},
	}
	for _, o := range opts {
		o(in)
	}
	out, err := client.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	switch {
	case errors.As(err, &inUse):
	case err != nil:
		return fmt.Errorf("dynamostore: create table %s: %w", table, err)
	}
	if err != nil || !active(out.TableDescription) {
		// Poll rather than use TableExistsWaiter: its 20 s minimum delay
		// would dominate test runs against DynamoDB Local.
		delay := 50 * time.Millisecond
		for {
			d, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
			if err != nil {
				var nf *types.ResourceNotFoundException
				if !errors.As(err, &nf) {
					return fmt.Errorf("dynamostore: describe table %s: %w", table, err)
				}
			} else if active(d.Table) {
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(delay):
			}
			delay = min(2*delay, 2*time.Second)
		}
	}
	ttl, err := client.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(table)})
	if err != nil {
		return fmt.Errorf("dynamostore: describe ttl of %s: %w", table, err)
	}
	if d := ttl.TimeToLiveDescription; d != nil && (d.TimeToLiveStatus == types.TimeToLiveStatusEnabled || d.TimeToLiveStatus == types.TimeToLiveStatusEnabling) {
		return nil
	}
	_, err = client.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               aws.String(table),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(attrTTL), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return fmt.Errorf("dynamostore: enable ttl on %s: %w", table, err)
	}
	return nil
}

func active(d *types.TableDescription) bool {
	if d == nil || d.TableStatus != types.TableStatusActive {
		return false
	}
	for _, g := range d.GlobalSecondaryIndexes {
		if g.IndexStatus != types.IndexStatusActive {
			return false
		}
	}
	return true
}

// ---- attribute conversion ----

func str(s string) av { return &types.AttributeValueMemberS{Value: s} }
func num(n int64) av  { return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)} }

func keyAttrs(k store.Key) map[string]av {
	return map[string]av{attrPK: str(k.PK), attrSK: str(k.SK)}
}

func marshal(it *store.Item) (map[string]av, error) {
	if (it.GSI1PK == "") != (it.GSI1SK == "") || (it.GSI2PK == "") != (it.GSI2SK == "") {
		// DynamoDB cannot index an item missing either key of an index
		// (and rejects "" for them), so a half-keyed item would silently
		// be absent from the index. Refuse it instead.
		return nil, fmt.Errorf("dynamostore: item %s/%s sets only one key of an index", it.PK, it.SK)
	}
	if !utf8.Valid(it.Data) {
		return nil, fmt.Errorf("dynamostore: item %s/%s: Data is not UTF-8", it.PK, it.SK)
	}
	m := make(map[string]av, 8+len(it.Nums))
	m[attrPK] = str(it.PK)
	m[attrSK] = str(it.SK)
	if it.GSI1PK != "" {
		m[attrGSI1PK] = str(it.GSI1PK)
		m[attrGSI1SK] = str(it.GSI1SK)
	}
	if it.GSI2PK != "" {
		m[attrGSI2PK] = str(it.GSI2PK)
		m[attrGSI2SK] = str(it.GSI2SK)
	}
	m[attrVer] = num(it.Version)
	if len(it.Data) > 0 {
		m[attrData] = str(string(it.Data))
	}
	for name, v := range it.Nums {
		m[numPrefix+name] = num(v)
	}
	if it.ExpiresAt != 0 {
		m[attrTTL] = num(it.ExpiresAt)
	}
	if len(it.Stamp) > 0 {
		if !utf8.Valid(it.Stamp) {
			return nil, fmt.Errorf("dynamostore: item %s/%s: Stamp is not UTF-8", it.PK, it.SK)
		}
		m[attrStamp] = str(string(it.Stamp))
	}
	return m, nil
}

func unmarshal(m map[string]av) (store.Item, error) {
	var it store.Item
	for name, v := range m {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			switch name {
			case attrPK:
				it.PK = v.Value
			case attrSK:
				it.SK = v.Value
			case attrGSI1PK:
				it.GSI1PK = v.Value
			case attrGSI1SK:
				it.GSI1SK = v.Value
			case attrGSI2PK:
				it.GSI2PK = v.Value
			case attrGSI2SK:
				it.GSI2SK = v.Value
			case attrData:
				it.Data = []byte(v.Value)
			case attrStamp:
				it.Stamp = []byte(v.Value)
			}
		case *types.AttributeValueMemberN:
			n, err := strconv.ParseInt(v.Value, 10, 64)
			if err != nil {
				return it, fmt.Errorf("dynamostore: attribute %s: %w", name, err)
			}
			switch {
			case name == attrVer:
				it.Version = n
			case name == attrTTL:
				it.ExpiresAt = n
			case strings.HasPrefix(name, numPrefix):
				if it.Nums == nil {
					it.Nums = make(map[string]int64)
				}
				it.Nums[name[len(numPrefix):]] = n
			}
		}
	}
	return it, nil
}

// ttlOf returns the ttl attribute of a raw item (0 when absent).
func ttlOf(m map[string]av) int64 {
	if v, ok := m[attrTTL].(*types.AttributeValueMemberN); ok {
		n, _ := strconv.ParseInt(v.Value, 10, 64)
		return n
	}
	return 0
}

func (s *Store) expired(ttl int64, now int64) bool { return ttl != 0 && ttl <= now }

// ---- expressions ----

// expr collects placeholder names and values; DynamoDB rejects unused ones,
// so they are only added when an expression uses them.
type expr struct {
	names  map[string]string
	values map[string]av
}

func (e *expr) name(attr string) string {
	ph := "#" + attr
	switch attr {
	case attrPK:
		ph = "#pk"
	case attrSK:
		ph = "#sk"
	}
	if e.names == nil {
		e.names = make(map[string]string, 4)
	}
	e.names[ph] = attr
	return ph
}

// nameN registers an arbitrary attribute name (a Num) under a numbered placeholder.
func (e *expr) nameN(attr string, i int) string {
	ph := "#n" + strconv.Itoa(i)
	if e.names == nil {
		e.names = make(map[string]string, 4)
	}
	e.names[ph] = attr
	return ph
}

func (e *expr) value(ph string, v av) string {
	if e.values == nil {
		e.values = make(map[string]av, 4)
	}
	e.values[ph] = v
	return ph
}

func (e *expr) live(now int64) string {
	ttl := e.name(attrTTL)
	return "(attribute_not_exists(" + ttl + ") OR " + ttl + " > " + e.value(":now", num(now)) + ")"
}

// cond renders op's condition ("" for none). For OpAdd the expression also
// requires a live item (or none), because UpdateItem would otherwise add to
// an expired item's numbers; a failure on an expired item is then resolved
// by deleting it and retrying (see blockedByExpired).
func (e *expr) cond(op *store.Op, now int64) string {
	isAdd := op.Kind == store.OpAdd
	switch op.Cond {
	case store.Always:
		if isAdd {
			return e.live(now)
		}
		return ""
	case store.IfAbsent:
		if isAdd {
			return "attribute_not_exists(" + e.name(attrPK) + ")"
		}
		return "attribute_not_exists(" + e.name(attrPK) + ") OR " + e.name(attrTTL) + " <= " + e.value(":now", num(now))
	case store.IfPresent:
		return "attribute_exists(" + e.name(attrPK) + ") AND " + e.live(now)
	case store.IfVersion:
		return e.name(attrVer) + " = " + e.value(":ver", num(op.Version)) + " AND " + e.live(now)
	}
	return "attribute_not_exists(" + e.name(attrPK) + ") AND attribute_exists(" + e.name(attrPK) + ")" // unknown: never true
}

// addUpdate renders the UpdateExpression of an OpAdd.
func (e *expr) addUpdate(deltas map[string]int64) string {
	v := e.name(attrVer)
	var b strings.Builder
	b.WriteString("SET " + v + " = if_not_exists(" + v + ", " + e.value(":zero", num(0)) + ") + " + e.value(":one", num(1)))
	i := 0
	for name, d := range deltas {
		if i == 0 {
			b.WriteString(" ADD ")
		} else {
			b.WriteString(", ")
		}
		b.WriteString(e.nameN(numPrefix+name, i))
		b.WriteByte(' ')
		b.WriteString(e.value(":d"+strconv.Itoa(i), num(d)))
		i++
	}
	return b.String()
}

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ---- reads ----

func (s *Store) get(ctx context.Context, k store.Key) (store.Item, error) {
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      &s.table,
		Key:            keyAttrs(k),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("dynamostore: get %s/%s: %w", k.PK, k.SK, err)
	}
	if out.Item == nil || s.expired(ttlOf(out.Item), s.now().Unix()) {
		return store.Item{}, store.ErrNotFound
	}
	return unmarshal(out.Item)
}

// plan is how a store.Query runs: one key condition plus, when DynamoDB's
// single sort-key condition cannot express all of SKPrefix/After/Before,
// a filter on the sort key applied here (key attributes cannot appear in
// a FilterExpression).
type plan struct {
	q              store.Query
	pkAttr, skAttr string
	keyCond        string
	expr           expr
	empty          bool // nothing can match
	exact          bool // the key condition is the whole predicate
	prefix         string
	after, before  string
}

func (s *Store) plan(q store.Query) (*plan, error) {
	p := &plan{q: q, pkAttr: attrPK, skAttr: attrSK}
	switch q.Index {
	case store.Table:
	case store.GSI1:
		p.pkAttr, p.skAttr = attrGSI1PK, attrGSI1SK
	case store.GSI2:
		p.pkAttr, p.skAttr = attrGSI2PK, attrGSI2SK
	default:
		return nil, fmt.Errorf("dynamostore: unknown index %q", q.Index)
	}
	if q.PK == "" {
		return nil, errors.New("dynamostore: query without PK")
	}
	// Normalise the bounds so that, when a prefix is set, After and
	// Before either lie within the prefix range or are dropped.
	P, A, B := q.SKPrefix, q.After, q.Before
	if P != "" {
		if A != "" {
			if A < P {
				A = "" // every key with prefix P is >= P > A
			} else if !strings.HasPrefix(A, P) {
				p.empty = true // A is above every key with prefix P
			}
		}
		if B != "" {
			if B <= P {
				p.empty = true
			} else if !strings.HasPrefix(B, P) {
				B = "" // B is above every key with prefix P
			}
		}
	}
	if A != "" && B != "" && A >= B {
		p.empty = true
	}
	p.prefix, p.after, p.before = P, A, B

	e := &p.expr
	// Only placeholders that the expression uses may be registered.
	sk := func() string { return e.name(p.skAttr) }
	cond := e.name(p.pkAttr) + " = " + e.value(":pk", str(q.PK))
	p.exact = true
	switch {
	case p.empty:
	case A != "" && B != "":
		// Keys between two keys with prefix P have prefix P.
		cond += " AND " + sk() + " BETWEEN " + e.value(":a", str(A)) + " AND " + e.value(":b", str(B))
		p.exact = false
	case P != "" && B != "":
		cond += " AND " + sk() + " BETWEEN " + e.value(":p", str(P)) + " AND " + e.value(":b", str(B))
		p.exact = false
	case P != "" && A != "":
		// Start where the scan begins; the other end is cut off here.
		if q.Desc {
			cond += " AND begins_with(" + sk() + ", " + e.value(":p", str(P)) + ")"
		} else {
			cond += " AND " + sk() + " > " + e.value(":a", str(A))
		}
		p.exact = false
	case P != "":
		cond += " AND begins_with(" + sk() + ", " + e.value(":p", str(P)) + ")"
	case A != "":
		cond += " AND " + sk() + " > " + e.value(":a", str(A))
	case B != "":
		cond += " AND " + sk() + " < " + e.value(":b", str(B))
	}
	p.keyCond = cond
	return p, nil
}

// match says whether sort key sk satisfies the query and whether no later
// key (in scan order) can.
func (p *plan) match(sk string) (ok, stop bool) {
	if p.exact {
		return true, false
	}
	ok = strings.HasPrefix(sk, p.prefix) && (p.after == "" || sk > p.after) && (p.before == "" || sk < p.before)
	if ok {
		return true, false
	}
	if p.q.Desc {
		stop = (p.after != "" && sk <= p.after) || (p.prefix != "" && sk < p.prefix)
	} else {
		stop = (p.before != "" && sk >= p.before) || (p.prefix != "" && sk > p.prefix && !strings.HasPrefix(sk, p.prefix))
	}
	return false, stop
}

func (s *Store) queryInput(p *plan, now int64) *dynamodb.QueryInput {
	filter := p.expr.live(now)
	in := &dynamodb.QueryInput{
		TableName:                 &s.table,
		KeyConditionExpression:    &p.keyCond,
		FilterExpression:          &filter,
		ExpressionAttributeNames:  p.expr.names,
		ExpressionAttributeValues: p.expr.values,
		ScanIndexForward:          aws.Bool(!p.q.Desc),
	}
	if p.q.Index == store.Table {
		in.ConsistentRead = aws.Bool(true)
	} else {
		in.IndexName = aws.String(p.q.Index)
	}
	return in
}

func (s *Store) query(ctx context.Context, q store.Query) ([]store.Item, string, error) {
	now := s.now().Unix()
	p, err := s.plan(q)
	if err != nil {
		return nil, "", err
	}
	if p.empty {
		return nil, "", nil
	}
	in := s.queryInput(p, now)
	if q.Cursor != "" {
		if in.ExclusiveStartKey, err = decodeCursor(q.Cursor, p); err != nil {
			return nil, "", err
		}
	}
	var items []store.Item
	if q.Limit > 0 {
		items = make([]store.Item, 0, min(q.Limit, 1000))
	}
	for {
		if q.Limit > 0 {
			// One more than needed, to learn whether another page exists.
			in.Limit = aws.Int32(int32(min(q.Limit-len(items)+1, 1<<20)))
		}
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return nil, "", fmt.Errorf("dynamostore: query %s %s: %w", q.Index, q.PK, err)
		}
		for i, raw := range out.Items {
			ok, stop := p.match(skOf(raw, p.skAttr))
			if stop {
				return items, "", nil
			}
			if !ok {
				continue
			}
			it, err := unmarshal(raw)
			if err != nil {
				return nil, "", err
			}
			items = append(items, it)
			if q.Limit > 0 && len(items) == q.Limit {
				more := out.LastEvaluatedKey != nil
				for _, r := range out.Items[i+1:] {
					ok, stop := p.match(skOf(r, p.skAttr))
					if ok || stop {
						more = ok
						break
					}
				}
				if !more {
					return items, "", nil
				}
				return items, encodeCursor(raw, p), nil
			}
		}
		if out.LastEvaluatedKey == nil {
			return items, "", nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func (s *Store) count(ctx context.Context, q store.Query) (int, error) {
	q.Limit, q.Cursor = 0, ""
	now := s.now().Unix()
	p, err := s.plan(q)
	if err != nil {
		return 0, err
	}
	if p.empty {
		return 0, nil
	}
	in := s.queryInput(p, now)
	if p.exact {
		in.Select = types.SelectCount
	} else {
		// The sort-key filter runs here, so fetch just the sort key.
		in.Select = types.SelectSpecificAttributes
		proj := p.expr.name(p.skAttr)
		in.ProjectionExpression = &proj
	}
	n := 0
	for {
		out, err := s.db.Query(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("dynamostore: count %s %s: %w", q.Index, q.PK, err)
		}
		if p.exact {
			n += int(out.Count)
		} else {
			for _, raw := range out.Items {
				ok, stop := p.match(skOf(raw, p.skAttr))
				if stop {
					return n, nil
				}
				if ok {
					n++
				}
			}
		}
		if out.LastEvaluatedKey == nil {
			return n, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func skOf(m map[string]av, attr string) string {
	if v, ok := m[attr].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// A cursor is the base64 JSON of the (string) key attributes of the last
// item returned: the table key, plus the index key for index queries.
func encodeCursor(raw map[string]av, p *plan) string {
	k := make(map[string]string, 4)
	for _, a := range [...]string{attrPK, attrSK, p.pkAttr, p.skAttr} {
		k[a] = skOf(raw, a)
	}
	b, _ := json.Marshal(k)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(c string, p *plan) (map[string]av, error) {
	bad := fmt.Errorf("dynamostore: bad cursor")
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, bad
	}
	var k map[string]string
	if err := json.Unmarshal(b, &k); err != nil {
		return nil, bad
	}
	m := make(map[string]av, 4)
	for _, a := range [...]string{attrPK, attrSK, p.pkAttr, p.skAttr} {
		v, ok := k[a]
		if !ok || v == "" {
			return nil, bad
		}
		m[a] = str(v)
	}
	if len(k) != len(m) || skOf(m, p.pkAttr) != p.q.PK {
		return nil, bad
	}
	return m, nil
}

// ---- writes ----

func (s *Store) add(ctx context.Context, k store.Key, c store.Cond, deltas map[string]int64) (store.Item, error) {
	op := store.Add(k, c, deltas)
	if err := store.Validate([]store.Op{op}); err != nil {
		return store.Item{}, err
	}
	raw, err := s.single(ctx, &op, true)
	if errors.Is(err, store.ErrConditionFailed) {
		return store.Item{}, store.ErrConditionFailed
	}
	if err != nil {
		return store.Item{}, err
	}
	return unmarshal(raw)
}

func (s *Store) transactOps(ctx context.Context, ops ...store.Op) error {
	if err := store.Validate(ops); err != nil {
		return err
	}
	// Checks that cannot fail are no work; idx maps what is left to ops.
	idx := make([]int, 0, len(ops))
	for i := range ops {
		if ops[i].Kind == store.OpCheck && ops[i].Cond == store.Always {
			continue
		}
		if ops[i].Kind > store.OpCheck || ops[i].Kind < store.OpPut {
			return fmt.Errorf("dynamostore: op %d: unknown kind %d", i, ops[i].Kind)
		}
		idx = append(idx, i)
	}
	switch {
	case len(idx) == 0:
		return nil
	case len(idx) == 1 && !ownerless(ctx, &ops[idx[0]]):
		// One conditional write costs half a transactional one.
		_, err := s.single(ctx, &ops[idx[0]], false)
		return err
	}
	return s.transact(ctx, ops, idx)
}

// ownerless says whether op, written alone, could not tell its own earlier
// attempt from another writer's: a conditional delete leaves no item to
// carry its owner, so under a request token it goes as a transaction of
// one, which DynamoDB applies once per token.
func ownerless(ctx context.Context, op *store.Op) bool {
	return op.Kind == store.OpDelete && op.Cond != store.Always && store.RequestToken(ctx) != ""
}

// creates says whether op, on an expired item, must act as on an absent one
// (which UpdateItem cannot do in one call: the old attributes survive).
func creates(op *store.Op) bool {
	return op.Kind == store.OpAdd && (op.Cond == store.Always || op.Cond == store.IfAbsent)
}

// blockedByExpired says whether a failed condition of op was caused only by
// an expired item, whose raw attributes old holds (nil if not returned).
func (s *Store) blockedByExpired(ctx context.Context, op *store.Op, old map[string]av) (int64, bool, error) {
	if !creates(op) {
		return 0, false, nil
	}
	if old == nil {
		out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: &s.table, Key: keyAttrs(op.Key), ConsistentRead: aws.Bool(true),
		})
		if err != nil {
			return 0, false, fmt.Errorf("dynamostore: get %s/%s: %w", op.Key.PK, op.Key.SK, err)
		}
		old = out.Item
	}
	ttl := ttlOf(old)
	return ttl, old != nil && s.expired(ttl, s.now().Unix()), nil
}

// removeExpired deletes the item at k if it still has the expired ttl.
func (s *Store) removeExpired(ctx context.Context, k store.Key, ttl int64) error {
	var e expr
	c := e.name(attrTTL) + " = " + e.value(":ttl", num(ttl))
	_, err := s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: &s.table, Key: keyAttrs(k), ConditionExpression: &c,
		ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
	})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("dynamostore: remove expired %s/%s: %w", k.PK, k.SK, err)
	}
	return nil
}

// owned renders the owner guard of a single-item write under token: the
// item must not already carry the token, so that an attempt repeating one
// that was applied fails its condition (and reads the item back, owner
// included, in the same call) instead of applying twice.
func (e *expr) owned(c, token string) string {
	if token == "" {
		return c
	}
	o := e.name(attrOwner)
	guard := "(attribute_not_exists(" + o + ") OR " + o + " <> " + e.value(":tok", str(token)) + ")"
	switch {
	case c == "":
		return guard
	case topLevelOr(c):
		c = "(" + c + ")" // DynamoDB refuses parentheses it deems redundant
	}
	return c + " AND " + guard
}

// topLevelOr says whether c has an OR outside parentheses.
func topLevelOr(c string) bool {
	depth := 0
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case '(':
			depth++
		case ')':
			depth--
		case ' ':
			if depth == 0 && strings.HasPrefix(c[i:], " OR ") {
				return true
			}
		}
	}
	return false
}

// mine says whether an item a failed condition returned carries token:
// this write's own earlier attempt was applied.
func mine(old map[string]av, token string) bool {
	v, ok := old[attrOwner].(*types.AttributeValueMemberS)
	return token != "" && ok && v.Value == token
}

// single runs one op as one plain conditional request. Under a request
// token the item carries the token as its owner (attribute tok): a retry
// of an attempt that was applied meets its own token and succeeds. For
// OpAdd with returnNew it returns the item as written.
func (s *Store) single(ctx context.Context, op *store.Op, returnNew bool) (map[string]av, error) {
	k := op.TargetKey()
	token := store.RequestToken(ctx)
	for attempt := 1; ; attempt++ {
		now := s.now().Unix()
		var e expr
		var err error
		var out map[string]av
		switch op.Kind {
		case store.OpCheck:
			return nil, s.check(ctx, op, now)
		case store.OpPut:
			var item map[string]av
			if item, err = marshal(&op.Item); err != nil {
				return nil, err
			}
			if token != "" {
				item[attrOwner] = str(token)
			}
			c := e.owned(e.cond(op, now), token)
			_, err = s.db.PutItem(ctx, &dynamodb.PutItemInput{
				TableName: &s.table, Item: item, ConditionExpression: nonEmpty(c),
				ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			})
		case store.OpDelete:
			// Conditional ones under a token go as transactions (ownerless).
			c := e.cond(op, now)
			_, err = s.db.DeleteItem(ctx, &dynamodb.DeleteItemInput{
				TableName: &s.table, Key: keyAttrs(k), ConditionExpression: nonEmpty(c),
				ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
			})
		case store.OpAdd:
			c := e.owned(e.cond(op, now), token)
			u := e.addUpdate(op.Deltas)
			if token != "" {
				u = strings.Replace(u, "SET ", "SET "+e.name(attrOwner)+" = :tok, ", 1)
			}
			in := &dynamodb.UpdateItemInput{
				TableName: &s.table, Key: keyAttrs(k), UpdateExpression: &u, ConditionExpression: nonEmpty(c),
				ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
				ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
			}
			if returnNew {
				in.ReturnValues = types.ReturnValueAllNew
			}
			var o *dynamodb.UpdateItemOutput
			if o, err = s.db.UpdateItem(ctx, in); err == nil {
				out = o.Attributes
			}
		default:
			return nil, fmt.Errorf("dynamostore: unknown op kind %d", op.Kind)
		}
		if err == nil {
			return out, nil
		}
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return nil, fmt.Errorf("dynamostore: write %s/%s: %w", k.PK, k.SK, err)
		}
		if mine(ccf.Item, token) {
			return ccf.Item, nil // applied by an earlier attempt: as it is now
		}
		ttl, blocked, gerr := s.blockedByExpired(ctx, op, ccf.Item)
		if gerr != nil {
			return nil, gerr
		}
		if !blocked || attempt >= expiredAttempts {
			return nil, &store.ConditionError{Key: k}
		}
		if err := s.removeExpired(ctx, k, ttl); err != nil {
			return nil, err
		}
	}
}

// check evaluates an OpCheck with one consistent read.
func (s *Store) check(ctx context.Context, op *store.Op, now int64) error {
	var e expr
	proj := e.name(attrPK) + ", " + e.name(attrVer) + ", " + e.name(attrTTL)
	out, err := s.db.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: &s.table, Key: keyAttrs(op.Key), ConsistentRead: aws.Bool(true),
		ProjectionExpression: &proj, ExpressionAttributeNames: e.names,
	})
	if err != nil {
		return fmt.Errorf("dynamostore: check %s/%s: %w", op.Key.PK, op.Key.SK, err)
	}
	present := out.Item != nil && !s.expired(ttlOf(out.Item), now)
	ok := true
	switch op.Cond {
	case store.IfAbsent:
		ok = !present
	case store.IfPresent:
		ok = present
	case store.IfVersion:
		ok = false
		if present {
			it, err := unmarshal(out.Item)
			if err != nil {
				return err
			}
			ok = it.Version == op.Version
		}
	}
	if !ok {
		return &store.ConditionError{Key: op.Key}
	}
	return nil
}

// transact runs ops[idx...] as one TransactWriteItems, under the request
// token as its ClientRequestToken: DynamoDB applies it once per token
// within ten minutes, and answers a repeat of an applied one with success.
// Conflicts and throttling are returned (store.Retrying tries again).
func (s *Store) transact(ctx context.Context, ops []store.Op, idx []int) error {
	in := &dynamodb.TransactWriteItemsInput{ClientRequestToken: nonEmpty(store.RequestToken(ctx))}
	for attempt := 1; ; attempt++ {
		now := s.now().Unix()
		items := make([]types.TransactWriteItem, len(idx))
		for j, i := range idx {
			op := &ops[i]
			var e expr
			c := e.cond(op, now)
			switch op.Kind {
			case store.OpPut:
				item, err := marshal(&op.Item)
				if err != nil {
					return err
				}
				items[j].Put = &types.Put{
					TableName: &s.table, Item: item, ConditionExpression: nonEmpty(c),
					ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
				}
			case store.OpDelete:
				items[j].Delete = &types.Delete{
					TableName: &s.table, Key: keyAttrs(op.Key), ConditionExpression: nonEmpty(c),
					ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
				}
			case store.OpAdd:
				u := e.addUpdate(op.Deltas)
				items[j].Update = &types.Update{
					TableName: &s.table, Key: keyAttrs(op.Key), UpdateExpression: &u, ConditionExpression: nonEmpty(c),
					ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
				}
				if creates(op) {
					items[j].Update.ReturnValuesOnConditionCheckFailure = types.ReturnValuesOnConditionCheckFailureAllOld
				}
			case store.OpCheck:
				items[j].ConditionCheck = &types.ConditionCheck{
					TableName: &s.table, Key: keyAttrs(op.Key), ConditionExpression: &c,
					ExpressionAttributeNames: e.names, ExpressionAttributeValues: e.values,
				}
			}
		}
		in.TransactItems = items
		_, err := s.db.TransactWriteItems(ctx, in)
		if err == nil {
			return nil
		}
		var mismatch *types.IdempotentParameterMismatchException
		if errors.As(err, &mismatch) {
			// DynamoDB keeps a token only for a transaction it applied, and
			// the token is this write's alone (store.Retrying makes one per
			// call); what differs from that attempt is the time the
			// conditions judge expiry by (:now). So an earlier attempt of
			// this write was applied.
			return nil
		}
		var tce *types.TransactionCanceledException
		if !errors.As(err, &tce) {
			return fmt.Errorf("dynamostore: transaction of %d ops: %w", len(ops), err)
		}
		type expiredItem struct {
			k   store.Key
			ttl int64
		}
		var blocked []expiredItem
		for j, r := range tce.CancellationReasons {
			if j >= len(idx) || aws.ToString(r.Code) != "ConditionalCheckFailed" {
				continue
			}
			op := &ops[idx[j]]
			ttl, exp, gerr := s.blockedByExpired(ctx, op, r.Item)
			if gerr != nil {
				return gerr
			}
			if !exp || attempt >= expiredAttempts {
				return &store.ConditionError{Key: op.TargetKey()}
			}
			blocked = append(blocked, expiredItem{op.Key, ttl})
		}
		if len(blocked) == 0 {
			// Cancelled for the moment (conflicts, throttling) or for a
			// fault of the transaction itself: classify tells which.
			return fmt.Errorf("dynamostore: transaction of %d ops: %w", len(ops), err)
		}
		for _, b := range blocked {
			if err := s.removeExpired(ctx, b.k, b.ttl); err != nil {
				return err
			}
		}
	}
}
