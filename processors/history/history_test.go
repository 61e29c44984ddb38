package history_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
)

func msg(t *testing.T, topic string, v any) kafka.Message {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return kafka.Message{Topic: topic, Value: b}
}

// handle runs batch through a sink's stage; what it dead-letters is then
// sent through the same stage as dlq messages (the history sink stores the
// dlq topic), so it ends in the dlq table as in production. It returns the
// dead letters.
func handle[T any](t *testing.T, cfg stage.Config[T], store func(ctx context.Context, dead []kafka.Message) error, batch []kafka.Message) []schema.DLQMessage {
	t.Helper()
	var dead []kafka.Message
	cfg.DLQ = dlqFunc(func(_ context.Context, ms ...kafka.Message) error { dead = append(dead, ms...); return nil })
	st, err := stage.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Handle(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	if store != nil && len(dead) > 0 {
		if err := store(context.Background(), dead); err != nil {
			t.Fatal(err)
		}
	}
	var out []schema.DLQMessage
	for _, m := range dead {
		var d schema.DLQMessage
		if err := json.Unmarshal(m.Value, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, d)
	}
	return out
}

type dlqFunc func(ctx context.Context, msgs ...kafka.Message) error

func (f dlqFunc) WriteMessages(ctx context.Context, msgs ...kafka.Message) error {
	return f(ctx, msgs...)
}

// TestBadMessagesBecomeDeadLetters: a message that does not decode, on any
// topic, becomes a dead letter with its reason and position (stored in the
// dlq table once it comes back on the dlq topic), and the good messages of
// the same batch are all stored; a redelivered batch changes nothing.
func TestBadMessagesBecomeDeadLetters(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "h.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 10, 9, 20, 30, 3, 0, time.UTC)
	e := schema.Entry{Server: schema.ServerDetail{Name: "io.example/a", Version: "1.0.0"}, Meta: schema.OfficialMeta{IsLatest: true, Status: "active"},
		Raw: json.RawMessage(`{"name":"io.example/a","version":"1.0.0"}`), ContentSHA256: "abc"}
	check := schema.HealthCheck{ID: "c1", Server: "io.example/a", RemoteURL: "https://a.example/mcp", ObservedAt: t0, Outcome: schema.OutcomeOK}
	batch := []kafka.Message{
		msg(t, schema.TopicRegistryRecords, schema.RecordMsg{Type: schema.MsgRecord, SnapshotID: "s1", Mode: schema.ModeFull, ObservedAt: t0, Entry: &e}),
		msg(t, schema.TopicRegistryRecords, schema.RecordMsg{Type: schema.MsgSnapshotEnd, SnapshotID: "s1", Mode: schema.ModeFull, ObservedAt: t0, End: &schema.SnapshotEnd{Entries: 1}}),
		msg(t, schema.TopicRegistryDiffs, schema.DriftEvent{ID: "e1", Server: "io.example/a", Kind: schema.KindNewServer, ObservedAt: t0}),
		msg(t, schema.TopicRegistrySnapshots, schema.SnapshotSummary{ID: "s1", Mode: schema.ModeFull, ObservedAt: t0}),
		msg(t, schema.TopicHealthChecks, check),
		{Topic: schema.TopicRegistryRecords, Partition: 0, Offset: 7, Value: []byte(`{"type":"record","entry":`)},
		{Topic: schema.TopicRegistryDiffs, Partition: 1, Offset: 8, Value: []byte(`{"server":"no id"}`)},
		{Topic: schema.TopicRegistrySnapshots, Partition: 0, Offset: 9, Value: []byte(`[]`)},
		{Topic: schema.TopicHealthChecks, Partition: 2, Offset: 10, Value: []byte("\xff\xfe")},
		{Topic: schema.TopicDLQ, Partition: 0, Offset: 11, Value: []byte(`not json`)},
	}
	reg := prometheus.NewRegistry()
	sink := &history.Sink{W: s, Weights: method.Embedded().Weights, Times: history.NewWriteTimes(reg)}
	cfg := sink.Config(nil, nil)
	// Dead letters come back on the dlq topic and are stored by the sink.
	storeDead := func(ctx context.Context, dead []kafka.Message) error {
		st, _ := stage.New(sink.Config(nil, nil))
		return st.Handle(ctx, dead)
	}
	reasons := map[string]string{}
	for i := 0; i < 2; i++ { // redelivery of the same batch changes nothing
		for _, d := range handle(t, cfg, storeDead, batch) {
			reasons[d.Source] = d.Reason
			if d.Stage != history.Name || d.Detail == "" || d.Source == "" || d.Payload == "" {
				t.Errorf("dead letter without stage, detail, position or payload: %+v", d)
			}
		}
	}
	wantReasons := map[string]string{"registry.records/0@7": schema.ReasonTruncatedJSON, "registry.diffs/1@8": schema.ReasonMissingField,
		"registry.snapshots/0@9": schema.ReasonMalformedJSON, "health.checks/2@10": schema.ReasonInvalidUTF8, "dlq/0@11": schema.ReasonNotJSON}
	for src, r := range wantReasons {
		if reasons[src] != r {
			t.Errorf("%s: reason %q, want %q", src, reasons[src], r)
		}
	}
	counts, err := s.Counts(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"registry_records": 1, "drift_events": 1, "snapshots": 1, "health_checks": 1, "dlq": 5}
	for table, n := range want {
		if counts[table] != n {
			t.Errorf("%s: %d rows, want %d", table, counts[table], n)
		}
	}
	if _, err := s.GetServer(ctx, "io.example/a"); err != nil {
		t.Errorf("the good record is not in the latest view: %v", err)
	}
	// forum_store_write_seconds{table}: DuckDB takes a sink batch in one
	// transaction (store.BatchWriter), observed as history_batch: two
	// deliveries, each followed by its dead letters' batch.
	// A second sink on the same registry shares the histogram.
	if history.NewWriteTimes(reg) == nil {
		t.Error("a second sink could not share forum_store_write_seconds")
	}
	for table, n := range map[string]int{"history_batch": 4, "registry_records": 0} {
		if got := histCount(t, reg, table); got != n {
			t.Errorf("forum_store_write_seconds{table=%q}: %d observations, want %d", table, got, n)
		}
	}
	if hs, _ := s.LatestHealth(ctx, "io.example/a"); len(hs) != 1 {
		t.Errorf("health check not stored: %v", hs)
	}
	if ok, err := s.SnapshotLoaded(ctx, "s1"); err != nil || !ok {
		t.Errorf("the snapshot's end did not record its load: %v %v", ok, err)
	}
}

// histCount is the observation count of forum_store_write_seconds{table}.
func histCount(t *testing.T, g prometheus.Gatherer, table string) int {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "forum_store_write_seconds" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "table" && l.GetValue() == table {
					return int(m.GetHistogram().GetSampleCount())
				}
			}
		}
	}
	return 0
}

