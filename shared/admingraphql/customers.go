package admingraphql

import (
	"context"
	"strings"

	"github.com/storeadmin/adminapi/shared/addresses"
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/graphql"
	"github.com/storeadmin/adminapi/shared/metafields"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/savedsearches"
)

// Customers are the seed's (the spec serves no customer writes); their
// addresses change through the address mutations, which call the REST
// addresses' operations (and so fire customers/update as REST does).

// customerObj is a Customer; its addresses are read when one of
// addresses, addressesV2 or defaultAddress is selected, once for all
// three (the request's loader).
type customerObj struct {
	c savedsearches.Customer
	s Service
	l *loader
}

func (customerObj) TypeName() string { return "Customer" }

func (o customerObj) Field(ctx context.Context, f *graphql.Field) (any, error) {
	c := o.c
	switch f.Name {
	case "id":
		return graphql.GID("Customer", c.ID), nil
	case "legacyResourceId":
		return c.ID, nil
	case "firstName":
		return c.FirstName, nil
	case "lastName":
		return c.LastName, nil
	case "displayName":
		name := strings.TrimSpace(deref(c.FirstName) + " " + deref(c.LastName))
		if name == "" {
			name = deref(c.Email)
		}
		return name, nil
	case "email":
		return c.Email, nil
	case "defaultEmailAddress":
		if deref(c.Email) == "" {
			return nil, nil
		}
		return graphql.Map{Type: "CustomerEmailAddress", Fields: map[string]any{"emailAddress": *c.Email}}, nil
	case "note":
		return c.Note, nil
	case "multipassIdentifier":
		return c.MultipassIdentifier, nil
	case "numberOfOrders":
		return c.OrdersCount, nil
	case "amountSpent":
		return graphql.Map{Type: "MoneyV2", Fields: map[string]any{"amount": string(c.TotalSpent), "currencyCode": admin.ShopFrom(ctx).Currency}}, nil
	case "state":
		if c.State == "" {
			return "DISABLED", nil
		}
		return strings.ToUpper(c.State), nil
	case "tags":
		var tags []string
		for _, t := range strings.Split(c.Tags, ",") {
			if t = strings.TrimSpace(t); t != "" {
				tags = append(tags, t)
			}
		}
		return nonNil(tags), nil
	case "verifiedEmail":
		return c.VerifiedEmail, nil
	case "createdAt":
		return c.CreatedAt.Time, nil
	case "updatedAt":
		return c.UpdatedAt.Time, nil
	case "addresses", "addressesV2", "defaultAddress":
		all, def, err := o.l.addresses(ctx, c.ID)
		if err != nil {
			return nil, err
		}
		switch f.Name {
		case "defaultAddress":
			if def == nil {
				return nil, nil
			}
			return addressObj(*def), nil
		case "addresses":
			n, ok := intArg(f.Args["first"])
			if ok && n >= 0 && n < len(all) {
				all = all[:n]
			}
			out := make([]graphql.Object, len(all))
			for i, a := range all {
				out[i] = addressObj(a)
			}
			return out, nil
		}
		p, err := graphql.PageArgs(f.Args)
		if err != nil {
			return nil, err
		}
		return pageInMemory("MailingAddressConnection", p, all, func(a addresses.Address) graphql.Object { return addressObj(a) },
			func(a addresses.Address) int64 { return a.ID }), nil
	}
	return nil, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func intArg(v any) (int, bool) {
	switch n := v.(type) {
	case int64:
		return int(n), true
	case int:
		return n, true
	}
	return 0, false
}

// addressObj is a MailingAddress: a customer's address.
type addressObj addresses.Address

func (addressObj) TypeName() string { return "MailingAddress" }

// addressGID is a customer address's global id, as Shopify writes it.
func addressGID(id int64) string {
	return graphql.GID("MailingAddress", id) + "?model_name=CustomerAddress"
}

// parseAddressGID reads a MailingAddress global id, with or without its
// model_name.
func parseAddressGID(s string) (int64, error) {
	base, _, _ := strings.Cut(s, "?")
	_, id, err := graphql.ParseGID(base, "MailingAddress")
	if err != nil {
		return 0, graphql.Errorf("INVALID_ID", "Invalid global id '%s'", s)
	}
	return id, nil
}

func (a addressObj) Field(_ context.Context, f *graphql.Field) (any, error) {
	opt := func(s string) any {
		if s == "" {
			return nil
		}
		return s
	}
	switch f.Name {
	case "id":
		return addressGID(a.ID), nil
	case "address1":
		return opt(a.Address1), nil
	case "address2":
		return opt(a.Address2), nil
	case "city":
		return opt(a.City), nil
	case "zip":
		return opt(a.Zip), nil
	case "phone":
		return opt(a.Phone), nil
	case "company":
		return a.Company, nil
	case "firstName":
		return a.FirstName, nil
	case "lastName":
		return a.LastName, nil
	case "name":
		return a.Name, nil
	case "province":
		return opt(a.Province), nil
	case "provinceCode":
		return opt(a.ProvinceCode), nil
	case "country":
		return opt(a.Country), nil
	case "countryCodeV2":
		return opt(a.CountryCode), nil
	}
	return nil, nil
}

// customer is a Customer with its metafields.
func (s Service) customer(c savedsearches.Customer, l *loader) graphql.Object {
	return s.owned(customerObj{c, s, l}, metafields.OwnerCustomer, c.ID)
}

// customerTerms are the terms customers(query:) takes: those of the
// saved searches' language (savedsearches.ParseQuery), which the REST
// saved searches filter customers by.
var customerTerms = []string{"accepts_marketing", "country", "orders_count", "total_spent", "order_date", "last_order_date", "state", "tag"}

// customerSearch turns a query: argument into a saved search's query:
// each field:value term as the same term, a value with spaces in single
// quotes; another field is refused by name.
func customerSearch(f *graphql.Field) (string, error) {
	q, _ := f.Args["query"].(string)
	terms, err := graphql.ParseSearch(q)
	if err != nil {
		return "", err
	}
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		if !contains(customerTerms, t.Field) {
			return "", graphql.Errorf("BAD_REQUEST", "query: %s is not a filter of this list; it takes %s", t.Field, strings.Join(customerTerms, ", "))
		}
		v := t.Value
		if strings.ContainsAny(v, " \t'") {
			v = "'" + strings.ReplaceAll(v, "'", "") + "'"
		}
		parts = append(parts, t.Field+":"+strings.TrimPrefix(t.Op, ":")+v)
	}
	return strings.Join(parts, " "), nil
}

