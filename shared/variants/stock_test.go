package variants_test

import (
	"slices"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
	"github.com/storeadmin/adminapi/shared/variants"
)

func stockJobs(t *testing.T, e *apitest.Env) []string {
	t.Helper()
	items, _, err := e.Deps.Store.Query(t.Context(), store.Query{PK: variants.StockJobPartition})
	if err != nil {
		t.Fatal(err)
	}
	var sks []string
	for _, it := range items {
		sks = append(sks, it.SK)
	}
	return sks
}

func TestSetStock(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		var rec recorder
		rec.install(e)
		ctx := admin.WithShop(t.Context(), &admin.Shop{Domain: "demo-shop.example.com", IANATimezone: "America/New_York"})
		evs := len(productEvents(t, e))
		ns, _ := notifications(t, e)

		// The level it already has: nothing is written.
		if changed, err := variants.SetStock(ctx, e.Deps, pink, 10, "Warehouse", nil); changed || err != nil {
			t.Fatalf("unchanged level: %v %v", changed, err)
		}
		// A variant the condition rejects: nothing is written.
		reject := func(*catalog.Variant) bool { return false }
		if changed, err := variants.SetStock(ctx, e.Deps, pink, 3, "Warehouse", reject); changed || err != nil {
			t.Fatalf("rejected: %v %v", changed, err)
		}
		if n := len(productEvents(t, e)); n != evs || getVariant(t, e, pink)["inventory_quantity"] != 10.0 {
			t.Fatalf("something was written: %d events, variant %v", n, getVariant(t, e, pink))
		}

		accept := func(v *catalog.Variant) bool { return v.SKU == "IPOD2008PINK" }
		if changed, err := variants.SetStock(ctx, e.Deps, pink, 3, "Warehouse", accept); !changed || err != nil {
			t.Fatalf("changed level: %v %v", changed, err)
		}
		v := getVariant(t, e, pink)
		if v["inventory_quantity"] != 3.0 || v["old_inventory_quantity"] != 3.0 {
			t.Fatalf("variant %v", v)
		}
		all := productEvents(t, e)
		if len(all) != evs+1 || all[len(all)-1].Author != "Warehouse" || all[len(all)-1].Verb != "update" {
			t.Fatalf("events %+v", all[evs:])
		}
		after, payloads := notifications(t, e)
		if len(after) != len(ns)+1 || after[len(after)-1].Topic != "products/update" {
			t.Fatalf("notifications %+v", after[len(ns):])
		}
		last := payloads[len(payloads)-1]
		i := slices.IndexFunc(last.Variants, func(v catalog.Variant) bool { return v.ID == pink })
		if i < 0 || last.Variants[i].InventoryQuantity != 3 || last.Variants[i].Position != 1 {
			t.Fatalf("payload %+v", last)
		}
		if got := rec.take(); !slices.Equal(got, []int64{ipod}) {
			t.Errorf("ProductChanged calls %v", got)
		}
		// The provider's level asks the provider nothing.
		if got := stockJobs(t, e); len(got) != 0 {
			t.Errorf("stock jobs %v", got)
		}

		if _, err := variants.SetStock(ctx, e.Deps, pink, 2_000_000_000, "Warehouse", nil); admin.ErrorCode(err) != admin.EINVALID {
			t.Errorf("out of range: %v", err)
		}
		if _, err := variants.SetStock(ctx, e.Deps, 123456789, 1, "Warehouse", nil); admin.ErrorCode(err) != admin.ENOTFOUND {
			t.Errorf("no such variant: %v", err)
		}
	}, group)
}

// Creating or changing a variant a service manages, in the admin, leaves a
// stock job for the provider poll; other variants do not.
func TestStockJobMarkers(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		managed := create(t, e, map[string]any{"option1": "Managed", "sku": "M-1", "inventory_management": "acme"})
		plain := create(t, e, map[string]any{"option1": "Plain", "sku": "P-1"})
		id := idOf(managed["id"])
		if got := stockJobs(t, e); !slices.Equal(got, []string{records.IDSK(id)}) {
			t.Fatalf("stock jobs after creates %v", got)
		}
		it, err := e.Deps.Store.Get(t.Context(), store.Key{PK: variants.StockJobPartition, SK: records.IDSK(id)})
		if err != nil {
			t.Fatal(err)
		}
		var data map[string]int64
		records.Decode(&it, &data)
		if data["variant_id"] != id || it.ExpiresAt == 0 {
			t.Fatalf("marker %+v %s", it, it.Data)
		}
		// Written again by a change (a fresh version), not by a plain variant's.
		put(t, e, plain["id"], map[string]any{"price": "2.00"}).Expect(t, 200)
		put(t, e, id, map[string]any{"inventory_quantity_adjustment": 2}).Expect(t, 200)
		again, err := e.Deps.Store.Get(t.Context(), store.Key{PK: variants.StockJobPartition, SK: records.IDSK(id)})
		if err != nil || again.Version == it.Version {
			t.Fatalf("marker after an adjustment: %+v %v", again, err)
		}
		if got := stockJobs(t, e); len(got) != 1 {
			t.Fatalf("stock jobs %v", got)
		}
		// No longer managed: a change writes no job.
		e.Deps.Store.Transact(t.Context(), store.Delete(again.Key(), store.Always, 0))
		put(t, e, id, map[string]any{"inventory_management": nil}).Expect(t, 200)
		if got := stockJobs(t, e); len(got) != 0 {
			t.Fatalf("stock jobs %v", got)
		}
	}, group)
}
