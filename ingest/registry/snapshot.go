package registry

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// MaxSnapshotBytes bounds a decompressed snapshot file (a gzip bomb stops here).
// The seeds' full registry (~170k records) is ~181 MB of JSON.
const MaxSnapshotBytes = 2 << 30

// SnapshotStats describes one read of a snapshot.
type SnapshotStats struct {
	Entries    int  // entries emitted
	Names      int  // distinct names emitted
	Rejects    int  // entries sent to reject
	Incomplete bool // the document could not be read to its end
	// Unreadable counts the rejects that may hide a server: entries that
	// could not be read into one (no valid name, malformed, too large,
	// invalid UTF-8). A duplicate (its first copy was kept) and a version
	// over MaxVersionsPerName (its server is listed) hide none.
	Unreadable int
}

// Whole reports whether the listing read is all the source held: read to
// its end, with no entry that could not be read. Only a whole listing can
// say which servers are gone; the differ reads any other as partial.
func (s SnapshotStats) Whole() bool { return !s.Incomplete && s.Unreadable == 0 }

// ReadSnapshot streams the entries of a snapshot document (a JSON array of
// entries, or a registry page envelope `{"servers": [...]}`), with or without
// a UTF-8 BOM. Gzip is detected by its magic bytes. Each good entry goes to
// emit; each bad one to rej as a dead letter, and reading goes on. A document
// that breaks off (truncated, malformed between entries) stops the read with
// Incomplete set and one dead letter for the rest; entries read before the
// break are kept (the dead letter for the break is the last one sent). At
// most MaxVersionsPerName versions of one name are taken; the excess goes to
// rej. The returned error is only for emit/rej failures and I/O errors that
// are not the document's fault.
//
// A top-level array is read by the fast path (fastread.go: windows of the
// stream parsed in GOMAXPROCS goroutines, entries emitted in file order,
// memory bounded by the window); envelopes, and whatever the fast path is
// unsure of, by the reference path (refRead), with the same result.
func ReadSnapshot(r io.Reader, source string, observedAt time.Time, emit func(schema.Entry) error, rej func(schema.DLQMessage) error) (SnapshotStats, error) {
	return readSnapshot(r, source, observedAt, emit, rej, true)
}

// readSnapshot is ReadSnapshot; fast false reads with the reference path
// only (ReadSnapshot as it was before the fast path: the spec by example
// that tests compare with).
func readSnapshot(r io.Reader, source string, observedAt time.Time, emit func(schema.Entry) error, rej func(schema.DLQMessage) error, fast bool) (SnapshotStats, error) {
	return readSnapshotHint(r, source, observedAt, func(e *schema.Entry) error { return emit(*e) }, rej, fast, 0)
}

// readSnapshotHint is readSnapshot with the number of entries expected (0:
// unknown), to size its maps, and emit taking a pointer (an entry is 300
// bytes: LoadSnapshotFile copies each once, into its slice).
func readSnapshotHint(r io.Reader, source string, observedAt time.Time, emit func(*schema.Entry) error, rej func(schema.DLQMessage) error, fast bool, hint int) (SnapshotStats, error) {
	c := &readCtx{source: source, observedAt: observedAt, emit: emit, rej: rej}
	if fast {
		c.seen = newHashedSeen(hint)
	} else {
		c.seen = &exactSeen{keys: make(map[entryKey]struct{}, hint), names: make(versionCounts, hint/2)}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	var doc io.Reader = br
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			c.st.Incomplete = true
			return c.st, rej(schema.NewDLQ("replay", source, schema.ReasonMalformedJSON, "bad gzip header: "+err.Error(), "", nil, observedAt))
		}
		defer zr.Close()
		c.gz = &gzipErr{r: zr}
		doc = c.gz
	}
	// One byte past the bound tells a document over it from one that ends there.
	c.read = &countingReader{r: io.LimitReader(doc, MaxSnapshotBytes+1)}
	br = bufio.NewReaderSize(c.read, 64<<10)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte{0xEF, 0xBB, 0xBF}) {
		_, _ = br.Discard(3)
	}
	first, perr := peekNonSpace(br)
	if first == 0 && perr == io.EOF {
		c.st.Incomplete = true
		return c.st, rej(schema.NewDLQ("replay", source, schema.ReasonTruncatedJSON, fmt.Sprintf("the document is empty: %d bytes%s", c.read.n, c.gz.note()), "", nil, observedAt))
	}
	if first == '<' {
		c.st.Incomplete = true
		head, _ := br.Peek(512)
		return c.st, rej(schema.NewDLQ("replay", source, schema.ReasonNotJSON, "document starts with '<' (an HTML page?)", "", head, observedAt))
	}
	var err error
	if first == '[' && fast {
		err = c.fastRead(br)
	} else {
		err = c.refRead(br, resumeNone)
	}
	return c.st, err
}