func (s Service) customerQuery(ctx context.Context, f *graphql.Field, l *loader) (any, error) {
	if f.Name == "customer" {
		id, err := idArg(f, "id", "Customer")
		if err != nil {
			return nil, err
		}
		c, err := s.Customers.Customer(ctx, id)
		if err != nil {
			return found(nil, err)
		}
		return s.customer(c, l), nil
	}
	query, err := customerSearch(f)
	if err != nil {
		return nil, err
	}
	return listOf(f, "customersCount", "CustomerConnection", func() (int, error) { return s.Customers.SearchCount(ctx, query) },
		func(w records.Window) ([]savedsearches.Customer, records.Span, error) {
			return s.Customers.Search(ctx, query, w)
		},
		func(c savedsearches.Customer) graphql.Object { return s.customer(c, l) }, func(c savedsearches.Customer) int64 { return c.ID })
}

// addressInput is a MailingAddressInput as the REST input (its id is the
// addressId argument's).
func addressInput(m map[string]any) *addresses.Input {
	in := &addresses.Input{}
	for k, dst := range map[string]*admin.Optional[string]{
		"address1": &in.Address1, "address2": &in.Address2, "city": &in.City, "company": &in.Company,
		"country": &in.Country, "countryCode": &in.CountryCode, "firstName": &in.FirstName, "lastName": &in.LastName,
		"phone": &in.Phone, "province": &in.Province, "provinceCode": &in.ProvinceCode, "zip": &in.Zip,
	} {
		v, ok := m[k]
		if !ok {
			continue
		}
		dst.Set, dst.Null = true, v == nil
		dst.Value, _ = v.(string)
	}
	return in
}

// notFound is a mutation's payload when the record an argument names is
// not there: one user error on that argument.
func notFound(typ, key, arg, what string) graphql.Object {
	return graphql.Map{Type: typ, Fields: map[string]any{key: nil,
		"userErrors": []graphql.Object{userError("UserError", []string{arg}, what+" does not exist", "")}}}
}

func (s Service) customerMutation(ctx context.Context, f *graphql.Field, l *loader) (any, error) {
	cid, err := idArg(f, "customerId", "Customer")
	if err != nil {
		return nil, err
	}
	typ := strings.ToUpper(f.Name[:1]) + f.Name[1:] + "Payload"
	key := map[string]string{"customerAddressCreate": "address", "customerAddressUpdate": "address",
		"customerAddressDelete": "deletedAddressId", "customerUpdateDefaultAddress": "customer"}[f.Name]
	if _, err := s.Customers.Customer(ctx, cid); admin.ErrorCode(err) == admin.ENOTFOUND {
		return notFound(typ, key, "customerId", "Customer"), nil
	} else if err != nil {
		return nil, err
	}
	var aid int64
	if f.Name != "customerAddressCreate" {
		if aid, err = parseAddressGID(f.Args["addressId"].(string)); err != nil {
			return nil, err
		}
	}
	// an unknown address, the customer being there, is the addressId's
	addressErr := func(err error) (graphql.Object, error) {
		if admin.ErrorCode(err) == admin.ENOTFOUND {
			return notFound(typ, key, "addressId", "Address"), nil
		}
		return nil, nil
	}
	asDefault, _ := f.Args["setAsDefault"].(bool)
	switch f.Name {
	case "customerAddressCreate":
		m, _ := f.Args["address"].(map[string]any)
		l.forget(cid)
		a, err := s.Addresses.Create(ctx, cid, addressInput(m))
		if err == nil && asDefault {
			a, err = s.Addresses.SetDefault(ctx, cid, a.ID)
		}
		return payload(typ, key, addressObj(a), "UserError", "address", err)
	case "customerAddressUpdate":
		m, _ := f.Args["address"].(map[string]any)
		l.forget(cid)
		a, err := s.Addresses.Update(ctx, cid, aid, addressInput(m))
		if err == nil && asDefault && !a.Default {
			a, err = s.Addresses.SetDefault(ctx, cid, aid)
		}
		if p, _ := addressErr(err); p != nil {
			return p, nil
		}
		return payload(typ, key, addressObj(a), "UserError", "address", err)
	case "customerAddressDelete":
		l.forget(cid)
		err := s.Addresses.Delete(ctx, cid, aid)
		if p, _ := addressErr(err); p != nil {
			return p, nil
		}
		return payload(typ, key, addressGID(aid), "UserError", "addressId", err)
	case "customerUpdateDefaultAddress":
		_, err := s.Addresses.SetDefault(ctx, cid, aid)
		if p, _ := addressErr(err); p != nil {
			return p, nil
		}
		if err != nil {
			return payload(typ, key, nil, "UserError", "addressId", err)
		}
		c, err := s.Customers.Customer(ctx, cid)
		if err != nil {
			return nil, err
		}
		l.forget(cid)
		return payload(typ, key, s.customer(c, l), "UserError", "addressId", nil)
	}
	return nil, nil
}
