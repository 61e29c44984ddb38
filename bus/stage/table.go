package stage

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/schema"
)

// Table is a local copy of a compacted topic: the latest value of every
// key, rebuilt by reading every partition from its first offset (no
// consumer group: every process that needs the table reads all of it), and
// kept current by reading on. It is how one role reads another role's
// conclusions without sharing its memory (ARCHITECTURE "Results are
// data"): the scorer's view of the drift, owner-burst, incident and
// provenance processors.
//
// Progress: the producer stage writes a marker to every partition after
// the outputs it covers (Emitter.Mark). Watermark is the lowest of the
// partitions' latest markers: every output with event time at or before it
// is in the table. Loaded is true once every partition has been read to
// the end it had when the table started and every marker says the
// producer has read its own input to the end.
//
// A value that does not decode is dead-lettered (stage "table:<topic>")
// and counted, and the key keeps its previous value.
type Table[T any] struct {
	Topic    string
	Producer string // the stage whose markers count
	Brokers  []string
	Decode   func(m kafka.Message) (T, error)
	DLQ      Writer // nil: bad values are only logged and counted
	Metrics  *Metrics
	Log      *zap.Logger

	mu    sync.RWMutex
	rows  map[string]T
	parts []*tablePart
	ready chan struct{} // closed when parts is set
	once  sync.Once
}

type tablePart struct {
	next     int64 // next offset to read
	end      int64 // the partition's end when the table started
	marker   schema.Marker
	hasMark  bool
	caughtUp bool
}

func (t *Table[T]) init() {
	t.once.Do(func() {
		t.rows = map[string]T{}
		t.ready = make(chan struct{})
		if t.Log == nil {
			t.Log = zap.NewNop()
		}
	})
}

// Run reads the topic until ctx ends.
func (t *Table[T]) Run(ctx context.Context) error {
	t.init()
	n, err := retry(ctx, t.Log, func() (int, error) { return bus.Partitions(ctx, t.Brokers, t.Topic) })
	if err != nil {
		return err
	}
	parts := make([]*tablePart, n)
	for p := range n {
		end, err := retry(ctx, t.Log, func() (int64, error) { return bus.EndOffset(ctx, t.Brokers, t.Topic, p) })
		if err != nil {
			return err
		}
		parts[p] = &tablePart{end: end, caughtUp: end == 0}
	}
	t.mu.Lock()
	t.parts = parts
	t.mu.Unlock()
	close(t.ready)
	var wg sync.WaitGroup
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.readPartition(ctx, p)
		}()
	}
	wg.Wait()
	return nil
}

// retry calls f until it succeeds or ctx ends, with a capped back-off: a
// table outlives a broker restart.
func retry[V any](ctx context.Context, log *zap.Logger, f func() (V, error)) (V, error) {
	backoff := 200 * time.Millisecond
	for {
		v, err := f()
		if err == nil {
			return v, nil
		}
		log.Debug("table: retrying", zap.Error(err))
		select {
		case <-ctx.Done():
			return v, ctx.Err()
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 5*time.Second)
	}
}

func (t *Table[T]) readPartition(ctx context.Context, p int) {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := t.readFrom(ctx, p)
		if ctx.Err() != nil {
			return
		}
		t.Log.Warn("table: reader restarting", zap.String("topic", t.Topic), zap.Int("partition", p), zap.Error(err))
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
}

func (t *Table[T]) readFrom(ctx context.Context, p int) error {
	t.mu.RLock()
	start := t.parts[p].next
	t.mu.RUnlock()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: t.Brokers, Topic: t.Topic, Partition: p, MinBytes: 1, MaxBytes: 4 << 20,
		MaxWait: 200 * time.Millisecond, ReadBatchTimeout: 2 * time.Second, ErrorLogger: kafka.LoggerFunc(t.Log.Sugar().Debugf)})
	defer r.Close()
	if err := r.SetOffset(start); err != nil {
		return fmt.Errorf("seek %s/%d to %d: %w", t.Topic, p, start, err)
	}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return err
		}
		t.apply(ctx, p, m)
	}
}