// readCtx is one read of a snapshot: its callbacks, counts and the keys seen.
type readCtx struct {
	source     string
	observedAt time.Time
	emit       func(*schema.Entry) error // the callee copies what it keeps
	rej        func(schema.DLQMessage) error
	st         SnapshotStats
	seen       seen
	read       *countingReader // the document's bytes (after gunzip)
	gz         *gzipErr        // nil when the file is not gzip
}

// take handles one entry value in file order: a reject, a duplicate, a
// version over the bound, or a good entry. h holds the entry's hashes
// (with c.seen's seed) when the caller has them, nil when not.
func (c *readCtx) take(raw []byte, e *schema.Entry, err error, h *entryHashes) error {
	if err != nil {
		c.st.Rejects++
		c.st.Unreadable++
		var re *RejectError
		errors.As(err, &re)
		return c.rej(schema.NewDLQ("replay", c.source, ReasonOf(err), err.Error(), rejectKey(re), raw, c.observedAt))
	}
	var hh entryHashes
	if h != nil {
		hh = *h
	} else if seed := c.seen.hashes(); seed != nil {
		hh = hashEntry(*seed, e.Server.Name, e.Server.Version)
	}
	switch c.seen.take(e.Server.Name, e.Server.Version, hh, e.Meta.IsLatest) {
	case takeDup:
		c.st.Rejects++
		key := e.Server.Name + "@" + e.Server.Version
		return c.rej(schema.NewDLQ("replay", c.source, schema.ReasonDuplicateEntry, "a second entry for "+schema.Bound(key, maxKeyBytes)+" in one snapshot; the first is kept", key, raw, c.observedAt))
	case takeTooMany:
		c.st.Rejects++
		return c.rej(schema.NewDLQ("replay", c.source, schema.ReasonTooManyVersions, tooManyVersions(e.Server.Name), e.Server.Name+"@"+e.Server.Version, raw, c.observedAt))
	}
	c.st.Entries++
	c.st.Names = c.seen.distinctNames()
	return c.emit(e)
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// gzipErr remembers the gzip stream's own error, which the JSON decoder
// reports as its own ("unexpected EOF" for a cut file, as for a cut document).
type gzipErr struct {
	r   io.Reader
	err error
}

func (g *gzipErr) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF && g.err == nil {
		g.err = err
	}
	return n, err
}

// note says, in parentheses, what the gzip layer knows of a break, for a
// dead letter's detail ("" when the document is not gzip).
func (g *gzipErr) note() string {
	switch {
	case g == nil:
		return ""
	case errors.Is(g.err, io.ErrUnexpectedEOF):
		return " (after gunzip; the gzip stream itself is cut short)"
	case g.err != nil:
		return " (after gunzip; the gzip stream is corrupt: " + schema.Bound(g.err.Error(), 100) + ")"
	}
	return " (after gunzip)"
}

// How refRead starts: at the document's beginning, or taking over from the
// fast path inside the entries array.
const (
	resumeNone       = iota // in is the whole document
	resumeAfterOpen         // in is "[" + the bytes after the array's '['
	resumeAfterValue        // in is "[{}" + the bytes after the last entry read (an object: nothing after it can join it, as a digit would a 0)
)

