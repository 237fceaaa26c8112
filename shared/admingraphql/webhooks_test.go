package admingraphql_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/delivery"
)

// A subscription made by GraphQL, to a collection made by GraphQL: the
// app receives Shopify's REST-shaped collections/create payload with the
// X-Shopify- headers and an HMAC its secret verifies; the subscription is
// listed by REST, and only the app's own are listed by GraphQL.
func TestMutationFiresWebhook(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		type delivered struct {
			header http.Header
			body   []byte
		}
		got := make(chan delivered, 4)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			got <- delivered{r.Header.Clone(), b}
		}))
		defer srv.Close()

		sub := gql(t, e, apitest.DemoToken, `mutation($url: URL!) { webhookSubscriptionCreate(topic: COLLECTIONS_CREATE, webhookSubscription: {callbackUrl: $url, format: JSON}) {
			webhookSubscription { id topic format endpoint { __typename ... on WebhookHttpEndpoint { callbackUrl } } } userErrors { field message } } }`,
			map[string]any{"url": srv.URL + "/hooks"})
		ws := dig(sub, "data", "webhookSubscriptionCreate", "webhookSubscription")
		if dig(ws, "topic") != "COLLECTIONS_CREATE" || dig(ws, "endpoint", "__typename") != "WebhookHttpEndpoint" || dig(ws, "endpoint", "callbackUrl") != srv.URL+"/hooks" {
			t.Fatalf("webhookSubscriptionCreate: %v", sub)
		}
		rest := e.Do("GET", "/admin/webhooks.json", nil).Expect(t, 200).List(t, "webhooks")
		if len(rest) != 1 || rest[0].(map[string]any)["topic"] != "collections/create" {
			t.Errorf("REST lists %v", rest)
		}
		if n := dig(gql(t, e, apitest.ReadOnlyToken, `{ webhookSubscriptions(first: 10) { nodes { id } } }`, nil), "data", "webhookSubscriptions", "nodes"); len(n.([]any)) != 0 {
			t.Errorf("another app sees %v", n)
		}

		made := gql(t, e, apitest.DemoToken, `mutation { collectionCreate(input: {title: "Summer", descriptionHtml: "<p>Sun</p>"}) { collection { id handle ruleSet { rules { column } } } userErrors { message } } }`, nil)
		if dig(made, "data", "collectionCreate", "collection", "handle") != "summer" || dig(made, "data", "collectionCreate", "collection", "ruleSet") != nil {
			t.Fatalf("collectionCreate: %v", made)
		}

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		wg.Add(2)
		go func() { defer wg.Done(); delivery.Pump(ctx, e.Deps.Store, e.Deps.Queue, nil, 20*time.Millisecond) }()
		go func() {
			defer wg.Done()
			delivery.Consume(ctx, e.Deps.Queue, api.Dispatcher(e.Deps, config.Config{RetryBase: time.Second}), 2)
		}()
		defer func() { cancel(); wg.Wait() }()
		var d delivered
		select {
		case d = <-got:
		case <-time.After(20 * time.Second): // a deadline for a hung pipeline, not a wait for time to pass
			t.Fatal("no delivery")
		}
		body := d.body
		mac := hmac.New(sha256.New, []byte("demo-shared-secret"))
		mac.Write(body)
		if want := base64.StdEncoding.EncodeToString(mac.Sum(nil)); d.header.Get("X-Shopify-Hmac-Sha256") != want || d.header.Get("X-Shopify-Topic") != "collections/create" {
			t.Errorf("delivery headers %v", d.header)
		}
		var payload map[string]any
		if err := json.Unmarshal(body, &payload); err != nil || payload["title"] != "Summer" || payload["body_html"] != "<p>Sun</p>" ||
			!strings.HasSuffix(dig(made, "data", "collectionCreate", "collection", "id").(string), "/"+jsonNumber(payload["id"])) {
			t.Errorf("payload %s", body)
		}
	}, groups...)
}

func jsonNumber(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
