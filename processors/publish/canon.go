package publish

// The canonical encoder: RFC 8785 JSON written straight from Go values.
//
// Why hand-written when github.com/gowebpki/jcs exists: jcs canonicalizes
// JSON *text*, so the first version marshalled every record with
// encoding/json, decoded it into a map, re-marshalled it, ran jcs, then did
// it all again to add content_sha256 — most of a 50k publication's sealing
// time and a quarter of a billion allocations (bench/RESULTS.md §2). This
// encoder writes the canonical bytes once, from the value, and is correct by
// construction for the value kinds it accepts; it refuses everything else
// (errFallback) and the caller takes the jcs path, so the output never
// depends on which path ran:
//   - what is encoded is what encoding/json would encode: exported fields,
//     json tag names (invalid names fall back to the Go name, as in
//     encoding/json), omitempty, "-", untagged embedded structs flattened;
//     a type with a custom marshaller (other than time.Time), json.Number,
//     a ",string" or ",omitzero" option, []byte, float32, a non-string map
//     key, an embedded pointer or two fields with one JSON name are refused;
//   - object members are sorted by their names' UTF-16 code units (RFC 8785
//     §3.2.3), struct fields once per type, map keys per value;
//   - strings: only '"', '\\' and U+0000–U+001F are escaped (\b \t \n \f \r,
//     otherwise \u00xx); '<', '>', '&', U+2028 and U+2029 are written as
//     they are (encoding/json escapes them, jcs unescapes them); each
//     invalid UTF-8 byte becomes U+FFFD, as encoding/json makes it;
//   - numbers: ES6 Number.prototype.toString of the float64 (jcs's
//     NumberToJSON, "-0" is "0"); integers print exactly up to 2^53 and as
//     the float64 jcs would parse them beyond; NaN and ±Inf are errors;
//   - time.Time is its MarshalJSON text (RFC 3339 with nanoseconds), with
//     MarshalJSON's range checks.
//
// TestCanonicalMatchesJCS and FuzzCanonicalMatchesJCS (here) and
// scorer's TestCanonicalEncoderOnRecords compare it with
// jcs.Transform(json.Marshal(v)), the latter on every record of the real
// snapshot's golden publication.

