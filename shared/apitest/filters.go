package apitest

import (
	"context"
	"net/url"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// ReadCounter is a store that counts the items its Queries return and its
// Counts count: what DynamoDB would bill a request's reads for (point
// Gets, such as the token's, are not counted).
type ReadCounter struct {
	store.Store
	items atomic.Int64
}

func (c *ReadCounter) Query(ctx context.Context, q store.Query) ([]store.Item, string, error) {
	items, next, err := c.Store.Query(ctx, q)
	c.items.Add(int64(len(items)))
	return items, next, err
}

func (c *ReadCounter) Count(ctx context.Context, q store.Query) (int, error) {
	n, err := c.Store.Count(ctx, q)
	c.items.Add(int64(n))
	return n, err
}

// Reset sets the count to zero and returns what it was.
func (c *ReadCounter) Reset() int64 { return c.items.Swap(0) }

// Filter is one filter query of a list and the records it should answer.
type Filter struct {
	Query string                    // e.g. "title=About&published_status=published"
	Keep  func(map[string]any) bool // whether a record of the whole list matches
	// Source, for a combination of filters, selects what its most selective
	// index yields: the list may read those, not only the matches. Nil:
	// the filter is served by keys exactly.
	Source func(map[string]any) bool
	// Extra is how many more items it may read (when Source can't say).
	Extra int
	// NoCount skips the count check (count takes no since_id, for one).
	NoCount bool
}

// FilterCheck names a list and its count ("" when it has none).
type FilterCheck struct {
	List, Count, Key string // e.g. "/web/pages.json", "/web/pages/count.json", "pages"
}

// CheckFilters asserts, for each filter, that the list (limit=250) answers
// exactly the records of whole that Keep selects, that the count agrees,
// and that neither reads more than its matches (or its Source's yield; a
// count its counter's shards), so that a filter answered by reading the
// whole partition fails. whole is the unfiltered list, at most 250 records.
func CheckFilters(t *testing.T, e *Env, c FilterCheck, whole []any, filters []Filter) {
	t.Helper()
	for _, f := range filters {
		var want []int64
		read := 0 // what the filter's source yields
		for _, v := range whole {
			r := v.(map[string]any)
			if f.Keep(r) {
				want = append(want, int64(r["id"].(float64)))
			}
			if f.Source != nil && f.Source(r) {
				read++
			}
		}
		read = max(read, len(want))
		slices.Sort(want)
		e.Reads.Reset()
		got := e.Do("GET", c.List+"?limit=250&"+f.Query, nil).Expect(t, 200).IDs(t, c.Key)
		reads := e.Reads.Reset()
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s?%s: %v, want %v", c.List, f.Query, got, want)
		}
		if limit := int64(read + 1 + f.Extra); reads > limit {
			t.Errorf("%s?%s read %d items for %d matches, want at most %d", c.List, f.Query, reads, len(want), limit)
		}
		if c.Count == "" || f.NoCount {
			continue
		}
		n := e.Do("GET", c.Count+"?"+f.Query, nil).Expect(t, 200).JSON(t)["count"]
		reads = e.Reads.Reset()
		if n != float64(len(want)) {
			t.Errorf("%s?%s: %v, want %d", c.Count, f.Query, n, len(want))
		}
		if limit := int64(max(read, records.CountShards) + f.Extra); reads > limit {
			t.Errorf("%s?%s read %d items for %d matches, want at most %d", c.Count, f.Query, reads, len(want), limit)
		}
	}
}

// Stamp formats t for a query string (RFC 3339, escaped).
func Stamp(t time.Time) string { return url.QueryEscape(t.Format(time.RFC3339)) }

// RangeFilters are the <field>_min and _max filters of one of whole's time
// fields around a record's time: at it (the ends are strict), a second and
// half a second either side, and an hour out, each answered by keys. A
// record without the time (a null published_at) never matches; no record
// with it fails the test, which would otherwise check nothing.
func RangeFilters(t testing.TB, field string, whole []any) []Filter {
	t.Helper()
	var times []time.Time
	for _, v := range whole {
		if t, ok := timeOf(v, field); ok {
			times = append(times, t)
		}
	}
	if len(times) == 0 {
		t.Fatalf("RangeFilters: no record has %s", field)
	}
	slices.SortFunc(times, time.Time.Compare)
	edge := times[len(times)/2]
	var fs []Filter
	for _, d := range []time.Duration{0, -time.Second, time.Second, -time.Second / 2, time.Second / 2, -time.Hour, time.Hour} {
		at := edge.Add(d)
		value := url.QueryEscape(at.Format(time.RFC3339Nano))
		fs = append(fs,
			Filter{Query: field + "_min=" + value, Keep: func(r map[string]any) bool { t, ok := timeOf(r, field); return ok && t.After(at) }},
			Filter{Query: field + "_max=" + value, Keep: func(r map[string]any) bool { t, ok := timeOf(r, field); return ok && t.Before(at) }})
	}
	return fs
}

func timeOf(record any, field string) (time.Time, bool) {
	s, ok := record.(map[string]any)[field].(string)
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}
