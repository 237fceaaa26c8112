package metafields_test

import (
	"fmt"
	"testing"

	"github.com/storeadmin/adminapi/shared/apitest"
)

// A 2024 client sends type instead of value_type, reads both back and
// filters on either; a whole-object save echoes both.
func TestTypes(t *testing.T) {
	apitest.ForEachStore(t, func(t *testing.T, e *apitest.Env) {
		create := func(key string, fields M) map[string]any {
			m := M{"namespace": "typed", "key": key}
			for k, v := range fields {
				m[k] = v
			}
			return e.Do("POST", "/com/metafields.json", M{"metafield": m}).Expect(t, 201).Object(t, "metafield")
		}
		for i, c := range []struct {
			fields         M
			value, vt, typ any
		}{
			{M{"type": "single_line_text_field", "value": "blue"}, "blue", "string", "single_line_text_field"},
			{M{"type": "number_integer", "value": "42"}, 42.0, "integer", "number_integer"},
			{M{"type": "boolean", "value": true}, "true", "string", "boolean"},
			{M{"type": "json", "value": M{"a": 1}}, `{"a":1}`, "string", "json"},
			{M{"type": "number_decimal", "value": "1.50"}, "1.50", "string", "number_decimal"},
			{M{"type": "date", "value": "2024-02-29"}, "2024-02-29", "string", "date"},
			{M{"type": "list.single_line_text_field", "value": `["a","b"]`}, `["a","b"]`, "string", "list.single_line_text_field"},
			{M{"value_type": "string", "value": "two\nlines"}, "two\nlines", "string", "multi_line_text_field"},
			{M{"value_type": "integer", "value": 7}, 7.0, "integer", "number_integer"},
			{M{"value_type": "string", "type": "number_integer", "value": 8}, 8.0, "integer", "number_integer"},
		} {
			m := create(fmt.Sprintf("key%d", i), c.fields)
			if m["value"] != c.value || m["value_type"] != c.vt || m["type"] != c.typ {
				t.Errorf("%v: %v", c.fields, m)
			}
		}
		for _, bad := range []M{{"type": "colour", "value": "x"}, {"type": "boolean", "value": "yes"}, {"type": "number_integer", "value": "1.5"},
			{"type": "json", "value": "{"}, {"type": "date", "value": "2024-02-30"}, {"type": "url", "value": "not a url"},
			{"type": "single_line_text_field", "value": "a\nb"}, {"type": "color", "value": "#12345"}} {
			m := M{"namespace": "typed", "key": "bad"}
			for k, v := range bad {
				m[k] = v
			}
			e.Do("POST", "/com/metafields.json", M{"metafield": m}).Expect(t, 422)
		}
		e.Do("POST", "/com/metafields.json", M{"metafield": M{"namespace": "typed", "key": "none", "value": "x"}}).Expect(t, 422)

		// Filters on either.
		if got := e.Do("GET", "/com/metafields.json?type=number_integer", nil).Expect(t, 200).List(t, "metafields"); len(got) != 3 {
			t.Errorf("type filter: %d", len(got))
		}
		if got := e.Do("GET", "/com/metafields.json?value_type=integer", nil).Expect(t, 200).List(t, "metafields"); len(got) != 3 {
			t.Errorf("value_type filter: %d", len(got))
		}
		if got := e.Do("GET", "/com/metafields.json?type=multi_line_text_field", nil).Expect(t, 200).List(t, "metafields"); len(got) != 1 {
			t.Errorf("derived type filter: %d", len(got))
		}
		e.Do("GET", "/com/metafields.json?type=colour", nil).Expect(t, 400)

		// Whole-object saves: the changed one of type and value_type wins.
		m := create("echo", M{"type": "single_line_text_field", "value": "1"})
		path := fmt.Sprintf("/com/metafields/%d.json", num(m["id"]))
		echo := func(changes M) map[string]any {
			b := M{}
			for k, v := range m {
				b[k] = v
			}
			b["id"] = fmt.Sprint(num(m["id"]))
			b["owner_id"] = fmt.Sprint(num(m["owner_id"]))
			for k, v := range changes {
				b[k] = v
			}
			m = e.Do("PUT", path, M{"metafield": b}).Expect(t, 200).Object(t, "metafield")
			return m
		}
		if u := echo(M{"value": "2"}); u["value"] != "2" || u["type"] != "single_line_text_field" || u["value_type"] != "string" {
			t.Errorf("value: %v", u)
		}
		if u := echo(M{"value_type": "integer", "value": 3}); u["value"] != 3.0 || u["type"] != "number_integer" || u["value_type"] != "integer" {
			t.Errorf("value_type changed beside the echoed type: %v", u)
		}
		if u := echo(M{"type": "json", "value": "[4]"}); u["value"] != "[4]" || u["type"] != "json" || u["value_type"] != "string" {
			t.Errorf("type changed beside the echoed value_type: %v", u)
		}
	}, groups...)
}
