// Package duckdb is the embedded store: the store.Store contract on a DuckDB
// file under ./data (github.com/duckdb/duckdb-go/v2), used by `forum run`.
//
// In: batches of registry records, drift events, snapshot summaries, dead
// letters and health checks from the sink processor, and what the
// processors conclude (store.ResultStore, results.go). Out: the API's reads
// (latest view, version history, events, snapshots, DLQ, health history,
// counts, results), whole-table reads for its read models
// (store.BulkReader, bulk.go) and analysts' read-only SQL (Query, over the
// tables and the *_v views of migrations 0003, 0007, 0008, 0009 and 0012). The
// DDL lives in migrations/*.sql, embedded and applied in order, each
// recorded in schema_migrations.
//
// Idempotency: the histories (health checks, drift events, GitHub
// observations, the processors' results; migration 0012) are append-only:
// each write appends its rows with DuckDB's appender, tagged with the
// write's _seq, and every read keeps one row per key (history.go) — no
// index is probed on the write path, as on ClickHouse's ReplacingMergeTree.
// The other tables are keyed: primary keys and INSERT … ON CONFLICT DO
// UPDATE with a WHERE clause that encodes the winner rule of sql/store
// (earliest observation per record key in registry_records and the latest
// in registry_sightings, the greatest (observed_at, published_at, version,
// content_sha256) per server for servers_latest, last write per id for the
// rest). A batch is first reduced with the same rules in Go
// (store.ReduceRecords, store.LastByID, …), then written in one
// transaction (Store.write; WriteBatch puts a sink's whole batch, every
// table, in one).
//
// Times are TIMESTAMP columns holding UTC truncated to the millisecond.
package duckdb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/duckdb/duckdb-go/v2"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Store is the DuckDB implementation of store.Store and store.Querier.
type Store struct {
	db  *sql.DB
	log *zap.Logger

	// nonce and changes make ChangeMarker (bulk.go).
	nonce   string
	changes atomic.Uint64

	// seq is the last _seq handed out (history.go, nextSeq).
	seqMu     sync.Mutex
	seq       int64
	seqLoaded bool
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Querier = (*Store)(nil)
)

// Open opens (creating if needed) the DuckDB database file at path. It does
// not create tables: call Migrate.
func Open(ctx context.Context, path string, log *zap.Logger) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	dsn, err := withDefaults(path)
	if err != nil {
		return nil, fmt.Errorf("duckdb: open %s: %w", path, err)
	}
	db, err := sql.Open("duckdb", dsn)
	if err != nil {
		return nil, fmt.Errorf("duckdb: open %s: %w", path, err)
	}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: open %s: %w", path, err)
	}
	return &Store{db: db, log: log.With(zap.String("store", "duckdb")), nonce: newNonce()}, nil
}

// DefaultMemoryLimit is DuckDB's memory_limit unless the path sets its own
// ("…?memory_limit=2GB" keeps its value; forum's --duckdb-memory-limit
// passes one that way). DuckDB's default is 80 % of RAM, and its buffer
// pool caches table data up to that, so an embedded run's resident memory
// would grow with the history (bench/PIPELINE.md measured 0.8 GB of DuckDB
// cache after one day). Past the limit DuckDB evicts or spills to its temp
// directory instead. 384 MB and not more: the embedded pipeline's peak is
// this pool plus a checkpoint plus the Go heap, and 512 MB took a month of
// history to 1.6 GB; 256 MB spilled enough to cost 14 % of the events/s
// (bench/PIPELINE.md).
const DefaultMemoryLimit = "384MB"

// DefaultCheckpointThreshold is DuckDB's checkpoint_threshold unless the
// path sets its own: the WAL size past which a commit also checkpoints
// (writes the changed row groups, compressed, into the database file).
// DuckDB's default, 16 MB, is about one sink batch of health checks
// (10,000 × ~1.6 KB of check JSON), so every batch checkpointed and
// rewrote the table's open row group: 34 of the 40 s of a day's history
// (bench/README.md). At 1 GB a checkpoint comes every ~60 batches; the
// cost is a longer WAL to replay after a crash (seconds) and that much
// more disk until the checkpoint.
const DefaultCheckpointThreshold = "1GB"

