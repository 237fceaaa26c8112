package events

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/httpapi"
	"github.com/storeadmin/adminapi/shared/parents"
	"github.com/storeadmin/adminapi/shared/platform"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

type handler struct{ *platform.Deps }

// Routes returns the events log endpoints (§4.20). Events need no scope:
// every installed app may read the shop's log.
func Routes(d *platform.Deps) []httpapi.Route {
	h := handler{d}
	s := admin.ScopeNone
	return []httpapi.Route{
		{Method: "GET", Path: "/com/events.json", Scope: s, Handler: h.list},
		{Method: "GET", Path: "/com/events/count.json", Scope: s, Handler: h.count},
		{Method: "GET", Path: "/com/events/{id}.json", Scope: s, Handler: h.get},
		{Method: "GET", Path: "/com/orders/{id}/events.json", Scope: s, Handler: h.subjectList(Order, parents.OrderPartition)},
		{Method: "GET", Path: "/com/products/{id}/events.json", Scope: s, Handler: h.subjectList(Product, parents.ProductPartition)},
	}
}

const wrapper, plural = "event", "events"

// filter holds the list filters. types narrows the read to the types' GSI1
// partitions; verb and the created_at range are checked on each event read.
type filter struct {
	types   []string // subject types, in SubjectTypes order, no duplicates
	verb    string
	created dates.Range
}

func parseDates(q url.Values, shop *admin.Shop) (dates.Range, error) {
	r, err := dates.ParseRange(q, "created_at", shop.Location())
	r.Inclusive = true // events: at-or-after, at-or-before (convention 8)
	return r, err
}

func parseFilter(q url.Values, shop *admin.Shop) (filter, error) {
	f := filter{verb: q.Get("verb")}
	var err error
	if f.created, err = parseDates(q, shop); err != nil {
		return f, err
	}
	if s := q.Get("filter"); s != "" {
		want := map[string]bool{}
		for _, name := range strings.Split(s, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if !slices.Contains(SubjectTypes, name) {
				return f, admin.BadParam("filter", "must be a comma-separated list of "+strings.Join(SubjectTypes, ", "))
			}
			want[name] = true
		}
		for _, t := range SubjectTypes {
			if want[t] {
				f.types = append(f.types, t)
			}
		}
	}
	return f, nil
}

// matcher checks verb and created_at; nil when neither is given.
func matcher(verb string, created dates.Range) records.Matcher {
	if verb == "" && created.Empty() {
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
		return (verb == "" || ev.Verb == verb) && created.Contains(ev.CreatedAt.Time), nil
	}
}

// order sets a query's direction: newest first, or ascending after since_id.
func order(q store.Query, sinceID int64) store.Query {
	if sinceID > 0 {
		q.After = records.IDSK(sinceID)
	} else {
		q.Desc = true
	}
	return q
}

// queries are the partitions a list reads: the whole log, or one GSI1
// partition per filtered type.
func (f *filter) queries(sinceID int64) []store.Query {
	if len(f.types) == 0 {
		return []store.Query{order(store.Query{PK: partition}, sinceID)}
	}
	qs := make([]store.Query, len(f.types))
	for i, t := range f.types {
		qs[i] = order(store.Query{Index: store.GSI1, PK: TypePartition(t)}, sinceID)
	}
	return qs
}

// present completes an event for output: timestamps in the shop's zone
// (loc), arguments always an array.
func present(ev *Event, loc *time.Location) {
	ev.CreatedAt = ev.CreatedAt.In(loc)
	if ev.Arguments == nil {
		ev.Arguments = []string{}
	}
}

func (h handler) write(ctx context.Context, w http.ResponseWriter, items []store.Item, fields httpapi.Fields) error {
	evs, err := records.DecodeAll[Event](items)
	if err != nil {
		return err
	}
	loc := admin.ShopFrom(ctx).Location() // loaded once: LoadLocation parses the zone
	for i := range evs {
		present(&evs[i], loc)
	}
	return httpapi.WriteList(w, plural, evs, fields)
}

func (h handler) list(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	p, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	f, err := parseFilter(r.URL.Query(), admin.ShopFrom(ctx))
	if err != nil {
		return err
	}
	qs := f.queries(p.SinceID)
	match := matcher(f.verb, f.created)
	var items []store.Item
	if len(qs) == 1 {
		items, err = records.List(ctx, h.Store, qs[0], match, p.Offset(), p.Limit)
	} else {
		items, err = merge(ctx, h.Store, qs, match, p.Offset(), p.Limit)
	}
	if err != nil {
		return err
	}
	return h.write(ctx, w, items, p.Fields)
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

func (h handler) count(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	created, err := parseDates(r.URL.Query(), admin.ShopFrom(ctx))
	if err != nil {
		return err
	}
	var n int
	if created.Empty() {
		n, err = records.Count(ctx, h.Store, partition)
	} else {
		n, err = records.CountMatching(ctx, h.Store, store.Query{PK: partition}, matcher("", created))
	}
	if err != nil {
		return err
	}
	return httpapi.WriteCount(w, n)
}

func (h handler) get(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	id, err := httpapi.ParseID(r, "id")
	if err != nil {
		return err
	}
	var ev Event
	if _, err := records.Get(ctx, h.Store, key(id), &ev); err != nil {
		return err
	}
	present(&ev, admin.ShopFrom(ctx).Location())
	return httpapi.WriteOne(w, http.StatusOK, wrapper, &ev, httpapi.ParseFields(r.URL.Query()))
}

// subjectList serves the events of one order or product, newest first; an
// unknown subject (no item at <subjectPartition>/<id>) is 404.
func (h handler) subjectList(subjectType, subjectPartition string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		id, err := httpapi.ParseID(r, "id")
		if err != nil {
			return err
		}
		p, err := httpapi.ParsePage(r)
		if err != nil {
			return err
		}
		if _, err := h.Store.Get(ctx, store.Key{PK: subjectPartition, SK: records.IDSK(id)}); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return admin.NotFound
			}
			return err
		}
		q := order(store.Query{Index: store.GSI2, PK: SubjectPartition(subjectType, id)}, p.SinceID)
		items, err := records.List(ctx, h.Store, q, nil, p.Offset(), p.Limit)
		if err != nil {
			return err
		}
		return h.write(ctx, w, items, p.Fields)
	}
}
