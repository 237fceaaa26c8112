package admin

import (
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Money is an amount in cents, written as a decimal string with two places
// ("199.00") and read from a JSON number or a numeric string.
type Money int64

// MaxMoney bounds amounts far above any price while keeping cents exact.
const MaxMoney = Money(1e15)

// ErrMoney is returned by ParseMoney for a value that is not an amount.
var ErrMoney = errors.New("is not a number")

// errMoneyType is what a JSON decode of a non-amount reports: a type error,
// which the HTTP layer turns into a 422 naming the field ("must be a number").
// It is new each time: encoding/json writes the field's name into it.
func errMoneyType() error {
	return &json.UnmarshalTypeError{Value: "amount", Type: reflect.TypeFor[float64]()}
}

func (m Money) String() string {
	neg := m < 0
	if neg {
		m = -m
	}
	s := strconv.FormatInt(int64(m/100), 10) + "." + strconv.FormatInt(int64(m%100)/10, 10) + strconv.FormatInt(int64(m%10), 10)
	if neg {
		return "-" + s
	}
	return s
}

func (m Money) MarshalJSON() ([]byte, error) { return []byte(`"` + m.String() + `"`), nil }

func (m *Money) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if len(s) >= 2 && s[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return errMoneyType()
		}
		s = strings.TrimSpace(str)
	}
	v, err := ParseMoney(s)
	if err != nil {
		return errMoneyType()
	}
	*m = v
	return nil
}

// ParseMoney reads a decimal amount, rounding to cents.
func ParseMoney(s string) (Money, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || math.Abs(f*100) > float64(MaxMoney) {
		return 0, ErrMoney
	}
	return Money(math.Round(f * 100)), nil
}
