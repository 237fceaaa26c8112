package apipermissions_test

import (
	"context"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/scripttags"
	"github.com/storeadmin/adminapi/shared/store"
)

const (
	uninstall  = "/admin/api_permissions/current.json"
	otherApp   = 2002
	otherToken = "other-app-token-0123456789abcdef"
)

// leave gives each app a webhook, a script tag and a fulfillment service.
func leave(t *testing.T, e *apitest.Env, token, name string) {
	t.Helper()
	e.DoAs(token, "POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{
		"topic": "app/uninstalled", "address": "https://hooks.example.com/" + name}}).Expect(t, 201)
	e.DoAs(token, "POST", "/web/script_tags.json", map[string]any{"script_tag": map[string]any{
		"event": "onload", "src": "https://cdn.example.com/" + name + ".js"}}).Expect(t, 201)
	e.DoAs(token, "POST", "/admin/fulfillment_services.json", map[string]any{"fulfillment_service": map[string]any{
		"name": name + " Fulfillment"}}).Expect(t, 201)
}

func count(t *testing.T, e *apitest.Env, pk string) int {
	t.Helper()
	items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: pk})
	if err != nil {
		t.Fatal(err)
	}
	return len(items)
}

// Uninstalling revokes the caller's token and deletes the caller's
// webhooks, script tags and fulfillment services, and nobody else's.
func TestUninstall(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		e.SetApp(otherApp, otherToken, "write_script_tags", "read_script_tags", "write_fulfillments", "read_fulfillments")
		leave(t, e, apitest.DemoToken, "Demo")
		leave(t, e, otherToken, "Other")

		if got := string(e.Do("DELETE", uninstall, nil).Expect(t, 200).Body); got != "{}\n" {
			t.Fatalf("uninstall answered %q", got)
		}
		e.Do("GET", "/admin/webhooks.json", nil).Expect(t, 401)
		e.Do("DELETE", uninstall, nil).Expect(t, 401)

		if n := count(t, e, "webhook#app#1001"); n != 0 {
			t.Errorf("%d webhooks of the uninstalled app left", n)
		}
		if n := count(t, e, scripttags.Partition(1001)); n != 0 {
			t.Errorf("%d script tags of the uninstalled app left", n)
		}
		svcs := e.DoAs(otherToken, "GET", "/admin/fulfillment_services.json?scope=all", nil).Expect(t, 200).List(t, "fulfillment_services")
		if len(svcs) != 1 || svcs[0].(map[string]any)["name"] != "Other Fulfillment" {
			t.Errorf("fulfillment services after uninstall: %v", svcs)
		}
		if n := e.DoAs(otherToken, "GET", "/admin/webhooks/count.json", nil).Expect(t, 200).JSON(t)["count"]; n != 1.0 {
			t.Errorf("the other app's webhooks: %v", n)
		}
		if tags := e.DoAs(otherToken, "GET", "/web/script_tags.json", nil).Expect(t, 200).List(t, "script_tags"); len(tags) != 1 {
			t.Errorf("the other app's script tags: %v", tags)
		}
	}, api.Webhooks, api.ScriptTags, api.FulfillmentServices)
}

// Concurrent uninstalls with one token: one succeeds, the rest are 401 as
// any call with a revoked token.
func TestUninstallConcurrent(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		leave(t, e, apitest.DemoToken, "Demo")
		const n = 5
		statuses := make(chan int, n)
		var wg sync.WaitGroup
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				statuses <- e.Do("DELETE", uninstall, nil).Status
			}()
		}
		wg.Wait()
		close(statuses)
		got := map[int]int{}
		for s := range statuses {
			got[s]++
		}
		if got[200] != 1 || got[401] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 401", got, n-1)
		}
	}, api.Webhooks, api.ScriptTags, api.FulfillmentServices)
}
