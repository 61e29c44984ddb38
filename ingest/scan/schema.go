package scan

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// What the rules read of a tool's input schema, decoded once from the raw
// bytes. The scanner first decoded every schema with encoding/json into
// generic maps (map[string]any per object, an interface per value), walked
// them for texts and looked properties up: about half of a publication's
// allocations (bench/RESULTS.md §2). This decoder reads the same things in
// one pass over the bytes into flat, reused buffers, and gives the same
// answers, which TestSchemaViewMatchesMaps and FuzzSchemaViewMatchesMaps
// check against that map-based code (kept in schema_ref_test.go):
//   - a schema that encoding/json would not decode into an interface (not
//     valid JSON by its grammar and nesting limit, or a number outside
//     float64's range anywhere in it) has no texts and no parameters; the
//     decoder checks the grammar itself as it reads;
//   - object members are visited in sorted key order, a repeated key keeps
//     its last value (as decoding into a map does), keys and strings are
//     unescaped as encoding/json unescapes them (invalid UTF-8 and lone
//     surrogates become U+FFFD);
//   - texts, parameters and the depth and count bounds are schemaTexts' and
//     scanSchema's (below).

// schemaView is one decoded input schema.
type schemaView struct {
	texts  []string      // the strings schemaTexts collects, in its order
	params []schemaParam // the top-level object's properties whose names are command-like, by name
}

// schemaParam is one command-like property of the top-level object.
type schemaParam struct {
	name string
	// constrained: the value is an object whose "type" is a string other
	// than "string", or that has an "enum" or a "const" member: not a raw
	// command string.
	constrained bool
	desc        string // its "description" when that is a string
}

// Bounds of schemaTexts: objects and arrays deeper than maxSchemaDepth are
// not read, and none is entered once more than maxSchemaTexts are held.
const (
	maxSchemaDepth = 20
	maxSchemaTexts = 500
)

// jnode is a parsed JSON value: kind 'o' (object: members[a:b]), 'a' (array:
// elems[a:b]), 's' (string s), or 'x' (number, true, false, null).
type jnode struct {
	kind byte
	s    string
	a, b int32
}

type jmember struct {
	key string
	val int32 // node index
}

// schemaDecoder holds the buffers of one decoding; pooled.
type schemaDecoder struct {
	src     string
	pos     int
	nodes   []jnode
	members []jmember
	elems   []int32
	mstack  []jmember // members of the objects being parsed
	estack  []int32   // elements of the arrays being parsed
	view    schemaView
	depth   int // objects and arrays open
	bad     bool
}

var decoders = sync.Pool{New: func() any { return &schemaDecoder{} }}

// decodeSchemaView decodes raw into a view of its own.
func decodeSchemaView(raw json.RawMessage) schemaView {
	d := decoders.Get().(*schemaDecoder)
	defer d.release()
	v := d.decode(raw)
	return schemaView{texts: slices.Clone(v.texts), params: slices.Clone(v.params)}
}

// release drops the strings of the last decoding (a pooled decoder must
// not keep a schema alive) and returns d to the pool.
func (d *schemaDecoder) release() {
	clear(d.nodes)
	clear(d.members)
	clear(d.view.texts)
	clear(d.view.params)
	d.src = ""
	decoders.Put(d)
}

// decode decodes raw (no texts and parameters when there is no schema or it
// does not decode). The view's slices are d's buffers: valid until the next
// decode.
func (d *schemaDecoder) decode(raw json.RawMessage) schemaView {
	d.view.texts, d.view.params = d.view.texts[:0], d.view.params[:0]
	if !hasSchema(raw) {
		return schemaView{}
	}
	// One string for the whole schema: texts and keys without escapes are
	// slices of it.
	d.src, d.pos, d.bad = string(raw), 0, false
	d.nodes, d.members, d.elems, d.mstack, d.estack = d.nodes[:0], d.members[:0], d.elems[:0], d.mstack[:0], d.estack[:0]
	d.depth = 0
	root := d.value()
	if d.space(); d.pos != len(d.src) { // only white space after the value
		d.bad = true
	}
	if d.bad {
		return schemaView{}
	}
	d.walk(&d.view.texts, root, 0)
	if n := d.nodes[root]; n.kind == 'o' {
		for _, m := range d.members[n.a:n.b] {
			if m.key != "properties" {
				continue
			}
			if props := d.nodes[m.val]; props.kind == 'o' {
				for _, p := range d.members[props.a:props.b] {
					if commandLike(p.key) {
						d.view.params = append(d.view.params, d.param(p))
					}
				}
			}
		}
	}
	return d.view
}

