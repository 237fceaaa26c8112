package dates_test

// FuzzParseTime's seed corpus is in testdata/fuzz/FuzzParseTime; `make test`
// (infra/fuzz.sh) fuzzes it briefly.

import (
	"strings"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/dates"
)

// shopZones are time zones the date parsing is checked in: the demo shop's,
// UTC, and the extremes of the offsets in use.
var shopZones = func() []*time.Location {
	var out []*time.Location
	for _, name := range []string{"America/New_York", "UTC", "Pacific/Kiritimati", "Etc/GMT+12"} {
		loc, err := time.LoadLocation(name)
		if err != nil {
			loc = time.FixedZone(name, 0)
		}
		out = append(out, loc)
	}
	return out
}()

// FuzzParseTime: anything ParseTime accepts is written back (in UTC, as
// stored, and in the shop's zone, as rendered) as a timestamp that parses
// to the same instant.
func FuzzParseTime(f *testing.F) {
	for _, s := range []string{
		"2024-03-11T10:00:00-04:00", "2024-03-11T10:00:00Z", "2024-03-11T10:00:00.123456789+05:45",
		"2024-03-11", "2024-03-11 10:00", "2024-03-11 10:00:59", "2024-03-11T10:00:00", "2024-03-11T10:00",
		"2014-04-25T16:15:47 04:00", " 2024-03-11 ", "0001-01-01T00:00:00Z", "9999-12-30T00:00:00Z",
		"0002-01-02", "9998-12-30 12:00", "2024-02-30", "2024-13-01", "24:00", "", "now",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, loc := range shopZones {
			tm, ok := dates.Parse(s, loc)
			if !ok {
				continue
			}
			for _, zone := range []*time.Location{time.UTC, loc} {
				out := admin.Time{Time: tm.In(zone)}
				b, err := out.MarshalJSON()
				if err != nil {
					t.Fatalf("ParseTime(%q) in %s = %v: does not encode in %s: %v", s, loc, tm, zone, err)
				}
				var back admin.Time
				if err := back.UnmarshalJSON(b); err != nil || !back.Equal(tm.Truncate(time.Second)) {
					t.Fatalf("ParseTime(%q) in %s = %v, written in %s as %s, reads back as %v (%v)", s, loc, tm, zone, b, back.Time, err)
				}
			}
			if again, ok := dates.Parse(strings.TrimSpace(s), loc); !ok || !again.Equal(tm) {
				t.Fatalf("ParseTime(%q) not stable: %v then %v", s, tm, again)
			}
		}
	})
}
