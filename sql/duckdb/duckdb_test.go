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
