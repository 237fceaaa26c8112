// Package customcollections serves /com/custom_collections (spec §2.6,
// §4.6, with update and delete).
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
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
	"github.com/storeadmin/adminapi/shared/customcollections/collection"
	"github.com/storeadmin/adminapi/shared/events"
	"github.com/storeadmin/adminapi/shared/handles"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// SortOrders are the allowed values of sort_order (§2.6).
var SortOrders = []string{"alpha-asc", "alpha-desc", "best-selling", "created", "created-desc", "manual", "price-asc", "price-desc"}

const (
	maxTitle = 255
	// MaxCollects is the most products a create may link (each costs two
	// items of its transaction).
	MaxCollects = 40
)

type input struct {
	Title          *string                `json:"title"`
	Handle         *string                `json:"handle"`
	BodyHTML       admin.Optional[string] `json:"body_html"`
	SortOrder      *string                `json:"sort_order"`
	TemplateSuffix admin.Optional[string] `json:"template_suffix"`
	Published      *bool                  `json:"published"`
	Image          json.RawMessage        `json:"image"`
	Collects       []collectInput         `json:"collects"`
	Metafields     []metafields.Input     `json:"metafields"`
}

type collectInput struct {
	ProductID *int64 `json:"product_id"`
}

// subject is the collection as the events log names it.
func subject(c *collection.Collection) events.Subject {
	return events.Subject{Type: events.Collection, ID: c.ID, Path: "/collections/" + c.Handle, Label: c.Title}
}

// apply validates in and merges it into r (all but publishing, the image,
// handle claims and product lookups, which need the store or the network).
func (in *input) apply(r *collection.Record, create bool) (images.Change, error) {
	var v admin.Validation
	v.RequiredText("title", in.Title, create, maxTitle, &r.Title)
	if in.Handle != nil && !handles.Valid(*in.Handle) {
		v.Add("handle", admin.MsgInvalid)
	}
	if in.BodyHTML.Set {
		r.BodyHTML = nil
		if !in.BodyHTML.Null {
			s := in.BodyHTML.Value
			r.BodyHTML = &s
		}
		if len(records.Encode(r)) > records.MaxData {
			v.Add("body_html", "is too long (the collection may take at most 350 KB stored)")
		}
	}
	if in.SortOrder != nil {
		if !slices.Contains(SortOrders, *in.SortOrder) {
			v.Add("sort_order", admin.MsgNotInList)
		} else {
			r.SortOrder = *in.SortOrder
		}
	}
	admin.SetText(&r.TemplateSuffix, in.TemplateSuffix)
	img := images.ParseChange(in.Image, &v)
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
func products(ctx context.Context, st store.Store, in []collectInput) ([]int64, error) {
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

// fits reports whether ops, plus extra more, make one transaction once
// records.Transact has folded the count-shard ops (one per partition).
func fits(ops []store.Op, extra int) bool {
	n, counts := extra, map[string]bool{}
	for i := range ops {
		op := &ops[i]
		if op.Kind == store.OpAdd && op.Cond == store.Always && strings.HasPrefix(op.Key.PK, "count#") {
			counts[op.Key.PK] = true
			continue
		}
		n++
	}
	return n+len(counts) <= store.MaxTransactItems
}

var errTooManyChanges = admin.Invalid("base", "too many changes for one request: send fewer collects or metafields at a time")
