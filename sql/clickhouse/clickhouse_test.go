package clickhouse

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/sql/store"
	"github.com/forum-mcp/forum/sql/store/storetest"
)

// envDSN names the server of the integration tests, e.g. the output of
// `deploy/clickhouse.sh dsn`. Unset: the tests skip. Set: they must run, and
// fail when the server cannot be reached.
const envDSN = "FORUM_TEST_CLICKHOUSE"

func TestIntegrationClickHouse(t *testing.T) {
	base := testenv.Service(t, envDSN, "run `deploy/clickhouse.sh start` and set it to $(deploy/clickhouse.sh dsn)")
	ping, err := ch.ParseDSN(base)
	if err != nil {
		t.Fatalf("%s=%q: %v", envDSN, base, err)
	}
	if c, err := ch.Open(ping); err != nil {
		t.Fatalf("%s=%q: connect: %v", envDSN, base, err)
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err := c.Ping(ctx)
		cancel()
		c.Close()
		if err != nil {
			t.Fatalf("%s=%q: server unreachable: %v", envDSN, base, err)
		}
	}
	open := func(t *testing.T) store.Store {
		dsn, db := testDSN(t, base)
		s, err := Open(context.Background(), dsn, zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("Open(%s): %v", dsn, err)
		}
		if s.Database() != db {
			t.Fatalf("Database() = %q, want %q", s.Database(), db)
		}
		t.Cleanup(func() { dropDatabase(t, base, db) })
		return s
	}
	storetest.Run(t, open)
	storetest.RunTrust(t, open)
	storetest.RunIncidents(t, open)
	storetest.RunReview(t, open)
	storetest.RunProvenance(t, open)
	storetest.RunHealthBulk(t, open)
	storetest.RunResults(t, open)
	storetest.RunBulk(t, open)
	storetest.RunAdmin(t, open)
	storetest.RunRedelivery(t, open)

	// Health history survives a restart: the same database, a new Store.
	t.Run("Restart", func(t *testing.T) {
		dsn, db := testDSN(t, base)
		t.Cleanup(func() { dropDatabase(t, base, db) })
		storetest.RunRestart(t, func(t *testing.T) store.Store {
			s, err := Open(context.Background(), dsn, zaptest.NewLogger(t))
			if err != nil {
				t.Fatalf("Open(%s): %v", dsn, err)
			}
			return s
		})
	})

	// A store left by a release before 0009_results upgrades in place, and
	// a migration that stopped after its ALTER is simply run again.
	t.Run("UpgradeFrom0008", func(t *testing.T) {
		for _, halfApplied := range []bool{false, true} {
			dsn, db := testDSN(t, base)
			t.Cleanup(func() { dropDatabase(t, base, db) })
			testUpgradeFrom0008(t, dsn, halfApplied)
		}
	})

	// A store left before 0011_registry_sightings, with an old latest
	// version demoted beside the new one, upgrades in place.
	t.Run("UpgradeFrom0009", func(t *testing.T) {
		dsn, db := testDSN(t, base)
		t.Cleanup(func() { dropDatabase(t, base, db) })
		testUpgradeFrom0009(t, dsn)
	})

	// The engine-level guard of Query: every analyst query runs with readonly=1.
	t.Run("QueryReadonlySetting", func(t *testing.T) {
		s := open(t).(*Store)
		defer s.Close()
		cols, rows, err := s.Query(context.Background(), "SELECT name, value FROM system.settings WHERE name = ?", "readonly")
		if err != nil {
			t.Fatalf("Query: %v", err)
		}
		if len(cols) != 2 || len(rows) != 1 || rows[0][1] != "1" {
			t.Errorf("readonly setting seen by Query: cols %v rows %v, want value 1", cols, rows)
		}
	})
}

// testDSN returns base with a fresh database name forum_test_<random>.
func testDSN(t *testing.T, base string) (dsn, db string) {
	t.Helper()
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	db = "forum_test_" + hex.EncodeToString(b)
	u, q, _ := strings.Cut(base, "?")
	// Replace any database in the path.
	if i := strings.Index(u, "://"); i >= 0 {
		if j := strings.Index(u[i+3:], "/"); j >= 0 {
			u = u[:i+3+j]
		}
	}
	dsn = u + "/" + db
	if q != "" {
		dsn += "?" + q
	}
	return dsn, db
}

