package registry

// The fast path of ReadSnapshot for a top-level array of entries.
//
// The stream is read in windows (fastWindow bytes, more when one entry is
// larger). Each window is cut into GOMAXPROCS pieces at guessed entry starts
// (a '{' after ',' whose first key is "server"), the pieces are parsed at
// once by entryParser, and a piece's entries are used only when the piece
// before it ended exactly at its guessed start — so a wrong guess costs time
// (that piece is parsed again, in order), never a wrong entry. Entries are
// handed to emit in file order on the caller's goroutine. The part of the
// window after the last whole entry is carried into the next one; windows
// are reused, as no entry keeps a reference into one.
//
// Anything the fast path does not handle itself — a syntax error, a
// truncated document, data after the array, a read error, a value it cannot
// be sure is valid — is handed to the reference reader (refRead) from the
// last entry read, with a prefix that puts encoding/json's Decoder in the
// reference's own state there. Dead letters, counts and Incomplete are then
// the reference's by construction. Why not a library splitter: the split,
// the validation and the decode are one pass here, and the hand-over needs
// to know exactly where the last good entry ended.

import (
	"bytes"
	"io"
	"runtime"
	"strings"
	"sync"

	"github.com/forum-mcp/forum/schema"
)

// fastWindow is the read size of the fast path: memory is bounded by about
// twice this (plus the entries themselves), whatever the file's size.
var fastWindow = 8 << 20

// fastWorkers is how many pieces a window is cut into (0: GOMAXPROCS).
var fastWorkers = 0

// entryBytesGuess sizes slices and maps ahead: a little under the mean
// entry (862 B generated, 981 B real, compact).
const entryBytesGuess = 700

// fastMinSplit is the smallest window cut into pieces.
var fastMinSplit = 1 << 20

// scribbleWindows makes the fast path overwrite each window once its
// entries are out: a test hook that catches any entry still aliasing one.
var scribbleWindows = false

// Where a piece's scan stands.
const (
	kAfterOpen  = iota // just after the array's '['
	kAfterValue        // just after an entry
	kAtValue           // at an entry's first byte (a piece's guessed start)
)

// Why a piece stopped.
const (
	stopReached = iota // the next entry starts at or after the piece's limit
	stopMore           // the window ends inside the next entry
	stopAnomaly        // something the fast path leaves to the reference
	stopEnd            // the array's closing ']'
)

type item struct {
	raw []byte
	e   schema.Entry
	err error
	h   entryHashes // when err is nil
}

type pieceResult struct {
	items []item
	stop  int
	// kind, pos: the scan state where the piece stopped (for stopReached,
	// pos is the next entry's start and prevKind, prevPos the state before
	// it). For stopEnd, pos is the state before the ']' and end the index
	// after it.
	kind, pos         int
	prevKind, prevPos int
	end               int
}

