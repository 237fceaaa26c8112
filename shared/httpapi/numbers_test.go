package httpapi_test

import (
	"encoding/json"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
)

type province struct {
	ID   int64  `json:"id"`
	Code string `json:"code"`
}

type digitsInput struct {
	ID        int64                  `json:"id"`
	ProductID *int64                 `json:"product_id"`
	ParentID  admin.Optional[int64]  `json:"parent_id"`
	Position  int                    `json:"position"`
	Grams     uint32                 `json:"grams"`
	Title     string                 `json:"title"`
	Provinces []province             `json:"provinces"`
	Quantity  map[string]int         `json:"quantity"`
	Nested    *struct{ Count int64 } `json:"nested"`
	Raw       json.RawMessage        `json:"raw"`
	When      admin.Time             `json:"when"`
}

// Digit strings are integers wherever the input holds an integer, at any
// depth and inside admin.Optional; strings elsewhere stay strings.
func TestDigitStringsAreIntegers(t *testing.T) {
	var in digitsInput
	body := `{"id":"0012","product_id":"632910392","parent_id":"-0","position":"3","grams":"200","title":"42",
		"provinces":[{"id":"224293623","code":"QC"},{"id":5}],"quantity":{"a":"9"},"nested":{"Count":"-4"},
		"raw":{"id":"1"},"when":"2024-01-02T03:04:05Z"}`
	if err := httpapi.DecodeObject([]byte(body), &in); err != nil {
		t.Fatal(err)
	}
	if in.ID != 12 || in.ProductID == nil || *in.ProductID != 632910392 || !in.ParentID.Set || in.ParentID.Value != 0 ||
		in.Position != 3 || in.Grams != 200 || in.Title != "42" || len(in.Provinces) != 2 ||
		in.Provinces[0].ID != 224293623 || in.Provinces[0].Code != "QC" || in.Provinces[1].ID != 5 ||
		in.Quantity["a"] != 9 || in.Nested.Count != -4 || string(in.Raw) != `{"id":"1"}` {
		t.Fatalf("%+v", in)
	}
}

func TestDigitStringsRefused(t *testing.T) {
	for body, want := range map[string]string{
		`{"position":"3a"}`:                         `invalid position=["must be an integer"]`,
		`{"position":" 3"}`:                         `invalid position=["must be an integer"]`,
		`{"position":"+3"}`:                         `invalid position=["must be an integer"]`,
		`{"position":""}`:                           `invalid position=["must be an integer"]`,
		`{"position":"3.5"}`:                        `invalid position=["must be an integer"]`,
		`{"parent_id":"x"}`:                         `invalid parent_id=["must be an integer"]`,
		`{"provinces":[{"id":"a"}]}`:                `invalid provinces.id=["must be an integer"]`,
		`{"id":"9007199254740992"}`:                 `invalid id=["` + httpapi.MsgIDTooLarge + `"]`,
		`{"provinces":[{"id":"-1"}]}`:               `invalid id=["` + httpapi.MsgIDNegative + `"]`,
		`{"product_id":"99999999999999999999"}`:     `invalid product_id=["` + httpapi.MsgIDTooLarge + `"]`,
		`{"position":"-"}`:                          `invalid position=["must be an integer"]`,
		`{"grams":"99999999999"}`:                   `invalid grams=["must be an integer"]`,
		`{"position":"1","title":7}`:                `invalid title=["must be a string"]`,
		`{"position":"1","provinces":[{"code":1}]}`: `invalid provinces.code=["must be a string"]`,
	} {
		var in digitsInput
		err := httpapi.DecodeObject([]byte(body), &in)
		if err == nil || err.Error() != want {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
}

// The common path does not allocate more for the pass: a body without a
// string where an integer goes decodes as before.
func BenchmarkDecodeNoDigitStrings(b *testing.B) {
	body := []byte(`{"id":12,"product_id":632910392,"position":3,"title":"a title","provinces":[{"id":224293623,"code":"QC"}]}`)
	b.ReportAllocs()
	for b.Loop() {
		var in digitsInput
		if err := httpapi.DecodeObject(body, &in); err != nil {
			b.Fatal(err)
		}
	}
}
