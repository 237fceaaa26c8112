package admin

import (
	"math/big"
	"strconv"
	"strings"
)

// ParseIntegral reads an integer written in decimal, also with a fraction or
// an exponent when its value is exactly integral ("2.0", "1e3", "15e-1" is
// not): JSON has no integer type, and clients send integers as they print
// their numbers. The value must fit an int64. An exponent beyond ±40 is
// refused unread: no int64 needs one, and 1e999999 would be expanded into a
// million digits.
func ParseIntegral(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" {
		return 0, false
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		if e, err := strconv.Atoi(s[i+1:]); err != nil || e < -40 || e > 40 {
			return 0, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	return r.Num().Int64(), true
}
