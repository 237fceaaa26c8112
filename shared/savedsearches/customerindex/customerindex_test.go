package customerindex_test

import (
	"slices"
	"testing"

	"github.com/storeadmin/adminapi/shared/savedsearches/customerindex"
)

// An entry reads back as built: tabs and newlines in texts stay on its
// line, tags and texts are lower-cased, the country upper-cased.
func TestRoundTrip(t *testing.T) {
	rec := []byte(`{"id": 7, "email": "A@Example.com", "first_name": "Ann\tMarie", "last_name": "Lee", "note": "line\none",
		"accepts_marketing": true, "orders_count": "3", "state": "enabled", "total_spent": 12.5, "tags": " VIP, ,wholesale ",
		"created_at": "2024-01-02T03:04:05-05:00", "last_abandoned_order_date": "2024-02-01T00:00:00Z"}`)
	e, err := customerindex.Build(rec, "ca", []customerindex.Order{
		{ID: 2, Name: "#B", CreatedAt: "2024-03-01T23:00:00-05:00"},
		{ID: 1, Name: "#A", CreatedAt: "2023-12-31T10:00:00Z"},
		{ID: 3, Name: "#C", CreatedAt: "not a time"},
	})
	if err != nil {
		t.Fatal(err)
	}
	it := e.Item()
	got, err := customerindex.Decode(&it)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != 7 || !got.AcceptsMarketing || got.State != "enabled" || got.OrdersCount != 3 || got.SpentCents != 1250 ||
		got.Country != "CA" || got.Email != "a@example.com" || got.FirstName != "ann marie" || got.LastName != "lee" ||
		got.Note != "line one" || got.LastOrderID != 2 || got.LastOrderName != "#B" || got.CreatedAt == 0 || got.AbandonedAt == 0 {
		t.Errorf("decoded %+v", got)
	}
	if !got.HasTag("vip") || !got.HasTag("wholesale") || got.HasTag("") || got.HasTag("VIP") {
		t.Errorf("tags of %+v", got)
	}
	if got.LastOrderDay() != 20240301 || !got.OrderDay(func(d int64) bool { return d == 20231231 }) {
		t.Errorf("days of %+v", got)
	}
	if !slices.Equal(e.OrderDays, []int32{20231231, 20240301}) || e.LastOrderDay() != 20240301 || !e.HasTag("vip") {
		t.Errorf("built %+v", e)
	}
	bad := it
	bad.Data = []byte("2\tx")
	if _, err := customerindex.Decode(&bad); err == nil {
		t.Error("an entry of another layout decoded")
	}
}
