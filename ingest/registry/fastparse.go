package registry

// The fast entry parser: one pass over an entry's bytes that validates the
// JSON, decodes exactly the fields of schema.Entry, notes whether the server
// object needs compacting, and hashes it. It gives the same Entry as
// ParseEntry (the reference, kept as the spec by example) or it gives up
// ("bail") and the caller runs ParseEntry on the same bytes.
//
// Why hand-written, when goccy/go-json or encoding/json could decode it:
// ParseEntry's cost is not one decoder being slow but six passes per entry
// (UTF-8 check, decode into a map, _meta into maps, each meta value on its
// own, the server object into its struct, json.Compact) and ~100 allocations.
// A library decodes, but it does not also validate with encoding/json's exact
// rules, compact, and report where the server object lies in the same pass;
// and every library allocates one string per field. Here field strings are
// copied into a per-worker string arena, or share the previous entry's copy
// when they are the same (ownServer), slices and pointers come from small
// per-worker arenas, strings are scanned eight bytes at a time (specialMask),
// and anything the fast parser
// is not certain about — the legacy shape, escapes in keys, nulls, duplicate
// keys, keys that encoding/json would match case-insensitively, a wrong
// type, snake_case metadata, invalid UTF-8, odd timestamps — bails to
// ParseEntry. The equivalence is pinned by tests and a fuzz test
// (fastparse_test.go): same Entry, or both errors.

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash"
	"hash/maphash"
	"math/bits"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/forum-mcp/forum/schema"
)

// Parse outcomes.
const (
	stOK   = iota // done
	stBail        // not sure: let the reference decide (the value may still be valid)
	stMore        // ran off the end of the buffer: the value may continue
)

// maxFastDepth bounds nesting in the fast skipper. encoding/json allows
// 10,000; deeper input bails to the reference, which decides.
const maxFastDepth = 256

// entryParser parses entries out of one buffer. Not safe for concurrent use:
// one per worker.
type entryParser struct {
	b       []byte
	ws      bool // whitespace skipped since last reset (the server object then needs compacting)
	lenient bool // skipValue accepts invalid UTF-8 in strings, as encoding/json's scanner does

	h    hash.Hash
	hbuf []byte
	hsum []byte // reused: Sum into a local array would escape through the interface

	// scratch for slices being built (copied to the arenas when complete)
	pkgs []schema.Package
	rems []schema.Remote
	kvs  []schema.KeyValue

	// arenas: slices and pointers of many entries share a few allocations;
	// every slice handed out has its capacity cut to its length, so an
	// append by a consumer reallocates instead of writing into a neighbour.
	aPkg   []schema.Package
	aRem   []schema.Remote
	aKV    []schema.KeyValue
	aRepo  []schema.Repository
	aTrans []schema.Transport
	aBool  []bool
	aRaw   []byte
	// aStr holds the strings of many entries (their fields, their hashes). A strings.Builder only appends, so the
	// strings it has handed out never change, and it grows without zeroing
	// memory that is about to be written.
	aStr strings.Builder
	prev [nSlots]string // per field, the previous entry's copy (ownServer)

	// seed hashes names and keys for the serial duplicate check
	// (seen.go); nil: no hashes (FastParseEntry).
	seed *maphash.Seed
}

// arenaBlock is the size of one block of aStr and of aRaw: big enough that
// a 150 MB snapshot takes a few hundred allocations, not thousands (each
// a trip to the page heap), small beside what a read holds anyway.
const arenaBlock = 512 << 10

// keep returns a copy of b as a string from the string arena.
func (p *entryParser) keep(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if p.aStr.Cap()-p.aStr.Len() < len(b) {
		p.aStr = strings.Builder{}
		p.aStr.Grow(max(arenaBlock, len(b)))
	}
	k := p.aStr.Len()
	p.aStr.Write(b)
	return p.aStr.String()[k:]
}

func newEntryParser() *entryParser {
	return &entryParser{h: sha256.New(), hbuf: make([]byte, 0, 256)}
}

// FastParseEntry parses one registry entry like ParseEntry, through the
// fast parser when it can: the same Entry, or the same *RejectError.
// The crawler uses it for the entries of each page.
func FastParseEntry(raw []byte) (schema.Entry, error) {
	p := parserPool.Get().(*entryParser)
	defer parserPool.Put(p)
	e, err := p.parseRaw(raw)
	p.b = nil
	return e, err
}

var parserPool = sync.Pool{New: func() any { return newEntryParser() }}

