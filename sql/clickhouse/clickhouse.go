// Package clickhouse is the store at scale: the store.Store contract on
// ClickHouse over the native protocol (github.com/ClickHouse/clickhouse-go/v2),
// selected with --clickhouse-dsn.
//
// In: batches of registry records, drift events, snapshot summaries, dead
// letters and health checks from the sink processor, and what the
// processors conclude (store.ResultStore, results.go: drift, incident and
// provenance state, owner bursts, base rates, registry loads). Out: the
// API's reads, whole-table reads for its read models (store.BulkReader,
// bulk.go) and analysts' read-only SQL (Query, run with readonly=1, over the
// tables and the *_v views of migrations 0003, 0007, 0008 and 0009). The
// DDL lives in migrations/*.sql, embedded, applied in order and recorded in
// schema_migrations; an ALTER TABLE … ADD COLUMN runs only when the column
// is missing (18.16 has no IF NOT EXISTS there).
//
// The SQL runs on ClickHouse 18.16 (Debian's package, used by CI) and on
// current releases, which constrains it (see ARCHITECTURE.md): rows are
// written only with PrepareBatch("INSERT INTO t (cols)") + Append + Send;
// times are Int64 Unix milliseconds (UTC; *_ms columns, each with a DateTime
// ALIAS for analysts); booleans are UInt8; every table is a
// ReplacingMergeTree read with FINAL, so reads never see duplicates whatever
// merges have run. The winner rules equal DuckDB's (sql/store: earliest
// observation per record key, greatest (observed_at, published_at, version,
// content_sha256) per server in servers_latest, last write per id), which the
// conformance suite in sql/store/storetest checks before and after
// OPTIMIZE … FINAL.
//
// There are no multi-table transactions: InsertRecords writes
// registry_records, then registry_sightings, then servers_latest. If a later
// write fails the error is returned and the caller's retry (at-least-once)
// converges, since every write is idempotent.
package clickhouse

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

//go:embed migrations/*.sql
var migrations embed.FS

// DefaultDatabase is used when the DSN names no database.
const DefaultDatabase = "forum"

// Store is the ClickHouse implementation of store.Store and store.Querier.
type Store struct {
	conn     driver.Conn
	database string
	log      *zap.Logger
}

var (
	_ store.Store   = (*Store)(nil)
	_ store.Querier = (*Store)(nil)
)

var validDatabase = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Open connects to the server named by dsn (clickhouse://host:port/database,
// the usual clickhouse-go DSN options allowed), creating the database if it
// is missing ("forum" when the DSN names none). It does not create tables:
// call Migrate.
func Open(ctx context.Context, dsn string, log *zap.Logger) (*Store, error) {
	if log == nil {
		log = zap.NewNop()
	}
	opts, err := ch.ParseDSN(dsn)
	if err != nil {
		return nil, fmt.Errorf("%w: parse dsn: %w", ErrConfig, err)
	}
	if opts.Protocol != ch.Native {
		return nil, fmt.Errorf("%w: dsn %q: only the native protocol is supported", ErrConfig, dsn)
	}
	db := opts.Auth.Database
	if db == "" {
		db = DefaultDatabase
	}
	if !validDatabase.MatchString(db) {
		return nil, fmt.Errorf("%w: invalid database name %q", ErrConfig, db)
	}
	if opts.DialTimeout == 0 {
		opts.DialTimeout = 10 * time.Second
	}

	// The database must exist before a connection can select it.
	boot := *opts
	boot.Auth.Database = "default"
	bc, err := ch.Open(&boot)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: connect: %w", err)
	}
	err = bc.Exec(ctx, "CREATE DATABASE IF NOT EXISTS `"+db+"`")
	bc.Close()
	if err != nil {
		return nil, fmt.Errorf("clickhouse: create database %s: %w", db, err)
	}

	opts.Auth.Database = db
	conn, err := ch.Open(opts)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: connect: %w", err)
	}
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("clickhouse: ping: %w", err)
	}
	return &Store{conn: conn, database: db, log: log.With(zap.String("store", "clickhouse"), zap.String("database", db))}, nil
}

