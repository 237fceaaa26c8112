package delivery_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/outbox"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/webhooks"
)

// drained waits until every notification is fanned out and every queued
// delivery settled (acked): nothing more will arrive. The waits here are
// long for a loaded DynamoDB Local; they end as soon as the condition holds.
func drained(t *testing.T, e *apitest.Env) {
	t.Helper()
	waitFor(t, 60*time.Second, "the pipeline to drain", func() bool {
		for _, pk := range []string{outbox.Partition, "queue#" + api.DeliveryQueue} { // storequeue's partition
			items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: pk, Limit: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(items) > 0 {
				return false
			}
		}
		return true
	})
}

// A delivery never carries what its app may not read: a webhook stored
// without the topic's scope (as the code before scopes wrote it) and one
// whose app lost the scope after subscribing receive nothing, while a
// properly scoped webhook of the same topic receives.
func TestDeliveriesNeedTheTopicsReadScope(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const revokedApp, revokedToken = 1003, "revoked-app-token-0123456789abcdef"
		scoped, legacy, revoked := newReceiver(t), newReceiver(t), newReceiver(t)
		subscribe(t, e, apitest.DemoToken, "orders/create", scoped.URL, nil)

		// The read-only app's orders/create webhook, written as before scopes.
		id := e.Deps.IDs.Next()
		sk := records.IDSK(id)
		err := e.Deps.Store.Transact(context.Background(), store.Put(store.Item{
			PK: webhooks.Partition(1002), SK: sk, GSI1PK: webhooks.TopicPartition("orders/create"), GSI1SK: sk, Version: 1,
			Data: []byte(fmt.Sprintf(`{"id":%d,"address":%q,"topic":"orders/create","format":"json","fields":[],"metafield_namespaces":[],"app_id":1002}`, id, legacy.URL)),
		}, store.IfAbsent, 0))
		if err != nil {
			t.Fatal(err)
		}
		if l := e.DoAs(apitest.ReadOnlyToken, "GET", "/admin/webhooks.json", nil).Expect(t, 200).List(t, "webhooks"); len(l) != 1 {
			t.Fatalf("the stored webhook is not the read-only app's: %v", l)
		}

		e.SetApp(revokedApp, revokedToken, "read_orders")
		subscribe(t, e, revokedToken, "orders/create", revoked.URL, nil)
		e.SetApp(revokedApp, revokedToken, "read_content")

		startPipeline(t, e, 10*time.Millisecond)
		fire(t, e, "orders/create", map[string]any{"id": 1, "total_price": "10.00"})
		waitFor(t, 60*time.Second, "the scoped delivery", func() bool { return len(scoped.requests()) == 1 })
		drained(t, e)
		if n := len(legacy.requests()); n != 0 {
			t.Fatalf("a webhook stored without read_orders got %d orders", n)
		}
		if n := len(revoked.requests()); n != 0 {
			t.Fatalf("a webhook whose app lost read_orders got %d orders", n)
		}
		if n := len(scoped.requests()); n != 1 {
			t.Fatalf("the scoped webhook got %d deliveries", n)
		}
	}, api.Webhooks)
}

// Ten concurrent uninstalls with one token: the store lets one happen (one
// 200; the others find the token gone, 401) and it notifies once.
func TestConcurrentUninstallsNotifyOnce(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		rc := newReceiver(t)
		subscribe(t, e, apitest.DemoToken, "app/uninstalled", rc.URL, nil)
		startPipeline(t, e, 10*time.Millisecond)

		const n = 10
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- e.Do("DELETE", "/admin/api_permissions/current.json", nil).Status
			}()
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for s := range statuses {
			got[s]++
		}
		if got[http.StatusOK] != 1 || got[http.StatusUnauthorized] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 401", got, n-1)
		}
		waitFor(t, 60*time.Second, "app/uninstalled", func() bool { return len(rc.requests()) >= 1 })
		drained(t, e)
		if r := rc.requests(); len(r) != 1 {
			ids := []string{}
			for _, x := range r {
				ids = append(ids, x.header.Get("X-Service-Webhook-Id"))
			}
			t.Fatalf("%d app/uninstalled deliveries, want 1: %v", len(r), ids)
		}
		verifyHMAC(t, rc.requests()[0], demoSecret)
	}, api.Webhooks)
}
