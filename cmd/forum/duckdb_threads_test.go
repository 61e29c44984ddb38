package main

import (
	"context"
	"strings"
	"testing"
)

// A --duckdb-threads that is not a positive whole number is refused with
// the flag's name, before DuckDB is opened (whose own error would read as
// a locked file).
func TestDuckDBThreadsRefusedWhenNotAPositiveNumber(t *testing.T) {
	for _, v := range []string{"0", "-2", "two", "1.5"} {
		cfg := &config{DataDir: t.TempDir(), LogLevel: "error", LogFormat: "console", DuckDBMemory: "256MB", DuckDBThreads: v}
		a, err := openApp(context.Background(), cfg, withStore)
		if err == nil {
			a.close()
			t.Fatalf("--duckdb-threads %q accepted", v)
		}
		if !strings.Contains(err.Error(), "--duckdb-threads") {
			t.Fatalf("--duckdb-threads %q: error %q does not name the flag", v, err)
		}
	}
}
