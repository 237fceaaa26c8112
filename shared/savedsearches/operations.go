package savedsearches

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/storeadmin/adminapi/shared/addresses"
	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/clock"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/savedsearches/customerindex"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the saved search operations: plain functions of a context
// and typed input, used by the handlers.
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
	IDs   *ids.Generator
	Clock clock.Clock
	// Addresses reads the customers' addresses and default countries.
	Addresses addresses.Service
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store, IDs: d.IDs, Clock: d.Clock, Addresses: addresses.NewService(d)}
}

func sinceQuery(sinceID int64) store.Query {
	q := store.Query{PK: partition}
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	}
	return q
}

// List returns a page of saved searches in id order after sinceID.
func (s Service) List(ctx context.Context, sinceID int64, w records.Window) ([]SavedSearch, records.Span, error) {
	return records.Spanned[SavedSearch](records.ListWindow(ctx, s.Store, sinceQuery(sinceID), nil, w))
}

// Count counts the saved searches after sinceID: the partition's counter
// without it.
func (s Service) Count(ctx context.Context, sinceID int64) (int, error) {
	return records.CountOf(ctx, s.Store, partition, sinceQuery(sinceID), nil)
}

// Get returns one saved search.
func (s Service) Get(ctx context.Context, id int64) (SavedSearch, error) {
	var ss SavedSearch
	_, err := records.Get(ctx, s.Store, key(id), &ss)
	return ss, err
}

// Create adds a saved search; its count follows from the change feed
// (Derive).
func (s Service) Create(ctx context.Context, in *Input) (SavedSearch, error) {
	var ss SavedSearch
	if err := in.apply(&ss, true); err != nil {
		return ss, err
	}
	ss.CreatedAt = admin.At(s.Clock.Now())
	ss.UpdatedAt = ss.CreatedAt
	_, err := records.Create(ctx, s.Store, s.IDs, func(id int64) ([]store.Op, error) {
		ss.ID = id
		it := ss.item(1)
		records.Stamp(ctx, &it, id)
		return []store.Op{store.Put(it, store.IfAbsent, 0)}, nil
	})
	return ss, err
}

// Update changes a saved search's name or query.
func (s Service) Update(ctx context.Context, id int64, in *Input) (SavedSearch, error) {
	var ss SavedSearch
	err := records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		ss = SavedSearch{}
		if err := records.Decode(it, &ss); err != nil {
			return nil, err
		}
		if err := in.apply(&ss, false); err != nil {
			return nil, err
		}
		ss.UpdatedAt = admin.At(s.Clock.Now())
		put := records.PutNext(ss.item(it.Version))
		records.Stamp(ctx, &put.Item, s.IDs.Next())
		return []store.Op{put}, nil
	})
	return ss, err
}

// Delete removes a saved search, with its tomb saying who did; the feed
// counts it.
func (s Service) Delete(ctx context.Context, id int64) error {
	return records.Update(ctx, s.Store, key(id), func(it *store.Item) ([]store.Op, error) {
		ops, _ := records.Remove(ctx, it, s.IDs.Next(), s.Clock.Now())
		return ops, nil
	})
}

// Derive is the change feed's work for a change to a saved search
// (store.Deriver): its count, when it comes or goes. Saved searches log no
// event and fire no webhook.
func Derive(_ context.Context, _ store.Store, c store.Change) ([]store.Op, error) {
	switch {
	case c.Old == nil:
		return []store.Op{records.CountOp(partition, 1)}, nil
	case c.New == nil:
		return []store.Op{records.CountOp(partition, -1)}, nil
	}
	return nil, nil
}

// Page is the part of a search's customers one request answers.
type Page struct {
	Order         Order
	Offset, Limit int
}

// entriesPerRead is the page size of the entries' Query: the reading of
// an id-ordered search stops within one of these after the page's end.
const entriesPerRead = 1000

// top keeps the max best entries in order: a heap with the worst on top.
type top struct {
	order Order
	max   int
	list  []entry
}

func (t *top) Len() int           { return len(t.list) }
func (t *top) Less(i, j int) bool { return t.order.compare(&t.list[i], &t.list[j]) > 0 }
func (t *top) Swap(i, j int)      { t.list[i], t.list[j] = t.list[j], t.list[i] }
func (t *top) Push(x any)         { t.list = append(t.list, x.(entry)) }
func (t *top) Pop() any {
	e := t.list[len(t.list)-1]
	t.list = t.list[:len(t.list)-1]
	return e
}

func (t *top) offer(e *entry) {
	switch {
	case len(t.list) < t.max:
		heap.Push(t, *e)
	case t.order.compare(e, &t.list[0]) < 0:
		t.list[0] = *e
		heap.Fix(t, 0)
	}
}

// sorted returns the kept entries in order.
func (t *top) sorted() []entry {
	slices.SortFunc(t.list, func(a, b entry) int { return t.order.compare(&a, &b) })
	return t.list
}

