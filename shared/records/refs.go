package records

import (
	"context"
	"errors"

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
	resolved := map[store.Key]store.Item{} // the matching records, by key (List calls match in turn)
	items, span, err := ListWindow(ctx, st, q, RefMatcher(ctx, st, func(rec *store.Item) (bool, error) {
		ok, err := match(rec)
		if ok {
			resolved[rec.Key()] = *rec
		}
		return ok, err
	}), w)
	if err != nil {
		return nil, Span{}, err
	}
	out := make([]store.Item, len(items))
	for i := range items {
		k, err := refKey(&items[i])
		if err != nil {
			return nil, Span{}, err
		}
		out[i] = resolved[k]
	}
	return out, span, nil
}

// ListSource is ListWindow, or ListRefWindow when q reads Ref entries.
func ListSource(ctx context.Context, st store.Store, q store.Query, match Matcher, refs bool, w Window) ([]store.Item, Span, error) {
	if refs {
		return ListRefWindow(ctx, st, q, match, w)
	}
	return ListWindow(ctx, st, q, match, w)
}

// CountSource is CountMatching of q; over Ref entries a matcher sees each
// entry's record (a GetItem each).
func CountSource(ctx context.Context, st store.Store, q store.Query, match Matcher, refs bool) (int, error) {
	if match != nil && refs {
		match = RefMatcher(ctx, st, match)
	}
	return CountMatching(ctx, st, q, match)
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
	k, err := refKey(entry)
	if err != nil {
		return store.Item{}, false, err
	}
	rec, err := st.Get(ctx, k)
	if errors.Is(err, store.ErrNotFound) {
		return rec, false, nil
	}
	return rec, err == nil, err
}

// refKey is the key of the record a Ref entry points to.
func refKey(entry *store.Item) (store.Key, error) {
	var r ref
	err := Decode(entry, &r)
	return store.Key{PK: r.PK, SK: r.SK}, err
}