// Database returns the database the store uses.
func (s *Store) Database() string { return s.database }

// Close closes the connections.
func (s *Store) Close() error {
	if err := s.conn.Close(); err != nil {
		return fmt.Errorf("clickhouse: close: %w", err)
	}
	return nil
}

// Ping reports whether the server answers.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.conn.Ping(ctx); err != nil {
		return fmt.Errorf("clickhouse: ping: %w", err)
	}
	return nil
}

// migration is one embedded migrations/NNNN_name.sql file.
type migration struct {
	version    int
	name       string
	statements []string
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
		ms = append(ms, migration{version: v, name: rest, statements: splitStatements(string(b))})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	return ms, nil
}

// splitStatements splits a migration on semicolons that end a line and drops
// whole-line "--" comments (the native protocol takes one statement a query).
func splitStatements(src string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(src, "\n") {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "--") {
			continue
		}
		cur.WriteString(line)
		cur.WriteString("\n")
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSuffix(strings.TrimSpace(cur.String()), ";"))
			cur.Reset()
		}
	}
	if s := strings.TrimSpace(cur.String()); s != "" {
		out = append(out, s)
	}
	return out
}

// Migrate applies the embedded migrations not yet recorded in
// schema_migrations. Each statement is idempotent, so a migration that failed
// half-way is simply run again.
func (s *Store) Migrate(ctx context.Context) error { return s.migrate(ctx, math.MaxInt) }

// addColumn matches "ALTER TABLE t ADD COLUMN c …". 18.16 has no ADD COLUMN
// IF NOT EXISTS, so migrate runs such a statement only when system.columns
// lacks the column: that keeps it idempotent on every release.
var addColumn = regexp.MustCompile(`(?is)^\s*ALTER\s+TABLE\s+(\w+)\s+ADD\s+COLUMN\s+(\w+)\s`)

// hasColumn reports whether table has the column in the store's database.
func (s *Store) hasColumn(ctx context.Context, table, column string) (bool, error) {
	var n uint64
	err := s.conn.QueryRow(ctx, `SELECT count() FROM system.columns WHERE database = ? AND table = ? AND name = ?`,
		s.database, table, column).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("columns of %s: %w", table, err)
	}
	return n > 0, nil
}

