package differ_test

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

// quietServer is a server with one version in 2025-10-09, listed the same
// on 2025-10-08: any event about it between the two is a false one.
func quietServer(t *testing.T) string {
	t.Helper()
	known := stateUpTo(t, "2025-10-08")
	next := differ.Diff(known, load(t, bundledFile(t, "2025-10-09")), differ.Options{}).Next
	for _, n := range slices.Sorted(maps.Keys(next.Latest)) {
		if len(next.Versions[n]) == 1 && len(known.Versions[n]) == 1 && known.Latest[n] == next.Latest[n] {
			return n
		}
	}
	t.Fatal("no quiet server in 2025-10-09")
	return ""
}

// readTopic returns the values on partition 0 of topic, up to its end.
func readTopic(t *testing.T, brokers []string, topic string) [][]byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	end, err := bus.EndOffset(ctx, brokers, topic, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	var out [][]byte
	for int64(len(out)) < end {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m.Value)
	}
	return out
}

// TestStageUnreadableEntryRemovesNothing: the replay publishes three real
// captures through the real broker and differ stage; in the middle one the
// entry of one server has no server.name. That entry goes to the DLQ, and the
// snapshot that lost it must not report its server removed (nor the next one
// report it new): a snapshot we could not read whole cannot say what is gone.
func TestStageUnreadableEntryRemovesNothing(t *testing.T) {
	log := zaptest.NewLogger(t, zaptest.Level(zap.WarnLevel))
	dir := t.TempDir()
	b, err := bus.StartEmbedded(filepath.Join(dir, "kafka"), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := bus.EnsureTopics(ctx, b.Addrs(), bus.TopicSpecs(1), log); err != nil {
		t.Fatal(err)
	}
	stage, err := differ.NewStage(differ.StageConfig{Brokers: b.Addrs(), StatePath: filepath.Join(dir, "differ.json"), Log: log})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- stage.Run(runCtx) }()
	defer func() { stop(); <-done }()

	day8, day9 := bundledFile(t, "2025-10-08"), bundledFile(t, "2025-10-09")
	victim := quietServer(t)
	doc9 := gunzipped(t, day9)
	broken := rawWithout(t, doc9, victim)
	w := bus.NewWriter(b.Addrs(), log)
	defer w.Close()
	pub := &registry.Publisher{W: w, Log: log}
	t1, t2, t3 := day8.CapturedAt, day9.CapturedAt, day9.CapturedAt.Add(24*time.Hour)
	publish := func(source string, at time.Time, doc []byte) {
		t.Helper()
		if _, err := pub.Publish(ctx, schema.ModeFull, source, at, func(emit func(schema.Entry) error, rej func(schema.DLQMessage) error) (registry.SnapshotStats, error) {
			return registry.ReadSnapshot(bytes.NewReader(doc), source, at, emit, rej)
		}); err != nil {
			t.Fatal(err)
		}
	}
	publish("2025-10-08.json", t1, gunzipped(t, day8))
	publish("2025-10-09-broken.json", t2, broken)
	publish("2025-10-10.json", t3, doc9) // the same listing, read whole

	for {
		if at, _ := stage.Applied(); at.Equal(t3) {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the differ did not apply the three snapshots")
		case <-time.After(50 * time.Millisecond):
		}
	}
	for _, v := range readTopic(t, b.Addrs(), schema.TopicRegistryDiffs) {
		var e schema.DriftEvent
		if err := json.Unmarshal(v, &e); err != nil {
			t.Fatal(err)
		}
		if e.Server == victim && e.ObservedAt.After(t1) { // the first capture only seeds the state
			t.Errorf("%s: %s at %s: our unreadable entry reported as the registry's change", e.Server, e.Kind, e.ObservedAt.Format(time.DateOnly))
		}
	}
	var sums []schema.SnapshotSummary
	for _, v := range readTopic(t, b.Addrs(), schema.TopicRegistrySnapshots) {
		var s schema.SnapshotSummary
		if err := json.Unmarshal(v, &s); err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	if len(sums) != 3 {
		t.Fatalf("%d snapshot summaries, want 3", len(sums))
	}
	if s := sums[1]; s.Rejects != 1 || !s.Partial || s.Counts[schema.KindRemoved] != 0 {
		t.Errorf("the snapshot with an unreadable entry: rejects %d, partial %v, removed %d; want 1, true, 0", s.Rejects, s.Partial, s.Counts[schema.KindRemoved])
	}
	if s := sums[2]; s.Partial || s.Events != 0 {
		t.Errorf("the same listing read whole the next day: partial %v, %d events %v; want a full listing with no news", s.Partial, s.Events, s.Counts)
	}
}
