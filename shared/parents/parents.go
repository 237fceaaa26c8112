// Package parents names where the records live that the spec refers to but
// serves no endpoints for: the shop's blogs, products, customers and orders,
// written by the seed loader and read by the resources nested under them
// (articles under blogs, transactions under orders, and so on).
package parents

import "strconv"

// Item partitions of the seeded records. The seed loader writes them; the nested resources read them.
const (
	BlogPartition     = "blog"
	ProductPartition  = "product"
	VariantPartition  = "variant"
	CustomerPartition = "customer"
	OrderPartition    = "order"
)

// UntrackedPartition is the GSI1 partition of the seeded fulfillments by a
// fulfillment service (its handle, the fulfillment's "service") that await
// a tracking number: the hourly fetch_tracking_numbers reads it with one
// Query per service (shared/providers), and removes a fulfillment's entry
// in the transaction that stores its number. GSI1SK is the fulfillment's
// IDSK; the item stays order#<order id>#fulfillment / IDSK(fulfillment id),
// its Data the seeded fulfillment plus order_id and order_name (the
// order's name, which the provider is asked about).
func UntrackedPartition(service string) string { return "fulfillment#untracked#" + service }

// ChildPartition is the partition of a record's nested records, such as
// ChildPartition("order", 7, "transaction").
func ChildPartition(parent string, id int64, child string) string {
	return parent + "#" + strconv.FormatInt(id, 10) + "#" + child
}
