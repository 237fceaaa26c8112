// Package sqstest gives tests an SQS queue on ElasticMQ.
//
// The endpoint comes from SQS_ENDPOINT (start one with
// infra/emulators/elasticmq.sh start). Without it tests are skipped,
// unless REQUIRE_EMULATORS=1, in which case they fail: CI never skips
// silently.
package sqstest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/storeadmin/adminapi/shared/emulatortest"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue"
)

// Endpoint returns SQS_ENDPOINT, or skips (fails under REQUIRE_EMULATORS=1) when unset.
func Endpoint(t testing.TB) string {
	t.Helper()
	return emulatortest.Endpoint(t, "SQS_ENDPOINT", "infra/emulators/elasticmq.sh")
}

var (
	mu      sync.Mutex
	clients = map[string]*sqs.Client{}
)

// Client returns the process's client for Endpoint(t), created once.
func Client(t testing.TB) *sqs.Client {
	t.Helper()
	ep := Endpoint(t)
	mu.Lock()
	defer mu.Unlock()
	if c, ok := clients[ep]; ok {
		return c
	}
	c, err := sqsqueue.NewClient(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	clients[ep] = c
	return c
}

// NewQueue creates a fresh, uniquely named queue, deleted when the test
// ends, and returns its URL.
func NewQueue(t testing.TB) string {
	t.Helper()
	c := Client(t)
	name := emulatortest.Name(t, 80)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url, err := sqsqueue.CreateQueue(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
			t.Logf("delete queue %s: %v", name, err)
		}
	})
	return url
}

// Open returns a queue.Queue on a fresh queue.
func Open(t testing.TB) *sqsqueue.Queue {
	t.Helper()
	return sqsqueue.New(Client(t), NewQueue(t))
}
