package articles_test

import (
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/articles"
)

// FuzzParsePublishedAt: a published_at the service accepts (ISO 8601, a
// local date or date and time, a date-time text) is stored at the second
// in UTC and rendered in the shop's zone as a timestamp that reads back as
// the same instant. Seed corpus in testdata/fuzz/FuzzParsePublishedAt;
// fuzzed briefly by `make test` (infra/fuzz.sh).
func FuzzParsePublishedAt(f *testing.F) {
	for _, s := range []string{
		"Thu Mar 24 15:45:47 UTC 2011", "Thu Mar 24 15:45:47 GMT 2011", "Thu Mar 24 15:45:47 EST 2011",
		"Thu Mar 24 15:45:47 PDT 2011", "Thu Mar  4 15:45:47 UTC 2011", "Mon, 02 Jan 2006 15:04:05 -0700",
		"Monday, 02-Jan-06 15:04:05 UTC", "02 Jan 06 15:04 +0100", "Mon Jan  2 15:04:05 2006",
		"2024-03-11T10:00:00-04:00", "2024-03-11", "2024-03-11 10:00", "Thu Feb 30 15:45:47 UTC 2011", "",
	} {
		f.Add(s)
	}
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		f.Skip(err)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tm, ok := articles.ParsePublishedAt(s, loc)
		if !ok {
			return
		}
		if tm.IsZero() {
			t.Fatalf("%q accepted as the zero time", s)
		}
		stored := admin.Time{Time: tm.UTC().Truncate(time.Second)}
		for _, zone := range []*time.Location{time.UTC, loc} {
			out := stored.In(zone)
			if _, off := out.Zone(); off%60 != 0 {
				continue // local mean time: see FuzzParseTime in shared/httpapi
			}
			b, err := out.MarshalJSON()
			if err != nil {
				t.Fatalf("%q: %v does not encode in %s: %v", s, stored.Time, zone, err)
			}
			var back admin.Time
			if err := back.UnmarshalJSON(b); err != nil || !back.Equal(stored.Time) {
				t.Fatalf("%q: stored as %v, rendered in %s as %s, reads back as %v (%v)", s, stored.Time, zone, b, back.Time, err)
			}
		}
	})
}

// Years the service cannot write back are refused (422 `is invalid`), in
// every form published_at takes.
func TestParsePublishedAtYears(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Skip(err)
	}
	for s, want := range map[string]bool{
		"0001-01-02T00:00:00Z":           true,
		"9999-12-31T12:00:00Z":           true,
		"0000-01-01T00:00:00+01:00":      false, // -0001 in UTC
		"0001-01-01T02:00:00Z":           false, // 0000 in New York
		"9999-12-31T23:00:00-05:00":      false, // 10000 in UTC
		"0000-06-01":                     false,
		"Mon, 01 Jan 0000 0:00:00 +0100": false,
		"Fri Dec 31 23:30:00 UTC 9999":   true,
		"Sat Jan  1 00:00:00 UTC 0000":   false,
	} {
		if _, ok := articles.ParsePublishedAt(s, ny); ok != want {
			t.Errorf("ParsePublishedAt(%q) ok = %v, want %v", s, ok, want)
		}
	}
}
