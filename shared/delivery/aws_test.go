package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	streamtypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	cfg "github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
	"github.com/storeadmin/adminapi/shared/pages"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue/sqstest"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
	"github.com/storeadmin/adminapi/shared/store/dynamostore/dynamotest"
)

// awsPipeline is the AWS path with real emulators: the table's stream
// (DynamoDB Local) read as the change-feed function's event source would,
// and the SQS queue (ElasticMQ) read as webhook-dispatch's would.
type awsPipeline struct {
	t        testing.TB
	noWait   bool // receive without long polling (a benchmark's loop polls)
	streams  *dynamodbstreams.Client
	iterator *string
	sqs      *sqs.Client
	queueURL string
	feed     func(context.Context, events.DynamoDBEvent) (events.DynamoDBEventResponse, error)
	dispatch func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)
}

func newAWSPipeline(t testing.TB, groups ...api.Group) (*apitest.Env, *awsPipeline) {
	ddb := dynamotest.Client(t)
	table := dynamotest.NewTableWithStream(t)
	st := dynamostore.New(ddb, table)
	queueURL := sqstest.NewQueue(t)
	q := sqsqueue.New(sqstest.Client(t), queueURL)
	q.UseVisibility(2 * time.Second)
	e := apitest.New(t, st, append([]api.Group{api.Webhooks}, groups...)...)
	e.Change(func(d *platform.Deps) {
		d.Queue = q
		api.UseStore(d, st, false) // derived work is the stream's, as in Lambda
	})

	awsCfg, err := config.LoadDefaultConfig(context.Background(), config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	if err != nil {
		t.Fatal(err)
	}
	streams := dynamodbstreams.NewFromConfig(awsCfg, func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(dynamotest.Endpoint(t)) })
	desc, err := ddb.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: &table})
	if err != nil {
		t.Fatal(err)
	}
	p := &awsPipeline{t: t, streams: streams, sqs: sqstest.Client(t), queueURL: queueURL,
		feed:     delivery.StreamHandler(e.Deps),
		dispatch: delivery.SQSHandler(q, api.Dispatcher(e.Deps, cfg.Config{RetryBase: time.Second}))}
	sd, err := streams.DescribeStream(context.Background(), &dynamodbstreams.DescribeStreamInput{StreamArn: desc.Table.LatestStreamArn})
	if err != nil || len(sd.StreamDescription.Shards) == 0 {
		t.Fatalf("stream: %v", err)
	}
	it, err := streams.GetShardIterator(context.Background(), &dynamodbstreams.GetShardIteratorInput{
		StreamArn: desc.Table.LatestStreamArn, ShardId: sd.StreamDescription.Shards[0].ShardId, ShardIteratorType: streamtypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatal(err)
	}
	p.iterator = it.ShardIterator
	return e, p
}

// pollStream hands the stream's new records to the change-feed handler
// and returns them as it got them.
func (p *awsPipeline) pollStream() events.DynamoDBEvent {
	out, err := p.streams.GetRecords(context.Background(), &dynamodbstreams.GetRecordsInput{ShardIterator: p.iterator})
	if err != nil {
		p.t.Fatal(err)
	}
	p.iterator = out.NextShardIterator
	var ev events.DynamoDBEvent
	for _, r := range out.Records {
		ev.Records = append(ev.Records, events.DynamoDBEventRecord{EventName: string(r.EventName),
			Change: events.DynamoDBStreamRecord{Keys: lambdaImage(r.Dynamodb.Keys), OldImage: lambdaImage(r.Dynamodb.OldImage),
				NewImage: lambdaImage(r.Dynamodb.NewImage), SequenceNumber: aws.ToString(r.Dynamodb.SequenceNumber)}})
	}
	p.handle(ev)
	return ev
}

// handle runs the change-feed handler on ev, which must succeed.
func (p *awsPipeline) handle(ev events.DynamoDBEvent) {
	if len(ev.Records) == 0 {
		return
	}
	resp, err := p.feed(context.Background(), ev)
	if err != nil || len(resp.BatchItemFailures) > 0 {
		p.t.Fatalf("change feed: %v %v", resp, err)
	}
}

// lambdaImage is a stream image as the Lambda event carries it (the
// table's items hold strings and numbers only).
func lambdaImage(m map[string]streamtypes.AttributeValue) map[string]events.DynamoDBAttributeValue {
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case *streamtypes.AttributeValueMemberS:
			out[k] = events.NewStringAttribute(v.Value)
		case *streamtypes.AttributeValueMemberN:
			out[k] = events.NewNumberAttribute(v.Value)
		}
	}
	return out
}

