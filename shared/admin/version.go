package admin

import (
	"fmt"
	"strings"
	"time"
)

// API versions, as Shopify's clients name them in their paths
// (/admin/api/2024-01/...) and read them in X-Shopify-API-Version.

// FirstVersion is the oldest API version served; every quarter's release
// since (January, April, July, October) up to the clock's current quarter
// is served too, and "unstable". Every version behaves alike: one API.
const FirstVersion = "2019-04"

// UnstableVersion is Shopify's name for the version under development.
const UnstableVersion = "unstable"

// LatestVersion is the newest release at t: the quarter's first month.
func LatestVersion(t time.Time) string {
	t = t.UTC()
	month := (int(t.Month())-1)/3*3 + 1
	return fmt.Sprintf("%04d-%02d", t.Year(), month)
}

// ValidVersion reports whether v names a version served at t: "unstable",
// or YYYY-MM with MM a quarter's first month, from FirstVersion to the
// quarter of t. Fixed-width digits make the string order the time order.
func ValidVersion(v string, t time.Time) bool {
	if v == UnstableVersion {
		return true
	}
	if len(v) != 7 || v[4] != '-' || strings.Trim(v[:4]+v[5:], "0123456789") != "" {
		return false
	}
	switch v[5:] {
	case "01", "04", "07", "10":
		return v >= FirstVersion && v <= LatestVersion(t)
	}
	return false
}
