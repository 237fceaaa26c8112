package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"

	"github.com/storeadmin/adminapi/shared/admin"
)

const missingWrapper = "Required parameter missing or invalid"

// Decode reads a request body of the form {"<wrapper>": {...}} into dst.
// Malformed JSON is 400, a missing or non-object wrapper is 400 naming it,
// a field of the wrong JSON type is 422 naming the field, an oversized body
// is 413. Unknown fields are ignored.
func Decode(r *http.Request, wrapper string, dst any) error {
	body, err := ReadBody(r)
	if err != nil {
		return err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) { // a non-object document falls through to the wrapper error
			return admin.Errorf(admin.EBADREQUEST, "malformed JSON in the request body: %s", syntaxMessage(err))
		}
	}
	raw := bytes.TrimLeft(top[wrapper], " \t\r\n")
	if len(raw) == 0 || raw[0] != '{' {
		return &admin.Error{Code: admin.EBADREQUEST, Plain: map[string]string{wrapper: missingWrapper}}
	}
	return DecodeObject(raw, dst)
}

// ReadBody reads a request's body whole: over the route's cap it is 413,
// a connection that breaks is 400.
func ReadBody(r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return nil, errTooLarge
		}
		return nil, admin.Errorf(admin.EBADREQUEST, "could not read the request body")
	}
	return body, nil
}

// IgnoredBody reads the body of a route that takes none (the comment
// actions): nothing or a JSON object, whatever it holds, is accepted; any
// other document is 400, so that a client sending the wrong thing learns it.
func IgnoredBody(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return errTooLarge
		}
		return admin.Errorf(admin.EBADREQUEST, "could not read the request body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil || obj == nil {
		return admin.Errorf(admin.EBADREQUEST, "the request body must be empty or a JSON object")
	}
	return nil
}

// DecodeObject unmarshals one JSON object, turning type mismatches into 422
// errors that name the field, and refuses control characters and broken
// Unicode in its strings (checkText), also 422 naming the field.
func DecodeObject(raw []byte, dst any) error {
	orig := raw // what the client sent: the number pass re-encodes strings
	if needsNumberPass(raw) {
		var err error
		if raw, err = normalizeNumbers(raw); err != nil {
			return err
		}
	}
	err := json.Unmarshal(raw, dst)
	if err != nil && digitStringsPass(err) {
		if raw, err = integerStrings(raw, reflect.TypeOf(dst)); err != nil {
			return err
		}
		err = json.Unmarshal(raw, dst)
	}
	if err == nil {
		if err := checkText(orig, dst); err != nil {
			return err
		}
		if err := ignoredID(raw, dst); err != nil {
			return err
		}
		if bytes.Contains(raw, []byte("null")) {
			return refusedNull(raw, dst)
		}
		return nil
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		field := jsonPath(reflect.TypeOf(dst), typeErr.Field)
		if field == "" {
			field = "base"
		}
		return admin.Invalid(field, "must be "+kindName(typeErr.Type))
	}
	var fieldErr *FieldError
	if errors.As(err, &fieldErr) {
		return admin.Invalid(fieldErr.Field, fieldErr.Message)
	}
	return admin.Errorf(admin.EBADREQUEST, "malformed JSON in the request body: %s", syntaxMessage(err))
}

// jsonPath is encoding/json's path of a field in t as the client wrote it:
// without the Go names of untagged embedded structs, whose properties are
// their parent's ("Input.title" is "title").
func jsonPath(t reflect.Type, path string) string {
	var out []string
	for _, seg := range strings.Split(path, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t != nil && t.Kind() == reflect.Struct {
			if f, ok := t.FieldByName(seg); ok && f.Anonymous && f.Tag.Get("json") == "" {
				t = f.Type
				continue
			}
			t = fieldByJSONName(t, seg)
		} else {
			t = nil
		}
		out = append(out, seg)
	}
	return strings.Join(out, ".")
}

// fieldByJSONName is the type of t's property name (embedded structs'
// included), or nil.
func fieldByJSONName(t reflect.Type, name string) reflect.Type {
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct:
			if ft := fieldByJSONName(f.Type, name); ft != nil {
				return ft
			}
		case tag == name || tag == "" && strings.EqualFold(f.Name, name):
			return f.Type
		}
	}
	return nil
}

