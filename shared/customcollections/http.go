package customcollections

import (
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/collections"
	"github.com/storeadmin/adminapi/shared/collections/collection"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/images"
	"github.com/storeadmin/adminapi/shared/platform"
)

// Routes returns the custom collection endpoints, served by the collection
// family's handlers (shared/collections).
func Routes(d *platform.Deps) []httpapi.Route {
	h := collections.Handlers[collection.Collection, Input]{Ops: NewService(d), Wrapper: "custom_collection", Plural: "custom_collections", Present: present}
	s := admin.ScopeProducts
	return []httpapi.Route{
		{Method: "GET", Path: "/com/custom_collections.json", Scope: s, Handler: h.List},
		{Method: "GET", Path: "/com/custom_collections/count.json", Scope: s, Handler: h.Count},
		{Method: "GET", Path: "/com/custom_collections/{id}.json", Scope: s, Handler: h.Get},
		{Method: "POST", Path: "/com/custom_collections.json", Scope: s, Handler: h.Create, MaxBody: images.MaxBody},
		{Method: "PUT", Path: "/com/custom_collections/{id}.json", Scope: s, Handler: h.Update, MaxBody: images.MaxBody},
		{Method: "DELETE", Path: "/com/custom_collections/{id}.json", Scope: s, Handler: h.Delete},
	}
}
