package duckdb

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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

// TestMemoryLimit pins that Open caps DuckDB's buffer pool (DefaultMemoryLimit)
// instead of DuckDB's default of 80 % of RAM.
func TestMemoryLimit(t *testing.T) {
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "m.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got string
	if err := s.db.QueryRow(`SELECT current_setting('memory_limit')`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	if DefaultMemoryLimit != "512MB" || !strings.HasPrefix(got, "488") { // 512 MB = 488.2 MiB
		t.Fatalf("memory_limit = %q (DefaultMemoryLimit %q), want 512MB", got, DefaultMemoryLimit)
	}
}

func TestResults(t *testing.T) { storetest.RunResults(t, storetest.TempFile(Open, "forum.duckdb")) }

func TestBulk(t *testing.T) { storetest.RunBulk(t, storetest.TempFile(Open, "forum.duckdb")) }

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
