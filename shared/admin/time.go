package admin

import (
	"strconv"
	"time"
)

// Time is a timestamp rendered as ISO 8601 with a UTC offset at second
// precision, in whatever location it carries; the zero Time renders null.
// Stores keep it in UTC; handlers move it into the shop's zone with In.
type Time struct{ time.Time }

// TimeLayout is the wire format of every timestamp.
const TimeLayout = "2006-01-02T15:04:05-07:00"

// Now is the current time truncated to the second, in UTC.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Second)} }

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

func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
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
		return err
	}
	*t = Time{p.UTC()}
	return nil
}
