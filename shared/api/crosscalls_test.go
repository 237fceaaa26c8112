package api_test

import (
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// crossResourceCalls are the calls one resource (or pipeline) makes to
// another resource's package-level function that takes a store.Store or
// returns []store.Op, rather than to its operations: each with its reason.
// A new such call fails TestCrossResourceCalls until it is made through an
// operation or listed here; a listed call that is gone fails it too.
var crossResourceCalls = map[string]string{
	"shared/apipermissions -> shared/fulfillmentservices.DeleteAllOfApp": "an uninstall deletes the app's services in its transaction",
	"shared/apipermissions -> shared/scripttags.DeleteAllOfApp":          "an uninstall deletes the app's script tags in its transaction",
	"shared/apipermissions -> shared/webhooks.DeleteAllOfApp":            "an uninstall deletes the app's webhooks in its transaction",
	"shared/apipermissions -> shared/webhooks.Subscribers":               "the subscribers of a topic: the fan-out reads them, and an uninstall snapshots its app's for app/uninstalled",
	"shared/articles -> shared/comments.DeleteOfArticleOps":              "an article's comments are deleted with it (in its transaction while they fit)",
	"shared/apipermissions -> shared/events.Ops":                         "the event record joins the change's transaction: every writer logs its events so",
	"shared/articles -> shared/events.OfChange":                          "the change feed's deriver writes the change's event, reading its author through the store it derives with",
	"shared/articles -> shared/metafields.DeleteOwnerOps":                "an owner's metafields go in the transaction that deletes it",
	"shared/articles -> shared/metafields.Ops":                           "the owner's metafields are written in the owner's own transaction",
	"shared/collects -> shared/smartcollections.CountMembers":            "collects of a smart collection are its computed members: counted from its membership index",
	"shared/collects -> shared/smartcollections.CountMembershipsOf":      "collects of a product include its smart memberships: counted from the index",
	"shared/collects -> shared/smartcollections.Lookup":                  "the collects of a smart collection need it to exist (404 otherwise)",
	"shared/collects -> shared/smartcollections.MemberOf":                "a collect of a smart collection is read from its membership index",
	"shared/collects -> shared/smartcollections.Members":                 "the collects list of a smart collection pages its membership index",
	"shared/collects -> shared/smartcollections.MembershipsOf":           "the collects list of a product pages its smart memberships",
	"shared/comments -> shared/events.OfChange":                          "the change feed's deriver writes the change's event, reading its author through the store it derives with",
	"shared/customcollections -> shared/collects.CollectionsOf":          "the product_id filter of the collection list reads the product's collects (index keys only)",
	"shared/customcollections -> shared/collects.DeleteOfCollection":     "a deleted custom collection's collects go after it (idempotent, so a late removal is harmless)",
	"shared/customcollections -> shared/collects.LinkOps":                "a custom collection created with collects links them in its own transaction",
	"shared/customcollections -> shared/collects.Linked":                 "a product_id filter with a handle or an id range checks the one collection's link (one GetItem)",
	"shared/customcollections -> shared/metafields.DeleteOwnerOps":       "an owner's metafields go in the transaction that deletes it",
	"shared/customcollections -> shared/metafields.Ops":                  "the owner's metafields are written in the owner's own transaction",
	"shared/delivery -> shared/webhooks.Lookup":                          "the dispatcher and the delivery log read the webhook a delivery or an attempt belongs to",
	"shared/delivery -> shared/webhooks.Remove":                          "the dispatcher removes a webhook that failed for 48 hours",
	"shared/delivery -> shared/webhooks.Subscribers":                     "the subscribers of a topic: the fan-out reads them, and an uninstall snapshots its app's for app/uninstalled",
	"shared/oauth -> shared/events.Ops":                                  "the event record joins the change's transaction: every writer logs its events so",
	"shared/pages -> shared/events.OfChange":                             "the change feed's deriver writes the change's event, reading its author through the store it derives with",
	"shared/customcollections -> shared/events.OfChange":                 "the change feed's deriver writes the change's event, reading its author through the store it derives with",
	"shared/pages -> shared/metafields.DeleteOwnerOps":                   "an owner's metafields go in the transaction that deletes it",
	"shared/pages -> shared/metafields.Ops":                              "the owner's metafields are written in the owner's own transaction",
	"shared/providers -> shared/events.Ops":                              "the event record joins the change's transaction: every writer logs its events so",
	"shared/providers -> shared/fulfillmentservices.All":                 "the hourly polls read every service with a callback_url",
	"shared/smartcollections -> shared/events.OfChange":                  "the change feed's deriver writes the change's event, reading its author through the store it derives with",
	"shared/smartcollections -> shared/metafields.DeleteOwnerOps":        "an owner's metafields go in the transaction that deletes it",
	"shared/transactions -> shared/events.Ops":                           "the event record joins the change's transaction: every writer logs its events so",
	"shared/variants -> shared/events.Ops":                               "the event record joins the change's transaction: every writer logs its events so",
	"shared/variants -> shared/metafields.DeleteOwnerOps":                "an owner's metafields go in the transaction that deletes it",
	"shared/variants -> shared/metafields.Ops":                           "the owner's metafields are written in the owner's own transaction",
}

// TestCrossResourceCalls finds, on types, every call from a package of the
// Resources or Pipelines layer to a store-taking package-level function of
// another Resources package, and holds them to crossResourceCalls.
func TestCrossResourceCalls(t *testing.T) {
	table := layerTable(t)
	fset, imp := exportImporter(t)
	var resources, callers []string
	for _, l := range table {
		switch l.name {
		case "Resources":
			resources = l.packages
			callers = append(callers, l.packages...)
		case "Pipelines":
			callers = append(callers, l.packages...)
		}
	}
	found := map[string]bool{}
	for _, pkg := range callers {
		info, _ := typeCheck(t, fset, imp, pkg)
		for id, obj := range info.Uses {
			fn, ok := obj.(*types.Func)
			if !ok || fn.Pkg() == nil || !fn.Exported() {
				continue
			}
			sig := fn.Type().(*types.Signature)
			callee := strings.TrimPrefix(fn.Pkg().Path(), module)
			if sig.Recv() != nil || callee == pkg || !slices.Contains(resources, callee) || !touchesStore(sig) {
				continue
			}
			call := pkg + " -> " + callee + "." + fn.Name()
			found[call] = true
			if _, ok := crossResourceCalls[call]; !ok {
				t.Errorf("%s: %s calls %s.%s, which takes the store: call an operation of %s, or list the call in crossResourceCalls with its reason",
					fset.Position(id.Pos()), pkg, filepath.Base(callee), fn.Name(), filepath.Base(callee))
			}
		}
	}
	for call := range crossResourceCalls {
		if !found[call] {
			t.Errorf("crossResourceCalls lists %s, which no longer happens: remove it", call)
		}
	}
}

// touchesStore: a parameter is a store.Store, or a result a []store.Op.
func touchesStore(sig *types.Signature) bool {
	for v := range sig.Params().Variables() {
		if types.TypeString(v.Type(), nil) == module+"shared/store.Store" {
			return true
		}
	}
	for v := range sig.Results().Variables() {
		if types.TypeString(v.Type(), nil) == "[]"+module+"shared/store.Op" {
			return true
		}
	}
	return false
}
