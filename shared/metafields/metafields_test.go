package metafields

import (
	"encoding/json"
	"errors"
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

func TestFilterRules(t *testing.T) {
	for _, c := range []struct {
		f   Filter
		bad string // the parameter named by the 400, "" when valid
	}{
		{Filter{}, ""},
		{Filter{ValueType: "integer"}, ""},
		{Filter{ValueType: "float"}, "value_type"},
		{Filter{OwnerResource: "shop"}, ""},
		{Filter{OwnerResource: "order", OwnerID: 7}, ""},
		{Filter{OwnerResource: "order"}, "metafield[owner_id]"},
		{Filter{OwnerID: 7}, "metafield[owner_resource]"},
		{Filter{OwnerResource: "product_image", OwnerID: 7}, "metafield[owner_resource]"},
	} {
		err := c.f.CheckFilter()
		var e *admin.Error
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%+v: %v", c.f, err)
		case c.bad != "" && (!errors.As(err, &e) || e.Code != admin.EBADREQUEST || e.Fields[c.bad] == nil):
			t.Errorf("%+v: %v, want 400 on %s", c.f, err, c.bad)
		}
	}
	m := Metafield{Namespace: "inventory", Key: "warehouse", ValueType: "string"}
	for f, want := range map[*Filter]bool{
		{Namespaces: []string{"inventory"}}:             true,
		{Namespaces: []string{"inventory", "shipping"}}: false, // namespace and namepace both match
		{Key: "warehouse", ValueType: "string"}:         true,
		{ValueType: "integer"}:                          false,
	} {
		if got := f.matches(&m); got != want {
			t.Errorf("%+v matches = %v, want %v", *f, got, want)
		}
	}
	for resource, scope := range map[string]admin.Scope{OwnerShop: admin.ScopeNone, OwnerVariant: admin.ScopeProducts,
		OwnerBlog: admin.ScopeContent, OwnerCustomer: admin.ScopeCustomers, OwnerOrder: admin.ScopeOrders} {
		if got := ScopeOf(resource); got != scope {
			t.Errorf("ScopeOf(%s) = %q, want %q", resource, got, scope)
		}
	}
}