// migrate applies the migrations up to version upTo (tests stop early to
// build a store as an older release left it).
func (s *Store) migrate(ctx context.Context, upTo int) error {
	ms, err := loadMigrations()
	if err != nil {
		return fmt.Errorf("clickhouse: migrate: %w", err)
	}
	if err := s.conn.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version    UInt32,
		name       String,
		applied_at DateTime
	) ENGINE = ReplacingMergeTree ORDER BY version`); err != nil {
		return fmt.Errorf("clickhouse: migrate: create schema_migrations: %w", err)
	}
	applied := map[int]bool{}
	rows, err := s.conn.Query(ctx, `SELECT DISTINCT version FROM schema_migrations`)
	if err != nil {
		return fmt.Errorf("clickhouse: migrate: read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return fmt.Errorf("clickhouse: migrate: read schema_migrations: %w", err)
		}
		applied[int(v)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("clickhouse: migrate: read schema_migrations: %w", err)
	}
	for _, m := range ms {
		if applied[m.version] || m.version > upTo {
			continue
		}
		for i, st := range m.statements {
			if c := addColumn.FindStringSubmatch(st); c != nil {
				has, err := s.hasColumn(ctx, c[1], c[2])
				if err != nil {
					return fmt.Errorf("clickhouse: migration %04d_%s statement %d: %w", m.version, m.name, i+1, err)
				}
				if has {
					continue
				}
			}
			if err := s.conn.Exec(ctx, st); err != nil {
				return fmt.Errorf("clickhouse: migration %04d_%s statement %d: %w", m.version, m.name, i+1, err)
			}
		}
		err := s.send(ctx, "INSERT INTO schema_migrations (version, name, applied_at)", 1, func(b driver.Batch) error {
			return b.Append(uint32(m.version), m.name, time.Now().UTC().Truncate(time.Second))
		})
		if err != nil {
			return fmt.Errorf("clickhouse: migration %04d_%s: record: %w", m.version, m.name, err)
		}
		s.log.Info("applied migration", zap.Int("version", m.version), zap.String("name", m.name))
	}
	return nil
}

// send writes one batch: PrepareBatch + fill + Send (the only insert path
// that works on 18.16 and current servers alike).
func (s *Store) send(ctx context.Context, insert string, n int, fill func(b driver.Batch) error) error {
	if n == 0 {
		return nil
	}
	b, err := s.conn.PrepareBatch(ctx, insert)
	if err != nil {
		return fmt.Errorf("prepare %q: %w", insert, err)
	}
	if err := fill(b); err != nil {
		return errors.Join(fmt.Errorf("append: %w", err), b.Abort())
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("send: %w", err)
	}
	return nil
}

// ms is a time as stored: Unix milliseconds, UTC. It is exact for every
// time.Time a store.Millis can return, the zero time included.
func ms(t time.Time) int64 { return store.Millis(t).UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

// verBase offsets _ver so it is positive for any Int64 millisecond time in
// the range time.Time can meaningfully hold (years 1..9999 and well beyond).
const verBase = 1 << 62

func b8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

const recordCols = "name, version, content_sha256, namespace, observed_at_ms, snapshot_id, status, is_latest, " +
	"published_at_ms, updated_at_ms, description, title, server"

func appendRecord(b driver.Batch, r store.Record, ver uint64) error {
	return b.Append(r.Name, r.Version, r.ContentSHA256, r.Namespace, ms(r.ObservedAt), r.SnapshotID, r.Status,
		b8(r.IsLatest), ms(r.PublishedAt), ms(r.UpdatedAt), r.Description, r.Title, r.Server, ver)
}

// InsertRecords stores registry observations and latest-view candidates.
func (s *Store) InsertRecords(ctx context.Context, recs []store.Record) error {
	rows, latest := store.ReduceRecords(recs)
	err := s.send(ctx, "INSERT INTO registry_records ("+recordCols+", _ver)", len(rows), func(b driver.Batch) error {
		for _, r := range rows {
			if err := appendRecord(b, r, uint64(verBase-ms(r.ObservedAt))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert registry_records: %w", err)
	}
	sightings := store.LastSightings(recs)
	err = s.send(ctx, "INSERT INTO registry_sightings (name, version, content_sha256, last_observed_at_ms, _ver)", len(sightings), func(b driver.Batch) error {
		for _, r := range sightings {
			if err := b.Append(r.Name, r.Version, r.ContentSHA256, ms(r.ObservedAt), uint64(verBase+ms(r.ObservedAt))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert registry_sightings: %w", err)
	}
	err = s.send(ctx, "INSERT INTO servers_latest ("+recordCols+", _ver)", len(latest), func(b driver.Batch) error {
		for _, r := range latest {
			if err := appendRecord(b, r, uint64(verBase+ms(r.ObservedAt))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert servers_latest: %w", err)
	}
	return nil
}

const eventCols = "id, server, namespace, kind, version, before, after, observed_at_ms, version_bump, snapshot_id"

// InsertEvents stores drift events; the last write of an id wins.
func (s *Store) InsertEvents(ctx context.Context, evs []schema.DriftEvent) error {
	evs = store.LastByID(evs, func(e schema.DriftEvent) string { return e.ID })
	err := s.send(ctx, "INSERT INTO drift_events ("+eventCols+")", len(evs), func(b driver.Batch) error {
		for _, e := range evs {
			if err := b.Append(e.ID, e.Server, e.Namespace, e.Kind, e.Version, e.Before, e.After,
				ms(e.ObservedAt), b8(e.VersionBump), e.SnapshotID); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert drift_events: %w", err)
	}
	return nil
}

const snapshotCols = "id, mode, source, observed_at_ms, entries, names, known_names, rejects, partial, events, counts"

// InsertSnapshots stores snapshot summaries; the last write of an id wins.
func (s *Store) InsertSnapshots(ctx context.Context, snaps []schema.SnapshotSummary) error {
	snaps = store.LastByID(snaps, func(x schema.SnapshotSummary) string { return x.ID })
	err := s.send(ctx, "INSERT INTO snapshots ("+snapshotCols+")", len(snaps), func(b driver.Batch) error {
		for _, x := range snaps {
			counts, err := json.Marshal(x.Counts)
			if err != nil {
				return fmt.Errorf("counts of %s: %w", x.ID, err)
			}
			if err := b.Append(x.ID, x.Mode, x.Source, ms(x.ObservedAt), int64(x.Entries), int64(x.Names),
				int64(x.KnownNames), int64(x.Rejects), b8(x.Partial), int64(x.Events), string(counts)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert snapshots: %w", err)
	}
	return nil
}

const dlqCols = "id, stage, source, reason, detail, key, observed_at_ms, payload, payload_bytes, payload_sha256"

// InsertDLQ stores dead letters; the last write of an id wins.
func (s *Store) InsertDLQ(ctx context.Context, msgs []schema.DLQMessage) error {
	msgs = store.LastByID(msgs, func(m schema.DLQMessage) string { return m.ID })
	err := s.send(ctx, "INSERT INTO dlq ("+dlqCols+")", len(msgs), func(b driver.Batch) error {
		for _, m := range msgs {
			if err := b.Append(m.ID, m.Stage, m.Source, m.Reason, m.Detail, m.Key, ms(m.ObservedAt),
				m.Payload, int64(m.PayloadBytes), m.PayloadSHA256); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert dlq: %w", err)
	}
	return nil
}

const healthCols = "id, server, remote_url, observed_at_ms, transport, outcome, error_class, http_status, " +
	"latency_ms, auth_kind, protocol_version, tool_count, tools_listed, check_json"

// writeSeq hands out _ver values for health_checks: the writer's clock in
// nanoseconds, strictly increasing within the process, so the last write of
// a key wins even when two writes fall in the same clock tick.
var writeSeq struct {
	sync.Mutex
	last uint64
}

func nextVer() uint64 {
	writeSeq.Lock()
	defer writeSeq.Unlock()
	v := uint64(time.Now().UnixNano())
	if v <= writeSeq.last {
		v = writeSeq.last + 1
	}
	writeSeq.last = v
	return v
}

// InsertHealthChecks stores probe results; the last write of an id wins
// (ReplacingMergeTree(_ver), and reads take the greatest _ver per id).
func (s *Store) InsertHealthChecks(ctx context.Context, checks []store.HealthCheck) error {
	checks = store.LastByID(checks, func(c store.HealthCheck) string { return c.ID })
	if len(checks) == 0 {
		return nil
	}
	ver := nextVer() // one batch, one write: every row gets the same _ver
	err := s.send(ctx, "INSERT INTO health_checks ("+healthCols+", _ver)", len(checks), func(b driver.Batch) error {
		return appendColumns(b, healthColumns(checks, ver))
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert health_checks: %w", err)
	}
	return nil
}

// healthColumns are checks as the columns of healthCols and _ver, in that
// order. A month is 15 M checks: handing the driver one typed slice per
// column skips its per-value conversion of Batch.Append (reflection on 15
// values a row), which was most of the sink's insert time (bench/README.md).
func healthColumns(checks []store.HealthCheck, ver uint64) []any {
	n := len(checks)
	var (
		id, server, url, transport, outcome, errClass = make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
		authKind, protocol, check                     = make([]string, n), make([]string, n), make([]string, n)
		observed                                      = make([]int64, n)
		status, tools                                 = make([]int32, n), make([]int32, n)
		latency                                       = make([]float64, n)
		listed                                        = make([]uint8, n)
		vers                                          = make([]uint64, n)
	)
	for i, c := range checks {
		id[i], server[i], url[i], observed[i], transport[i], outcome[i], errClass[i] = c.ID, c.Server, c.RemoteURL, ms(c.ObservedAt), c.Transport, c.Outcome, c.ErrorClass
		status[i], latency[i], authKind[i], protocol[i], tools[i], listed[i] = int32(c.HTTPStatus), c.LatencyMS, c.AuthKind, c.ProtocolVersion, int32(c.ToolCount), b8(c.ToolsListed)
		check[i], vers[i] = c.Check, ver
	}
	return []any{id, server, url, observed, transport, outcome, errClass, status, latency, authKind, protocol, tools, listed, check, vers}
}

// appendColumns appends one slice per column of b, in the INSERT's order.
func appendColumns(b driver.Batch, cols []any) error {
	for i, c := range cols {
		if err := b.Column(i).Append(c); err != nil {
			return fmt.Errorf("column %d: %w", i, err)
		}
	}
	return nil
}

func scanHealth(rows driver.Rows) ([]store.HealthCheck, error) {
	defer rows.Close()
	out := []store.HealthCheck{} // empty, not nil, when nothing matches
	for rows.Next() {
		var c store.HealthCheck
		var obs int64
		var status, tools int32
		var listed uint8
		if err := rows.Scan(&c.ID, &c.Server, &c.RemoteURL, &obs, &c.Transport, &c.Outcome, &c.ErrorClass,
			&status, &c.LatencyMS, &c.AuthKind, &c.ProtocolVersion, &tools, &listed, &c.Check); err != nil {
			return nil, err
		}
		c.ObservedAt, c.HTTPStatus, c.ToolCount, c.ToolsListed = fromMS(obs), int(status), int(tools), listed != 0
		out = append(out, c)
	}
	return out, rows.Err()
}

// serverHealth is the deduplicated health history of one server: FINAL
// collapses rewrites of the same key, LIMIT 1 BY id keeps the last write
// (greatest _ver) of an id whose remote_url or observed_at changed.
const serverHealth = `(SELECT ` + healthCols + ` FROM health_checks FINAL WHERE server = ?
	ORDER BY _ver DESC LIMIT 1 BY id)`

// HealthChecks returns a server's checks newest first (ties: id descending).
func (s *Store) HealthChecks(ctx context.Context, q store.HealthQuery) ([]store.HealthCheck, error) {
	if q.Server == "" {
		return nil, fmt.Errorf("clickhouse: health checks: %w", store.ErrServerRequired)
	}
	since := int64(math.MinInt64)
	if !q.Since.IsZero() {
		since = ms(q.Since)
	}
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+healthCols+` FROM `+serverHealth+`
		WHERE observed_at_ms >= ? ORDER BY observed_at_ms DESC, id DESC LIMIT ?`,
		q.Server, since, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: health checks of %q: %w", q.Server, err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: health checks of %q: %w", q.Server, err)
	}
	return out, nil
}

// LatestHealth returns, per remote URL of a server, the check with the
// greatest (observed_at, id), ordered by remote URL.
func (s *Store) LatestHealth(ctx context.Context, server string) ([]store.HealthCheck, error) {
	if server == "" {
		return nil, fmt.Errorf("clickhouse: latest health: %w", store.ErrServerRequired)
	}
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+healthCols+` FROM `+serverHealth+`
		ORDER BY remote_url, observed_at_ms DESC, id DESC LIMIT 1 BY remote_url`, server)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: latest health of %q: %w", server, err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: latest health of %q: %w", server, err)
	}
	return out, nil
}

// readCtx is the context of reads over FINAL: filters must apply after the
// replacing merge, so they may not be moved to PREWHERE (which 18.16 does by
// default and which would filter superseded row versions first).
func readCtx(ctx context.Context) context.Context {
	return ch.Context(ctx, ch.WithSettings(ch.Settings{"optimize_move_to_prewhere": 0}))
}

func scanRecords(rows driver.Rows) ([]store.Record, error) {
	defer rows.Close()
	var out []store.Record
	for rows.Next() {
		var r store.Record
		var obs, pub, upd int64
		var latest uint8
		if err := rows.Scan(&r.Name, &r.Version, &r.ContentSHA256, &r.Namespace, &obs, &r.SnapshotID, &r.Status,
			&latest, &pub, &upd, &r.Description, &r.Title, &r.Server); err != nil {
			return nil, err
		}
		r.ObservedAt, r.PublishedAt, r.UpdatedAt, r.IsLatest = fromMS(obs), fromMS(pub), fromMS(upd), latest != 0
		r.LastObservedAt = r.ObservedAt // the latest view's observation is its most recent
		out = append(out, r)
	}
	return out, rows.Err()
}

// latestOrder picks, per name, the greatest candidate of servers_latest.
const latestOrder = " ORDER BY name, observed_at_ms DESC, published_at_ms DESC, version DESC, content_sha256 DESC LIMIT 1 BY name"

// ListServers pages over the latest view ordered by name.
// LatestEntries pages over the latest view as registry entries
// (store.LatestEntries).
func (s *Store) LatestEntries(ctx context.Context, after string, limit int) ([]schema.Entry, string, error) {
	return store.LatestEntries(ctx, s, after, limit)
}

func (s *Store) ListServers(ctx context.Context, q store.ListQuery) ([]store.ServerRow, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+recordCols+` FROM servers_latest FINAL
		WHERE name > ? AND (? = '' OR namespace = ?)`+latestOrder+` LIMIT ?`,
		q.Cursor, q.Namespace, q.Namespace, store.ClampLimit(q.Limit, store.MaxListLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: list servers: %w", err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: list servers: %w", err)
	}
	out := make([]store.ServerRow, len(recs))
	for i, r := range recs {
		out[i] = store.ServerRow{Record: r}
	}
	return out, nil
}

// GetServer returns the latest entry of one server, or store.ErrNotFound.
func (s *Store) GetServer(ctx context.Context, name string) (store.ServerRow, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+recordCols+` FROM servers_latest FINAL WHERE name = ?`+latestOrder, name)
	if err != nil {
		return store.ServerRow{}, fmt.Errorf("clickhouse: get server %q: %w", name, err)
	}
	recs, err := scanRecords(rows)
	if err != nil {
		return store.ServerRow{}, fmt.Errorf("clickhouse: get server %q: %w", name, err)
	}
	if len(recs) == 0 {
		return store.ServerRow{}, fmt.Errorf("clickhouse: get server %q: %w", name, store.ErrNotFound)
	}
	return store.ServerRow{Record: recs[0]}, nil
}

// historyQuery reads registry_records with each row's most recent sighting
// (max over registry_sightings, so unmerged duplicates do not matter; the
// first observation when there is none), in Versions' order. The first %s
// is the server column (or ” for none), the other two are WHERE clauses
// of the sightings and of the records (the same name filter, or none).
const historyQuery = `SELECT name, version, content_sha256, namespace, observed_at_ms, snapshot_id, status, is_latest,
	published_at_ms, updated_at_ms, description, title, %s, last_ms, has_last
	FROM registry_records FINAL
	ANY LEFT JOIN (SELECT name, version, content_sha256, max(last_observed_at_ms) AS last_ms, toUInt8(1) AS has_last
		FROM registry_sightings %s GROUP BY name, version, content_sha256) USING (name, version, content_sha256)
	%s ORDER BY name, observed_at_ms DESC, version DESC, content_sha256 DESC`

func scanHistory(rows driver.Rows) (store.Record, error) {
	var r store.Record
	var obs, pub, upd, last int64
	var latest, hasLast uint8
	if err := rows.Scan(&r.Name, &r.Version, &r.ContentSHA256, &r.Namespace, &obs, &r.SnapshotID, &r.Status,
		&latest, &pub, &upd, &r.Description, &r.Title, &r.Server, &last, &hasLast); err != nil {
		return r, err
	}
	r.ObservedAt, r.PublishedAt, r.UpdatedAt, r.IsLatest = fromMS(obs), fromMS(pub), fromMS(upd), latest != 0
	r.LastObservedAt = r.ObservedAt
	if hasLast != 0 && last > obs {
		r.LastObservedAt = fromMS(last)
	}
	return r, nil
}

// VersionHistory returns a server's stored contents as sighted, newest
// first observation first (ties: version, then content hash, descending).
func (s *Store) VersionHistory(ctx context.Context, name string) ([]store.Record, error) {
	var out []store.Record
	err := s.query(ctx, func(rows driver.Rows) error {
		r, err := scanHistory(rows)
		out = append(out, r)
		return err
	}, fmt.Sprintf(historyQuery, "server", "WHERE name = ?", "WHERE name = ?")+` LIMIT ?`, name, name, store.MaxEventLimit)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: version history of %q: %w", name, err)
	}
	return out, nil
}

// VersionHistories is VersionHistory of many servers, 500 names a query
// (store.HistoriesReader).
func (s *Store) VersionHistories(ctx context.Context, names []string) (map[string][]store.Record, error) {
	out := make(map[string][]store.Record, len(names))
	for i := 0; i < len(names); i += 500 {
		chunk := names[i:min(i+500, len(names))]
		where := "WHERE name IN (" + strings.TrimSuffix(strings.Repeat("?, ", len(chunk)), ", ") + ")"
		args := make([]any, 0, 2*len(chunk))
		for range 2 {
			for _, n := range chunk {
				args = append(args, n)
			}
		}
		err := s.query(ctx, func(rows driver.Rows) error {
			r, err := scanHistory(rows)
			if len(out[r.Name]) < store.MaxEventLimit { // VersionHistory's LIMIT, per server
				out[r.Name] = append(out[r.Name], r)
			}
			return err
		}, fmt.Sprintf(historyQuery, "server", where, where), args...)
		if err != nil {
			return nil, fmt.Errorf("clickhouse: version histories of %d servers: %w", len(chunk), err)
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
	since := int64(math.MinInt64)
	if !q.Since.IsZero() {
		since = ms(q.Since)
	}
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+eventCols+` FROM drift_events FINAL
		WHERE (? = '' OR server = ?) AND (? = '' OR kind = ?) AND observed_at_ms >= ?
		ORDER BY observed_at_ms, id LIMIT ?`,
		q.Server, q.Server, q.Kind, q.Kind, since, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: events: %w", err)
	}
	defer rows.Close()
	var out []schema.DriftEvent
	for rows.Next() {
		var e schema.DriftEvent
		var obs int64
		var bump uint8
		if err := rows.Scan(&e.ID, &e.Server, &e.Namespace, &e.Kind, &e.Version, &e.Before, &e.After,
			&obs, &bump, &e.SnapshotID); err != nil {
			return nil, fmt.Errorf("clickhouse: events: %w", err)
		}
		e.ObservedAt, e.VersionBump = fromMS(obs), bump != 0
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: events: %w", err)
	}
	return out, nil
}

// EventCounts returns the number of stored drift events per kind.
func (s *Store) EventCounts(ctx context.Context) (map[string]int64, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT kind, toInt64(count()) FROM drift_events FINAL GROUP BY kind`)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: event counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("clickhouse: event counts: %w", err)
		}
		out[k] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: event counts: %w", err)
	}
	return out, nil
}

