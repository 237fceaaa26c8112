package dynamostore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
	"github.com/storeadmin/adminapi/shared/store/storetest"
)

func TestConformance(t *testing.T) {
	dynamotest.Endpoint(t)
	storetest.Run(t, func(t *testing.T) store.Store { return dynamotest.Open(t) })
}

// TestTableShape checks CreateTable against what template.yaml declares,
// and that it tolerates an existing table.
func TestTableShape(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.NewTableWithStream(t)
	if err := dynamostore.CreateTable(t.Context(), c, name); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
	d, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	tb := d.Table
	if tb.TableStatus != types.TableStatusActive {
		t.Errorf("status %s", tb.TableStatus)
	}
	if tb.BillingModeSummary == nil || tb.BillingModeSummary.BillingMode != types.BillingModePayPerRequest {
		t.Errorf("billing %+v", tb.BillingModeSummary)
	}
	if s := tb.StreamSpecification; s == nil || !aws.ToBool(s.StreamEnabled) || s.StreamViewType != types.StreamViewTypeNewAndOldImages {
		t.Errorf("stream %+v", s)
	}
	keys := func(ks []types.KeySchemaElement) string {
		var b strings.Builder
		for _, k := range ks {
			b.WriteString(aws.ToString(k.AttributeName) + ":" + string(k.KeyType) + " ")
		}
		return b.String()
	}
	if got := keys(tb.KeySchema); got != "PK:HASH SK:RANGE " {
		t.Errorf("key schema %s", got)
	}
	gsis := map[string]string{}
	for _, g := range tb.GlobalSecondaryIndexes {
		if g.Projection == nil || g.Projection.ProjectionType != types.ProjectionTypeAll {
			t.Errorf("%s projection %+v", aws.ToString(g.IndexName), g.Projection)
		}
		gsis[aws.ToString(g.IndexName)] = keys(g.KeySchema)
	}
	if gsis["GSI1"] != "GSI1PK:HASH GSI1SK:RANGE " || gsis["GSI2"] != "GSI2PK:HASH GSI2SK:RANGE " || len(gsis) != 2 {
		t.Errorf("indexes %v", gsis)
	}
	ttl, err := c.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: &name})
	if err != nil {
		t.Fatal(err)
	}
	if d := ttl.TimeToLiveDescription; d == nil || d.TimeToLiveStatus != types.TimeToLiveStatusEnabled || aws.ToString(d.AttributeName) != "ttl" {
		t.Errorf("ttl %+v", d)
	}
}

// TestAttributeLayout pins the stored attributes (stream consumers and
// the console read them).
func TestAttributeLayout(t *testing.T) {
	c := dynamotest.Client(t)
	name := dynamotest.NewTable(t)
	s := dynamostore.New(c, name)
	full := store.Item{PK: "p", SK: "s", GSI1PK: "g1", GSI1SK: "g1s", GSI2PK: "g2", GSI2SK: "g2s", Version: 3,
		Nums: map[string]int64{"stock": -2}, Data: []byte(`{"a":1}`), ExpiresAt: 4102444800}
	bare := store.Item{PK: "p", SK: "bare"}
	for _, it := range []store.Item{full, bare} {
		if err := s.Transact(t.Context(), store.Put(it, store.Always, 0)); err != nil {
			t.Fatal(err)
		}
	}
	raw := func(sk string) map[string]string {
		out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: &name, ConsistentRead: aws.Bool(true),
			Key: map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: "p"}, "SK": &types.AttributeValueMemberS{Value: sk}}})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for k, v := range out.Item {
			switch v := v.(type) {
			case *types.AttributeValueMemberS:
				m[k] = "S:" + v.Value
			case *types.AttributeValueMemberN:
				m[k] = "N:" + v.Value
			default:
				m[k] = "?"
			}
		}
		return m
	}
	want := map[string]string{"PK": "S:p", "SK": "S:s", "GSI1PK": "S:g1", "GSI1SK": "S:g1s", "GSI2PK": "S:g2", "GSI2SK": "S:g2s",
		"v": "N:3", "d": `S:{"a":1}`, "n_stock": "N:-2", "ttl": "N:4102444800"}
	if got := raw("s"); !mapsEqual(got, want) {
		t.Errorf("full item:\n got %v\nwant %v", got, want)
	}
	if got, want := raw("bare"), map[string]string{"PK": "S:p", "SK": "S:bare", "v": "N:0"}; !mapsEqual(got, want) {
		t.Errorf("bare item:\n got %v\nwant %v", got, want)
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// ---- without an emulator: a scripted HTTP transport ----

type fakeHTTP struct {
	mu     sync.Mutex
	calls  map[string]int
	tokens []string // the ClientRequestToken of each TransactWriteItems
	reply  func(target string, n int) (int, string)
}

func (f *fakeHTTP) total() int {
	n := 0
	for _, c := range f.calls {
		n += c
	}
	return n
}

func (f *fakeHTTP) Do(r *http.Request) (*http.Response, error) {
	target := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	f.mu.Lock()
	f.calls[target]++
	n := f.calls[target]
	req, _ := io.ReadAll(r.Body)
	if target == "TransactWriteItems" {
		var in struct{ ClientRequestToken string }
		json.Unmarshal(req, &in)
		f.tokens = append(f.tokens, in.ClientRequestToken)
	}
	f.mu.Unlock()
	code, body := f.reply(target, n)
	return &http.Response{
		StatusCode: code, Status: http.StatusText(code), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:          io.NopCloser(strings.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       r,
	}, nil
}

func fakeStore(reply func(target string, n int) (int, string)) (*dynamostore.Store, *fakeHTTP) {
	f := &fakeHTTP{calls: map[string]int{}, reply: reply}
	c := dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String("http://fake.invalid"),
		Credentials:                     credentials.NewStaticCredentialsProvider("a", "b", ""),
		HTTPClient:                      f,
		DisableValidateResponseChecksum: true,
	})
	return dynamostore.New(c, "t"), f
}

