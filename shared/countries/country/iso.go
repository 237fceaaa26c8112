package country

import (
	"strings"
	"sync"
)

//go:generate go run ./internal/gen -o iso_gen.go

// isoCountry is one ISO 3166-1 country of the generated dataset (iso_gen.go).
type isoCountry struct {
	Code      string // alpha-2
	Name      string // English short name (iso-codes' common name where it has one)
	Provinces []isoProvince
}

// isoProvince is one ISO 3166-2 subdivision: Code is the part after the hyphen.
type isoProvince struct{ Code, Name string }

// isoByCode indexes the dataset by code, on first use: most functions never
// look a country up, and every cold start would pay for the map.
var isoByCode = sync.OnceValue(func() map[string]*isoCountry {
	m := make(map[string]*isoCountry, len(isoCountries))
	for i := range isoCountries {
		m[isoCountries[i].Code] = &isoCountries[i]
	}
	return m
})

// NormalizeCode is a code as stored: trimmed and upper case.
func NormalizeCode(code string) string { return strings.ToUpper(strings.TrimSpace(code)) }

// Known reports whether code (normalized) is an ISO 3166-1 alpha-2 code of
// the dataset, or RestOfWorldCode.
func Known(code string) bool {
	_, ok := isoByCode()[code]
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

// Lookup finds an ISO 3166-1 country of the dataset by its alpha-2 code or
// its name (case and surrounding spaces ignored) and returns its code and
// name; ok is false for anything else (Rest of World included).
func Lookup(codeOrName string) (code, name string, ok bool) {
	s := strings.TrimSpace(codeOrName)
	if c, found := isoByCode()[strings.ToUpper(s)]; found && len(s) == 2 {
		return c.Code, c.Name, true
	}
	for i := range isoCountries {
		if strings.EqualFold(isoCountries[i].Name, s) {
			return isoCountries[i].Code, isoCountries[i].Name, true
		}
	}
	return "", "", false
}

// LookupProvince finds an ISO 3166-2 subdivision of the country with code
// (as Lookup returns it) by its code (the part after the hyphen, or the
// whole "US-KY") or its name, case and surrounding spaces ignored.
func LookupProvince(countryCode, codeOrName string) (code, name string, ok bool) {
	c, found := isoByCode()[countryCode]
	if !found {
		return "", "", false
	}
	s := strings.TrimSpace(codeOrName)
	short := strings.TrimPrefix(strings.ToUpper(s), countryCode+"-")
	for _, p := range c.Provinces {
		if p.Code == short || strings.EqualFold(p.Name, s) {
			return p.Code, p.Name, true
		}
	}
	return "", "", false
}
