package country

import "strings"

//go:generate go run ./internal/gen -o iso_gen.go

// isoCountry is one ISO 3166-1 country of the generated dataset (iso_gen.go).
type isoCountry struct {
	Code      string // alpha-2
	Name      string // English short name (iso-codes' common name where it has one)
	Provinces []isoProvince
}

// isoProvince is one ISO 3166-2 subdivision: Code is the part after the hyphen.
type isoProvince struct{ Code, Name string }

var isoByCode = func() map[string]*isoCountry {
	m := make(map[string]*isoCountry, len(isoCountries))
	for i := range isoCountries {
		m[isoCountries[i].Code] = &isoCountries[i]
	}
	return m
}()

// NormalizeCode is a code as stored: trimmed and upper case.
func NormalizeCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// Known reports whether code (normalized) is an ISO 3166-1 alpha-2 code of
// the dataset, or RestOfWorldCode.
func Known(code string) bool {
	_, ok := isoByCode[code]
	return ok || code == RestOfWorldCode
}

// Codes returns every ISO code of the dataset, in order.
func Codes() []string {
	out := make([]string, len(isoCountries))
	for i := range isoCountries {
		out[i] = isoCountries[i].Code
	}
	return out
}
