package httpapi_test

// Fuzz targets of the request decoding. Their seed
// corpora are in testdata/fuzz/<Target> (and the f.Add calls below); every
// `go test` runs them, and `make test` (infra/fuzz.sh) fuzzes each target
// briefly: go test -run='^$' -fuzz='^FuzzDecode$' -fuzztime=10s ./shared/httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/httpapi"
)

// fuzzInput has a field of every kind request inputs use.
type fuzzInput struct {
	Title    *string                `json:"title"`
	Count    *int64                 `json:"count"`
	Position *int                   `json:"position"`
	Weight   *float64               `json:"weight"`
	Flag     *bool                  `json:"flag"`
	Tags     []string               `json:"tags"`
	Names    *[]string              `json:"names"`
	Suffix   admin.Optional[string] `json:"suffix"`
	ImageID  admin.Optional[int64]  `json:"image_id"`
	Price    admin.Optional[admin.Money]
	At       admin.Time      `json:"at"`
	Raw      json.RawMessage `json:"raw"`
	Items    []struct {
		ProductID *int64 `json:"product_id"`
	} `json:"items"`
}

var decodeSeeds = []string{
	`{"thing":{}}`,
	`{"thing":{"title":"a","count":1,"position":2,"weight":0.5,"flag":true,"tags":["x"],"names":null}}`,
	`{"thing":{"suffix":null,"image_id":null,"Price":"1.50","at":"2024-03-11T10:00:00-04:00"}}`,
	`{"thing":{"count":2.0}}`,
	`{"thing":{"count":"2"}}`,
	`{"thing":{"count":1e3}}`,
	`{"thing":{"count":99999999999999999999}}`,
	`{"thing":{"image_id":9223372036854775807}}`,
	`{"thing":{"items":[{"product_id":1},{"product_id":null},{}]}}`,
	`{"thing":{"raw":{"a":[1,2,{"b":null}]}}}`,
	`{"thing":[]}`,
	`{"thing":"x"}`,
	`{"other":{}}`,
	`[]`,
	`null`,
	`{"thing":{"title":"\ud800"}}`,
	`{"thing":{"title":"\ud83d\ude00","tags":["a\u0000"]}}`,
	`{"thing":{"title":"a\tb","tags":["a\tb\r\n"],"raw":{"k\u001f":"\u007f"}}}`,
	"{\"thing\":{\"title\":\"\xc2\x85\xff\"}}",
	`{"thing":{"title":1}}`,
	`{"thing":{`,
	``,
}

// checkDecodeError holds every decoding error to the forms the document
// gives them: 400 (malformed JSON, a missing wrapper) or 422 naming a field.
func checkDecodeError(t *testing.T, in []byte, err error) {
	t.Helper()
	var e *admin.Error
	if !errors.As(err, &e) {
		t.Fatalf("%q: error %T %v is no admin.Error (it would be a 500)", in, err, err)
	}
	switch e.Code {
	case admin.EBADREQUEST:
	case admin.EINVALID:
		if len(e.Fields) == 0 {
			t.Fatalf("%q: 422 without a field: %v", in, err)
		}
		for field, msgs := range e.Fields {
			if field == "" || len(msgs) == 0 {
				t.Fatalf("%q: 422 field %q messages %q", in, field, msgs)
			}
		}
	default:
		t.Fatalf("%q: error code %q (%v), want bad_request or invalid", in, e.Code, err)
	}
}

func FuzzDecode(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		r := httptest.NewRequest("POST", "/web/things.json", bytes.NewReader(body))
		var in fuzzInput
		err := httpapi.Decode(r, "thing", &in)
		if err != nil {
			checkDecodeError(t, body, err)
			return
		}
		// Accepted: the body was an object whose wrapper is an object.
		var top map[string]json.RawMessage
		if json.Unmarshal(body, &top) != nil || !bytes.HasPrefix(bytes.TrimLeft(top["thing"], " \t\r\n"), []byte("{")) {
			t.Fatalf("%q accepted without a wrapper object", body)
		}
		// No control character was taken: none in text, no line break in a
		// single-line field (title).
		texts := append([]string{}, in.Tags...)
		if in.Suffix.Set {
			texts = append(texts, in.Suffix.Value)
		}
		for _, s := range append(texts, ptrString(in.Title)) {
			for _, r := range s {
				if r < 0x20 && r != '\t' && r != '\n' && r != '\r' || r >= 0x7f && r <= 0x9f {
					t.Fatalf("%q accepted with control character %U", body, r)
				}
			}
		}
		if strings.ContainsAny(ptrString(in.Title), "\t\n\r") {
			t.Fatalf("%q accepted with a line break in title", body)
		}
	})
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func FuzzDecodeObject(f *testing.F) {
	for _, s := range decodeSeeds {
		var top map[string]json.RawMessage
		if json.Unmarshal([]byte(s), &top) == nil && top["thing"] != nil {
			f.Add([]byte(top["thing"]))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var in fuzzInput
		err := httpapi.DecodeObject(raw, &in)
		if err != nil {
			checkDecodeError(t, raw, err)
			return
		}
		if in.At.IsZero() {
			return
		}
		// A timestamp accepted in a body is one the service can write back.
		b, err := json.Marshal(in.At)
		if err != nil {
			t.Fatalf("%q: at %v does not encode: %v", raw, in.At.Time, err)
		}
		var back admin.Time
		if err := json.Unmarshal(b, &back); err != nil || !back.Equal(in.At.Time) {
			t.Fatalf("%q: at encodes as %s, which decodes to %v (%v)", raw, b, back.Time, err)
		}
	})
}
