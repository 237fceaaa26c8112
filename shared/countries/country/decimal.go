package country

import (
	"encoding/json"
	"math/big"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"

	dec "github.com/storeadmin/adminapi/shared/decimal"
)

// Rate is a tax rate as a fraction, held exactly in millionths (0.05 is
// 50000): at most six decimal places (a ten-thousandth of a percent, finer
// than any tax), so every rate accepted reads back as sent, and
// tax_percentage is exactly tax × 100.
type Rate int64

// RateScale is the number of Rate units in 1 (100%).
const RateScale = 1_000_000

// RatePlaces is the number of decimal places a Rate keeps.
const RatePlaces = 6

// MarshalJSON writes the rate as a JSON number (0.05, 0.09975, 1, 0).
func (r Rate) MarshalJSON() ([]byte, error) { return []byte(decimal(int64(r), RatePlaces)), nil }

func (r Rate) String() string { return decimal(int64(r), RatePlaces) }

// Percent is a rate as a percentage: the same millionths written with the
// decimal point two places right (0.05 is 5, 0.09975 is 9.975).
type Percent Rate

func (p Percent) MarshalJSON() ([]byte, error) { return []byte(decimal(int64(p), RatePlaces-2)), nil }

// Grams is a weight held exactly in grams, written as kilograms with up to
// three decimal places.
type Grams int64

// GramPlaces is the number of decimal places of a weight in kilograms.
const GramPlaces = 3

func (g Grams) MarshalJSON() ([]byte, error) { return []byte(decimal(int64(g), GramPlaces)), nil }

// decimal writes n / 10^places in the shortest exact form.
func decimal(n int64, places int) string { return dec.Format(n, places) }

// Number is a numeric input held as its literal, so that it can be read
// exactly: a JSON number, or a string holding one. Anything else is a type
// error (422 "must be a number" on the field).
type Number struct {
	Set, Null bool
	Literal   string
}

func (n *Number) UnmarshalJSON(b []byte) error {
	n.Set = true
	s := strings.TrimSpace(string(b))
	switch {
	case s == "null":
		n.Null = true
		return nil
	case strings.HasPrefix(s, `"`):
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return errNumberType()
		}
		s = strings.TrimSpace(str)
		if !numberLiteral().MatchString(s) {
			return errNumberType()
		}
	case s == "" || !strings.ContainsAny(s[:1], "-0123456789"):
		return errNumberType()
	}
	n.Literal = s
	return nil
}

// numberLiteral is a JSON number.
// Compiled on first use, not at every cold start.
var numberLiteral = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
})

// errNumberType is what decoding a non-number reports: a type error, which
// the HTTP layer turns into 422 "must be a number" naming the field.
func errNumberType() error {
	return &json.UnmarshalTypeError{Value: "number", Type: reflect.TypeFor[float64]()}
}

// Scaled reads the literal as an exact multiple of 10^-places between lo and
// hi (both in those units); the message says what is wrong ("" when fine).
func (n Number) Scaled(places int, lo, hi int64) (int64, string) {
	s := n.Literal
	// An exponent beyond ±40 is read without building its huge or tiny
	// value: a non-zero mantissa is then out of range, or (tiny and not
	// negative) has too many places; a zero one is zero.
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(s[i+1:])
		if err != nil {
			e = 1 << 20 // more digits than an int holds: as far out as any
			if strings.HasPrefix(s[i+1:], "-") {
				e = -e
			}
		}
		if e < -40 || e > 40 {
			mantissa := s[:i]
			switch {
			case strings.Trim(mantissa, "-0.") == "":
				s = "0"
			case e > 0 || strings.HasPrefix(mantissa, "-"):
				return 0, "must be between " + decimal(lo, places) + " and " + decimal(hi, places)
			default:
				return 0, "must have at most " + strconv.Itoa(places) + " decimal places"
			}
		}
	}
	parsed, err := dec.Parse(s)
	if err != nil {
		return 0, "must be a number"
	}
	lor, hir := big.NewRat(lo, 1), big.NewRat(hi, 1)
	r := dec.Shift(parsed, places)
	if r.Cmp(lor) < 0 || r.Cmp(hir) > 0 {
		return 0, "must be between " + decimal(lo, places) + " and " + decimal(hi, places)
	}
	if !r.IsInt() {
		return 0, "must have at most " + strconv.Itoa(places) + " decimal places"
	}
	return r.Num().Int64(), ""
}

// mustRate reads a rate literal of the tax table (it panics on a bad one:
// the table is code).
func mustRate(s string) Rate {
	v, msg := Number{Set: true, Literal: s}.Scaled(RatePlaces, 0, RateScale)
	if msg != "" {
		panic("country: tax table rate " + s + " " + msg)
	}
	return Rate(v)
}

// unmarshalScaled reads a stored decimal written by MarshalJSON back exactly.
func unmarshalScaled(b []byte, places int) (int64, error) {
	var n Number
	if err := n.UnmarshalJSON(b); err != nil {
		return 0, err
	}
	if n.Null {
		return 0, nil
	}
	v, msg := n.Scaled(places, -1<<62, 1<<62)
	if msg != "" {
		return 0, errNumberType()
	}
	return v, nil
}

func (r *Rate) UnmarshalJSON(b []byte) error {
	v, err := unmarshalScaled(b, RatePlaces)
	*r = Rate(v)
	return err
}

func (p *Percent) UnmarshalJSON(b []byte) error {
	v, err := unmarshalScaled(b, RatePlaces-2)
	*p = Percent(v)
	return err
}

func (g *Grams) UnmarshalJSON(b []byte) error {
	v, err := unmarshalScaled(b, GramPlaces)
	*g = Grams(v)
	return err
}
