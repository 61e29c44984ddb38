package duckdb

import (
	"testing"

	"github.com/forum-mcp/forum/sql/store/storetest"
)

func TestProvenance(t *testing.T) {
	storetest.RunProvenance(t, storetest.TempFile(Open, "forum.duckdb"))
}
