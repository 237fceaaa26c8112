// Package addresses serves a customer's addresses under /com/customers
// (docs/openapi.yaml: schema CustomerAddress, the Customers (addresses)
// operations).
//
// Items: an address at customer#<customer id>#address/<id> (the seed's
// partition, counted in count#customer#<customer id>#address), and the
// customer's default at customerdefault/<customer id>: {"address_id",
// "country_code"} (the country for saved searches' country terms),
// written conditioned on the version read by every default change and
// checked by every delete, so one address is the default and the default is
// never deleted. Until a customer's default item exists, the seeded
// addresses' own "default" flags say which one is.
package addresses

import (
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/countries/country"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Address is the stored and returned record.
type Address struct {
	ID           int64   `json:"id"`
	CustomerID   int64   `json:"customer_id"`
	Address1     string  `json:"address1"`
	Address2     string  `json:"address2"`
	City         string  `json:"city"`
	Zip          string  `json:"zip"`
	Phone        string  `json:"phone"`
	Company      *string `json:"company"`
	FirstName    *string `json:"first_name"`
	LastName     *string `json:"last_name"`
	Name         *string `json:"name"`
	Province     string  `json:"province"`
	ProvinceCode string  `json:"province_code"`
	Country      string  `json:"country"`
	CountryName  string  `json:"country_name"`
	CountryCode  string  `json:"country_code"`
	Default      bool    `json:"default"`
}

// Input is the writable part; absent fields keep their value. name is
// always computed from first_name and last_name: Name is decoded only so
// that a name that is no single line of text is refused (422 naming it),
// as the document says, and is otherwise ignored.
type Input struct {
	Name         admin.Optional[string] `json:"name"`
	Address1     admin.Optional[string] `json:"address1"`
	Address2     admin.Optional[string] `json:"address2"`
	City         admin.Optional[string] `json:"city"`
	Zip          admin.Optional[string] `json:"zip"`
	Phone        admin.Optional[string] `json:"phone"`
	Company      admin.Optional[string] `json:"company"`
	FirstName    admin.Optional[string] `json:"first_name"`
	LastName     admin.Optional[string] `json:"last_name"`
	Province     admin.Optional[string] `json:"province"`
	ProvinceCode admin.Optional[string] `json:"province_code"`
	Country      admin.Optional[string] `json:"country"`
	CountryCode  admin.Optional[string] `json:"country_code"`
	CountryName  admin.Optional[string] `json:"country_name"`
}

const (
	wrapper          = "customer_address"
	inputWrapper     = "address"
	plural           = "addresses"
	defaultPartition = "customerdefault"
	maxText          = 255
	// MaxSet is the most ids one set.json request takes (one transaction).
	MaxSet = 50
)

// Messages of the address rules.
const (
	MsgDeleteDefault   = "Cannot delete the customer's default address"
	MsgUnknownCountry  = "is not a known country"
	MsgUnknownProvince = "is not a known province of the country"
)

func partition(cid int64) string {
	return parents.ChildPartition(parents.CustomerPartition, cid, "address")
}

func key(cid, id int64) store.Key { return store.Key{PK: partition(cid), SK: records.IDSK(id)} }

func customerKey(cid int64) store.Key {
	return store.Key{PK: parents.CustomerPartition, SK: records.IDSK(cid)}
}

func defaultKey(cid int64) store.Key { return store.Key{PK: defaultPartition, SK: records.IDSK(cid)} }

// defaultRecord is the customer's default item. CountryCode is the default
// address's country as last written (absent in items written before it was
// kept), which saved searches read for their country terms.
type defaultRecord struct {
	AddressID   int64   `json:"address_id"`
	CountryCode *string `json:"country_code,omitempty"`
}

func (a *Address) defaultItem(version int64) store.Item {
	code := a.CountryCode
	return store.Item{PK: defaultPartition, SK: records.IDSK(a.CustomerID), Version: version,
		Data: records.Encode(defaultRecord{AddressID: a.ID, CountryCode: &code})}
}

func (a *Address) item(version int64) store.Item {
	stored := *a
	stored.Default = false // the default item says which is; only seeded flags count before it exists
	return store.Item{PK: partition(a.CustomerID), SK: records.IDSK(a.ID), Version: version, Data: records.Encode(&stored)}
}

func text(dst *string, in admin.Optional[string], field string, v *admin.Validation) {
	if !in.Set {
		return
	}
	s := strings.TrimSpace(in.Value)
	if in.Null {
		s = ""
	}
	if len(s) > maxText {
		v.Add(field, admin.TooLong(maxText))
		return
	}
	*dst = s
}

func nullable(dst **string, in admin.Optional[string], field string, v *admin.Validation) {
	if in.Set && !in.Null && len(strings.TrimSpace(in.Value)) > maxText {
		v.Add(field, admin.TooLong(maxText))
		return
	}
	admin.SetText(dst, in)
}

// apply validates in and merges it into a, then fills the derived fields:
// name from the first and last names, the country's code and names and the
// province's code and name from the ISO 3166 data.
func (in *Input) apply(a *Address) error {
	var v admin.Validation
	text(&a.Address1, in.Address1, "address1", &v)
	text(&a.Address2, in.Address2, "address2", &v)
	text(&a.City, in.City, "city", &v)
	text(&a.Zip, in.Zip, "zip", &v)
	text(&a.Phone, in.Phone, "phone", &v)
	nullable(&a.Company, in.Company, "company", &v)
	nullable(&a.FirstName, in.FirstName, "first_name", &v)
	nullable(&a.LastName, in.LastName, "last_name", &v)
	a.Name = fullName(a.FirstName, a.LastName)

	// The country: the code when given, else the name under country, else
	// country_name; else the one the address has.
	code := a.CountryCode
	countryGiven := false // a blank given value clears the country unless a later field names one
	for _, f := range []struct {
		name string
		in   admin.Optional[string]
	}{{"country_code", in.CountryCode}, {"country", in.Country}, {"country_name", in.CountryName}} {
		if !f.in.Set {
			continue
		}
		s := strings.TrimSpace(f.in.Value)
		if f.in.Null || s == "" {
			if !countryGiven {
				code, countryGiven = "", true
			}
			continue
		}
		c, _, ok := country.Lookup(s)
		if !ok {
			v.Add(f.name, MsgUnknownCountry)
			return v.Err()
		}
		code = c
		break
	}
	if code == "" {
		a.Country, a.CountryName, a.CountryCode = "", "", ""
	} else {
		c, name, ok := country.Lookup(code)
		if !ok {
			v.Add("country_code", MsgUnknownCountry)
			return v.Err()
		}
		a.Country, a.CountryName, a.CountryCode = name, name, c
	}

	// The province: its code when given, else its name; else the one the
	// address has, which must belong to the (new) country.
	field, given := "province", a.ProvinceCode
	if given == "" {
		given = a.Province
	}
	switch {
	case in.ProvinceCode.Set && !in.ProvinceCode.Null && strings.TrimSpace(in.ProvinceCode.Value) != "":
		field, given = "province_code", in.ProvinceCode.Value
	case in.Province.Set && !in.Province.Null && strings.TrimSpace(in.Province.Value) != "":
		given = in.Province.Value
	case in.ProvinceCode.Set || in.Province.Set:
		given = ""
	}
	if strings.TrimSpace(given) == "" {
		a.Province, a.ProvinceCode = "", ""
		return v.Err()
	}
	pc, pn, ok := country.LookupProvince(a.CountryCode, given)
	if !ok {
		v.Add(field, MsgUnknownProvince)
		return v.Err()
	}
	a.Province, a.ProvinceCode = pn, pc
	return v.Err()
}

func fullName(first, last *string) *string {
	var parts []string
	for _, p := range []*string{first, last} {
		if p != nil && *p != "" {
			parts = append(parts, *p)
		}
	}
	if len(parts) == 0 {
		return nil
	}
	s := strings.Join(parts, " ")
	return &s
}