// walk is schemaTexts' walk over the parsed value.
func (d *schemaDecoder) walk(out *[]string, i int32, depth int) {
	if depth > maxSchemaDepth || len(*out) > maxSchemaTexts {
		return
	}
	switch n := d.nodes[i]; n.kind {
	case 'o':
		for _, m := range d.members[n.a:n.b] {
			switch v := d.nodes[m.val]; v.kind {
			case 's':
				switch m.key {
				case "description", "title", "default", "const", "example":
					*out = append(*out, v.s)
				}
			default:
				d.walk(out, m.val, depth+1)
			}
		}
	case 'a':
		for _, e := range d.elems[n.a:n.b] {
			if v := d.nodes[e]; v.kind == 's' {
				*out = append(*out, v.s)
				continue
			}
			d.walk(out, e, depth+1)
		}
	}
}

func (d *schemaDecoder) param(p jmember) schemaParam {
	sp := schemaParam{name: p.key}
	n := d.nodes[p.val]
	if n.kind != 'o' {
		return sp
	}
	for _, m := range d.members[n.a:n.b] {
		v := d.nodes[m.val]
		switch m.key {
		case "type":
			sp.constrained = sp.constrained || (v.kind == 's' && v.s != "string")
		case "enum", "const":
			sp.constrained = true
		case "description":
			if v.kind == 's' {
				sp.desc = v.s
			}
		}
	}
	return sp
}

// commandLike is scanSchema's test of a property name: lower-cased, '-' as
// '_', with or without the underscores, one of commandParam. ASCII names
// are folded in a buffer; others take strings.ToLower (which maps e.g.
// U+0130 to 'i').
func commandLike(name string) bool {
	var buf, sq [32]byte
	if len(name) > len(buf) {
		return commandLikeSlow(name)
	}
	n, squeezed := 0, 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= utf8.RuneSelf:
			return commandLikeSlow(name)
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case c == '-':
			c = '_'
		}
		buf[n] = c
		n++
		if c != '_' {
			sq[squeezed] = c
			squeezed++
		}
	}
	return commandParam[string(buf[:n])] || commandParam[string(sq[:squeezed])]
}

func commandLikeSlow(name string) bool {
	norm := strings.ToLower(strings.ReplaceAll(name, "-", "_"))
	return commandParam[norm] || commandParam[strings.ReplaceAll(norm, "_", "")]
}

// maxJSONDepth is encoding/json's nesting limit: deeper input is not JSON
// to it.
const maxJSONDepth = 10000