// pollQueue receives a batch and runs the dispatch handler on it, then
// deletes what it did not report as failed, as the event source mapping
// does. crash drops the batch unprocessed instead.
func (p *awsPipeline) pollQueue(crash bool) int {
	out, err := p.sqs.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &p.queueURL, MaxNumberOfMessages: 10,
		WaitTimeSeconds: map[bool]int32{false: 1, true: 0}[p.noWait], VisibilityTimeout: 2,
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameApproximateReceiveCount}})
	if err != nil {
		p.t.Fatal(err)
	}
	if crash || len(out.Messages) == 0 {
		return len(out.Messages)
	}
	var ev events.SQSEvent
	for _, m := range out.Messages {
		attrs := map[string]string{}
		for k, v := range m.Attributes {
			attrs[k] = v
		}
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
			Body: aws.ToString(m.Body), Attributes: attrs, MessageAttributes: map[string]events.SQSMessageAttribute{}})
	}
	resp, err := p.dispatch(context.Background(), ev)
	if err != nil {
		p.t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	for _, m := range out.Messages {
		if !failed[aws.ToString(m.MessageId)] {
			p.sqs.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &p.queueURL, ReceiptHandle: m.ReceiptHandle})
		}
	}
	return len(out.Messages)
}

func TestAWSPipelineDeliversRetriesAndLosesNothing(t *testing.T) {
	dynamotest.Endpoint(t)
	sqstest.Endpoint(t)
	e, p := newAWSPipeline(t)
	rc := newReceiver(t)
	rc.fail = func(n int, r *http.Request) int {
		if r.URL.Path == "/flaky" && n == 1 {
			return 500
		}
		return 0
	}
	subscribe(t, e, apitest.DemoToken, "orders/create", rc.URL+"/flaky", nil)
	const n = 5
	for i := range n {
		fire(t, e, "orders/create", map[string]any{"id": i + 1})
	}
	p.pollStream()

	// The first batch is lost with its consumer: it must come back.
	if got := p.pollQueue(true); got == 0 {
		t.Fatal("nothing was queued")
	}
	deadline := time.Now().Add(60 * time.Second)
	bodies := map[string]bool{}
	for (len(bodies) < n || len(rc.requests()) < n+1) && time.Now().Before(deadline) { // n, and the retry of the 500
		p.pollQueue(false)
		for _, r := range rc.requests() {
			if r.header.Get("X-Service-Topic") == "orders/create" {
				verifyHMAC(t, r, demoSecret)
			}
			bodies[string(r.body)] = true
		}
	}
	if len(bodies) != n {
		t.Fatalf("%d of %d notifications delivered", len(bodies), n)
	}
	// The 500 was retried under the same delivery id.
	got := rc.requests()
	first := got[0].header.Get("X-Service-Webhook-Id")
	again := 0
	for _, r := range got[1:] {
		if r.header.Get("X-Service-Webhook-Id") == first {
			again++
		}
	}
	if again != 1 {
		t.Fatalf("the failed delivery %s was sent again %d times", first, again)
	}
	if p.pollQueue(false) != 0 {
		t.Fatal("messages left on the queue")
	}
}

// The AWS path delivers a change only to the webhooks subscribed when it
// committed, even when the change feed runs after a webhook was created.
func TestAWSPipelineSkipsWebhooksCreatedAfterTheChange(t *testing.T) {
	dynamotest.Endpoint(t)
	sqstest.Endpoint(t)
	e, p := newAWSPipeline(t, api.Collections)
	rc := newReceiver(t)
	createCollection(t, e, "Earlier")
	subscribe(t, e, apitest.DemoToken, "collections/create", rc.URL, nil)
	p.pollStream() // the change feed sees the earlier collection only now
	for p.pollQueue(false) > 0 {
	}
	createCollection(t, e, "Later")
	deadline := time.Now().Add(30 * time.Second)
	for len(rc.requests()) == 0 && time.Now().Before(deadline) {
		p.pollStream()
		p.pollQueue(false)
	}
	for p.pollQueue(false) > 0 {
	}
	onlyLater(t, "the webhook created after the first collection", rc)
}