import (
	"encoding"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// errFallback: the value (or its type) is outside what the canonical encoder
// proves equal to jcs; use the generic path.
var errFallback = errors.New("publish: value needs the generic canonicalizer")

type encFunc func(e *encState, v reflect.Value) error

type encState struct {
	buf []byte
	// hashAt is where the skipped top-level member (HashField) would go in
	// buf, -1 until the encoder meets its place.
	hashAt int
}

// typeEnc is a cached encoder: enc reads a reflect.Value, penc the value
// at an address (no reflect.Value per field: what Seal runs on records).
// Both write the same bytes and refuse the same types.
type typeEnc struct {
	enc  encFunc
	penc ptrEncFunc
}

// ptrEncFunc encodes the value of its type at p.
type ptrEncFunc func(e *encState, p unsafe.Pointer) error

var (
	encMu    sync.Mutex
	encCache sync.Map // reflect.Type → *typeEnc
)

var (
	timeType      = reflect.TypeFor[time.Time]()
	numberType    = reflect.TypeFor[json.Number]()
	marshalerType = reflect.TypeFor[json.Marshaler]()
	textMarshType = reflect.TypeFor[encoding.TextMarshaler]()
)

func encoderOf(t reflect.Type) *typeEnc {
	if te, ok := encCache.Load(t); ok {
		return te.(*typeEnc)
	}
	encMu.Lock()
	defer encMu.Unlock()
	building := map[reflect.Type]*typeEnc{}
	te := buildEnc(t, building)
	for bt, be := range building {
		encCache.Store(bt, be)
	}
	return te
}

func refuse(*encState, reflect.Value) error { return errFallback }

func refusePtr(*encState, unsafe.Pointer) error { return errFallback }

// buildEnc builds the encoder of t. building holds the types being built, so
// a recursive type refers to its own (still filling) entry.
func buildEnc(t reflect.Type, building map[reflect.Type]*typeEnc) *typeEnc {
	if te, ok := encCache.Load(t); ok {
		return te.(*typeEnc)
	}
	if te, ok := building[t]; ok {
		return te
	}
	te := &typeEnc{}
	building[t] = te
	te.enc, te.penc = makeEnc(t, building)
	return te
}

func makeEnc(t reflect.Type, building map[reflect.Type]*typeEnc) (encFunc, ptrEncFunc) {
	if t == timeType {
		return encTime, func(e *encState, p unsafe.Pointer) error { return appendTime(e, *(*time.Time)(p)) }
	}
	if t == numberType {
		return refuse, refusePtr // encoding/json writes a json.Number as a bare number
	}
	if t.Kind() != reflect.Pointer && (t.Implements(marshalerType) || t.Implements(textMarshType) ||
		reflect.PointerTo(t).Implements(marshalerType) || reflect.PointerTo(t).Implements(textMarshType)) {
		return refuse, refusePtr
	}
	if t.Kind() == reflect.Pointer && (t.Implements(marshalerType) || t.Implements(textMarshType)) && t.Elem() != timeType {
		return refuse, refusePtr
	}
	switch t.Kind() {
	case reflect.Bool:
		return func(e *encState, v reflect.Value) error {
				e.buf = appendBool(e.buf, v.Bool())
				return nil
			}, func(e *encState, p unsafe.Pointer) error {
				e.buf = appendBool(e.buf, *(*bool)(p))
				return nil
			}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		var load func(unsafe.Pointer) int64
		switch t.Size() {
		case 1:
			load = func(p unsafe.Pointer) int64 { return int64(*(*int8)(p)) }
		case 2:
			load = func(p unsafe.Pointer) int64 { return int64(*(*int16)(p)) }
		case 4:
			load = func(p unsafe.Pointer) int64 { return int64(*(*int32)(p)) }
		default:
			load = func(p unsafe.Pointer) int64 { return *(*int64)(p) }
		}
		return func(e *encState, v reflect.Value) error {
				e.buf = appendInt(e.buf, v.Int())
				return nil
			}, func(e *encState, p unsafe.Pointer) error {
				e.buf = appendInt(e.buf, load(p))
				return nil
			}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		var load func(unsafe.Pointer) uint64
		switch t.Size() {
		case 1:
			load = func(p unsafe.Pointer) uint64 { return uint64(*(*uint8)(p)) }
		case 2:
			load = func(p unsafe.Pointer) uint64 { return uint64(*(*uint16)(p)) }
		case 4:
			load = func(p unsafe.Pointer) uint64 { return uint64(*(*uint32)(p)) }
		default:
			load = func(p unsafe.Pointer) uint64 { return *(*uint64)(p) }
		}
		return func(e *encState, v reflect.Value) error {
				e.buf = appendUint(e.buf, v.Uint())
				return nil
			}, func(e *encState, p unsafe.Pointer) error {
				e.buf = appendUint(e.buf, load(p))
				return nil
			}
	case reflect.Float64:
		return func(e *encState, v reflect.Value) error { return appendFloat(e, v.Float()) },
			func(e *encState, p unsafe.Pointer) error { return appendFloat(e, *(*float64)(p)) }
	case reflect.String:
		return func(e *encState, v reflect.Value) error {
				e.buf = appendString(e.buf, v.String())
				return nil
			}, func(e *encState, p unsafe.Pointer) error {
				e.buf = appendString(e.buf, *(*string)(p))
				return nil
			}
	case reflect.Interface:
		enc := func(e *encState, v reflect.Value) error {
			if v.IsNil() {
				e.buf = append(e.buf, "null"...)
				return nil
			}
			el := v.Elem()
			return encoderOf(el.Type()).enc(e, el)
		}
		return enc, func(e *encState, p unsafe.Pointer) error { return enc(e, reflect.NewAt(t, p).Elem()) }
	case reflect.Pointer:
		el := buildEnc(t.Elem(), building)
		return func(e *encState, v reflect.Value) error {
				if v.IsNil() {
					e.buf = append(e.buf, "null"...)
					return nil
				}
				return el.enc(e, v.Elem())
			}, func(e *encState, p unsafe.Pointer) error {
				q := *(*unsafe.Pointer)(p)
				if q == nil {
					e.buf = append(e.buf, "null"...)
					return nil
				}
				return el.penc(e, q)
			}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return refuse, refusePtr // []byte is base64 in encoding/json
		}
		el := buildEnc(t.Elem(), building)
		isSlice := t.Kind() == reflect.Slice
		size := t.Elem().Size()
		enc := func(e *encState, v reflect.Value) error {
			if isSlice && v.IsNil() {
				e.buf = append(e.buf, "null"...)
				return nil
			}
			e.buf = append(e.buf, '[')
			for i := range v.Len() {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				if err := el.enc(e, v.Index(i)); err != nil {
					return err
				}
			}
			e.buf = append(e.buf, ']')
			return nil
		}
		arrayLen := 0
		if !isSlice {
			arrayLen = t.Len()
		}
		return enc, func(e *encState, p unsafe.Pointer) error {
			data, n := p, arrayLen
			if isSlice {
				sh := (*sliceHeader)(p)
				if sh.data == nil {
					e.buf = append(e.buf, "null"...)
					return nil
				}
				data, n = sh.data, sh.len
			}
			e.buf = append(e.buf, '[')
			for i := range n {
				if i > 0 {
					e.buf = append(e.buf, ',')
				}
				if err := el.penc(e, unsafe.Add(data, uintptr(i)*size)); err != nil {
					return err
				}
			}
			e.buf = append(e.buf, ']')
			return nil
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return refuse, refusePtr
		}
		el := buildEnc(t.Elem(), building)
		return func(e *encState, v reflect.Value) error { return encMap(e, v, el, "") },
			func(e *encState, p unsafe.Pointer) error { return encMap(e, reflect.NewAt(t, p).Elem(), el, "") }
	case reflect.Struct:
		return structEnc(t, building)
	}
	return refuse, refusePtr
}

