package admingraphql_test

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
)

// readSubscriptions is the query @shopify/shopify-api 15.0.0 sends before
// it registers an app's webhooks (its register.js TEMPLATE_GET_HANDLERS,
// as @shopify/shopify-app-express sends it after every install): inline
// arguments and fragments on the EventBridge and Pub/Sub endpoints, which
// must validate although the service only has HTTP ones (issue 50).
const readSubscriptions = `query shopifyApiReadWebhookSubscriptions {
  webhookSubscriptions(
    first: 250,
    after: null,
  ) {
    edges {
      node {
        id
        topic
        includeFields
        metafieldNamespaces
        endpoint {
          __typename
          ... on WebhookHttpEndpoint {
            callbackUrl
          }
          ... on WebhookEventBridgeEndpoint {
            arn
          }
          ... on WebhookPubSubEndpoint {
            pubSubProject
            pubSubTopic
          }
        }
      }
    }
    pageInfo {
      endCursor
      hasNextPage
    }
  }
}`

func TestShopifyLibraryReadsWebhookSubscriptions(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		e.Do("POST", "/admin/webhooks.json", map[string]any{"webhook": map[string]any{
			"topic": "app/uninstalled", "address": "https://hooks.example.com/uninstalled"}}).Expect(t, 201)
		m := gql(t, e, apitest.DemoToken, readSubscriptions, nil)
		if m["errors"] != nil {
			t.Fatalf("errors: %v", m["errors"])
		}
		node := dig(m, "data", "webhookSubscriptions", "edges", 0, "node")
		if dig(node, "topic") != "APP_UNINSTALLED" || dig(node, "endpoint", "__typename") != "WebhookHttpEndpoint" ||
			dig(node, "endpoint", "callbackUrl") != "https://hooks.example.com/uninstalled" {
			t.Errorf("node %v", node)
		}
	}, groups...)
}
