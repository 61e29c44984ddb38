package duckdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/sql/store"
	"github.com/forum-mcp/forum/sql/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "forum.duckdb"), zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

// TestRestart: health history survives closing and reopening the file.
func TestRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "forum.duckdb")
	storetest.RunRestart(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), path, zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("Open(%s): %v", path, err)
		}
		return s
	})
}

func TestIncidents(t *testing.T) { storetest.RunIncidents(t, storetest.TempFile(Open, "forum.duckdb")) }

func TestHealthBulk(t *testing.T) {
	storetest.RunHealthBulk(t, storetest.TempFile(Open, "forum.duckdb"))
}

// TestOpenDefaults pins that Open caps DuckDB's buffer pool
// (DefaultMemoryLimit, instead of 80 % of RAM), raises its checkpoint
// threshold (DefaultCheckpointThreshold, instead of one sink batch of WAL)
// and runs one worker thread (DefaultThreads), and that options the path
// sets itself win.
func TestOpenDefaults(t *testing.T) {
	for _, tc := range []struct {
		opts                 string
		wantMemory, wantCkpt string // prefixes of current_setting (DuckDB shows MiB/GiB)
		wantThreads          int64
	}{
		{"", "366", "953", 1}, // 384 MB = 366.2 MiB, 1 GB = 953.6 MiB
		{"?memory_limit=2GB", "1.8", "953", 1},
		{"?checkpoint_threshold=16MB&memory_limit=256MB&threads=2", "244", "15", 2},
	} {
		t.Run("options="+tc.opts, func(t *testing.T) { // not "#00": DuckDB reads a '#' in the path as a URL fragment
			s, err := Open(context.Background(), filepath.Join(t.TempDir(), "m.duckdb")+tc.opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			var mem, ckpt string
			var threads int64
			if err := s.db.QueryRow(`SELECT current_setting('memory_limit'), current_setting('checkpoint_threshold'), current_setting('threads')`).Scan(&mem, &ckpt, &threads); err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(mem, tc.wantMemory) || !strings.HasPrefix(ckpt, tc.wantCkpt) || threads != tc.wantThreads {
				t.Fatalf("memory_limit %q, checkpoint_threshold %q, threads %d; want %s…, %s…, %d", mem, ckpt, threads, tc.wantMemory, tc.wantCkpt, tc.wantThreads)
			}
		})
	}
	if _, err := Open(context.Background(), filepath.Join(t.TempDir(), "m.duckdb")+"?memory_limit=%zz", nil); err == nil {
		t.Fatal("Open accepted malformed options")
	}
}

func TestResults(t *testing.T) { storetest.RunResults(t, storetest.TempFile(Open, "forum.duckdb")) }

func TestBulk(t *testing.T) { storetest.RunBulk(t, storetest.TempFile(Open, "forum.duckdb")) }

func TestRedelivery(t *testing.T) {
	storetest.RunRedelivery(t, storetest.TempFile(Open, "forum.duckdb"))
}

// TestUpgradeFrom0008: a store left by a release before 0009_results (trust
// records without leaf_hash) upgrades in place: old rows read with an empty
// leaf, new ones keep theirs, and migrating again changes nothing.
func TestUpgradeFrom0008(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.duckdb")
	s, err := Open(ctx, path, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.migrate(ctx, 8); err != nil {
		t.Fatalf("migrate to 0008: %v", err)
	}
	if _, err := s.db.ExecContext(ctx, `INSERT INTO trust_records (server, publication_id, computed_at, score, band,
		toolfinder_score, content_sha256, record) VALUES ('a/old', 'p-old', TIMESTAMP '2025-03-01 00:00:00', 50, 'C', 1, 'sha', '{}')`); err != nil {
		t.Fatalf("insert an old row: %v", err)
	}
	s.Close()

	for round := range 2 { // the second Migrate (and reopen) must be a no-op
		s, err := Open(ctx, path, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("round %d: Migrate: %v", round, err)
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

func TestAdmin(t *testing.T) { storetest.RunAdmin(t, storetest.TempFile(Open, "forum.duckdb")) }

// TestUpgradeFrom0009: a store left before 0011_registry_sightings, holding
// an old latest version demoted by the crawl that published the next one
// (two rows of the old version), upgrades in place: every row is sighted at
// its first observation, Versions serves one latest version, new sightings
// count, and migrating again changes nothing.
func TestUpgradeFrom0009(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.duckdb")
	s, err := Open(ctx, path, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.migrate(ctx, 9); err != nil {
		t.Fatalf("migrate to 0009: %v", err)
	}
	for _, r := range [][]any{{"1.0.0", "v1-latest", "2025-03-01", true}, {"1.0.0", "v1-demoted", "2025-03-02", false}, {"2.0.0", "v2-latest", "2025-03-02", true}} {
		if _, err := s.db.ExecContext(ctx, `INSERT INTO registry_records (`+recordSelect+`)
			VALUES ('a/old', ?, ?, 'a', CAST(? AS TIMESTAMP), 's', 'active', ?, TIMESTAMP '2025-01-01', TIMESTAMP '2025-01-01', '', '', '{}')`,
			r[0], r[1], r[2], r[3]); err != nil {
			t.Fatalf("insert an old row: %v", err)
		}
	}
	s.Close()
	for round := range 2 {
		s, err := Open(ctx, path, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("round %d: Migrate: %v", round, err)
		}
		vs, err := s.Versions(ctx, "a/old", 0)
		if err != nil {
			t.Fatal(err)
		}
		var latest []string
		for _, v := range vs {
			if !v.LastObservedAt.Equal(v.ObservedAt) && round == 0 {
				t.Errorf("%s sighted %v..%v: an old row's last sighting is its first", v.ContentSHA256, v.ObservedAt, v.LastObservedAt)
			}
			if v.IsLatest {
				latest = append(latest, v.ContentSHA256)
			}
		}
		want := "v2-latest"
		if round > 0 {
			want = "v1-latest" // sighted again in round 0
		}
		if strings.Join(latest, ",") != want {
			t.Errorf("round %d: latest rows %v, want only %s", round, latest, want)
		}
		// A later sighting of the old content counts.
		again := store.Record{Name: "a/old", Version: "1.0.0", Namespace: "a", ContentSHA256: "v1-latest", Status: "active", IsLatest: true,
			ObservedAt: time.Date(2025, 3, 3, 0, 0, 0, 0, time.UTC), Server: "{}"}
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

// TestUpgradeToAppendOnly: a store left by a release before 0012 (keyed
// histories, ON CONFLICT upserts) upgrades in place: every row is kept,
// reads see it once, a later write of the same key wins over it, a
// redelivery of that write changes nothing, and migrating again is a no-op.
func TestUpgradeToAppendOnly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "old.duckdb")
	s, err := Open(ctx, path, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.migrate(ctx, 9); err != nil {
		t.Fatalf("migrate to 0009: %v", err)
	}
	// Rows as the keyed tables of 0002, 0001, 0007 and 0009 held them.
	for _, q := range []string{
		`INSERT INTO health_checks (id, server, remote_url, observed_at, transport, outcome, error_class, http_status,
			latency_ms, auth_kind, protocol_version, tool_count, tools_listed, check_json)
			VALUES ('h1', 'a/x', 'https://a.example/', TIMESTAMP '2025-03-01 00:00:00', 'sse', 'ok', '', 200, 12.5, 'none', 'p', 2, true, '{"old":1}')`,
		`INSERT INTO drift_events (id, server, namespace, kind, version, before, after, observed_at, version_bump, snapshot_id)
			VALUES ('e1', 'a/x', 'a', 'title_changed', '1', 'A', 'B', TIMESTAMP '2025-03-01 00:00:00', false, 's1')`,
		`INSERT INTO provenance (id, repo, observed_at, status, http_status, not_modified, full_name, renamed_to, owner_login,
			owner_type, stars, fork, archived, disabled, license_spdx, commits_fetched, commits_count, authors, verified, empty, cap_hit)
			VALUES ('github:o/r@1', 'github.com/o/r', TIMESTAMP '2025-03-01 00:00:00', 'resolved', 200, false, 'o/r', '', 'o', 'User',
			7, false, false, false, 'MIT', false, 0, 0, 0, false, false)`,
		`INSERT INTO drift_states (server, namespace, as_of, score, strong_negative, events, state)
			VALUES ('a/x', 'a', TIMESTAMP '2025-03-01 00:00:00', 90, false, 1, '{"old":1}')`,
		`INSERT INTO registry_loads (snapshot_id, observed_at, entries) VALUES ('s1', TIMESTAMP '2025-03-01 00:00:00', 3)`,
	} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatalf("an old row: %v\n%s", err, q)
		}
	}
	s.Close()
	at := time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)
	newer := store.HealthCheck{ID: "h1", Server: "a/x", RemoteURL: "https://a.example/", ObservedAt: at, Outcome: "unreachable", Check: `{"new":1}`}
	for round := range 2 { // the second Migrate (and reopen) must be a no-op
		s, err := Open(ctx, path, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Migrate(ctx); err != nil {
			t.Fatalf("round %d: Migrate: %v", round, err)
		}
		hcs, err := s.HealthChecks(ctx, store.HealthQuery{Server: "a/x"})
		if err != nil || len(hcs) != 1 {
			t.Fatalf("round %d: HealthChecks = %+v, %v", round, hcs, err)
		}
		if want := map[int]string{0: `{"old":1}`, 1: `{"new":1}`}[round]; hcs[0].Check != want {
			t.Errorf("round %d: check %s, want %s", round, hcs[0].Check, want)
		}
		if round == 0 {
			for range 2 { // written, then redelivered
				if err := s.InsertHealthChecks(ctx, []store.HealthCheck{newer}); err != nil {
					t.Fatal(err)
				}
			}
			if hcs, err := s.HealthChecks(ctx, store.HealthQuery{Server: "a/x"}); err != nil || len(hcs) != 1 || hcs[0].Check != `{"new":1}` {
				t.Errorf("after a newer write of an old id: %+v, %v", hcs, err)
			}
		}
		c, err := s.Counts(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c["health_checks"] != 1 || c["drift_events"] != 1 || c["provenance"] != 1 {
			t.Errorf("round %d: counts %v, want each old row once", round, c)
		}
		ds, err := s.DriftStates(ctx, "a/x", 10)
		if err != nil || len(ds) != 1 || ds[0].State != `{"old":1}` {
			t.Errorf("round %d: DriftStates = %+v, %v", round, ds, err)
		}
		if ok, err := s.SnapshotLoaded(ctx, "s1"); err != nil || !ok {
			t.Errorf("round %d: SnapshotLoaded(s1) = %v, %v", round, ok, err)
		}
		var pk int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM duckdb_constraints() WHERE table_name IN ('health_checks', 'drift_events', 'provenance', 'drift_states') AND constraint_type = 'PRIMARY KEY'`).Scan(&pk); err != nil || pk != 0 {
			t.Errorf("round %d: %d primary keys left on the histories (%v)", round, pk, err)
		}
		s.Close()
	}
}
