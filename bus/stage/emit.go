package stage

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/schema"
)

// Emitter writes one stage's outputs on one topic, and its progress
// markers: after the outputs a marker covers, one marker per partition of
// the topic (bus.PartitionHeader pins each), so a reader of any partition
// knows the producer has written everything up to the marker's watermark
// (Table.Watermark). Outputs are keyed as the topic table says; a value
// that is nil is a tombstone.
type Emitter struct {
	Stage   string
	Topic   string
	Brokers []string // to learn the partition count
	W       Writer
	Metrics *Metrics

	mu    sync.Mutex
	parts int
}

// Emit writes outputs on the topic and returns once the broker has them.
func (e *Emitter) Emit(ctx context.Context, msgs ...kafka.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	for i := range msgs {
		msgs[i].Topic = e.Topic
	}
	// Bounded writes: one WriteMessages of 100k messages would hold them
	// all in the writer's batches at once.
	for i := 0; i < len(msgs); i += 5000 {
		if err := e.W.WriteMessages(ctx, msgs[i:min(i+5000, len(msgs))]...); err != nil {
			return fmt.Errorf("%s: writing %d outputs on %s: %w", e.Stage, len(msgs), e.Topic, bus.SummarizeWriteError(err))
		}
	}
	if e.Metrics != nil {
		e.Metrics.Emitted.WithLabelValues(e.Stage, e.Topic).Add(float64(len(msgs)))
	}
	return nil
}

// EmitJSON encodes each value (schema.Marshal) and emits it under its key.
func EmitJSON[V any](ctx context.Context, e *Emitter, keys []string, values []V) error {
	msgs := make([]kafka.Message, len(values))
	for i := range values {
		b, err := schema.Marshal(values[i])
		if err != nil {
			return fmt.Errorf("%s: encoding an output: %w", e.Stage, err)
		}
		msgs[i] = kafka.Message{Key: []byte(keys[i]), Value: b}
	}
	return e.Emit(ctx, msgs...)
}

func (e *Emitter) partitions(ctx context.Context) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.parts > 0 {
		return e.parts, nil
	}
	n, err := bus.Partitions(ctx, e.Brokers, e.Topic)
	if err != nil {
		return 0, err
	}
	e.parts = n
	return n, nil
}

// Mark writes the stage's progress marker to every partition of the topic,
// after everything emitted before it.
func (e *Emitter) Mark(ctx context.Context, watermark time.Time, loaded bool) error {
	n, err := e.partitions(ctx)
	if err != nil {
		return fmt.Errorf("%s: marker: %w", e.Stage, err)
	}
	msgs := make([]kafka.Message, n)
	for p := range n {
		b, _ := schema.Marshal(schema.Marker{Stage: e.Stage, Partition: p, Watermark: watermark.UTC(), Loaded: loaded})
		msgs[p] = kafka.Message{Topic: e.Topic, Key: []byte(schema.MarkerKey(e.Stage, p)), Value: b,
			Headers: []kafka.Header{{Key: schema.MarkerHeader, Value: []byte("1")}, {Key: bus.PartitionHeader, Value: []byte(strconv.Itoa(p))}}}
	}
	if err := e.W.WriteMessages(ctx, msgs...); err != nil {
		return fmt.Errorf("%s: marker on %s: %w", e.Stage, e.Topic, bus.SummarizeWriteError(err))
	}
	if e.Metrics != nil && !watermark.IsZero() {
		e.Metrics.Watermark.WithLabelValues(e.Stage).Set(float64(watermark.Unix()))
	}
	return nil
}
