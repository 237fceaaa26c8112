package admingraphql_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
)

// The seeded customer (shared/seed/demo.json) and its address.
const (
	customerGID = "gid://shopify/Customer/207119551"
	customerID  = "207119551"
	seededAddr  = int64(207119551)
)

// The seeded customer through GraphQL: its fields, its addresses as a
// connection, a list and the default, the customers list's search terms
// (the saved searches' language) and its count; another filter is refused
// by name; an app without read_customers is denied the field alone.
func TestCustomers(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		ans := gql(t, e, apitest.DemoToken, `{ customersCount { count precision } customers(first: 10) { nodes { id legacyResourceId displayName firstName email
			defaultEmailAddress { emailAddress } numberOfOrders amountSpent { amount currencyCode } state tags verifiedEmail createdAt
			defaultAddress { id city province provinceCode country countryCodeV2 address2 }
			addresses(first: 1) { id } addressesV2(first: 5) { nodes { id zip } pageInfo { hasNextPage } } } pageInfo { hasNextPage } } }`, nil)
		if dig(ans, "errors") != nil || dig(ans, "data", "customersCount", "count") != 1.0 {
			t.Fatalf("customers: %v", ans)
		}
		c := dig(ans, "data", "customers", "nodes", 0)
		addr := fmt.Sprintf("gid://shopify/MailingAddress/%d?model_name=CustomerAddress", seededAddr)
		for k, want := range map[string]any{"id": customerGID, "legacyResourceId": customerID, "displayName": "Bob Norman", "email": "bob.norman@example.com",
			"numberOfOrders": "1", "state": "DISABLED", "verifiedEmail": true} {
			if got := dig(c, k); got != want {
				t.Errorf("%s = %v, want %v", k, got, want)
			}
		}
		if dig(c, "amountSpent", "amount") != "41.94" || dig(c, "defaultEmailAddress", "emailAddress") != "bob.norman@example.com" {
			t.Errorf("amountSpent, defaultEmailAddress: %v", c)
		}
		if d := dig(c, "defaultAddress"); dig(d, "id") != addr || dig(d, "city") != "Louisville" || dig(d, "countryCodeV2") != "US" ||
			dig(d, "provinceCode") != "KY" || dig(d, "address2") != nil {
			t.Errorf("defaultAddress: %v", d)
		}
		if dig(c, "addresses", 0, "id") != addr || dig(c, "addressesV2", "nodes", 0, "zip") != "40202" {
			t.Errorf("addresses: %v", c)
		}

		for q, want := range map[string]float64{"state:disabled": 1, "state:enabled": 0, `country:"United States"`: 1, "orders_count:>=1": 1,
			"orders_count:>1": 0, "total_spent:>40 accepts_marketing:false": 1, "tag:vip": 0} {
			got := gql(t, e, apitest.DemoToken, `query($q: String) { customers(first: 5, query: $q) { nodes { id } } customersCount(query: $q) { count } }`, map[string]any{"q": q})
			if n := len(dig(got, "data", "customers", "nodes").([]any)); float64(n) != want || dig(got, "data", "customersCount", "count") != want {
				t.Errorf("query %q: %v", q, got)
			}
		}
		bad := gql(t, e, apitest.DemoToken, `{ customers(first: 5, query: "email:bob@example.com") { nodes { id } } }`, nil)
		if msg, _ := dig(bad, "errors", 0, "message").(string); !strings.Contains(msg, "email is not a filter") {
			t.Errorf("email filter: %v", bad)
		}
		if s := gql(t, e, apitest.DemoToken, `{ customers(first: 5, sortKey: NAME) { nodes { id } } }`, nil); dig(s, "errors", 0, "extensions", "code") != "BAD_REQUEST" {
			t.Errorf("sortKey NAME: %v", s)
		}
		one := gql(t, e, apitest.DemoToken, `query($id: ID!) { customer(id: $id) { displayName } node(id: $id) { ... on Customer { email } }
			missing: customer(id: "gid://shopify/Customer/1") { id } }`, map[string]any{"id": customerGID})
		if dig(one, "data", "customer", "displayName") != "Bob Norman" || dig(one, "data", "node", "email") != "bob.norman@example.com" ||
			dig(one, "data", "missing") != nil {
			t.Errorf("customer, node: %v", one)
		}
		denied := gql(t, e, apitest.ReadOnlyToken, `{ shop { name } customer(id: "`+customerGID+`") { id } }`, nil)
		if dig(denied, "errors", 0, "extensions", "code") != "ACCESS_DENIED" || dig(denied, "data", "shop", "name") == nil {
			t.Errorf("read-only app: %v", denied)
		}
		if msg, _ := dig(denied, "errors", 0, "message").(string); !strings.Contains(msg, "read_customers") {
			t.Errorf("denied message: %v", denied)
		}
	}, append(groups, api.Customers)...)
}

