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
