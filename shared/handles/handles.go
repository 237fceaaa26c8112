// Package handles generates and guards the unique, URL-friendly handles of
// pages, articles, collections and fulfillment services. A handle is claimed
// by a guard item handle#<namespace>/<handle> written in the same transaction
// as its record, so two records can never hold one handle.
package handles

import (
	"context"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// MaxLen is the longest handle.
const MaxLen = 255

// FromTitle makes a handle: lower case, accents dropped, runs of other
// characters turned into single hyphens, only a-z 0-9 - _ kept.
func FromTitle(title string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range norm.NFKD.String(strings.ToLower(title)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '_':
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
		case unicode.Is(unicode.Mn, r): // combining accent of a decomposed letter
		default:
			hyphen = true
		}
	}
	h := b.String()
	if len(h) > MaxLen {
		h = strings.TrimRight(h[:MaxLen], "-")
	}
	return h
}

// Check adds "is invalid" on handle to v when an explicit handle is given
// and is not Valid.
func Check(v *admin.Validation, in *string) {
	if in != nil && !Valid(*in) {
		v.Add("handle", admin.MsgInvalid)
	}
}

// Valid reports whether a handle given by a user is acceptable as is.
func Valid(h string) bool {
	if h == "" || len(h) > MaxLen {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return true
}

func partition(namespace string) string { return "handle#" + namespace }

// Key is the guard item of a handle.
func Key(namespace, handle string) store.Key {
	return store.Key{PK: partition(namespace), SK: handle}
}

type guard struct {
	ID int64 `json:"id"`
}

// Claim is the op claiming handle for record id; it fails if taken.
func Claim(namespace, handle string, id int64) store.Op {
	k := Key(namespace, handle)
	return store.Put(store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: records.Encode(guard{id})}, store.IfAbsent, 0)
}

// Release is the op freeing a handle.
func Release(namespace, handle string) store.Op {
	return store.Delete(Key(namespace, handle), store.Always, 0)
}

// Owner returns the id of the record holding handle, or 0.
func Owner(ctx context.Context, st store.Store, namespace, handle string) (int64, error) {
	var g guard
	_, err := records.Get(ctx, st, Key(namespace, handle), &g)
	if admin.ErrorCode(err) == admin.ENOTFOUND {
		return 0, nil
	}
	return g.ID, err
}

// maxSuffix is the longest "-N" suffix Free considers: far more records than
// any shop gives one title.
const maxSuffix = len("-9999999")

// Free returns base if unclaimed, otherwise base-1, base-2, ... whichever
// is first free, each cut to MaxLen by shortening base. One Query of the
// claimed handles sharing the part of base that every candidate keeps. The
// answer can be stale by the time it is claimed; callers retry when Claim fails.
func Free(ctx context.Context, st store.Store, namespace, base string) (string, error) {
	if base == "" {
		base = "untitled"
	}
	taken := map[string]bool{}
	err := records.Each(ctx, st, store.Query{PK: partition(namespace), SKPrefix: base[:min(len(base), MaxLen-maxSuffix)]},
		func(it *store.Item) error { taken[it.SK] = true; return nil })
	if err != nil {
		return "", err
	}
	if !taken[base] {
		return base, nil
	}
	for n := 1; ; n++ {
		suffix := "-" + strconv.Itoa(n)
		h := base
		if len(h)+len(suffix) > MaxLen {
			h = h[:MaxLen-len(suffix)]
		}
		if h += suffix; !taken[h] {
			return h, nil
		}
	}
}

// Create commits a new record that owns a unique handle. build returns the
// record's writes for an id and handle (its first op the IfAbsent put of the
// record, as records.Create wants); Create appends the handle's claim. An
// explicit handle that is taken is 422 `handle has already been taken`; a
// generated one moves on to the next free suffix.
func Create(ctx context.Context, st store.Store, gen *ids.Generator, namespace, explicit, title string,
	build func(id int64, handle string) ([]store.Op, error)) (int64, string, error) {
	base := FromTitle(title)
	var id int64
	var handle string
	err := records.Retry(ctx, func() (bool, error) {
		handle = explicit
		if handle == "" {
			var err error
			if handle, err = Free(ctx, st, namespace, base); err != nil {
				return false, err
			}
		}
		var claim *store.Key // set once build made the claim
		var err error
		id, err = records.Create(ctx, st, gen, func(id int64) ([]store.Op, error) {
			ops, err := build(id, handle)
			if err != nil {
				return nil, err
			}
			c := Claim(namespace, handle, id)
			k := c.TargetKey()
			claim = &k
			return append(ops, c), nil
		})
		taken := claim != nil && store.FailedOn(err, *claim)
		if taken && explicit != "" {
			return false, admin.Invalid("handle", admin.MsgTaken)
		}
		// A concurrent create took the generated handle first: everyone
		// racing for one title computes the same next suffix, so retrying
		// spreads them out.
		return taken, err
	})
	return id, handle, err
}
