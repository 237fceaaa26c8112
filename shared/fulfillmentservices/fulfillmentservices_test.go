package fulfillmentservices_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/seed"
)

var group = api.Group{Name: "fulfillment-services", Routes: fulfillmentservices.Routes}

// Extra apps: another writer of fulfillment services and a reader.
const (
	otherToken  = "other-fulfillment-token-0123456789"
	readerToken = "fulfillment-reader-token-0123456789"
	otherAppID  = 1003
)

func forEachStore(t *testing.T, fn func(t *testing.T, e *apitest.Env)) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		apps := `{"shop": {"id": 1, "domain": "demo-shop.example.com", "iana_timezone": "America/New_York"},
			"apps": [
			  {"id": 1003, "name": "Other Fulfillment App", "access_token": "` + otherToken + `", "shared_secret": "s3", "scopes": ["write_fulfillments"]},
			  {"id": 1004, "name": "Fulfillment Reader", "access_token": "` + readerToken + `", "shared_secret": "s4", "scopes": ["read_fulfillments"]}]}`
		if _, _, err := seed.Load(context.Background(), e.Deps.Store, e.Deps.Clock, []byte(apps)); err != nil {
			t.Fatal(err)
		}
		fn(t, e)
	}, group)
}

func body(fields map[string]any) map[string]any { return map[string]any{"fulfillment_service": fields} }

func create(t *testing.T, e *apitest.Env, token string, fields map[string]any) map[string]any {
	t.Helper()
	return e.DoAs(token, "POST", "/admin/fulfillment_services.json", body(fields)).
		Expect(t, http.StatusCreated).Object(t, "fulfillment_service")
}

func path(s map[string]any) string {
	return fmt.Sprintf("/admin/fulfillment_services/%d.json", int64(s["id"].(float64)))
}

func names(l []any) []string {
	out := []string{}
	for _, s := range l {
		out = append(out, s.(map[string]any)["name"].(string))
	}
	return out
}

func exact(t *testing.T, res *apitest.Response, want string) {
	t.Helper()
	if got := strings.TrimSpace(string(res.Body)); got != want {
		t.Fatalf("body %s, want %s", got, want)
	}
}

func TestFulfillmentServices(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		t.Run("create fills the defaults", func(t *testing.T) {
			res := e.Do("POST", "/admin/fulfillment_services.json", body(map[string]any{"name": "  Jupiter Fulfillment "})).Expect(t, 201)
			got := res.Object(t, "fulfillment_service")
			if _, ok := got["id"].(float64); !ok {
				t.Fatalf("id: %v", got)
			}
			delete(got, "id")
			want := map[string]any{
				"name": "Jupiter Fulfillment", "handle": "jupiter-fulfillment", "service_name": "Jupiter Fulfillment",
				"callback_url": nil, "format": "json", "inventory_management": false, "tracking_support": false,
				"requires_shipping_method": true, "provider_id": nil, "credential1": nil, "credential2_exists": false,
				"email": nil, "include_pending_stock": false,
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
			// The same through GET.
			if one := e.Do("GET", path(res.Object(t, "fulfillment_service")), nil).Expect(t, 200).Object(t, "fulfillment_service"); one["handle"] != "jupiter-fulfillment" || len(one) != 14 {
				t.Fatalf("get: %v", one)
			}
		})
		t.Run("create with every field", func(t *testing.T) { fulfillmentServiceCreateEveryField(t, e) })
		t.Run("validation", func(t *testing.T) { fulfillmentServiceValidation(t, e) })
		t.Run("update", func(t *testing.T) { fulfillmentServiceUpdate(t, e) })
		t.Run("handles are unique", func(t *testing.T) {
			a := create(t, e, apitest.DemoToken, map[string]any{"name": "Saturn Shipping"})
			b := create(t, e, otherToken, map[string]any{"name": "saturn   SHIPPING!"})
			c := create(t, e, apitest.DemoToken, map[string]any{"name": "Saturn Shipping"})
			if a["handle"] != "saturn-shipping" || b["handle"] != "saturn-shipping-1" || c["handle"] != "saturn-shipping-2" {
				t.Fatalf("handles %v %v %v", a["handle"], b["handle"], c["handle"])
			}
			// Deleting frees the handle.
			exact(t, e.Do("DELETE", path(a), nil).Expect(t, 200), `{}`)
			if d := create(t, e, apitest.DemoToken, map[string]any{"name": "Saturn Shipping"}); d["handle"] != "saturn-shipping" {
				t.Fatalf("freed handle not reused: %v", d["handle"])
			}
			if u := create(t, e, apitest.DemoToken, map[string]any{"name": "東京"}); u["handle"] != "untitled" {
				t.Fatalf("handle of a name without latin letters: %v", u["handle"])
			}
		})
		t.Run("delete", func(t *testing.T) {
			s := create(t, e, apitest.DemoToken, map[string]any{"name": "Pluto"})
			exact(t, e.Do("DELETE", path(s), nil).Expect(t, 200), `{}`)
			e.Do("GET", path(s), nil).Expect(t, 404)
			e.Do("DELETE", path(s), nil).Expect(t, 404)
			e.Do("GET", "/admin/fulfillment_services/abc.json", nil).Expect(t, 404)
		})
	})
}

