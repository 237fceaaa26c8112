package admingraphql

import (
	"context"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/charges"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/records"
)

// subscriptionObj is an AppSubscription: a REST recurring application
// charge of the calling app, the same id.
type subscriptionObj struct {
	c charges.Charge
	s Service
}

func (subscriptionObj) TypeName() string { return "AppSubscription" }

func (o subscriptionObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	c := o.c
	switch f.Name {
	case "id":
		return graphql.GID("AppSubscription", c.ID), nil
	case "name":
		return c.Name, nil
	case "returnUrl":
		return c.ReturnURL, nil
	case "status":
		return strings.ToUpper(c.StatusAt(o.s.Charges.Now())), nil
	case "test":
		return c.Test != nil && *c.Test, nil
	case "trialDays":
		return c.TrialDays, nil
	case "createdAt":
		return c.CreatedAt.Time, nil
	case "currentPeriodEnd":
		if c.StatusAt(o.s.Charges.Now()) != charges.StatusActive || c.BillingOn == nil {
			return nil, nil
		}
		return c.BillingOn.Time, nil
	case "lineItems":
		price := graphql.Map{Type: "MoneyV2", Fields: map[string]any{"amount": c.Price.String(), "currencyCode": "USD"}}
		pricing := graphql.Map{Type: "AppRecurringPricing", Fields: map[string]any{"interval": "EVERY_30_DAYS", "price": price, "discount": nil, "planHandle": nil}}
		plan := graphql.Map{Type: "AppPlanV2", Fields: map[string]any{"pricingDetails": pricing}}
		return []graphql.Object{graphql.Map{Type: "AppSubscriptionLineItem", Fields: map[string]any{
			"id": "gid://shopify/AppSubscriptionLineItem/" + strconv.FormatInt(c.ID, 10) + "?v=1&index=0", "plan": plan}}}, nil
	}
	return nil, nil
}

// installationObj is the calling app's AppInstallation.
type installationObj struct{ s Service }

func (installationObj) TypeName() string { return "AppInstallation" }

func (o installationObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	app := admin.AppFrom(ctx)
	switch f.Name {
	case "id":
		return graphql.GID("AppInstallation", app.ID), nil
	case "activeSubscriptions":
		return o.s.activeSubscriptions(ctx, app.ID)
	case "allSubscriptions":
		return listOf(f, "", "AppSubscriptionConnection", nil,
			func(w records.Window) ([]charges.Charge, records.Span, error) {
				return o.s.Charges.List(ctx, app.ID, 0, w)
			},
			func(c charges.Charge) graphql.Object { return subscriptionObj{c, o.s} }, func(c charges.Charge) int64 { return c.ID })
	}
	return nil, nil
}

// activeSubscriptions is the app's active charge. Shopify activates a
// subscription when the merchant accepts it; REST's charges wait for the
// app's activate call (the spec's Billing operations), so a charge accepted
// on the confirmation page is activated here, through REST's Activate, when
// the app first looks: REST then reads it active too.
func (s Service) activeSubscriptions(ctx context.Context, appID int64) ([]graphql.Object, error) {
	all, err := s.allCharges(ctx, appID)
	if err != nil {
		return nil, err
	}
	activated := false
	for _, c := range all { // in id order: the newest accepted ends active
		if c.StatusAt(s.Charges.Now()) != charges.StatusAccepted {
			continue
		}
		_, err := s.Charges.Activate(ctx, appID, c.ID)
		if code := admin.ErrorCode(err); code == admin.EINVALID || code == admin.ENOTFOUND {
			continue // decided otherwise meanwhile
		}
		if err != nil {
			return nil, err
		}
		activated = true
	}
	if activated {
		if all, err = s.allCharges(ctx, appID); err != nil {
			return nil, err
		}
	}
	out := []graphql.Object{}
	for _, c := range all {
		if c.StatusAt(s.Charges.Now()) == charges.StatusActive {
			out = append(out, subscriptionObj{c, s})
		}
	}
	return out, nil
}

// allCharges reads every charge of the app, in id order, a page of 250 at
// a time.
func (s Service) allCharges(ctx context.Context, appID int64) ([]charges.Charge, error) {
	var all []charges.Charge
	w := records.Window{Limit: 250}
	for {
		list, span, err := s.Charges.List(ctx, appID, 0, w)
		if err != nil {
			return nil, err
		}
		all = append(all, list...)
		if !span.After || len(list) == 0 {
			return all, nil
		}
		w.Cursor = records.Cursor{Key: records.IDSK(list[len(list)-1].ID)}
	}
}

