package examples_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/clickhouse"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// envDSN names the ClickHouse server of the test (as in sql/clickhouse):
// unset, the ClickHouse half skips; set, it must run and fails when the
// server cannot be reached.
const envDSN = "FORUM_TEST_CLICKHOUSE"

// now is the reference instant substituted for {{now_ms}}: the window of
// every example is [2025-03-01T00:00Z, 2025-03-31T00:00Z).
var now = time.Date(2025, 3, 31, 0, 0, 0, 0, time.UTC)

func day(d, h, m int) time.Time { return time.Date(2025, 3, d, h, m, 0, 0, time.UTC) }

// ms1 is one millisecond: the window edges are tested to the millisecond.
const ms1 = time.Millisecond

func check(id, server string, t time.Time, outcome string, latency float64) store.HealthCheck {
	return store.HealthCheck{
		ID: id, Server: server, RemoteURL: "https://" + strings.ReplaceAll(server, "/", ".") + ".example/mcp",
		ObservedAt: t, Transport: "streamable-http", Outcome: outcome, LatencyMS: latency,
		AuthKind: "none", Check: `{"id":"` + id + `"}`,
	}
}

func event(id, server, kind string, t time.Time) schema.DriftEvent {
	return schema.DriftEvent{ID: id, Server: server, Namespace: schema.Namespace(server), Kind: kind, ObservedAt: t, SnapshotID: "s"}
}

// The dataset. Each batch is written twice (at-least-once delivery, and on
// ClickHouse unmerged duplicate parts the views must hide), then the
// rewrites, whose last write must win.
var (
	checks = []store.HealthCheck{
		check("a1", "a/alpha", day(1, 0, 0), "ok", 100), // the window's first ms: in
		check("a2", "a/alpha", day(10, 0, 0), "ok", 300),
		check("a3", "a/alpha", day(20, 0, 0), "auth_required", 0),
		check("a4", "a/alpha", day(31, 0, 0).Add(-ms1), "unreachable", 0), // the window's last ms: in
		check("a5", "a/alpha", day(1, 0, 0).Add(-ms1), "ok", 5),           // before the window
		check("a6", "a/alpha", now, "unreachable", 0),                     // at now: out
		check("a7", "a/alpha", day(15, 0, 0), "not_checked", 0),           // not attempted: out
		check("b1", "b/beta", day(5, 0, 0), "unreachable", 0),             // rewritten below as ok, 50
		check("b2", "b/beta", day(6, 0, 0), "handshake_failed", 0),
		check("b3", "b/beta", day(7, 0, 0), "ok", 70),
		check("b4", "b/beta", day(8, 0, 0), "ok", 10),
		check("b5", "b/beta", day(9, 0, 0), "unreachable", 0),
		check("c1", "c/gamma", day(2, 0, 0), "auth_required", 0),
		check("c2", "c/gamma", day(3, 0, 0), "auth_required", 0),
		check("d1", "d/delta", day(10, 0, 0), "not_checked", 0),                      // only not_checked: no row
		check("d2", "d/delta", time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), "ok", 1), // long before
	}
	checkRewrites = []store.HealthCheck{check("b1", "b/beta", day(5, 0, 0), "ok", 50)}

	events = []schema.DriftEvent{
		event("e1", "a/alpha", schema.KindNewServer, day(1, 0, 0)),
		event("e2", "b/beta", schema.KindNewServer, day(2, 0, 0).Add(-ms1)), // still March 1st
		event("e3", "a/alpha", schema.KindVersionAdded, day(2, 0, 0)),
		event("e4", "a/alpha", schema.KindDescriptionChanged, day(2, 12, 0)), // rewritten below
		event("e5", "b/beta", schema.KindVersionAdded, day(2, 13, 0)),
		event("e6", "a/alpha", schema.KindVersionAdded, day(2, 14, 0)),
		event("e7", "c/gamma", schema.KindRemoved, day(1, 0, 0).Add(-ms1)), // before the window
		event("e8", "c/gamma", schema.KindRemoved, now),                    // at now: out
		event("e9", "c/gamma", schema.KindTitleChanged, day(31, 0, 0).Add(-ms1)),
	}
	eventRewrites = []schema.DriftEvent{event("e4", "a/alpha", schema.KindStatusChanged, day(2, 12, 0))}
)