func fulfillmentServiceCreateEveryField(t *testing.T, e *apitest.Env) {
	res := e.Do("POST", "/admin/fulfillment_services.json", body(map[string]any{
		"name": "Mars Warehouse", "callback_url": "https://mars.example.com/callbacks", "format": "xml",
		"inventory_management": true, "tracking_support": true, "requires_shipping_method": false,
		"credential1": "ops@mars.example.com", "credential2": "s3cret-pass",
	})).Expect(t, 201)
	if strings.Contains(string(res.Body), "s3cret-pass") || strings.Contains(string(res.Body), `"credential2"`) {
		t.Fatalf("credential2 echoed: %s", res.Body)
	}
	s := res.Object(t, "fulfillment_service")
	if s["callback_url"] != "https://mars.example.com/callbacks" || s["format"] != "xml" || s["inventory_management"] != true ||
		s["tracking_support"] != true || s["requires_shipping_method"] != false || s["credential1"] != "ops@mars.example.com" ||
		s["credential2_exists"] != true || s["handle"] != "mars-warehouse" {
		t.Fatalf("got %v", s)
	}
	get := e.Do("GET", path(s), nil).Expect(t, 200)
	if strings.Contains(string(get.Body), "s3cret-pass") || strings.Contains(string(get.Body), "app_id") || strings.Contains(string(get.Body), "created_at") {
		t.Fatalf("hidden fields shown: %s", get.Body)
	}
	// The stored record keeps the owner and the password for the provider polls.
	svc, err := fulfillmentservices.Lookup(context.Background(), e.Deps.Store, int64(s["id"].(float64)))
	if err != nil || svc.AppID != 1001 || svc.Credential2 != "s3cret-pass" || !svc.Credential2Exists || svc.CreatedAt.IsZero() {
		t.Fatalf("lookup: %+v %v", svc, err)
	}
}

func fulfillmentServiceValidation(t *testing.T, e *apitest.Env) {
	long := strings.Repeat("a", 256)
	cases := []struct {
		in   map[string]any
		want string
	}{
		{map[string]any{}, `{"errors":{"name":["can't be blank"]}}`},
		{map[string]any{"name": "   "}, `{"errors":{"name":["can't be blank"]}}`},
		{map[string]any{"name": long}, `{"errors":{"name":["is too long (maximum is 255 characters)"]}}`},
		{map[string]any{"name": "A", "format": "csv"}, `{"errors":{"format":["is not included in the list"]}}`},
		{map[string]any{"name": "A", "format": ""}, `{"errors":{"format":["is not included in the list"]}}`},
		{map[string]any{"name": "A", "inventory_management": true}, `{"errors":{"callback_url":["can't be blank"]}}`},
		{map[string]any{"name": "A", "tracking_support": true, "callback_url": " "}, `{"errors":{"callback_url":["can't be blank"]}}`},
		{map[string]any{"name": "A", "callback_url": "ftp://example.com/x"}, `{"errors":{"callback_url":["is invalid"]}}`},
		{map[string]any{"name": "A", "callback_url": "example.com/x"}, `{"errors":{"callback_url":["is invalid"]}}`},
		{map[string]any{"name": "A", "callback_url": "https:///path"}, `{"errors":{"callback_url":["is invalid"]}}`},
		{map[string]any{"name": "A", "callback_url": "https://example.com/x?a=b"}, `{"errors":{"callback_url":["is invalid"]}}`},
		{map[string]any{"name": "A", "tracking_support": true, "callback_url": "nope"}, `{"errors":{"callback_url":["is invalid"]}}`},
		{map[string]any{"name": "A", "credential1": long}, `{"errors":{"credential1":["is too long (maximum is 255 characters)"]}}`},
		{map[string]any{"name": "A", "inventory_management": "yes"}, `{"errors":{"inventory_management":["must be a boolean"]}}`},
		{map[string]any{"name": nil}, `{"errors":{"name":["must be a string"]}}`},
		{map[string]any{"name": "", "format": "csv", "inventory_management": true},
			`{"errors":{"callback_url":["can't be blank"],"format":["is not included in the list"],"name":["can't be blank"]}}`},
	}
	for _, c := range cases {
		res := e.Do("POST", "/admin/fulfillment_services.json", body(c.in)).Expect(t, 422)
		if strings.TrimSpace(string(res.Body)) != c.want {
			t.Errorf("%v: got %s, want %s", c.in, res.Body, c.want)
		}
	}
	exact(t, e.Do("POST", "/admin/fulfillment_services.json", map[string]any{"name": "A"}).Expect(t, 400),
		`{"errors":{"fulfillment_service":"Required parameter missing or invalid"}}`)
	// An http callback with a port and path is fine.
	create(t, e, apitest.DemoToken, map[string]any{"name": "Plain", "tracking_support": true, "callback_url": "http://localhost:8080/fs"})
}

