package registry

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/schema"
)

// readRecords returns the record and marker messages on registry.records.
func readRecords(t *testing.T, brokers []string) (records int, ends []schema.RecordMsg) {
	t.Helper()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: schema.TopicRegistryRecords, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
		m, err := r.ReadMessage(ctx)
		cancel()
		if err != nil {
			return
		}
		var msg schema.RecordMsg
		if err := json.Unmarshal(m.Value, &msg); err != nil {
			t.Fatal(err)
		}
		if msg.Type == schema.MsgSnapshotEnd {
			ends = append(ends, msg)
		} else {
			records++
		}
	}
}

// TestLoopFullThenIncrementalAndOutages: the first crawl is a full listing,
// the next one asks updated_since the stored watermark, and an unreachable
// registry publishes nothing, keeps the watermark, and says why.
func TestLoopFullThenIncrementalAndOutages(t *testing.T) {
	log := zaptest.NewLogger(t)
	rows := crawlRealRows(t)
	fake, srv := newCrawlFake(t, rows)
	b, err := bus.StartEmbedded(filepath.Join(t.TempDir(), "kafka"), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	if err := bus.EnsureTopics(ctx, b.Addrs(), []bus.TopicSpec{{Name: schema.TopicRegistryRecords, Partitions: 1}, {Name: schema.TopicDLQ, Partitions: 1}}, log); err != nil {
		t.Fatal(err)
	}
	w := bus.NewWriter(b.Addrs(), log)
	defer w.Close()
	sl := &crawlSleeps{}
	c := newCrawlTestCrawler(t, srv, sl, nil)
	now := time.Date(2025, 10, 8, 0, 0, 0, 0, time.UTC)
	loop := &Loop{Crawler: c, Publisher: &Publisher{W: w, Log: log}, StatePath: filepath.Join(t.TempDir(), "crawl.json"), Log: log, Now: func() time.Time { return now }}

	res, err := loop.Once(ctx)
	if err != nil || res.Mode != schema.ModeFull || res.Entries != len(rows) {
		t.Fatalf("first crawl: %+v, %v", res, err)
	}
	st, _ := loop.load()
	if st.Watermark.IsZero() || !st.LastFull.Equal(now) {
		t.Fatalf("state after full crawl: %+v", st)
	}

	now = now.Add(6 * time.Hour)
	res, err = loop.Once(ctx)
	if err != nil || res.Mode != schema.ModeIncremental || !res.Since.Equal(st.Watermark) {
		t.Fatalf("second crawl: mode %s since %v (watermark %v), %v", res.Mode, res.Since, st.Watermark, err)
	}
	last := fake.requests()[len(fake.requests())-1]
	if last.URL.Query().Get("updated_since") == "" {
		t.Error("incremental crawl did not send updated_since")
	}

	// The registry goes away.
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		panic(http.ErrAbortHandler) // drop the connection
	})
	now = now.Add(6 * time.Hour)
	_, err = loop.Once(ctx)
	if err == nil || !errors.Is(err, ErrUnreachable) {
		t.Fatalf("outage: want ErrUnreachable, got %v", err)
	}
	if st2, _ := loop.load(); !st2.Watermark.Equal(st.Watermark) {
		t.Errorf("an outage moved the watermark: %v -> %v", st.Watermark, st2.Watermark)
	}

	recs, ends := readRecords(t, b.Addrs())
	if recs < len(rows) || len(ends) < 2 {
		t.Fatalf("published %d records and %d markers", recs, len(ends))
	}
	if ends[0].Mode != schema.ModeFull || ends[1].Mode != schema.ModeIncremental {
		t.Errorf("modes %s, %s", ends[0].Mode, ends[1].Mode)
	}
	if len(ends) != 2 {
		t.Errorf("%d snapshots published; an outage that read nothing must publish none", len(ends))
	}
}