func (t *Table[T]) apply(ctx context.Context, p int, m kafka.Message) {
	var bad error
	var v T
	marker := IsMarker(m)
	var mk schema.Marker
	switch {
	case marker:
		mk, bad = schema.Decode[schema.Marker](m.Value)
	case m.Value == nil: // tombstone
	default:
		v, bad = t.Decode(m)
	}
	if bad != nil {
		d, dm := DeadLetter("table:"+t.Topic, m, bad)
		t.Log.Warn("table: bad value", zap.String("at", d.Source), zap.String("reason", d.Reason), zap.String("detail", d.Detail))
		if t.Metrics != nil {
			t.Metrics.DeadLetters.WithLabelValues("table:"+t.Topic, d.Reason).Inc()
		}
		if t.DLQ != nil {
			// Best effort with a bound: the table must not stop reading
			// because the dlq is slow; the metric and the log stay.
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			if err := t.DLQ.WriteMessages(wctx, dm); err != nil {
				t.Log.Warn("table: dead letter not written", zap.Error(err))
			}
			cancel()
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	part := t.parts[p]
	part.next = m.Offset + 1
	if part.next >= part.end {
		part.caughtUp = true
	}
	switch {
	case bad != nil:
	case marker:
		if mk.Stage == t.Producer {
			part.marker, part.hasMark = mk, true
		}
	case m.Value == nil:
		delete(t.rows, string(m.Key))
	default:
		t.rows[string(m.Key)] = v
	}
}

// Get returns the value of key.
func (t *Table[T]) Get(key string) (T, bool) {
	t.init()
	t.mu.RLock()
	defer t.mu.RUnlock()
	v, ok := t.rows[key]
	return v, ok
}

// Range calls f for every key (in no order) while it returns true, under
// the table's read lock: f must not call the table.
func (t *Table[T]) Range(f func(key string, v T) bool) {
	t.init()
	t.mu.RLock()
	defer t.mu.RUnlock()
	for k, v := range t.rows {
		if !f(k, v) {
			return
		}
	}
}

// Len is the number of keys.
func (t *Table[T]) Len() int {
	t.init()
	t.mu.RLock()
	defer t.mu.RUnlock()
	return len(t.rows)
}

// Watermark is the event time through which the producer's outputs are all
// in the table (zero until every partition has a marker).
func (t *Table[T]) Watermark() time.Time {
	t.init()
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.parts) == 0 {
		return time.Time{}
	}
	var wm time.Time
	for i, p := range t.parts {
		if !p.hasMark {
			return time.Time{}
		}
		if i == 0 || p.marker.Watermark.Before(wm) {
			wm = p.marker.Watermark
		}
	}
	return wm
}

// Loaded reports whether the table holds everything the producer had
// written when the table started, and the producer has read its input to
// the end at least once.
func (t *Table[T]) Loaded() bool {
	t.init()
	t.mu.RLock()
	defer t.mu.RUnlock()
	if len(t.parts) == 0 {
		return false
	}
	for _, p := range t.parts {
		if !p.caughtUp || !p.hasMark || !p.marker.Loaded {
			return false
		}
	}
	return true
}

// ErrNotReached is returned by WaitWatermark when the wait ran out.
var ErrNotReached = errors.New("watermark not reached")

// WaitWatermark waits until Watermark is at or after at, or max passed
// (ErrNotReached), or ctx ended.
func (t *Table[T]) WaitWatermark(ctx context.Context, at time.Time, max time.Duration) error {
	deadline := time.Now().Add(max)
	for {
		if wm := t.Watermark(); !wm.IsZero() && !wm.Before(at) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: %s at %s (have %s): %w", t.Topic, t.Producer, at.UTC().Format(time.RFC3339), t.Watermark().UTC().Format(time.RFC3339), ErrNotReached)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