// DefaultThreads is DuckDB's threads (worker threads) unless the path sets
// its own (forum's --duckdb-threads). DuckDB's default is one per core, and
// a checkpoint then compresses a row group per thread, each holding ~200 MB
// of check JSON while it does: measured on the embedded pipeline, one
// thread took the peak resident memory from ~1.6 GB to ~1.4 GB at the same
// events/s (the writer is one connection either way; the other core is
// busy with the broker and the stages). More threads speed up large
// analyst queries on a machine with memory to spare.
const DefaultThreads = "1"

// withDefaults adds DefaultMemoryLimit, DefaultCheckpointThreshold and
// DefaultThreads to a DuckDB path's options where it sets none of its own.
func withDefaults(path string) (string, error) {
	file, query, _ := strings.Cut(path, "?")
	opts, err := url.ParseQuery(query)
	if err != nil {
		return "", fmt.Errorf("options %q: %w", query, err)
	}
	for k, v := range map[string]string{"memory_limit": DefaultMemoryLimit, "checkpoint_threshold": DefaultCheckpointThreshold, "threads": DefaultThreads} {
		if !opts.Has(k) {
			opts.Set(k, v)
		}
	}
	return file + "?" + opts.Encode(), nil
}

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("duckdb: close: %w", err)
	}
	return nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("duckdb: ping: %w", err)
	}
	return nil
}

// migration is one embedded migrations/NNNN_name.sql file.
type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations() ([]migration, error) {
	ents, err := fs.ReadDir(migrations, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read migrations: %w", err)
	}
	var ms []migration
	for _, e := range ents {
		n := e.Name()
		num, rest, ok := strings.Cut(strings.TrimSuffix(n, ".sql"), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must be NNNN_name.sql", n)
		}
		b, err := migrations.ReadFile("migrations/" + n)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", n, err)
		}
		ms = append(ms, migration{version: v, name: rest, sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// Migrate applies the embedded migrations not yet recorded in
// schema_migrations, each in its own transaction.
func (s *Store) Migrate(ctx context.Context) error { return s.migrate(ctx, math.MaxInt) }

// migrate applies the migrations up to version upTo (tests stop early to
// build a store as an older release left it).
func (s *Store) migrate(ctx context.Context, upTo int) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("duckdb: migrate: %w", err)
	}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    INTEGER   NOT NULL PRIMARY KEY,
		name       VARCHAR   NOT NULL,
		applied_at TIMESTAMP NOT NULL)`); err != nil {
		return fmt.Errorf("duckdb: migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := s.db.QueryContext(ctx, `SELECT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("duckdb: migrate: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v int
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("duckdb: migrate: read schema_migrations: %w", err)
		}
		applied[v] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("duckdb: migrate: read schema_migrations: %w", err)
	}
	changed := false
	for _, m := range ms {
		if applied[m.version] || m.version > upTo {
			continue
		}
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, m.sql); err != nil {
				return err
			}
			_, err := tx.ExecContext(ctx, `INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)`,
				m.version, m.name, store.Millis(time.Now()))
			return err
		})
		if err != nil {
			return fmt.Errorf("duckdb: migration %04d_%s: %w", m.version, m.name, err)
		}
		s.log.Info("applied migration", zap.Int("version", m.version), zap.String("name", m.name))
		changed = true
	}
	if changed {
		// Checkpoint the new schema into the database file: a process
		// killed before its first checkpoint would otherwise leave views in
		// the WAL, and DuckDB fails to replay CREATE VIEW from a WAL
		// ("GetDefaultDatabase with no default database set").
		if _, err := s.db.ExecContext(ctx, `CHECKPOINT`); err != nil {
			return fmt.Errorf("duckdb: migrate: checkpoint: %w", err)
		}
	}
	return nil
}

