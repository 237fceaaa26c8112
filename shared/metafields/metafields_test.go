package metafields

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
)

func TestValidateIntegerValues(t *testing.T) {
	str := func(s string) *string { return &s }
	for _, c := range []struct {
		value string // JSON
		want  string // stored value, "" for "must be an integer"
	}{
		{`25`, `25`},
		{`"25"`, `25`},
		{`-3`, `-3`},
		{`2.0`, `2`}, // JSON has no integer type: an integral number is one
		{`1e3`, `1000`},
		{`"2.0"`, `2`},
		{`9007199254740991`, `9007199254740991`},
		{`9223372036854775807`, `9223372036854775807`},
		{`2.5`, ``},
		{`"2.5"`, ``},
		{`1e19`, ``},
		{`"0x10"`, ``},
		{`"NaN"`, ``},
		{`"Inf"`, ``},
		{`"ten"`, ``},
	} {
		in := Input{Namespace: str("inventory"), Key: str("warehouse"), Value: json.RawMessage(c.value), ValueType: str("integer")}
		var v admin.Validation
		in.Validate(&v, "")
		err := v.Err()
		if c.want == "" {
			if err == nil || !strings.Contains(err.Error(), "must be an integer") && !v.Has("value") {
				t.Errorf("%s: accepted (%v), want must be an integer", c.value, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.value, err)
			continue
		}
		if got, ok := in.value(); !ok || string(got) != c.want {
			t.Errorf("%s: stored %s, want %s", c.value, got, c.want)
		}
	}
}
