package api_test

import (
	"testing"

	"github.com/storeadmin/adminapi/shared/countries/country"
)

// TestOpenAPICountryCodes: the document's pattern of a country create's
// code lists exactly the codes the service knows, in either case, so that
// an unknown code (422 `is invalid`) is one the document refuses too.
func TestOpenAPICountryCodes(t *testing.T) {
	doc := loadOpenAPI(t)
	props := doc.schema("CountryCreate").(map[string]any)["properties"].(map[string]any)
	re, err := compilePattern(props["code"].(map[string]any)["pattern"].(string))
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, c := range country.Codes() {
		known[c] = true
	}
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			code := string([]rune{a, b})
			for _, sent := range []string{code, string([]rune{a + 32, b + 32}), " " + code + "\n"} {
				if re.MatchString(sent) != known[code] {
					t.Errorf("%q: the document's pattern matches %v, the service knows it %v", sent, re.MatchString(sent), known[code])
				}
				if country.Known(country.NormalizeCode(sent)) != known[code] {
					t.Errorf("%q: Known disagrees with Codes", sent)
				}
			}
		}
	}
	if !re.MatchString("*") || !country.Known(country.RestOfWorldCode) {
		t.Error("* (Rest of World) is taken by both")
	}
}
