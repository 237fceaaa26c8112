package smartcollections

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/storeadmin/adminapi/shared/admin"
	"github.com/storeadmin/adminapi/shared/catalog"
)

// FuzzRules feeds the rules decoder any JSON: it never panics; the rules it
// accepts are valid, stored as they would be read back (a second decode of
// their JSON gives the same rules), and a product can be tested against
// them. Seed corpus in testdata/fuzz/FuzzRules; fuzzed briefly by
// `make test` (infra/fuzz.sh).
func FuzzRules(f *testing.F) {
	for _, s := range []string{
		`null`, `[]`, `"title"`, `[1]`, `[{}]`, `{}`,
		`[{"column":"title","relation":"contains","condition":"ipod"}]`,
		`[{"column":"variant_price","relation":"greater_than","condition":"150"}]`,
		`[{"column":"variant_price","relation":"less_than","condition":99.995}]`,
		`[{"column":"variant_inventory","relation":"equals","condition":2.0}]`,
		`[{"column":"variant_inventory","relation":"equals","condition":"1e3"}]`,
		`[{"column":"variant_weight","relation":"equals","condition":"1e400"}]`,
		`[{"column":"tag","relation":"starts_with","condition":" Music "},{"column":"vendor","relation":"equals","condition":7}]`,
		`[{"column":"type","relation":"greater_than","condition":"a"}]`,
		`[{"column":"colour","relation":"equals","condition":"red"}]`,
		`[{"column":1,"relation":null,"condition":[]}]`,
	} {
		f.Add([]byte(s))
	}
	product := &catalog.Product{ID: 1, Title: "IPod Nano", Vendor: "Apple", ProductType: "Cult", Tags: "Music, MP3"}
	variants := []catalog.Variant{{ID: 2, ProductID: 1, Title: "Pink", Price: 19900, Grams: 200, Weight: 0.2, WeightUnit: "kg", InventoryQuantity: 10}}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var v admin.Validation
		rules := parseRules(raw, &v)
		if v.Err() != nil {
			return
		}
		for _, r := range rules {
			if msg := r.problem(); msg != "" {
				t.Fatalf("%s: accepted rule %+v: %s", raw, r, msg)
			}
		}
		enc, err := json.Marshal(rules)
		if err != nil {
			t.Fatal(err)
		}
		var v2 admin.Validation
		again := parseRules(enc, &v2)
		if v2.Err() != nil || !slices.Equal(again, rules) {
			t.Fatalf("%s: rules %s read back as %+v (%v)", raw, enc, again, v2.Err())
		}
		Matches(rules, false, product, variants)
		Matches(rules, true, product, variants)
	})
}
