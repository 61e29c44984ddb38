package incidents

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/segmentio/kafka-go"
)

// TestStageOverTheBus: published actions travel the embedded broker; the
// stage folds them in, publishes one incident state per action on
// incidents.state (the last one: retracted, with both incidents' rows),
// checkpoints, and marks the feed loaded once it has no lag; a restarted
// stage resumes from its checkpoint.
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
	if err := bus.EnsureTopics(ctx, b.Addrs(), bus.TopicSpecs(3), log); err != nil {
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
	out := &stage.Emitter{Stage: Name, Topic: schema.TopicIncidentState, Brokers: b.Addrs(), W: w}
	run := func() *Stage {
		s, err := NewStage(method.Embedded().Weights, b.Addrs(), path, out, log)
		if err != nil {
			t.Fatal(err)
		}
		st, err := stage.New(s.Config(nil))
		if err != nil {
			t.Fatal(err)
		}
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- st.Run(rctx) }()
		go s.WatchLoaded(rctx)
		for !s.State().Loaded() {
			select {
			case <-ctx.Done():
				t.Fatal("the feed never loaded")
			case <-time.After(50 * time.Millisecond):
			}
		}
		stop()
		<-done
		return s
	}
	st := run()
	h := st.State().History("io.github.acme/tool")
	if len(h) != 1 || h[0].Status != "retracted" || len(h[0].Audit) != 2 {
		t.Fatalf("history = %+v", h)
	}
	// What the scorer sees: the table of incidents.state, loaded.
	tab := &stage.Table[schema.IncidentState]{Topic: schema.TopicIncidentState, Producer: Name, Brokers: b.Addrs(), Log: log,
		Decode: func(m kafka.Message) (schema.IncidentState, error) {
			return schema.Decode[schema.IncidentState](m.Value)
		}}
	tctx, tstop := context.WithCancel(ctx)
	defer tstop()
	go func() { _ = tab.Run(tctx) }()
	for !tab.Loaded() {
		select {
		case <-ctx.Done():
			t.Fatal("the incidents.state table never loaded")
		case <-time.After(50 * time.Millisecond):
		}
	}
	v, ok := tab.Get("io.github.acme/tool")
	if !ok || len(v.Incidents) != 1 || v.Incidents[0].Status != "retracted" || !v.AsOf.Equal(ret.Incident.UpdatedAt) || *v.Score.Value != 100 {
		t.Fatalf("published state = %+v", v)
	}
	if in := InputOf(&v, tab.Loaded()); !in.Checked || len(in.Items) != 1 {
		t.Errorf("InputOf = %+v", in)
	}
	// Restart: the checkpoint already holds everything committed.
	again := run()
	if len(again.State().History("io.github.acme/tool")) != 1 {
		t.Error("restarted stage lost its state")
	}
}
