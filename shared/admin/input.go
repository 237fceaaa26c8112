package admin

import (
	"encoding/json"
	"strings"
)

// Optional is an input field that distinguishes absent (Set false), null
// (Set, Null) and a value, for fields where null means "reset".
type Optional[T any] struct {
	Set, Null bool
	Value     T
}

func (o *Optional[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		o.Null = true
		return nil
	}
	return json.Unmarshal(b, &o.Value)
}

// SetText applies an optional nullable text input: absent keeps *dst, null
// or blank resets it to null, anything else sets it trimmed.
func SetText(dst **string, in Optional[string]) {
	if !in.Set {
		return
	}
	if s := strings.TrimSpace(in.Value); !in.Null && s != "" {
		*dst = &s
		return
	}
	*dst = nil
}
