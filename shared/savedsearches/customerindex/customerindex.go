// Package customerindex is the compact search entry of a seeded customer that
// saved searches evaluate their queries over (docs/openapi.yaml: schema
// CustomerSavedSearch, the Customers (saved searches) operations).
//
// Item: customersearch / IDSK(customer id), one per customer, its Data a
// single tab-separated line (not JSON: a query reads every entry, and a
// line splits in a fraction of a JSON decode) holding what the query terms
// and the order fields need: marketing, state, orders count, money spent
// in cents, the seeded default address's country code, the customer's
// order days, the last order and abandoned order times, the timestamps and
// the lowercased tags, email, names and note. The seed loader writes it
// beside the customer; the default address's country changed since is
// kept by the addresses package in its customerdefault item, which wins.
package customerindex

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/storeadmin/adminapi/shared/records"
	"github.com/storeadmin/adminapi/shared/store"
)

// Partition holds one entry per customer.
const Partition = "customersearch"

// version marks the line layout; an entry of another layout is refused.
const version = "1"

// Entry is what a query and an order read of one customer.
type Entry struct {
	ID               int64
	AcceptsMarketing bool
	State            string
	OrdersCount      int64
	SpentCents       int64
	Country          string  // ISO code of the seeded default address ("" for none)
	OrderDays        []int32 // distinct yyyymmdd days of the customer's orders, ascending
	LastOrderAt      int64   // unix seconds of the last order (0 for none)
	LastOrderID      int64
	LastOrderName    string
	AbandonedAt      int64 // unix seconds of the last abandoned order (0 for none)
	CreatedAt        int64 // unix seconds (0 when unknown)
	UpdatedAt        int64
	Tags             []string // lowercased
	Email            string   // lowercased, as are the names and the note
	FirstName        string
	LastName         string
	Note             string

	decoded    bool   // read by Decode: tags and days are the stored ones
	tags, days string // as stored: comma-separated
}

// Key is the entry's key.
func Key(id int64) store.Key { return store.Key{PK: Partition, SK: records.IDSK(id)} }

const fieldCount = 17

func clean(s string) string { return plain(strings.ToLower(s)) }

// plain keeps a text on the entry's one line.
func plain(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, strings.TrimSpace(s))
}

// Item is the entry's stored item.
func (e *Entry) Item() store.Item {
	days := make([]string, len(e.OrderDays))
	for i, d := range e.OrderDays {
		days[i] = strconv.Itoa(int(d))
	}
	tags := make([]string, len(e.Tags))
	for i, t := range e.Tags {
		tags[i] = strings.ReplaceAll(clean(t), ",", " ")
	}
	b := func(v bool) string {
		if v {
			return "1"
		}
		return "0"
	}
	i := strconv.FormatInt
	f := []string{version, b(e.AcceptsMarketing), clean(e.State), i(e.OrdersCount, 10), i(e.SpentCents, 10),
		strings.ToUpper(plain(e.Country)), strings.Join(days, ","), i(e.LastOrderAt, 10), i(e.LastOrderID, 10), plain(e.LastOrderName),
		i(e.AbandonedAt, 10), i(e.CreatedAt, 10), i(e.UpdatedAt, 10), strings.Join(tags, ","),
		clean(e.Email), clean(e.FirstName) + "\t" + clean(e.LastName), clean(e.Note)}
	return store.Item{PK: Partition, SK: records.IDSK(e.ID), Version: 1, Data: []byte(strings.Join(f, "\t"))}
}

// Decode reads an entry item. Its tags and order days stay as stored
// (HasTag, OrderDay and LastOrderDay read them) so that a query passing
// over every entry allocates little.
func Decode(it *store.Item) (Entry, error) {
	var e Entry
	id, err := records.ParseIDSK(it.SK)
	if err != nil {
		return e, err
	}
	e.ID = id
	var f [fieldCount + 1]string
	// The entry's strings share the item's Data, which nothing writes
	// after the store returned it: no copy per entry read.
	rest := unsafe.String(unsafe.SliceData(it.Data), len(it.Data))
	for i := range fieldCount {
		j := strings.IndexByte(rest, '\t')
		if j < 0 {
			return e, fmt.Errorf("customerindex: entry %s is not of layout %s", it.SK, version)
		}
		f[i], rest = rest[:j], rest[j+1:]
	}
	f[fieldCount] = rest
	if f[0] != version {
		return e, fmt.Errorf("customerindex: entry %s is not of layout %s", it.SK, version)
	}
	n := func(s string) int64 { v, _ := strconv.ParseInt(s, 10, 64); return v }
	e.AcceptsMarketing = f[1] == "1"
	e.State = f[2]
	e.OrdersCount, e.SpentCents = n(f[3]), n(f[4])
	e.Country = f[5]
	e.days = f[6]
	e.LastOrderAt, e.LastOrderID, e.LastOrderName = n(f[7]), n(f[8]), f[9]
	e.AbandonedAt, e.CreatedAt, e.UpdatedAt = n(f[10]), n(f[11]), n(f[12])
	e.tags = f[13]
	e.Email, e.FirstName, e.LastName, e.Note = f[14], f[15], f[16], f[17]
	e.decoded = true
	return e, nil
}

