// Package registry reads the official MCP Registry: snapshot files (replay)
// and the live read API (crawler). What flows out is schema.Entry values, one
// per server version, and schema.DLQMessage values for input that could not
// be read, each with a reason code. Nothing read here is trusted: entries are
// size-bounded, UTF-8 checked and name-checked before they leave, at most
// MaxVersionsPerName versions of one server are taken from one listing, and
// errors quote bad input bounded, never whole. SnapshotStats.Whole says
// whether a listing is all its source held (read to its end, no entry lost
// to the DLQ for being unreadable): only then can it say what is gone.
//
// Two wire shapes are read, because the real corpus has both:
//   - legacy-v0 (to 2025-09-29): a flat server object with `status` at the top
//     and `_meta.io.modelcontextprotocol.registry/official` in snake_case or
//     camelCase;
//   - v0.1: `{"server": ServerDetail, "_meta": {...official: {...}}}`.
//
// Both are normalized to the v0.1 server object, so a format change alone is
// never read as a content change by the differ.
//
// Reading is two-tiered. ParseEntry and refRead (encoding/json's Decoder)
// are the reference: short, obviously right, and slow (~30 s for two
// 170k-record snapshots). ReadSnapshot runs a hand-written fast path
// (fastparse.go, fastread.go) that gives the same entries, dead letters and
// stats, ~30× faster: one pass per entry, entries parsed in GOMAXPROCS
// goroutines in bounded memory, and anything it is unsure of handed to the
// reference. Why by hand, and how equivalence is pinned (tests and fuzz
// tests comparing the two on the real, the bundled and the generated
// corpus, and on broken documents): see those files.
package registry

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"time"
	"unicode/utf8"

	"github.com/forum-mcp/forum/schema"
)

// MaxEntryBytes bounds one entry. The largest real entry in the corpus is
// ~37 KB; anything far past that is hostile or broken.
const MaxEntryBytes = 256 << 10

// MaxVersionsPerName bounds the versions of one server a snapshot or a crawl
// accepts. The real corpus's largest server has 66 versions (2025-11-28) and
// the live registry's a few hundred; the registry itself takes up to 10,000
// per name, so one publisher could otherwise flood every stage downstream
// (a snapshot with 10,000 versions of one name took 70 s end to end instead
// of 8). The excess goes to the DLQ (schema.ReasonTooManyVersions); the
// first entry marked latest past the bound is still taken, so the server's
// scored view survives.
const MaxVersionsPerName = 2000

// OfficialMetaKey is the registry's own metadata namespace.
const OfficialMetaKey = "io.modelcontextprotocol.registry/official"

// nameRE is the registry's server-name rule (SPEC §1.1), relaxed to allow
// further '/' in the part after the namespace: the registry accepted such
// names in 2025 (io.github.joelverhagen/Knapcode.SampleMcpServer/aot), and a
// real listing is never thrown away for the registry's own leniency.
var nameRE = regexp.MustCompile(`^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+(/[a-zA-Z0-9._-]+)*$`)

// RejectError is a bad entry: Reason is a schema.Reason* code.
type RejectError struct {
	Reason string
	Detail string
	Key    string // name@version when known
}

func (e *RejectError) Error() string {
	if e.Key != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Reason, e.Detail, e.Key)
	}
	return e.Reason + ": " + e.Detail
}

// reject builds a RejectError. Key and detail are bounded: both may quote
// the input (a name, a JSON error), which is never echoed whole.
func reject(reason, key, format string, args ...any) *RejectError {
	return &RejectError{Reason: reason, Key: schema.Bound(key, maxKeyBytes), Detail: schema.Bound(fmt.Sprintf(format, args...), maxDetailBytes)}
}

// Bounds of what an error or a dead letter's key quotes of the input.
const (
	maxKeyBytes    = 256
	maxDetailBytes = 512
)

// versionCounts applies MaxVersionsPerName: versions taken per name, with
// latestTaken set once an entry marked latest was taken.
type versionCounts map[string]uint32

const latestTaken = 1 << 31

// admit reports whether one more version of name may be taken, and counts
// it when it may.
func (vc versionCounts) admit(name string, isLatest bool) bool {
	c := vc[name]
	if c&^latestTaken >= MaxVersionsPerName && (!isLatest || c&latestTaken != 0) {
		return false
	}
	c++
	if isLatest {
		c |= latestTaken
	}
	vc[name] = c
	return true
}

// tooManyVersions is the dead letter's detail for a version over the bound.
func tooManyVersions(name string) string {
	return fmt.Sprintf("%s has more than %d versions in one listing; the rest go to the DLQ", schema.Bound(name, maxKeyBytes), MaxVersionsPerName)
}

// ReasonOf returns the reason code of err, or schema.ReasonMalformedJSON.
func ReasonOf(err error) string {
	var re *RejectError
	if errors.As(err, &re) {
		return re.Reason
	}
	return schema.ReasonMalformedJSON
}