func (s *Store) inTx(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := f(tx); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// batch is one table's share of a write: its rows (each len(cols) values,
// keys already unique) and, for a keyed table, the ON CONFLICT clause that
// merges them. A batch without one is a history (history.go): its rows are
// appended, each with the write's _seq.
type batch struct {
	table    string
	cols     []string
	rows     [][]any
	conflict string
}

// write applies batches in one transaction on one connection: one commit
// (WAL write and fsync) for all of them. Keyed rows go through a DuckDB
// query appender: they are staged in its temporary table appended_data
// (columns col1…colN) and merged with INSERT … SELECT … ON CONFLICT, which
// is much faster than binding parameters of multi-row INSERT statements.
// History rows go through a plain appender straight into their table.
func (s *Store) write(ctx context.Context, batches ...batch) (err error) {
	var seq int64
	for _, b := range batches {
		if b.conflict == "" && len(b.rows) > 0 {
			if seq, err = s.nextSeq(ctx); err != nil {
				return err
			}
			break
		}
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN TRANSACTION`); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		end := `COMMIT`
		if err != nil {
			end = `ROLLBACK`
		}
		if _, cerr := conn.ExecContext(context.WithoutCancel(ctx), end); cerr != nil {
			err = errors.Join(err, fmt.Errorf("%s: %w", strings.ToLower(end), cerr))
		}
	}()
	for _, b := range batches {
		if len(b.rows) == 0 {
			continue
		}
		err := conn.Raw(func(dc any) error {
			dconn, ok := dc.(driver.Conn)
			if !ok {
				return fmt.Errorf("unexpected driver connection %T", dc)
			}
			if b.conflict == "" {
				return appendRows(dconn, b.table, b.cols, b.rows, seq)
			}
			sel := make([]string, len(b.cols))
			for i := range b.cols {
				sel[i] = "col" + strconv.Itoa(i+1)
			}
			query := fmt.Sprintf("INSERT INTO %s (%s) SELECT %s FROM appended_data %s",
				b.table, strings.Join(b.cols, ", "), strings.Join(sel, ", "), b.conflict)
			a, err := duckdb.NewTableAppender(dconn, query, "", "", b.table, b.cols)
			if err != nil {
				return err
			}
			vals := make([]driver.Value, len(b.cols))
			for _, r := range b.rows {
				for i, v := range r {
					vals[i] = v
				}
				if err := a.AppendRow(vals...); err != nil {
					return errors.Join(err, a.Close())
				}
			}
			return a.Close()
		})
		if err != nil {
			return fmt.Errorf("insert into %s: %w", b.table, err)
		}
	}
	return nil
}

// setAll is the DO UPDATE SET list replacing every non-key column.
func setAll(cols []string, keys ...string) string {
	var sets []string
	for _, c := range cols {
		if !contains(keys, c) {
			sets = append(sets, c+" = excluded."+c)
		}
	}
	return strings.Join(sets, ", ")
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

var recordCols = []string{"name", "version", "content_sha256", "namespace", "observed_at", "snapshot_id",
	"status", "is_latest", "published_at", "updated_at", "description", "title", "server"}

var sightingCols = []string{"name", "version", "content_sha256", "last_observed_at"}

func recordArgs(r store.Record) []any {
	return []any{r.Name, r.Version, r.ContentSHA256, r.Namespace, store.Millis(r.ObservedAt), r.SnapshotID,
		r.Status, r.IsLatest, store.Millis(r.PublishedAt), store.Millis(r.UpdatedAt), r.Description, r.Title, r.Server}
}

// differs is true when the incoming row (excluded) differs from the stored
// one in a non-key column: on a tie the later write wins, but rewriting an
// identical row (a replay) is skipped, which keeps replays cheap.
func differs(table string, cols []string, keys ...string) string {
	var ds []string
	for _, c := range cols {
		if !contains(keys, c) {
			ds = append(ds, "excluded."+c+" <> "+table+"."+c)
		}
	}
	return "(" + strings.Join(ds, " OR ") + ")"
}

// The winner rules of store.EarlierRecord and store.NewerLatest in SQL
// (excluded is the incoming row).
var (
	recordsConflict = "ON CONFLICT (name, version, content_sha256) DO UPDATE SET " +
		setAll(recordCols, "name", "version", "content_sha256") +
		" WHERE excluded.observed_at < registry_records.observed_at OR (excluded.observed_at = registry_records.observed_at AND " +
		differs("registry_records", recordCols, "name", "version", "content_sha256", "observed_at") + ")"
	sightingsConflict = "ON CONFLICT (name, version, content_sha256) DO UPDATE SET last_observed_at = excluded.last_observed_at" +
		" WHERE excluded.last_observed_at > registry_sightings.last_observed_at"
	latestConflict = "ON CONFLICT (name) DO UPDATE SET " + setAll(recordCols, "name") + ` WHERE
		excluded.observed_at > servers_latest.observed_at OR (excluded.observed_at = servers_latest.observed_at AND (
		excluded.published_at > servers_latest.published_at OR (excluded.published_at = servers_latest.published_at AND (
		excluded.version > servers_latest.version OR (excluded.version = servers_latest.version AND (
		excluded.content_sha256 > servers_latest.content_sha256 OR (excluded.content_sha256 = servers_latest.content_sha256 AND ` +
		differs("servers_latest", recordCols, "name", "observed_at", "published_at", "version", "content_sha256") + `)))))))`
)

// idConflict merges a table keyed by id: the last write wins, identical rows are skipped.
func idConflict(table string, cols []string) string {
	return "ON CONFLICT (id) DO UPDATE SET " + setAll(cols, "id") + " WHERE " + differs(table, cols, "id")
}

// recordBatches are the registry_records, registry_sightings and
// servers_latest rows of recs.
func recordBatches(recs []store.Record) []batch {
	rows, latest := store.ReduceRecords(recs)
	sightings := mapArgs(store.LastSightings(recs), func(r store.Record) []any {
		return []any{r.Name, r.Version, r.ContentSHA256, store.Millis(r.ObservedAt)}
	})
	return []batch{{"registry_records", recordCols, mapArgs(rows, recordArgs), recordsConflict},
		{"registry_sightings", sightingCols, sightings, sightingsConflict},
		{"servers_latest", recordCols, mapArgs(latest, recordArgs), latestConflict}}
}

// InsertRecords stores registry observations and updates the latest view,
// in one transaction.
func (s *Store) InsertRecords(ctx context.Context, recs []store.Record) error {
	if len(recs) == 0 {
		return nil
	}
	if err := s.write(ctx, recordBatches(recs)...); err != nil {
		return fmt.Errorf("duckdb: insert records: %w", err)
	}
	s.changed()
	return nil
}

func mapArgs[T any](xs []T, f func(T) []any) [][]any {
	out := make([][]any, len(xs))
	for i, x := range xs {
		out[i] = f(x)
	}
	return out
}

var eventCols = []string{"id", "server", "namespace", "kind", "version", "before", "after", "observed_at", "version_bump", "snapshot_id"}

// eventBatch appends drift events (a history; the last write of an id wins).
func eventBatch(evs []schema.DriftEvent) batch {
	evs = store.LastByID(evs, func(e schema.DriftEvent) string { return e.ID })
	return batch{"drift_events", eventCols, mapArgs(evs, func(e schema.DriftEvent) []any {
		return []any{e.ID, e.Server, e.Namespace, e.Kind, e.Version, e.Before, e.After, store.Millis(e.ObservedAt), e.VersionBump, e.SnapshotID}
	}), ""}
}

// InsertEvents stores drift events; the last write of an id wins.
func (s *Store) InsertEvents(ctx context.Context, evs []schema.DriftEvent) error {
	if len(evs) == 0 {
		return nil
	}
	if err := s.write(ctx, eventBatch(evs)); err != nil {
		return fmt.Errorf("duckdb: insert events: %w", err)
	}
	s.changed()
	return nil
}

var snapshotCols = []string{"id", "mode", "source", "observed_at", "entries", "names", "known_names", "rejects", "partial", "events", "counts"}

// snapshotBatch upserts snapshot summaries (the last write of an id wins).
func snapshotBatch(snaps []schema.SnapshotSummary) (batch, error) {
	snaps = store.LastByID(snaps, func(x schema.SnapshotSummary) string { return x.ID })
	rows := make([][]any, len(snaps))
	for i, x := range snaps {
		counts, err := json.Marshal(x.Counts)
		if err != nil {
			return batch{}, fmt.Errorf("counts of %s: %w", x.ID, err)
		}
		rows[i] = []any{x.ID, x.Mode, x.Source, store.Millis(x.ObservedAt), int64(x.Entries), int64(x.Names),
			int64(x.KnownNames), int64(x.Rejects), x.Partial, int64(x.Events), string(counts)}
	}
	return batch{"snapshots", snapshotCols, rows, idConflict("snapshots", snapshotCols)}, nil
}

// InsertSnapshots stores snapshot summaries; the last write of an id wins.
func (s *Store) InsertSnapshots(ctx context.Context, snaps []schema.SnapshotSummary) error {
	if len(snaps) == 0 {
		return nil
	}
	b, err := snapshotBatch(snaps)
	if err == nil {
		err = s.write(ctx, b)
	}
	if err != nil {
		return fmt.Errorf("duckdb: insert snapshots: %w", err)
	}
	s.changed()
	return nil
}

var dlqCols = []string{"id", "stage", "source", "reason", "detail", "key", "observed_at", "payload", "payload_bytes", "payload_sha256"}

// dlqBatch upserts dead letters (the last write of an id wins).
func dlqBatch(msgs []schema.DLQMessage) batch {
	msgs = store.LastByID(msgs, func(m schema.DLQMessage) string { return m.ID })
	return batch{"dlq", dlqCols, mapArgs(msgs, func(m schema.DLQMessage) []any {
		return []any{m.ID, m.Stage, m.Source, m.Reason, m.Detail, m.Key, store.Millis(m.ObservedAt), m.Payload, int64(m.PayloadBytes), m.PayloadSHA256}
	}), idConflict("dlq", dlqCols)}
}

// InsertDLQ stores dead letters; the last write of an id wins.
func (s *Store) InsertDLQ(ctx context.Context, msgs []schema.DLQMessage) error {
	if len(msgs) == 0 {
		return nil
	}
	if err := s.write(ctx, dlqBatch(msgs)); err != nil {
		return fmt.Errorf("duckdb: insert dlq: %w", err)
	}
	return nil
}

var healthCols = []string{"id", "server", "remote_url", "observed_at", "transport", "outcome", "error_class",
	"http_status", "latency_ms", "auth_kind", "protocol_version", "tool_count", "tools_listed", "check_json"}

// healthBatch appends probe results (a history; the last write of an id wins).
func healthBatch(checks []store.HealthCheck) batch {
	checks = store.LastByID(checks, func(c store.HealthCheck) string { return c.ID })
	return batch{"health_checks", healthCols, mapArgs(checks, func(c store.HealthCheck) []any {
		return []any{c.ID, c.Server, c.RemoteURL, store.Millis(c.ObservedAt), c.Transport, c.Outcome, c.ErrorClass,
			int32(c.HTTPStatus), c.LatencyMS, c.AuthKind, c.ProtocolVersion, int32(c.ToolCount), c.ToolsListed, c.Check}
	}), ""}
}

// InsertHealthChecks stores probe results; the last write of an id wins.
func (s *Store) InsertHealthChecks(ctx context.Context, checks []store.HealthCheck) error {
	if len(checks) == 0 {
		return nil
	}
	if err := s.write(ctx, healthBatch(checks)); err != nil {
		return fmt.Errorf("duckdb: insert health checks: %w", err)
	}
	return nil
}

func scanHealth(rows *sql.Rows) ([]store.HealthCheck, error) {
	defer rows.Close()
	out := []store.HealthCheck{} // empty, not nil, when nothing matches
	for rows.Next() {
		var c store.HealthCheck
		var status, tools int32
		if err := rows.Scan(&c.ID, &c.Server, &c.RemoteURL, &c.ObservedAt, &c.Transport, &c.Outcome, &c.ErrorClass,
			&status, &c.LatencyMS, &c.AuthKind, &c.ProtocolVersion, &tools, &c.ToolsListed, &c.Check); err != nil {
			return nil, err
		}
		c.ObservedAt, c.HTTPStatus, c.ToolCount = c.ObservedAt.UTC(), int(status), int(tools)
		out = append(out, c)
	}
	return out, rows.Err()
}

var healthSelect = strings.Join(healthCols, ", ")

// serverHealth is one server's health history, one row per id (the last
// write): health_checks is append-only (history.go).
var serverHealth = `(SELECT ` + healthSelect + ` FROM health_checks WHERE server = ?` + dedup("id") + `)`

// HealthChecks returns a server's checks newest first (ties: id descending).
func (s *Store) HealthChecks(ctx context.Context, q store.HealthQuery) ([]store.HealthCheck, error) {
	if q.Server == "" {
		return nil, fmt.Errorf("duckdb: health checks: %w", store.ErrServerRequired)
	}
	var since any // NULL: no lower bound
	if !q.Since.IsZero() {
		since = store.Millis(q.Since)
	}
	// The since filter applies to the last write of each id, so it comes
	// after the deduplication; server may come before it (an id is one
	// server's: probe.CheckID).
	rows, err := s.db.QueryContext(ctx, `SELECT `+healthSelect+` FROM `+serverHealth+`
		WHERE (?::TIMESTAMP IS NULL OR observed_at >= ?::TIMESTAMP)
		ORDER BY observed_at DESC, id DESC LIMIT ?`,
		q.Server, since, since, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: health checks of %q: %w", q.Server, err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: health checks of %q: %w", q.Server, err)
	}
	return out, nil
}

// LatestHealth returns, per remote URL of a server, the check with the
// greatest (observed_at, id), ordered by remote URL.
func (s *Store) LatestHealth(ctx context.Context, server string) ([]store.HealthCheck, error) {
	if server == "" {
		return nil, fmt.Errorf("duckdb: latest health: %w", store.ErrServerRequired)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+healthSelect+` FROM `+serverHealth+`
		QUALIFY row_number() OVER (PARTITION BY remote_url ORDER BY observed_at DESC, id DESC) = 1
		ORDER BY remote_url`, server)
	if err != nil {
		return nil, fmt.Errorf("duckdb: latest health of %q: %w", server, err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: latest health of %q: %w", server, err)
	}
	return out, nil
}

var recordSelect = strings.Join(recordCols, ", ")

func scanRecords(rows *sql.Rows) ([]store.Record, error) {
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		var r store.Record
		if err := rows.Scan(&r.Name, &r.Version, &r.ContentSHA256, &r.Namespace, &r.ObservedAt, &r.SnapshotID,
			&r.Status, &r.IsLatest, &r.PublishedAt, &r.UpdatedAt, &r.Description, &r.Title, &r.Server); err != nil {
			return nil, err
		}
		r.ObservedAt, r.PublishedAt, r.UpdatedAt = r.ObservedAt.UTC(), r.PublishedAt.UTC(), r.UpdatedAt.UTC()
		r.LastObservedAt = r.ObservedAt // the latest view's observation is its most recent
		out = append(out, r)
	}
	return out, rows.Err()
}

// ListServers pages over the latest view ordered by name.
// LatestEntries pages over the latest view as registry entries
// (store.LatestEntries).
func (s *Store) LatestEntries(ctx context.Context, after string, limit int) ([]schema.Entry, string, error) {
	return store.LatestEntries(ctx, s, after, limit)
}

func (s *Store) ListServers(ctx context.Context, q store.ListQuery) ([]store.ServerRow, error) {
	// Two statements, not one with "(? = '' OR namespace = ?)": DuckDB
	// cannot push that disjunction into the scan, and the pages of a
	// whole-registry walk (store.LatestAsOf) each scanned every row.
	query, args := `SELECT `+recordSelect+` FROM servers_latest WHERE name > ? ORDER BY name LIMIT ?`,
		[]any{q.Cursor, store.ClampLimit(q.Limit, store.MaxListLimit)}
	if q.Namespace != "" {
		query, args = `SELECT `+recordSelect+` FROM servers_latest WHERE name > ? AND namespace = ? ORDER BY name LIMIT ?`,
			[]any{q.Cursor, q.Namespace, store.ClampLimit(q.Limit, store.MaxListLimit)}
	}
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: list servers: %w", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: list servers: %w", err)
	}
	out := make([]store.ServerRow, len(recs))
	for i, r := range recs {
		out[i] = store.ServerRow{Record: r}
	}
	return out, nil
}

// GetServer returns the latest entry of one server, or store.ErrNotFound.
func (s *Store) GetServer(ctx context.Context, name string) (store.ServerRow, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+recordSelect+` FROM servers_latest WHERE name = ?`, name)
	if err != nil {
		return store.ServerRow{}, fmt.Errorf("duckdb: get server %q: %w", name, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return store.ServerRow{}, fmt.Errorf("duckdb: get server %q: %w", name, err)
	}
	if len(recs) == 0 {
		return store.ServerRow{}, fmt.Errorf("duckdb: get server %q: %w", name, store.ErrNotFound)
	}
	return store.ServerRow{Record: recs[0]}, nil
}

// historySelect reads registry_records with each row's most recent
// sighting (its first observation when registry_sightings has none), in
// Versions' order; %s is the WHERE clause.
const historySelect = `SELECT r.name, r.version, r.content_sha256, r.namespace, r.observed_at, r.snapshot_id, r.status,
	r.is_latest, r.published_at, r.updated_at, r.description, r.title, %s,
	greatest(coalesce(g.last_observed_at, r.observed_at), r.observed_at)
	FROM registry_records r LEFT JOIN registry_sightings g USING (name, version, content_sha256)
	%s ORDER BY r.name, r.observed_at DESC, r.version DESC, r.content_sha256 DESC`

func scanHistory(rows *sql.Rows, withServer bool) (store.Record, error) {
	var r store.Record
	var server any = &r.Server
	if !withServer {
		server = new(any)
	}
	if err := rows.Scan(&r.Name, &r.Version, &r.ContentSHA256, &r.Namespace, &r.ObservedAt, &r.SnapshotID,
		&r.Status, &r.IsLatest, &r.PublishedAt, &r.UpdatedAt, &r.Description, &r.Title, server, &r.LastObservedAt); err != nil {
		return r, err
	}
	r.ObservedAt, r.LastObservedAt = r.ObservedAt.UTC(), r.LastObservedAt.UTC()
	r.PublishedAt, r.UpdatedAt = r.PublishedAt.UTC(), r.UpdatedAt.UTC()
	return r, nil
}

// VersionHistory returns a server's stored contents as sighted, newest
// first observation first (ties: version, then content hash, descending).
func (s *Store) VersionHistory(ctx context.Context, name string) ([]store.Record, error) {
	var out []store.Record
	err := s.query(ctx, func(rows *sql.Rows) error {
		r, err := scanHistory(rows, true)
		out = append(out, r)
		return err
	}, fmt.Sprintf(historySelect, "r.server", "WHERE r.name = ?")+` LIMIT ?`, name, store.MaxEventLimit)
	if err != nil {
		return nil, fmt.Errorf("duckdb: version history of %q: %w", name, err)
	}
	return out, nil
}

// VersionHistories is VersionHistory of many servers, 500 names a query
// (store.HistoriesReader).
func (s *Store) VersionHistories(ctx context.Context, names []string) (map[string][]store.Record, error) {
	out := make(map[string][]store.Record, len(names))
	for i := 0; i < len(names); i += 500 {
		chunk := names[i:min(i+500, len(names))]
		args := make([]any, len(chunk))
		for j, n := range chunk {
			args[j] = n
		}
		where := "WHERE r.name IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + ")"
		err := s.query(ctx, func(rows *sql.Rows) error {
			r, err := scanHistory(rows, true)
			if len(out[r.Name]) < store.MaxEventLimit { // VersionHistory's LIMIT, per server
				out[r.Name] = append(out[r.Name], r)
			}
			return err
		}, fmt.Sprintf(historySelect, "r.server", where), args...)
		if err != nil {
			return nil, fmt.Errorf("duckdb: version histories of %d servers: %w", len(chunk), err)
		}
	}
	return out, nil
}

// Versions returns a server's stored contents in VersionHistory's order,
// with the flags served from each version's most recent sighting
// (store.ServeVersions).
func (s *Store) Versions(ctx context.Context, name string, limit int) ([]store.Record, error) {
	hist, err := s.VersionHistory(ctx, name)
	if err != nil {
		return nil, err
	}
	out := store.ServeVersions(hist)
	return out[:min(len(out), store.ClampLimit(limit, store.MaxEventLimit))], nil
}

// Events returns drift events oldest first (ties by id).
func (s *Store) Events(ctx context.Context, q store.EventQuery) ([]schema.DriftEvent, error) {
	var since any // NULL: no lower bound
	if !q.Since.IsZero() {
		since = store.Millis(q.Since)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(eventCols, ", ")+` FROM drift_events_v
		WHERE (? = '' OR server = ?) AND (? = '' OR kind = ?) AND (?::TIMESTAMP IS NULL OR observed_at >= ?::TIMESTAMP)
		ORDER BY observed_at, id LIMIT ?`,
		q.Server, q.Server, q.Kind, q.Kind, since, since, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: events: %w", err)
	}
	defer rows.Close()
	var out []schema.DriftEvent
	for rows.Next() {
		var e schema.DriftEvent
		if err := rows.Scan(&e.ID, &e.Server, &e.Namespace, &e.Kind, &e.Version, &e.Before, &e.After,
			&e.ObservedAt, &e.VersionBump, &e.SnapshotID); err != nil {
			return nil, fmt.Errorf("duckdb: events: %w", err)
		}
		e.ObservedAt = e.ObservedAt.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: events: %w", err)
	}
	return out, nil
}

// EventCounts returns the number of stored drift events per kind.
func (s *Store) EventCounts(ctx context.Context) (map[string]int64, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT kind, count(*) FROM drift_events_v GROUP BY kind`)
	if err != nil {
		return nil, fmt.Errorf("duckdb: event counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("duckdb: event counts: %w", err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: event counts: %w", err)
	}
	return out, nil
}

// Snapshots returns applied snapshots oldest first (ties by id).
func (s *Store) Snapshots(ctx context.Context) ([]schema.SnapshotSummary, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(snapshotCols, ", ")+` FROM snapshots ORDER BY observed_at, id`)
	if err != nil {
		return nil, fmt.Errorf("duckdb: snapshots: %w", err)
	}
	defer rows.Close()
	var out []schema.SnapshotSummary
	for rows.Next() {
		var x schema.SnapshotSummary
		var entries, names, known, rejects, events int64
		var counts string
		if err := rows.Scan(&x.ID, &x.Mode, &x.Source, &x.ObservedAt, &entries, &names, &known, &rejects,
			&x.Partial, &events, &counts); err != nil {
			return nil, fmt.Errorf("duckdb: snapshots: %w", err)
		}
		x.ObservedAt = x.ObservedAt.UTC()
		x.Entries, x.Names, x.KnownNames, x.Rejects, x.Events = int(entries), int(names), int(known), int(rejects), int(events)
		if err := json.Unmarshal([]byte(counts), &x.Counts); err != nil {
			return nil, fmt.Errorf("duckdb: snapshots: counts of %s: %w", x.ID, err)
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: snapshots: %w", err)
	}
	return out, nil
}

// DLQ returns dead letters oldest first (ties by id), at most limit rows.
func (s *Store) DLQ(ctx context.Context, limit int) ([]schema.DLQMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(dlqCols, ", ")+` FROM dlq ORDER BY observed_at, id LIMIT ?`,
		store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: dlq: %w", err)
	}
	defer rows.Close()
	var out []schema.DLQMessage
	for rows.Next() {
		var m schema.DLQMessage
		var n int64
		if err := rows.Scan(&m.ID, &m.Stage, &m.Source, &m.Reason, &m.Detail, &m.Key, &m.ObservedAt,
			&m.Payload, &n, &m.PayloadSHA256); err != nil {
			return nil, fmt.Errorf("duckdb: dlq: %w", err)
		}
		m.ObservedAt, m.PayloadBytes = m.ObservedAt.UTC(), int(n)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: dlq: %w", err)
	}
	return out, nil
}