// perTable hides the store's WriteBatch: the sink then writes table by
// table, as it does on ClickHouse.
type perTable struct{ history.Writer }

// TestWriteTimesPerTable: a store without one-transaction batches is timed
// per table that had rows.
func TestWriteTimesPerTable(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "h.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 10, 9, 20, 30, 3, 0, time.UTC)
	reg := prometheus.NewRegistry()
	sink := &history.Sink{W: perTable{s}, Weights: method.Embedded().Weights, Times: history.NewWriteTimes(reg)}
	batch := []kafka.Message{
		msg(t, schema.TopicRegistryDiffs, schema.DriftEvent{ID: "e1", Server: "io.example/a", Kind: schema.KindNewServer, ObservedAt: t0}),
		msg(t, schema.TopicHealthChecks, schema.HealthCheck{ID: "c1", Server: "io.example/a", RemoteURL: "https://a.example/mcp", ObservedAt: t0, Outcome: schema.OutcomeOK}),
	}
	for range 3 {
		if dead := handle(t, sink.Config(nil, nil), nil, batch); len(dead) != 0 {
			t.Fatalf("dead letters: %+v", dead)
		}
	}
	for table, n := range map[string]int{"drift_events": 3, "health_checks": 3, "registry_records": 0, "history_batch": 0} {
		if got := histCount(t, reg, table); got != n {
			t.Errorf("forum_store_write_seconds{table=%q}: %d observations, want %d", table, got, n)
		}
	}
}
