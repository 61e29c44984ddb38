package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"
	"golang.org/x/sync/errgroup"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// TestBadMessageOnEveryTopicIsDeadLettered runs every processing component
// and the prober in one process (embedded broker, DuckDB) and puts one bad
// message on each topic of the table: for every topic, a dead letter with
// its position (topic/partition@offset) and a reason code reaches the dlq
// table, and forum_stage_dead_letters_total counts it for a stage that
// reads the topic. The pipeline keeps running: a good message sent after
// the bad ones is still stored.
func TestBadMessageOnEveryTopicIsDeadLettered(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := &config{DataDir: t.TempDir(), LogLevel: "error", LogFormat: "console", Partitions: 2, DuckDBMemory: "256MB"}
	cfg.probe.interval, cfg.probe.concurrency, cfg.probe.perHost, cfg.probe.timeout = time.Hour, 4, 2, 5*time.Second
	a, err := openApp(ctx, cfg, withStore|withBus)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	specs := component.List(component.RoleProcess)
	prober, _ := component.Lookup("prober")
	specs = append(specs, prober)
	rctx, stop := context.WithCancel(ctx)
	g, gctx := errgroup.WithContext(rctx)
	if _, err := a.start(gctx, g, specs); err != nil {
		stop()
		t.Fatal(err)
	}
	defer func() {
		stop()
		_ = g.Wait()
	}()

	// Which stage must have counted each topic's bad message.
	readers := map[string][]string{}
	for _, s := range specs {
		for _, tp := range append(append([]string{}, s.In...), s.Tables...) {
			name := s.Name
			if slices.Contains(s.Tables, tp) {
				name = "table:" + tp
			}
			readers[tp] = append(readers[tp], name)
		}
	}
	w := bus.NewWriter(a.brokers, a.log)
	defer w.Close()
	bad := []byte(`{"id": 42, "this is": not json`)
	for _, tp := range schema.Topics {
		if err := w.WriteMessages(ctx, kafka.Message{Topic: tp.Name, Key: []byte("bad-key-" + tp.Name), Value: bad}); err != nil {
			t.Fatalf("%s: %v", tp.Name, err)
		}
	}
	// A good message after them: the stream goes on.
	at := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	ev, _ := schema.Marshal(schema.DriftEvent{ID: "good-event", Server: "io.example/good", Kind: schema.KindTitleChanged, ObservedAt: at, SnapshotID: "s"})
	if err := w.WriteMessages(ctx, kafka.Message{Topic: schema.TopicRegistryDiffs, Key: []byte("io.example/good"), Value: ev}); err != nil {
		t.Fatal(err)
	}

	for _, tp := range schema.Topics {
		t.Run(tp.Name, func(t *testing.T) {
			if len(readers[tp.Name]) == 0 {
				t.Fatalf("no component reads %s", tp.Name)
			}
			var found schema.DLQMessage
			for deadline := time.Now().Add(90 * time.Second); ; {
				dl, err := a.store.DLQ(ctx, 10000)
				if err != nil {
					t.Fatal(err)
				}
				for _, d := range dl {
					if strings.HasPrefix(d.Source, tp.Name+"/") && d.Key == "bad-key-"+tp.Name {
						found = d
					}
				}
				if found.ID != "" || time.Now().After(deadline) {
					break
				}
				time.Sleep(200 * time.Millisecond)
			}
			if found.ID == "" {
				t.Fatalf("no dead letter for the bad message on %s", tp.Name)
			}
			if found.Reason != schema.ReasonMalformedJSON || found.Detail == "" || found.PayloadSHA256 == "" {
				t.Errorf("dead letter %+v: want reason %s with a detail and the payload's hash", found, schema.ReasonMalformedJSON)
			}
			counted := 0.0
			for _, r := range readers[tp.Name] {
				counted += testutil.ToFloat64(a.stage.DeadLetters.WithLabelValues(r, schema.ReasonMalformedJSON))
			}
			if counted < 1 {
				t.Errorf("forum_stage_dead_letters_total of %v (reason %s) did not count it", readers[tp.Name], schema.ReasonMalformedJSON)
			}
		})
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		if evs, err := a.store.Events(ctx, store.EventQuery{Server: "io.example/good", Limit: 10}); err == nil && len(evs) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the good event after the bad messages was never stored")
		}
		time.Sleep(200 * time.Millisecond)
	}
}
