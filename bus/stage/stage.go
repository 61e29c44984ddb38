// Package stage is the one shape every stateful stage of the pipeline has
// (ARCHITECTURE "One stage shape"), so a processor or a sink is only its
// decode and apply functions, and its delivery, dead letters and metrics
// are the same as every other's:
//
//	fetch a batch (bus.Consume, one consumer group)
//	→ decode each message into T and validate it (Config.Decode; the
//	  schema types' Decode does both)
//	→ dead-letter what fails, with its reason code (schema.ReasonOf), on
//	  the dlq topic, counted in forum_stage_dead_letters_total{stage,reason};
//	  the stream moves on
//	→ apply the good ones (Config.Apply: fold into state, write outputs on
//	  the bus through an Emitter, or rows into the store)
//	→ checkpoint (Config.Checkpoint: the stage's own state file, atomically)
//	→ commit the batch's offsets.
//
// Contract: Apply and Checkpoint must be idempotent — after a crash the
// same batch comes again, from the last commit. Anything that returns an
// error (an Apply that could not write, a dead letter that could not be
// sent) fails the whole batch, which is redelivered after a back-off; it is
// never committed half done. Apply must not keep the batch slice.
// Progress markers (schema.MarkerHeader) on an input topic are not input:
// they are skipped, neither applied nor dead-lettered.
//
// Beside the shape: Emitter writes a stage's outputs and its progress
// markers, Table keeps a local copy of a compacted output topic (the
// scorer's view of the other processors), and SnapshotBarrier tells a
// stage when all drift events of a snapshot have arrived, so outputs are
// concluded at snapshot boundaries, independent of how input was batched.
package stage

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/schema"
)

// Writer writes messages (a *kafka.Writer; tests may pass their own).
type Writer interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}

// Item is one decoded message with the message it came from (topic,
// offset, key and broker time, for logs and event-time fallbacks).
type Item[T any] struct {
	Value T
	Msg   kafka.Message
}

// Config describes a stage.
type Config[T any] struct {
	Name    string   // the stage's name: dead letters, metrics and logs carry it
	Group   string   // consumer group
	Topics  []string // input topics
	Brokers []string
	// Decode turns one message into T, validating it; an error whose
	// schema.ReasonOf is not "" dead-letters the message with that reason,
	// any other error is reason bad_message. It must be safe for
	// concurrent use: a large batch is decoded by several goroutines.
	Decode func(m kafka.Message) (T, error)
	// Apply folds a batch of good messages in, in offset order per
	// partition. Required.
	Apply func(ctx context.Context, batch []Item[T]) error
	// Checkpoint persists the stage's own state after Apply and before the
	// commit (nil: stateless, or state kept elsewhere).
	Checkpoint func(ctx context.Context) error
	MaxBatch   int           // default 1000
	MaxWait    time.Duration // default 100 ms
	// DLQ receives dead letters; nil: a writer on Brokers, opened by Run.
	DLQ     Writer
	Metrics *Metrics // nil: not counted (tests)
	Log     *zap.Logger
}

// Stage runs a Config.
type Stage[T any] struct {
	c Config[T]

	// ready holds batches decoded ahead by Prepare, keyed by the batch's
	// first element (bus hands Handle the very slice Prepare saw); at most
	// readyMax, oldest out first. A miss only means Handle decodes itself.
	mu    sync.Mutex
	ready map[*kafka.Message]decoded[T]
	order []*kafka.Message
}

// decoded is a batch's decode: values and errors by index.
type decoded[T any] struct {
	vals []T
	errs []error
}

// readyMax bounds the batches decoded ahead: bus.Consume reads one batch
// ahead, so two are live (the one Handle takes, the next); a third is one
// a failed run dropped.
const readyMax = 2

