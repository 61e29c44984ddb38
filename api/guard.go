package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	unicodeutf8 "unicode/utf8" // utf8 is export.go's Arrow field helper

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"
)

// What the API reads of a request before any route sees it. Every route's
// path and query parameters are far shorter (names at most 200 bytes,
// cursors 400, search queries 256, evidence ids 400, each at most tripled
// by percent-encoding), so these bounds only refuse what no route accepts.
const (
	MaxPathBytes  = 2048    // the path as sent (percent-encoded)
	MaxQueryBytes = 4096    // the query string as sent
	MaxBodyBytes  = 1 << 20 // a request body
)

// What an error answer quotes of its input, at most (boundErrors).
const (
	MaxQuotedBytes  = 256 // of one error's value, message or location
	MaxDetailBytes  = 512 // of the detail
	MaxErrorDetails = 20  // errors listed; the rest are counted
)

// withLimits bounds what a caller can send and refuses, before any route
// reads it, a request whose path or query is too long (414), not valid
// UTF-8 once decoded, holds a NUL byte, or has a malformed escape (400):
// no store is asked about a name it cannot hold (DuckDB refuses to bind
// invalid UTF-8, which answered 500 and logged an error), and every route
// is covered at once. The answer is a problem document like Huma's own.
// A malformed call routed to an admin operation is audited (aud).
func withLimits(api huma.API, mux *http.ServeMux, aud *adminAuditor) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := checkRequest(r); p != nil {
			hc := humago.NewContext(&huma.Operation{}, r, w)
			_ = huma.WriteErr(api, hc, p.status, p.detail, p.errs...)
			if _, pattern := mux.Handler(r); pattern != "" && aud != nil {
				aud.malformed(r, pattern, p.status)
			}
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		mux.ServeHTTP(w, r)
	})
}

type problem struct {
	status int
	detail string
	errs   []error
}

func badRequest(detail, location, message, value string) *problem {
	return &problem{status: http.StatusBadRequest, detail: detail,
		errs: []error{&huma.ErrorDetail{Location: location, Message: message, Value: value}}}
}

// checkRequest returns what is wrong with r's path or query, or nil.
func checkRequest(r *http.Request) *problem {
	path := r.URL.EscapedPath()
	if n := len(path); n > MaxPathBytes {
		return &problem{status: http.StatusRequestURITooLong, detail: fmt.Sprintf("the path is %d bytes; at most %d are read", n, MaxPathBytes),
			errs: []error{&huma.ErrorDetail{Location: "path", Message: fmt.Sprintf("%d bytes, over %d", n, MaxPathBytes)}}}
	}
	if n := len(r.URL.RawQuery); n > MaxQueryBytes {
		return &problem{status: http.StatusRequestURITooLong, detail: fmt.Sprintf("the query string is %d bytes; at most %d are read", n, MaxQueryBytes),
			errs: []error{&huma.ErrorDetail{Location: "query", Message: fmt.Sprintf("%d bytes, over %d", n, MaxQueryBytes)}}}
	}
	if why := badText(r.URL.Path); why != "" {
		return badRequest("the path "+why+" once decoded; names are UTF-8 and URL-encoded (io.github.owner%2Frepo)", "path", why, path)
	}
	if r.URL.RawQuery == "" {
		return nil
	}
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return badRequest("the query string is malformed: "+err.Error(), "query", err.Error(), "")
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if why := badText(k); why != "" {
			return badRequest("a query parameter name "+why+" once decoded", "query", "a parameter name "+why, url.QueryEscape(k))
		}
		for _, v := range q[k] {
			if why := badText(v); why != "" {
				return badRequest(fmt.Sprintf("query parameter %q %s once decoded", k, why), "query."+k, why, url.QueryEscape(v))
			}
		}
	}
	return nil
}

// badText says what makes s unusable as a path or parameter: invalid UTF-8
// or a NUL byte; "" when it is fine.
func badText(s string) string {
	if !unicodeutf8.ValidString(s) {
		for i := 0; i < len(s); {
			r, n := unicodeutf8.DecodeRuneInString(s[i:])
			if r == unicodeutf8.RuneError && n <= 1 {
				return fmt.Sprintf("is not valid UTF-8 (at byte %d)", i)
			}
			i += n
		}
	}
	if i := strings.IndexByte(s, 0); i >= 0 {
		return fmt.Sprintf("holds a NUL byte (at byte %d)", i)
	}
	return ""
}

// boundErrors is a Huma transformer: every error answer quotes at most
// MaxQuotedBytes of each value, message and location, MaxDetailBytes of the
// detail and MaxErrorDetails errors, each cut on a rune boundary with the
// full length noted. Without it a 60 KB field came back whole in
// errors[].value, once per error: 240 KB of unknown properties were
// answered with 480 MB. Runs before the schema-link transformer, which
// rewraps the error model.
func boundErrors(_ huma.Context, _ string, v any) (any, error) {
	em, ok := v.(*huma.ErrorModel)
	if !ok || em == nil {
		return v, nil
	}
	out := *em
	out.Detail = cutNoted(em.Detail, MaxDetailBytes)
	if em.Errors == nil {
		return &out, nil
	}
	n := min(len(em.Errors), MaxErrorDetails)
	out.Errors = make([]*huma.ErrorDetail, 0, n+1)
	memo := map[uintptr][]byte{} // the JSON of a value shared by many errors (the whole body), made once
	for _, e := range em.Errors[:n] {
		if e == nil {
			continue
		}
		d := &huma.ErrorDetail{Message: cutNoted(e.Message, MaxQuotedBytes), Location: cutNoted(e.Location, MaxQuotedBytes)}
		var note string
		d.Value, note = boundValue(e.Value, memo)
		d.Message += note
		out.Errors = append(out.Errors, d)
	}
	if more := len(em.Errors) - n; more > 0 {
		out.Errors = append(out.Errors, &huma.ErrorDetail{Message: fmt.Sprintf("%d more errors not shown (%d in all)", more, len(em.Errors))})
	}
	return &out, nil
}

// boundValue returns v, or the first MaxQuotedBytes of it (of its JSON for
// anything but a string) with a note of its full length.
func boundValue(v any, memo map[uintptr][]byte) (any, string) {
	switch x := v.(type) {
	case nil, bool, float64, int, int64:
		return v, ""
	case string:
		if len(x) <= MaxQuotedBytes {
			return x, ""
		}
		c := cutUTF8(x, MaxQuotedBytes)
		return c + "…", fmt.Sprintf(" (value: the first %d of %d bytes)", len(c), len(x))
	}
	var key uintptr
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Map || rv.Kind() == reflect.Slice || rv.Kind() == reflect.Pointer {
		key = rv.Pointer()
	}
	var j []byte
	if key != 0 {
		j = memo[key]
	}
	if j == nil {
		var err error
		if j, err = json.Marshal(v); err != nil {
			return nil, " (value omitted)"
		}
		if key != 0 {
			memo[key] = j
		}
	}
	if len(j) <= MaxQuotedBytes {
		return v, ""
	}
	c := cutUTF8(string(j), MaxQuotedBytes)
	return c + "…", fmt.Sprintf(" (value: the first %d of %d bytes of its JSON)", len(c), len(j))
}

// cutNoted is s, or its first n bytes (on a rune boundary) and its length.
func cutNoted(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + fmt.Sprintf("… (%d bytes in all)", len(s))
}

// cutUTF8 is the longest prefix of s of at most n bytes that does not end
// inside a rune.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !unicodeutf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