const (
	conflictCancel = `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","Message":"Transaction cancelled",` +
		`"CancellationReasons":[{"Code":"None"},{"Code":"TransactionConflict","Message":"conflict"}]}`
	conditionCancel = `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionCanceledException","Message":"Transaction cancelled",` +
		`"CancellationReasons":[{"Code":"None"},{"Code":"None"},{"Code":"ConditionalCheckFailed","Message":"failed"}]}`
	conflictException = `{"__type":"com.amazonaws.dynamodb.v20120810#TransactionConflictException","message":"conflict"}`
	throttled         = `{"__type":"com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException","message":"slow down"}`
)

func twoOps() []store.Op {
	return []store.Op{
		store.Add(store.Key{PK: "p", SK: "a"}, store.IfPresent, map[string]int64{"n": 1}),
		store.Put(store.Item{PK: "p", SK: "b"}, store.IfAbsent, 0),
	}
}

// One store call is one request: the SDK's retryer is off even on a
// client that has one, and conflicts and throttling are handed on at once,
// certainly not applied, for store.Retrying, the one retry layer, whose
// budget bounds what a write costs: RetryAttempts requests.
func TestOneRequestPerCall(t *testing.T) {
	for _, reply := range []string{conflictCancel, conflictException, throttled} {
		s, f := fakeStore(func(string, int) (int, string) { return 400, reply })
		for _, ops := range [][]store.Op{twoOps(), twoOps()[1:]} {
			clear(f.calls)
			err := s.Transact(t.Context(), ops...)
			var u *store.UnavailableError
			if !errors.As(err, &u) || u.MayHaveCommitted {
				t.Fatalf("%s: want unavailable, not applied; got %v", reply, err)
			}
			if n := f.total(); n != 1 {
				t.Fatalf("%s: %d requests for one call", reply, n)
			}
			clear(f.calls)
			if err := store.Retrying(s).Transact(t.Context(), ops...); !errors.Is(err, store.ErrUnavailable) {
				t.Fatalf("%s: retried, want unavailable, got %v", reply, err)
			}
			if n := f.total(); n != store.RetryAttempts {
				t.Fatalf("%s: %d requests for one retried call, want %d", reply, n, store.RetryAttempts)
			}
		}
	}
}