// parseRaw parses one complete entry value (as ReadSnapshot's reference
// decoder would hand it to ParseEntry).
func (p *entryParser) parseRaw(raw []byte) (schema.Entry, error) {
	p.b = raw
	lo := skipWSb(raw, 0)
	hi := len(raw)
	for hi > lo && isWS(raw[hi-1]) {
		hi--
	}
	if hi-lo <= MaxEntryBytes {
		if e, end, st := p.entry(lo); st == stOK && end == hi {
			return e, nil
		}
	}
	return ParseEntry(raw)
}

func isWS(c byte) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

func skipWSb(b []byte, i int) int {
	for i < len(b) && isWS(b[i]) {
		i++
	}
	return i
}

func (p *entryParser) skipWS(i int) int {
	b := p.b
	j := i
	for j < len(b) && isWS(b[j]) {
		j++
	}
	if j != i {
		p.ws = true
	}
	return j
}

// alias returns b[lo:hi] as a string without copying. Only for strings that
// rebase moves onto the entry's own copy before the entry leaves the parser.
func (p *entryParser) alias(lo, hi int) string {
	if hi <= lo {
		return ""
	}
	return unsafe.String(&p.b[lo], hi-lo)
}

// str reads the string starting at b[i] == '"'. With no escapes, the value
// aliases the buffer (see alias); with escapes, encoding/json unquotes it.
func (p *entryParser) str(i int) (string, int, int) {
	b := p.b
	j := i + 1
	high := false
	for {
		// eight bytes at a time to the first '"', '\\', control byte or
		// non-ASCII byte
		for j+8 <= len(b) {
			if m := specialMask(binary.LittleEndian.Uint64(b[j : j+8])); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			return "", j, stMore
		}
		c := b[j]
		switch {
		case c == '"':
			if high && !utf8.Valid(b[i+1:j]) {
				return "", j, stBail
			}
			return p.alias(i+1, j), j + 1, stOK
		case c == '\\':
			return p.strEscaped(i)
		case c < 0x20:
			return "", j, stBail
		case c >= 0x80:
			high = true
		}
		j++
	}
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// specialMask has the high bit of each byte of x (little-endian) that is
// '"', '\\', < 0x20 or >= 0x80 set — exactly for the lowest such byte;
// above it a borrow may set more. So the mask is 0 when no byte is
// special, and its trailing zeros / 8 is the index of the first one.
func specialMask(x uint64) uint64 {
	q := x ^ (lsb * '"')
	s := x ^ (lsb * '\\')
	return ((q-lsb)&^q | (s-lsb)&^s | (x - lsb*0x20) | x) & msb
}

func (p *entryParser) strEscaped(i int) (string, int, int) {
	end, st := p.skipString(i)
	if st != stOK {
		return "", end, st
	}
	var s string
	if json.Unmarshal(p.b[i:end], &s) != nil {
		return "", end, stBail
	}
	return s, end, stOK
}

// skipString validates the string at b[i] == '"' (encoding/json's rules, and
// UTF-8 as ParseEntry requires) and returns its end.
func (p *entryParser) skipString(i int) (int, int) {
	b := p.b
	high := false
	for j := i + 1; ; {
		for j+8 <= len(b) {
			if m := specialMask(binary.LittleEndian.Uint64(b[j : j+8])); m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			return j, stMore
		}
		c := b[j]
		switch {
		case c == '"':
			if high && !p.lenient && !utf8.Valid(b[i+1:j]) {
				return j, stBail
			}
			return j + 1, stOK
		case c == '\\':
			if j+1 >= len(b) {
				return j, stMore
			}
			switch b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(b) {
					return j, stMore
				}
				for k := j + 2; k < j+6; k++ {
					if !isHex(b[k]) {
						return j, stBail
					}
				}
				j += 6
			default:
				return j, stBail
			}
			continue
		case c < 0x20:
			return j, stBail
		case c >= 0x80:
			high = true
		}
		j++
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// skipValue validates any JSON value at b[i] and returns its end. It accepts
// nothing encoding/json rejects; what it is unsure of is stBail.
func (p *entryParser) skipValue(i int, depth int) (int, int) {
	b := p.b
	if i >= len(b) {
		return i, stMore
	}
	switch c := b[i]; {
	case c == '"':
		return p.skipString(i)
	case c == '{':
		if depth >= maxFastDepth {
			return i, stBail
		}
		j := p.skipWS(i + 1)
		if j >= len(b) {
			return j, stMore
		}
		if b[j] == '}' {
			return j + 1, stOK
		}
		for {
			if j >= len(b) {
				return j, stMore
			}
			if b[j] != '"' {
				return j, stBail
			}
			var st int
			if j, st = p.skipString(j); st != stOK {
				return j, st
			}
			if j, st = p.colon(j); st != stOK {
				return j, st
			}
			if j, st = p.skipValue(j, depth+1); st != stOK {
				return j, st
			}
			var done bool
			if j, done, st = p.next(j, '}'); st != stOK || done {
				return j, st
			}
		}
	case c == '[':
		if depth >= maxFastDepth {
			return i, stBail
		}
		j := p.skipWS(i + 1)
		if j >= len(b) {
			return j, stMore
		}
		if b[j] == ']' {
			return j + 1, stOK
		}
		for {
			var st int
			if j, st = p.skipValue(j, depth+1); st != stOK {
				return j, st
			}
			var done bool
			if j, done, st = p.next(j, ']'); st != stOK || done {
				return j, st
			}
		}
	case c == 't':
		return p.literal(i, "true")
	case c == 'f':
		return p.literal(i, "false")
	case c == 'n':
		return p.literal(i, "null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number(i)
	default:
		return i, stBail
	}
}

func (p *entryParser) literal(i int, lit string) (int, int) {
	b := p.b
	if i+len(lit) > len(b) {
		if strings.HasPrefix(lit, string(b[i:])) {
			return len(b), stMore
		}
		return i, stBail
	}
	if string(b[i:i+len(lit)]) != lit {
		return i, stBail
	}
	return i + len(lit), stOK
}

// number validates JSON's number grammar. A number that reaches the end of
// the buffer may continue: stMore.
func (p *entryParser) number(i int) (int, int) {
	b := p.b
	j := i
	digits := func() int {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - k
	}
	if b[j] == '-' {
		j++
	}
	if j >= len(b) {
		return j, stMore
	}
	if b[j] == '0' {
		j++
	} else if digits() == 0 {
		return j, stBail
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			if j >= len(b) {
				return j, stMore
			}
			return j, stBail
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			if j >= len(b) {
				return j, stMore
			}
			return j, stBail
		}
	}
	if j >= len(b) {
		return j, stMore
	}
	return j, stOK
}

// colon skips whitespace, ':' and whitespace after an object key.
func (p *entryParser) colon(j int) (int, int) {
	b := p.b
	j = p.skipWS(j)
	if j >= len(b) {
		return j, stMore
	}
	if b[j] != ':' {
		return j, stBail
	}
	j = p.skipWS(j + 1)
	if j >= len(b) {
		return j, stMore
	}
	return j, stOK
}

// next moves past a member or element: whitespace, then ',' and whitespace
// (done false, j at the next member), or the closing byte (done true, j
// after it).
func (p *entryParser) next(j int, closing byte) (int, bool, int) {
	b := p.b
	j = p.skipWS(j)
	if j >= len(b) {
		return j, false, stMore
	}
	switch b[j] {
	case ',':
		j = p.skipWS(j + 1)
		if j >= len(b) {
			return j, false, stMore
		}
		return j, false, stOK
	case closing:
		return j + 1, true, stOK
	}
	return j, false, stBail
}

// key reads an object key at b[j] and the ':' after it. Keys with escapes or
// non-ASCII bytes bail: they could equal, or fold to, a known key.
func (p *entryParser) key(j int) (string, int, int) {
	b := p.b
	if j >= len(b) {
		return "", j, stMore
	}
	if b[j] != '"' {
		return "", j, stBail
	}
	k := j + 1
	for {
		for k+8 <= len(b) {
			if m := specialMask(binary.LittleEndian.Uint64(b[k : k+8])); m != 0 {
				k += bits.TrailingZeros64(m) >> 3
				break
			}
			k += 8
		}
		if k >= len(b) {
			return "", k, stMore
		}
		c := b[k]
		if c == '"' {
			break
		}
		if c == '\\' || c < 0x20 || c >= 0x80 {
			return "", k, stBail
		}
		k++
	}
	name := p.alias(j+1, k)
	k, st := p.colon(k + 1)
	return name, k, st
}

// strField reads a string member into *dst; anything but a string bails
// (null leaves a field as it is in encoding/json, a number is a type error).
func (p *entryParser) strField(j int, dst *string, seen *uint32, bit uint32) (int, int) {
	if *seen&bit != 0 {
		return j, stBail // duplicate key: encoding/json keeps the last
	}
	*seen |= bit
	if p.b[j] != '"' {
		return j, stBail
	}
	s, j, st := p.str(j)
	*dst = s
	return j, st
}

func (p *entryParser) boolPtr(j int, dst **bool, seen *uint32, bit uint32) (int, int) {
	if *seen&bit != 0 {
		return j, stBail
	}
	*seen |= bit
	var v bool
	var st int
	switch p.b[j] {
	case 't':
		j, st = p.literal(j, "true")
		v = true
	case 'f':
		j, st = p.literal(j, "false")
	default:
		return j, stBail
	}
	if st != stOK {
		return j, st
	}
	if len(p.aBool) == cap(p.aBool) {
		p.aBool = make([]bool, 0, 512)
	}
	p.aBool = append(p.aBool, v)
	*dst = &p.aBool[len(p.aBool)-1]
	return j, stOK
}

// unknown skips a member the struct does not have, unless encoding/json
// would match its name case-insensitively to one of fields.
func (p *entryParser) unknown(j int, key string, fields ...string) (int, int) {
	for _, f := range fields {
		if strings.EqualFold(key, f) {
			return j, stBail
		}
	}
	return p.skipValue(j, 1)
}

// object iterates the members of the object at b[j] == '{', calling member
// with each key and the index of its value; member returns the value's end.
func (p *entryParser) object(j int, member func(key string, j int) (int, int)) (int, int) {
	b := p.b
	j = p.skipWS(j + 1)
	if j >= len(b) {
		return j, stMore
	}
	if b[j] == '}' {
		return j + 1, stOK
	}
	for {
		key, k, st := p.key(j)
		if st != stOK {
			return k, st
		}
		if j, st = member(key, k); st != stOK {
			return j, st
		}
		var done bool
		if j, done, st = p.next(j, '}'); st != stOK || done {
			return j, st
		}
	}
}

// array iterates the elements of the array at b[j] == '['; each must be an
// object (null or another type bails).
func (p *entryParser) array(j int, elem func(j int) (int, int)) (int, int) {
	b := p.b
	j = p.skipWS(j + 1)
	if j >= len(b) {
		return j, stMore
	}
	if b[j] == ']' {
		return j + 1, stOK
	}
	for {
		if b[j] != '{' {
			return j, stBail
		}
		var st int
		if j, st = elem(j); st != stOK {
			return j, st
		}
		var done bool
		if j, done, st = p.next(j, ']'); st != stOK || done {
			return j, st
		}
	}
}

// entry parses the v0.1 entry object at b[i]. It returns the entry and the
// end of the object.
func (p *entryParser) entry(i int) (schema.Entry, int, int) {
	var e schema.Entry
	b := p.b
	if i >= len(b) {
		return e, i, stMore
	}
	if b[i] != '{' {
		return e, i, stBail
	}
	srvLo, srvHi := -1, -1
	var srvWS, haveMeta bool
	var meta officialRaw
	end, st := p.object(i, func(key string, j int) (int, int) {
		switch key {
		case "server":
			if srvLo >= 0 || p.b[j] != '{' {
				return j, stBail // a second "server", or the legacy shape
			}
			srvLo = j
			p.ws = false
			k, st := p.server(j, &e.Server)
			srvHi, srvWS = k, p.ws
			return k, st
		case "_meta":
			if haveMeta || p.b[j] != '{' {
				return j, stBail
			}
			haveMeta = true
			return p.meta(j, &meta)
		}
		return p.skipValue(j, 1)
	})
	if st != stOK {
		return e, end, st
	}
	if srvLo < 0 {
		return e, end, stBail // legacy flat shape
	}
	n := e.Server.Name
	if len(n) < 3 || len(n) > 200 || !validName(n) {
		return e, end, stBail // the reference writes the reject
	}
	if st := meta.fill(&e.Meta); st != stOK {
		return e, end, st
	}

	// The field strings get copies of their own before the window is reused.
	p.ownServer(&e.Server, uintptr(unsafe.Pointer(&b[srvLo])), srvHi-srvLo)

	// Raw: the compacted server object, from the raw arena.
	size := srvHi - srvLo
	if cap(p.aRaw)-len(p.aRaw) < size {
		p.aRaw = make([]byte, 0, max(arenaBlock, size))
	}
	start := len(p.aRaw)
	if srvWS {
		p.aRaw = appendCompact(p.aRaw, b[srvLo:srvHi])
	} else {
		p.aRaw = append(p.aRaw, b[srvLo:srvHi]...)
	}
	e.Raw = p.aRaw[start:len(p.aRaw):len(p.aRaw)]
	e.ContentSHA256 = p.hash(e.Raw, &e.Meta)
	return e, end, stOK
}

// officialRaw is the official metadata as read, before normalizing.
type officialRaw struct {
	seen                                               uint32
	status, message, changedAt, publishedAt, updatedAt string
	isLatest                                           bool
}

const (
	mStatus = 1 << iota
	mMessage
	mChanged
	mPublished
	mUpdated
	mLatest
)

func (p *entryParser) meta(j int, m *officialRaw) (int, int) {
	seenOfficial := false
	return p.object(j, func(key string, j int) (int, int) {
		if key != OfficialMetaKey {
			return p.skipValue(j, 1)
		}
		if seenOfficial || p.b[j] != '{' {
			return j, stBail
		}
		seenOfficial = true
		return p.object(j, func(key string, j int) (int, int) {
			switch key {
			case "status":
				return p.strField(j, &m.status, &m.seen, mStatus)
			case "statusMessage":
				return p.strField(j, &m.message, &m.seen, mMessage)
			case "statusChangedAt":
				return p.strField(j, &m.changedAt, &m.seen, mChanged)
			case "publishedAt":
				return p.strField(j, &m.publishedAt, &m.seen, mPublished)
			case "updatedAt":
				return p.strField(j, &m.updatedAt, &m.seen, mUpdated)
			case "isLatest":
				if m.seen&mLatest != 0 {
					return j, stBail
				}
				m.seen |= mLatest
				switch p.b[j] {
				case 't':
					m.isLatest = true
					return p.literal(j, "true")
				case 'f':
					return p.literal(j, "false")
				}
				return j, stBail
			case "status_message", "status_changed_at", "published_at", "updated_at", "is_latest":
				return j, stBail // snake_case: the reference reads both spellings
			}
			return p.skipValue(j, 1)
		})
	})
}

// fill normalizes the metadata as parseMeta and ParseEntry do. Its strings
// never alias the buffer: the status is one of the enum's constants, the
// message is copied.
func (m *officialRaw) fill(out *schema.OfficialMeta) int {
	switch m.status {
	case "active":
		out.Status = "active"
	case "deprecated":
		out.Status = "deprecated"
	case "deleted":
		out.Status = "deleted"
	default:
		out.Status = ""
	}
	if m.message != "" {
		out.StatusMessage = strings.Clone(m.message)
	}
	out.IsLatest = m.isLatest
	var ok bool
	if out.StatusChangedAt, ok = fastTime(m.changedAt); !ok {
		return stBail
	}
	if out.PublishedAt, ok = fastTime(m.publishedAt); !ok {
		return stBail
	}
	if out.UpdatedAt, ok = fastTime(m.updatedAt); !ok {
		return stBail
	}
	return stOK
}

// fastTime parses the registry's own form, YYYY-MM-DDTHH:MM:SS[.frac]Z, the
// way parseTime does; anything else goes to parseTime itself.
func fastTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, true
	}
	if len(s) < 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[len(s)-1] != 'Z' {
		return parseTime(strings.Clone(s)), true
	}
	num := func(a, b int) int {
		n := 0
		for k := a; k < b; k++ {
			c := s[k]
			if c < '0' || c > '9' {
				return -1
			}
			n = n*10 + int(c-'0')
		}
		return n
	}
	y, mo, d, hh, mm, ss := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19)
	ns := 0
	switch fr := s[19 : len(s)-1]; {
	case fr == "":
	case fr[0] == '.' && len(fr) >= 2 && len(fr) <= 10:
		ns = num(20, len(s)-1)
		for k := len(fr) - 1; k < 9; k++ {
			ns *= 10
		}
	default:
		ns = -1
	}
	if y < 0 || mo < 1 || mo > 12 || d < 1 || d > daysIn(mo, y) || hh < 0 || hh > 23 || mm < 0 || mm > 59 || ss < 0 || ss > 59 || ns < 0 {
		return parseTime(strings.Clone(s)), true
	}
	return time.Date(y, time.Month(mo), d, hh, mm, ss, ns, time.UTC), true
}