// value parses the value at d.pos and returns its node, checking the
// grammar as encoding/json's scanner does (json.Valid): anything it would
// refuse sets d.bad. It never panics on any input.
func (d *schemaDecoder) value() int32 {
	d.space()
	if d.pos >= len(d.src) {
		d.bad = true
		return 0
	}
	idx := int32(len(d.nodes))
	switch c := d.src[d.pos]; {
	case c == '{':
		if d.depth++; d.depth > maxJSONDepth {
			d.bad = true
			return 0
		}
		d.nodes = append(d.nodes, jnode{kind: 'o'})
		d.pos++
		base := len(d.mstack)
		d.space()
		if d.peek('}') {
			d.pos++
		} else {
			for !d.bad {
				d.space()
				key, ok := d.str()
				if !ok {
					d.bad = true
					break
				}
				d.space()
				if !d.peek(':') {
					d.bad = true
					break
				}
				d.pos++
				v := d.value()
				d.mstack = append(d.mstack, jmember{key, v})
				d.space()
				if d.peek(',') {
					d.pos++
					continue
				}
				if d.peek('}') {
					d.pos++
					break
				}
				d.bad = true
			}
		}
		d.depth--
		ms := d.mstack[base:]
		// Sorted by key; of a repeated key the last (a map keeps it).
		slices.SortStableFunc(ms, func(a, b jmember) int { return strings.Compare(a.key, b.key) })
		a := int32(len(d.members))
		for k, m := range ms {
			if k+1 < len(ms) && ms[k+1].key == m.key {
				continue
			}
			d.members = append(d.members, m)
		}
		d.mstack = d.mstack[:base]
		d.nodes[idx].a, d.nodes[idx].b = a, int32(len(d.members))
	case c == '[':
		if d.depth++; d.depth > maxJSONDepth {
			d.bad = true
			return 0
		}
		d.nodes = append(d.nodes, jnode{kind: 'a'})
		d.pos++
		base := len(d.estack)
		d.space()
		if d.peek(']') {
			d.pos++
		} else {
			for !d.bad {
				d.estack = append(d.estack, d.value())
				d.space()
				if d.peek(',') {
					d.pos++
					continue
				}
				if d.peek(']') {
					d.pos++
					break
				}
				d.bad = true
			}
		}
		d.depth--
		a := int32(len(d.elems))
		d.elems = append(d.elems, d.estack[base:]...)
		d.estack = d.estack[:base]
		d.nodes[idx].a, d.nodes[idx].b = a, int32(len(d.elems))
	case c == '"':
		s, ok := d.str()
		d.bad = d.bad || !ok
		d.nodes = append(d.nodes, jnode{kind: 's', s: s})
	case c == 't':
		d.literal("true")
		d.nodes = append(d.nodes, jnode{kind: 'x'})
	case c == 'f':
		d.literal("false")
		d.nodes = append(d.nodes, jnode{kind: 'x'})
	case c == 'n':
		d.literal("null")
		d.nodes = append(d.nodes, jnode{kind: 'x'})
	default:
		d.number()
		d.nodes = append(d.nodes, jnode{kind: 'x'})
	}
	return idx
}

func (d *schemaDecoder) literal(lit string) {
	if strings.HasPrefix(d.src[d.pos:], lit) {
		d.pos += len(lit)
		return
	}
	d.bad = true
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?; decoding it
// into an interface also fails outside float64's range.
func (d *schemaDecoder) number() {
	start := d.pos
	digits := func() int {
		n := 0
		for d.pos < len(d.src) && '0' <= d.src[d.pos] && d.src[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	if d.peek('-') {
		d.pos++
	}
	switch {
	case d.peek('0'):
		d.pos++
	case digits() == 0:
		d.bad = true
		return
	}
	if d.peek('.') {
		d.pos++
		if digits() == 0 {
			d.bad = true
			return
		}
	}
	if d.peek('e') || d.peek('E') {
		d.pos++
		if d.peek('+') || d.peek('-') {
			d.pos++
		}
		if digits() == 0 {
			d.bad = true
			return
		}
	}
	if _, err := strconv.ParseFloat(d.src[start:d.pos], 64); err != nil {
		d.bad = true
	}
}

func (d *schemaDecoder) space() {
	for d.pos < len(d.src) {
		switch d.src[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *schemaDecoder) peek(c byte) bool { return d.pos < len(d.src) && d.src[d.pos] == c }

// str reads a string token at d.pos, checked as encoding/json checks it (no
// control character, only its escapes) and unescaped as it unescapes: a
// slice of the source when it has no escape and is valid UTF-8, else
// decoded by encoding/json itself (rare).
func (d *schemaDecoder) str() (string, bool) {
	if !d.peek('"') {
		return "", false
	}
	start := d.pos
	escaped := false
	for i := start + 1; i < len(d.src); {
		switch c := d.src[i]; {
		case c == '"':
			d.pos = i + 1
			body := d.src[start+1 : i]
			if !escaped && utf8.ValidString(body) {
				return body, true
			}
			var s string
			if json.Unmarshal([]byte(d.src[start:d.pos]), &s) != nil {
				return "", false
			}
			return s, true
		case c == '\\':
			escaped = true
			if i+1 >= len(d.src) {
				return "", false
			}
			switch d.src[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(d.src) {
					return "", false
				}
				for _, h := range []byte(d.src[i+2 : i+6]) {
					if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
						return "", false
					}
				}
				i += 6
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		default:
			i++
		}
	}
	return "", false
}

// hasSchema: the tool has an input schema (not absent, empty or null).
func hasSchema(s json.RawMessage) bool {
	t := bytes.TrimSpace(s)
	return len(t) != 0 && string(t) != "null"
}
