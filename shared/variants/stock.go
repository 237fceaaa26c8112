package variants

import (
	"context"
	"time"

	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// StockJobPartition holds one marker per variant whose fulfillment service is to
// be asked for its stock level (the Fulfillment services operations: a variant
// managed by a service was created or changed in the admin): providerjob/<variant
// id>, Data {"variant_id": id}. The marker is written in the change's transaction,
// so the API response never waits for the provider; shared/providers drains the
// partition (RunJobs, or its stream handler in AWS). Its Version is a fresh id, so
// a drain deletes only the marker it read, never a newer one.
const StockJobPartition = "providerjob"

// stockJobTTL drops a marker nobody drained (DynamoDB TTL): the hourly
// fetch_stock asks for every SKU anyway.
const stockJobTTL = 24 * time.Hour

// stockJob is the write of v's stock job marker, when a service manages
// v's stock (inventory_management names one); nil otherwise.
func stockJob(clk clock.Clock, gen *ids.Generator, v *catalog.Variant) []store.Op {
	if v.InventoryManagement == nil || *v.InventoryManagement == "" {
		return nil
	}
	it := store.Item{
		PK: StockJobPartition, SK: records.IDSK(v.ID), Version: gen.Next(),
		Data:      records.Encode(map[string]int64{"variant_id": v.ID}),
		ExpiresAt: clk.Now().Add(stockJobTTL).Unix(),
	}
	return []store.Op{store.Put(it, store.Always, 0)}
}

// SetStock sets a variant's inventory_quantity to qty exactly as an admin
// PUT of inventory_quantity does (the same read-modify-write conditioned on
// the version read, a Product update event by author, products/update, the
// ProductChanged hook), for a fulfillment service's stock answer. It writes
// nothing, and reports changed false, when the level already is qty or when
// when (if not nil) rejects the variant as read; when runs on every attempt,
// so it holds for the version written (e.g. the variant is still managed by
// the service and still has the SKU that was answered). It writes no stock
// job: the provider's answer needs no new request. qty outside the admin's
// bounds is an admin.Invalid error. ctx should carry the shop
// (admin.WithShop) for the payload's time zone; without it, UTC.
func SetStock(ctx context.Context, d *platform.Deps, variantID, qty int64, author string, when func(*catalog.Variant) bool) (changed bool, err error) {
	in := Input{InventoryQuantity: &qty}
	_, changed, err = NewService(d).modify(ctx, variantID, &in, origin{author: author, provider: true, when: when})
	return changed, err
}