func daysIn(m, y int) int {
	switch m {
	case 2:
		if y%4 == 0 && (y%100 != 0 || y%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

const (
	fSchema = 1 << iota
	fName
	fDesc
	fTitle
	fVersion
	fRepo
	fWebsite
	fPackages
	fRemotes
)

var serverFields = []string{"$schema", "name", "description", "title", "version", "repository", "websiteUrl", "packages", "remotes"}

func (p *entryParser) server(j int, s *schema.ServerDetail) (int, int) {
	var seen uint32
	return p.object(j, func(key string, j int) (int, int) {
		switch key {
		case "$schema":
			return p.strField(j, &s.Schema, &seen, fSchema)
		case "name":
			return p.strField(j, &s.Name, &seen, fName)
		case "description":
			return p.strField(j, &s.Description, &seen, fDesc)
		case "title":
			return p.strField(j, &s.Title, &seen, fTitle)
		case "version":
			return p.strField(j, &s.Version, &seen, fVersion)
		case "websiteUrl":
			return p.strField(j, &s.WebsiteURL, &seen, fWebsite)
		case "repository":
			if seen&fRepo != 0 || p.b[j] != '{' {
				return j, stBail
			}
			seen |= fRepo
			if len(p.aRepo) == cap(p.aRepo) {
				p.aRepo = make([]schema.Repository, 0, 256)
			}
			p.aRepo = append(p.aRepo, schema.Repository{})
			r := &p.aRepo[len(p.aRepo)-1]
			s.Repository = r
			return p.repository(j, r)
		case "packages":
			if seen&fPackages != 0 || p.b[j] != '[' {
				return j, stBail
			}
			seen |= fPackages
			return p.packages(j, &s.Packages)
		case "remotes":
			if seen&fRemotes != 0 || p.b[j] != '[' {
				return j, stBail
			}
			seen |= fRemotes
			return p.remotes(j, &s.Remotes)
		}
		return p.unknown(j, key, serverFields...)
	})
}

var repoFields = []string{"url", "source", "id", "subfolder"}

func (p *entryParser) repository(j int, r *schema.Repository) (int, int) {
	var seen uint32
	return p.object(j, func(key string, j int) (int, int) {
		switch key {
		case "url":
			return p.strField(j, &r.URL, &seen, 1)
		case "source":
			return p.strField(j, &r.Source, &seen, 2)
		case "id":
			return p.strField(j, &r.ID, &seen, 4)
		case "subfolder":
			return p.strField(j, &r.Subfolder, &seen, 8)
		}
		return p.unknown(j, key, repoFields...)
	})
}

var pkgFields = []string{"registryType", "registryBaseUrl", "identifier", "version", "runtimeHint", "transport", "environmentVariables"}

func (p *entryParser) packages(j int, dst *[]schema.Package) (int, int) {
	p.pkgs = p.pkgs[:0]
	end, st := p.array(j, func(j int) (int, int) {
		var pk schema.Package
		var seen uint32
		end, st := p.object(j, func(key string, j int) (int, int) {
			switch key {
			case "registryType":
				return p.strField(j, &pk.RegistryType, &seen, 1)
			case "registryBaseUrl":
				return p.strField(j, &pk.RegistryBaseURL, &seen, 2)
			case "identifier":
				return p.strField(j, &pk.Identifier, &seen, 4)
			case "version":
				return p.strField(j, &pk.Version, &seen, 8)
			case "runtimeHint":
				return p.strField(j, &pk.RuntimeHint, &seen, 16)
			case "transport":
				if seen&32 != 0 || p.b[j] != '{' {
					return j, stBail
				}
				seen |= 32
				if len(p.aTrans) == cap(p.aTrans) {
					p.aTrans = make([]schema.Transport, 0, 256)
				}
				p.aTrans = append(p.aTrans, schema.Transport{})
				t := &p.aTrans[len(p.aTrans)-1]
				pk.Transport = t
				return p.transport(j, t)
			case "environmentVariables":
				if seen&64 != 0 || p.b[j] != '[' {
					return j, stBail
				}
				seen |= 64
				return p.keyValues(j, &pk.EnvironmentVariables)
			}
			return p.unknown(j, key, pkgFields...)
		})
		p.pkgs = append(p.pkgs, pk)
		return end, st
	})
	if st == stOK {
		*dst = settle(p.pkgs, &p.aPkg, 128)
	}
	return end, st
}

var transportFields = []string{"type", "url", "headers"}

// transport reads a package transport, and a remote: schema.Remote has
// the same fields, so it is read as a Transport and converted.
func (p *entryParser) transport(j int, t *schema.Transport) (int, int) {
	var seen uint32
	return p.object(j, func(key string, j int) (int, int) {
		switch key {
		case "type":
			return p.strField(j, &t.Type, &seen, 1)
		case "url":
			return p.strField(j, &t.URL, &seen, 2)
		case "headers":
			if seen&4 != 0 || p.b[j] != '[' {
				return j, stBail
			}
			seen |= 4
			return p.keyValues(j, &t.Headers)
		}
		return p.unknown(j, key, transportFields...)
	})
}

func (p *entryParser) remotes(j int, dst *[]schema.Remote) (int, int) {
	p.rems = p.rems[:0]
	end, st := p.array(j, func(j int) (int, int) {
		var t schema.Transport
		end, st := p.transport(j, &t)
		p.rems = append(p.rems, schema.Remote(t))
		return end, st
	})
	if st == stOK {
		*dst = settle(p.rems, &p.aRem, 128)
	}
	return end, st
}

var kvFields = []string{"name", "description", "isRequired", "isSecret", "default", "value"}

// keyValues reads an array of KeyValue. Arrays of them never nest, so one
// scratch slice serves every call.
func (p *entryParser) keyValues(j int, dst *[]schema.KeyValue) (int, int) {
	p.kvs = p.kvs[:0]
	end, st := p.array(j, func(j int) (int, int) {
		var kv schema.KeyValue
		var seen uint32
		end, st := p.object(j, func(key string, j int) (int, int) {
			switch key {
			case "name":
				return p.strField(j, &kv.Name, &seen, 1)
			case "description":
				return p.strField(j, &kv.Description, &seen, 2)
			case "isRequired":
				return p.boolPtr(j, &kv.IsRequired, &seen, 4)
			case "isSecret":
				return p.boolPtr(j, &kv.IsSecret, &seen, 8)
			case "default":
				return p.strField(j, &kv.Default, &seen, 16)
			case "value":
				return p.strField(j, &kv.Value, &seen, 32)
			}
			return p.unknown(j, key, kvFields...)
		})
		p.kvs = append(p.kvs, kv)
		return end, st
	})
	if st == stOK {
		*dst = settle(p.kvs, &p.aKV, 256)
	}
	return end, st
}

// settle copies a finished array from its scratch slice into the arena (a
// new arena block of at least minCap when the current one is full) and
// returns it capped, so appending to one entry's slice never writes into
// the next's. An empty array is an empty, non-nil slice, as encoding/json
// decodes [].
func settle[T any](scratch []T, arena *[]T, minCap int) []T {
	n := len(scratch)
	if n == 0 {
		return make([]T, 0)
	}
	if cap(*arena)-len(*arena) < n {
		*arena = make([]T, 0, max(minCap, n))
	}
	k := len(*arena)
	*arena = append(*arena, scratch...)
	return (*arena)[k : k+n : k+n]
}

// Slots of the string cache: one per field (per kind of field for the
// fields of array elements).
const (
	sSchema = iota
	sName
	sDesc
	sTitle
	sVersion
	sWebsite
	sRepoURL
	sRepoSource
	sRepoID
	sRepoSub
	sPkgType
	sPkgBase
	sPkgID
	sPkgVersion
	sPkgHint
	sTransType
	sTransURL
	sRemType
	sRemURL
	sKVName
	sKVDesc
	sKVDefault
	sKVValue
	nSlots
)

// ownServer gives every string of s that aliases the buffer range
// [base, base+n) a copy of its own, from the string arena, so the entry
// outlives the window. A field equal to the same field of the previous
// entry this parser read shares that entry's copy instead: a listing
// holds a server's versions one after the other, mostly alike (name,
// description, URLs), and every entry carries the same $schema. That
// spares most of the copying, and the memory (page faults are a good part
// of reading a 150 MB snapshot). Strings that do not alias the buffer
// (unescaped ones) are left alone.
func (p *entryParser) ownServer(s *schema.ServerDetail, base uintptr, n int) {
	own := func(slot int, f *string) {
		if len(*f) == 0 {
			*f = ""
			return
		}
		ptr := uintptr(unsafe.Pointer(unsafe.StringData(*f)))
		if ptr < base || ptr >= base+uintptr(n) {
			return
		}
		if *f == p.prev[slot] {
			*f = p.prev[slot]
			return
		}
		*f = p.keep(unsafe.Slice(unsafe.StringData(*f), len(*f)))
		p.prev[slot] = *f
	}
	kvs := func(l []schema.KeyValue) {
		for i := range l {
			own(sKVName, &l[i].Name)
			own(sKVDesc, &l[i].Description)
			own(sKVDefault, &l[i].Default)
			own(sKVValue, &l[i].Value)
		}
	}
	own(sSchema, &s.Schema)
	own(sName, &s.Name)
	own(sDesc, &s.Description)
	own(sTitle, &s.Title)
	own(sVersion, &s.Version)
	own(sWebsite, &s.WebsiteURL)
	if r := s.Repository; r != nil {
		own(sRepoURL, &r.URL)
		own(sRepoSource, &r.Source)
		own(sRepoID, &r.ID)
		own(sRepoSub, &r.Subfolder)
	}
	for i := range s.Packages {
		pk := &s.Packages[i]
		own(sPkgType, &pk.RegistryType)
		own(sPkgBase, &pk.RegistryBaseURL)
		own(sPkgID, &pk.Identifier)
		own(sPkgVersion, &pk.Version)
		own(sPkgHint, &pk.RuntimeHint)
		if t := pk.Transport; t != nil {
			own(sTransType, &t.Type)
			own(sTransURL, &t.URL)
			kvs(t.Headers)
		}
		kvs(pk.EnvironmentVariables)
	}
	for i := range s.Remotes {
		own(sRemType, &s.Remotes[i].Type)
		own(sRemURL, &s.Remotes[i].URL)
		kvs(s.Remotes[i].Headers)
	}
}

// appendCompact appends valid JSON src without the whitespace outside
// strings: json.Compact's output for valid input.
func appendCompact(dst, src []byte) []byte {
	in := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if in {
			dst = append(dst, c)
			if c == '\\' && i+1 < len(src) {
				i++
				dst = append(dst, src[i])
			} else if c == '"' {
				in = false
			}
			continue
		}
		if isWS(c) {
			continue
		}
		if c == '"' {
			in = true
		}
		dst = append(dst, c)
	}
	return dst
}

// validName is nameRE.MatchString without the regexp:
// ^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+(/[a-zA-Z0-9._-]+)*$
func validName(n string) bool {
	slash := strings.IndexByte(n, '/')
	if slash <= 0 {
		return false
	}
	for i := 0; i < slash; i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	seg := 0
	for i := slash + 1; i < len(n); i++ {
		c := n[i]
		if c == '/' {
			if seg == 0 {
				return false
			}
			seg = 0
			continue
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
		seg++
	}
	return seg > 0
}

// hash is contentHash without fmt.
func (p *entryParser) hash(raw []byte, m *schema.OfficialMeta) string {
	p.h.Reset()
	p.h.Write(raw)
	b := p.hbuf[:0]
	b = append(b, 0)
	b = append(b, m.Status...)
	b = append(b, 0)
	b = append(b, m.StatusMessage...)
	b = append(b, 0)
	b = strconv.AppendBool(b, m.IsLatest)
	for _, t := range []time.Time{m.PublishedAt, m.UpdatedAt, m.StatusChangedAt} {
		b = append(b, 0)
		if !t.IsZero() {
			b = appendRFC3339Nano(b, t)
		}
	}
	p.h.Write(b)
	p.hbuf = b
	p.hsum = p.h.Sum(p.hsum[:0])
	var hx [2 * sha256.Size]byte
	hex.Encode(hx[:], p.hsum)
	return p.keep(hx[:])
}

// appendRFC3339Nano is t.UTC().AppendFormat(b, time.RFC3339Nano) without
// the layout interpreter: the content hash formats three times per entry.
// Years outside 0–9999 take the library's path.
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	t = t.UTC()
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	hh, mm, ss := t.Clock()
	two := func(b []byte, v int) []byte { return append(b, byte('0'+v/10), byte('0'+v%10)) }
	b = two(two(b, y/100), y%100)
	b = two(append(b, '-'), int(mo))
	b = two(append(b, '-'), d)
	b = two(append(b, 'T'), hh)
	b = two(append(b, ':'), mm)
	b = two(append(b, ':'), ss)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [9]byte
		for k := 8; k >= 0; k-- {
			frac[k] = byte('0' + ns%10)
			ns /= 10
		}
		n := 9
		for frac[n-1] == '0' {
			n--
		}
		b = append(append(b, '.'), frac[:n]...)
	}
	return append(b, 'Z')
}