// HasTag reports whether the entry has tag t (lowercased).
func (e *Entry) HasTag(t string) bool {
	if !e.decoded {
		return slices.Contains(e.Tags, t)
	}
	for rest := e.tags; rest != ""; {
		var g string
		g, rest, _ = strings.Cut(rest, ",")
		if g == t {
			return true
		}
	}
	return false
}

// OrderDay reports whether one of the entry's order days satisfies ok.
func (e *Entry) OrderDay(ok func(day int64) bool) bool {
	if !e.decoded {
		return slices.ContainsFunc(e.OrderDays, func(d int32) bool { return ok(int64(d)) })
	}
	for rest := e.days; rest != ""; {
		var d string
		d, rest, _ = strings.Cut(rest, ",")
		if v, _ := strconv.ParseInt(d, 10, 64); ok(v) {
			return true
		}
	}
	return false
}

// LastOrderDay is the latest of the entry's order days (0 for none).
func (e *Entry) LastOrderDay() int64 {
	if !e.decoded {
		if len(e.OrderDays) == 0 {
			return 0
		}
		return int64(e.OrderDays[len(e.OrderDays)-1])
	}
	if e.days == "" {
		return 0
	}
	d := e.days[strings.LastIndexByte(e.days, ',')+1:]
	v, _ := strconv.ParseInt(d, 10, 64)
	return v
}

// Order is what an entry takes of one of the customer's orders.
type Order struct {
	ID        int64
	Name      string
	CreatedAt string // RFC 3339
}

// customer is the part of a seeded customer record an entry reads; the
// numbers are taken as JSON numbers or strings.
type customer struct {
	ID               int64           `json:"id"`
	Email            *string         `json:"email"`
	FirstName        *string         `json:"first_name"`
	LastName         *string         `json:"last_name"`
	Note             *string         `json:"note"`
	AcceptsMarketing bool            `json:"accepts_marketing"`
	State            string          `json:"state"`
	OrdersCount      json.RawMessage `json:"orders_count"`
	TotalSpent       json.RawMessage `json:"total_spent"`
	Tags             string          `json:"tags"`
	CreatedAt        string          `json:"created_at"`
	UpdatedAt        string          `json:"updated_at"`
	LastOrderID      *int64          `json:"last_order_id"`
	LastOrderName    *string         `json:"last_order_name"`
	AbandonedAt      string          `json:"last_abandoned_order_date"`
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func unix(s string) int64 {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return 0
	}
	return t.Unix()
}

func number(raw json.RawMessage) string {
	s := strings.TrimSpace(string(raw))
	if u, err := strconv.Unquote(s); err == nil {
		s = u
	}
	return s
}

// Cents reads a decimal amount ("41.94", "100", "3.5") as cents.
func Cents(s string) (int64, bool) {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f) > 1e15 {
		return 0, false
	}
	return int64(math.Round(f * 100)), true
}

// Day is the yyyymmdd number of a calendar day.
func Day(t time.Time) int32 { return int32(t.Year()*10000 + int(t.Month())*100 + t.Day()) }

// Build makes the entry of a customer record (its JSON, as seeded), the
// country code of its default address and its orders. The order days are
// the calendar days of the orders' timestamps as written (their own
// offset); the last order is the latest one, unless the record names it.
func Build(record []byte, country string, orders []Order) (Entry, error) {
	var c customer
	if err := json.Unmarshal(record, &c); err != nil {
		return Entry{}, err
	}
	e := Entry{ID: c.ID, AcceptsMarketing: c.AcceptsMarketing, State: c.State, Country: country,
		Email: str(c.Email), FirstName: str(c.FirstName), LastName: str(c.LastName), Note: str(c.Note),
		CreatedAt: unix(c.CreatedAt), UpdatedAt: unix(c.UpdatedAt), AbandonedAt: unix(c.AbandonedAt)}
	e.OrdersCount, _ = strconv.ParseInt(number(c.OrdersCount), 10, 64)
	e.SpentCents, _ = Cents(number(c.TotalSpent))
	for _, t := range strings.Split(c.Tags, ",") {
		if t = clean(t); t != "" {
			e.Tags = append(e.Tags, t)
		}
	}
	var last time.Time
	for _, o := range orders {
		t, err := time.Parse(time.RFC3339, o.CreatedAt)
		if err != nil {
			continue
		}
		e.OrderDays = append(e.OrderDays, Day(t))
		if last.IsZero() || t.After(last) {
			last, e.LastOrderID, e.LastOrderName = t, o.ID, o.Name
		}
	}
	slices.Sort(e.OrderDays)
	e.OrderDays = slices.Compact(e.OrderDays)
	if !last.IsZero() {
		e.LastOrderAt = last.Unix()
	}
	if c.LastOrderID != nil {
		e.LastOrderID = *c.LastOrderID
	}
	if c.LastOrderName != nil {
		e.LastOrderName = *c.LastOrderName
	}
	return e, nil
}