// ParseEntry parses one registry entry in either wire shape. The error, when
// not nil, is a *RejectError.
func ParseEntry(raw []byte) (schema.Entry, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > MaxEntryBytes {
		return schema.Entry{}, reject(schema.ReasonEntryTooLarge, guessKey(raw), "entry is %d bytes, the bound is %d", len(raw), MaxEntryBytes)
	}
	if !utf8.Valid(raw) {
		return schema.Entry{}, reject(schema.ReasonInvalidUTF8, guessKey(raw), "entry holds bytes that are not UTF-8")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return schema.Entry{}, reject(schema.ReasonMalformedJSON, "", "entry is not a JSON object: %v", err)
	}
	var serverRaw []byte
	var metaHolder map[string]json.RawMessage
	var legacyStatus string
	if s, ok := top["server"]; ok && isObject(s) {
		serverRaw = s
		if m, ok := top["_meta"]; ok {
			_ = json.Unmarshal(m, &metaHolder) // a malformed _meta is read as absent
		}
	} else {
		// Legacy flat shape: the server object is the entry minus status and _meta.
		if m, ok := top["_meta"]; ok {
			_ = json.Unmarshal(m, &metaHolder)
		}
		if st, ok := top["status"]; ok {
			_ = json.Unmarshal(st, &legacyStatus)
		}
		flat := make(map[string]json.RawMessage, len(top))
		for k, v := range top {
			if k == "_meta" || k == "status" {
				continue
			}
			flat[k] = v
		}
		if vd, ok := top["version_detail"]; ok && top["version"] == nil {
			var d struct {
				Version string `json:"version"`
			}
			if json.Unmarshal(vd, &d) == nil && d.Version != "" {
				flat["version"], _ = json.Marshal(d.Version)
			}
		}
		b, err := json.Marshal(flat) // map keys marshal sorted: stable bytes
		if err != nil {
			return schema.Entry{}, reject(schema.ReasonMalformedJSON, "", "legacy entry: %v", err)
		}
		serverRaw = b
	}

	var e schema.Entry
	if err := json.Unmarshal(serverRaw, &e.Server); err != nil {
		// Fall back to the fields the pipeline cannot do without, so one oddly
		// typed optional field does not throw away a real server.
		var min struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Title       string `json:"title"`
			Version     string `json:"version"`
		}
		if err2 := json.Unmarshal(serverRaw, &min); err2 != nil {
			return schema.Entry{}, reject(schema.ReasonMalformedJSON, guessKey(raw), "server object: %v", err)
		}
		e.Server = schema.ServerDetail{Name: min.Name, Description: min.Description, Title: min.Title, Version: min.Version}
	}
	key := e.Server.Name + "@" + e.Server.Version
	if e.Server.Name == "" {
		return schema.Entry{}, reject(schema.ReasonMissingName, "", "entry has no name")
	}
	if len(e.Server.Name) < 3 || len(e.Server.Name) > 200 || !nameRE.MatchString(e.Server.Name) {
		return schema.Entry{}, reject(schema.ReasonInvalidName, key, "name %q does not match the registry's name rule", schema.Bound(e.Server.Name, 120))
	}

	e.Meta = parseMeta(metaHolder[OfficialMetaKey])
	if e.Meta.Status == "" {
		e.Meta.Status = legacyStatus
	}
	// The registry's status is an enum; anything else ("beta" in legacy
	// captures) is the publisher's word, not a lifecycle state: read as active.
	switch e.Meta.Status {
	case "active", "deprecated", "deleted":
	default:
		e.Meta.Status = ""
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, serverRaw); err != nil {
		return schema.Entry{}, reject(schema.ReasonMalformedJSON, key, "server object: %v", err)
	}
	e.Raw = compact.Bytes()
	e.ContentSHA256 = contentHash(e.Raw, &e.Meta)
	return e, nil
}

// contentHash covers the server object and the official metadata: a changed
// $schema or a flipped isLatest is new content even when updatedAt is not.
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

// parseMeta reads the official metadata in both spellings. Unreadable values
// are left zero: metadata is advisory, the entry itself is still good.
func parseMeta(raw json.RawMessage) schema.OfficialMeta {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil {
		return schema.OfficialMeta{}
	}
	str := func(keys ...string) string {
		for _, k := range keys {
			if v, ok := m[k]; ok {
				var s string
				if json.Unmarshal(v, &s) == nil {
					return s
				}
			}
		}
		return ""
	}
	var out schema.OfficialMeta
	out.Status = str("status")
	out.StatusMessage = str("statusMessage", "status_message")
	out.StatusChangedAt = parseTime(str("statusChangedAt", "status_changed_at"))
	out.PublishedAt = parseTime(str("publishedAt", "published_at"))
	out.UpdatedAt = parseTime(str("updatedAt", "updated_at"))
	for _, k := range []string{"isLatest", "is_latest"} {
		if v, ok := m[k]; ok {
			var b bool
			if json.Unmarshal(v, &b) == nil {
				out.IsLatest = b
				break
			}
		}
	}
	return out
}

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

func isObject(b []byte) bool {
	b = bytes.TrimSpace(b)
	return len(b) > 0 && b[0] == '{'
}

// guessKey pulls a name out of a bad entry for the DLQ key, best effort.
func guessKey(raw []byte) string {
	i := bytes.Index(raw, []byte(`"name"`))
	if i < 0 {
		return ""
	}
	rest := raw[i+6:]
	q1 := bytes.IndexByte(rest, '"')
	if q1 < 0 {
		return ""
	}
	rest = rest[q1+1:]
	q2 := bytes.IndexByte(rest, '"')
	if q2 < 0 || q2 > 200 {
		return ""
	}
	return schema.Bound(string(rest[:q2]), 200)
}
