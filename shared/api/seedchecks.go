package api

import (
	"encoding/json"
	"fmt"

	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/savedsearches"
	"github.com/storeadmin/adminapi/shared/seed"
)

// SeedChecks are the rules a seed file must meet for the resources to read
// back what it seeds; the loader cannot state them without importing the
// resources (docs/architecture.md: no resource below the loader). Every
// load of a file a user gives passes them (the local runner's SEED_FILE).
var SeedChecks = []seed.Check{customersReadBack}

// customersReadBack: what customers.json of a saved search reads back must
// decode, so a mistyped customer or address field is refused before
// anything is written, naming it, not answered later as a 500.
func customersReadBack(f *seed.File) error {
	for i, c := range f.Customers {
		var probe savedsearches.Customer
		if err := json.Unmarshal(records.Encode(c), &probe); err != nil {
			return fmt.Errorf("seed: customers[%d]: %v", i, err)
		}
	}
	return nil
}