// New checks a config and returns its stage.
func New[T any](c Config[T]) (*Stage[T], error) {
	switch {
	case c.Name == "":
		return nil, errors.New("stage: no name")
	case c.Decode == nil || c.Apply == nil:
		return nil, fmt.Errorf("stage %s: Decode and Apply are required", c.Name)
	case len(c.Topics) == 0 || c.Group == "":
		return nil, fmt.Errorf("stage %s: a consumer group and input topics are required", c.Name)
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	c.Log = c.Log.Named(c.Name)
	if c.MaxBatch <= 0 {
		c.MaxBatch = 1000
	}
	if c.MaxWait <= 0 {
		c.MaxWait = 100 * time.Millisecond
	}
	return &Stage[T]{c: c}, nil
}

// Name returns the stage's name.
func (s *Stage[T]) Name() string { return s.c.Name }

// Run consumes until ctx ends (bus.Consume: restarts from the last commit
// after any error, with a capped back-off).
func (s *Stage[T]) Run(ctx context.Context) error {
	if s.c.DLQ == nil {
		w := bus.NewWriter(s.c.Brokers, s.c.Log)
		defer w.Close()
		s.c.DLQ = w
	}
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: s.c.Brokers, Group: s.c.Group, Topics: s.c.Topics,
		MaxBatch: s.c.MaxBatch, MaxWait: s.c.MaxWait, Log: s.c.Log, Prepare: s.Prepare}, s.Handle)
}

// Prepare decodes a batch ahead of Handle (bus.ConsumeConfig.Prepare), so
// a stage decodes the next batch while it applies this one: for the
// history sink, JSON decoding overlaps the store's write.
func (s *Stage[T]) Prepare(msgs []kafka.Message) {
	if len(msgs) == 0 {
		return
	}
	vals, errs := s.decode(msgs)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ready == nil {
		s.ready = map[*kafka.Message]decoded[T]{}
	}
	if len(s.order) == readyMax {
		delete(s.ready, s.order[0])
		s.order = s.order[1:]
	}
	s.ready[&msgs[0]] = decoded[T]{vals, errs}
	s.order = append(s.order, &msgs[0])
}

// prepared takes the decode Prepare made of msgs, if any.
func (s *Stage[T]) prepared(msgs []kafka.Message) ([]T, []error, bool) {
	if len(msgs) == 0 {
		return nil, nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.ready[&msgs[0]]
	if !ok || len(d.vals) != len(msgs) {
		return nil, nil, false
	}
	delete(s.ready, &msgs[0])
	s.order = slices.DeleteFunc(s.order, func(k *kafka.Message) bool { return k == &msgs[0] })
	return d.vals, d.errs, true
}

// IsMarker reports whether a message is a progress marker.
func IsMarker(m kafka.Message) bool {
	for _, h := range m.Headers {
		if h.Key == schema.MarkerHeader {
			return true
		}
	}
	return false
}

// Source names where a message came from, for dead letters and logs.
func Source(m kafka.Message) string { return fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset) }

// DeadLetter builds the dlq message of a bad input message: the reason code
// of err (bad_message when it has none), a bounded detail and payload.
func DeadLetter(stage string, m kafka.Message, err error) (schema.DLQMessage, kafka.Message) {
	reason := schema.ReasonOf(err)
	if reason == "" {
		reason = schema.ReasonBadMessage
	}
	at := m.Time
	if at.IsZero() {
		at = time.Now()
	}
	d := schema.NewDLQ(stage, Source(m), reason, err.Error(), string(m.Key), m.Value, at)
	b, _ := schema.Marshal(d)
	return d, kafka.Message{Topic: schema.TopicDLQ, Key: []byte(d.Key), Value: b, Time: at}
}

