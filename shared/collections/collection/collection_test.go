package collection

import (
	"net/url"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/publishing"
)

// The filters custom and smart collections share, without the store.
func TestFilter(t *testing.T) {
	at := func(s string) admin.Time {
		tm, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return admin.Time{Time: tm}
	}
	created, updated, published := at("2024-01-01T00:00:00Z"), at("2024-02-01T00:00:00Z"), at("2024-03-01T00:00:00Z")
	parse := func(q string) publishing.Filter {
		v, _ := url.ParseQuery(q)
		f, err := publishing.ParseFilter(v, time.UTC)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	for _, tc := range []struct {
		f     Filter
		empty bool
		match bool
	}{
		{Filter{Filter: parse("")}, true, true},
		{Filter{Title: "Summer", Filter: parse("")}, false, true},
		{Filter{Title: "summer", Filter: parse("")}, false, false},
		{Filter{Handle: "summer", Filter: parse("")}, false, true},
		{Filter{Handle: "winter", Filter: parse("")}, false, false},
		{Filter{ProductID: 7, Filter: parse("")}, false, true}, // membership is the caller's
		{Filter{Filter: parse("published_status=unpublished")}, false, false},
		{Filter{Filter: parse("published_status=published")}, false, true},
		{Filter{Filter: parse("created_at_min=2024-01-02")}, false, false},
		{Filter{Filter: parse("updated_at_max=2024-02-02")}, false, true},
		{Filter{Filter: parse("published_at_min=2024-03-02")}, false, false},
	} {
		if got := tc.f.Empty(); got != tc.empty {
			t.Errorf("%+v: Empty %v", tc.f, got)
		}
		if got := tc.f.Matches("Summer", "summer", created, updated, published); got != tc.match {
			t.Errorf("%+v: Matches %v", tc.f, got)
		}
	}
}
