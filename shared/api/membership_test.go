package api_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/config"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/providers"
	"github.com/storeadmin/adminapi/shared/seed"
	"github.com/storeadmin/adminapi/shared/smartcollections"
	"github.com/storeadmin/adminapi/shared/store"
)

// Smart collection membership follows variant changes across groups: the
// variants handler re-evaluates the changed product's memberships through
// Deps.ProductChanged, which api.Open (and apitest.New, as it) wire to
// smartcollections.ProductChanged; the collections group then shows them.
func TestSmartCollectionMembershipFollowsVariants(t *testing.T) {
	apitest.ForEachStore(t, membershipFollowsVariants, api.Variants, api.Collections)
}

// TestOpenWiresMembership runs the same check on the deps api.Open builds
// (embedded store), as a Lambda function or the local runner gets them.
func TestOpenWiresMembership(t *testing.T) {
	deps, err := api.Open(context.Background(), config.Config{Store: "embedded", DataDir: t.TempDir(), LogLevel: slog.LevelError})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deps.Store.Close() })
	if deps.ProductChanged == nil {
		t.Fatal("api.Open left Deps.ProductChanged unset")
	}
	if _, _, err := seed.Load(context.Background(), deps.Store, deps.Clock, seed.Demo); err != nil {
		t.Fatal(err)
	}
	membershipFollowsVariants(t, &apitest.Env{T: t, Deps: deps.Deps, Handler: api.Handler(deps, api.Variants, api.Collections)})
}

// membershipFollowsVariants creates a smart collection of the products
// with a variant priced over 150 (the demo seed's iPod Nano, whose Pink and
// Red variants are at 199.00), then moves the variants' prices across the
// bar through the variants endpoints.
func membershipFollowsVariants(t *testing.T, e *apitest.Env) {
	const product, pink, red = 632910392, 808950810, 49148385
	c := e.Do("POST", "/com/smart_collections.json", M{"smart_collection": M{"title": "Over 150",
		"rules": []any{M{"column": "variant_price", "relation": "greater_than", "condition": "150"}}}}).
		Expect(t, 201).Object(t, "smart_collection")
	id := int64(c["id"].(float64))
	check := func(when string, want int) {
		t.Helper()
		got := e.Do("GET", fmt.Sprintf("/com/smart_collections/%d.json", id), nil).Expect(t, 200).Object(t, "smart_collection")
		if got["products_count"] != float64(want) {
			t.Errorf("%s: products_count %v, want %d", when, got["products_count"], want)
		}
		members := e.Do("GET", fmt.Sprintf("/com/collects.json?collection_id=%d", id), nil).Expect(t, 200).List(t, "collects")
		if len(members) != want {
			t.Fatalf("%s: collects of the smart collection %v, want %d", when, members, want)
		}
		for _, m := range members {
			if m := m.(map[string]any); m["product_id"] != float64(product) || m["collection_id"] != float64(id) {
				t.Errorf("%s: member %v, want product %d", when, m, product)
			}
		}
		n := e.Do("GET", fmt.Sprintf("/com/smart_collections/count.json?product_id=%d", product), nil).Expect(t, 200).JSON(t)["count"]
		if n != float64(want) {
			t.Errorf("%s: smart collections of the product %v, want %d", when, n, want)
		}
	}
	price := func(variant int64, p string) {
		t.Helper()
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", variant), M{"variant": M{"price": p}}).Expect(t, 200)
	}
	if c["products_count"] != 1.0 {
		t.Errorf("create: products_count %v, want 1", c["products_count"])
	}
	check("created", 1)
	price(pink, "100.00")
	check("one variant under the bar", 1) // Red still qualifies
	price(red, "100.00")
	check("both variants under the bar", 0)
	price(red, "150.01")
	check("one variant back over it", 1)
}

// A variant change whose request could not bring smart collection
// membership along (the step after its commit failed) leaves a marker in
// the same transaction; the membership jobs (the runner a second after the commit, the
// provider-jobs function on the stream in AWS) reevaluate the product, with
// no client action, and clear the marker. A request whose step succeeded
// leaves none.
func TestMembershipHealsAfterAFailedStep(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		const red, pink = 49148385, 808950810
		c := e.Do("POST", "/com/smart_collections.json", M{"smart_collection": M{"title": "Over 150",
			"rules": []any{M{"column": "variant_price", "relation": "greater_than", "condition": "150"}}}}).
			Expect(t, 201).Object(t, "smart_collection")
		count := func() float64 {
			t.Helper()
			return e.Do("GET", fmt.Sprintf("/com/smart_collections/%d.json", int64(c["id"].(float64))), nil).Expect(t, 200).
				Object(t, "smart_collection")["products_count"].(float64)
		}
		markers := func() int {
			t.Helper()
			items, _, err := e.Deps.Store.Query(context.Background(), store.Query{PK: catalog.MembershipJobPartition})
			if err != nil {
				t.Fatal(err)
			}
			return len(items)
		}
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", pink), M{"variant": M{"price": "100.00"}}).Expect(t, 200)
		if markers() != 0 || count() != 1 {
			t.Fatalf("a change whose membership step succeeded: %d markers, products_count %v", markers(), count())
		}

		working := e.Deps.ProductChanged
		e.Change(func(d *platform.Deps) {
			d.ProductChanged = func(context.Context, int64) error { return errors.New("the store failed after the commit") }
		})
		e.Do("PUT", fmt.Sprintf("/com/variants/%d.json", red), M{"variant": M{"price": "100.00"}}).Expect(t, 200)
		if markers() != 1 || count() != 1 {
			t.Fatalf("after a failed membership step: %d markers, products_count %v (want the marker, membership not yet followed)", markers(), count())
		}
		e.Change(func(d *platform.Deps) { d.ProductChanged = working })
		// As in AWS: the marker's INSERT reaches the provider-jobs function.
		ev := events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{{EventName: "INSERT", Change: events.DynamoDBStreamRecord{
			SequenceNumber: "1", Keys: map[string]events.DynamoDBAttributeValue{"PK": events.NewStringAttribute(catalog.MembershipJobPartition)}}}}}
		resp, err := providers.StreamHandler(e.Deps)(context.Background(), ev)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			t.Fatalf("the stream's membership jobs: %v %v", resp, err)
		}
		if markers() != 0 || count() != 0 {
			t.Errorf("after the membership jobs: %d markers, products_count %v, want 0 and 0", markers(), count())
		}
		if n, err := smartcollections.NewService(e.Deps).RunMembershipJobs(context.Background()); n != 0 || err != nil {
			t.Errorf("a second run: %d reevaluated, %v; want nothing to do", n, err)
		}
		// A rules change's marker left behind: the collection is recomputed
		// from its rules as stored, and the marker goes.
		mark := catalog.CollectionJobKey(int64(c["id"].(float64)), 1)
		if err := e.Deps.Store.Transact(context.Background(), catalog.MembershipJob(mark)); err != nil {
			t.Fatal(err)
		}
		if n, err := smartcollections.NewService(e.Deps).RunMembershipJobs(context.Background()); n != 1 || err != nil || markers() != 0 || count() != 0 {
			t.Errorf("a collection's marker: %d recomputed, %v; %d markers, products_count %v", n, err, markers(), count())
		}
	}, api.Variants, api.Collections)
}
