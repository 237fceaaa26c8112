// Package decimal reads and writes the exact decimals the service keeps as
// integers of a fixed unit: money in cents (admin.Money), tax rates in
// millionths and weights in grams (countries). One reader and one writer,
// so every amount, rate and weight is parsed and shown by the same rules.
package decimal

import (
	"errors"
	"math/big"
	"strconv"
	"strings"
)

// ErrSyntax: the text is not a decimal number.
var ErrSyntax = errors.New("not a decimal number")

// Parse reads the exact value of a decimal number: an optional sign, digits
// with at most one point, and an optional exponent from -400 to 40 (so
// "1e999999" is refused unread, while every float64 a client's encoder
// writes, down to 5e-324, is read). Nothing else is a number here: no
// hexadecimal, underscores, Inf or NaN.
func Parse(s string) (*big.Rat, error) {
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
		e, err := strconv.Atoi(s[i+1:])
		if err != nil || e < -400 || e > 40 {
			return nil, ErrSyntax
		}
	}
	digits := strings.TrimPrefix(strings.TrimPrefix(mant, "-"), "+")
	intPart, frac, _ := strings.Cut(digits, ".")
	if intPart+frac == "" || strings.Trim(intPart+frac, "0123456789") != "" || strings.HasPrefix(s, "+-") || strings.HasPrefix(s, "-+") {
		return nil, ErrSyntax
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, ErrSyntax
	}
	return r, nil
}

// Shift returns r × 10^places (a new value): the number in units of
// 10^-places.
func Shift(r *big.Rat, places int) *big.Rat {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	return new(big.Rat).Mul(r, new(big.Rat).SetInt(scale))
}

// Format writes n / 10^places in the shortest exact form: 0.05, 9.975, 1.
func Format(n int64, places int) string {
	whole, frac := split(n, places)
	if frac = strings.TrimRight(frac, "0"); frac != "" {
		whole += "." + frac
	}
	return sign(n, whole)
}

// Fixed writes n / 10^places with exactly places decimals: 199.00.
func Fixed(n int64, places int) string {
	whole, frac := split(n, places)
	if places > 0 {
		whole += "." + frac
	}
	return sign(n, whole)
}

// split writes |n| / 10^places as its whole digits and places fraction
// digits.
func split(n int64, places int) (whole, frac string) {
	u := new(big.Int).Abs(big.NewInt(n)).String() // |MinInt64| too
	if len(u) <= places {
		u = strings.Repeat("0", places-len(u)+1) + u
	}
	return u[:len(u)-places], u[len(u)-places:]
}

func sign(n int64, s string) string {
	if n < 0 && strings.Trim(s, "0.") != "" {
		return "-" + s
	}
	return s
}
