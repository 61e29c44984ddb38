package main

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/drift"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/ownerburst"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// checkpoints reads the drift and owner-burst checkpoints of a data dir.
func checkpoints(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, name := range []string{drift.CheckpointFile, ownerburst.CheckpointFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatalf("checkpoint %s: %v", name, err)
		}
		out[name] = b
	}
	return out
}

// TestDriftStagesSurviveSIGKILL: the drift and owner-burst processors of a
// real `forum replay` child process are SIGKILLed at >= 20 random points,
// restarted each time on the same data dir, and finally run to the end:
// their checkpointed states equal those of an uninterrupted run, byte for
// byte (the checkpoints are canonical JSON).
func TestDriftStagesSurviveSIGKILL(t *testing.T) {
	requireE2E(t) // builds and runs the binary ~25 times
	forumBin(t)
	clean := t.TempDir()
	t0 := time.Now()
	if out, err := replayCmd(t, clean).CombinedOutput(); err != nil {
		t.Fatalf("clean replay: %v\n%s", err, out)
	}
	// Kill points spread over start-up, publishing and the stages' work,
	// inside the time a whole run takes: the clean run's at first, then
	// the shortest restart that ran to its end (a restart on a dir that
	// already holds most of the work is quicker).
	span := time.Since(t0)
	want := checkpoints(t, clean)

	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(20, 26))
	kills := 0
	for i := 0; kills < 20 && i < 60; i++ {
		delay := 100*time.Millisecond + time.Duration(rng.Int64N(int64(max(span*9/10-100*time.Millisecond, time.Millisecond))))
		start := time.Now()
		cmd := replayCmd(t, dir)
		var buf bytes.Buffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			took := time.Since(start)
			t.Logf("run %d finished in %v, before its kill point %v: %v", i, took, delay, err)
			span = min(span, took)
		case <-time.After(delay):
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-done
			kills++
		}
	}
	if kills < 20 {
		t.Fatalf("only %d kills", kills)
	}
	if out, err := replayCmd(t, dir).CombinedOutput(); err != nil {
		t.Fatalf("final replay: %v\n%s", err, out)
	}
	got := checkpoints(t, dir)
	for name, w := range want {
		if !bytes.Equal(got[name], w) {
			t.Errorf("%s after %d kills differs from the uninterrupted run (%d vs %d bytes)", name, kills, len(got[name]), len(w))
		}
	}
}

func TestBurstsOverBundledSnapshots(t *testing.T) {
	files, err := registry.ListSnapshots(bundled)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := burstsOver(files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Snapshots != len(files) || len(rep.Days) != len(files) || rep.Baseline != filepath.Base(files[0].Path) {
		t.Fatalf("report: %+v", rep)
	}
	// The baseline's 421 servers never flag; nothing on the first day.
	if len(rep.Days[0].Flagged) != 0 {
		t.Errorf("baseline day flagged: %+v", rep.Days[0].Flagged)
	}
	for _, d := range rep.Days {
		if d.FlaggedRecords > d.Records || d.FlaggedServers > d.Servers {
			t.Errorf("%s: reach %d/%d records, %d/%d servers", d.Day, d.FlaggedRecords, d.Records, d.FlaggedServers, d.Servers)
		}
	}
}

// TestIncidentsFileAllOrNothing: one bad line and nothing is accepted.
func TestIncidentsFileAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "f.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	if err := s.InsertRecords(ctx, []store.Record{{Name: "io.github.acme/tool", Version: "1", Namespace: schema.Namespace("io.github.acme/tool"), ContentSHA256: "x", ObservedAt: at, IsLatest: true, Status: "active", Server: "{}"}}); err != nil {
		t.Fatal(err)
	}
	good := `{"server":"io.github.acme/tool","date":"2025-10-02T00:00:00Z","class":"rug_pull","severity":"high","status":"confirmed","source_uri":"https://example.org/a","reason":"advisory"}`
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lk := incidents.StoreLookup{Servers: s, Incidents: s}
	now := time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC)
	msgs, problems, err := validateFile(ctx, write("ok.jsonl", "# curated\n"+good+"\n\n"), "alice", "", now, lk)
	if err != nil || len(problems) != 0 || len(msgs) != 1 || msgs[0].Audit.Who != "alice" {
		t.Fatalf("good file: %v %v %+v", err, problems, msgs)
	}
	bad := good + "\n" + strings.Replace(good, "io.github.acme/tool", "io.github.ghost/none", 1) + "\n" +
		strings.Replace(good, "rug_pull", "spam", 1) + "\n" + good + "\n{\"server\":1}\n"
	msgs, problems, err = validateFile(ctx, write("bad.jsonl", bad), "alice", "", now, lk)
	if err != nil {
		t.Fatal(err)
	}
	if msgs != nil || len(problems) != 4 {
		t.Fatalf("bad file: msgs %d, problems %q", len(msgs), problems)
	}
	for i, want := range []string{"bad.jsonl:2:", "unknown_server", "bad.jsonl:3:", "unknown_class", "bad.jsonl:4:", "duplicate_id", "bad.jsonl:5:"} {
		if !strings.Contains(strings.Join(problems, "\n"), want) {
			t.Errorf("problem %d: %q not reported in %q", i, want, problems)
		}
	}
}