// piece parses entries of buf from the state (kind, pos) until the next
// entry would start at or after limit (limit < 0: no limit).
func (p *entryParser) piece(buf []byte, kind, pos, limit int, items []item) pieceResult {
	p.b = buf
	var r pieceResult
	n := len(buf)
	span := n - pos
	if limit >= 0 {
		span = limit - pos
	}
	if want := span / entryBytesGuess; cap(items) < want {
		items = make([]item, 0, want)
	}
	r.items = items[:0]
	for {
		vs := pos
		if kind != kAtValue {
			j := skipWSb(buf, pos)
			if j >= n {
				r.stop, r.kind, r.pos = stopMore, kind, pos
				return r
			}
			if buf[j] == ']' {
				r.stop, r.kind, r.pos, r.end = stopEnd, kind, pos, j+1
				return r
			}
			if kind == kAfterValue {
				if buf[j] != ',' {
					r.stop, r.kind, r.pos = stopAnomaly, kind, pos
					return r
				}
				j = skipWSb(buf, j+1)
				if j >= n {
					r.stop, r.kind, r.pos = stopMore, kind, pos
					return r
				}
			}
			vs = j
		}
		if limit >= 0 && vs >= limit {
			r.stop, r.pos, r.prevKind, r.prevPos = stopReached, vs, kind, pos
			return r
		}
		e, end, st := p.entry(vs)
		if st == stOK && end-vs > MaxEntryBytes {
			st = stBail
		}
		var err error
		switch st {
		case stMore:
			r.stop, r.kind, r.pos = stopMore, kind, pos
			return r
		case stBail:
			// The value's extent by encoding/json's rules, then the reference.
			p.lenient = true
			end, st = p.skipValue(vs, 0)
			p.lenient = false
			switch st {
			case stMore:
				r.stop, r.kind, r.pos = stopMore, kind, pos
				return r
			case stBail:
				r.stop, r.kind, r.pos = stopAnomaly, kind, pos
				return r
			}
			e, err = ParseEntry(buf[vs:end])
		}
		var h entryHashes
		if err == nil && p.seed != nil {
			h = hashEntry(*p.seed, e.Server.Name, e.Server.Version)
		}
		r.items = append(r.items, item{raw: buf[vs:end], e: e, err: err, h: h})
		kind, pos = kAfterValue, end
	}
}

// guess returns a likely entry start at or after from: a '{' after ',' whose
// first key is "server". -1 when none is near.
func guess(buf []byte, from int) int {
	const look = 1 << 20
	hi := min(len(buf), from+look)
	for i := from; i < hi; {
		k := bytes.Index(buf[i:hi], []byte(`"server"`))
		if k < 0 {
			return -1
		}
		at := i + k
		i = at + 1
		o := at - 1
		for o >= 0 && isWS(buf[o]) {
			o--
		}
		if o < 0 || buf[o] != '{' {
			continue
		}
		c := o - 1
		for c >= 0 && isWS(buf[c]) {
			c--
		}
		if c >= 0 && buf[c] == ',' {
			return o
		}
	}
	return -1
}

// window parses one window from (kind, pos) and returns its pieces in order,
// the last one holding where the window's scan stopped.
func (c *fastReader) window(buf []byte, kind, pos int) []pieceResult {
	k := c.workers
	if len(buf) < fastMinSplit {
		k = 1
	}
	limits := []int{}
	last := pos
	for w := 1; w < k; w++ {
		g := guess(buf, max(last+1, w*len(buf)/k))
		if g > last {
			limits = append(limits, g)
			last = g
		}
	}
	res := make([]pieceResult, len(limits)+1)
	limitOf := func(w int) int {
		if w < len(limits) {
			return limits[w]
		}
		return -1
	}
	var wg sync.WaitGroup
	for w := 1; w < len(res); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res[w] = c.parsers[w].piece(buf, kAtValue, limits[w-1], limitOf(w), c.items[w])
		}()
	}
	res[0] = c.parsers[0].piece(buf, kind, pos, limitOf(0), c.items[0])
	wg.Wait()

	out := res[:1]
	for w := 1; w < len(res); w++ {
		prev := out[len(out)-1]
		if prev.stop != stopReached {
			break
		}
		r := res[w]
		if prev.pos != limits[w-1] {
			// The guess was not an entry start: this piece again, in order.
			r = c.parsers[0].piece(buf, prev.prevKind, prev.prevPos, limitOf(w), r.items)
		} else if r.stop != stopReached && r.kind == kAtValue {
			// Stopped at its first entry: the state is the previous piece's.
			r.kind, r.pos = prev.prevKind, prev.prevPos
		}
		out = append(out, r)
	}
	for w := range res {
		c.items[w] = res[w].items[:0] // kept for the next window
	}
	return out
}

type fastReader struct {
	*readCtx
	workers int
	parsers []*entryParser
	items   [][]item // per piece, reused from window to window
}

