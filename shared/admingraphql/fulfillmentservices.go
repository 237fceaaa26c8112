package admingraphql

import (
	"context"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/fulfillmentservices"
	"github.com/storeadmin/adminapi/shared/graphql"
)

// fulfillmentServiceObj is a FulfillmentService: REST's record, the same
// id; the provider polls read it as they read REST's.
type fulfillmentServiceObj fulfillmentservices.FulfillmentService

func (fulfillmentServiceObj) TypeName() string { return "FulfillmentService" }

func (o fulfillmentServiceObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "id":
		return graphql.GID("FulfillmentService", o.ID), nil
	case "serviceName":
		return o.ServiceName, nil
	case "handle":
		return o.Handle, nil
	case "callbackUrl":
		if o.CallbackURL == nil {
			return nil, nil
		}
		return *o.CallbackURL, nil
	case "inventoryManagement":
		return o.InventoryManagement, nil
	case "trackingSupport":
		return o.TrackingSupport, nil
	case "requiresShippingMethod":
		return o.RequiresShippingMethod, nil
	case "type":
		return "THIRD_PARTY", nil
	}
	return nil, nil
}

// shopFulfillmentServices is Shop.fulfillmentServices: every app's
// services, as REST's scope=all list.
func (s Service) shopFulfillmentServices(ctx context.Context, f *graphql.Field) (any, error) {
	if err := need(f, ctx, admin.ScopeFulfillments, false); err != nil {
		return nil, err
	}
	list, err := s.FulfillmentServices.List(ctx, fulfillmentservices.Filter{All: true})
	if err != nil {
		return nil, err
	}
	out := make([]graphql.Object, len(list))
	for i := range list {
		out[i] = fulfillmentServiceObj(list[i])
	}
	return out, nil
}

// fulfillmentServiceInput is a create's or update's arguments as REST's
// input (format stays REST's default, json).
func fulfillmentServiceInput(args map[string]any) *fulfillmentservices.Input {
	in := &fulfillmentservices.Input{}
	if v, ok := args["name"].(string); ok {
		in.Name = &v
	}
	if v, ok := args["callbackUrl"]; ok {
		in.CallbackURL.Set, in.CallbackURL.Null = true, v == nil
		in.CallbackURL.Value, _ = v.(string)
	}
	for k, p := range map[string]**bool{"inventoryManagement": &in.InventoryManagement, "trackingSupport": &in.TrackingSupport,
		"requiresShippingMethod": &in.RequiresShippingMethod} {
		if v, ok := args[k].(bool); ok {
			*p = &v
		}
	}
	return in
}

// fulfillmentServiceField names REST's fields as the mutations' arguments.
func fulfillmentServiceField(k string) []string {
	switch k {
	case "name", "callback_url", "inventory_management", "tracking_support", "requires_shipping_method":
		return []string{camel(k)}
	}
	return nil
}

func (s Service) fulfillmentServicePayload(typ string, fields map[string]any, err error) (graphql.Object, error) {
	fields["userErrors"] = []graphql.Object{}
	if err != nil {
		ue, ok := themeUserErrors("UserError", "Fulfillment service", err, fulfillmentServiceField, noCode)
		if !ok {
			return nil, err
		}
		for k := range fields {
			fields[k] = nil
		}
		fields["userErrors"] = ue
	}
	return graphql.Map{Type: typ, Fields: fields}, nil
}

func (s Service) fulfillmentServiceQuery(ctx context.Context, f *graphql.Field) (any, error) {
	id, err := idArg(f, "id", "FulfillmentService")
	if err != nil {
		return nil, err
	}
	svc, err := s.FulfillmentServices.Get(ctx, id)
	if err != nil || svc == nil {
		return found(nil, err)
	}
	return fulfillmentServiceObj(*svc), nil
}

// fulfillmentServiceMutation runs REST's create, update and delete: the
// calling app's services only, its handle claimed as REST's.
// fulfillmentOrdersOptIn, inventoryAction and destinationLocationId are
// taken and change nothing (no locations or fulfillment orders here:
// docs/spec-gaps.md).
func (s Service) fulfillmentServiceMutation(ctx context.Context, f *graphql.Field) (any, error) {
	switch f.Name {
	case "fulfillmentServiceCreate":
		svc, err := s.FulfillmentServices.Create(ctx, fulfillmentServiceInput(f.Args))
		return s.fulfillmentServicePayload("FulfillmentServiceCreatePayload", map[string]any{"fulfillmentService": fulfillmentServiceObj(svc)}, err)
	case "fulfillmentServiceUpdate":
		id, err := idArg(f, "id", "FulfillmentService")
		if err != nil {
			return nil, err
		}
		svc, err := s.FulfillmentServices.Update(ctx, id, fulfillmentServiceInput(f.Args))
		return s.fulfillmentServicePayload("FulfillmentServiceUpdatePayload", map[string]any{"fulfillmentService": fulfillmentServiceObj(svc)}, err)
	case "fulfillmentServiceDelete":
		id, err := idArg(f, "id", "FulfillmentService")
		if err != nil {
			return nil, err
		}
		err = s.FulfillmentServices.Delete(ctx, id)
		return s.fulfillmentServicePayload("FulfillmentServiceDeletePayload", map[string]any{"deletedId": graphql.GID("FulfillmentService", id)}, err)
	}
	return nil, nil
}
