package savedsearches_test

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/savedsearches"
)

func TestParseQuery(t *testing.T) {
	for q, want := range map[string]string{
		"":                           "can't be blank",
		"   ":                        "can't be blank",
		"tag:vip":                    "",
		"country:'United States' x":  "",
		"bob@example.com":            "", // a word
		"colour:red":                 "has an unknown term: colour",
		"tag:vip Shoe_size:42":       "has an unknown term: Shoe_size",
		"accepts_marketing:2":        "has an invalid value for accepts_marketing: 2",
		"orders_count:>=x":           "has an invalid value for orders_count",
		"total_spent:>1e3":           "has an invalid value for total_spent",
		"order_date:>2024-13-1":      "has an invalid value for order_date",
		"placed_order:yesterday":     "has an invalid value for placed_order",
		"abandoned_order:last_year":  "has an invalid value for abandoned_order",
		"placed_order:<2024-1-1":     "",
		"last_order_date:<=2024-1-1": "",
	} {
		_, err := savedsearches.ParseQuery(q)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", q, err)
		case want != "" && (err == nil || admin.ErrorCode(err) != admin.EINVALID || !contains(err.(*admin.Error).Fields["search_terms"], want)):
			t.Errorf("%q: %v, want search_terms %q", q, err, want)
		}
	}
}

func contains(msgs []string, want string) bool {
	for _, m := range msgs {
		if len(m) >= len(want) && m[:len(want)] == want {
			return true
		}
	}
	return false
}

func TestParseOrder(t *testing.T) {
	for s, ok := range map[string]bool{"": true, "email": true, "Email DESC": true, "last_order_date desc": true,
		"email up": false, "shoe_size asc": false, "email asc extra": false} {
		if _, err := savedsearches.ParseOrder(s); (err == nil) != ok {
			t.Errorf("%q: %v", s, err)
		}
	}
}
