package history_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/processors/history"
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

// TestBadMessagesBecomeDeadLetters: a message that does not decode, on any
// topic, is stored as a dead letter with its reason and position, and the
// good messages of the same batch are all stored.
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
	check := probe.Check{ID: "c1", Server: "io.example/a", RemoteURL: "https://a.example/mcp", ObservedAt: t0, Outcome: probe.OutcomeOK}
	batch := []kafka.Message{
		msg(t, schema.TopicRegistryRecords, schema.RecordMsg{Type: schema.MsgRecord, SnapshotID: "s1", ObservedAt: t0, Entry: &e}),
		msg(t, schema.TopicRegistryDiffs, schema.DriftEvent{ID: "e1", Server: "io.example/a", Kind: schema.KindNewServer, ObservedAt: t0}),
		msg(t, schema.TopicRegistrySnapshots, schema.SnapshotSummary{ID: "s1", ObservedAt: t0}),
		msg(t, schema.TopicHealthChecks, check),
		{Topic: schema.TopicRegistryRecords, Partition: 0, Offset: 7, Value: []byte(`{"type":"record","entry":`)},
		{Topic: schema.TopicRegistryDiffs, Partition: 1, Offset: 8, Value: []byte(`{"server":"no id"}`)},
		{Topic: schema.TopicRegistrySnapshots, Partition: 0, Offset: 9, Value: []byte(`[]`)},
		{Topic: schema.TopicHealthChecks, Partition: 2, Offset: 10, Value: []byte("\xff\xfe")},
		{Topic: schema.TopicDLQ, Partition: 0, Offset: 11, Value: []byte(`not json`)},
	}
	sink := &history.Sink{W: s, Metrics: history.NewMetrics(nil)}
	if err := sink.Handle(ctx, batch); err != nil {
		t.Fatal(err)
	}
	// Redelivery of the same batch changes nothing.
	if err := sink.Handle(ctx, batch); err != nil {
		t.Fatal(err)
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
	dl, err := s.DLQ(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dl {
		if d.Reason != schema.ReasonBadMessage || d.Stage != "history" || d.Detail == "" || d.Source == "" {
			t.Errorf("dead letter without reason, stage, detail or position: %+v", d)
		}
	}
	if _, err := s.GetServer(ctx, "io.example/a"); err != nil {
		t.Errorf("the good record is not in the latest view: %v", err)
	}
	if hs, _ := s.LatestHealth(ctx, "io.example/a"); len(hs) != 1 {
		t.Errorf("health check not stored: %v", hs)
	}
}