func fulfillmentServiceUpdate(t *testing.T, e *apitest.Env) {
	s := create(t, e, apitest.DemoToken, map[string]any{"name": "Venus Depot"})
	p := path(s)
	up := e.Do("PUT", p, body(map[string]any{"id": s["id"], "name": "Venus Depot Two", "format": "xml",
		"callback_url": "https://venus.example.com", "inventory_management": true, "requires_shipping_method": false,
		"credential1": "me@venus.example.com", "credential2": "pw"})).Expect(t, 200)
	if strings.Contains(string(up.Body), `"pw"`) {
		t.Fatalf("credential2 echoed: %s", up.Body)
	}
	u := up.Object(t, "fulfillment_service")
	if u["name"] != "Venus Depot Two" || u["service_name"] != "Venus Depot Two" || u["handle"] != "venus-depot" ||
		u["format"] != "xml" || u["callback_url"] != "https://venus.example.com" || u["inventory_management"] != true ||
		u["requires_shipping_method"] != false || u["credential1"] != "me@venus.example.com" || u["credential2_exists"] != true ||
		u["id"] != s["id"] {
		t.Fatalf("update: %v", u)
	}
	// The result is validated: inventory management needs the callback.
	exact(t, e.Do("PUT", p, body(map[string]any{"callback_url": nil})).Expect(t, 422), `{"errors":{"callback_url":["can't be blank"]}}`)
	exact(t, e.Do("PUT", p, body(map[string]any{"name": ""})).Expect(t, 422), `{"errors":{"name":["can't be blank"]}}`)
	exact(t, e.Do("PUT", p, body(map[string]any{"format": "yaml"})).Expect(t, 422), `{"errors":{"format":["is not included in the list"]}}`)
	exact(t, e.Do("PUT", p, body(map[string]any{"callback_url": "mailto:x@example.com"})).Expect(t, 422), `{"errors":{"callback_url":["is invalid"]}}`)
	if g := e.Do("GET", p, nil).Expect(t, 200).Object(t, "fulfillment_service"); !reflect.DeepEqual(g, u) {
		t.Fatalf("a rejected update changed the service: %v, was %v", g, u)
	}
	// Turning both flags off lets the callback go; credentials clear with null.
	u2 := e.Do("PUT", p, body(map[string]any{"inventory_management": false, "callback_url": nil, "credential1": nil, "credential2": nil})).
		Expect(t, 200).Object(t, "fulfillment_service")
	if u2["callback_url"] != nil || u2["credential1"] != nil || u2["credential2_exists"] != false || u2["format"] != "xml" || u2["name"] != "Venus Depot Two" {
		t.Fatalf("clear: %v", u2)
	}
	exact(t, e.Do("PUT", p, body(map[string]any{"tracking_support": true})).Expect(t, 422), `{"errors":{"callback_url":["can't be blank"]}}`)
	e.Do("PUT", "/admin/fulfillment_services/999999999.json", body(map[string]any{"name": "x"})).Expect(t, 404)
	e.Do("PUT", p, map[string]any{}).Expect(t, 400)
}