// sliceHeader is the layout of a slice value.
type sliceHeader struct {
	data     unsafe.Pointer
	len, cap int
}

func appendBool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

func appendInt(b []byte, n int64) []byte {
	if n >= -(1<<53) && n <= 1<<53 {
		return strconv.AppendInt(b, n, 10)
	}
	return appendES6(b, float64(n))
}

func appendUint(b []byte, n uint64) []byte {
	if n <= 1<<53 {
		return strconv.AppendUint(b, n, 10)
	}
	return appendES6(b, float64(n))
}

func appendFloat(e *encState, f float64) error {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return errFallback
	}
	e.buf = appendES6(e.buf, f)
	return nil
}

type field struct {
	name      string
	key       []byte // "name":
	index     []int
	offset    uintptr // from the outermost struct (embedded structs are values: offsets add up)
	omitEmpty bool
	enc       *typeEnc
	typ       reflect.Type
	str       bool // a string kind: written inline (the common case)
}

// structFields lists t's JSON fields sorted by UTF-16 name, or ok=false when
// the struct is outside the encoder's rules.
func structFields(t reflect.Type, building map[reflect.Type]*typeEnc) (fs []field, ok bool) {
	names := map[string]bool{}
	var walk func(t reflect.Type, prefix []int, base uintptr) bool
	walk = func(t reflect.Type, prefix []int, base uintptr) bool {
		for i := range t.NumField() {
			sf := t.Field(i)
			index := append(slices.Clip(prefix), i)
			offset := base + sf.Offset
			tag := sf.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if sf.Anonymous {
				switch {
				case sf.Type.Kind() == reflect.Pointer:
					return false // embedded pointer: encoding/json's nil handling is not reproduced
				case name == "" && sf.Type.Kind() == reflect.Struct:
					if !walk(sf.Type, index, offset) {
						return false
					}
					continue
				case !sf.IsExported() && sf.Type.Kind() != reflect.Struct:
					continue
				}
			} else if !sf.IsExported() {
				continue
			}
			for o := range strings.SplitSeq(opts, ",") {
				switch o {
				case "string", "omitzero":
					return false
				}
			}
			if !isValidTag(name) {
				name = sf.Name
			}
			if names[name] {
				return false // encoding/json's dominance rules are not reproduced
			}
			names[name] = true
			f := field{name: name, index: index, offset: offset, omitEmpty: strings.Contains(","+opts+",", ",omitempty,"), enc: buildEnc(sf.Type, building),
				typ: sf.Type, str: sf.Type.Kind() == reflect.String}
			f.key = append(appendString(nil, name), ':')
			fs = append(fs, f)
		}
		return true
	}
	if !walk(t, nil, 0) {
		return nil, false
	}
	slices.SortFunc(fs, func(a, b field) int { return compareUTF16(a.name, b.name) })
	return fs, true
}

