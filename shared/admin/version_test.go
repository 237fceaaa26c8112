package admin

import (
	"testing"
	"time"
)

func TestVersions(t *testing.T) {
	now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	if got := LatestVersion(now); got != "2026-10" {
		t.Errorf("latest at %v: %s", now, got)
	}
	if got := LatestVersion(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)); got != "2027-01" {
		t.Errorf("latest on New Year: %s", got)
	}
	for v, want := range map[string]bool{
		"2019-04": true, "2026-10": true, "unstable": true, "2021-07": true,
		"2019-01": false, "2027-01": false, "2024-02": false, "2024-13": false, "+024-01": false, "2024-+1": false,
		"2024-1": false, "20240-01": false, "": false, "Unstable": false, "2024_01": false,
	} {
		if got := ValidVersion(v, now); got != want {
			t.Errorf("ValidVersion(%q) = %v, want %v", v, got, want)
		}
	}
}
