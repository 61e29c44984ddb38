package flightsql_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/forum-mcp/forum/api/flightsql"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

func TestCheckSQL(t *testing.T) {
	allowed := []string{
		"SELECT 1",
		"select kind, count(*) from drift_events_v group by kind;",
		"-- a comment\n/* another */ SELECT 'read_csv(x)' AS s, \"server\" FROM \"drift_events_v\"",
		"WITH x AS (SELECT 1 AS a) SELECT a FROM x",
		"SELECT replace(server, 'a', 'b'), format('{}', 1) FROM drift_events_v",
		"SELECT * FROM drift_events_v d JOIN servers_latest s ON s.name = d.server WHERE d.kind IN ('new_server', 'removed')",
		"SELECT * FROM generate_series(1, 3)",
		"DESCRIBE drift_events",
		"SELECT 'it''s' FROM drift_events_v",
	}
	for _, q := range allowed {
		if _, err := flightsql.CheckSQL(q); err != nil {
			t.Errorf("%q refused: %v", q, err)
		}
	}
	refused := map[string]error{
		"SELECT * FROM read_csv('/etc/passwd')":                          flightsql.ErrFileAccess,
		"SELECT * FROM READ_CSV_AUTO('/etc/passwd')":                     flightsql.ErrFileAccess,
		"SELECT * FROM read_parquet('s3://bucket/x.parquet')":            flightsql.ErrFileAccess,
		"SELECT * FROM read_json('x.json')":                              flightsql.ErrFileAccess,
		"SELECT * FROM glob('/etc/*')":                                   flightsql.ErrFileAccess,
		"SELECT * FROM read_text('/etc/hostname')":                       flightsql.ErrFileAccess,
		"SELECT * FROM read_blob('/etc/hostname')":                       flightsql.ErrFileAccess,
		"SELECT * FROM \"read_csv\" ('/etc/passwd')":                     flightsql.ErrFileAccess,
		"SELECT * FROM file('/etc/passwd', 'TSV', 'x String')":           flightsql.ErrFileAccess,
		"SELECT * FROM url('http://169.254.169.254/', 'RawBLOB')":        flightsql.ErrFileAccess,
		"SELECT * FROM remote('10.0.0.1', system.one)":                   flightsql.ErrFileAccess,
		"SELECT * FROM query('SELECT * FROM read_csv(''/etc/passwd'')')": flightsql.ErrFileAccess,
		"SELECT getenv('FORUM_FLIGHT_TOKEN')":                            flightsql.ErrFileAccess,
		"SELECT * FROM '/etc/passwd'":                                    flightsql.ErrFileAccess,
		"SELECT * FROM drift_events_v, '/etc/passwd'":                    flightsql.ErrFileAccess,
		"SELECT * FROM drift_events_v a JOIN \"/etc/hosts\" b ON true":   flightsql.ErrFileAccess,
		"SELECT * FROM (FROM 'x.csv')":                                   flightsql.ErrFileAccess,
		"SELECT * FROM a JOIN b ON a.x = b.x, 'x.csv'":                   flightsql.ErrFileAccess,
		"INSERT INTO dlq VALUES (1)":                                     store.ErrNotReadOnly,
		"SELECT 1; DROP TABLE dlq":                                       store.ErrNotReadOnly,
		"EXPLAIN ANALYZE COPY (SELECT 1) TO '/tmp/x.csv'":                store.ErrNotReadOnly,
		"WITH x AS (SELECT 1) INSERT INTO dlq SELECT * FROM x":           store.ErrNotReadOnly,
		"SELECT 1 INTO OUTFILE '/tmp/x'":                                 store.ErrNotReadOnly,
		"ATTACH '/tmp/x.db'":                                             store.ErrNotReadOnly,
		"SET enable_external_access = true":                              store.ErrNotReadOnly,
		"":                                                               store.ErrNotReadOnly,
	}
	for q, want := range refused {
		if _, err := flightsql.CheckSQL(q); !errors.Is(err, want) {
			t.Errorf("%q: got %v, want %v", q, err, want)
		}
	}
}

