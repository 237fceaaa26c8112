package dynamostore_test

import (
	"context"
	"errors"
	"io"
	"net/http"
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
	mu    sync.Mutex
	calls map[string]int
	reply func(target string, n int) (int, string)
}

func (f *fakeHTTP) Do(r *http.Request) (*http.Response, error) {
	target := strings.TrimPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810.")
	f.mu.Lock()
	f.calls[target]++
	n := f.calls[target]
	f.mu.Unlock()
	io.Copy(io.Discard, r.Body)
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
		Retryer:                         aws.NopRetryer{},
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
)

func twoOps() []store.Op {
	return []store.Op{
		store.Add(store.Key{PK: "p", SK: "a"}, store.IfPresent, map[string]int64{"n": 1}),
		store.Put(store.Item{PK: "p", SK: "b"}, store.IfAbsent, 0),
	}
}

func TestTransactionConflictRetried(t *testing.T) {
	s, f := fakeStore(func(target string, n int) (int, string) {
		if target == "TransactWriteItems" && n <= 3 {
			return 400, conflictCancel
		}
		return 200, `{}`
	})
	start := time.Now()
	if err := s.Transact(t.Context(), twoOps()...); err != nil {
		t.Fatalf("want success after retries, got %v", err)
	}
	if f.calls["TransactWriteItems"] != 4 {
		t.Fatalf("%d TransactWriteItems calls, want 4", f.calls["TransactWriteItems"])
	}
	t.Logf("3 retries took %v", time.Since(start))
}

func TestTransactionConflictGivesUp(t *testing.T) {
	s, f := fakeStore(func(string, int) (int, string) { return 400, conflictCancel })
	err := s.Transact(t.Context(), twoOps()...)
	if err == nil || errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("want a non-condition error, got %v", err)
	}
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("want the cancellation wrapped, got %v", err)
	}
	if n := f.calls["TransactWriteItems"]; n < 3 || n > 20 {
		t.Fatalf("%d attempts", n)
	}
}

func TestTransactionConditionIndex(t *testing.T) {
	s, f := fakeStore(func(string, int) (int, string) { return 400, conditionCancel })
	ops := append(twoOps(), store.Check(store.Key{PK: "p", SK: "c"}, store.IfPresent, 0))
	err := s.Transact(t.Context(), ops...)
	if store.FailedOp(err) != 2 {
		t.Fatalf("want op 2 failed, got %v", err)
	}
	if f.calls["TransactWriteItems"] != 1 {
		t.Fatalf("condition failure retried: %d calls", f.calls["TransactWriteItems"])
	}
}

func TestSingleWriteConflictRetried(t *testing.T) {
	s, f := fakeStore(func(target string, n int) (int, string) {
		if n <= 2 {
			return 400, conflictException
		}
		return 200, `{}`
	})
	if err := s.Transact(t.Context(), store.Put(store.Item{PK: "p", SK: "a"}, store.IfAbsent, 0)); err != nil {
		t.Fatal(err)
	}
	if f.calls["PutItem"] != 3 {
		t.Fatalf("%d PutItem calls, want 3", f.calls["PutItem"])
	}
}

func TestRetryHonoursContext(t *testing.T) {
	s, _ := fakeStore(func(string, int) (int, string) { return 400, conflictCancel })
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := s.Transact(ctx, twoOps()...)
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
