package duckdb

import (
	"context"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/sql/store"
	"github.com/forum-mcp/forum/sql/store/storetest"
)

func TestTrustConformance(t *testing.T) {
	storetest.RunTrust(t, func(t *testing.T) store.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "forum.duckdb"), zaptest.NewLogger(t))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

func TestReviewConformance(t *testing.T) {
	storetest.RunReview(t, storetest.TempFile(Open, "forum.duckdb"))
}