// fastRead reads a document whose first non-space byte is '['.
func (c *readCtx) fastRead(br io.Reader) error {
	w := fastWorkers
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	f := &fastReader{readCtx: c, workers: w}
	for range w {
		p := newEntryParser()
		p.seed = c.seen.hashes()
		f.parsers = append(f.parsers, p)
	}
	f.items = make([][]item, w)
	var carry []byte
	kind, pos := -1, 0 // -1: before the '['
	eof := false
	var readErr error
	var buf []byte
	for {
		// The window is reused: no entry keeps a reference into it (the
		// equivalence tests scribble over used windows to make sure).
		if size := max(fastWindow, 2*len(carry)); cap(buf) < size {
			nb := make([]byte, size)
			copy(nb, carry)
			carry, buf = nb[:len(carry)], nb
		}
		buf = buf[:cap(buf)]
		n := copy(buf, carry)
		if !eof {
			m, err := fill(br, buf[n:])
			n += m
			switch err {
			case nil:
			case io.EOF:
				eof = true
			default:
				eof, readErr = true, err
			}
		}
		buf = buf[:n]
		if kind < 0 {
			j := skipWSb(buf, 0)
			if j >= n || buf[j] != '[' { // cannot happen after peekNonSpace; the reference decides
				return c.refRead(io.MultiReader(f.tail(buf, readErr), br), resumeNone)
			}
			kind, pos = kAfterOpen, j+1
		}
		pieces := f.window(buf, kind, pos)
		for _, pr := range pieces {
			for i := range pr.items {
				it := &pr.items[i]
				if err := c.take(it.raw, &it.e, it.err, &it.h); err != nil {
					return err
				}
			}
		}
		last := pieces[len(pieces)-1]
		switch last.stop {
		case stopMore:
			if eof { // truncated: the reference says how
				return f.handoff(buf[last.pos:], last.kind, readErr, br)
			}
			carry, kind, pos = buf[last.pos:], last.kind, 0
		case stopAnomaly:
			return f.handoff(buf[last.pos:], last.kind, readErr, br)
		case stopEnd:
			// Only whitespace may follow the array.
			rest := buf[last.end:]
			for {
				if skipWSb(rest, 0) != len(rest) || readErr != nil {
					return f.handoff(append(buf[last.pos:last.end:last.end], rest...), last.kind, readErr, br)
				}
				if eof {
					return nil
				}
				more := make([]byte, 64<<10)
				m, err := fill(br, more)
				rest = append(rest, more[:m]...)
				switch err {
				case nil:
				case io.EOF:
					eof = true
				default:
					eof, readErr = true, err
				}
			}
		default:
			panic("registry: fast path stopped without a reason")
		}
		if scribbleWindows {
			scribble(buf[:len(buf)-len(carry)])
		}
	}
}

// fill reads into p until it is full or the stream ends. Unlike io.ReadFull
// it returns the stream's own error: io.EOF for a clean end, short or not,
// and anything else as it came — a gzip stream cut short ends with
// io.ErrUnexpectedEOF, which io.ReadFull would pass off as a short clean end.
func fill(r io.Reader, p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := r.Read(p[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func scribble(b []byte) {
	for i := range b {
		b[i] = 0xFF
	}
}

// handoff gives the rest of the document to the reference reader: rest are
// the bytes from the scan state kind, then the stream (or the read error
// that ended it).
func (f *fastReader) handoff(rest []byte, kind int, readErr error, br io.Reader) error {
	prefix, resume := "[", resumeAfterOpen
	if kind == kAfterValue {
		prefix, resume = "[{}", resumeAfterValue
	}
	return f.refRead(io.MultiReader(strings.NewReader(prefix), f.tail(rest, readErr), br), resume)
}

// tail is rest followed by the read error that ended the stream, if any.
func (f *fastReader) tail(rest []byte, readErr error) io.Reader {
	if readErr == nil {
		return bytes.NewReader(rest)
	}
	return io.MultiReader(bytes.NewReader(rest), errReader{readErr})
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
