package admin_test

import (
	"encoding/json"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
)

func TestMoney(t *testing.T) {
	for in, want := range map[string]string{`199`: `"199.00"`, `"19.5"`: `"19.50"`, `0.1`: `"0.10"`, `"0.005"`: `"0.01"`, `-2.5`: `"-2.50"`, `"  3 "`: `"3.00"`} {
		var m admin.Money
		if err := json.Unmarshal([]byte(in), &m); err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if got, _ := json.Marshal(m); string(got) != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
	for _, bad := range []string{`"abc"`, `"NaN"`, `"1e300"`, `true`, `[]`} {
		var m admin.Money
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestParseAmount(t *testing.T) {
	for in, want := range map[string]admin.Money{`150`: 15000, `"150.5"`: 15050, `"0.01"`: 1, `1e2`: 10000, `"1.10"`: 110,
		`"+5."`: 500, `.5`: 50, `"10000000000000.00"`: admin.MaxMoney, `"1.230e1"`: 1230, `"-2.5"`: -250} {
		got, err := admin.AmountJSON([]byte(in))
		if err != nil || got != want {
			t.Errorf("%s: %d, %v; want %d", in, got, err, want)
		}
	}
	for in, want := range map[string]error{`"0.005"`: admin.ErrMoneyPlaces, `1.001`: admin.ErrMoneyPlaces, `"1e-3"`: admin.ErrMoneyPlaces,
		`"10000000000000.01"`: admin.ErrMoneyRange, `"abc"`: admin.ErrMoney, `"0x1p4"`: admin.ErrMoney, `"1_000"`: admin.ErrMoney,
		`"Inf"`: admin.ErrMoney, `"NaN"`: admin.ErrMoney, `true`: admin.ErrMoney, `null`: admin.ErrMoney, `""`: admin.ErrMoney,
		`"1e999999"`: admin.ErrMoney, `"+-1"`: admin.ErrMoney, `"."`: admin.ErrMoney, `"1.2.3"`: admin.ErrMoney} {
		if got, err := admin.AmountJSON([]byte(in)); err != want {
			t.Errorf("%s: %d, %v; want %v", in, got, err, want)
		}
	}
	// ParseMoney rounds exactly: 1.005 is 1.01, where float arithmetic gives 1.00.
	if m, err := admin.ParseMoney("1.005"); err != nil || m != 101 {
		t.Errorf("ParseMoney(1.005) = %d, %v", m, err)
	}
	// The bound is on the amount as sent (the document's maximum), so an
	// amount just over it is refused, not rounded down into range; one just
	// under it may round up to the bound.
	for in, want := range map[string]error{"10000000000000.004": admin.ErrMoneyRange, "-10000000000000.001": admin.ErrMoneyRange,
		"9999999999999.999": nil, "10000000000000": nil} {
		if _, err := admin.ParseMoney(in); err != want {
			t.Errorf("ParseMoney(%s): %v, want %v", in, err, want)
		}
	}
}
