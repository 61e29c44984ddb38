package provenance_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/schema"
)

// The stage applies valid observations, dead-letters bad ones, checkpoints
// (so offsets are committed only after the state is on disk), and a
// redelivered batch changes nothing.
func TestStageHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "provenance-state.json")
	ps, err := provenance.NewStage(method.Embedded().Weights, path, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var dead []kafka.Message
	cfg := ps.Config(nil, nil)
	cfg.DLQ = writerFunc(func(_ context.Context, ms ...kafka.Message) error { dead = append(dead, ms...); return nil })
	st, err := stage.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	o := github.Observation{Repo: "github.com/o/r", ID: "github:github.com/o/r@1", ObservedAt: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), Status: github.StatusResolved}
	b, _ := json.Marshal(o)
	batch := []kafka.Message{{Topic: provenance.Topic, Value: b}, {Topic: provenance.Topic, Value: []byte("{not json")}, {Topic: provenance.Topic, Value: []byte(`{}`)}}
	for i := 0; i < 2; i++ {
		if err := st.Handle(context.Background(), batch); err != nil {
			t.Fatal(err)
		}
	}
	if len(dead) != 4 {
		t.Fatalf("%d dead letters, want 2 per delivery", len(dead))
	}
	re, err := provenance.Load(path)
	if err != nil || re.Len() != 1 {
		t.Fatalf("checkpoint: %v, %d observations", err, re.Len())
	}
}

type writerFunc func(ctx context.Context, msgs ...kafka.Message) error

func (f writerFunc) WriteMessages(ctx context.Context, msgs ...kafka.Message) error {
	return f(ctx, msgs...)
}

// Over the embedded bus: each kind of bad observation lands on the dlq
// topic with its reason code (and is counted); the good observation after
// them is applied; the stream goes on.
func TestStageDeadLetters(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	log := zaptest.NewLogger(t)
	b, err := bus.StartEmbedded(filepath.Join(dir, "kafka"), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := bus.EnsureTopics(ctx, b.Addrs(), bus.TopicSpecs(1), log); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	good := github.Observation{Repo: "github.com/o/good", ID: github.ObservationID("github.com/o/good", at), ObservedAt: at, Status: github.StatusResolved,
		HTTPStatus: 200, CreatedAt: at.Add(-400 * 24 * time.Hour), OwnerLogin: "o", OwnerCreatedAt: at.Add(-800 * 24 * time.Hour)}
	enc := func(mod func(*github.Observation)) []byte {
		o := good
		o.Repo = "github.com/o/bad"
		mod(&o)
		b, _ := json.Marshal(o)
		return b
	}
	bad := []struct {
		value  []byte
		reason string
	}{
		{[]byte("{not json"), schema.ReasonMalformedJSON},
		{enc(func(o *github.Observation) { o.Repo = "" }), schema.ReasonMissingRepo},
		{enc(func(o *github.Observation) { o.Status = "exploded" }), schema.ReasonInvalidStatus},
		{enc(func(o *github.Observation) { o.ObservedAt = time.Time{} }), schema.ReasonMissingObserved},
		{enc(func(o *github.Observation) { o.Stars = -40 }), schema.ReasonImplausibleValue},
	}
	var msgs []kafka.Message
	for _, x := range bad {
		msgs = append(msgs, kafka.Message{Topic: provenance.Topic, Key: []byte("github.com/o/bad"), Value: x.value})
	}
	gb, _ := json.Marshal(good)
	msgs = append(msgs, kafka.Message{Topic: provenance.Topic, Key: []byte(good.Repo), Value: gb})
	w := bus.NewWriter(b.Addrs(), log)
	defer w.Close()
	if err := w.WriteMessages(ctx, msgs...); err != nil {
		t.Fatal(err)
	}

	ps, err := provenance.NewStage(method.Embedded().Weights, filepath.Join(dir, "provenance-state.json"), nil, nil, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	st, err := stage.New(ps.Config(b.Addrs(), stage.NewMetrics(reg)))
	if err != nil {
		t.Fatal(err)
	}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- ps.Run(rctx, st) }()
	for ps.State().Len() == 0 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if o, ok := ps.State().Observation("https://github.com/o/good"); !ok || !o.OwnerCreatedAt.Equal(good.OwnerCreatedAt) {
		t.Fatalf("the good observation after the bad ones was not applied: %+v %v", o, ok)
	}
	if _, ok := ps.State().Observation("https://github.com/o/bad"); ok {
		t.Fatal("a bad observation was applied")
	}

	r := kafka.NewReader(kafka.ReaderConfig{Brokers: b.Addrs(), Topic: schema.TopicDLQ, Partition: 0, MaxWait: 100 * time.Millisecond})
	defer r.Close()
	var got []schema.DLQMessage
	for len(got) < len(bad) {
		m, err := r.ReadMessage(ctx)
		if err != nil {
			t.Fatalf("dlq: %v after %d letters", err, len(got))
		}
		var d schema.DLQMessage
		if err := json.Unmarshal(m.Value, &d); err != nil {
			t.Fatal(err)
		}
		got = append(got, d)
	}
	for i, x := range bad {
		d := got[i]
		if d.Stage != provenance.Name || d.Reason != x.reason || d.Key != "github.com/o/bad" || d.Payload != string(x.value) || d.ID == "" || d.Detail == "" {
			t.Errorf("dead letter %d: %+v, want reason %s", i, d, x.reason)
		}
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	counted := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			k := mf.GetName()
			for _, l := range m.GetLabel() {
				k += "/" + l.GetValue()
			}
			counted[k] = m.GetCounter().GetValue()
		}
	}
	for _, x := range bad {
		if n := counted["forum_stage_dead_letters_total/"+x.reason+"/provenance"] + counted["forum_stage_dead_letters_total/provenance/"+x.reason]; n != 1 {
			t.Errorf("%s dead letters counted %v, want 1", x.reason, n)
		}
	}
	if n := counted["forum_stage_messages_total/applied/provenance"] + counted["forum_stage_messages_total/provenance/applied"]; n != 1 {
		t.Errorf("applied %v, want 1", n)
	}
}