// Lists are app-scoped unless scope=all; any app reads any service by id,
// but only the owner changes or deletes it.
func TestFulfillmentServicesAcrossApps(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		mine := create(t, e, apitest.DemoToken, map[string]any{"name": "Mine One"})
		create(t, e, apitest.DemoToken, map[string]any{"name": "Mine Two"})
		theirs := create(t, e, otherToken, map[string]any{"name": "Theirs", "credential2": "hidden"})

		list := func(token, query string) []string {
			t.Helper()
			return names(e.DoAs(token, "GET", "/admin/fulfillment_services.json"+query, nil).Expect(t, 200).List(t, "fulfillment_services"))
		}
		for _, c := range []struct {
			token, query string
			want         []string
		}{
			{apitest.DemoToken, "", []string{"Mine One", "Mine Two"}},
			{apitest.DemoToken, "?scope=current_client", []string{"Mine One", "Mine Two"}},
			{apitest.DemoToken, "?scope=all", []string{"Mine One", "Mine Two", "Theirs"}},
			{otherToken, "", []string{"Theirs"}},
			{otherToken, "?scope=all", []string{"Mine One", "Mine Two", "Theirs"}},
			{readerToken, "", []string{}},
			{readerToken, "?scope=all", []string{"Mine One", "Mine Two", "Theirs"}},
		} {
			if got := list(c.token, c.query); !reflect.DeepEqual(got, c.want) {
				t.Errorf("%s%s: got %v, want %v", c.token, c.query, got, c.want)
			}
		}
		exact(t, e.Do("GET", "/admin/fulfillment_services.json?scope=mine", nil).Expect(t, 400),
			`{"errors":{"scope":["must be current_client or all"]}}`)
		if all := e.Do("GET", "/admin/fulfillment_services.json?scope=all", nil).Expect(t, 200); strings.Contains(string(all.Body), "hidden") {
			t.Fatalf("credential2 listed: %s", all.Body)
		}

		// Reading another app's service by id is allowed.
		if got := e.Do("GET", path(theirs), nil).Expect(t, 200).Object(t, "fulfillment_service"); got["name"] != "Theirs" || got["credential2_exists"] != true {
			t.Fatalf("get theirs: %v", got)
		}
		e.DoAs(readerToken, "GET", path(mine), nil).Expect(t, 200)
		// Changing or deleting it is 404, and leaves it as it was.
		exact(t, e.Do("PUT", path(theirs), body(map[string]any{"name": "Hijacked"})).Expect(t, 404), `{"errors":"Not Found"}`)
		exact(t, e.Do("DELETE", path(theirs), nil).Expect(t, 404), `{"errors":"Not Found"}`)
		e.DoAs(otherToken, "DELETE", path(mine), nil).Expect(t, 404)
		if got := e.DoAs(otherToken, "GET", path(theirs), nil).Expect(t, 200).Object(t, "fulfillment_service"); got["name"] != "Theirs" {
			t.Fatalf("another app changed it: %v", got)
		}
		e.DoAs(otherToken, "PUT", path(theirs), body(map[string]any{"name": "Theirs Renamed"})).Expect(t, 200)

		// Scopes: write_fulfillments for changes, read_ or write_ for reads.
		exact(t, e.DoAs(apitest.ReadOnlyToken, "GET", "/admin/fulfillment_services.json", nil).Expect(t, 403),
			`{"errors":"[API] This action requires merchant approval for read_fulfillments scope."}`)
		exact(t, e.DoAs(apitest.ReadOnlyToken, "GET", path(mine), nil).Expect(t, 403),
			`{"errors":"[API] This action requires merchant approval for read_fulfillments scope."}`)
		for _, tok := range []string{apitest.ReadOnlyToken, readerToken} {
			exact(t, e.DoAs(tok, "POST", "/admin/fulfillment_services.json", body(map[string]any{"name": "X"})).Expect(t, 403),
				`{"errors":"[API] This action requires merchant approval for write_fulfillments scope."}`)
			exact(t, e.DoAs(tok, "PUT", path(mine), body(map[string]any{"name": "X"})).Expect(t, 403),
				`{"errors":"[API] This action requires merchant approval for write_fulfillments scope."}`)
			exact(t, e.DoAs(tok, "DELETE", path(mine), nil).Expect(t, 403),
				`{"errors":"[API] This action requires merchant approval for write_fulfillments scope."}`)
		}
		e.DoAs("", "GET", "/admin/fulfillment_services.json", nil).Expect(t, 401)
	})
}

