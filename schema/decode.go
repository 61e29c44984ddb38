package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	jsonv1 "github.com/go-json-experiment/json/v1"
)

// ErrInvalid is wrapped by every *InvalidError: errors.Is(err,
// schema.ErrInvalid) tells bad input (dead letter it, move on) from a
// failure of our own (retry the batch).
var ErrInvalid = errors.New("invalid message")

// InvalidError is bad input with a stable reason code (the dlq row's reason
// and the dead-letter metric's label) and a bounded human detail.
type InvalidError struct {
	Reason string
	Detail string
}

func (e *InvalidError) Error() string { return "invalid message: " + e.Reason + ": " + e.Detail }

// Unwrap makes errors.Is(err, ErrInvalid) hold.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Invalid builds an *InvalidError; the detail is bounded to 1 KiB.
func Invalid(reason, format string, args ...any) error {
	return &InvalidError{Reason: reason, Detail: Bound(fmt.Sprintf(format, args...), 1024)}
}

// ReasonOf returns the reason code of a bad-input error, or "" when err is
// not one (a transient failure of our own).
func ReasonOf(err error) string {
	var ie *InvalidError
	if errors.As(err, &ie) {
		return ie.Reason
	}
	return ""
}

// Validator is implemented by every wire type: Validate checks what the
// consumers rely on, using nothing but the message (no wall clock), so a
// replay refuses exactly what the live run refused.
type Validator interface {
	Validate() error
}

// Decode decodes one message value into T and validates it. Errors are
// *InvalidError with reason malformed_json, truncated_json, not_json or
// invalid_utf8 for bytes that are not the JSON of a T, or the reason
// T.Validate gives.
func Decode[T any, PT interface {
	*T
	Validator
}](b []byte) (T, error) {
	var v T
	if err := Unmarshal(b, &v); err != nil {
		return v, err
	}
	if err := PT(&v).Validate(); err != nil {
		var zero T
		return zero, err
	}
	return v, nil
}

// Unmarshal decodes JSON into v and classifies a failure with a reason code.
//
// It decodes with github.com/go-json-experiment/json/v1 — encoding/json's
// semantics on the json/v2 decoder, the code Go's own encoding/json runs
// under GOEXPERIMENT=jsonv2 — because encoding/json's reflection decoder
// was a third of the history sink's CPU and v1-on-v2 takes half its time
// on health checks (bench/README.md). A failure is decoded again by
// encoding/json, so the reason of bad input is classified exactly as
// before; FuzzUnmarshalMatchesEncodingJSON pins that both decode every
// input alike.
func Unmarshal(b []byte, v any) error {
	if jsonv1.Unmarshal(b, v) == nil {
		return nil
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Pointer && !rv.IsNil() {
		rv.Elem().SetZero() // what the failed decode filled in
	}
	err := json.Unmarshal(b, v)
	if err == nil {
		return nil
	}
	trim := bytes.TrimSpace(b)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case !utf8.Valid(b):
		return Invalid(ReasonInvalidUTF8, "the message is not valid UTF-8")
	case len(trim) == 0:
		return Invalid(ReasonNotJSON, "empty message")
	case trim[0] != '{' && trim[0] != '[':
		return Invalid(ReasonNotJSON, "the message does not start with a JSON object (first byte %q)", trim[0])
	case errors.As(err, &se) && se.Error() == "unexpected end of JSON input":
		return Invalid(ReasonTruncatedJSON, "%v", err)
	case errors.As(err, &te):
		return Invalid(ReasonMalformedJSON, "field %q: %v", te.Field, err)
	}
	return Invalid(ReasonMalformedJSON, "%v", err)
}

// Marshal encodes a wire value as JSON without HTML escaping (so text with
// <, > and & reads as it was sent) and without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
