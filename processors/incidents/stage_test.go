package incidents

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// TestStageOverTheBus: published actions travel the embedded broker, the
// stage stores them (incidents + audit), checkpoints, and marks the feed
// loaded once it has no lag; a restarted stage resumes from its checkpoint.
func TestStageOverTheBus(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	log := zaptest.NewLogger(t)
	b, err := bus.StartEmbedded(filepath.Join(dir, "kafka"), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := bus.EnsureTopics(ctx, b.Addrs(), []bus.TopicSpec{{Name: Topic, Partitions: 3}}, log); err != nil {
		t.Fatal(err)
	}
	s, err := duckdb.Open(ctx, filepath.Join(dir, "s.duckdb"), log)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	lk := fakeLookup{servers: map[string]bool{"io.github.acme/tool": true}, incidents: map[string]Record{}}
	ins, err := ValidateInsert(ctx, good(), "alice", now, lk)
	if err != nil {
		t.Fatal(err)
	}
	lk.incidents[ins.Incident.ID] = ins.Incident
	ret, err := ValidateRetract(ctx, ins.Incident.ID, "mistake", "bob", now.Add(time.Minute), lk)
	if err != nil {
		t.Fatal(err)
	}
	w := bus.NewWriter(b.Addrs(), log)
	defer w.Close()
	if err := (&Publisher{W: w}).Publish(ctx, ins, ret); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "incidents-state.json")
	run := func() *Stage {
		st, err := NewStage(b.Addrs(), s, path, log)
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- st.Run(rctx) }()
		for !st.State.Loaded() {
			select {
			case <-ctx.Done():
				t.Fatal("the feed never loaded")
			case <-time.After(50 * time.Millisecond):
			}
		}
		stop()
		<-done
		return st
	}
	st := run()
	h := st.State.History("io.github.acme/tool")
	if len(h) != 1 || h[0].Status != "retracted" || len(h[0].Audit) != 2 {
		t.Fatalf("history = %+v", h)
	}
	if in := st.State.IncidentsInput("io.github.acme/tool"); !in.Checked || len(in.Items) != 1 {
		t.Errorf("IncidentsInput = %+v", in)
	}
	rows, err := s.Incidents(ctx, "io.github.acme/tool")
	if err != nil || len(rows) != 1 || rows[0].Status != "retracted" {
		t.Fatalf("stored incidents = %+v, %v", rows, err)
	}
	aud, err := s.IncidentAuditLog(ctx, store.AuditQuery{IncidentID: ins.Incident.ID})
	if err != nil || len(aud) != 2 || aud[0].Who != "alice" || aud[1].Who != "bob" {
		t.Fatalf("audit = %+v, %v", aud, err)
	}
	// Restart: the checkpoint already holds everything committed.
	again := run()
	if len(again.State.History("io.github.acme/tool")) != 1 {
		t.Error("restarted stage lost its state")
	}
}