// billingField names REST's charge fields as appSubscriptionCreate's
// arguments.
func billingField(k string) []string {
	switch k {
	case "name", "test":
		return []string{k}
	case "return_url":
		return []string{"returnUrl"}
	case "trial_days":
		return []string{"trialDays"}
	case "price":
		return []string{"lineItems", "0", "plan", "appRecurringPricingDetails", "price", "amount"}
	case "id":
		return []string{"id"}
	}
	return nil
}

// billingPayload is a billing mutation's answer, its user errors
// UserErrors (field and message).
func billingPayload(typ string, fields map[string]any, err error) (graphql.Object, error) {
	fields["userErrors"] = []graphql.Object{}
	if err != nil {
		ue, ok := themeUserErrors("UserError", "AppSubscription", err, billingField, noCode)
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

// decimalText is a Decimal input as the REST price's text.
func decimalText(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case int64:
		return strconv.FormatInt(v, 10)
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return ""
}

// subscriptionInput is appSubscriptionCreate's arguments as REST's charge
// input: one line item of recurring pricing every 30 days in USD, as
// REST's charges bill (usage pricing, annual plans and other currencies
// are user errors: docs/spec-gaps.md).
func subscriptionInput(args map[string]any) (*charges.Input, error) {
	in := &charges.Input{}
	if v, ok := args["name"].(string); ok {
		in.Name = &v
	}
	if v, ok := args["returnUrl"].(string); ok {
		in.ReturnURL = &v
	}
	if v, ok := args["test"].(bool); ok && v { // false is a real charge, REST's null
		in.Test = &v
	}
	if v, ok := args["trialDays"].(int64); ok {
		in.TrialDays = admin.Optional[int64]{Set: true, Value: v}
	}
	var v admin.Validation
	items, _ := args["lineItems"].([]any)
	if len(items) != 1 {
		v.Add("price", "must be given by exactly one line item: a recurring price (several line items and usage pricing are not served)")
		return in, v.Err()
	}
	item, _ := items[0].(map[string]any)
	plan, _ := item["plan"].(map[string]any)
	rec, _ := plan["appRecurringPricingDetails"].(map[string]any)
	switch {
	case plan["appUsagePricingDetails"] != nil || rec == nil:
		v.Add("price", "must be a recurring price: usage pricing is not served")
	case rec["interval"] != nil && rec["interval"] != "EVERY_30_DAYS":
		v.Add("price", "must be billed EVERY_30_DAYS: annual plans are not served")
	default:
		price, _ := rec["price"].(map[string]any)
		if cc, _ := price["currencyCode"].(string); cc != "USD" {
			v.Add("price", "must be in USD")
		}
		in.Price = charges.Price{Set: true, Text: decimalText(price["amount"])}
	}
	return in, v.Err()
}

func (s Service) billingMutation(ctx context.Context, f *graphql.Field) (any, error) {
	appID := admin.AppFrom(ctx).ID
	switch f.Name {
	case "appSubscriptionCreate":
		if b, _ := f.Args["replacementBehavior"].(string); b != "" && b != "STANDARD" {
			return billingPayload("AppSubscriptionCreatePayload", map[string]any{"appSubscription": nil, "confirmationUrl": nil},
				admin.Invalid("base", "replacementBehavior "+b+" is not served: the new subscription replaces the active one when the app activates it (STANDARD)"))
		}
		in, err := subscriptionInput(f.Args)
		var c charges.Charge
		if err == nil {
			c, err = s.Charges.Create(ctx, appID, in)
		}
		var confirm any
		if err == nil {
			if u := c.View(baseOf(ctx), s.Charges.Now(), admin.ShopFrom(ctx).Location()).ConfirmationURL; u != nil {
				confirm = *u
			}
		}
		return billingPayload("AppSubscriptionCreatePayload", map[string]any{"appSubscription": subscriptionObj{c, s}, "confirmationUrl": confirm}, err)
	case "appSubscriptionCancel":
		id, err := idArg(f, "id", "AppSubscription")
		if err != nil {
			return nil, err
		}
		c, err := s.Charges.Cancel(ctx, appID, id)
		return billingPayload("AppSubscriptionCancelPayload", map[string]any{"appSubscription": subscriptionObj{c, s}}, err)
	}
	return nil, nil
}
