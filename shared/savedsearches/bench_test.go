package savedsearches_test

// BenchmarkCustomers100k times page 1 of saved-search queries through the
// handler over 100,000 customers written straight into the embedded store
// (records, one address each, search entries), as `make bench` runs it:
//
//	go test -run '^$' -bench Customers100k -benchmem ./shared/savedsearches/

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/api"
	"github.com/storeadmin/adminapi/shared/apitest"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/savedsearches"
	"github.com/storeadmin/adminapi/shared/savedsearches/customerindex"
	"github.com/storeadmin/adminapi/shared/store"
)

const benchCustomers = 100_000

// seedCustomers writes n customers, each with one default address and its
// search entry, in transactions of 33 customers.
func seedCustomers(ctx context.Context, st store.Store, n int) error {
	r := rand.New(rand.NewPCG(1, 2))
	firsts := []string{"Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ida", "Jo"}
	lasts := []string{"Lee", "Norman", "Young", "Dent", "Ng", "Smith", "Kim", "Diaz", "Roy", "Park"}
	states := savedsearches.States
	countries := [][2]string{{"US", "United States"}, {"CA", "Canada"}, {"GB", "United Kingdom"}, {"FR", "France"},
		{"DE", "Germany"}, {"JP", "Japan"}, {"AU", "Australia"}, {"BR", "Brazil"}, {"IN", "India"}, {"MX", "Mexico"}}
	tags := []string{"vip", "wholesale", "newsletter", "retail"}
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var ops []store.Op
	for i := range n {
		id := int64(10_000_000 + i)
		var ts []string
		for _, t := range tags {
			if r.IntN(4) == 0 {
				ts = append(ts, t)
			}
		}
		created := base.Add(time.Duration(r.IntN(4*365*24)) * time.Hour)
		var orders []customerindex.Order
		for k := range r.IntN(4) {
			at := created.Add(time.Duration(r.IntN(2*365*24)) * time.Hour)
			orders = append(orders, customerindex.Order{ID: id*10 + int64(k), Name: fmt.Sprintf("#%d", id*10+int64(k)), CreatedAt: at.Format(time.RFC3339)})
		}
		c := countries[r.IntN(len(countries))]
		rec := map[string]any{
			"id": id, "email": fmt.Sprintf("customer%d@example.com", i), "first_name": firsts[r.IntN(10)], "last_name": lasts[r.IntN(10)],
			"accepts_marketing": r.IntN(2) == 0, "orders_count": r.IntN(50), "state": states[r.IntN(len(states))],
			"total_spent": fmt.Sprintf("%d.%02d", r.IntN(5000), r.IntN(100)), "verified_email": true, "tags": strings.Join(ts, ", "),
			"note": nil, "created_at": created.Format(time.RFC3339), "updated_at": created.Format(time.RFC3339),
		}
		data := records.Encode(rec)
		e, err := customerindex.Build(data, c[0], orders)
		if err != nil {
			return err
		}
		addr := map[string]any{"id": id, "customer_id": id, "address1": "1 Main St", "city": "Town", "country": c[1],
			"country_name": c[1], "country_code": c[0], "default": true}
		ops = append(ops,
			store.Put(store.Item{PK: parents.CustomerPartition, SK: records.IDSK(id), Version: 1, Data: data}, store.Always, 0),
			store.Put(store.Item{PK: parents.ChildPartition(parents.CustomerPartition, id, "address"), SK: records.IDSK(id), Version: 1, Data: records.Encode(addr)}, store.Always, 0),
			store.Put(e.Item(), store.Always, 0))
		if len(ops) >= 99 || i == n-1 {
			if err := st.Transact(ctx, ops...); err != nil {
				return err
			}
			ops = ops[:0]
		}
	}
	return nil
}

func BenchmarkCustomers100k(b *testing.B) {
	st := apitest.OpenEmbedded(b)
	e := apitest.New(b, st, api.Customers)
	start := time.Now()
	if err := seedCustomers(b.Context(), st, benchCustomers); err != nil {
		b.Fatal(err)
	}
	b.Logf("fixture: %d customers in %v", benchCustomers, time.Since(start).Round(time.Millisecond))
	svc := savedsearches.NewService(e.Deps)
	for _, c := range []struct{ name, query, order string }{
		{"selective", "tag:vip state:enabled orders_count:>40 total_spent:>=4000", ""},
		{"broad-by-id", "accepts_marketing:1", ""},
		{"broad-ordered", "accepts_marketing:1", "last_order_date desc"},
		{"country-words-ordered", "country:'United Kingdom' ann", "email asc"},
	} {
		name, query := c.name, c.query
		ss, err := svc.Create(b.Context(), &savedsearches.Input{Name: &name, Query: &query})
		if err != nil {
			b.Fatal(err)
		}
		path := fmt.Sprintf("/com/customer_saved_searches/%d/customers.json", ss.ID)
		if c.order != "" { // an empty parameter is a 400 (httpapi.checkQuery)
			path += "?order=" + url.QueryEscape(c.order)
		}
		b.Run(c.name, func(b *testing.B) {
			var n int
			for range b.N {
				req := httptest.NewRequest("GET", path, nil)
				req.Header.Set(httpapi.TokenHeader, apitest.DemoToken)
				rec := httptest.NewRecorder()
				e.Handler.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("GET %s: %d %.300s", path, rec.Code, rec.Body)
				}
				n = strings.Count(rec.Body.String(), `"addresses":`)
			}
			b.ReportMetric(float64(n), "customers/page")
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/page")
		})
	}
}
