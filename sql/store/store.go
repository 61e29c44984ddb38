// Package store defines the storage contract every engine implements
// (sql/duckdb for the embedded default, sql/clickhouse at scale) and the
// row types the API reads. The conformance suite in sql/store/storetest runs
// the same tests against every implementation.
//
// Contract, for every implementation:
//   - Writes are idempotent: inserting the same rows twice (at-least-once
//     delivery) leaves the same visible contents as inserting them once.
//     Drift events and DLQ rows are keyed by ID, snapshots by ID, registry
//     records by (name, version, content_sha256), the latest view by name.
//   - A write that returns nil is durable: the bus commits offsets after it.
//   - Reads never see duplicates, whatever merges have or have not run.
//   - Times are UTC with millisecond precision on every engine.
package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/forum-mcp/forum/schema"
)

// ErrNotFound is returned by single-row reads when nothing matches.
var ErrNotFound = errors.New("not found")

// ErrServerRequired is returned by HealthChecks and LatestHealth when no
// server is named (both read one server's history).
var ErrServerRequired = errors.New("a server name is required")

// Store is the storage used by the sink processor and the API.
type Store interface {
	// Migrate creates or upgrades the tables. Safe to call on every start.
	Migrate(ctx context.Context) error
	// Ping reports whether the store answers (readiness).
	Ping(ctx context.Context) error
	Close() error

	// InsertRecords stores registry observations. A record's row is keyed by
	// (name, version, content_sha256) and keeps the earliest ObservedAt; the
	// latest ObservedAt of the key is kept beside it (registry_sightings,
	// read as LastObservedAt). Records whose Meta.IsLatest is true also
	// update the latest view of their server when their ObservedAt is not
	// older than what it holds (ties broken by PublishedAt, then Version).
	InsertRecords(ctx context.Context, recs []Record) error
	InsertEvents(ctx context.Context, evs []schema.DriftEvent) error
	InsertSnapshots(ctx context.Context, snaps []schema.SnapshotSummary) error
	InsertDLQ(ctx context.Context, msgs []schema.DLQMessage) error

	// ListServers pages over the latest view ordered by name. Cursor is the
	// last name of the previous page ("" for the first page).
	ListServers(ctx context.Context, q ListQuery) ([]ServerRow, error)
	// LatestEntries pages over the latest view as registry entries
	// (LatestEntries below): the schema-typed read of ingest/.
	LatestEntries(ctx context.Context, after string, limit int) (entries []schema.Entry, next string, err error)
	// GetServer returns the latest entry of one server, or ErrNotFound.
	GetServer(ctx context.Context, name string) (ServerRow, error)
	// Versions returns every distinct stored content of a server's versions,
	// newest observation first, at most limit rows, with the flags served
	// from each version's most recent sighting (ServeVersions): a version
	// demoted by a later sighting is not latest, and at most one row is.
	Versions(ctx context.Context, name string, limit int) ([]Record, error)
	// VersionHistory returns every stored content of a server's versions as
	// it was sighted (its own flags, ObservedAt and LastObservedAt), in
	// Versions' order, at most MaxEventLimit rows: what the as-of rule
	// (LatestOfHistory) reads.
	VersionHistory(ctx context.Context, name string) ([]Record, error)
	// Events returns drift events, oldest first, filtered by q.
	Events(ctx context.Context, q EventQuery) ([]schema.DriftEvent, error)
	// EventCounts returns the number of stored drift events per kind.
	EventCounts(ctx context.Context) (map[string]int64, error)
	// Snapshots returns applied snapshots, oldest first.
	Snapshots(ctx context.Context) ([]schema.SnapshotSummary, error)
	// DLQ returns dead letters, oldest first, at most limit rows.
	DLQ(ctx context.Context, limit int) ([]schema.DLQMessage, error)
	// Counts returns row counts per logical table (for /metrics, tests, the CLI).
	Counts(ctx context.Context) (map[string]int64, error)

	// InsertHealthChecks stores probe results, keyed by ID (last write wins).
	// IDs are probe.CheckID(server, url, scheduled slot), so a redelivered
	// probe rewrites its ID with a later ObservedAt; ClickHouse keys rows
	// by (server, remote_url, observed_at, id), so an ID rewritten under
	// another server is not supported there (within a server it is).
	InsertHealthChecks(ctx context.Context, checks []HealthCheck) error
	// HealthChecks returns a server's checks, newest first (ties: ID
	// descending), filtered by q; an empty slice when none match, and
	// ErrServerRequired when q.Server is "".
	HealthChecks(ctx context.Context, q HealthQuery) ([]HealthCheck, error)
	// LatestHealth returns the newest check of every remote of a server
	// (one row per remote URL: the greatest (ObservedAt, ID), ordered by
	// remote URL), or an empty slice; ErrServerRequired when server is "".
	LatestHealth(ctx context.Context, server string) ([]HealthCheck, error)
}