// result is an expected answer: column names and rows, values as norm
// formats them ("NULL" for NULL, dates as 2006-01-02).
type result struct {
	cols []string
	rows [][]string
}

// expected holds, per example file, the rows hand-computed from the dataset.
var expected = map[string]result{
	// In the window, not_checked left out: ok a1 a2 b1 (the rewrite) b3 b4 →
	// 5 checks on 2 servers; auth_required a3 c1 c2 → 3 on 2; handshake_failed
	// b2 → 1 on 1; unreachable a4 b5 → 2 on 2; 11 attempted checks in all.
	"health_outcome_rates_30d.sql": {
		cols: []string{"outcome", "checks", "servers", "share"},
		rows: [][]string{
			{"auth_required", "3", "2", "0.2727272727272727"},
			{"handshake_failed", "1", "1", "0.09090909090909091"},
			{"ok", "5", "2", "0.45454545454545453"},
			{"unreachable", "2", "2", "0.18181818181818182"},
		},
	},
	// a/alpha: a1 ok, a2 ok, a3 auth_required, a4 unreachable → 3 of 4 up;
	//          answered latencies {100, 300} → median 200.
	// b/beta:  b1 ok (the rewrite), b2 handshake_failed, b3 ok, b4 ok,
	//          b5 unreachable → 3 of 5 up; latencies {50, 70, 10} → 50.
	// c/gamma: two auth_required checks → 2 of 2 up; no latency → NULL.
	// d/delta: nothing attempted in the window → no row.
	"uptime_30d.sql": {
		cols: []string{"server", "checks", "up_checks", "uptime", "p50_latency_ms"},
		rows: [][]string{
			{"a/alpha", "4", "3", "0.75", "200"},
			{"b/beta", "5", "3", "0.6", "50"},
			{"c/gamma", "2", "2", "1", "NULL"},
		},
	},
	// 03-01: e1, e2 new_server (a, b). 03-02: e3, e5, e6 version_added (a, b,
	// a), e4 status_changed (the rewrite). 03-30: e9. e7 and e8 are outside.
	"drift_events_per_kind_per_day.sql": {
		cols: []string{"day", "kind", "events", "servers"},
		rows: [][]string{
			{"2025-03-01", "new_server", "2", "2"},
			{"2025-03-02", "status_changed", "1", "1"},
			{"2025-03-02", "version_added", "3", "2"},
			{"2025-03-30", "title_changed", "1", "1"},
		},
	},
}

// banned are constructs one of the engines lacks (ClickHouse 18.16: window
// functions, WITH name AS (subquery), DateTime64; DuckDB: FINAL, LIMIT BY).
var banned = regexp.MustCompile(`(?i)\bOVER\s*\(|\bQUALIFY\b|\bWITH\s+\w+\s+AS\s*\(|DateTime64|\bFINAL\b|\bLIMIT\s+\d+\s+BY\b|\bFILTER\s*\(|::`)

func load(t *testing.T, s store.Store) {
	t.Helper()
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	for i := 0; i < 2; i++ {
		if err := s.InsertHealthChecks(ctx, checks); err != nil {
			t.Fatalf("InsertHealthChecks: %v", err)
		}
		if err := s.InsertEvents(ctx, events); err != nil {
			t.Fatalf("InsertEvents: %v", err)
		}
	}
	if err := s.InsertHealthChecks(ctx, checkRewrites); err != nil {
		t.Fatalf("InsertHealthChecks: %v", err)
	}
	if err := s.InsertEvents(ctx, eventRewrites); err != nil {
		t.Fatalf("InsertEvents: %v", err)
	}
}

// examples returns the example files and their SQL with {{now_ms}} replaced.
func examples(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("*.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("no example files (%v)", err)
	}
	out := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		src := string(b)
		if !strings.Contains(src, "{{now_ms}}") {
			t.Errorf("%s: no {{now_ms}} placeholder", f)
		}
		if m := banned.FindString(stripComments(src)); m != "" {
			t.Errorf("%s uses %q, which one of the engines lacks", f, m)
		}
		q := strings.ReplaceAll(src, "{{now_ms}}", strconv.FormatInt(now.UnixMilli(), 10))
		if strings.Contains(q, "{{") {
			t.Errorf("%s: a placeholder other than {{now_ms}} is left", f)
		}
		out[f] = q
	}
	for f := range expected {
		if _, ok := out[f]; !ok {
			t.Errorf("expected rows for %s, which does not exist", f)
		}
	}
	return out
}