func dropDatabase(t *testing.T, base, db string) {
	opts, err := ch.ParseDSN(base)
	if err != nil {
		t.Errorf("parse dsn: %v", err)
		return
	}
	opts.Auth.Database = "default"
	c, err := ch.Open(opts)
	if err != nil {
		t.Errorf("drop %s: %v", db, err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Exec(ctx, "DROP DATABASE IF EXISTS `"+db+"`"); err != nil {
		t.Errorf("drop %s: %v", db, err)
	}
}

func TestSplitStatements(t *testing.T) {
	got := splitStatements("-- c\nCREATE TABLE a (x String);\n\n  -- c2\nCREATE TABLE b (\n y String\n);\nSELECT 1")
	want := []string{"CREATE TABLE a (x String)", "CREATE TABLE b (\n y String\n)", "SELECT 1"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("splitStatements = %q, want %q", got, want)
	}
}

func TestMigrationsLoad(t *testing.T) {
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].version != 1 || len(ms[0].statements) != 5 {
		t.Fatalf("migrations = %+v", ms)
	}
	for _, m := range ms {
		for _, st := range m.statements {
			for _, banned := range []string{"LowCardinality", "DateTime64", "JSONExtract", " TTL ", "Map(", " JSON"} {
				if strings.Contains(st, banned) {
					t.Errorf("migration %d uses %s, which ClickHouse 18.16 lacks", m.version, banned)
				}
			}
		}
	}
}

func testUpgradeFrom0008(t *testing.T, dsn string, halfApplied bool) {
	ctx := context.Background()
	s, err := Open(ctx, dsn, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open(%s): %v", dsn, err)
	}
	if err := s.migrate(ctx, 8); err != nil {
		t.Fatalf("migrate to 0008: %v", err)
	}
	err = s.send(ctx, "INSERT INTO trust_records (server, publication_id, computed_at_ms, score, band, toolfinder_score, content_sha256, record)", 1,
		func(b driver.Batch) error {
			return b.Append("a/old", "p-old", int64(1740787200000), nil, "C", int32(1), "sha", "{}")
		})
	if err != nil {
		t.Fatalf("insert an old row: %v", err)
	}
	if halfApplied {
		if err := s.conn.Exec(ctx, `ALTER TABLE trust_records ADD COLUMN leaf_hash String DEFAULT '' AFTER content_sha256`); err != nil {
			t.Fatalf("ALTER: %v", err)
		}
	}
	s.Close()

	for round := range 2 { // the second Migrate (and reopen) must be a no-op
		s, err := Open(ctx, dsn, zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("Open(%s): %v", dsn, err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("half-applied %v, round %d: Migrate: %v", halfApplied, round, err)
		}
		leaf := strings.Repeat("0f", 32)
		if err := s.InsertTrustRecords(ctx, []store.TrustRecord{{Server: "b/new", PublicationID: "p-old", Band: "A", LeafHash: leaf, Record: "{}"}}); err != nil {
			t.Fatalf("round %d: InsertTrustRecords: %v", round, err)
		}
		servers, leaves, err := s.PublicationLeaves(ctx, "p-old")
		if err != nil {
			t.Fatalf("round %d: PublicationLeaves: %v", round, err)
		}
		if strings.Join(servers, ",") != "a/old,b/new" || strings.Join(leaves, ",") != ","+leaf {
			t.Errorf("round %d: leaves %q %q, want the old row with an empty leaf and the new one with its own", round, servers, leaves)
		}
		recs, err := s.PublicationRecords(ctx, "p-old")
		if err != nil || len(recs) != 2 || recs[0].LeafHash != "" || recs[0].Band != "C" {
			t.Errorf("round %d: PublicationRecords = %+v, %v", round, recs, err)
		}
		s.Close()
	}
}

// testUpgradeFrom0009 is duckdb's TestUpgradeFrom0009 on ClickHouse: the
// backfill sights every old row at its first observation, Versions serves
// one latest version, new sightings count, and migrating again (the
// backfill run twice) changes nothing.
func testUpgradeFrom0009(t *testing.T, dsn string) {
	ctx := context.Background()
	s, err := Open(ctx, dsn, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("Open(%s): %v", dsn, err)
	}
	if err := s.migrate(ctx, 9); err != nil {
		t.Fatalf("migrate to 0009: %v", err)
	}
	day := func(d int) time.Time { return time.Date(2025, 3, d, 0, 0, 0, 0, time.UTC) }
	old := []store.Record{
		{Name: "a/old", Version: "1.0.0", Namespace: "a", ContentSHA256: "v1-latest", ObservedAt: day(1), Status: "active", IsLatest: true, Server: "{}"},
		{Name: "a/old", Version: "1.0.0", Namespace: "a", ContentSHA256: "v1-demoted", ObservedAt: day(2), Status: "active", Server: "{}"},
		{Name: "a/old", Version: "2.0.0", Namespace: "a", ContentSHA256: "v2-latest", ObservedAt: day(2), Status: "active", IsLatest: true, Server: "{}"},
	}
	err = s.send(ctx, "INSERT INTO registry_records ("+recordCols+", _ver)", len(old), func(b driver.Batch) error {
		for _, r := range old {
			if err := appendRecord(b, r, uint64(verBase-ms(r.ObservedAt))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("insert old rows: %v", err)
	}
	s.Close()
	for round := range 2 {
		s, err := Open(ctx, dsn, zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("Open(%s): %v", dsn, err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("round %d: Migrate: %v", round, err)
		}
		if round == 1 {
			// The backfill, run again, adds nothing a read sees.
			if err := s.conn.Exec(ctx, `INSERT INTO registry_sightings (name, version, content_sha256, last_observed_at_ms, _ver)
				SELECT name, version, content_sha256, observed_at_ms, toUInt64(4611686018427387904 + observed_at_ms) FROM registry_records FINAL`); err != nil {
				t.Fatal(err)
			}
		}
		vs, err := s.Versions(ctx, "a/old", 0)
		if err != nil {
			t.Fatal(err)
		}
		want := "v2-latest"
		if round > 0 {
			want = "v1-latest" // sighted again in round 0
		}
		var latest []string
		for _, v := range vs {
			if round == 0 && !v.LastObservedAt.Equal(v.ObservedAt) {
				t.Errorf("%s sighted %v..%v: an old row's last sighting is its first", v.ContentSHA256, v.ObservedAt, v.LastObservedAt)
			}
			if v.IsLatest {
				latest = append(latest, v.ContentSHA256)
			}
		}
		if strings.Join(latest, ",") != want {
			t.Errorf("round %d: latest rows %v, want only %s", round, latest, want)
		}
		again := old[0]
		again.ObservedAt = day(3)
		if err := s.InsertRecords(ctx, []store.Record{again}); err != nil {
			t.Fatal(err)
		}
		vs, _ = s.Versions(ctx, "a/old", 0)
		for _, v := range vs {
			if v.IsLatest != (v.ContentSHA256 == "v1-latest") {
				t.Errorf("round %d: after v1 is latest again: %s latest=%v", round, v.ContentSHA256, v.IsLatest)
			}
		}
		s.Close()
	}
}

// TestAddColumnPattern: the statements Migrate runs only when the column is
// missing (18.16 has no ADD COLUMN IF NOT EXISTS).
func TestAddColumnPattern(t *testing.T) {
	for _, c := range []struct {
		st            string
		table, column string
	}{
		{"ALTER TABLE trust_records ADD COLUMN leaf_hash String DEFAULT '' AFTER content_sha256", "trust_records", "leaf_hash"},
		{"alter table t\n  add column c Nullable(Int64)", "t", "c"},
		{"ALTER TABLE t DROP COLUMN c", "", ""},
		{"CREATE TABLE t (c String)", "", ""},
	} {
		var table, column string
		if m := addColumn.FindStringSubmatch(c.st); m != nil {
			table, column = m[1], m[2]
		}
		if table != c.table || column != c.column {
			t.Errorf("%q: table %q column %q, want %q %q", c.st, table, column, c.table, c.column)
		}
	}
}
