package country

import "testing"

func TestLookup(t *testing.T) {
	for _, c := range []struct{ in, code, name string }{
		{"CA", "CA", "Canada"}, {" ca ", "CA", "Canada"}, {"canada", "CA", "Canada"}, {"United States", "US", "United States"},
	} {
		if code, name, ok := Lookup(c.in); !ok || code != c.code || name != c.name {
			t.Errorf("Lookup(%q) = %q %q %v", c.in, code, name, ok)
		}
	}
	for _, in := range []string{"", "*", "ZZ", "Atlantis", "Can"} {
		if _, _, ok := Lookup(in); ok {
			t.Errorf("Lookup(%q) found a country", in)
		}
	}
	for _, c := range []struct{ country, in, code, name string }{
		{"CA", "ON", "ON", "Ontario"}, {"CA", "ca-on", "ON", "Ontario"}, {"CA", "ontario", "ON", "Ontario"}, {"US", "Kentucky", "KY", "Kentucky"},
	} {
		if code, name, ok := LookupProvince(c.country, c.in); !ok || code != c.code || name != c.name {
			t.Errorf("LookupProvince(%q, %q) = %q %q %v", c.country, c.in, code, name, ok)
		}
	}
	for _, c := range [][2]string{{"CA", "NY"}, {"CA", ""}, {"AD", "X"}, {"", "ON"}} {
		if _, _, ok := LookupProvince(c[0], c[1]); ok {
			t.Errorf("LookupProvince(%q, %q) found a province", c[0], c[1])
		}
	}
}
