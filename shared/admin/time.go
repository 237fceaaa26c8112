package admin

import (
	"strconv"
	"strings"
	"time"
)

// Time is a timestamp rendered as ISO 8601 with a UTC offset at second
// precision, in whatever location it carries; the zero Time renders null.
// Stores keep it in UTC; handlers move it into the shop's zone with In.
type Time struct{ time.Time }

// TimeLayout is the wire format of every timestamp.
const TimeLayout = "2006-01-02T15:04:05-07:00"

// At is t as a record's timestamp: truncated to the second, in UTC. Every
// timestamp a record carries is At(clk.Now()) of the service's clock, which
// its user holds as a field or takes as a parameter, never from the context.
func At(t time.Time) Time { return Time{t.UTC().Truncate(time.Second)} }

// In returns t in loc.
func (t Time) In(loc *time.Location) Time {
	if t.IsZero() {
		return t
	}
	return Time{t.Time.In(loc)}
}

// Ptr returns a pointer to a copy of t, nil for zero, for nullable fields.
func (t Time) Ptr() *Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// MinYear and MaxYear bound every timestamp the service accepts, in UTC and
// in the shop's zone: RFC 3339 has four-digit years, so anything outside
// would be written in a form no reader (this one included) parses.
const (
	MinYear = 1
	MaxYear = 9999
)

// InRange reports whether t renders with a four-digit year both in UTC and
// in loc, the shop's zone, where responses show it.
func InRange(t time.Time, loc *time.Location) bool {
	u := t.UTC()
	if y := u.Year(); y < MinYear || y > MaxYear {
		return false
	}
	if loc != nil {
		if y := u.In(loc).Year(); y < MinYear || y > MaxYear {
			return false
		}
	}
	return true
}

func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	if _, off := t.Zone(); off%60 != 0 {
		// Local mean time before standard zones has offsets in seconds,
		// which the wire format cannot carry; UTC shows the same instant.
		t = Time{t.UTC()}
	}
	b := make([]byte, 0, len(TimeLayout)+2)
	b = append(b, '"')
	b = t.Time.AppendFormat(b, TimeLayout)
	return append(b, '"'), nil
}

func (t *Time) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*t = Time{}
		return nil
	}
	s, err := strconv.Unquote(string(b))
	if err != nil {
		return err
	}
	p, err := time.Parse(time.RFC3339, s)
	if err != nil {
		var ok bool
		if p, ok = parseWideYear(s); !ok {
			return err
		}
	}
	*t = Time{p.UTC()}
	return nil
}

// parseWideYear reads a timestamp whose year is negative or has five digits,
// as Go writes years outside 0-9999. No such value is accepted any more, but
// one stored before that rule must still decode, so that it can be deleted.
func parseWideYear(s string) (time.Time, bool) {
	end := strings.IndexByte(s[min(len(s), 1):], '-') + 1
	if end < 1 {
		return time.Time{}, false
	}
	year, err := strconv.Atoi(s[:end])
	if err != nil {
		return time.Time{}, false
	}
	p, err := time.Parse(time.RFC3339, "2000"+s[end:])
	if err != nil {
		return time.Time{}, false
	}
	return p.AddDate(year-2000, 0, 0), true
}
