// Package diffbench is benchmark 1: the diff of two registry snapshots, end
// to end (read + decode + Diff), against its floors (the bare cost of
// decoding the JSON in Go) and against a Python baseline
// (bench/baselines/diff.py). The forum arm is the production path,
// registry.LoadSnapshotFile (ReadSnapshot's fast path, see
// ingest/registry/fastread.go) and differ.Diff; the reference arm is the
// same job through registry.LoadSnapshotFileReference (encoding/json +
// ParseEntry), i.e. forum before the fast path.
//
// It also keeps the two decoding prototypes that led to the fast path
// (measured in the 2026-11-29 run, no longer arms of the harness; their
// equivalence test and micro benchmarks still run):
//   - SplitEntries + ParallelParse: the array is cut into entries by a byte
//     scanner (strings and nesting tracked, nothing decoded), then
//     registry.ParseEntry runs in N goroutines; duplicates are dropped after,
//     in file order, as ReadSnapshot does.
//   - FastParseEntry: ParseEntry's v0.1 path with github.com/goccy/go-json
//     (already in the module graph) and a typed envelope instead of
//     map[string]json.RawMessage; anything else (the legacy shape, odd
//     values) falls back to registry.ParseEntry. A test checks it gives
//     the same Entry as ParseEntry on the generated and the real corpus.
package diffbench

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime"
	"sync"
	"time"
	"unicode/utf8"

	gojson "github.com/goccy/go-json"

	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

// ErrNotArray is returned by SplitEntries for a document that is not a
// top-level JSON array (an envelope, say): callers fall back to
// registry.ReadSnapshot.
var ErrNotArray = errors.New("diffbench: not a top-level JSON array")

// SplitEntries returns the raw entries of a top-level JSON array (with an
// optional UTF-8 BOM), without decoding them: a scanner that tracks strings,
// escapes and nesting. Malformed structure is an error.
func SplitEntries(doc []byte) ([][]byte, error) {
	doc = bytes.TrimPrefix(doc, []byte{0xEF, 0xBB, 0xBF})
	i := skipWS(doc, 0)
	if i >= len(doc) || doc[i] != '[' {
		return nil, ErrNotArray
	}
	i++
	out := make([][]byte, 0, len(doc)/800)
	for {
		i = skipWS(doc, i)
		if i >= len(doc) {
			return out, fmt.Errorf("diffbench: document breaks off after %d entries", len(out))
		}
		if doc[i] == ']' && len(out) == 0 {
			i++
			break
		}
		start := i
		end, err := skipValue(doc, i)
		if err != nil {
			return out, fmt.Errorf("diffbench: entry %d: %w", len(out), err)
		}
		out = append(out, doc[start:end])
		i = skipWS(doc, end)
		if i >= len(doc) {
			return out, fmt.Errorf("diffbench: document breaks off after %d entries", len(out))
		}
		if doc[i] == ',' {
			i++
			continue
		}
		if doc[i] == ']' {
			i++
			break
		}
		return out, fmt.Errorf("diffbench: unexpected %q after entry %d", doc[i], len(out))
	}
	if skipWS(doc, i) != len(doc) {
		return out, fmt.Errorf("diffbench: data after the end of the document")
	}
	return out, nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\r' || b[i] == '\t') {
		i++
	}
	return i
}

// skipValue returns the end of the object or array starting at b[i] (scalars
// are scanned to the next delimiter).
func skipValue(b []byte, i int) (int, error) {
	if b[i] != '{' && b[i] != '[' {
		j := i
		for j < len(b) && b[j] != ',' && b[j] != ']' && b[j] != ' ' && b[j] != '\n' && b[j] != '\r' && b[j] != '\t' {
			if b[j] == '"' {
				e, err := skipString(b, j)
				if err != nil {
					return 0, err
				}
				j = e
				continue
			}
			j++
		}
		return j, nil
	}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			e, err := skipString(b, j)
			if err != nil {
				return 0, err
			}
			j = e - 1
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return j + 1, nil
			}
		}
	}
	return 0, errors.New("unterminated value")
}

