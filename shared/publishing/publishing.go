// Package publishing is the publishing convention shared by pages,
// articles, custom and smart collections (docs/openapi.yaml: the published
// and published_at fields of schemas Page, Article, CustomCollection and
// SmartCollection).
package publishing

import (
	"net/url"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Change is how a write moved the published state.
type Change int

const (
	Unchanged Change = iota
	Published
	Unpublished
)

// Apply returns the new published_at. published is the write-only
// `published` input (nil when absent); at is an explicit published_at input
// (nil when absent), kept when given; current is the stored value (zero on
// create). Created without either, a record is published now.
func Apply(current admin.Time, published *bool, at *admin.Time, create bool, now admin.Time) (admin.Time, Change) {
	next := current
	switch {
	case published != nil && !*published:
		next = admin.Time{}
	case at != nil:
		next = *at
	case published != nil && *published:
		if current.IsZero() {
			next = now
		}
	case create:
		next = now
	}
	if create {
		return next, Unchanged
	}
	return next, Between(current, next)
}

// Between is the change of published state from one published_at to the
// next (the change feed's view of an update).
func Between(current, next admin.Time) Change {
	switch {
	case current.IsZero() && !next.IsZero():
		return Published
	case !current.IsZero() && next.IsZero():
		return Unpublished
	}
	return Unchanged
}

// Status filters lists by published_status.
type Status string

const (
	Any             Status = "any"
	OnlyPublished   Status = "published"
	OnlyUnpublished Status = "unpublished"
)

// ParseStatus reads published_status ("" is any); ok is false for other values.
func ParseStatus(s string) (Status, bool) {
	switch Status(s) {
	case "", Any:
		return Any, true
	case OnlyPublished, OnlyUnpublished:
		return Status(s), true
	}
	return "", false
}

// Matches reports whether a record with publishedAt passes the filter.
func (s Status) Matches(publishedAt admin.Time) bool {
	switch s {
	case OnlyPublished:
		return !publishedAt.IsZero()
	case OnlyUnpublished:
		return publishedAt.IsZero()
	}
	return true
}

// Filter is the list filters every published resource shares: the
// created_at, updated_at and published_at ranges and published_status.
type Filter struct {
	dates.Stamps // created_at, updated_at
	PublishedAt  dates.Range
	Status       Status
}

// ParseFilter reads the shared filters; dates without an offset are read in loc.
func ParseFilter(q url.Values, loc *time.Location) (Filter, error) {
	var f Filter
	var err error
	if f.Stamps, err = dates.ParseStamps(q, loc); err != nil {
		return f, err
	}
	if f.PublishedAt, err = dates.ParseRange(q, "published_at", loc); err != nil {
		return f, err
	}
	var ok bool
	if f.Status, ok = ParseStatus(q.Get("published_status")); !ok {
		return f, admin.BadParam("published_status", "must be published, unpublished or any")
	}
	return f, nil
}

// Empty reports whether no shared filter was given.
func (f *Filter) Empty() bool {
	return f.Stamps.Empty() && f.PublishedAt.Empty() && f.Status == Any
}

// Matches reports whether a record with these timestamps passes.
func (f *Filter) Matches(created, updated, published admin.Time) bool {
	return f.Stamps.Contains(created.Time, updated.Time) &&
		f.PublishedAt.Contains(published.Time) && f.Status.Matches(published)
}

// Keyed adds the sources of the filters a published resource keeps index
// entries for to p, in this order: an updated_at and a published_at range
// (the TimePartitions of partition; Ref entries when ref), then the
// published state (state's query). Only published records have
// published_at entries, so that range answers published_status=published
// too.
func (f *Filter) Keyed(p *records.Plan, partition string, ref bool, state func(published bool) store.Query) {
	for _, r := range []struct {
		field string
		rng   dates.Range
	}{{"updated_at", f.Updated}, {"published_at", f.PublishedAt}} {
		if r.rng.Empty() {
			continue
		}
		k := records.Timed(partition, r.field, r.rng)
		k.Ref = ref
		if r.field == "published_at" && f.Status == OnlyPublished {
			k.Answers = 2
		}
		p.Keyed = append(p.Keyed, k)
	}
	if f.Status != Any {
		p.Keyed = append(p.Keyed, records.Keyed{Query: state(f.Status == OnlyPublished)})
	}
}
