package admingraphql_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/providers"
)

// A fulfillment service made through GraphQL is REST's: REST reads and
// updates it, the hourly fetch_stock poll asks it, shop.fulfillmentServices
// lists one made by REST; REST's validation as user errors; deleting it
// through GraphQL frees its handle.
func TestFulfillmentServicesBothWays(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		asked = append(asked, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{}`))
	}))
	t.Cleanup(provider.Close)
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		mu.Lock()
		asked = nil
		mu.Unlock()
		made := gql(t, e, apitest.DemoToken, `mutation($url: URL) { fulfillmentServiceCreate(name: "GQL Warehouse", callbackUrl: $url, inventoryManagement: true, trackingSupport: true) {
			fulfillmentService { id serviceName handle callbackUrl inventoryManagement trackingSupport requiresShippingMethod type } userErrors { field message } } }`,
			map[string]any{"url": provider.URL + "/gql"})
		svc := dig(made, "data", "fulfillmentServiceCreate", "fulfillmentService")
		gid, _ := dig(svc, "id").(string)
		if !strings.HasPrefix(gid, "gid://shopify/FulfillmentService/") || dig(svc, "handle") != "gql-warehouse" || dig(svc, "type") != "THIRD_PARTY" ||
			dig(svc, "requiresShippingMethod") != true {
			t.Fatalf("fulfillmentServiceCreate: %v", made)
		}
		id := strings.TrimPrefix(gid, "gid://shopify/FulfillmentService/")
		rest := e.Do("GET", "/admin/fulfillment_services/"+id+".json", nil).Expect(t, 200).Object(t, "fulfillment_service")
		if rest["name"] != "GQL Warehouse" || rest["callback_url"] != provider.URL+"/gql" || rest["format"] != "json" || rest["inventory_management"] != true {
			t.Errorf("REST reads %v", rest)
		}

		s := providers.FetchStock(t.Context(), e.Deps)
		mu.Lock()
		got := fmt.Sprint(asked)
		mu.Unlock()
		if s.Providers != 1 || s.Failures != 0 || got != "[/gql/fetch_stock.json]" {
			t.Errorf("fetch_stock: %+v, asked %s", s, got)
		}
		if s := providers.FetchTrackingNumbers(t.Context(), e.Deps); s.Failures != 0 {
			t.Errorf("fetch_tracking_numbers: %+v", s)
		}

		e.Do("POST", "/admin/fulfillment_services.json", map[string]any{"fulfillment_service": map[string]any{"name": "REST Warehouse"}}).Expect(t, 201)
		list := gql(t, e, apitest.DemoToken, `{ shop { fulfillmentServices { serviceName handle } } }`, nil)
		names := fmt.Sprint(dig(list, "data", "shop", "fulfillmentServices"))
		if !strings.Contains(names, "serviceName:GQL Warehouse") || !strings.Contains(names, "handle:rest-warehouse") {
			t.Errorf("shop.fulfillmentServices: %v", list)
		}

		editFulfillmentService(t, e, gid, id)
	}, api.GraphQL, api.FulfillmentServices)
}

// editFulfillmentService updates, refuses, and deletes the service made
// through GraphQL (gid, its REST id), each read back through REST.
func editFulfillmentService(t *testing.T, e *apitest.Env, gid, id string) {
	up := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { fulfillmentServiceUpdate(id: $id, name: "Renamed", inventoryManagement: false) { fulfillmentService { serviceName inventoryManagement } userErrors { field message } } }`,
		map[string]any{"id": gid})
	if dig(up, "data", "fulfillmentServiceUpdate", "fulfillmentService", "serviceName") != "Renamed" {
		t.Errorf("update: %v", up)
	}
	if r := e.Do("GET", "/admin/fulfillment_services/"+id+".json", nil).Expect(t, 200).Object(t, "fulfillment_service"); r["name"] != "Renamed" || r["inventory_management"] != false {
		t.Errorf("REST reads %v", r)
	}
	bad := gql(t, e, apitest.DemoToken, `mutation { fulfillmentServiceCreate(name: "", trackingSupport: true) { fulfillmentService { id } userErrors { field message } } }`, nil)
	if fmt.Sprint(dig(bad, "data", "fulfillmentServiceCreate", "userErrors")) != "[map[field:[callbackUrl] message:Callback url can't be blank] map[field:[name] message:Name can't be blank]]" {
		t.Errorf("bad: %v", bad)
	}
	// the same name as REST's: a handle of its own, as REST gives it
	taken := gql(t, e, apitest.DemoToken, `mutation { fulfillmentServiceCreate(name: "REST Warehouse") { fulfillmentService { handle } userErrors { field message } } }`, nil)
	if h, _ := dig(taken, "data", "fulfillmentServiceCreate", "fulfillmentService", "handle").(string); h == "rest-warehouse" || !strings.HasPrefix(h, "rest-warehouse") {
		t.Errorf("taken handle: %v", taken)
	}

	e.SetApp(4246, "other-fs-token-0123456789", "read_fulfillments", "write_fulfillments")
	other := gql(t, e, "other-fs-token-0123456789", `mutation($id: ID!) { fulfillmentServiceDelete(id: $id) { deletedId userErrors { field message } } }`, map[string]any{"id": gid})
	if fmt.Sprint(dig(other, "data", "fulfillmentServiceDelete")) != "map[deletedId:<nil> userErrors:[map[field:[id] message:Fulfillment service does not exist]]]" {
		t.Errorf("another app's delete: %v", other)
	}
	del := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { fulfillmentServiceDelete(id: $id, inventoryAction: KEEP) { deletedId userErrors { message } } }`, map[string]any{"id": gid})
	if dig(del, "data", "fulfillmentServiceDelete", "deletedId") != gid {
		t.Errorf("delete: %v", del)
	}
	e.Do("GET", "/admin/fulfillment_services/"+id+".json", nil).Expect(t, 404)

	e.SetApp(4247, "content-fs-token-0123456789", "read_content")
	denied := gql(t, e, "content-fs-token-0123456789", `mutation { fulfillmentServiceCreate(name: "x") { fulfillmentService { id } } }`, nil)
	if dig(denied, "errors", 0, "message") != "Access denied for fulfillmentServiceCreate field. Required access: `write_fulfillments` access scope." {
		t.Errorf("denied: %v", denied)
	}
}
