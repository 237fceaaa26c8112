// Package dynamotest gives tests a DynamoDB Local table.
//
// The endpoint comes from DYNAMODB_ENDPOINT (start one with
// infra/emulators/dynamodb-local.sh start). Without it tests are skipped,
// unless REQUIRE_EMULATORS=1, in which case they fail: CI never skips
// silently.
package dynamotest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/storeadmin/adminapi/shared/emulatortest"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
)

// Endpoint returns DYNAMODB_ENDPOINT, or skips (fails under REQUIRE_EMULATORS=1) when unset.
func Endpoint(t testing.TB) string {
	t.Helper()
	return emulatortest.Endpoint(t, "DYNAMODB_ENDPOINT", "infra/emulators/dynamodb-local.sh")
}

var (
	mu      sync.Mutex
	clients = map[string]*dynamodb.Client{}
)

// Client returns the process's client for Endpoint(t), created once.
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	ep := Endpoint(t)
	mu.Lock()
	defer mu.Unlock()
	if c, ok := clients[ep]; ok {
		return c
	}
	c, err := dynamostore.NewClient(context.Background(), ep)
	if err != nil {
		t.Fatal(err)
	}
	clients[ep] = c
	return c
}

// NewTable creates a fresh, uniquely named table, deleted when the test ends.
func NewTable(t testing.TB) string {
	t.Helper()
	c := Client(t)
	name := emulatortest.Name(t, 255)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, c, name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			t.Logf("delete table %s: %v", name, err)
		}
	})
	return name
}

// Open returns a store on a fresh table.
func Open(t testing.TB) store.Store {
	t.Helper()
	return dynamostore.New(Client(t), NewTable(t))
}
