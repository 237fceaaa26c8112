// Package dates reads the timestamps requests carry: the <x>_min/<x>_max
// filters in their three forms (ISO 8601 with an offset, "YYYY-MM-DD HH:MM",
// "YYYY-MM-DD"), and timestamp fields of bodies. Whatever it accepts lies in years 1-9999, in UTC and in
// the shop's zone, so that it can be stored and shown.
package dates

import (
	"net/url"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

// Range is a <x>_min/<x>_max filter. Min and Max are zero when absent.
// Inclusive makes both ends at-or-after / at-or-before (events); otherwise
// they are strict (after, before), as the contract says.
type Range struct {
	Min, Max  time.Time
	Inclusive bool
}

// Empty reports whether no bound was given.
func (r Range) Empty() bool { return r.Min.IsZero() && r.Max.IsZero() }

// Contains reports whether t satisfies the bounds. A record without the
// timestamp (null published_at) never matches a bounded range.
func (r Range) Contains(t time.Time) bool {
	if r.Empty() {
		return true
	}
	if t.IsZero() {
		return false
	}
	if !r.Min.IsZero() && (t.Before(r.Min) || (!r.Inclusive && t.Equal(r.Min))) {
		return false
	}
	if !r.Max.IsZero() && (t.After(r.Max) || (!r.Inclusive && t.Equal(r.Max))) {
		return false
	}
	return true
}

// Seconds are the inclusive ends, at whole seconds, of the times at whole
// seconds that r contains (every stored time is one): a strict end moves
// one second inward when it falls on a whole second, a fractional end
// rounds inward. Zero ends stay open. from after to means nothing matches.
func (r Range) Seconds() (from, to time.Time) {
	if !r.Min.IsZero() {
		from = r.Min.Truncate(time.Second)
		if from.Before(r.Min) || !r.Inclusive {
			from = from.Add(time.Second)
		}
	}
	if !r.Max.IsZero() {
		to = r.Max.Truncate(time.Second)
		if to.Equal(r.Max) && !r.Inclusive {
			to = to.Add(-time.Second)
		}
	}
	return from, to
}

// ParseRange reads <name>_min and <name>_max in any of the three forms:
// "YYYY-MM-DD HH:MM", "YYYY-MM-DD" (both read in the shop's time zone,
// loc) and ISO 8601 with an offset. A bad value is 400 naming the parameter.
func ParseRange(q url.Values, name string, loc *time.Location) (Range, error) {
	var r Range
	for _, end := range [...]struct {
		suffix string
		dst    *time.Time
	}{{"_min", &r.Min}, {"_max", &r.Max}} {
		s := q.Get(name + end.suffix)
		if s == "" {
			continue
		}
		t, ok := Parse(s, loc)
		if !ok {
			return r, admin.BadParam(name+end.suffix, "must be a date (YYYY-MM-DD), a date and time (YYYY-MM-DD HH:MM) or an ISO 8601 timestamp")
		}
		*end.dst = t
	}
	return r, nil
}

// Stamps is the created_at and updated_at filters of a list (convention
// 8), checked on each record read.
type Stamps struct{ Created, Updated Range }

// ParseStamps reads created_at_min/max and updated_at_min/max (ParseRange).
func ParseStamps(q url.Values, loc *time.Location) (Stamps, error) {
	var s Stamps
	var err error
	if s.Created, err = ParseRange(q, "created_at", loc); err != nil {
		return s, err
	}
	s.Updated, err = ParseRange(q, "updated_at", loc)
	return s, err
}

// Empty reports whether neither range has a bound.
func (s Stamps) Empty() bool { return s.Created.Empty() && s.Updated.Empty() }

// Contains reports whether a record with these timestamps passes both ranges.
func (s Stamps) Contains(created, updated time.Time) bool {
	return s.Created.Contains(created) && s.Updated.Contains(updated)
}

var localLayouts = []string{"2006-01-02 15:04", "2006-01-02", "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02T15:04"}

// Parse parses an ISO 8601 timestamp, or a date or date and time without
// offset read in loc. It refuses instants outside years 1-9999 in UTC or in
// loc (admin.InRange): a value accepted here can always be stored and shown.
func Parse(s string, loc *time.Location) (time.Time, bool) {
	t, ok := parseTime(s, loc)
	if !ok || !admin.InRange(t, loc) {
		return time.Time{}, false
	}
	return t, true
}

func parseTime(s string, loc *time.Location) (time.Time, bool) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, true
	}
	// A "+" in a query string arrives as a space: "2014-04-25T16:15:47 04:00".
	if len(s) > 19 && s[19] == ' ' {
		if t, err := time.Parse(time.RFC3339, s[:19]+"+"+s[20:]); err == nil {
			return t, true
		}
	}
	for _, layout := range localLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
