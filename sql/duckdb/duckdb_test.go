package duckdb

import (
	"context"
	"path/filepath"
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