// skipString returns the index after the string starting at b[i] == '"'.
func skipString(b []byte, i int) (int, error) {
	for j := i + 1; j < len(b); {
		k := bytes.IndexAny(b[j:], `"\`)
		if k < 0 {
			break
		}
		j += k
		if b[j] == '\\' {
			j += 2
			continue
		}
		return j + 1, nil
	}
	return 0, errors.New("unterminated string")
}

// ParseFunc parses one raw entry (registry.ParseEntry or FastParseEntry).
type ParseFunc func([]byte) (schema.Entry, error)

// ParallelParse parses raws with parse in workers goroutines (0: GOMAXPROCS),
// then keeps the first entry of each name@version in file order, as
// registry.ReadSnapshot does. It returns the entries and the number rejected.
func ParallelParse(raws [][]byte, parse ParseFunc, workers int) ([]schema.Entry, int) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ents := make([]schema.Entry, len(raws))
	bad := make([]bool, len(raws))
	var wg sync.WaitGroup
	chunk := (len(raws) + workers - 1) / workers
	for w := 0; w < workers; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, len(raws))
		if lo >= hi {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := lo; i < hi; i++ {
				e, err := parse(raws[i])
				ents[i], bad[i] = e, err != nil
			}
		}()
	}
	wg.Wait()
	seen := make(map[string]struct{}, len(raws))
	out := ents[:0]
	rejects := 0
	for i := range ents {
		if bad[i] {
			rejects++
			continue
		}
		key := ents[i].Server.Name + "@" + ents[i].Server.Version
		if _, dup := seen[key]; dup {
			rejects++
			continue
		}
		seen[key] = struct{}{}
		out = append(out, ents[i])
	}
	return out, rejects
}

var nameRE = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+(/[a-zA-Z0-9._-]+)*$`)

type fastEnvelope struct {
	Server gojson.RawMessage `json:"server"`
	Meta   struct {
		Official *struct {
			Status          *string `json:"status"`
			StatusMessage   *string `json:"statusMessage"`
			StatusChangedAt *string `json:"statusChangedAt"`
			PublishedAt     *string `json:"publishedAt"`
			UpdatedAt       *string `json:"updatedAt"`
			IsLatest        *bool   `json:"isLatest"`
		} `json:"io.modelcontextprotocol.registry/official"`
	} `json:"_meta"`
}

// FastParseEntry is registry.ParseEntry's v0.1 path with goccy/go-json and a
// typed envelope. Entries it is not sure about go to registry.ParseEntry.
func FastParseEntry(raw []byte) (schema.Entry, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > registry.MaxEntryBytes || !utf8.Valid(raw) {
		return registry.ParseEntry(raw)
	}
	var env fastEnvelope
	if err := gojson.Unmarshal(raw, &env); err != nil || len(env.Server) == 0 || env.Server[0] != '{' || env.Meta.Official == nil {
		return registry.ParseEntry(raw)
	}
	var e schema.Entry
	if err := gojson.Unmarshal(env.Server, &e.Server); err != nil {
		return registry.ParseEntry(raw)
	}
	n := e.Server.Name
	if n == "" || len(n) < 3 || len(n) > 200 || !nameRE.MatchString(n) {
		return registry.ParseEntry(raw)
	}
	o := env.Meta.Official
	if o.PublishedAt == nil && o.IsLatest == nil { // snake_case or empty: ParseEntry reads both spellings
		return registry.ParseEntry(raw)
	}
	str := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	e.Meta.Status = str(o.Status)
	e.Meta.StatusMessage = str(o.StatusMessage)
	var ok bool
	if e.Meta.StatusChangedAt, ok = fastTime(str(o.StatusChangedAt)); !ok {
		return registry.ParseEntry(raw)
	}
	if e.Meta.PublishedAt, ok = fastTime(str(o.PublishedAt)); !ok {
		return registry.ParseEntry(raw)
	}
	if e.Meta.UpdatedAt, ok = fastTime(str(o.UpdatedAt)); !ok {
		return registry.ParseEntry(raw)
	}
	if o.IsLatest != nil {
		e.Meta.IsLatest = *o.IsLatest
	}
	switch e.Meta.Status {
	case "active", "deprecated", "deleted":
	default:
		e.Meta.Status = ""
	}
	var compact bytes.Buffer
	compact.Grow(len(env.Server))
	if err := json.Compact(&compact, env.Server); err != nil {
		return registry.ParseEntry(raw)
	}
	e.Raw = compact.Bytes()
	e.ContentSHA256 = contentHash(e.Raw, &e.Meta)
	return e, nil
}

// fastTime parses RFC 3339 only; ok is false for anything else (the caller
// falls back to ParseEntry's lenient layouts).
func fastTime(s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	return t.UTC(), err == nil
}

// contentHash is registry's content hash (ingest/registry/parse.go).
func contentHash(server []byte, m *schema.OfficialMeta) string {
	h := sha256.New()
	h.Write(server)
	fmt.Fprintf(h, "\x00%s\x00%s\x00%t\x00%s\x00%s\x00%s", m.Status, m.StatusMessage, m.IsLatest,
		fmtTime(m.PublishedAt), fmtTime(m.UpdatedAt), fmtTime(m.StatusChangedAt))
	return hex.EncodeToString(h.Sum(nil))
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