// Snapshots returns applied snapshots oldest first (ties by id).
func (s *Store) Snapshots(ctx context.Context) ([]schema.SnapshotSummary, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+snapshotCols+` FROM snapshots FINAL ORDER BY observed_at_ms, id`)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: snapshots: %w", err)
	}
	defer rows.Close()
	var out []schema.SnapshotSummary
	for rows.Next() {
		var x schema.SnapshotSummary
		var obs, entries, names, known, rejects, events int64
		var partial uint8
		var counts string
		if err := rows.Scan(&x.ID, &x.Mode, &x.Source, &obs, &entries, &names, &known, &rejects,
			&partial, &events, &counts); err != nil {
			return nil, fmt.Errorf("clickhouse: snapshots: %w", err)
		}
		x.ObservedAt, x.Partial = fromMS(obs), partial != 0
		x.Entries, x.Names, x.KnownNames, x.Rejects, x.Events = int(entries), int(names), int(known), int(rejects), int(events)
		if err := json.Unmarshal([]byte(counts), &x.Counts); err != nil {
			return nil, fmt.Errorf("clickhouse: snapshots: counts of %s: %w", x.ID, err)
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: snapshots: %w", err)
	}
	return out, nil
}

// DLQ returns dead letters oldest first (ties by id), at most limit rows.
func (s *Store) DLQ(ctx context.Context, limit int) ([]schema.DLQMessage, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+dlqCols+` FROM dlq FINAL ORDER BY observed_at_ms, id LIMIT ?`,
		store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: dlq: %w", err)
	}
	defer rows.Close()
	var out []schema.DLQMessage
	for rows.Next() {
		var m schema.DLQMessage
		var obs, n int64
		if err := rows.Scan(&m.ID, &m.Stage, &m.Source, &m.Reason, &m.Detail, &m.Key, &obs,
			&m.Payload, &n, &m.PayloadSHA256); err != nil {
			return nil, fmt.Errorf("clickhouse: dlq: %w", err)
		}
		m.ObservedAt, m.PayloadBytes = fromMS(obs), int(n)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: dlq: %w", err)
	}
	return out, nil
}

