// Package sqstest gives tests an SQS queue on ElasticMQ.
//
// The endpoint comes from SQS_ENDPOINT (start one with
// infra/emulators/elasticmq.sh start). Without it tests are skipped,
// unless REQUIRE_EMULATORS=1, in which case they fail: CI never skips
// silently.
package sqstest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/storeadmin/adminapi/shared/queue"
	"github.com/storeadmin/adminapi/shared/queue/sqsqueue"
)

// Endpoint returns SQS_ENDPOINT, or skips (fails under REQUIRE_EMULATORS=1) when unset.
func Endpoint(t testing.TB) string {
	t.Helper()
	ep := os.Getenv("SQS_ENDPOINT")
	if ep == "" {
		if os.Getenv("REQUIRE_EMULATORS") == "1" {
			t.Fatal("SQS_ENDPOINT is unset and REQUIRE_EMULATORS=1 (start one: infra/emulators/elasticmq.sh start)")
		}
		t.Skip("SQS_ENDPOINT is unset (start one: infra/emulators/elasticmq.sh start)")
	}
	return ep
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
	var b [6]byte
	rand.Read(b[:])
	// Queue names: up to 80 of [A-Za-z0-9_-].
	name := sanitize(t.Name())
	if len(name) > 64 {
		name = name[len(name)-64:]
	}
	name = "t_" + name + "_" + hex.EncodeToString(b[:])
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
func Open(t testing.TB) queue.Queue {
	t.Helper()
	return sqsqueue.New(Client(t), NewQueue(t))
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '-':
			return r
		}
		return '_'
	}, s)
}