// refRead is the reference reader: encoding/json's streaming Decoder and
// ParseEntry, one entry at a time. Taking over from the fast path, the
// prefix puts the decoder in the state the reference would be in at that
// point (after '[', or after an array element), so errors, their messages
// and the dead letter's payload (the rest of the document) are the same.
func (c *readCtx) refRead(in io.Reader, resume int) error {
	dec := json.NewDecoder(in)
	broken := func(err error) error {
		c.st.Incomplete = true
		reason := schema.ReasonMalformedJSON
		detail := fmt.Sprintf("document breaks off after %d entries: %v", c.st.Entries+c.st.Rejects, err)
		switch {
		case c.read.n > MaxSnapshotBytes:
			reason = schema.ReasonBodyTooLarge
			detail = fmt.Sprintf("document is over the %d-byte bound; read stopped after %d entries", int64(MaxSnapshotBytes), c.st.Entries+c.st.Rejects)
		case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
			// The decoder read to the end: the count is where it is cut.
			reason = schema.ReasonTruncatedJSON
			detail = fmt.Sprintf("document is cut short at byte %d%s, after %d entries: %v", c.read.n, c.gz.note(), c.st.Entries+c.st.Rejects, err)
		case c.gz != nil && c.gz.err != nil:
			detail += c.gz.note()
		}
		rest, _ := io.ReadAll(io.LimitReader(io.MultiReader(dec.Buffered(), in), schema.MaxDLQPayload))
		return c.rej(schema.NewDLQ("replay", c.source, reason, detail, "", rest, c.observedAt))
	}
	envelope := false
	switch resume {
	case resumeNone:
		var err error
		if envelope, err = seekArray(dec); err != nil {
			return broken(err)
		}
	default:
		if _, err := dec.Token(); err != nil { // our own '['
			return broken(err)
		}
		if resume == resumeAfterValue {
			var zero json.RawMessage // our own {}
			if err := dec.Decode(&zero); err != nil {
				return broken(err)
			}
		}
	}
	for dec.More() {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return broken(err)
		}
		e, err := ParseEntry(raw)
		if err := c.take(raw, &e, err, nil); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return broken(err)
	}
	if envelope {
		// The rest of the envelope (metadata) is read through to its '}'.
		for dec.More() {
			var skip json.RawMessage
			if _, err := dec.Token(); err != nil {
				return broken(err)
			}
			if err := dec.Decode(&skip); err != nil {
				return broken(err)
			}
		}
		if _, err := dec.Token(); err != nil {
			return broken(err)
		}
	}
	// Anything after the document is a fault: it may hide entries.
	if tok, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = fmt.Errorf("unexpected %s after the end of the document", boundToken(tok))
		}
		return broken(err)
	}
	return nil
}

func rejectKey(re *RejectError) string {
	if re == nil {
		return ""
	}
	return re.Key
}

func peekNonSpace(br *bufio.Reader) (byte, error) {
	for i := 1; i <= 4096; i++ {
		b, err := br.Peek(i)
		if len(b) < i {
			return 0, err
		}
		switch c := b[i-1]; c {
		case ' ', '\t', '\r', '\n':
			continue
		default:
			return c, nil
		}
	}
	return 0, nil
}

// seekArray positions dec inside the entries array: either the document's
// top-level array, or the array under "servers" in an envelope object.
func seekArray(dec *json.Decoder) (envelope bool, err error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	switch tok {
	case json.Delim('['):
		return false, nil
	case json.Delim('{'):
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return true, err
			}
			if k == "servers" {
				t, err := dec.Token()
				if err != nil {
					return true, err
				}
				if t != json.Delim('[') {
					return true, fmt.Errorf("\"servers\" is not an array")
				}
				return true, nil
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return true, err
			}
		}
		return true, fmt.Errorf("object has no \"servers\" array")
	default:
		return false, fmt.Errorf("document is not a JSON array or envelope (starts with %s)", boundToken(tok))
	}
}

// boundToken renders a JSON token for an error message, never whole when long.
func boundToken(tok json.Token) string {
	if s, ok := tok.(string); ok {
		return strconv.Quote(schema.Bound(s, 40))
	}
	return schema.Bound(fmt.Sprint(tok), 40)
}

// SnapshotFile is one capture on disk with its capture time.
type SnapshotFile struct {
	Path       string
	CapturedAt time.Time
}

var dateInName = regexp.MustCompile(`(\d{4}-\d{2}-\d{2})(?:[T_](\d{2})[:-]?(\d{2})[:-]?(\d{2}))?`)

