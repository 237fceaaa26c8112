// Package customcollections serves /com/custom_collections (docs/openapi.yaml:
// schema CustomCollection, the Custom collections operations, with update and
// delete).
//
// Items (see package collection for the collection item and its numbers):
// custom_collection/<id>; its handle is claimed by handle#collection/<handle>
// (one namespace with smart collections); its metafields are owned by
// ("custom_collection", id); an attached image is kept in file#<id> chunks;
// the collects given on create are collect items (package collects). Every
// change writes the collection, its guard, image chunks, metafields, a
// Collection event and a collections/* notification in one transaction.
package customcollections

import (
	"context"
	"fmt"
	"slices"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// SortOrders are the allowed values of sort_order (schema CustomCollection).
var SortOrders = collection.SortOrders

const (
	// MaxCollects is the most products a create may link (each costs two
	// items of its transaction).
	MaxCollects = 40
)

// Input is the body of a custom collection create or update.
type Input struct {
	collection.Input
	Collects   []CollectInput     `json:"collects" null:"refuse"`
	Metafields []metafields.Input `json:"metafields" null:"refuse"`
}

// CollectInput is a product to link on create.
type CollectInput struct {
	ProductID *int64 `json:"product_id"`
}

// subject is the collection as the events log names it.
func subject(c *collection.Collection) events.Subject {
	return events.Subject{Type: events.Collection, ID: c.ID, Path: "/collections/" + c.Handle, Label: c.Title}
}

// apply validates in and merges it into r (all but publishing, the image,
// handle claims and product lookups, which need the store or the network).
func (in *Input) apply(r *collection.Record, create bool) (images.Change, error) {
	var v admin.Validation
	img := in.Input.Apply(&v, &r.Fields, create)
	if in.BodyHTML.Set && len(records.Encode(r)) > records.MaxData {
		v.Add("body_html", msgTooLarge)
	}
	if create {
		if len(in.Collects) > MaxCollects {
			v.Add("collects", admin.TooMany(MaxCollects, "products per request"))
		}
		for _, c := range in.Collects {
			if c.ProductID == nil || *c.ProductID <= 0 {
				v.Add("collects", "product_id "+admin.MsgBlank)
				break
			}
		}
	}
	metafields.ValidateInputs(&v, in.Metafields)
	return img, v.Err()
}

// products returns the distinct products of a create's collects, in the
// order given; an unknown product is 422 on collects. One GetItem each.
func products(ctx context.Context, st store.Store, in []CollectInput) ([]int64, error) {
	var out []int64
	var v admin.Validation
	for _, c := range in {
		id := *c.ProductID
		if slices.Contains(out, id) {
			continue
		}
		out = append(out, id)
		var err error = admin.NotFound
		if id <= ids.Max {
			_, err = catalog.GetProduct(ctx, st, id)
		}
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			v.Add("collects", fmt.Sprintf("product %d does not exist", id))
		} else if err != nil {
			return nil, err
		}
	}
	return out, v.Err()
}

const msgTooLarge = "is too long (the collection may take at most 350 KB stored)"

var errTooManyChanges = admin.Invalid("base", "too many changes for one request: send fewer collects or metafields at a time")

// matches checks the filters read from the collection itself.
func matches(f *collection.Filter, r *collection.Record) bool {
	return f.Matches(r.Title, r.Handle, r.CreatedAt, r.UpdatedAt, r.PublishedAt)
}

// present moves the timestamps into the shop's time zone.
func present(c *collection.Collection, shop *admin.Shop) {
	loc := shop.Location()
	c.UpdatedAt, c.PublishedAt = c.UpdatedAt.In(loc), c.PublishedAt.In(loc)
	if c.Image != nil {
		img := *c.Image
		img.CreatedAt = img.CreatedAt.In(loc)
		c.Image = &img
	}
}

// shown is the collection as responses and webhook payloads show it.
func shown(r *collection.Record, shop *admin.Shop) *collection.Collection {
	c := r.Collection
	present(&c, shop)
	return &c
}
