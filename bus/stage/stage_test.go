package stage_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/schema"
)

func broker(t *testing.T, topics ...bus.TopicSpec) []string {
	t.Helper()
	b, err := bus.StartEmbedded(t.TempDir(), 0, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := bus.EnsureTopics(ctx, b.Addrs(), topics, nil); err != nil {
		t.Fatal(err)
	}
	return b.Addrs()
}

func event(i int) schema.DriftEvent {
	return schema.DriftEvent{ID: fmt.Sprintf("e%02d", i), Server: fmt.Sprintf("io.x/s%d", i%4), Kind: schema.KindNewServer,
		ObservedAt: time.Date(2025, 10, 1, 0, 0, i, 0, time.UTC), SnapshotID: "s"}
}

// readAll returns every message of a topic.
func readAll(t *testing.T, brokers []string, topic string) []kafka.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := bus.Partitions(ctx, brokers, topic)
	if err != nil {
		t.Fatal(err)
	}
	var out []kafka.Message
	for p := range n {
		end, err := bus.EndOffset(ctx, brokers, topic, p)
		if err != nil {
			t.Fatal(err)
		}
		if end == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxWait: 100 * time.Millisecond})
		for {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, m)
			if m.Offset+1 >= end {
				break
			}
		}
		r.Close()
	}
	return out
}

