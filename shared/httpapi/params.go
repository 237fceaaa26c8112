package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
)

// Paging limits of convention 8 and part 8.
const (
	DefaultLimit = 50
	MaxLimit     = 250
)

// Page is the paging part of a list request.
type Page struct {
	Limit   int
	Page    int   // from 1
	SinceID int64 // 0 when absent
	Fields  Fields
}

// Offset is the number of matching records before this page.
func (p Page) Offset() int { return (p.Page - 1) * p.Limit }

// ParsePage reads limit, page, since_id and fields.
func ParsePage(r *http.Request) (Page, error) {
	q := r.URL.Query()
	p := Page{Limit: DefaultLimit, Page: 1, Fields: ParseFields(q)}
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return p, BadParam("limit", "must be an integer between 1 and 250")
		}
		p.Limit = n
	}
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1_000_000 {
			return p, BadParam("page", "must be an integer greater than 0")
		}
		p.Page = n
	}
	id, err := ParseIDParam(q, "since_id")
	if err != nil {
		return p, err
	}
	p.SinceID = id
	return p, nil
}

// ParseIDParam reads an optional id query parameter (0 when absent).
func ParseIDParam(q url.Values, name string) (int64, error) {
	s := q.Get(name)
	if s == "" {
		return 0, nil
	}
	n, ok := parseDigits(s)
	if !ok {
		return 0, BadParam(name, "must be a non-negative integer")
	}
	return n, nil
}

// parseDigits reads a decimal id written with digits only: one spelling per
// id, so "+5" and " 5" are not 5. It refuses values above ids.Max.
func parseDigits(s string) (int64, bool) {
	if s == "" || len(s) > 16 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, n <= ids.Max
}

// ParseID reads the {name} wildcard of the path as a resource id; anything
// that is not one is ENOTFOUND, as an unknown id is.
func ParseID(r *http.Request, name string) (int64, error) {
	s := r.PathValue(name)
	n, ok := parseDigits(s)
	if !ok || s[0] == '0' {
		return 0, admin.NotFound
	}
	return n, nil
}

// BadParam is the 400 of a query parameter that cannot be used.
func BadParam(name, msg string) error {
	return &admin.Error{Code: admin.EBADREQUEST, Fields: map[string][]string{name: {msg}}}
}

// Fields is the set named by the fields parameter; empty means all.
type Fields []string

// ParseFields reads the comma-separated fields parameter.
func ParseFields(q url.Values) Fields {
	s := q.Get("fields")
	if s == "" {
		return nil
	}
	var f Fields
	for _, name := range strings.Split(s, ",") {
		if name = strings.TrimSpace(name); name != "" {
			f = append(f, name)
		}
	}
	return f
}

func (f Fields) has(name []byte) bool {
	for _, n := range f {
		if n == string(name) {
			return true
		}
	}
	return false
}

// encode writes v as JSON, keeping only the named top-level keys.
func (f Fields) encode(buf *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if len(f) == 0 {
		buf.Write(b)
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	buf.WriteByte('{')
	first := true
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		var val json.RawMessage
		if err := dec.Decode(&val); err != nil {
			return err
		}
		if !f.has([]byte(key)) {
			continue
		}
		if !first {
			buf.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(key)
		buf.Write(kb)
		buf.WriteByte(':')
		buf.Write(val)
	}
	buf.WriteByte('}')
	return nil
}

// Range is a <x>_min/<x>_max filter. Min and Max are zero when absent.
// Inclusive makes both ends at-or-after / at-or-before (events); otherwise
// they are strict (after, before), as convention 8 says.
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

// ParseRange reads <name>_min and <name>_max in any of convention 9's forms:
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
		t, ok := ParseTime(s, loc)
		if !ok {
			return r, BadParam(name+end.suffix, "must be a date (YYYY-MM-DD), a date and time (YYYY-MM-DD HH:MM) or an ISO 8601 timestamp")
		}
		*end.dst = t
	}
	return r, nil
}

var localLayouts = []string{"2006-01-02 15:04", "2006-01-02", "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02T15:04"}

// ParseTime parses an ISO 8601 timestamp, or a date or date and time without
// offset read in loc. It refuses instants outside years 1-9999 in UTC or in
// loc (admin.InRange): a value accepted here can always be stored and shown.
func ParseTime(s string, loc *time.Location) (time.Time, bool) {
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
