package country

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestDecimalRoundTrip(t *testing.T) {
	for lit, want := range map[string]string{
		"0": "0", "1": "1", "0.05": "0.05", "0.09975": "0.09975", "5e-2": "0.05", "0.000001": "0.000001", "1.000000": "1", "0.5E0": "0.5",
	} {
		v, msg := Number{Set: true, Literal: lit}.Scaled(RatePlaces, 0, RateScale)
		if msg != "" {
			t.Fatalf("%s: %s", lit, msg)
		}
		b, _ := json.Marshal(Rate(v))
		if string(b) != want {
			t.Errorf("%s: written %s, want %s", lit, b, want)
		}
		var back Rate
		if err := json.Unmarshal(b, &back); err != nil || back != Rate(v) {
			t.Errorf("%s: read back %d (%v), want %d", lit, back, err, v)
		}
	}
	for lit, msg := range map[string]string{
		"1.0000001": "must be between 0 and 1", "-0": "", "0.0000001": "must have at most 6 decimal places",
		"2": "must be between 0 and 1", "1e41": "must be between 0 and 1", "1e-41": "must have at most 6 decimal places",
		"-1e-41": "must be between 0 and 1", "0e999": "", "0.00e-99999999999999999999": "",
	} {
		if _, got := (Number{Set: true, Literal: lit}).Scaled(RatePlaces, 0, RateScale); got != msg {
			t.Errorf("%s: %q, want %q", lit, got, msg)
		}
	}
	if b, _ := json.Marshal(Percent(99750)); string(b) != "9.975" {
		t.Errorf("percent %s", b)
	}
	if b, _ := json.Marshal(Grams(2500)); string(b) != "2.5" {
		t.Errorf("grams %s", b)
	}
}

// The tax table names only codes of the dataset, and provinces the
// dataset gives those countries.
func TestTaxTableMatchesDataset(t *testing.T) {
	for code := range defaultTaxes {
		if !Known(code) || code == RestOfWorldCode {
			t.Errorf("tax table: unknown country %s", code)
		}
		DefaultTax(code) // panics on a bad rate
	}
	for code, ps := range defaultProvinceTaxes {
		c := New(1, code, func() int64 { return 2 })
		for pc, pt := range ps {
			if !slices.ContainsFunc(c.Provinces, func(p Province) bool { return p.Code == pc }) {
				t.Errorf("tax table: %s has no province %s", code, pc)
			}
			mustRate(pt.rate)
			if pt.kind != "" && !slices.Contains(TaxTypes, pt.kind) {
				t.Errorf("tax table: %s-%s tax type %q", code, pc, pt.kind)
			}
		}
	}
}
