package records

import (
	"context"
	"slices"
	"sort"

	"github.com/storeadmin/adminapi/shared/store"
)

// Window is the part of a list one request asks for: Offset matches
// skipped, at most Limit returned, or, when a page_info gave a Cursor, the
// Limit matches that follow (or precede) the cursor's key.
type Window struct {
	Offset, Limit int
	Cursor        Cursor
}

// Cursor continues a list from the sort key of the query it was made for:
// the items after Key in list order, or before it when Back is set (a
// previous page). Key is exclusive; "" means the list's start.
type Cursor struct {
	Key  string
	Back bool
}

// Span says where a page lies in its list: the sort keys of its first and
// last items (in the partition the query read) and whether matching items
// lie before and after it. A client is offered a previous or next page only
// where there is one.
type Span struct {
	First, Last   string
	Before, After bool
}

// ListWindow reads the page of q's matches that w asks for. It reads one
// match beyond the page to learn whether there is a next one, so a page
// costs Limit+1 matching items (plus the skipped offset, and with a matcher
// every item passed over). A cursor narrows q's key range, so a page read
// through one costs the same wherever it lies in the list.
func ListWindow(ctx context.Context, st store.Store, q store.Query, match Matcher, w Window) ([]store.Item, Span, error) {
	items, err := List(ctx, st, w.Cursor.Apply(q), match, w.Offset, w.Limit+1)
	if err != nil {
		return nil, Span{}, err
	}
	items, span := w.Span(items, q.Index)
	return items, span, nil
}

// Apply narrows q to the keys after the cursor in q's order, or, for a
// previous page, to the keys before it read in the opposite order (Span
// puts them back): whichever bound is tighter, the query's own or the
// cursor's, holds. Readers of several partitions apply it to each.
func (c Cursor) Apply(q store.Query) store.Query {
	if c.Key == "" {
		return q
	}
	up := q.Desc == c.Back // reading up from the key
	if c.Back {
		q.Desc = !q.Desc
	}
	if up {
		return Tighten(q, c.Key, "")
	}
	return Tighten(q, "", c.Key)
}

// Span turns the up to Limit+1 items read for w (through w.Cursor.Apply)
// from index into the page, in list order, and where it lies.
func (w Window) Span(items []store.Item, index string) ([]store.Item, Span) {
	back := w.Cursor.Back && w.Cursor.Key != ""
	more := len(items) > w.Limit
	if more {
		items = items[:w.Limit]
	}
	var span Span
	if back {
		slices.Reverse(items)
		span.Before, span.After = more, true
	} else {
		span.Before, span.After = w.Cursor.Key != "" || w.Offset > 0, more
	}
	if len(items) > 0 {
		span.First, span.Last = SortKey(&items[0], index), SortKey(&items[len(items)-1], index)
	} else {
		// An empty page (its items deleted since) still leads back to where
		// the client came from, and nowhere beyond.
		span.First, span.Last = w.Cursor.Key, w.Cursor.Key
		if back {
			span.Before = false
		} else {
			span.After = false
		}
	}
	return items, span
}

// SortKey is an item's sort key in index (store.Table, GSI1 or GSI2): the
// key a cursor continues from when a list reads that index.
func SortKey(it *store.Item, index string) string {
	switch index {
	case store.GSI1:
		return it.GSI1SK
	case store.GSI2:
		return it.GSI2SK
	}
	return it.SK
}

// SliceWindow is ListWindow for a list read whole and ordered in memory:
// all is the list in its order, key gives each item's sort key, ascending
// in that order (unique). A cursor continues after (or before) its key
// whether or not an item still has it; Before and After are exact.
func SliceWindow[T any](all []T, key func(*T) string, w Window) ([]T, Span) {
	back := w.Cursor.Back && w.Cursor.Key != ""
	lo, hi := 0, len(all)
	if w.Cursor.Key != "" {
		if back {
			hi = sort.Search(len(all), func(i int) bool { return key(&all[i]) >= w.Cursor.Key })
		} else {
			lo = sort.Search(len(all), func(i int) bool { return key(&all[i]) > w.Cursor.Key })
		}
	}
	start, end := min(lo+w.Offset, hi), hi
	if back {
		start = max(lo, hi-w.Limit)
	} else {
		end = min(start+w.Limit, hi)
	}
	page := all[start:end]
	span := Span{Before: start > 0, After: end < len(all)}
	if len(page) > 0 {
		span.First, span.Last = key(&page[0]), key(&page[len(page)-1])
	} else {
		span.First, span.Last = w.Cursor.Key, w.Cursor.Key
		if back {
			span.Before = false
		} else {
			span.After = false
		}
	}
	return page, span
}

// Spanned is a page of records with where it lies.
func Spanned[T any](items []store.Item, span Span, err error) ([]T, Span, error) {
	if err != nil {
		return nil, Span{}, err
	}
	out, err := DecodeAll[T](items)
	return out, span, err
}