// ignoredID refuses a body "id" that dst does not take (the path names the
// record, so the id is ignored) unless it is an integer an id can be: the
// document types it, and a client sending an object or a string there has
// made a mistake it should hear about (422 naming id, as for a typed id).
// A string of digits is an integer here, as everywhere (digitStringsPass).
func ignoredID(raw []byte, dst any) error {
	if !bytes.Contains(raw, []byte(`"id"`)) {
		return nil
	}
	if n := textNodeOf(reflect.TypeOf(dst)); n.kind != fields || n.fields["id"] != nil {
		return nil
	}
	var top struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(raw, &top) != nil || top.ID == nil {
		return nil
	}
	s := string(top.ID)
	var str string
	if json.Unmarshal(top.ID, &str) == nil && isDigits(str) {
		s = str // an id sent as a string, as Shopify's libraries do
	}
	if s[0] == '-' || s[0] >= '0' && s[0] <= '9' {
		if msg := idRange(s); msg != "" {
			return admin.Invalid("id", msg)
		}
	}
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		return admin.Invalid("id", "must be an integer")
	}
	return nil
}

// NullTag marks an input field whose document allows a value or nothing,
// never null (`null:"refuse"`): a pointer would take null for absent, and a
// client would believe it had set the field. Null there is 422 naming the
// field, as a value of the wrong type is.
const NullTag = "null"

// refusedNull finds a null given for a field tagged null:"refuse" in the
// object raw decoded into dst (nested objects and arrays of them included).
func refusedNull(raw []byte, dst any) error {
	var doc any
	if json.Unmarshal(raw, &doc) != nil {
		return nil
	}
	return nullIn(reflect.TypeOf(dst), doc, "")
}

func nullIn(t reflect.Type, v any, path string) error {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
		if t.Kind() == reflect.Slice {
			items, _ := v.([]any)
			for _, item := range items {
				if err := nullIn(t.Elem(), item, path); err != nil {
					return err
				}
			}
			return nil
		}
		t = t.Elem()
	}
	obj, ok := v.(map[string]any)
	if t.Kind() != reflect.Struct || !ok {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if ft := f.Type; f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			// An untagged embedded struct's properties are the object's own,
			// as encoding/json reads them.
			if err := nullIn(ft, obj, path); err != nil {
				return err
			}
			continue
		}
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		val, given := obj[name]
		if !given {
			continue
		}
		if path != "" {
			name = path + "." + name
		}
		if val == nil {
			if f.Tag.Get(NullTag) == "refuse" {
				return admin.Invalid(name, "must be "+kindName(f.Type))
			}
			continue
		}
		if err := nullIn(f.Type, val, name); err != nil {
			return err
		}
	}
	return nil
}

// FieldError lets a custom UnmarshalJSON reject a value with a message.
type FieldError struct{ Field, Message string }

func (e *FieldError) Error() string { return e.Field + " " + e.Message }

func syntaxMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s (at byte %d)", se.Error(), se.Offset)
	}
	return "unexpected content"
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "an object"
}

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// WriteJSON writes v as the response body with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufPool.Put(buf) }()
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		buf.Reset()
		buf.WriteString(`{"errors":"Internal Server Error"}`)
		status = http.StatusInternalServerError
	}
	writeBody(w, status, buf.Bytes())
}

func writeBody(w http.ResponseWriter, status int, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	w.Write(b)
}

// WriteOne writes {"<wrapper>": v}, restricted to fields when given.
func WriteOne(w http.ResponseWriter, status int, wrapper string, v any, fields Fields) error {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufPool.Put(buf) }()
	buf.WriteString(`{"`)
	buf.WriteString(wrapper)
	buf.WriteString(`":`)
	if err := fields.encode(buf, v); err != nil {
		return err
	}
	buf.WriteString("}\n")
	writeBody(w, status, buf.Bytes())
	return nil
}

// WriteList writes {"<wrapper>": [items...]}, each restricted to fields.
func WriteList[T any](w http.ResponseWriter, wrapper string, items []T, fields Fields) error {
	buf := bufPool.Get().(*bytes.Buffer)
	defer func() { buf.Reset(); bufPool.Put(buf) }()
	buf.WriteString(`{"`)
	buf.WriteString(wrapper)
	buf.WriteString(`":[`)
	for i := range items {
		if i > 0 {
			buf.WriteByte(',')
		}
		if err := fields.encode(buf, &items[i]); err != nil {
			return err
		}
	}
	buf.WriteString("]}\n")
	writeBody(w, http.StatusOK, buf.Bytes())
	return nil
}

// WriteCount writes {"count": n}.
func WriteCount(w http.ResponseWriter, n int) error {
	writeBody(w, http.StatusOK, []byte(`{"count":`+strconv.Itoa(n)+"}\n"))
	return nil
}

// WriteDeleted writes the 200 {} of a successful delete.
func WriteDeleted(w http.ResponseWriter) error { return WriteEmpty(w) }

// WriteEmpty writes 200 {}: what an action answers that returns no record.
func WriteEmpty(w http.ResponseWriter) error {
	writeBody(w, http.StatusOK, []byte("{}\n"))
	return nil
}
