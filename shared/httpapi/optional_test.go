package httpapi_test

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
)

func TestOptionalField(t *testing.T) {
	var in struct {
		S admin.Optional[string] `json:"template_suffix"`
	}
	if err := httpapi.DecodeObject([]byte(`{"template_suffix": null}`), &in); err != nil || !in.S.Set || !in.S.Null {
		t.Fatalf("null: %+v %v", in.S, err)
	}
	in.S = admin.Optional[string]{}
	if err := httpapi.DecodeObject([]byte(`{}`), &in); err != nil || in.S.Set {
		t.Fatalf("absent: %+v %v", in.S, err)
	}
	err := httpapi.DecodeObject([]byte(`{"template_suffix": 5}`), &in)
	if err == nil || err.Error() != `invalid template_suffix=["must be a string"]` {
		t.Fatalf("wrong type: %v", err)
	}
}

func TestMoneyTypeErrorNamesTheField(t *testing.T) {
	var in struct {
		Price admin.Money `json:"price"`
	}
	err := httpapi.DecodeObject([]byte(`{"price": "cheap"}`), &in)
	if err == nil || err.Error() != `invalid price=["must be a number"]` {
		t.Fatalf("got %v", err)
	}
	if err := httpapi.DecodeObject([]byte(`{"price": "12.5"}`), &in); err != nil || in.Price != 1250 {
		t.Fatalf("got %v %v", in.Price, err)
	}
}

// Decoding errors are per request: the field of one failure never leaks
// into the next.
func TestMoneyErrorsDoNotAccumulate(t *testing.T) {
	for range 3 {
		var in struct {
			Price   admin.Money  `json:"price"`
			Compare *admin.Money `json:"compare_at_price"`
		}
		if err := httpapi.DecodeObject([]byte(`{"compare_at_price": "x"}`), &in); err == nil || err.Error() != `invalid compare_at_price=["must be a number"]` {
			t.Fatalf("got %v", err)
		}
		if err := httpapi.DecodeObject([]byte(`{"price": "x"}`), &in); err == nil || err.Error() != `invalid price=["must be a number"]` {
			t.Fatalf("got %v", err)
		}
	}
}
