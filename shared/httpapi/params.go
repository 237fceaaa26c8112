package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/ids"
	"github.com/storeadmin/adminapi/shared/records"
)

// Paging limits: limit 1..250, default 50 (docs/openapi.yaml, Query parameters).
const (
	DefaultLimit = 50
	MaxLimit     = 250
	// MaxOffset bounds the records a page may skip: a deeper page would read
	// every record before it. Clients page further with since_id.
	MaxOffset = 25_000
)

// Page is the paging part of a list request.
type Page struct {
	Limit   int
	Page    int   // from 1
	SinceID int64 // 0 when absent
	// SinceGiven says since_id was given: since_id=0 is a since_id (a list
	// newest first by default reads ascending from 0), not its absence.
	SinceGiven bool
	Fields     Fields
	// Cursor is where a page_info continues the list (zero without one).
	Cursor records.Cursor
}

// Window is the part of the list the page asks for.
func (p Page) Window() records.Window {
	return records.Window{Offset: p.Offset(), Limit: p.Limit, Cursor: p.Cursor}
}

// Since is the since_id given, nil when absent.
func (p Page) Since() *int64 {
	if !p.SinceGiven {
		return nil
	}
	return &p.SinceID
}

// Offset is the number of matching records before this page.
func (p Page) Offset() int { return (p.Page - 1) * p.Limit }

// ParsePage reads limit, page, since_id and fields.
func ParsePage(r *http.Request) (Page, error) {
	q := r.URL.Query()
	p := Page{Limit: DefaultLimit, Page: 1, Fields: ParseFields(q)}
	p.Cursor, _ = cursorFrom(r)
	if s := q.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > MaxLimit {
			return p, admin.BadParam("limit", "must be an integer between 1 and 250")
		}
		p.Limit = n
	}
	if s := q.Get("page"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 1_000_000 {
			return p, admin.BadParam("page", "must be an integer greater than 0")
		}
		p.Page = n
	}
	if p.Offset() > MaxOffset {
		return p, admin.BadParam("page", "is too deep: (page - 1) × limit may be at most 25000; continue with the page_info of the Link header's next page, or with since_id set to the last id received")
	}
	id, err := ParseIDParam(q, "since_id")
	if err != nil {
		return p, err
	}
	p.SinceID, p.SinceGiven = id, q.Get("since_id") != ""
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
		return 0, admin.BadParam(name, "must be a non-negative integer")
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