// The exported reads the provider polls use, and the uninstall clean-up.
func TestExportedReads(t *testing.T) {
	forEachStore(t, func(t *testing.T, e *apitest.Env) {
		ctx, st := context.Background(), e.Deps.Store
		if all, err := fulfillmentservices.All(ctx, st); err != nil || len(all) != 0 {
			t.Fatalf("empty: %v %v", all, err)
		}
		for i := range 7 {
			tok := apitest.DemoToken
			if i%2 == 1 {
				tok = otherToken
			}
			create(t, e, tok, map[string]any{"name": "Depot", "callback_url": "https://depot.example.com/", "inventory_management": true})
		}
		all, err := fulfillmentservices.All(ctx, st)
		if err != nil || len(all) != 7 {
			t.Fatalf("all: %d %v", len(all), err)
		}
		owners := map[int64]int{}
		for i, s := range all {
			owners[s.AppID]++
			if i > 0 && s.ID <= all[i-1].ID {
				t.Fatalf("not in id order: %v", all)
			}
			if s.CallbackURL == nil || *s.CallbackURL != "https://depot.example.com/" || !s.InventoryManagement || s.Format != "json" {
				t.Fatalf("service %+v", s)
			}
		}
		if owners[1001] != 4 || owners[otherAppID] != 3 {
			t.Fatalf("owners %v", owners)
		}
		if _, err := fulfillmentservices.Lookup(ctx, st, 424242); admin.ErrorCode(err) != admin.ENOTFOUND {
			t.Fatalf("lookup unknown: %v", err)
		}
		b, _ := json.Marshal(all[0])
		if strings.Contains(string(b), "app_id") || strings.Contains(string(b), "credential2\"") {
			t.Fatalf("FulfillmentService JSON shows hidden fields: %s", b)
		}

		if err := fulfillmentservices.DeleteAllOfApp(ctx, st, otherAppID); err != nil {
			t.Fatal(err)
		}
		all, err = fulfillmentservices.All(ctx, st)
		if err != nil || len(all) != 4 {
			t.Fatalf("after uninstall: %d %v", len(all), err)
		}
		for _, s := range all {
			if s.AppID != 1001 {
				t.Fatalf("left %+v", s)
			}
		}
		if l := e.DoAs(otherToken, "GET", "/admin/fulfillment_services.json", nil).Expect(t, 200).List(t, "fulfillment_services"); len(l) != 0 {
			t.Fatalf("other app's list: %v", l)
		}
		// Their handles (depot-1, depot-3, depot-5) are free again.
		if s := create(t, e, apitest.DemoToken, map[string]any{"name": "Depot"}); s["handle"] != "depot-1" {
			t.Fatalf("handle %v", s["handle"])
		}
	})
}

func text(s string) *string { return &s }

func optional(s string) admin.Optional[string] { return admin.Optional[string]{Set: true, Value: s} }

// The rules of a fulfillment service, without HTTP or a store: validation
// fails before anything is read or written.
func TestServiceRules(t *testing.T) {
	s := fulfillmentservices.Service{Outbound: outbound.New(false), Clock: clock.System{}}
	ctx := admin.WithApp(t.Context(), &admin.App{ID: 1})
	yes := true
	for _, c := range []struct {
		name string
		in   fulfillmentservices.Input
		want string
	}{
		{"name required", fulfillmentservices.Input{}, `invalid name=["can't be blank"]`},
		{"name too long", fulfillmentservices.Input{Name: text(strings.Repeat("n", 256))}, `invalid name=["is too long (maximum is 255 characters)"]`},
		{"stock needs a callback", fulfillmentservices.Input{Name: text("W"), InventoryManagement: &yes}, `invalid callback_url=["can't be blank"]`},
		{"tracking needs a callback", fulfillmentservices.Input{Name: text("W"), TrackingSupport: &yes, CallbackURL: optional(" ")}, `invalid callback_url=["can't be blank"]`},
		{"callback with a query", fulfillmentservices.Input{Name: text("W"), CallbackURL: optional("https://example.com/a?b=c")}, `invalid callback_url=["is invalid"]`},
		{"callback private", fulfillmentservices.Input{Name: text("W"), CallbackURL: optional("http://localhost/x")}, `invalid callback_url=["` + outbound.MsgRefused + `"]`},
		{"format in the list", fulfillmentservices.Input{Name: text("W"), Format: text("csv")}, `invalid format=["is not included in the list"]`},
		{"credentials too long", fulfillmentservices.Input{Name: text("W"), Credential1: optional(strings.Repeat("c", 256)), Credential2: optional(strings.Repeat("c", 256))},
			`invalid credential1=["is too long (maximum is 255 characters)"] credential2=["is too long (maximum is 255 characters)"]`},
	} {
		_, err := s.Create(ctx, &c.in)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %s", c.name, err, c.want)
		}
	}
}
