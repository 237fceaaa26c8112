// Package admin holds the service's domain vocabulary: the errors every
// layer speaks, the shop and app records, scopes and shared value types.
// It imports nothing of the service, so every other package may import it.
package admin

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Application error codes. The HTTP layer maps each to one status in a
// single place (httpapi.StatusOf); nothing else chooses statuses.
const (
	ENOTFOUND     = "not_found"    // unknown path, id, or another app's record
	EINVALID      = "invalid"      // validation failure: 422 with per-field messages
	EBADREQUEST   = "bad_request"  // malformed request: 400
	EUNAUTHORIZED = "unauthorized" // missing or unknown token: 401
	EFORBIDDEN    = "forbidden"    // missing scope or forbidden action: 403
	ETOOLARGE     = "too_large"    // body over the size limit: 413
	ETOOMANY      = "too_many"     // the app's call bucket is full: 429
	EMETHOD       = "method"       // a known path, a method it does not serve: 405
	ECONFLICT     = "conflict"     // the same Idempotency-Key is still being processed: 409
	EUNAVAILABLE  = "unavailable"  // the store or a queue could not answer in time: 503 with Retry-After
	EINTERNAL     = "internal"     // anything unexpected: 500, details logged only
)

// Error is an application error. Message is safe to show to the client;
// Fields, when set, carries per-field messages ({"errors": {field: [...]}}).
type Error struct {
	Code    string
	Message string
	Fields  map[string][]string
	// Plain marks field errors rendered as a single string rather than a list,
	// as the "Required parameter missing or invalid" wrapper error is.
	Plain map[string]string
}

func (e *Error) Error() string {
	if e.Message != "" {
		return e.Code + ": " + e.Message
	}
	keys := make([]string, 0, len(e.Fields))
	for k := range e.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(e.Code)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%q", k, e.Fields[k])
	}
	return b.String()
}

// Errorf returns an application error with a client-safe message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of an application error, or EINTERNAL.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// NotFound is the error for any unknown or inaccessible resource.
var NotFound = &Error{Code: ENOTFOUND, Message: "Not Found"}

// MethodNotAllowed is the error for a method a known path does not serve;
// the router sets the Allow header beside it.
var MethodNotAllowed = &Error{Code: EMETHOD, Message: "Method Not Allowed"}

// Unavailable is the error for a request the store or a queue could not
// serve even after retries inside the request: the client may retry it
// after Retry-After (safely, for a write, with an Idempotency-Key).
var Unavailable = &Error{Code: EUNAVAILABLE, Message: "Service Unavailable: the shop's storage is busy; retry the request"}

// Unauthorized is the error for a missing or unknown access token.
var Unauthorized = &Error{Code: EUNAUTHORIZED, Message: "[API] Invalid API key or access token (unrecognized login or wrong password)"}

// Validation collects per-field messages; its Err is nil when nothing failed.
type Validation struct {
	fields map[string][]string
	order  []string
}

// Add records a message for a field.
func (v *Validation) Add(field, message string) {
	if v.fields == nil {
		v.fields = map[string][]string{}
	}
	if _, ok := v.fields[field]; !ok {
		v.order = append(v.order, field)
	}
	v.fields[field] = append(v.fields[field], message)
}

// Has reports whether the field already failed.
func (v *Validation) Has(field string) bool { _, ok := v.fields[field]; return ok }

// Err returns the 422 error, or nil when every field passed.
func (v *Validation) Err() error {
	if len(v.fields) == 0 {
		return nil
	}
	return &Error{Code: EINVALID, Fields: v.fields}
}

// Invalid is a one-field validation error.
func Invalid(field, message string) error {
	return &Error{Code: EINVALID, Fields: map[string][]string{field: {message}}}
}

// Validation messages of the contract, verbatim (docs/openapi.yaml quotes them).
const (
	MsgBlank       = "can't be blank"
	MsgNotInList   = "is not included in the list"
	MsgInvalid     = "is invalid"
	MsgTaken       = "has already been taken"
	MsgURIInvalid  = "URI is invalid"
	MsgHTTPSNeeded = "Source must be secure (HTTPS)"
)

// TooLong is the message of a text longer than max characters.
func TooLong(max int) string { return TooMany(max, "characters") }

// TooShort is the message of a text shorter than min characters.
func TooShort(min int) string { return fmt.Sprintf("is too short (minimum is %d characters)", min) }

// TooMany is the message of a value over max of unit ("tags", "rules", "KB").
func TooMany(max int, unit string) string {
	return fmt.Sprintf("is too long (maximum is %d %s)", max, unit)
}

// RequiredText validates a text field that a create must carry and an
// update may change: nil on update leaves dst as it is; blank is
// `can't be blank`; over max characters as sent `is too long`; otherwise
// dst takes the trimmed text. The limit counts the text as sent, as the
// document's maxLength does, so the two agree on every input (what is
// stored, trimmed, is never longer).
func (v *Validation) RequiredText(field string, in *string, create bool, max int, dst *string) {
	if in == nil && !create {
		return
	}
	t := ""
	if in != nil {
		t = strings.TrimSpace(*in)
	}
	switch {
	case t == "":
		v.Add(field, MsgBlank)
	case utf8.RuneCountInString(*in) > max:
		v.Add(field, TooLong(max))
	default:
		*dst = t
	}
}

// MaxTitle is the longest title of a titled record (pages, articles,
// collections): 255 characters.
const MaxTitle = 255

// Title validates the required title of a titled record: RequiredText of
// the field "title" with MaxTitle.
func (v *Validation) Title(in *string, create bool, dst *string) {
	v.RequiredText("title", in, create, MaxTitle, dst)
}

// BadParam is the 400 of a query parameter that cannot be used.
func BadParam(name, msg string) error {
	return &Error{Code: EBADREQUEST, Fields: map[string][]string{name: {msg}}}
}

// ScopeRequired is the 403 of a call the app lacks a scope for: read_<scope>,
// or write_<scope> for a change.
func ScopeRequired(s Scope, write bool) *Error {
	name := "read_" + string(s)
	if write {
		name = "write_" + string(s)
	}
	return Errorf(EFORBIDDEN, "[API] This action requires merchant approval for %s scope.", name)
}
