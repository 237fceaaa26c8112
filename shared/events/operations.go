package events

import (
	"context"
	"errors"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Service holds the events log's reads: plain functions of a context and
// typed input, used by the handlers. Events are written only by the changes
// they log (Ops).
// It holds only what they use (NewService takes it from the dependencies).
type Service struct {
	Store store.Store
}

// NewService is the operations over d.
func NewService(d *platform.Deps) Service {
	return Service{Store: d.Store}
}

// Filter is the list filters, each read from keys: Types are the types'
// GSI1 partitions (merged), Verb the verb's index entries (within types,
// their GSI1 partitions), and the Created range (inclusive: events take at-or-after and at-or-before, docs/spec-gaps.md)
// a range of ids.
type Filter struct {
	Types   []string // subject types, in SubjectTypes order, no duplicates
	Verb    string
	Created dates.Range
}

// matcher checks what keys leave unchecked: a verb long enough to be hashed
// in its partition's name (created_at is a key range, records.IDRange). It
// is nil for every filter a client normally sends.
func (f *Filter) matcher() records.Matcher {
	if len(f.Verb) <= 200 {
		return nil
	}
	return func(it *store.Item) (bool, error) {
		var ev struct {
			Verb      string     `json:"verb"`
			CreatedAt admin.Time `json:"created_at"`
		}
		if err := records.Decode(it, &ev); err != nil {
			return false, err
		}
		return (f.Verb == "" || ev.Verb == f.Verb) && f.Created.Contains(ev.CreatedAt.Time), nil
	}
}

// order sets a query's direction (newest first, or ascending after
// since, when given: since_id=0 too) and bounds it to the created range.
func (f *Filter) order(q store.Query, since *int64) store.Query {
	switch {
	case since == nil:
		q.Desc = true
	case *since > 0:
		q.After = records.IDSK(*since)
	}
	after, before := records.IDRange(f.Created)
	return records.Tighten(q, after, before)
}

// queries are the partitions a list reads: the whole log or a verb's
// entries, or one GSI1 partition per filtered type (of its verb's entries
// when a verb is given).
func (f *Filter) queries(since *int64) []store.Query {
	if len(f.Types) == 0 {
		q := store.Query{PK: partition}
		if f.Verb != "" {
			q.PK = VerbPartition(f.Verb)
		}
		return []store.Query{f.order(q, since)}
	}
	qs := make([]store.Query, len(f.Types))
	for i, t := range f.Types {
		q := store.Query{Index: store.GSI1, PK: TypePartition(t)}
		if f.Verb != "" {
			q.PK = TypeVerbPartition(t, f.Verb)
		}
		qs[i] = f.order(q, since)
	}
	return qs
}

// List returns the window of the matching events, newest first (ascending
// after since, when given), and where it lies. Several types are merged
// from their partitions, each read only as far as the page needs.
func (s Service) List(ctx context.Context, f Filter, since *int64, w records.Window) ([]Event, records.Span, error) {
	qs := f.queries(since)
	if len(qs) == 1 {
		return records.Spanned[Event](records.ListWindow(ctx, s.Store, qs[0], f.matcher(), w))
	}
	for i := range qs {
		qs[i] = w.Cursor.Apply(qs[i])
	}
	items, err := merge(ctx, s.Store, qs, f.matcher(), w.Offset, w.Limit+1)
	if err != nil {
		return nil, records.Span{}, err
	}
	items, span := w.Span(items, qs[0].Index)
	return records.Spanned[Event](items, span, nil)
}

// Count counts the events created in the range (the Events operations' count takes
// no other filter): unbounded, the log's counter; bounded, the keys of the range.
func (s Service) Count(ctx context.Context, created dates.Range) (int, error) {
	f := Filter{Created: created}
	q := f.order(store.Query{PK: partition}, new(int64))
	return records.CountOf(ctx, s.Store, partition, q, f.matcher())
}

// Get returns one event.
func (s Service) Get(ctx context.Context, id int64) (Event, error) {
	var ev Event
	_, err := records.Get(ctx, s.Store, key(id), &ev)
	return ev, err
}

// subjectPartitions are the partitions of the subjects whose events are
// listed per subject (OfSubject), by subject type.
var subjectPartitions = map[string]string{Order: parents.OrderPartition, Product: parents.ProductPartition}

// OfSubject returns the events of one order or product, newest first
// (ascending after since, when given); an unknown subject is
// admin.NotFound.
func (s Service) OfSubject(ctx context.Context, subjectType string, id int64, since *int64, w records.Window) ([]Event, records.Span, error) {
	if _, err := s.Store.Get(ctx, store.Key{PK: subjectPartitions[subjectType], SK: records.IDSK(id)}); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, records.Span{}, admin.NotFound
		}
		return nil, records.Span{}, err
	}
	var f Filter
	q := f.order(store.Query{Index: store.GSI2, PK: SubjectPartition(subjectType, id)}, since)
	return records.Spanned[Event](records.ListWindow(ctx, s.Store, q, nil, w))
}

// stream reads one partition page by page, keeping the matching items not
// yet merged.
type stream struct {
	q    store.Query
	buf  []store.Item
	done bool
}

// head returns the stream's next matching item, nil at its end.
func (s *stream) head(ctx context.Context, st store.Store, match records.Matcher) (*store.Item, error) {
	for len(s.buf) == 0 && !s.done {
		items, next, err := st.Query(ctx, s.q)
		if err != nil {
			return nil, err
		}
		for i := range items {
			if match != nil {
				ok, err := match(&items[i])
				if err != nil {
					return nil, err
				}
				if !ok {
					continue
				}
			}
			s.buf = append(s.buf, items[i])
		}
		s.done = next == ""
		s.q.Cursor = next
	}
	if len(s.buf) == 0 {
		return nil, nil
	}
	return &s.buf[0], nil
}

// merge reads several partitions of events ordered alike (all Desc or all
// ascending) and returns the page of their union in that order: the matching
// items after skipping offset, at most limit. Each partition is read only as
// far as the page needs, a page of items per Query.
func merge(ctx context.Context, st store.Store, qs []store.Query, match records.Matcher, offset, limit int) ([]store.Item, error) {
	streams := make([]*stream, len(qs))
	for i, q := range qs {
		q.Limit = limit + offset
		if match != nil || q.Limit > 1000 {
			q.Limit = max(limit, 100)
		}
		streams[i] = &stream{q: q}
	}
	desc := qs[0].Desc
	out := make([]store.Item, 0, min(limit, 64))
	for len(out) < limit {
		var best *stream
		var bestItem *store.Item
		for _, s := range streams {
			it, err := s.head(ctx, st, match)
			if err != nil {
				return nil, err
			}
			if it == nil {
				continue
			}
			// Every partition sorts by records.IDSK(id): compare sort keys.
			if bestItem == nil || (desc && it.SK > bestItem.SK) || (!desc && it.SK < bestItem.SK) {
				best, bestItem = s, it
			}
		}
		if best == nil {
			break
		}
		it := *bestItem
		best.buf = best.buf[1:]
		if offset > 0 {
			offset--
			continue
		}
		out = append(out, it)
	}
	return out, nil
}