// In Lambda a request commits only the record and its guards; the change
// feed derives the rest from the stream, once, however often a batch is
// handed to it again.
func TestAWSChangeFeedDerivesOnce(t *testing.T) {
	dynamotest.Endpoint(t)
	sqstest.Endpoint(t)
	e, p := newAWSPipeline(t, api.Pages, api.Events)
	count := func() float64 {
		return e.Do("GET", "/web/pages/count.json", nil).Expect(t, 200).JSON(t)["count"].(float64)
	}
	before := count()
	pg := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "Streamed"}}).Expect(t, 201).Object(t, "page")
	events := func() int {
		return len(e.Do("GET", "/com/events.json?filter=Page&verb=create", nil).Expect(t, 200).List(t, "events"))
	}
	if got := count(); got != before {
		t.Fatalf("count %v before the stream ran, want %v: derived work ran in the request", got, before)
	}
	ev := p.pollStream()
	p.handle(ev) // a replayed batch
	if got := count(); got != before+1 {
		t.Fatalf("count %v after the stream, want %v", got, before+1)
	}
	titled := e.Do("GET", "/web/pages.json?title=Streamed", nil).Expect(t, 200).List(t, "pages")
	if len(titled) != 1 || titled[0].(map[string]any)["id"] != pg["id"] {
		t.Fatalf("title filter: %v", titled)
	}
	if n := events(); n != 1 {
		t.Fatalf("%d create events, want 1", n)
	}
	e.Do("DELETE", fmt.Sprintf("/web/pages/%d.json", int64(pg["id"].(float64))), nil).Expect(t, 200)
	p.handle(p.pollStream())
	if got := count(); got != before {
		t.Fatalf("count %v after the delete, want %v", got, before)
	}
}

// The drill of docs/operations.md, Parked changes: a change whose
// derivation keeps failing is parked with its images (and a delete's
// tomb), the stream goes on with the other changes, and a redrive, once
// the cause is fixed, derives what was parked, once.
func TestAWSChangeFeedParksAndRedrives(t *testing.T) {
	dynamotest.Endpoint(t)
	sqstest.Endpoint(t)
	e, p := newAWSPipeline(t, api.Pages, api.Events)
	ctx := context.Background()
	st := store.Innermost(e.Deps.Store)
	poisoned := true
	derive := e.Deps.Derivers[pages.Partition]
	e.Deps.Derivers[pages.Partition] = func(ctx context.Context, s store.Store, c store.Change) ([]store.Op, error) {
		img := c.New
		if img == nil {
			img = c.Old
		}
		if poisoned && strings.Contains(string(img.Data), `"Poison"`) {
			return nil, errors.New("a deriver that cannot derive this page")
		}
		return derive(ctx, s, c)
	}
	count := func() float64 {
		return e.Do("GET", "/web/pages/count.json", nil).Expect(t, 200).JSON(t)["count"].(float64)
	}
	titled := func(title string) int {
		return len(e.Do("GET", "/web/pages.json?title="+title, nil).Expect(t, 200).List(t, "pages"))
	}
	logged := func(verb string) int {
		return len(e.Do("GET", "/com/events.json?filter=Page&verb="+verb, nil).Expect(t, 200).List(t, "events"))
	}
	parked := func() int {
		changes, _, err := store.Parked(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		return len(changes)
	}
	before := count()
	poison := e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "Poison"}}).Expect(t, 201).Object(t, "page")
	e.Do("POST", "/web/pages.json", map[string]any{"page": map[string]any{"title": "Fine"}}).Expect(t, 201)
	p.pollStream() // must not fail: the poison is parked, Fine derived
	if got, n := count(), parked(); got != before+1 || n != 1 || titled("Fine") != 1 || titled("Poison") != 0 {
		t.Fatalf("after the stream: count %v (want %v), %d parked (want 1), Fine listed %d, Poison %d", got, before+1, n, titled("Fine"), titled("Poison"))
	}
	// Its delete fails too and is parked with its tomb (who deleted it).
	e.Do("DELETE", fmt.Sprintf("/web/pages/%d.json", int64(poison["id"].(float64))), nil).Expect(t, 200)
	p.pollStream()
	if n := parked(); n != 2 {
		t.Fatalf("%d parked after the delete, want 2", n)
	}

	poisoned = false // the cause fixed
	n, err := e.Deps.Derivers.Redrive(ctx, st, e.Deps.Clock.Now())
	if err != nil || n != 2 {
		t.Fatalf("redrive derived %d (error %v), want 2", n, err)
	}
	if got := count(); got != before+1 || parked() != 0 || titled("Poison") != 0 {
		t.Fatalf("after the redrive: count %v (want %v), %d parked, Poison listed %d", got, before+1, parked(), titled("Poison"))
	}
	destroyed := e.Do("GET", "/com/events.json?filter=Page&verb=destroy", nil).Expect(t, 200).List(t, "events")
	if len(destroyed) != 1 || destroyed[0].(map[string]any)["author"] == "" || logged("create") != 2 {
		t.Fatalf("after the redrive: destroy events %v, %d create events (want 2)", destroyed, logged("create"))
	}
	if n, err := e.Deps.Derivers.Redrive(ctx, st, e.Deps.Clock.Now()); n != 0 || err != nil {
		t.Fatalf("a second redrive derived %d (error %v), want nothing", n, err)
	}
	p.pollStream() // the redrive's own writes derive nothing more
	if got := count(); got != before+1 || logged("create") != 2 {
		t.Fatalf("after the redrive's stream records: count %v, %d create events", got, logged("create"))
	}
}