// ListSnapshots returns the *.json / *.json.gz files of dir ordered by capture
// time. The capture time comes from dir/MANIFEST.tsv (columns file,
// captured_at_utc) when present, else from a date (and optional time) in the
// file name. A file with neither is an error: event time must never be
// guessed from file system times.
func ListSnapshots(dir string) ([]SnapshotFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("reading snapshot dir: %w", err)
	}
	manifest, err := readManifest(filepath.Join(dir, "MANIFEST.tsv"))
	if err != nil {
		return nil, err
	}
	var out []SnapshotFile
	for _, de := range ents {
		n := de.Name()
		if de.IsDir() || !(strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".json.gz")) {
			continue
		}
		t, ok := manifest[n]
		if !ok {
			t, ok = timeFromName(n)
		}
		if !ok {
			return nil, fmt.Errorf("snapshot %s: no capture time (add it to MANIFEST.tsv or put a YYYY-MM-DD date in the name)", n)
		}
		out = append(out, SnapshotFile{Path: filepath.Join(dir, n), CapturedAt: t})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].CapturedAt.Equal(out[j].CapturedAt) {
			return out[i].CapturedAt.Before(out[j].CapturedAt)
		}
		return out[i].Path < out[j].Path
	})
	return out, nil
}

func timeFromName(n string) (time.Time, bool) {
	m := dateInName.FindStringSubmatch(n)
	if m == nil {
		return time.Time{}, false
	}
	s := m[1]
	if m[2] != "" {
		s += "T" + m[2] + ":" + m[3] + ":" + m[4]
	} else {
		s += "T00:00:00"
	}
	t, err := time.Parse("2006-01-02T15:04:05", s)
	return t.UTC(), err == nil
}

func readManifest(path string) (map[string]time.Time, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	out := map[string]time.Time{}
	fileCol, timeCol := 0, 1
	for i, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		cols := strings.Split(strings.TrimRight(line, "\r"), "\t")
		if i == 0 {
			for j, c := range cols {
				switch c {
				case "file":
					fileCol = j
				case "captured_at_utc", "captured_at":
					timeCol = j
				}
			}
			continue
		}
		if len(cols) <= fileCol || len(cols) <= timeCol {
			return nil, fmt.Errorf("%s line %d: want at least %d columns", path, i+1, max(fileCol, timeCol)+1)
		}
		t, err := time.Parse(time.RFC3339, cols[timeCol])
		if err != nil {
			return nil, fmt.Errorf("%s line %d: capture time: %w", path, i+1, err)
		}
		out[cols[fileCol]] = t.UTC()
	}
	return out, nil
}

// ReadSnapshotFile opens and reads one snapshot file.
func ReadSnapshotFile(f SnapshotFile, emit func(schema.Entry) error, rej func(schema.DLQMessage) error) (SnapshotStats, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return SnapshotStats{}, fmt.Errorf("opening snapshot: %w", err)
	}
	defer fh.Close()
	return ReadSnapshot(fh, filepath.Base(f.Path), f.CapturedAt, emit, rej)
}

// LoadSnapshotFile reads a whole snapshot file into memory: entries in file
// order and the dead letters of the bad ones.
func LoadSnapshotFile(f SnapshotFile) ([]schema.Entry, []schema.DLQMessage, SnapshotStats, error) {
	return loadSnapshotFile(f, true)
}

// LoadSnapshotFileReference is LoadSnapshotFile through the reference path
// only (encoding/json's Decoder and ParseEntry, one goroutine): what
// ReadSnapshot was before the fast path, kept to compare with in tests and
// benchmarks.
func LoadSnapshotFileReference(f SnapshotFile) ([]schema.Entry, []schema.DLQMessage, SnapshotStats, error) {
	return loadSnapshotFile(f, false)
}

func loadSnapshotFile(f SnapshotFile, fast bool) ([]schema.Entry, []schema.DLQMessage, SnapshotStats, error) {
	fh, err := os.Open(f.Path)
	if err != nil {
		return nil, nil, SnapshotStats{}, fmt.Errorf("opening snapshot: %w", err)
	}
	defer fh.Close()
	hint := 0
	if fi, err := fh.Stat(); err == nil {
		hint = int(min(fi.Size(), MaxSnapshotBytes) / entryBytesGuess)
		if strings.HasSuffix(f.Path, ".gz") {
			hint *= 6
		}
	}
	entries := make([]schema.Entry, 0, hint)
	var rejects []schema.DLQMessage
	st, err := readSnapshotHint(fh, filepath.Base(f.Path), f.CapturedAt,
		func(e *schema.Entry) error { entries = append(entries, *e); return nil },
		func(m schema.DLQMessage) error { rejects = append(rejects, m); return nil }, fast, hint)
	return entries, rejects, st, err
}