func stripComments(src string) string {
	var b strings.Builder
	for _, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "--"); i >= 0 {
			line = line[:i]
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}

// norm formats a value of either driver: NULL, integers, floats (shortest
// form), dates (2006-01-02 when at midnight) and strings.
func norm(v any) string {
	rv := reflect.ValueOf(v)
	for rv.IsValid() && rv.Kind() == reflect.Pointer {
		if rv.IsNil() {
			return "NULL"
		}
		if b, ok := rv.Interface().(*big.Int); ok {
			return b.String()
		}
		rv = rv.Elem()
	}
	if !rv.IsValid() {
		return "NULL"
	}
	switch x := rv.Interface().(type) {
	case time.Time:
		if h, m, s := x.Clock(); h == 0 && m == 0 && s == 0 && x.Nanosecond() == 0 {
			return x.Format("2006-01-02")
		}
		return x.UTC().Format(time.RFC3339Nano)
	case bool:
		return strconv.FormatBool(x)
	case string:
		return x
	}
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(rv.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(rv.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(rv.Float(), 'g', -1, 64)
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

func runExamples(t *testing.T, q store.Querier) {
	ex := examples(t)
	names := make([]string, 0, len(ex))
	for f := range ex {
		names = append(names, f)
	}
	sort.Strings(names)
	for _, f := range names {
		t.Run(strings.TrimSuffix(f, ".sql"), func(t *testing.T) {
			want, ok := expected[f]
			if !ok {
				t.Fatalf("no expected rows for %s: add them to expected", f)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			cols, rows, err := q.Query(ctx, ex[f])
			if err != nil {
				t.Fatalf("Query(%s): %v", f, err)
			}
			got := make([][]string, len(rows))
			for i, r := range rows {
				got[i] = make([]string, len(r))
				for j, v := range r {
					got[i][j] = norm(v)
				}
			}
			if !reflect.DeepEqual(cols, want.cols) {
				t.Errorf("columns:\n got  %q\n want %q", cols, want.cols)
			}
			if !reflect.DeepEqual(got, want.rows) {
				t.Errorf("rows:\n got  %q\n want %q", got, want.rows)
			}
		})
	}
}

func TestExamplesDuckDB(t *testing.T) {
	s, err := duckdb.Open(context.Background(), filepath.Join(t.TempDir(), "examples.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	load(t, s)
	runExamples(t, s)
}

func TestExamplesClickHouse(t *testing.T) {
	base := testenv.Service(t, envDSN, "run `deploy/clickhouse.sh start` and set it to $(deploy/clickhouse.sh dsn)")
	opts, err := ch.ParseDSN(base)
	if err != nil {
		t.Fatalf("%s=%q: %v", envDSN, base, err)
	}
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	db := "forum_examples_" + hex.EncodeToString(b)
	opts.Auth.Database = "default"
	admin, err := ch.Open(opts)
	if err != nil {
		t.Fatalf("%s=%q: connect: %v", envDSN, base, err)
	}
	t.Cleanup(func() { admin.Close() }) // after the drop below (cleanups run last-in first-out)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := admin.Ping(ctx); err != nil {
		t.Fatalf("%s=%q: server unreachable: %v", envDSN, base, err)
	}
	t.Cleanup(func() {
		if err := admin.Exec(context.Background(), "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
			t.Errorf("drop %s: %v", db, err)
		}
	})
	u, query, _ := strings.Cut(base, "?")
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			u = u[:i+3+j]
		}
	}
	dsn := u + "/" + db
	if query != "" {
		dsn += "?" + query
	}
	s, err := clickhouse.Open(context.Background(), dsn, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open(%s): %v", dsn, err)
	}
	defer s.Close()
	load(t, s)
	t.Run("unmerged", func(t *testing.T) { runExamples(t, s) })
	if err := s.Optimize(context.Background()); err != nil {
		t.Fatalf("Optimize: %v", err)
	}
	t.Run("merged", func(t *testing.T) { runExamples(t, s) })
}
