package records

import (
	"context"
	"errors"
	"sync"

	"github.com/storeadmin/adminapi/shared/store"
)

// ListRefWindow is ListWindow over a partition of Ref entries: it answers
// the records they point to, in the entries' order, with the Span of the
// entries (cursors continue in their partition). Without a matcher a page
// costs the entries' Query and one GetItem per record, ReadConcurrency at a
// time; with one, each entry read is resolved before match sees its
// record. A record deleted since its entry was read is left out.
func ListRefWindow(ctx context.Context, st store.Store, q store.Query, match Matcher, w Window) ([]store.Item, Span, error) {
	if match == nil {
		items, span, err := ListWindow(ctx, st, q, nil, w)
		if err != nil {
			return nil, Span{}, err
		}
		recs := make([]store.Item, len(items))
		found := make([]bool, len(items))
		err = Parallel(ctx, len(items), func(ctx context.Context, i int) error {
			var err error
			recs[i], found[i], err = deref(ctx, st, &items[i])
			return err
		})
		if err != nil {
			return nil, Span{}, err
		}
		out := recs[:0]
		for i := range recs {
			if found[i] {
				out = append(out, recs[i])
			}
		}
		return out, span, nil
	}
	var mu sync.Mutex
	resolved := map[store.Key]store.Item{}
	items, span, err := ListWindow(ctx, st, q, func(entry *store.Item) (bool, error) {
		rec, found, err := deref(ctx, st, entry)
		if err != nil || !found {
			return false, err
		}
		ok, err := match(&rec)
		if ok {
			mu.Lock()
			resolved[entry.Key()] = rec
			mu.Unlock()
		}
		return ok, err
	}, w)
	if err != nil {
		return nil, Span{}, err
	}
	out := make([]store.Item, len(items))
	for i := range items {
		out[i] = resolved[items[i].Key()]
	}
	return out, span, nil
}

// RefMatcher is a Matcher of Ref entries: it reads each entry's record (one
// GetItem) and lets match decide on it; a record gone since is no match.
func RefMatcher(ctx context.Context, st store.Store, match Matcher) Matcher {
	return func(entry *store.Item) (bool, error) {
		rec, found, err := deref(ctx, st, entry)
		if err != nil || !found {
			return false, err
		}
		return match(&rec)
	}
}

func deref(ctx context.Context, st store.Store, entry *store.Item) (store.Item, bool, error) {
	var r ref
	if err := Decode(entry, &r); err != nil {
		return store.Item{}, false, err
	}
	rec, err := st.Get(ctx, store.Key{PK: r.PK, SK: r.SK})
	if errors.Is(err, store.ErrNotFound) {
		return rec, false, nil
	}
	return rec, err == nil, err
}