// structPlans caches each struct type's sorted fields (nil: refused).
var structPlans sync.Map // reflect.Type → []field

func structPlan(t reflect.Type) ([]field, bool) {
	if p, ok := structPlans.Load(t); ok {
		fs := p.([]field)
		return fs, fs != nil
	}
	encoderOf(t) // builds (and caches) the plan
	p, _ := structPlans.Load(t)
	fs, _ := p.([]field)
	return fs, fs != nil
}

func structEnc(t reflect.Type, building map[reflect.Type]*typeEnc) (encFunc, ptrEncFunc) {
	fs, ok := structFields(t, building)
	if !ok {
		structPlans.Store(t, []field(nil))
		return refuse, refusePtr
	}
	if fs == nil {
		fs = []field{}
	}
	structPlans.Store(t, fs)
	return func(e *encState, v reflect.Value) error { return encStruct(e, v, fs, "") },
		func(e *encState, p unsafe.Pointer) error { return encStructAt(e, p, fs, "") }
}

// encStructAt is encStruct on the struct at p.
func encStructAt(e *encState, p unsafe.Pointer, fs []field, skip string) error {
	e.buf = append(e.buf, '{')
	first := true
	for i := range fs {
		f := &fs[i]
		if skip != "" && f.name == skip {
			e.hashAt = len(e.buf) // where the skipped member goes (fields are in canonical order)
			continue
		}
		fp := unsafe.Add(p, f.offset)
		if f.str {
			sv := *(*string)(fp)
			if f.omitEmpty && sv == "" {
				continue
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			e.buf = append(e.buf, f.key...)
			e.buf = appendString(e.buf, sv)
			continue
		}
		if f.omitEmpty && isEmptyAt(f.typ, fp) {
			continue
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = append(e.buf, f.key...)
		if err := f.enc.penc(e, fp); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// isEmptyAt is isEmpty for the value of type t at p.
func isEmptyAt(t reflect.Type, p unsafe.Pointer) bool {
	switch t.Kind() {
	case reflect.Slice:
		return (*sliceHeader)(p).len == 0
	case reflect.String:
		return len(*(*string)(p)) == 0
	case reflect.Pointer:
		return *(*unsafe.Pointer)(p) == nil
	case reflect.Bool:
		return !*(*bool)(p)
	case reflect.Float64:
		return *(*float64)(p) == 0
	}
	return isEmpty(reflect.NewAt(t, p).Elem()) // maps, arrays, other numbers, interfaces
}

// encStruct writes v's fields in order, leaving out skip (a top-level field
// name, "" for none).
func encStruct(e *encState, v reflect.Value, fs []field, skip string) error {
	e.buf = append(e.buf, '{')
	first := true
	for i := range fs {
		f := &fs[i]
		if skip != "" && f.name == skip {
			e.hashAt = len(e.buf) // where the skipped member goes (fields are in canonical order)
			continue
		}
		fv := v
		if len(f.index) == 1 {
			fv = v.Field(f.index[0])
		} else {
			fv = v.FieldByIndex(f.index)
		}
		if f.str {
			sv := fv.String()
			if f.omitEmpty && sv == "" {
				continue
			}
			if !first {
				e.buf = append(e.buf, ',')
			}
			first = false
			e.buf = append(e.buf, f.key...)
			e.buf = appendString(e.buf, sv)
			continue
		}
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		if !first {
			e.buf = append(e.buf, ',')
		}
		first = false
		e.buf = append(e.buf, f.key...)
		if err := f.enc.enc(e, fv); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func encMap(e *encState, v reflect.Value, el *typeEnc, skip string) error {
	if v.IsNil() {
		e.buf = append(e.buf, "null"...)
		return nil
	}
	// The record's own map types, without reflection (same output).
	var iface any
	if v.CanInterface() {
		iface = v.Interface()
	}
	switch m := iface.(type) {
	case map[string]float64:
		return encMapTyped(e, m, skip, func(e *encState, f float64) error {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return errFallback
			}
			e.buf = appendES6(e.buf, f)
			return nil
		})
	case map[string]any:
		return encMapTyped(e, m, skip, func(e *encState, x any) error {
			if x == nil {
				e.buf = append(e.buf, "null"...)
				return nil
			}
			xv := reflect.ValueOf(x)
			te := encoderOf(xv.Type())
			if te.enc == nil {
				return errFallback
			}
			return te.enc(e, xv)
		})
	case map[string]int:
		return encMapTyped(e, m, skip, func(e *encState, n int) error {
			if n >= -(1<<53) && n <= 1<<53 {
				e.buf = strconv.AppendInt(e.buf, int64(n), 10)
			} else {
				e.buf = appendES6(e.buf, float64(n))
			}
			return nil
		})
	}
	keys := make([]string, 0, v.Len())
	it := v.MapRange()
	for it.Next() {
		k := it.Key().String()
		if !utf8.ValidString(k) {
			return errFallback // two keys could collapse into one U+FFFD key
		}
		if skip != "" && k == skip {
			continue
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, k)
		e.buf = append(e.buf, ':')
		kv := reflect.ValueOf(k).Convert(v.Type().Key())
		if err := el.enc(e, v.MapIndex(kv)); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func encMapTyped[V any](e *encState, m map[string]V, skip string, enc func(*encState, V) error) error {
	var small [16]string
	keys := small[:0]
	for k := range m {
		if !utf8.ValidString(k) {
			return errFallback
		}
		if skip != "" && k == skip {
			continue
		}
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendString(e.buf, k)
		e.buf = append(e.buf, ':')
		if err := enc(e, m[k]); err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

func encTime(e *encState, v reflect.Value) error {
	var t time.Time
	if v.CanAddr() {
		t = *(*time.Time)(v.Addr().UnsafePointer()) // no interface boxing
	} else if v.CanInterface() {
		t = v.Interface().(time.Time)
	} else {
		return errFallback
	}
	return appendTime(e, t)
}

func appendTime(e *encState, t time.Time) error {
	n0 := len(e.buf) + 1
	e.buf = append(e.buf, '"')
	e.buf = t.AppendFormat(e.buf, time.RFC3339Nano)
	// time.Time.MarshalJSON's checks (appendStrictRFC3339).
	b := e.buf
	switch {
	case b[n0+len("9999")] != '-':
		return errFallback
	case b[len(b)-1] != 'Z':
		c := b[len(b)-len("Z07:00")]
		if ('0' <= c && c <= '9') || 10*(b[len(b)-5]-'0')+(b[len(b)-4]-'0') >= 24 {
			return errFallback
		}
	}
	e.buf = append(e.buf, '"')
	return nil
}

// appendES6 is jcs.NumberToJSON without the string allocations: ES6
// Number.prototype.toString for a finite float64.
func appendES6(b []byte, f float64) []byte {
	if f == 0 { // 0 and -0
		return append(b, '0')
	}
	// Integral values below 2^53 (most of a record's points and scores):
	// their shortest decimal form is the integer's, without formatting the
	// float.
	if f >= -(1<<53) && f <= 1<<53 {
		if n := int64(f); float64(n) == f {
			return strconv.AppendInt(b, n, 10)
		}
	}
	if f < 0 {
		b = append(b, '-')
		f = -f
	}
	format := byte('e')
	if f < 1e21 && f >= 1e-6 {
		format = 'f'
	}
	start := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		for i := start; i < len(b); i++ {
			if b[i] == 'e' {
				if b[i+2] == '0' { // "1e+09" → "1e+9"
					b = append(b[:i+2], b[i+3:]...)
				}
				break
			}
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JCS string holds as they are.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString writes s as an RFC 8785 string (see the file comment).
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		// Eight bytes at a time while none needs a look: no control
		// character, '"', '\\' or byte >= 0x80.
		for i+8 <= len(s) && plain8(load64(s[i:i+8])) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, "\ufffd"...)
			i++
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plain8 reports whether the eight bytes of w are all plain ASCII (see
// plain): none below 0x20, none '"' or '\\', none >= 0x80 (the classic
// has-zero-byte tests, exact for bytes below 0x80).
func plain8(w uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(x uint64) uint64 { return (x - ones) & ^x & highs }
	return (w|hasZero(w^(ones*'"'))|hasZero(w^(ones*'\\'))|((w+ones*(0x80-0x20))&highs^highs))&highs == 0
}

// load64 is s's eight bytes as a little-endian word (the compiler merges
// the loads).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// compareUTF16 orders strings by their UTF-16 code units (RFC 8785 §3.2.3).
// UTF-8 byte order is code point order, which differs from UTF-16 order
// only between a supplementary character (a surrogate pair, 0xD800…) and a
// BMP character at or above U+E000.
func compareUTF16(a, b string) int {
	// Bytes below 0xEE (U+E000's lead byte) order the same in UTF-8 and
	// UTF-16; decode only from the first difference at or above it.
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	if i == n {
		return len(a) - len(b)
	}
	if a[i] < 0xEE && b[i] < 0xEE {
		return int(a[i]) - int(b[i])
	}
	for i > 0 && !utf8.RuneStart(a[i]) { // back to the start of the rune
		i--
	}
	a, b = a[i:], b[i:]
	for len(a) > 0 && len(b) > 0 {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return int(utf16First(ra)) - int(utf16First(rb)) + cmpSecond(ra, rb)
		}
		a, b = a[na:], b[nb:]
	}
	return len(a) - len(b)
}

func utf16First(r rune) uint16 {
	if r >= 0x10000 {
		h, _ := utf16.EncodeRune(r)
		return uint16(h)
	}
	return uint16(r)
}

// cmpSecond breaks a tie on the first UTF-16 unit (two supplementary
// characters with the same high surrogate) by the low surrogate; it is only
// non-zero when the first units are equal.
func cmpSecond(ra, rb rune) int {
	if utf16First(ra) != utf16First(rb) || ra < 0x10000 || rb < 0x10000 {
		return 0
	}
	_, la := utf16.EncodeRune(ra)
	_, lb := utf16.EncodeRune(rb)
	return int(la) - int(lb)
}

// isValidTag is encoding/json's rule for a usable tag name.
func isValidTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// appendCanonical appends the canonical JSON of v without its top-level
// HashField member and returns the server name, or errFallback when v is
// outside the encoder's rules (the caller then uses jcs).
func appendCanonical(dst []byte, v any) (out []byte, server string, err error) {
	out, server, _, err = appendCanonicalAt(dst, v)
	return out, server, err
}

// appendCanonicalAt is appendCanonical that also returns where in out the
// HashField member goes (-1: not known, for a map or a struct without that
// field).
func appendCanonicalAt(dst []byte, v any) (out []byte, server string, hashAt int, err error) {
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer || rv.Kind() == reflect.Interface {
		if rv.IsNil() {
			return dst, "", -1, errFallback
		}
		rv = rv.Elem()
	}
	e := encState{buf: dst, hashAt: -1}
	switch rv.Kind() {
	case reflect.Struct:
		fs, ok := structPlan(rv.Type())
		if !ok || encoderOf(rv.Type()).enc == nil {
			return dst, "", -1, errFallback
		}
		for i := range fs {
			if fs[i].name == ServerField {
				sv := rv.FieldByIndex(fs[i].index)
				if sv.Kind() != reflect.String {
					return dst, "", -1, errFallback
				}
				server = validUTF8(sv.String())
			}
		}
		var err error
		if rv.CanAddr() { // behind a pointer: fields read at their offsets
			err = encStructAt(&e, rv.Addr().UnsafePointer(), fs, HashField)
		} else {
			err = encStruct(&e, rv, fs, HashField)
		}
		if err != nil {
			return dst, "", -1, err
		}
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return dst, "", -1, errFallback
		}
		sv := rv.MapIndex(reflect.ValueOf(ServerField).Convert(rv.Type().Key()))
		if sv.IsValid() && sv.Kind() == reflect.Interface && !sv.IsNil() {
			sv = sv.Elem()
		}
		if !sv.IsValid() || sv.Kind() != reflect.String {
			return dst, "", -1, errFallback
		}
		server = validUTF8(sv.String())
		if err := encMap(&e, rv, encoderOf(rv.Type().Elem()), HashField); err != nil {
			return dst, "", -1, err
		}
	default:
		return dst, "", -1, errFallback
	}
	return e.buf, server, e.hashAt, nil
}

// validUTF8 replaces each invalid byte with U+FFFD, as encoding/json does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b.WriteString("\ufffd")
		} else {
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// EncodeCanonical is the canonical encoder alone, without the jcs fallback:
// it fails when the encoder refuses v. Tests use it to prove the encoder
// (not the fallback) handles a record type.
func EncodeCanonical(dst []byte, v any) (canon []byte, server string, err error) {
	return appendCanonical(dst, v)
}