// HealthCheck is one row of health_checks: the columns analysts query, plus
// the whole check as JSON (ingest/probe.Check) for the API and the scorers.
type HealthCheck struct {
	ID              string
	Server          string
	RemoteURL       string
	ObservedAt      time.Time
	Transport       string  // the transport used
	Outcome         string  // ok|auth_required|handshake_failed|unreachable|not_checked
	ErrorClass      string  // "" when none
	HTTPStatus      int     // 0 when no HTTP answer
	LatencyMS       float64 // initialize latency, 0 when never answered
	AuthKind        string  // none|oauth|static|unknown
	ProtocolVersion string
	ToolCount       int
	ToolsListed     bool
	Check           string // the whole check as JSON
}

// HealthQuery filters HealthChecks.
type HealthQuery struct {
	Server string    // required
	Since  time.Time // zero for all; inclusive
	Limit  int       // 1..MaxEventLimit
}

// Record is one stored registry observation.
type Record struct {
	Name          string
	Version       string
	Namespace     string
	ContentSHA256 string
	ObservedAt    time.Time // earliest observation of this content
	// LastObservedAt is the most recent observation of this content (not
	// before ObservedAt). In the latest view it equals ObservedAt, which
	// there is the winning content's most recent observation.
	LastObservedAt time.Time
	SnapshotID     string // the snapshot that first carried it
	Status         string // active|deprecated|deleted
	IsLatest       bool
	PublishedAt    time.Time // zero when the registry did not say
	UpdatedAt      time.Time
	Description    string
	Title          string
	Server         string // the server object as JSON (schema.Entry.Raw)
}

// RecordFromEntry builds the row for an entry observed in a snapshot.
func RecordFromEntry(e *schema.Entry, snapshotID string, observedAt time.Time) Record {
	return Record{
		Name:           e.Server.Name,
		Version:        e.Server.Version,
		Namespace:      e.Namespace(),
		ContentSHA256:  e.ContentSHA256,
		ObservedAt:     observedAt.UTC(),
		LastObservedAt: observedAt.UTC(),
		SnapshotID:     snapshotID,
		Status:         e.Status(),
		IsLatest:       e.Meta.IsLatest,
		PublishedAt:    e.Meta.PublishedAt.UTC(),
		UpdatedAt:      e.Meta.UpdatedAt.UTC(),
		Description:    e.Server.Description,
		Title:          e.Server.Title,
		Server:         string(e.Raw),
	}
}

// ServerRow is a server's latest entry (the latest view).
type ServerRow struct {
	Record
}

// ListQuery filters and pages ListServers.
type ListQuery struct {
	Namespace string // exact namespace, "" for all
	Cursor    string // names strictly greater than this
	Limit     int    // 1..1000
}

// EventQuery filters Events.
type EventQuery struct {
	Server string    // "" for all
	Kind   string    // "" for all
	Since  time.Time // zero for all; inclusive
	Limit  int       // 1..10000
}

// Limits applied by every implementation, so engines page identically.
const (
	DefaultLimit  = 100   // a non-positive limit means this
	MaxListLimit  = 1000  // ListServers
	MaxEventLimit = 10000 // Events, Versions, VersionHistory, DLQ
)

// ClampLimit returns n bounded to 1..max, with DefaultLimit (or max, when
// smaller) for n <= 0.
func ClampLimit(n, max int) int {
	switch {
	case n <= 0:
		return min(DefaultLimit, max)
	case n > max:
		return max
	}
	return n
}

// Querier is implemented by stores that answer analysts' ad-hoc SQL. Query
// runs one read-only statement (SELECT, WITH, SHOW, DESCRIBE, EXPLAIN) and
// returns its column names and rows; anything else fails with
// ErrNotReadOnly before it reaches the engine, and the engine itself is asked
// to refuse writes too (DuckDB: a read-only transaction; ClickHouse:
// readonly=1).
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (columns []string, rows [][]any, err error)
}

// ErrNotReadOnly is returned by Querier.Query for statements it refuses.
var ErrNotReadOnly = errors.New("only a single SELECT, WITH, SHOW, DESCRIBE or EXPLAIN statement is allowed")

// CheckReadOnlySQL accepts a single statement whose first keyword is SELECT,
// WITH, SHOW, DESCRIBE/DESC or EXPLAIN. Comments and one trailing semicolon
// are allowed; a semicolon outside quotes and comments anywhere else is not.
// It returns the statement without the trailing semicolon. It is a first
// line of defence only: the engines enforce read-only themselves.
func CheckReadOnlySQL(sql string) (string, error) {
	s := sql
	end := len(s) // end of the statement proper
	first := ""   // the first keyword
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return "", fmt.Errorf("%w: unterminated comment", ErrNotReadOnly)
			}
			i += j + 4
		case end != len(s) && !unicode.IsSpace(rune(c)):
			return "", fmt.Errorf("%w: more than one statement", ErrNotReadOnly)
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(s) && s[j] != c {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			if j >= len(s) {
				return "", fmt.Errorf("%w: unterminated quote", ErrNotReadOnly)
			}
			i = j + 1
		case c == ';':
			if end != len(s) {
				return "", fmt.Errorf("%w: more than one statement", ErrNotReadOnly)
			}
			end = i
			i++
		case first == "" && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'):
			j := i
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z' || s[j] == '_') {
				j++
			}
			first = strings.ToUpper(s[i:j])
			i = j
		default:
			if first == "" && !unicode.IsSpace(rune(c)) && c != '(' {
				return "", fmt.Errorf("%w: unexpected %q", ErrNotReadOnly, c)
			}
			i++
		}
	}
	switch first {
	case "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN":
		return strings.TrimSpace(s[:end]), nil
	case "":
		return "", fmt.Errorf("%w: empty statement", ErrNotReadOnly)
	}
	return "", fmt.Errorf("%w: got %s", ErrNotReadOnly, first)
}

