package admin_test

// Fuzz targets of the wire forms of timestamps and amounts; seed corpora in
// testdata/fuzz/<Target>, fuzzed briefly by `make test` (infra/fuzz.sh).

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/storeadmin/adminapi/shared/admin"
)

// FuzzTimeJSON: a timestamp admin.Time accepts from JSON is written back,
// in UTC as stored and in the demo shop's zone as rendered, as one that reads
// back as the same instant.
func FuzzTimeJSON(f *testing.F) {
	for _, s := range []string{
		`"2024-03-11T10:00:00-04:00"`, `"2024-03-11T14:00:00Z"`, `"2024-03-11T10:00:00.5+05:45"`, `null`,
		`"0001-01-02T00:00:00Z"`, `"9998-12-31T00:00:00-12:00"`, `"2024-03-11 10:00"`, `"2024-02-30T00:00:00Z"`,
		`"2024-03-11T10:00:00+24:00"`, `2024`, `""`, `"`,
	} {
		f.Add([]byte(s))
	}
	zones := []*time.Location{time.UTC}
	if ny, err := time.LoadLocation("America/New_York"); err == nil {
		zones = append(zones, ny)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var in admin.Time
		if err := json.Unmarshal(b, &in); err != nil || in.IsZero() {
			return
		}
		if in.Location() != time.UTC {
			t.Fatalf("%s: decoded in %v, want UTC", b, in.Location())
		}
		for _, loc := range zones {
			out := in.In(loc)
			if _, off := out.Zone(); off%60 != 0 {
				// Local mean time (before 1883 in New York): see
				// FuzzParseTime in shared/httpapi.
				continue
			}
			enc, err := json.Marshal(out)
			if err != nil {
				t.Fatalf("%s: %v in %s does not encode: %v", b, in.Time, loc, err)
			}
			var back admin.Time
			if err := json.Unmarshal(enc, &back); err != nil || !back.Equal(in.Time.Truncate(time.Second)) {
				t.Fatalf("%s: read as %v, written in %s as %s, reads back as %v (%v)", b, in.Time, loc, enc, back.Time, err)
			}
		}
	})
}

// FuzzMoney: an amount admin.Money accepts is whole cents within MaxMoney,
// and its two-decimal string reads back as the same amount.
func FuzzMoney(f *testing.F) {
	for _, s := range []string{`199`, `"199.00"`, `"19.5"`, `0.1`, `"0.005"`, `-2.5`, `"  3 "`, `1e13`, `"1e13"`, `1e14`,
		`"NaN"`, `"Inf"`, `"0x1p4"`, `"1_000"`, `true`, `null`, `"-0"`, `9999999999999.995`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var m admin.Money
		if err := json.Unmarshal(b, &m); err != nil {
			var typeErr *json.UnmarshalTypeError
			var syntaxErr *json.SyntaxError
			if !errors.As(err, &typeErr) && !errors.As(err, &syntaxErr) {
				t.Fatalf("%s: error %T %v: neither a type error (422) nor malformed JSON (400)", b, err, err)
			}
			return
		}
		if m > admin.MaxMoney || m < -admin.MaxMoney {
			t.Fatalf("%s: %d cents is beyond MaxMoney", b, m)
		}
		enc, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back admin.Money
		if err := json.Unmarshal(enc, &back); err != nil || back != m {
			t.Fatalf("%s: %d cents written as %s reads back as %d (%v)", b, m, enc, back, err)
		}
		if p, err := admin.ParseMoney(m.String()); err != nil || p != m {
			t.Fatalf("%s: ParseMoney(%q) = %d, %v", b, m.String(), p, err)
		}
	})
}

// FuzzAmount: an amount admin.AmountJSON accepts is exact (no fraction of a
// cent was dropped), within MaxMoney, and its two-decimal string reads back
// as the same amount; a refusal is one of the three errors the API explains.
func FuzzAmount(f *testing.F) {
	for _, s := range []string{`150`, `"150.5"`, `"0.01"`, `1e2`, `"1.005"`, `0.001`, `"1e-2"`, `"10000000000000.00"`, `"10000000000000.01"`,
		`"abc"`, `"0x1p4"`, `"1e999999"`, `null`, `true`, `"+5."`, `".5"`, `"-2.50"`, `""`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := admin.AmountJSON(b)
		if err != nil {
			if err != admin.ErrMoney && err != admin.ErrMoneyPlaces && err != admin.ErrMoneyRange {
				t.Fatalf("%s: unexpected error %v", b, err)
			}
			return
		}
		if m > admin.MaxMoney || m < -admin.MaxMoney {
			t.Fatalf("%s: %d cents is beyond MaxMoney", b, m)
		}
		if back, err := admin.ParseAmount(m.String()); err != nil || back != m {
			t.Fatalf("%s: %d cents written as %s reads back as %d (%v)", b, m, m.String(), back, err)
		}
		if r, err := admin.ParseMoney(string(bytes.Trim(b, `" `))); err == nil && r != m && !bytes.ContainsAny(b, `\`) {
			t.Fatalf("%s: ParseAmount %d but ParseMoney %d", b, m, r)
		}
	})
}