// The address mutations call the REST addresses' operations: an address
// made by GraphQL is read by REST and the other way round; REST's
// validation messages come back as user errors; the default cannot be
// deleted, as REST says; unknown customers and addresses name their
// argument.
func TestCustomerAddressMutations(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		restAddr := func(id string) *apitest.Response {
			return e.Do("GET", "/com/customers/"+customerID+"/addresses/"+id+".json", nil)
		}
		made := gql(t, e, apitest.DemoToken, `mutation($c: ID!, $a: MailingAddressInput!) { customerAddressCreate(customerId: $c, address: $a) {
			address { id address1 city province countryCodeV2 name } userErrors { field message } } }`,
			map[string]any{"c": customerGID, "a": map[string]any{"address1": "1 Queen St", "city": "Toronto", "countryCode": "CA", "provinceCode": "ON", "firstName": "Bob", "lastName": "N"}})
		a := dig(made, "data", "customerAddressCreate", "address")
		gid, _ := dig(a, "id").(string)
		if dig(a, "province") != "Ontario" || dig(a, "countryCodeV2") != "CA" || dig(a, "name") != "Bob N" || !strings.HasSuffix(gid, "?model_name=CustomerAddress") {
			t.Fatalf("customerAddressCreate: %v", made)
		}
		id := strings.TrimSuffix(strings.TrimPrefix(gid, "gid://shopify/MailingAddress/"), "?model_name=CustomerAddress")
		if r := restAddr(id).Expect(t, 200).Object(t, "customer_address"); r["city"] != "Toronto" || r["default"] != false {
			t.Errorf("REST reads %v", r)
		}

		bad := gql(t, e, apitest.DemoToken, `mutation($c: ID!) { customerAddressCreate(customerId: $c, address: {country: "Atlantis"}) { address { id } userErrors { field message } } }`,
			map[string]any{"c": customerGID})
		if ue := dig(bad, "data", "customerAddressCreate", "userErrors", 0); fmt.Sprint(dig(ue, "field")) != "[address country]" ||
			dig(ue, "message") != "Country is not a known country" || dig(bad, "data", "customerAddressCreate", "address") != nil {
			t.Errorf("unknown country: %v", bad)
		}

		def := gql(t, e, apitest.DemoToken, `mutation($c: ID!, $a: ID!) { customerUpdateDefaultAddress(customerId: $c, addressId: $a) {
			customer { defaultAddress { id city } addressesV2(first: 5) { nodes { id } } } userErrors { field message } } }`, map[string]any{"c": customerGID, "a": gid})
		if dig(def, "data", "customerUpdateDefaultAddress", "customer", "defaultAddress", "city") != "Toronto" {
			t.Fatalf("customerUpdateDefaultAddress: %v", def)
		}
		if r := restAddr(id).Expect(t, 200).Object(t, "customer_address"); r["default"] != true {
			t.Errorf("REST reads the default %v", r)
		}

		del := gql(t, e, apitest.DemoToken, `mutation($c: ID!, $a: ID!) { customerAddressDelete(customerId: $c, addressId: $a) { deletedAddressId userErrors { field message } } }`,
			map[string]any{"c": customerGID, "a": gid})
		if ue := dig(del, "data", "customerAddressDelete", "userErrors", 0); dig(ue, "message") != "Cannot delete the customer's default address" ||
			dig(ue, "field") != nil || dig(del, "data", "customerAddressDelete", "deletedAddressId") != nil {
			t.Errorf("deleting the default: %v", del)
		}

		fromREST := e.Do("POST", "/com/customers/"+customerID+"/addresses.json", map[string]any{"address": map[string]any{"address1": "2 Main St", "city": "Ottawa", "country_code": "CA", "province_code": "ON"}}).
			Expect(t, 201).Object(t, "customer_address")
		restGID := fmt.Sprintf("gid://shopify/MailingAddress/%.0f", fromREST["id"])
		upd := gql(t, e, apitest.DemoToken, `mutation($c: ID!, $a: ID!) { customerAddressUpdate(customerId: $c, addressId: $a, address: {city: "Kingston"}, setAsDefault: true) {
			address { city } userErrors { field message } } }`, map[string]any{"c": customerGID, "a": restGID})
		if dig(upd, "data", "customerAddressUpdate", "address", "city") != "Kingston" {
			t.Fatalf("customerAddressUpdate: %v", upd)
		}
		if r := restAddr(fmt.Sprintf("%.0f", fromREST["id"])).Expect(t, 200).Object(t, "customer_address"); r["city"] != "Kingston" || r["default"] != true {
			t.Errorf("REST reads %v", r)
		}
		gone := gql(t, e, apitest.DemoToken, `mutation($c: ID!, $a: ID!) { customerAddressDelete(customerId: $c, addressId: $a) { deletedAddressId userErrors { field message } } }`,
			map[string]any{"c": customerGID, "a": gid})
		if dig(gone, "data", "customerAddressDelete", "deletedAddressId") != gid {
			t.Errorf("customerAddressDelete: %v", gone)
		}
		restAddr(id).Expect(t, 404)

		for name, vars := range map[string]map[string]any{
			"customerId": {"c": "gid://shopify/Customer/1", "a": restGID},
			"addressId":  {"c": customerGID, "a": "gid://shopify/MailingAddress/1"},
		} {
			nf := gql(t, e, apitest.DemoToken, `mutation($c: ID!, $a: ID!) { customerAddressUpdate(customerId: $c, addressId: $a, address: {city: "X"}) { address { id } userErrors { field message } } }`, vars)
			ue := dig(nf, "data", "customerAddressUpdate", "userErrors", 0)
			if fmt.Sprint(dig(ue, "field")) != "["+name+"]" || !strings.HasSuffix(dig(ue, "message").(string), "does not exist") {
				t.Errorf("unknown %s: %v", name, nf)
			}
		}
		denied := gql(t, e, apitest.ReadOnlyToken, `mutation($c: ID!, $a: ID!) { customerAddressDelete(customerId: $c, addressId: $a) { deletedAddressId } }`,
			map[string]any{"c": customerGID, "a": restGID})
		if msg, _ := dig(denied, "errors", 0, "message").(string); !strings.Contains(msg, "write_customers") {
			t.Errorf("read-only app: %v", denied)
		}
	}, append(groups, api.Customers)...)
}
