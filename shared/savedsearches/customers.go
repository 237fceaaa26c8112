package savedsearches

import (
	"context"
	"errors"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/savedsearches/customerindex"
	"github.com/storeadmin/adminapi/shared/store"
)

// The seeded customers as GraphQL's customer queries read them
// (shared/admingraphql): a record without its addresses, which the
// addresses operations read when asked for; a list in id order,
// filtered by a query in the saved searches' language over the same
// per-customer entries a saved search's customers are found with.

// Customer returns one seeded customer record (Addresses and
// DefaultAddress left empty); an unknown one is admin.NotFound.
func (s Service) Customer(ctx context.Context, id int64) (Customer, error) {
	var c Customer
	_, err := records.Get(ctx, s.Store, customerKey(id), &c)
	if c.TotalSpent == "" {
		c.TotalSpent = "0.00"
	}
	return c, err
}

// Search returns the window of the customers query matches, in id order,
// and where it lies: with no query, a window of the customer partition
// (one Query); with one, a window of the customer entries the query
// matches (every entry passed over, and the default countries when a
// term names a country), then each customer of the page (a GetItem
// each, records.Parallel). A query is parsed as a saved search's
// (ParseQuery: a 422 on search_terms naming the term).
func (s Service) Search(ctx context.Context, query string, w records.Window) ([]Customer, records.Span, error) {
	if strings.TrimSpace(query) == "" {
		items, span, err := records.ListWindow(ctx, s.Store, store.Query{PK: parents.CustomerPartition}, nil, w)
		if err != nil {
			return nil, records.Span{}, err
		}
		out, err := records.DecodeAll[Customer](items)
		for i := range out {
			if out[i].TotalSpent == "" {
				out[i].TotalSpent = "0.00"
			}
		}
		return out, span, err
	}
	match, err := s.matcher(ctx, query)
	if err != nil {
		return nil, records.Span{}, err
	}
	items, span, err := records.ListWindow(ctx, s.Store, store.Query{PK: customerindex.Partition}, match, w)
	if err != nil {
		return nil, records.Span{}, err
	}
	ids := make([]int64, len(items))
	for i := range items {
		if ids[i], err = records.ParseIDSK(items[i].SK); err != nil {
			return nil, records.Span{}, err
		}
	}
	out := make([]Customer, len(ids))
	found := make([]bool, len(ids))
	err = records.Parallel(ctx, len(ids), func(ctx context.Context, i int) error {
		c, err := s.Customer(ctx, ids[i])
		if errors.Is(err, admin.NotFound) {
			return nil
		}
		out[i], found[i] = c, err == nil
		return err
	})
	if err != nil {
		return nil, records.Span{}, err
	}
	list := out[:0]
	for i := range out {
		if found[i] {
			list = append(list, out[i])
		}
	}
	return list, span, nil
}

// SearchCount counts the customers query matches: the partition's
// counter with no query.
func (s Service) SearchCount(ctx context.Context, query string) (int, error) {
	if strings.TrimSpace(query) == "" {
		return records.Count(ctx, s.Store, parents.CustomerPartition)
	}
	match, err := s.matcher(ctx, query)
	if err != nil {
		return 0, err
	}
	return records.CountMatching(ctx, s.Store, store.Query{PK: customerindex.Partition}, match)
}

// matcher is the records.Matcher of the customer entries query matches.
func (s Service) matcher(ctx context.Context, query string) (records.Matcher, error) {
	q, err := ParseQuery(query)
	if err != nil {
		return nil, err
	}
	var countries map[int64]string
	if q.byCountry {
		if countries, err = s.Addresses.DefaultCountries(ctx); err != nil {
			return nil, err
		}
	}
	now := s.Clock.Now().Unix()
	return func(it *store.Item) (bool, error) {
		e, err := customerindex.Decode(it)
		if err != nil {
			return false, err
		}
		c := e.Country
		if over, ok := countries[e.ID]; ok {
			c = over
		}
		return q.Match(&e, c, now), nil
	}, nil
}