// Tables are the logical tables Counts reports.
var Tables = []string{"registry_records", "servers_latest", "drift_events", "snapshots", "dlq", "health_checks", "provenance", "publications"}

// Counts returns row counts per logical table.
func (s *Store) Counts(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(Tables))
	for _, t := range Tables {
		from := t
		switch t {
		case "drift_events", "health_checks", "provenance":
			from = t + "_v" // one row per id, as reads see it
		}
		var n int64
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM `+from).Scan(&n); err != nil {
			return nil, fmt.Errorf("duckdb: count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// Query runs one read-only statement for analysts (see store.Querier) inside
// a READ ONLY transaction on a dedicated connection, and returns its columns
// and rows. Values are the driver's Go types.
func (s *Store) Query(ctx context.Context, query string, args ...any) (cols []string, out [][]any, err error) {
	q, err := store.CheckReadOnlySQL(query)
	if err != nil {
		return nil, nil, fmt.Errorf("duckdb: query: %w", err)
	}
	conn, err := s.db.Conn(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("duckdb: query: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, `BEGIN TRANSACTION READ ONLY`); err != nil {
		return nil, nil, fmt.Errorf("duckdb: query: begin read-only: %w", err)
	}
	defer func() {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), `ROLLBACK`); rerr != nil && err == nil {
			err = fmt.Errorf("duckdb: query: rollback: %w", rerr)
		}
	}()
	rows, err := conn.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("duckdb: query: %w", err)
	}
	defer rows.Close()
	cols, err = rows.Columns()
	if err != nil {
		return nil, nil, fmt.Errorf("duckdb: query: %w", err)
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, fmt.Errorf("duckdb: query: %w", err)
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("duckdb: query: %w", err)
	}
	return cols, out, nil
}