// A store served over Flight SQL answers what Query answers locally, to
// the right token only, and refuses writes and file reads.
func TestServeQueryRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := duckdb.Open(ctx, filepath.Join(dir, "f.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 10, 1, 12, 0, 0, 0, time.UTC)
	var evs []schema.DriftEvent
	for i, k := range []string{"new_server", "new_server", "version_added", "description_changed"} {
		evs = append(evs, schema.DriftEvent{ID: "e" + string(rune('a'+i)), Server: "io.github.x/s" + string(rune('a'+i%2)), Namespace: "io.github.x",
			Kind: k, Before: "<b>", After: "it's", ObservedAt: at.Add(time.Duration(i) * time.Hour), SnapshotID: "s1", VersionBump: i%2 == 0})
	}
	if err := s.InsertEvents(ctx, evs); err != nil {
		t.Fatal(err)
	}
	const token = "s3cret-token"
	srv, err := flightsql.New(flightsql.Options{Querier: s, Token: token, Log: zaptest.NewLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, ln) }()
	defer func() { stop(); <-done }()
	addr := ln.Addr().String()

	for _, q := range []string{
		"SELECT kind, count(*) AS n, sum(CASE WHEN version_bump THEN 1 ELSE 0 END) AS bumps, min(observed_at) AS first, max(observed_day) AS day, avg(observed_at_ms) AS avg_ms FROM drift_events_v GROUP BY kind ORDER BY kind",
		"SELECT id, server, before, after, version_bump, NULL AS nothing FROM drift_events_v ORDER BY id",
		"SELECT id FROM drift_events_v WHERE kind = 'none'",
	} {
		wantCols, wantRows, err := s.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		cols, rows, err := flightsql.Query(ctx, addr, token, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !reflect.DeepEqual(cols, wantCols) || len(rows) != len(wantRows) {
			t.Fatalf("%s: columns %v (%d rows), want %v (%d rows)", q, cols, len(rows), wantCols, len(wantRows))
		}
		for i := range rows {
			for j := range rows[i] {
				if g, w := norm(rows[i][j]), norm(wantRows[i][j]); !reflect.DeepEqual(g, w) {
					t.Errorf("%s: row %d %s = %#v, want %#v", q, i, cols[j], rows[i][j], wantRows[i][j])
				}
			}
		}
	}

	code := func(err error) codes.Code { return status.Code(errors.Unwrap(err)) }
	if _, _, err := flightsql.Query(ctx, addr, "wrong", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("a wrong token: %v", err)
	}
	if _, _, err := flightsql.Query(ctx, addr, "", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "Unauthenticated") {
		t.Errorf("no token: %v", err)
	}
	passwd := filepath.Join(dir, "secret.csv")
	if err := os.WriteFile(passwd, []byte("a,b\n1,2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"SELECT * FROM read_csv('" + passwd + "')", "SELECT * FROM '" + passwd + "'", "DELETE FROM dlq", "SELECT 1; SELECT 2"} {
		_, _, err := flightsql.Query(ctx, addr, token, q)
		if err == nil || !strings.Contains(err.Error(), "InvalidArgument") {
			t.Errorf("%q: %v (code %v), want InvalidArgument", q, err, code(err))
		}
	}
	if _, err := flightsql.New(flightsql.Options{Querier: s}); !errors.Is(err, flightsql.ErrNoToken) {
		t.Errorf("a server without a token: %v", err)
	}
}

// norm makes values comparable across the wire: timestamps by instant.
func norm(v any) any {
	if t, ok := v.(time.Time); ok {
		return t.UTC().UnixMicro()
	}
	if b, ok := v.(interface{ String() string }); ok {
		if _, isTime := v.(time.Time); !isTime {
			return b.String()
		}
	}
	return v
}