// The functions below define, once for every engine, which row wins when a
// batch carries the same key more than once. Engines apply the same rule
// across batches (see each implementation), so the visible contents never
// depend on how rows were batched or merged.

// Millis truncates t to the millisecond in UTC: the precision every engine stores.
func Millis(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// EarlierRecord reports whether a should replace b as the stored row of their
// (name, version, content_sha256) key: the earliest ObservedAt wins, and on a
// tie the later write (a) wins.
func EarlierRecord(a, b Record) bool {
	return !Millis(a.ObservedAt).After(Millis(b.ObservedAt))
}

// NewerLatest reports whether a should replace b in the latest view of their
// server: a's (ObservedAt, PublishedAt, Version, ContentSHA256) is not smaller
// than b's. On a complete tie the later write (a) wins.
func NewerLatest(a, b Record) bool {
	if c := Millis(a.ObservedAt).Compare(Millis(b.ObservedAt)); c != 0 {
		return c > 0
	}
	if c := Millis(a.PublishedAt).Compare(Millis(b.PublishedAt)); c != 0 {
		return c > 0
	}
	if a.Version != b.Version {
		return a.Version > b.Version
	}
	return a.ContentSHA256 >= b.ContentSHA256
}

// ReduceRecords returns the rows a batch leaves in registry_records (one per
// key, by EarlierRecord) and in the latest view (one per server among the
// records with IsLatest, by NewerLatest), each in first-seen order.
func ReduceRecords(recs []Record) (rows, latest []Record) {
	type key struct{ name, version, sha string }
	byKey := make(map[key]int, len(recs))
	byName := make(map[string]int)
	for _, r := range recs {
		k := key{r.Name, r.Version, r.ContentSHA256}
		if i, ok := byKey[k]; !ok {
			byKey[k] = len(rows)
			rows = append(rows, r)
		} else if EarlierRecord(r, rows[i]) {
			rows[i] = r
		}
		if !r.IsLatest {
			continue
		}
		if i, ok := byName[r.Name]; !ok {
			byName[r.Name] = len(latest)
			latest = append(latest, r)
		} else if NewerLatest(r, latest[i]) {
			latest[i] = r
		}
	}
	return rows, latest
}

// LastByID keeps, for each id(x), the last element of xs (last write wins),
// in first-seen order.
func LastByID[T any](xs []T, id func(T) string) []T {
	at := make(map[string]int, len(xs))
	out := make([]T, 0, len(xs))
	for _, x := range xs {
		if i, ok := at[id(x)]; ok {
			out[i] = x
			continue
		}
		at[id(x)] = len(out)
		out = append(out, x)
	}
	return out
}

// EntryOf rebuilds the registry entry of a stored record (the latest view's
// rows are latest by construction, so IsLatest is set).
func EntryOf(r Record) (schema.Entry, error) {
	e := schema.Entry{Raw: json.RawMessage(r.Server), ContentSHA256: r.ContentSHA256,
		Meta: schema.OfficialMeta{Status: r.Status, PublishedAt: r.PublishedAt, UpdatedAt: r.UpdatedAt, IsLatest: true}}
	if err := json.Unmarshal([]byte(r.Server), &e.Server); err != nil {
		return e, fmt.Errorf("stored server object of %s: %w", r.Name, err)
	}
	if e.Server.Name == "" {
		e.Server.Name = r.Name
	}
	return e, nil
}

// LatestEntries pages over the latest view as registry entries (names
// strictly after `after`, at most limit, by name): what readers outside
// sql/ (the probe scheduler, the GitHub crawler's targets) need, in schema
// types only. next is the cursor of the following page, "" after the last.
// A row whose stored object no longer decodes is skipped (it decoded once,
// when it was stored).
func LatestEntries(ctx context.Context, s interface {
	ListServers(ctx context.Context, q ListQuery) ([]ServerRow, error)
}, after string, limit int) (entries []schema.Entry, next string, err error) {
	limit = ClampLimit(limit, MaxListLimit)
	rows, err := s.ListServers(ctx, ListQuery{Cursor: after, Limit: limit})
	if err != nil {
		return nil, "", err
	}
	entries = make([]schema.Entry, 0, len(rows))
	for _, r := range rows {
		if e, err := EntryOf(r.Record); err == nil {
			entries = append(entries, e)
		}
	}
	if len(rows) == limit {
		next = rows[len(rows)-1].Name
	}
	return entries, next, nil
}
