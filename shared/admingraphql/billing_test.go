package admingraphql_test

import (
	"fmt"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
)

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

// accept takes the confirmation page at confirm and posts its accept
// form, as the merchant's browser does.
func accept(t *testing.T, e *apitest.Env, confirm string) {
	t.Helper()
	u, err := url.Parse(confirm)
	if err != nil {
		t.Fatal(err)
	}
	page := httptest.NewRecorder()
	e.Handler.ServeHTTP(page, httptest.NewRequest("GET", u.Path, nil))
	m := csrfRE.FindStringSubmatch(page.Body.String())
	if page.Code != 200 || m == nil {
		t.Fatalf("confirmation page %d: %s", page.Code, page.Body)
	}
	req := httptest.NewRequest("POST", u.Path+"/accept", strings.NewReader(url.Values{"csrf_token": {m[1]}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	out := httptest.NewRecorder()
	e.Handler.ServeHTTP(out, req)
	if out.Code != 303 {
		t.Fatalf("accept: %d %s", out.Code, out.Body)
	}
}

const subscriptionCreate = `mutation($name: String!, $price: Decimal!, $test: Boolean) {
	appSubscriptionCreate(name: $name, returnUrl: "https://app.example.com/billing", test: $test, trialDays: 7,
		lineItems: [{plan: {appRecurringPricingDetails: {price: {amount: $price, currencyCode: USD}, interval: EVERY_30_DAYS}}}]) {
		appSubscription { id name status test trialDays lineItems { plan { pricingDetails { ... on AppRecurringPricing { interval price { amount currencyCode } } } } } }
		confirmationUrl userErrors { field message } } }`

// A subscription made through GraphQL is a REST charge with the same
// confirmation page; accepted there, it is the app's active subscription
// in both APIs; a charge made by REST is a subscription, cancelled through
// GraphQL; REST's validation as user errors.
func TestSubscriptionsBothWays(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		made := gql(t, e, apitest.DemoToken, subscriptionCreate, map[string]any{"name": "Pro", "price": "12.50", "test": true})
		sub := dig(made, "data", "appSubscriptionCreate", "appSubscription")
		gid, _ := dig(sub, "id").(string)
		confirm, _ := dig(made, "data", "appSubscriptionCreate", "confirmationUrl").(string)
		if !strings.HasPrefix(gid, "gid://shopify/AppSubscription/") || dig(sub, "status") != "PENDING" || dig(sub, "test") != true ||
			dig(sub, "lineItems", 0, "plan", "pricingDetails", "price", "amount") != "12.50" || confirm == "" {
			t.Fatalf("appSubscriptionCreate: %v", made)
		}
		id := strings.TrimPrefix(gid, "gid://shopify/AppSubscription/")
		rest := e.Do("GET", "/admin/recurring_application_charges/"+id+".json", nil).Expect(t, 200).Object(t, "recurring_application_charge")
		if rest["confirmation_url"] != confirm || rest["status"] != "pending" || rest["price"] != "12.50" || rest["trial_days"] != 7.0 || rest["test"] != true {
			t.Errorf("REST reads %v (confirmationUrl %s)", rest, confirm)
		}
		none := gql(t, e, apitest.DemoToken, `{ currentAppInstallation { activeSubscriptions { id } } }`, nil)
		if fmt.Sprint(dig(none, "data", "currentAppInstallation", "activeSubscriptions")) != "[]" {
			t.Errorf("pending is active: %v", none)
		}

		accept(t, e, confirm)
		act := gql(t, e, apitest.DemoToken, `{ currentAppInstallation { id activeSubscriptions { id name status currentPeriodEnd } } }`, nil)
		if dig(act, "data", "currentAppInstallation", "activeSubscriptions", 0, "id") != gid ||
			dig(act, "data", "currentAppInstallation", "activeSubscriptions", 0, "status") != "ACTIVE" ||
			dig(act, "data", "currentAppInstallation", "activeSubscriptions", 0, "currentPeriodEnd") == nil {
			t.Fatalf("active: %v", act)
		}
		if s := e.Do("GET", "/admin/recurring_application_charges/"+id+".json", nil).Expect(t, 200).Object(t, "recurring_application_charge")["status"]; s != "active" {
			t.Errorf("REST reads %v", s)
		}

		// made by REST, activated by REST: GraphQL's active one, which it
		// replaced is cancelled
		c := e.Do("POST", "/admin/recurring_application_charges.json", map[string]any{"recurring_application_charge": map[string]any{
			"name": "Basic", "price": 5, "return_url": "https://app.example.com/billing"}}).Expect(t, 201).Object(t, "recurring_application_charge")
		accept(t, e, c["confirmation_url"].(string))
		e.Do("POST", fmt.Sprintf("/admin/recurring_application_charges/%.0f/activate.json", c["id"]), nil).Expect(t, 200)
		restGID := fmt.Sprintf("gid://shopify/AppSubscription/%.0f", c["id"])
		both := gql(t, e, apitest.DemoToken, `query($old: ID!) { currentAppInstallation { activeSubscriptions { id name } allSubscriptions(first: 5) { nodes { id status } } } old: node(id: $old) { ... on AppSubscription { status } } }`,
			map[string]any{"old": gid})
		if fmt.Sprint(dig(both, "data", "currentAppInstallation", "activeSubscriptions")) != fmt.Sprintf("[map[id:%s name:Basic]]", restGID) ||
			dig(both, "data", "old", "status") != "CANCELLED" || len(dig(both, "data", "currentAppInstallation", "allSubscriptions", "nodes").([]any)) != 2 {
			t.Errorf("after REST's: %v", both)
		}
		cancel := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { appSubscriptionCancel(id: $id) { appSubscription { id status } userErrors { field message } } }`, map[string]any{"id": restGID})
		if dig(cancel, "data", "appSubscriptionCancel", "appSubscription", "status") != "CANCELLED" {
			t.Errorf("appSubscriptionCancel: %v", cancel)
		}
		if s := e.Do("GET", fmt.Sprintf("/admin/recurring_application_charges/%.0f.json", c["id"]), nil).Expect(t, 200).Object(t, "recurring_application_charge")["status"]; s != "cancelled" {
			t.Errorf("REST reads %v", s)
		}
		again := gql(t, e, apitest.DemoToken, `mutation($id: ID!) { appSubscriptionCancel(id: $id) { appSubscription { id } userErrors { field message } } }`, map[string]any{"id": restGID})
		if fmt.Sprint(dig(again, "data", "appSubscriptionCancel")) != "map[appSubscription:<nil> userErrors:[map[field:<nil> message:Status is cancelled; only a pending, accepted or active charge can be cancelled]]]" {
			t.Errorf("cancel again: %v", again)
		}

		bad := gql(t, e, apitest.DemoToken, subscriptionCreate, map[string]any{"name": " ", "price": "0.001"})
		if fmt.Sprint(dig(bad, "data", "appSubscriptionCreate", "userErrors")) !=
			"[map[field:[name] message:Name can't be blank] map[field:[lineItems 0 plan appRecurringPricingDetails price amount] message:Price must have at most two decimal places]]" ||
			dig(bad, "data", "appSubscriptionCreate", "confirmationUrl") != nil {
			t.Errorf("bad: %v", bad)
		}
		usage := gql(t, e, apitest.DemoToken, `mutation { appSubscriptionCreate(name: "Usage", returnUrl: "https://app.example.com/", lineItems: [{plan: {appUsagePricingDetails: {cappedAmount: {amount: 10, currencyCode: USD}, terms: "per call"}}}]) { userErrors { message } } }`, nil)
		if dig(usage, "data", "appSubscriptionCreate", "userErrors", 0, "message") != "Price must be a recurring price: usage pricing is not served" {
			t.Errorf("usage pricing: %v", usage)
		}

		// another app sees none of them
		e.SetApp(4245, "other-app-token-0123456789", "read_content")
		other := gql(t, e, "other-app-token-0123456789", `query($id: ID!) { node(id: $id) { id } currentAppInstallation { activeSubscriptions { id } } }`, map[string]any{"id": gid})
		if dig(other, "data", "node") != nil || fmt.Sprint(dig(other, "data", "currentAppInstallation", "activeSubscriptions")) != "[]" {
			t.Errorf("other app: %v", other)
		}
	}, api.GraphQL, api.Billing)
}
