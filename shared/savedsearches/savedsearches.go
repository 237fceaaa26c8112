// Package savedsearches serves /com/customer_saved_searches (docs/openapi.yaml:
// schema CustomerSavedSearch, the Customers (saved searches) operations): saved
// customer queries and the customers each one matches.
//
// Items: the saved search at customersavedsearch/<id>, counted in
// count#customersavedsearch by the change feed (Derive). The customers of a search are evaluated over
// the compact per-customer entries of customerindex (customersearch /
// <customer id>, written by the seed loader), with the default address's
// country as the addresses package keeps it (its customerdefault items,
// read through addresses.Service.DefaultCountries) winning over the
// seeded one; the page answered is then read whole: the customer record
// and its addresses.
package savedsearches

import (
	"github.com/storeadmin/adminapi/shared/addresses"
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// SavedSearch is the stored and returned record.
type SavedSearch struct {
	ID        int64      `json:"id"`
	Name      string     `json:"name"`
	Query     string     `json:"query"`
	CreatedAt admin.Time `json:"created_at"`
	UpdatedAt admin.Time `json:"updated_at"`
}

// Input is the writable part; nil leaves a field as it is on update.
type Input struct {
	Name  *string `json:"name"`
	Query *string `json:"query"`
}

// Customer is a customer of a saved search as answered (schema
// CustomerSavedSearch): the seeded record with the spec's fields, its addresses
// and its default address.
type Customer struct {
	ID                  int64               `json:"id"`
	Email               *string             `json:"email"`
	FirstName           *string             `json:"first_name"`
	LastName            *string             `json:"last_name"`
	AcceptsMarketing    bool                `json:"accepts_marketing"`
	CreatedAt           admin.Time          `json:"created_at"`
	UpdatedAt           admin.Time          `json:"updated_at"`
	LastOrderID         *int64              `json:"last_order_id"`
	LastOrderName       *string             `json:"last_order_name"`
	MultipassIdentifier *string             `json:"multipass_identifier"`
	Note                *string             `json:"note"`
	OrdersCount         int64               `json:"orders_count"`
	State               string              `json:"state"`
	TotalSpent          Money               `json:"total_spent"`
	VerifiedEmail       bool                `json:"verified_email"`
	Tags                string              `json:"tags"`
	DefaultAddress      *addresses.Address  `json:"default_address"`
	Addresses           []addresses.Address `json:"addresses"`
}

// Partition holds the saved searches.
const Partition = "customersavedsearch"

const (
	partition   = Partition
	wrapper     = "customer_saved_search"
	plural      = "customer_saved_searches"
	customers   = "customers"
	maxName     = 255
	maxQuery    = 1000
	searchTerms = "search_terms"
)

func customerKey(id int64) store.Key {
	return store.Key{PK: parents.CustomerPartition, SK: records.IDSK(id)}
}

func key(id int64) store.Key { return store.Key{PK: partition, SK: records.IDSK(id)} }

func (s *SavedSearch) item(version int64) store.Item {
	return store.Item{PK: partition, SK: records.IDSK(s.ID), Version: version, Data: records.Encode(s)}
}

// apply validates in and merges it into s: a create needs both; a blank
// query is `search_terms: can't be blank`, and a query with an unknown
// term or value is refused on search_terms too (ParseQuery).
func (in *Input) apply(s *SavedSearch, create bool) error {
	var v admin.Validation
	v.RequiredText("name", in.Name, create, maxName, &s.Name)
	v.RequiredText(searchTerms, in.Query, create, maxQuery, &s.Query)
	if !v.Has(searchTerms) && (in.Query != nil || create) {
		if _, msg := parseQuery(s.Query); msg != "" {
			v.Add(searchTerms, msg)
		}
	}
	return v.Err()
}
