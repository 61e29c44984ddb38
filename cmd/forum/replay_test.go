package main

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	ch "github.com/ClickHouse/clickhouse-go/v2"

	"github.com/forum-mcp/forum/sql/clickhouse"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

const bundled = "../../ingest/registry/testdata/snapshots"

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// forumBin builds the real binary once per test run.
func forumBin(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "forum-bin-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "forum")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

func replayCmd(t *testing.T, dataDir string, extra ...string) *exec.Cmd {
	args := append([]string{"replay", "--snapshots", bundled, "--data-dir", dataDir, "--log-level", "warn", "--listen", "127.0.0.1:0"}, extra...)
	cmd := exec.Command(forumBin(t), args...)
	cmd.Env = append(os.Environ(), "FORUM_KAFKA_BROKERS=", "FORUM_CLICKHOUSE_DSN=")
	return cmd
}

// contents is everything the replay stored, in a comparable form.
type contents struct {
	Events    []string // sorted "id kind server"
	Snapshots []string
	Servers   []string // name@version#sha
	Counts    map[string]int64
}

func readContents(t *testing.T, dataDir string) contents {
	t.Helper()
	s, err := duckdb.Open(context.Background(), filepath.Join(dataDir, "forum.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	return storeContents(t, s)
}

func storeContents(t *testing.T, s store.Store) contents {
	t.Helper()
	ctx := context.Background()
	var c contents
	var err error
	evs, err := s.Events(ctx, store.EventQuery{Limit: 10000})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		c.Events = append(c.Events, e.ID+" "+e.Kind+" "+e.Server)
	}
	slices.Sort(c.Events)
	snaps, err := s.Snapshots(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sn := range snaps {
		c.Snapshots = append(c.Snapshots, fmt.Sprintf("%s partial=%v events=%d names=%d", sn.ID, sn.Partial, sn.Events, sn.Names))
	}
	rows, err := s.ListServers(ctx, store.ListQuery{Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		c.Servers = append(c.Servers, r.Name+"@"+r.Version+"#"+r.ContentSHA256)
	}
	if c.Counts, err = s.Counts(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func compareContents(t *testing.T, got, want contents) {
	t.Helper()
	if !slices.Equal(got.Events, want.Events) {
		t.Errorf("drift events differ: %d vs %d", len(got.Events), len(want.Events))
	}
	if !slices.Equal(got.Snapshots, want.Snapshots) {
		t.Errorf("snapshots differ:\n%s\nvs\n%s", strings.Join(got.Snapshots, "\n"), strings.Join(want.Snapshots, "\n"))
	}
	if !slices.Equal(got.Servers, want.Servers) {
		t.Errorf("latest view differs: %d vs %d servers", len(got.Servers), len(want.Servers))
	}
	if !maps.Equal(got.Counts, want.Counts) {
		t.Errorf("table counts %v, want %v", got.Counts, want.Counts)
	}
}

func TestReplayEndToEnd(t *testing.T) {
	dir := t.TempDir()
	out, err := replayCmd(t, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	c := readContents(t, dir)
	// Every event exactly once: ids are unique.
	ids := map[string]bool{}
	for _, e := range c.Events {
		id := strings.Fields(e)[0]
		if ids[id] {
			t.Fatalf("event %s stored twice", id)
		}
		ids[id] = true
	}
	kinds := map[string]int{}
	for _, e := range c.Events {
		kinds[strings.Fields(e)[1]]++
	}
	// The first capture seeds 421 new_server events; the rest match refdiff.py
	// on these files (see ingest/differ tests).
	want := map[string]int{"new_server": 421 + 178, "version_added": 145, "description_changed": 5, "endpoints_changed": 2, "removed": 4}
	if !maps.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	if len(c.Snapshots) != 7 || !strings.Contains(c.Snapshots[2], "partial=true") || !strings.Contains(c.Snapshots[3], "partial=true") {
		t.Errorf("snapshots: %v", c.Snapshots)
	}
	if !strings.Contains(string(out), "removed                   4") {
		t.Errorf("summary not printed:\n%s", out)
	}
	// A second replay of the same files changes nothing.
	if out, err := replayCmd(t, dir).CombinedOutput(); err != nil {
		t.Fatalf("second replay: %v\n%s", err, out)
	}
	compareContents(t, readContents(t, dir), c)
}

// TestReplaySurvivesSIGKILL kills the process at several points of a replay,
// restarts it each time, and expects the store an uninterrupted run leaves.
func TestReplaySurvivesSIGKILL(t *testing.T) {
	clean := t.TempDir()
	if out, err := replayCmd(t, clean).CombinedOutput(); err != nil {
		t.Fatalf("clean replay: %v\n%s", err, out)
	}
	want := readContents(t, clean)

	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 11))
	kills := 0
	for i := range 5 {
		cmd := replayCmd(t, dir)
		var buf strings.Builder
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		delay := time.Duration(150+rng.IntN(1500)) * time.Millisecond
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			t.Logf("run %d finished before its kill point (%v): %v", i, delay, err)
		case <-time.After(delay):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
			t.Logf("run %d killed after %v", i, delay)
		}
	}
	if kills == 0 {
		t.Fatal("no run was killed mid-way; the test proved nothing")
	}
	out, err := replayCmd(t, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("final replay: %v\n%s", err, out)
	}
	compareContents(t, readContents(t, dir), want)
}

// TestIntegrationClickHouseReplay runs the same replay with the ClickHouse
// store (one code path, two engines) and expects exactly the DuckDB contents.
func TestIntegrationClickHouseReplay(t *testing.T) {
	dsn := os.Getenv("FORUM_TEST_CLICKHOUSE")
	if dsn == "" {
		t.Skip("FORUM_TEST_CLICKHOUSE not set (e.g. $(deploy/clickhouse.sh dsn))")
	}
	dbDSN := strings.TrimRight(dsn, "/") + fmt.Sprintf("/forum_replay_%d", time.Now().UnixNano())
	ctx := context.Background()

	duck := t.TempDir()
	if out, err := replayCmd(t, duck).CombinedOutput(); err != nil {
		t.Fatalf("duckdb replay: %v\n%s", err, out)
	}
	want := readContents(t, duck)

	dir := t.TempDir()
	out, err := replayCmd(t, dir, "--clickhouse-dsn", dbDSN).CombinedOutput()
	if err != nil {
		t.Fatalf("clickhouse replay: %v\n%s", err, out)
	}
	s, err := clickhouse.Open(ctx, dbDSN, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	t.Cleanup(func() {
		opts, err := ch.ParseDSN(dsn)
		if err != nil {
			return
		}
		if c, err := ch.Open(opts); err == nil {
			_ = c.Exec(ctx, "DROP DATABASE IF EXISTS "+s.Database())
			c.Close()
		}
	})
	compareContents(t, storeContents(t, s), want)
}