// Customers evaluates the saved search's query over the shop's customers
// and returns one page of them, in p.Order. It reads the search, every
// customer's compact entry (one paged Query of customerindex.Partition,
// stopping at the page's end when the order is by id ascending), the
// default countries when a term needs them (one paged Query of the
// addresses' default items) and then, for each customer of the page only,
// its record and its addresses.
func (s Service) Customers(ctx context.Context, id int64, order Order, w records.Window) ([]Customer, records.Span, error) {
	ss, err := s.Get(ctx, id)
	if err != nil {
		return nil, records.Span{}, err
	}
	q, err := ParseQuery(ss.Query)
	if err != nil {
		return nil, records.Span{}, err
	}
	// The list is computed, not a key range: a cursor's key is the position
	// of the customer it continues from in the ordered matches.
	offset, limit := w.Offset, w.Limit
	if w.Cursor.Key != "" {
		k, err := strconv.Atoi(w.Cursor.Key)
		if err != nil || k < 0 {
			return nil, records.Span{}, admin.BadParam("page_info", "is invalid")
		}
		if w.Cursor.Back {
			offset = max(0, k-limit)
			limit = k - offset
		} else {
			offset = k + 1
		}
	}
	ids, err := s.Match(ctx, &q, Page{Order: order, Offset: offset, Limit: limit + 1})
	if err != nil {
		return nil, records.Span{}, err
	}
	span := records.Span{Before: offset > 0, After: len(ids) > limit}
	if span.After {
		ids = ids[:limit]
	}
	if len(ids) > 0 {
		span.First, span.Last = position(offset), position(offset+len(ids)-1)
	} else {
		span.First, span.Last = w.Cursor.Key, w.Cursor.Key
		span.Before = span.Before && w.Cursor.Key != "" && !w.Cursor.Back
	}
	out, err := s.read(ctx, ids)
	return out, span, err
}

// position is the cursor key of the customer at i in a search's ordered matches.
func position(i int) string { return fmt.Sprintf("%010d", i) }

// Match returns the ids of the page of customers q matches, in p.Order.
func (s Service) Match(ctx context.Context, q *Query, p Page) ([]int64, error) {
	var countries map[int64]string
	if q.byCountry {
		var err error
		if countries, err = s.Addresses.DefaultCountries(ctx); err != nil {
			return nil, err
		}
	}
	now := s.Clock.Now().Unix()
	byID := p.Order.Field == "id" && !p.Order.Desc
	want := p.Offset + p.Limit
	// The first want matches in p.Order: in key order when that is the
	// order (reading stops there), else the best want kept in a heap.
	if p.Order.field == 0 {
		p.Order.field = orderFields[p.Order.Field]
	}
	best := &top{order: p.Order, max: want}
	err := records.Each(ctx, s.Store, store.Query{PK: customerindex.Partition, Limit: entriesPerRead}, func(it *store.Item) error {
		e, err := customerindex.Decode(it)
		if err != nil {
			return err
		}
		c := e.Country
		if over, ok := countries[e.ID]; ok {
			c = over
		}
		if !q.Match(&e, c, now) {
			return nil
		}
		if byID {
			best.list = append(best.list, e)
			if len(best.list) >= want {
				return records.ErrStop
			}
			return nil
		}
		best.offer(&e)
		return nil
	})
	if err != nil && !errors.Is(err, records.ErrStop) {
		return nil, err
	}
	matched := best.sorted()
	if p.Offset >= len(matched) {
		return nil, nil
	}
	matched = matched[p.Offset:]
	out := make([]int64, len(matched))
	for i := range matched {
		out[i] = matched[i].ID
	}
	return out, nil
}

// read reads the customers of ids whole (records.Parallel), in the
// order of ids; a customer gone since its entry was written is left out.
func (s Service) read(ctx context.Context, ids []int64) ([]Customer, error) {
	out := make([]Customer, len(ids))
	found := make([]bool, len(ids))
	err := records.Parallel(ctx, len(ids), func(ctx context.Context, i int) (err error) {
		found[i], err = s.customer(ctx, ids[i], &out[i])
		return err
	})
	if err != nil {
		return nil, err
	}
	list := make([]Customer, 0, len(ids))
	for i := range out {
		if found[i] {
			list = append(list, out[i])
		}
	}
	return list, nil
}

// customer reads one customer record with its addresses into c.
func (s Service) customer(ctx context.Context, id int64, c *Customer) (bool, error) {
	_, err := records.Get(ctx, s.Store, customerKey(id), c)
	if errors.Is(err, admin.NotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if c.TotalSpent == "" {
		c.TotalSpent = "0.00"
	}
	all, def, err := s.Addresses.OfCustomer(ctx, id)
	if err != nil {
		return false, err
	}
	c.Addresses, c.DefaultAddress = all, def
	if c.LastOrderID == nil || c.LastOrderName == nil {
		// the last order the customer's entry found among the seeded orders
		it, err := s.Store.Get(ctx, customerindex.Key(id))
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return false, err
		}
		if err == nil {
			e, err := customerindex.Decode(&it)
			if err != nil {
				return false, err
			}
			if e.LastOrderID != 0 && c.LastOrderID == nil {
				c.LastOrderID = &e.LastOrderID
			}
			if e.LastOrderName != "" && c.LastOrderName == nil {
				c.LastOrderName = &e.LastOrderName
			}
		}
	}
	return true, nil
}
