package main

import (
	"context"
	"encoding/json"
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
	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/internal/testenv"
	"github.com/forum-mcp/forum/schema"
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

// requireE2E gates the tests that build the binary and run whole replays
// (tens of seconds to minutes on a 2-core box), so `go test ./...` stays a
// fast unit run. deploy/test.sh, and so CI, sets FORUM_TEST_E2E=1.
func requireE2E(t *testing.T) {
	t.Helper()
	testenv.Service(t, "FORUM_TEST_E2E", "end-to-end replay test: set FORUM_TEST_E2E=1 (deploy/test.sh does)")
}

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
	// Results are the processors' stored conclusions by table, each row by
	// its key (and, for publications, its Merkle root), sorted.
	Results map[string][]string
}

// resultKeys are the queries that list each result table's rows by key,
// the same text on both engines.
var resultKeys = map[string]string{
	"drift_states":       "SELECT DISTINCT server, as_of_ms FROM drift_states",
	"incident_states":    "SELECT DISTINCT server, as_of_ms FROM incident_states",
	"owner_bursts":       "SELECT DISTINCT namespace, as_of_ms, flagged FROM owner_bursts",
	"provenance_signals": "SELECT DISTINCT server, as_of_ms FROM provenance_signals",
	"base_rates":         "SELECT DISTINCT flag, as_of_ms, flagged, n FROM base_rates",
	"provenance_gate":    "SELECT DISTINCT as_of_ms, resolvable FROM provenance_gate",
	"trust_records":      "SELECT DISTINCT server, publication_id, content_sha256, leaf_hash FROM trust_records",
	"publications":       "SELECT DISTINCT id, merkle_root FROM publications",
	"registry_loads":     "SELECT DISTINCT snapshot_id FROM registry_loads",
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
	q, ok := s.(store.Querier)
	if !ok {
		t.Fatalf("store %T answers no SQL", s)
	}
	c.Results = map[string][]string{}
	for table, sql := range resultKeys {
		_, rows, err := q.Query(ctx, sql)
		if err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		for _, r := range rows {
			for i, v := range r {
				if b, ok := v.(bool); ok { // DuckDB's BOOLEAN is ClickHouse's UInt8
					r[i] = map[bool]int{false: 0, true: 1}[b]
				}
			}
			c.Results[table] = append(c.Results[table], fmt.Sprint(r...))
		}
		slices.Sort(c.Results[table])
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
	for table := range resultKeys {
		g, w := got.Results[table], want.Results[table]
		if len(w) == 0 && table != "incident_states" { // a replay curates no incidents
			t.Errorf("%s: the reference run stored nothing; the comparison proves nothing", table)
		}
		if !slices.Equal(g, w) {
			lost, extra := diffSorted(w, g)
			t.Errorf("%s: %d rows, want %d: %d lost %v, %d extra %v", table, len(g), len(w), len(lost), head(lost), len(extra), head(extra))
		}
	}
}

// diffSorted returns what of want is missing from got, and what got has
// beyond want (both sorted).
func diffSorted(want, got []string) (lost, extra []string) {
	i, j := 0, 0
	for i < len(want) || j < len(got) {
		switch {
		case j == len(got) || (i < len(want) && want[i] < got[j]):
			lost = append(lost, want[i])
			i++
		case i == len(want) || got[j] < want[i]:
			extra = append(extra, got[j])
			j++
		default:
			i++
			j++
		}
	}
	return lost, extra
}

func head(xs []string) []string {
	if len(xs) > 3 {
		return xs[:3]
	}
	return xs
}

func TestReplayEndToEnd(t *testing.T) {
	requireE2E(t)
	dir := t.TempDir()
	out, err := replayCmd(t, dir).CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	c := readContents(t, dir)
	checkVisibility(t, dir)
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

// checkVisibility: a replay probes nothing, so no record of its last
// publication may call a remote unreachable — remotes never probed are
// not-checked (SPEC §4 Coverage honesty), with the endpoint reason
// not_checked.
func checkVisibility(t *testing.T, dir string) {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(dir, "forum.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	pubs, err := s.Publications(ctx, 1)
	if err != nil || len(pubs) != 1 {
		t.Fatalf("publications: %v, %v", pubs, err)
	}
	recs, err := s.PublicationRecords(ctx, pubs[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	vis := map[string]int{}
	for _, r := range recs {
		var rec struct {
			Visibility string `json:"visibility"`
			Health     []any  `json:"health"`
			Unobserved []struct {
				Dimension string `json:"dimension"`
				Reason    string `json:"reason"`
			} `json:"unobserved"`
		}
		if err := json.Unmarshal([]byte(r.Record), &rec); err != nil {
			t.Fatal(err)
		}
		vis[rec.Visibility]++
		if rec.Visibility == "unreachable" && len(rec.Health) == 0 {
			t.Errorf("%s: unreachable with no health check", r.Server)
		}
		for _, u := range rec.Unobserved {
			if u.Dimension == "endpoint" && u.Reason == "not_checked" && rec.Visibility != "not-checked" {
				t.Errorf("%s: endpoint not_checked but visibility %s", r.Server, rec.Visibility)
			}
		}
	}
	if vis["not-checked"] == 0 {
		t.Errorf("visibility tiers %v: no not-checked record", vis)
	}
	t.Logf("visibility of %s: %v", pubs[0].ID, vis)
}

// TestReplaySurvivesSIGKILL kills the process at several points of a replay,
// restarts it each time, and expects the store an uninterrupted run leaves.
func TestReplaySurvivesSIGKILL(t *testing.T) {
	requireE2E(t)
	clean := t.TempDir()
	forumBin(t) // build first: the run is what is timed
	began := time.Now()
	if out, err := replayCmd(t, clean).CombinedOutput(); err != nil {
		t.Fatalf("clean replay: %v\n%s", err, out)
	}
	full := time.Since(began)
	want := readContents(t, clean)

	rng := rand.New(rand.NewPCG(7, 11))
	kills := 0
	// killAt starts a replay in dir and SIGKILLs it after delay (unless it
	// finished first).
	killAt := func(dir string, delay time.Duration) {
		cmd := replayCmd(t, dir)
		var buf strings.Builder
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			t.Logf("finished before its kill point (%v): %v", delay, err)
		case <-time.After(delay):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
			t.Logf("killed after %v", delay)
		}
	}
	// Six independent runs, each killed at a different share of an
	// uninterrupted run (start-up, publishing, diffing, storing), the odd
	// ones killed a second time after the restart; then run to the end.
	for i := range 6 {
		dir := t.TempDir()
		killAt(dir, time.Duration(float64(full)*(0.1+0.14*float64(i))))
		if i%2 == 1 {
			killAt(dir, time.Duration(float64(full)*(0.1+0.5*rng.Float64())))
		}
		out, err := replayCmd(t, dir).CombinedOutput()
		if err != nil {
			t.Fatalf("replay after kill: %v\n%s", err, out)
		}
		compareContents(t, readContents(t, dir), want)
	}
	if kills < 5 {
		t.Fatalf("only %d runs were killed mid-way; the test proves too little", kills)
	}
}

// TestIntegrationClickHouseReplay runs the same replay with the ClickHouse
// store (one code path, two engines) and expects exactly the DuckDB contents.
func TestIntegrationClickHouseReplay(t *testing.T) {
	dsn := testenv.Service(t, "FORUM_TEST_CLICKHOUSE", "e.g. $(deploy/clickhouse.sh dsn)")
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

// TestIntegrationKafkaReplay runs the replay on a real Apache Kafka broker
// (FORUM_TEST_KAFKA) and expects exactly what the embedded broker gives. The
// pipeline's topics are deleted first, so the test starts from an empty bus
// also on a broker that served an earlier run.
func TestIntegrationKafkaReplay(t *testing.T) {
	brokers := testenv.Service(t, "FORUM_TEST_KAFKA", "e.g. $(deploy/kafka.sh brokers)")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := &kafka.Client{Addr: kafka.TCP(strings.Split(brokers, ",")...), Timeout: 10 * time.Second}
	if _, err := cl.Metadata(ctx, &kafka.MetadataRequest{}); err != nil {
		t.Fatalf("Kafka at %s: %v", brokers, err)
	}
	if _, err := cl.DeleteTopics(ctx, &kafka.DeleteTopicsRequest{Topics: schema.TopicNames()}); err != nil {
		t.Fatalf("deleting old topics: %v", err)
	}
	for i := 0; ; i++ {
		md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: schema.TopicNames()})
		gone := err == nil
		if err == nil {
			for _, tp := range md.Topics {
				if tp.Error == nil {
					gone = false
				}
			}
		}
		if gone {
			break
		}
		if i > 100 {
			t.Fatal("old topics are not going away")
		}
		time.Sleep(200 * time.Millisecond)
	}

	embedded := t.TempDir()
	if out, err := replayCmd(t, embedded).CombinedOutput(); err != nil {
		t.Fatalf("embedded replay: %v\n%s", err, out)
	}
	dir := t.TempDir()
	if out, err := replayCmd(t, dir, "--kafka-brokers", brokers).CombinedOutput(); err != nil {
		t.Fatalf("kafka replay: %v\n%s", err, out)
	}
	compareContents(t, readContents(t, dir), readContents(t, embedded))
}

// TestReplayBadFilesGoToTheDLQ: a truncated capture and an HTML error page
// among real ones land in the DLQ with their reasons; the truncated capture
// is read as partial (no removals), and every other snapshot is stored.
func TestReplayBadFilesGoToTheDLQ(t *testing.T) {
	requireE2E(t)
	src := t.TempDir()
	files, _ := filepath.Glob(bundled + "/*.json.gz")
	for _, f := range files {
		b, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(src, filepath.Base(f)), b, 0o644)
	}
	os.Remove(filepath.Join(src, "MANIFEST.tsv"))
	// 2025-10-10: the 10-09 capture cut in the middle of an entry.
	whole, err := exec.Command("sh", "-c", "gzip -dc "+filepath.Join(bundled, "2025-10-09.json.gz")).Output()
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "2025-10-10.json"), whole[:len(whole)/3], 0o644)
	os.WriteFile(filepath.Join(src, "2025-10-11.json"), []byte("<html><body>502 Bad Gateway</body></html>"), 0o644)

	dir := t.TempDir()
	cmd := exec.Command(forumBin(t), "replay", "--snapshots", src, "--data-dir", dir, "--log-level", "warn")
	cmd.Env = append(os.Environ(), "FORUM_KAFKA_BROKERS=", "FORUM_CLICKHOUSE_DSN=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	s, err := duckdb.Open(context.Background(), filepath.Join(dir, "forum.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dl, err := s.DLQ(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	reasons := map[string]string{}
	for _, d := range dl {
		reasons[d.Source] = d.Reason
	}
	if reasons["2025-10-10.json"] != "truncated_json" || reasons["2025-10-11.json"] != "not_json" {
		t.Errorf("dead letters: %v", reasons)
	}
	snaps, _ := s.Snapshots(context.Background())
	if len(snaps) != 9 {
		t.Fatalf("%d snapshots applied, want 9", len(snaps))
	}
	for _, sn := range snaps[7:] {
		if !sn.Partial || sn.Counts["removed"] != 0 {
			t.Errorf("%s: partial=%v removed=%d; a broken capture must not remove servers", sn.Source, sn.Partial, sn.Counts["removed"])
		}
	}
	counts, _ := s.EventCounts(context.Background())
	if counts["removed"] != 4 {
		t.Errorf("removed = %d, want the 4 real removals only", counts["removed"])
	}
}
