// Package dynamotest gives tests a DynamoDB Local table.
//
// The endpoint comes from DYNAMODB_ENDPOINT (start one with
// infra/emulators/dynamodb-local.sh start). Without it tests are skipped,
// unless REQUIRE_EMULATORS=1, in which case they fail: CI never skips
// silently.
//
// DYNAMODB_ENDPOINT may list several servers, comma-separated: DynamoDB
// Local answers one request at a time, so one server holds back test
// processes running side by side. Each process keeps to one server, the
// first that no other process holds (a lock on a file per server, released
// when the process ends), so that go test -p N over N servers gives each
// package its own.
package dynamotest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/storeadmin/adminapi/shared/emulatortest"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/store/dynamostore"
)

// Endpoint returns this process's server of DYNAMODB_ENDPOINT, or skips
// (fails under REQUIRE_EMULATORS=1) when unset.
func Endpoint(t testing.TB) string {
	t.Helper()
	list := emulatortest.Endpoint(t, "DYNAMODB_ENDPOINT", "infra/emulators/dynamodb-local.sh")
	pickOnce.Do(func() { picked = pick(strings.Split(list, ",")) })
	return picked
}

var (
	pickOnce sync.Once
	picked   string
	held     *os.File //nolint:unused // the slot's lock: kept open (unread) so the lock holds until the process exits
)

// pick returns the first server whose slot no other process holds, or one
// by process id when every slot is taken (more processes than servers).
func pick(servers []string) string {
	if len(servers) == 1 {
		return servers[0]
	}
	for _, s := range servers {
		sum := sha256.Sum256([]byte(s))
		f, err := os.OpenFile(filepath.Join(os.TempDir(), "dynamotest-"+hex.EncodeToString(sum[:8])+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			held = f
			return s
		}
		f.Close()
	}
	return servers[os.Getpid()%len(servers)]
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

// NewTable creates a fresh, uniquely named table, deleted when the test
// ends. It has no change stream (see dynamostore.WithoutStream): a test of
// the stream asks for one with NewTableWithStream.
func NewTable(t testing.TB) string {
	t.Helper()
	return newTable(t, dynamostore.WithoutStream())
}

// NewTableWithStream is NewTable with the change stream template.yaml gives
// the table.
func NewTableWithStream(t testing.TB) string {
	t.Helper()
	return newTable(t)
}

func newTable(t testing.TB, opts ...dynamostore.TableOption) string {
	t.Helper()
	c := Client(t)
	name := emulatortest.Name(t, 255)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := dynamostore.CreateTable(ctx, c, name, opts...); err != nil {
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