// Bad input on the input topic lands in dlq with its reason code and is
// counted; the good input is applied exactly once even though the first
// apply fails (the batch comes again, uncommitted); markers are skipped.
func TestStageDeadLettersCountsAndRedelivers(t *testing.T) {
	brokers := broker(t, bus.TopicSpec{Name: "in", Partitions: 3}, bus.TopicSpec{Name: schema.TopicDLQ, Partitions: 2})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := bus.NewWriter(brokers, nil)
	defer w.Close()
	var msgs []kafka.Message
	for i := range 12 {
		b, _ := json.Marshal(event(i))
		msgs = append(msgs, kafka.Message{Topic: "in", Key: []byte(event(i).Server), Value: b})
	}
	bad := map[string]string{
		"<html>oops</html>":   schema.ReasonNotJSON,
		`{"id":"x","server":`: schema.ReasonTruncatedJSON,
		`{"id":"x","server":"a/b","kind":"exploded","observed_at":"2025-10-01T00:00:00Z"}`:  schema.ReasonUnknownKind,
		`{"id":"","server":"a/b","kind":"new_server","observed_at":"2025-10-01T00:00:00Z"}`: schema.ReasonMissingField,
		"\xff\xfe{}": schema.ReasonInvalidUTF8,
	}
	for v := range bad {
		msgs = append(msgs, kafka.Message{Topic: "in", Key: []byte("k"), Value: []byte(v)})
	}
	mk, _ := json.Marshal(schema.Marker{Stage: "up", Watermark: time.Now()})
	msgs = append(msgs, kafka.Message{Topic: "in", Key: []byte("m"), Value: mk, Headers: []kafka.Header{{Key: schema.MarkerHeader, Value: []byte("1")}}})
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}

	reg := prometheus.NewRegistry()
	metrics := stage.NewMetrics(reg)
	var mu sync.Mutex
	applied := map[string]int{}
	failOnce := true
	done := make(chan struct{})
	st, err := stage.New(stage.Config[schema.DriftEvent]{
		Name: "test", Group: "g", Topics: []string{"in"}, Brokers: brokers, Metrics: metrics, Log: zaptest.NewLogger(t),
		Decode: func(m kafka.Message) (schema.DriftEvent, error) { return schema.Decode[schema.DriftEvent](m.Value) },
		Apply: func(_ context.Context, batch []stage.Item[schema.DriftEvent]) error {
			mu.Lock()
			defer mu.Unlock()
			if failOnce {
				failOnce = false
				return errors.New("the store is down")
			}
			for _, it := range batch {
				applied[it.Value.ID]++
			}
			if len(applied) == 12 {
				select {
				case <-done:
				default:
					close(done)
				}
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- st.Run(rctx) }()
	select {
	case <-done:
	case <-ctx.Done():
		t.Fatal("not all good messages applied")
	}
	waitLag(t, brokers, "g", "in")
	rcancel()
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	for id, n := range applied {
		if n != 1 {
			t.Errorf("%s applied %d times after a redelivery, want 1 (the failed batch was applied nowhere)", id, n)
		}
	}
	// Every bad message is on dlq once per delivery of its batch (the
	// failed one too): the reasons are what the decoder said.
	got := map[string]bool{}
	for _, m := range readAll(t, brokers, schema.TopicDLQ) {
		var d schema.DLQMessage
		if err := json.Unmarshal(m.Value, &d); err != nil {
			t.Fatal(err)
		}
		if d.Stage != "test" {
			t.Errorf("dead letter of stage %q", d.Stage)
		}
		got[d.Reason] = true
	}
	for _, r := range bad {
		if !got[r] {
			t.Errorf("no dead letter with reason %s (got %v)", r, got)
		}
	}
	if n := testutil.ToFloat64(metrics.Messages.WithLabelValues("test", "applied")); n != 12 {
		t.Errorf("applied metric %v, want 12", n)
	}
	for _, r := range bad {
		if testutil.ToFloat64(metrics.DeadLetters.WithLabelValues("test", r)) < 1 {
			t.Errorf("dead-letter metric for %s not counted", r)
		}
	}
	if testutil.ToFloat64(metrics.Failures.WithLabelValues("test")) != 1 {
		t.Errorf("failed batches not counted")
	}
}

func waitLag(t *testing.T, brokers []string, group, topic string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if l, err := bus.Lag(context.Background(), brokers, group, []string{topic}); err == nil && l == 0 {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("group %s never caught up on %s", group, topic)
}

// A table holds the latest value of every key, drops tombstoned keys,
// keeps a key's old value over a bad new one (which is dead-lettered), and
// its watermark is the lowest marker over the partitions.
func TestTableLatestValuesAndWatermark(t *testing.T) {
	brokers := broker(t, bus.TopicSpec{Name: "out", Partitions: 3}, bus.TopicSpec{Name: schema.TopicDLQ, Partitions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	w := bus.NewWriter(brokers, nil)
	defer w.Close()
	reg := prometheus.NewRegistry()
	metrics := stage.NewMetrics(reg)
	em := &stage.Emitter{Stage: "drift", Topic: "out", Brokers: brokers, W: w, Metrics: metrics}
	t1 := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	states := []schema.DriftState{{Server: "a/x", AsOf: t1}, {Server: "a/y", AsOf: t1}, {Server: "a/z", AsOf: t1}}
	if err := stage.EmitJSON(ctx, em, []string{"a/x", "a/y", "a/z"}, states); err != nil {
		t.Fatal(err)
	}
	if err := em.Mark(ctx, t1, false); err != nil {
		t.Fatal(err)
	}
	tab := &stage.Table[schema.DriftState]{Topic: "out", Producer: "drift", Brokers: brokers, DLQ: w, Metrics: metrics, Log: zaptest.NewLogger(t),
		Decode: func(m kafka.Message) (schema.DriftState, error) { return schema.Decode[schema.DriftState](m.Value) }}
	go func() { _ = tab.Run(ctx) }()
	if err := tab.WaitWatermark(ctx, t1, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if tab.Len() != 3 || tab.Loaded() {
		t.Fatalf("len %d loaded %v, want 3 and not loaded (the producer has not said so)", tab.Len(), tab.Loaded())
	}
	t2 := t1.Add(24 * time.Hour)
	if err := stage.EmitJSON(ctx, em, []string{"a/x"}, []schema.DriftState{{Server: "a/x", AsOf: t2, Events: []schema.DriftEvent{}}}); err != nil {
		t.Fatal(err)
	}
	if err := em.Emit(ctx, kafka.Message{Key: []byte("a/y")}, kafka.Message{Key: []byte("a/z"), Value: []byte(`{"server":"a/z"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := em.Mark(ctx, t2, true); err != nil {
		t.Fatal(err)
	}
	if err := tab.WaitWatermark(ctx, t2, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	if x, _ := tab.Get("a/x"); !x.AsOf.Equal(t2) {
		t.Errorf("a/x as of %s, want the newer value", x.AsOf)
	}
	if _, ok := tab.Get("a/y"); ok {
		t.Errorf("a/y survived its tombstone")
	}
	if z, ok := tab.Get("a/z"); !ok || !z.AsOf.Equal(t1) {
		t.Errorf("a/z = %+v, %v: a bad value must leave the previous one", z, ok)
	}
	if !tab.Loaded() {
		t.Errorf("not loaded after a loaded marker on every partition")
	}
	if testutil.ToFloat64(metrics.DeadLetters.WithLabelValues("table:out", schema.ReasonMissingField)) != 1 {
		t.Errorf("the bad value was not counted")
	}
	dl := readAll(t, brokers, schema.TopicDLQ)
	if len(dl) != 1 {
		t.Fatalf("%d dead letters, want 1", len(dl))
	}
	var d schema.DLQMessage
	_ = json.Unmarshal(dl[0].Value, &d)
	if d.Stage != "table:out" || d.Reason != schema.ReasonMissingField {
		t.Errorf("dead letter %+v", d)
	}
}

type dlqCapture struct{ msgs []kafka.Message }

func (d *dlqCapture) WriteMessages(_ context.Context, msgs ...kafka.Message) error {
	d.msgs = append(d.msgs, msgs...)
	return nil
}

// A batch large enough to be decoded by several goroutines keeps the
// stage's order: Apply gets the good messages in offset order, the dlq
// gets the bad ones in offset order with their reasons, markers are
// neither, and every message is decoded once.
func TestHandleDecodesALargeBatchInParallelInOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4)) // the parallel path, even on one core
	const n = 5000
	var msgs []kafka.Message
	var wantGood, wantDead []string
	for i := range n {
		m := kafka.Message{Topic: "in", Partition: i % 3, Offset: int64(i), Key: []byte("k")}
		switch {
		case i%11 == 0:
			mk, _ := json.Marshal(schema.Marker{Stage: "up", Watermark: time.Now()})
			m.Value, m.Headers = mk, []kafka.Header{{Key: schema.MarkerHeader, Value: []byte("1")}}
		case i%7 == 0:
			m.Value = []byte(fmt.Sprintf(`{"id":"bad%d","server":`, i))
			wantDead = append(wantDead, string(m.Value))
		default:
			e := event(i)
			e.ID = fmt.Sprintf("e%05d", i)
			m.Value, _ = json.Marshal(e)
			wantGood = append(wantGood, e.ID)
		}
		msgs = append(msgs, m)
	}
	var decoded atomic.Int64
	var got []string
	dlq := &dlqCapture{}
	st, err := stage.New(stage.Config[schema.DriftEvent]{
		Name: "test", Group: "g", Topics: []string{"in"}, DLQ: dlq, Log: zaptest.NewLogger(t),
		Decode: func(m kafka.Message) (schema.DriftEvent, error) {
			decoded.Add(1)
			return schema.Decode[schema.DriftEvent](m.Value)
		},
		Apply: func(_ context.Context, batch []stage.Item[schema.DriftEvent]) error {
			for _, it := range batch {
				if it.Msg.Offset != 0 && fmt.Sprintf("e%05d", it.Msg.Offset) != it.Value.ID {
					return fmt.Errorf("item %s carries message %d", it.Value.ID, it.Msg.Offset)
				}
				got = append(got, it.Value.ID)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Handle(context.Background(), msgs); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, wantGood) {
		t.Fatalf("applied %d items, want %d in offset order", len(got), len(wantGood))
	}
	var dead []string
	for _, m := range dlq.msgs {
		var d schema.DLQMessage
		if err := json.Unmarshal(m.Value, &d); err != nil {
			t.Fatal(err)
		}
		if d.Reason != schema.ReasonTruncatedJSON {
			t.Errorf("dead letter with reason %s, want %s", d.Reason, schema.ReasonTruncatedJSON)
		}
		dead = append(dead, string(d.Payload))
	}
	if !slices.Equal(dead, wantDead) {
		t.Fatalf("dead letters %d, want %d in offset order", len(dead), len(wantDead))
	}
	if int(decoded.Load()) != len(wantGood)+len(wantDead) {
		t.Fatalf("decoded %d messages, want %d (each once, markers never)", decoded.Load(), len(wantGood)+len(wantDead))
	}
}

// A batch Prepare decoded is not decoded again by Handle, and Handle's
// outcome is the same either way; a batch Prepare never saw (or one it
// evicted, past the two a one-batch read-ahead keeps live) is decoded by
// Handle itself.
func TestPrepareDecodesAheadOfHandle(t *testing.T) {
	batch := func(from int) []kafka.Message {
		var ms []kafka.Message
		for i := from; i < from+700; i++ {
			e := event(i)
			e.ID = fmt.Sprintf("e%05d", i)
			b, _ := json.Marshal(e)
			ms = append(ms, kafka.Message{Topic: "in", Offset: int64(i), Value: b})
		}
		ms = append(ms, kafka.Message{Topic: "in", Offset: int64(from + 700), Value: []byte("not json")})
		return ms
	}
	var decoded atomic.Int64
	var applied []string
	st, err := stage.New(stage.Config[schema.DriftEvent]{
		Name: "test", Group: "g", Topics: []string{"in"}, DLQ: &dlqCapture{}, Log: zaptest.NewLogger(t),
		Decode: func(m kafka.Message) (schema.DriftEvent, error) {
			decoded.Add(1)
			return schema.Decode[schema.DriftEvent](m.Value)
		},
		Apply: func(_ context.Context, b []stage.Item[schema.DriftEvent]) error {
			for _, it := range b {
				applied = append(applied, it.Value.ID)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, b, c, d := batch(0), batch(1000), batch(2000), batch(3000)
	st.Prepare(a)
	if err := st.Handle(ctx, a); err != nil {
		t.Fatal(err)
	}
	if n := decoded.Load(); n != int64(len(a)) {
		t.Fatalf("a prepared batch of %d was decoded %d times in all", len(a), n)
	}
	st.Prepare(b)
	st.Prepare(c)
	st.Prepare(d) // evicts b
	decoded.Store(0)
	for _, x := range [][]kafka.Message{b, c, d} {
		if err := st.Handle(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	if n := decoded.Load(); n != int64(len(b)) {
		t.Fatalf("decoded %d messages handling b, c and d; want %d (only the evicted b again)", n, len(b))
	}
	if len(applied) != 4*700 || applied[0] != "e00000" || applied[len(applied)-1] != "e03699" {
		t.Fatalf("applied %d items (%v … %v), want 2800 in order", len(applied), applied[0], applied[len(applied)-1])
	}
}
