package decimal

import "testing"

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"199": "199", "19.5": "39/2", "-2.5": "-5/2", "+5.": "5", ".5": "1/2", "1.230e1": "123/10", "5e-324": ""} {
		r, err := Parse(in)
		if err != nil {
			t.Errorf("Parse(%q): %v", in, err)
			continue
		}
		if want != "" && r.RatString() != want {
			t.Errorf("Parse(%q) = %s, want %s", in, r.RatString(), want)
		}
	}
	for _, bad := range []string{"", ".", "abc", "0x1p4", "1_000", "Inf", "NaN", "1e999999", "+-1", "-+1", "1.2.3", "1e-401", "1e41", " 1"} {
		if _, err := Parse(bad); err != ErrSyntax {
			t.Errorf("Parse(%q): %v, want ErrSyntax", bad, err)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		n             int64
		places        int
		short, padded string
	}{
		{19900, 2, "199", "199.00"},
		{5, 2, "0.05", "0.05"},
		{-250, 2, "-2.5", "-2.50"},
		{50000, 6, "0.05", "0.050000"},
		{99750, 4, "9.975", "9.9750"},
		{0, 3, "0", "0.000"},
		{-3, 0, "-3", "-3"},
		{-9223372036854775808, 2, "-92233720368547758.08", "-92233720368547758.08"},
	} {
		if got := Format(c.n, c.places); got != c.short {
			t.Errorf("Format(%d, %d) = %s, want %s", c.n, c.places, got, c.short)
		}
		if got := Fixed(c.n, c.places); got != c.padded {
			t.Errorf("Fixed(%d, %d) = %s, want %s", c.n, c.places, got, c.padded)
		}
	}
}