// Handle runs one batch through the shape (a bus.Handler; tests call it
// directly).
func (s *Stage[T]) Handle(ctx context.Context, msgs []kafka.Message) error {
	start := time.Now()
	good := make([]Item[T], 0, len(msgs))
	var dead []kafka.Message
	vals, errs, ok := s.prepared(msgs)
	if !ok {
		vals, errs = s.decode(msgs)
	}
	for i, m := range msgs {
		if IsMarker(m) {
			continue
		}
		v, err := vals[i], errs[i]
		if err != nil {
			d, dm := DeadLetter(s.c.Name, m, err)
			s.c.Log.Warn("bad input to the dlq", zap.String("at", d.Source), zap.String("reason", d.Reason), zap.String("detail", d.Detail))
			dead = append(dead, dm)
			if s.c.Metrics != nil {
				s.c.Metrics.DeadLetters.WithLabelValues(s.c.Name, d.Reason).Inc()
			}
			continue
		}
		good = append(good, Item[T]{Value: v, Msg: m})
	}
	fail := func(what string, err error) error {
		if s.c.Metrics != nil {
			s.c.Metrics.Failures.WithLabelValues(s.c.Name).Inc()
		}
		return fmt.Errorf("%s: %s: %w", s.c.Name, what, err)
	}
	// Dead letters first: once Apply's effects are committed the bad
	// messages must already be on the dlq.
	if len(dead) > 0 {
		if s.c.DLQ == nil {
			return fail("dead letters", errors.New("no dlq writer"))
		}
		if err := s.c.DLQ.WriteMessages(ctx, dead...); err != nil {
			return fail(fmt.Sprintf("writing %d dead letters", len(dead)), bus.SummarizeWriteError(err))
		}
	}
	if len(good) > 0 {
		if err := s.c.Apply(ctx, good); err != nil {
			return fail("apply", err)
		}
	}
	if s.c.Checkpoint != nil {
		if err := s.c.Checkpoint(ctx); err != nil {
			return fail("checkpoint", err)
		}
	}
	if m := s.c.Metrics; m != nil {
		m.Messages.WithLabelValues(s.c.Name, "applied").Add(float64(len(good)))
		m.Messages.WithLabelValues(s.c.Name, "dead_letter").Add(float64(len(dead)))
		m.BatchSeconds.WithLabelValues(s.c.Name).Observe(time.Since(start).Seconds())
	}
	return nil
}

// parallelDecodeMin is the batch size from which decode splits the
// batch over GOMAXPROCS goroutines: decoding (JSON and validation) is on
// the stage's critical path, serial with Apply, and a sink catching up
// decodes 10,000-message batches (bench/README.md); a small batch is not
// worth the goroutines.
const parallelDecodeMin = 512

// decode decodes every message that is not a marker, into vals and errs by
// index: in GOMAXPROCS contiguous chunks for a large batch, in order for a
// small one.
func (s *Stage[T]) decode(msgs []kafka.Message) ([]T, []error) {
	vals, errs := make([]T, len(msgs)), make([]error, len(msgs))
	run := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if !IsMarker(msgs[i]) {
				vals[i], errs[i] = s.c.Decode(msgs[i])
			}
		}
	}
	workers := min(runtime.GOMAXPROCS(0), len(msgs)/(parallelDecodeMin/2))
	if len(msgs) < parallelDecodeMin || workers < 2 {
		run(0, len(msgs))
		return vals, errs
	}
	var wg sync.WaitGroup
	chunk := (len(msgs) + workers - 1) / workers
	for lo := 0; lo < len(msgs); lo += chunk {
		wg.Go(func() { run(lo, min(lo+chunk, len(msgs))) })
	}
	wg.Wait()
	return vals, errs
}

// Metrics are the counters every stage shares: one set per process,
// labelled by stage.
type Metrics struct {
	Messages     *prometheus.CounterVec   // {stage, outcome}: applied | dead_letter
	DeadLetters  *prometheus.CounterVec   // {stage, reason}
	Failures     *prometheus.CounterVec   // {stage}: batches that failed and come again
	BatchSeconds *prometheus.HistogramVec // {stage}
	Emitted      *prometheus.CounterVec   // {stage, topic}: outputs written
	Watermark    *prometheus.GaugeVec     // {stage}: the last marker's event time (Unix seconds)
}

// NewMetrics registers the stage metrics on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Messages: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_stage_messages_total",
			Help: "Input messages handled by a stage, by outcome (applied, dead_letter)."}, []string{"stage", "outcome"}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_stage_dead_letters_total",
			Help: "Input messages a stage sent to the dlq topic, by reason code."}, []string{"stage", "reason"}),
		Failures: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_stage_failed_batches_total",
			Help: "Batches a stage could not finish (redelivered from the last commit)."}, []string{"stage"}),
		BatchSeconds: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "forum_stage_batch_seconds",
			Help: "Time to decode, apply and checkpoint one batch.", Buckets: prometheus.ExponentialBuckets(0.001, 4, 10)}, []string{"stage"}),
		Emitted: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_stage_outputs_total",
			Help: "Output messages a stage wrote, by topic."}, []string{"stage", "topic"}),
		Watermark: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "forum_stage_watermark_seconds",
			Help: "Event time (Unix seconds) through which a stage's outputs are written."}, []string{"stage"}),
	}
	if reg != nil {
		reg.MustRegister(m.Messages, m.DeadLetters, m.Failures, m.BatchSeconds, m.Emitted, m.Watermark)
	}
	return m
}