// A removed owner's clean-up is derived: the collection's removal writes
// its clean-up marker, whose stream record removes its collects, never in
// the request.
func TestAWSChangeFeedCleansUpARemovedOwner(t *testing.T) {
	dynamotest.Endpoint(t)
	sqstest.Endpoint(t)
	e, p := newAWSPipeline(t, api.Collections)
	cc := e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": "Owner"}}).Expect(t, 201).Object(t, "custom_collection")
	id := int64(cc["id"].(float64))
	e.Do("POST", "/com/collects.json", map[string]any{"collect": map[string]any{"product_id": 632910392, "collection_id": id}}).Expect(t, 201)
	collects := func() int { // as stored: a list filters out a removed collection's
		items, _, err := store.Innermost(e.Deps.Store).Query(context.Background(), store.Query{PK: fmt.Sprintf("collect#guard#%d", id)})
		if err != nil {
			t.Fatal(err)
		}
		return len(items)
	}
	p.pollStream()
	e.Do("DELETE", fmt.Sprintf("/com/custom_collections/%d.json", id), nil).Expect(t, 200)
	if n := collects(); n != 1 {
		t.Fatalf("%d collects right after the delete, want 1: the clean-up ran in the request", n)
	}
	for range 3 { // the removal, then its clean-up marker, then the clean-up's own removals
		p.pollStream()
	}
	if n := collects(); n != 0 {
		t.Fatalf("%d collects after the stream, want 0", n)
	}
	if items, _, err := store.Innermost(e.Deps.Store).Query(context.Background(), store.Query{PK: store.CleanUpPartition}); err != nil || len(items) != 0 {
		t.Fatalf("clean-up markers left: %v (error %v)", items, err)
	}
}

// BenchmarkAWSFeedLatency measures, against DynamoDB Local's stream and
// ElasticMQ, how long after its commit a change is seen: its event in the
// log, its collection in a filtered list, and its webhook delivered. The
// stream is read as the event source mapping reads it, as soon as the
// request answered (no batching window: add MaximumBatchingWindowInSeconds,
// 1 s, for AWS), so the figures are the feed's and the pipeline's own work.
//
//	DYNAMODB_ENDPOINT=... SQS_ENDPOINT=... go test -run '^$' -bench BenchmarkAWSFeedLatency -benchtime 30x ./shared/delivery/
func BenchmarkAWSFeedLatency(b *testing.B) {
	dynamotest.Endpoint(b)
	sqstest.Endpoint(b)
	e, p := newAWSPipeline(b, api.Collections, api.Events)
	rc := newReceiver(b)
	subscribe(b, e, apitest.DemoToken, "collections/create", rc.URL, nil)
	p.pollStream()
	p.noWait = true // as the event source mapping's continuous long poll: no wait on an empty look
	var toEvent, toList, toDelivery []time.Duration
	b.ResetTimer()
	for i := range b.N {
		title := fmt.Sprintf("Latency %d", i)
		start := time.Now()
		cc := e.Do("POST", "/com/custom_collections.json", map[string]any{"custom_collection": map[string]any{"title": title}}).Expect(b, 201).Object(b, "custom_collection")
		id := int64(cc["id"].(float64))
		var event, listed, delivered time.Duration
		for delivered == 0 || event == 0 || listed == 0 {
			if time.Since(start) > 30*time.Second {
				b.Fatalf("collection %d not seen within 30 s: event %v, list %v, delivery %v", id, event, listed, delivered)
			}
			p.pollStream()
			if event == 0 && len(e.Do("GET", fmt.Sprintf("/com/events.json?filter=Collection&verb=create&since_id=%d", id-1), nil).Expect(b, 200).List(b, "events")) > 0 {
				event = time.Since(start)
			}
			if listed == 0 && len(e.Do("GET", "/com/custom_collections.json?title="+url.QueryEscape(title), nil).Expect(b, 200).List(b, "custom_collections")) == 1 {
				listed = time.Since(start)
			}
			p.pollQueue(false)
			if delivered == 0 && len(rc.requests()) > i {
				delivered = time.Since(start)
			}
		}
		toEvent, toList, toDelivery = append(toEvent, event), append(toList, listed), append(toDelivery, delivered)
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		ds   []time.Duration
	}{{"event", toEvent}, {"list", toList}, {"delivery", toDelivery}} {
		slices.Sort(m.ds)
		b.ReportMetric(float64(m.ds[len(m.ds)/2].Microseconds())/1000, m.name+"-p50-ms")
		b.ReportMetric(float64(m.ds[len(m.ds)*99/100].Microseconds())/1000, m.name+"-p99-ms")
	}
}