// Tables are the logical tables Counts reports.
var Tables = []string{"registry_records", "servers_latest", "drift_events", "snapshots", "dlq", "health_checks", "provenance", "publications"}

// Counts returns row counts per logical table, as reads see them.
func (s *Store) Counts(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(Tables))
	for _, t := range Tables {
		q := `SELECT toInt64(count()) FROM ` + t + ` FINAL`
		switch t {
		case "servers_latest":
			q = `SELECT toInt64(uniqExact(name)) FROM servers_latest`
		case "health_checks":
			q = `SELECT toInt64(uniqExact(id)) FROM health_checks FINAL` // one row per id, as reads see it (see serverHealth)
		}
		var n int64
		if err := s.conn.QueryRow(readCtx(ctx), q).Scan(&n); err != nil {
			return nil, fmt.Errorf("clickhouse: count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// Optimize forces the replacing merges (OPTIMIZE TABLE … FINAL) on every
// table. Reads do not depend on it; it reclaims space and lets the
// conformance suite prove that.
func (s *Store) Optimize(ctx context.Context) error {
	// Every ReplacingMergeTree of every migration, not only the ones Counts
	// reports: a forced merge must cover the later tables too.
	all := append([]string{"schema_migrations"}, Tables...)
	all = append(all, "trust_records", "publications", "incidents", "incident_audit", "review_approvals", "provenance", "admin_audit", "registry_sightings")
	all = append(all, resultTables...)
	for _, t := range all {
		if err := s.conn.Exec(ctx, `OPTIMIZE TABLE `+t+` FINAL`); err != nil {
			return fmt.Errorf("clickhouse: optimize %s: %w", t, err)
		}
	}
	return nil
}

// Query runs one read-only statement for analysts (see store.Querier) with
// the per-query setting readonly=1, and returns its columns and rows. Values
// are the driver's Go types for the result columns.
func (s *Store) Query(ctx context.Context, query string, args ...any) ([]string, [][]any, error) {
	q, err := store.CheckReadOnlySQL(query)
	if err != nil {
		return nil, nil, fmt.Errorf("clickhouse: query: %w", err)
	}
	rows, err := s.conn.Query(ch.Context(ctx, ch.WithSettings(ch.Settings{"readonly": 1})), q, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("clickhouse: query: %w", err)
	}
	defer rows.Close()
	cols := rows.Columns()
	types := rows.ColumnTypes()
	var out [][]any
	for rows.Next() {
		ptrs := make([]any, len(types))
		for i, ct := range types {
			ptrs[i] = reflect.New(ct.ScanType()).Interface()
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, fmt.Errorf("clickhouse: query: %w", err)
		}
		vals := make([]any, len(ptrs))
		for i, p := range ptrs {
			vals[i] = reflect.ValueOf(p).Elem().Interface()
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("clickhouse: query: %w", err)
	}
	return cols, out, nil
}
