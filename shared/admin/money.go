package admin

import (
	"encoding/json"
	"errors"
	"math/big"
	"reflect"
	"strings"

	"github.com/storeadmin/adminapi/shared/decimal"
)

// Money is an amount in cents, written as a decimal string with two places
// ("199.00") and read from a JSON number or a numeric string.
type Money int64

// MaxMoney bounds amounts far above any price while keeping cents exact.
const MaxMoney = Money(1e15)

// Errors of ParseMoney and ParseAmount.
var (
	// ErrMoney: the value is not a decimal number.
	ErrMoney = errors.New("is not a number")
	// ErrMoneyRange: its magnitude is beyond MaxMoney.
	ErrMoneyRange = errors.New("is out of range")
	// ErrMoneyPlaces: it has a fraction of a cent (ParseAmount only).
	ErrMoneyPlaces = errors.New("has more than two decimal places")
)

// errMoneyType is what a JSON decode of a non-amount reports: a type error,
// which the HTTP layer turns into a 422 naming the field ("must be a number").
// It is new each time: encoding/json writes the field's name into it.
func errMoneyType() error {
	return &json.UnmarshalTypeError{Value: "amount", Type: reflect.TypeFor[float64]()}
}

func (m Money) String() string { return decimal.Fixed(int64(m), 2) }

func (m Money) MarshalJSON() ([]byte, error) { return []byte(`"` + m.String() + `"`), nil }

func (m *Money) UnmarshalJSON(b []byte) error {
	s, ok := moneyText(b)
	if !ok {
		return errMoneyType()
	}
	if s == "null" {
		return nil
	}
	v, err := ParseMoney(s)
	if err != nil {
		return errMoneyType()
	}
	*m = v
	return nil
}

// moneyText is the text of an amount written as a JSON number or a string
// holding one, trimmed; "null" for null.
func moneyText(b []byte) (string, bool) {
	s := strings.TrimSpace(string(b))
	if len(s) >= 2 && s[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return "", false
		}
		s = strings.TrimSpace(str)
	}
	return s, true
}

// ParseMoney reads a decimal amount, rounding to cents (half away from
// zero). The bound applies to the amount as sent, before rounding, as the
// document's maximum does: 10000000000000.004 is out of range, not
// 10000000000000.00.
func ParseMoney(s string) (Money, error) {
	c, err := cents(s)
	if err != nil {
		return 0, err
	}
	if new(big.Rat).Abs(c).Cmp(new(big.Rat).SetInt64(int64(MaxMoney))) > 0 {
		return 0, ErrMoneyRange
	}
	num, den := c.Num(), c.Denom()
	q, r := new(big.Int).QuoRem(num, den, new(big.Int))
	if r.Sign() != 0 && new(big.Int).Lsh(r.Abs(r), 1).Cmp(den) >= 0 {
		q.Add(q, big.NewInt(int64(num.Sign())))
	}
	if q.CmpAbs(big.NewInt(int64(MaxMoney))) > 0 {
		return 0, ErrMoneyRange
	}
	return Money(q.Int64()), nil
}

// ParseAmount reads a decimal amount exactly: a value with a fraction of a
// cent is ErrMoneyPlaces, never rounded.
func ParseAmount(s string) (Money, error) {
	c, err := cents(s)
	if err != nil {
		return 0, err
	}
	if !c.IsInt() {
		return 0, ErrMoneyPlaces
	}
	if c.Num().CmpAbs(big.NewInt(int64(MaxMoney))) > 0 {
		return 0, ErrMoneyRange
	}
	return Money(c.Num().Int64()), nil
}

// AmountJSON is ParseAmount of a JSON number or numeric string; anything
// else (null included) is ErrMoney.
func AmountJSON(b []byte) (Money, error) {
	s, ok := moneyText(b)
	if !ok || s == "null" {
		return 0, ErrMoney
	}
	return ParseAmount(s)
}

// cents is the exact value of a decimal number (decimal.Parse), in cents.
func cents(s string) (*big.Rat, error) {
	r, err := decimal.Parse(s)
	if err != nil {
		return nil, ErrMoney
	}
	return decimal.Shift(r, 2), nil
}
