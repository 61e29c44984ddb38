package main

import (
	"context"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/sql/duckdb"
)

func TestSubstitute(t *testing.T) {
	now := time.Date(2025, 3, 31, 0, 0, 0, 0, time.UTC)
	got, err := substitute("x >= {{now_ms}} - 1 AND s = '{{server}}'", []string{"server=io.github.a/b"}, now)
	if err != nil || got != "x >= 1743379200000 - 1 AND s = 'io.github.a/b'" {
		t.Fatalf("%q %v", got, err)
	}
	if got, _ := substitute("{{now_ms}}", []string{"now_ms=5"}, now); got != "5" {
		t.Errorf("--param now_ms must override the default: %q", got)
	}
	for _, bad := range [][]string{{"server=a'b"}, {"server"}, {"now_ms=soon"}, {"9x=1"}} {
		if _, err := substitute("{{server}}", bad, now); err == nil {
			t.Errorf("params %v accepted", bad)
		}
	}
	if _, err := substitute("{{server}} {{other}}", nil, now); err == nil || !strings.Contains(err.Error(), "other, server") {
		t.Errorf("missing placeholders must be named: %v", err)
	}
}

func TestStripLeadingComments(t *testing.T) {
	if got := stripLeadingComments("-- a\n\n  -- b\nSELECT 1 -- c\n"); got != "SELECT 1 -- c\n" {
		t.Errorf("%q", got)
	}
}

func TestSQLArgs(t *testing.T) {
	q := "-- uptime: per server\nSELECT 1"
	got := sqlArgs([]string{"sql", q, "--format", "json", "--param=server=a/b"})
	want := []string{"sql", "--format", "json", "--param=server=a/b", "--", q}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q", got)
	}
	for _, args := range [][]string{{"sql", "SELECT 1", "--format", "json"}, {"replay", "-- x y"}} {
		if got := sqlArgs(args); !reflect.DeepEqual(got, args) {
			t.Errorf("%q changed to %q", args, got)
		}
	}
	// Through cobra: the statement reaches RunE as the argument.
	cmd := newRoot()
	cmd.SetArgs(sqlArgs([]string{"sql", q, "--format", "yaml"}))
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--format") {
		t.Errorf("the comment-led statement must parse as the argument (then --format fails): %v", err)
	}
}

// `forum sql --help` lists every table and view of a migrated store, and
// nothing else.
func TestSQLHelpListsEveryTable(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "t.duckdb"), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	_, rows, err := s.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY table_name")
	if err != nil {
		t.Fatal(err)
	}
	inStore := map[string]bool{}
	for _, r := range rows {
		inStore[r[0].(string)] = true
	}
	help := newSQLCmd().Long
	listed := map[string]bool{}
	for _, tb := range sqlTables {
		listed[tb[0]] = true
		if !inStore[tb[0]] {
			t.Errorf("help lists %s, the store has no such table or view", tb[0])
		}
		if !strings.Contains(help, "  "+tb[0]+" ") {
			t.Errorf("help text lacks %s", tb[0])
		}
	}
	for name := range inStore {
		if !listed[name] {
			t.Errorf("the store has %s, forum sql --help does not list it", name)
		}
	}
}
