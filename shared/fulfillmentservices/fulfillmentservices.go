// Package fulfillmentservices serves /admin/fulfillment_services
// (docs/openapi.yaml: schema FulfillmentService, the Fulfillment services
// operations) and gives the fulfillment provider polls their read of every
// registered service.
//
// A service belongs to the app that created it: lists show only the
// caller's unless scope=all, and only the owner may update or delete one
// (another app's id is 404 there). Any app holding the scope may read any
// service by id, as scope=all lists them all. Items:
//
//	service          fulfillment_service / id          (scope=all: one Query)
//	  GSI1           fulfillment_service#app#<app id> / id   (the caller's list)
//	handle guard     handle#fulfillment_service / <handle>   (same transaction)
//
// The record stores the owning app id (app_id), credential2 and the
// timestamps; responses never show them.
package fulfillmentservices

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/outbound"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Partition holds every app's services.
const Partition = "fulfillment_service"

// HandleNamespace is the namespace of service handles: unique in the shop.
const HandleNamespace = "fulfillment_service"

// Formats are the allowed values of format; the first is the default.
var Formats = []string{"json", "xml"}

// Limits on input.
const (
	maxNameLen        = 255
	maxCallbackURLLen = 1024
	maxCredentialLen  = 255
)

// FulfillmentService is the returned record (the operations are Service,
// as in every resource package). AppID (the owning app), Credential2 (the
// password, whose presence credential2_exists reports) and the timestamps
// are stored but never part of a response.
type FulfillmentService struct {
	ID                     int64   `json:"id"`
	Name                   string  `json:"name"`
	Handle                 string  `json:"handle"`
	ServiceName            string  `json:"service_name"`
	CallbackURL            *string `json:"callback_url"`
	Format                 string  `json:"format"`
	InventoryManagement    bool    `json:"inventory_management"`
	TrackingSupport        bool    `json:"tracking_support"`
	RequiresShippingMethod bool    `json:"requires_shipping_method"`
	ProviderID             *int64  `json:"provider_id"`
	Credential1            *string `json:"credential1"`
	Credential2Exists      bool    `json:"credential2_exists"`
	Email                  *string `json:"email"`
	IncludePendingStock    bool    `json:"include_pending_stock"`

	AppID       int64      `json:"-"`
	Credential2 string     `json:"-"`
	CreatedAt   admin.Time `json:"-"`
	UpdatedAt   admin.Time `json:"-"`
}

// stored is the item's JSON: the service plus its hidden fields.
type stored struct {
	FulfillmentService
	AppID       int64      `json:"app_id"`
	Credential2 string     `json:"credential2,omitempty"`
	CreatedAt   admin.Time `json:"created_at"`
	UpdatedAt   admin.Time `json:"updated_at"`
}

// decode reads a service item, hidden fields included.
func decode(it *store.Item) (FulfillmentService, error) {
	var s stored
	if err := records.Decode(it, &s); err != nil {
		return FulfillmentService{}, err
	}
	out := s.FulfillmentService
	out.AppID, out.Credential2, out.CreatedAt, out.UpdatedAt = s.AppID, s.Credential2, s.CreatedAt, s.UpdatedAt
	out.Credential2Exists = out.Credential2 != ""
	return out, nil
}

// AppPartition is the GSI1 partition of one app's services.
func AppPartition(appID int64) string { return Partition + "#app#" + strconv.FormatInt(appID, 10) }

func key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

func (s *FulfillmentService) item(version int64) store.Item {
	s.Credential2Exists = s.Credential2 != ""
	return store.Item{
		PK: Partition, SK: records.IDSK(s.ID),
		GSI1PK: AppPartition(s.AppID), GSI1SK: records.IDSK(s.ID),
		Version: version,
		Data: records.Encode(stored{
			FulfillmentService: *s, AppID: s.AppID, Credential2: s.Credential2,
			CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt,
		}),
	}
}

// Input is the writable part; pointers and Optionals tell absent from given.
type Input struct {
	Name                   *string                `json:"name" null:"refuse"`
	CallbackURL            admin.Optional[string] `json:"callback_url"`
	Format                 *string                `json:"format" null:"refuse"`
	InventoryManagement    *bool                  `json:"inventory_management" null:"refuse"`
	TrackingSupport        *bool                  `json:"tracking_support" null:"refuse"`
	RequiresShippingMethod *bool                  `json:"requires_shipping_method" null:"refuse"`
	Credential1            admin.Optional[string] `json:"credential1"`
	Credential2            admin.Optional[string] `json:"credential2"`
}

// apply validates in and merges it into s; create requires name and fills
// the defaults. The rules that tie fields together are checked on the result.
func (in *Input) apply(s *FulfillmentService, create bool, refused func(string) bool) error {
	var v admin.Validation
	v.RequiredText("name", in.Name, create, maxNameLen, &s.Name)
	if (in.Name != nil || create) && !v.Has("name") {
		s.ServiceName = s.Name // service_name follows a given name
	}
	if in.CallbackURL.Set {
		u := strings.TrimSpace(in.CallbackURL.Value)
		switch {
		case in.CallbackURL.Null || u == "":
			s.CallbackURL = nil
		case len(u) > maxCallbackURLLen:
			v.Add("callback_url", admin.TooLong(maxCallbackURLLen))
		case !validCallbackURL(u):
			v.Add("callback_url", admin.MsgInvalid)
		case refused(u):
			v.Add("callback_url", outbound.MsgRefused)
		default:
			s.CallbackURL = &u
		}
	}
	switch {
	case in.Format != nil:
		if *in.Format != Formats[0] && *in.Format != Formats[1] {
			v.Add("format", admin.MsgNotInList)
		} else {
			s.Format = *in.Format
		}
	case create:
		s.Format = Formats[0]
	}
	if in.InventoryManagement != nil {
		s.InventoryManagement = *in.InventoryManagement
	}
	if in.TrackingSupport != nil {
		s.TrackingSupport = *in.TrackingSupport
	}
	switch {
	case in.RequiresShippingMethod != nil:
		s.RequiresShippingMethod = *in.RequiresShippingMethod
	case create:
		s.RequiresShippingMethod = true
	}
	if in.Credential1.Set {
		if c := strings.TrimSpace(in.Credential1.Value); utf8.RuneCountInString(c) > maxCredentialLen {
			v.Add("credential1", admin.TooLong(maxCredentialLen))
		} else {
			admin.SetText(&s.Credential1, in.Credential1)
		}
	}
	if in.Credential2.Set {
		if utf8.RuneCountInString(in.Credential2.Value) > maxCredentialLen {
			v.Add("credential2", admin.TooLong(maxCredentialLen))
		} else {
			s.Credential2 = in.Credential2.Value // null and "" clear it
		}
	}
	s.Credential2Exists = s.Credential2 != ""
	if (s.InventoryManagement || s.TrackingSupport) && s.CallbackURL == nil && !v.Has("callback_url") {
		v.Add("callback_url", admin.MsgBlank)
	}
	return v.Err()
}

// validCallbackURL accepts an absolute http or https URL with a host and no
// query or fragment: it is the root the callback paths are appended to.
func validCallbackURL(a string) bool { return admin.IsCallbackURL(a) }
