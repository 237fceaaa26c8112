package admin

import (
	"math"
	"strconv"
	"strings"
)

// ParseIntegral reads an integer written in decimal, also with a fraction or
// an exponent when its value is integral ("2.0", "1e3"): JSON has no integer
// type, and clients send integers as they print their numbers.
func ParseIntegral(s string) (int64, bool) {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if s == "" || strings.Trim(s, "0123456789.eE+-") != "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
		return 0, false
	}
	return int64(f), true
}