// A transaction whose outcome is unknown (a server error) is tried again
// under the same ClientRequestToken until an attempt answers; every
// attempt carries the token.
func TestUncertainTransactionResolvedUnderItsToken(t *testing.T) {
	s, f := fakeStore(func(target string, n int) (int, string) {
		if n <= 4 {
			return 500, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}`
		}
		return 200, `{}`
	})
	if err := store.Retrying(s).Transact(t.Context(), twoOps()...); err != nil {
		t.Fatalf("want success once an attempt answers, got %v", err)
	}
	if n := f.calls["TransactWriteItems"]; n != 5 {
		t.Fatalf("%d TransactWriteItems calls, want 5", n)
	}
	if len(f.tokens) != 5 || f.tokens[0] == "" || len(slices.Compact(slices.Clone(f.tokens))) != 1 {
		t.Fatalf("ClientRequestTokens %q, want one token on every attempt", f.tokens)
	}
	// Past ResolveAttempts it stays unknown, and says so.
	s, f = fakeStore(func(string, int) (int, string) {
		return 500, `{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"boom"}`
	})
	err := store.Retrying(s).Transact(t.Context(), twoOps()...)
	var u *store.UnavailableError
	if !errors.As(err, &u) || !u.MayHaveCommitted || f.total() != store.ResolveAttempts {
		t.Fatalf("%d requests, %v; want %d, may have committed", f.total(), err, store.ResolveAttempts)
	}
}

// IdempotentParameterMismatch answers an attempt whose earlier one under
// the same token was applied (only the expiry time moved): success.
func TestTokenMismatchIsAnEarlierCommit(t *testing.T) {
	s, _ := fakeStore(func(string, int) (int, string) {
		return 400, `{"__type":"com.amazonaws.dynamodb.v20120810#IdempotentParameterMismatchException","message":"mismatch"}`
	})
	if err := s.Transact(store.WithRequestToken(t.Context(), "t1"), twoOps()...); err != nil {
		t.Fatal(err)
	}
}

func TestTransactionConditionKey(t *testing.T) {
	s, f := fakeStore(func(string, int) (int, string) { return 400, conditionCancel })
	ops := append(twoOps(), store.Check(store.Key{PK: "p", SK: "c"}, store.IfPresent, 0))
	err := s.Transact(t.Context(), ops...)
	if !store.FailedOn(err, store.Key{PK: "p", SK: "c"}) {
		t.Fatalf("want p/c's condition failed, got %v", err)
	}
	if f.calls["TransactWriteItems"] != 1 {
		t.Fatalf("condition failure retried: %d calls", f.calls["TransactWriteItems"])
	}
}

func TestRetryHonoursContext(t *testing.T) {
	s, _ := fakeStore(func(string, int) (int, string) { return 400, conflictCancel })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := store.Retrying(s).Transact(ctx, twoOps()...)
	if err == nil || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
}

func TestRejectedBeforeSending(t *testing.T) {
	s, f := fakeStore(func(string, int) (int, string) { return 200, `{}` })
	ctx := t.Context()
	cases := map[string]error{
		"half GSI1 key": s.Transact(ctx, store.Put(store.Item{PK: "p", SK: "a", GSI1PK: "g"}, store.Always, 0)),
		"half GSI2 key": s.Transact(ctx, store.Put(store.Item{PK: "p", SK: "a", GSI2SK: "g"}, store.Always, 0)),
		"non-UTF-8":     s.Transact(ctx, store.Put(store.Item{PK: "p", SK: "a", Data: []byte{'"', 0xff, '"'}}, store.Always, 0)),
		"empty key":     s.Transact(ctx, store.Put(store.Item{PK: "p"}, store.Always, 0)),
	}
	_, _, err := s.Query(ctx, store.Query{PK: "p", Cursor: "e30"}) // {}
	cases["empty cursor"] = err
	_, _, err = s.Query(ctx, store.Query{PK: "other", Cursor: "eyJQSyI6InAiLCJTSyI6ImEifQ"}) // {"PK":"p","SK":"a"}
	cases["cursor of another partition"] = err
	_, _, err = s.Query(ctx, store.Query{Index: store.GSI1, PK: "p", Cursor: "eyJQSyI6InAiLCJTSyI6ImEifQ"})
	cases["table cursor on an index"] = err
	for name, err := range cases {
		if err == nil || errors.Is(err, store.ErrConditionFailed) {
			t.Errorf("%s: want an error, got %v", name, err)
		}
	}
	if len(f.calls) != 0 {
		t.Fatalf("requests sent: %v", f.calls)
	}
}
