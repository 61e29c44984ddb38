package differ

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/schema"
)

// StageConfig configures the differ stage: registry.records in,
// registry.diffs + registry.snapshots + dlq out.
//
// The stage reads registry.records' single partition directly (no consumer
// group): its input offset lives in the same checkpoint file as the known
// state, written atomically after a snapshot's events are on the bus. A crash
// anywhere re-reads at most one snapshot and re-publishes the same event IDs;
// a lost checkpoint re-reads the topic from the start and rebuilds the same
// state.
type StageConfig struct {
	Brokers []string
	// StatePath is the checkpoint file (known state + next input offset).
	StatePath    string
	PartialRatio float64
	Log          *zap.Logger
	// Metrics count dead letters with every stage's
	// (forum_stage_dead_letters_total{stage="differ"}); nil: not counted.
	Metrics *stage.Metrics
}

// Stage runs the differ against the bus.
type Stage struct {
	cfg   StageConfig
	log   *zap.Logger
	mu    sync.Mutex
	state *State
}

// NewStage loads the checkpoint (or starts empty).
func NewStage(cfg StageConfig) (*Stage, error) {
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	st, err := LoadState(cfg.StatePath)
	if err != nil {
		return nil, err
	}
	return &Stage{cfg: cfg, log: log.Named("differ"), state: st}, nil
}

// Applied returns the ObservedAt and ID of the last applied snapshot.
func (s *Stage) Applied() (time.Time, string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Applied, s.state.AppliedID
}

// FirstSeen returns when a server first appeared (drift_observed_since).
func (s *Stage) FirstSeen(name string) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.state.FirstSeen[name]
	return t, ok
}

// LoadState reads a checkpoint; a missing file is an empty state.
func LoadState(path string) (*State, error) {
	st := NewState()
	if _, err := checkpoint.Load(path, st); err != nil {
		return nil, fmt.Errorf("differ state: %w", err)
	}
	return st, nil
}

// SaveState writes a checkpoint atomically.
func SaveState(path string, st *State) error { return checkpoint.Save(path, st) }

type pending struct {
	mode       string
	observedAt time.Time
	entries    map[string]schema.Entry // name@version -> entry (redelivery overwrites)
	order      []string
}

// Run consumes until ctx ends. Records are buffered per snapshot; a
// snapshot_end marker applies the snapshot: events and the summary are
// written (and acknowledged) first, the checkpoint next, the offset last.
func (s *Stage) Run(ctx context.Context) error {
	backoff := 200 * time.Millisecond
	for ctx.Err() == nil {
		err := s.runOnce(ctx)
		if ctx.Err() != nil {
			return nil
		}
		s.log.Warn("differ restarting from its last commit", zap.Error(err), zap.Duration("backoff", backoff))
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 10*time.Second)
	}
	return nil
}

// Lag is the number of registry.records messages not yet covered by the
// checkpoint.
func (s *Stage) Lag(ctx context.Context) (int64, error) {
	s.mu.Lock()
	next := s.state.NextOffset
	s.mu.Unlock()
	end, err := bus.EndOffset(ctx, s.cfg.Brokers, schema.TopicRegistryRecords, 0)
	if err != nil {
		return 0, err
	}
	return max(0, end-next), nil
}

func (s *Stage) runOnce(ctx context.Context) error {
	s.mu.Lock()
	start := s.state.NextOffset
	s.mu.Unlock()
	r := kafka.NewReader(kafka.ReaderConfig{Brokers: s.cfg.Brokers, Topic: schema.TopicRegistryRecords, Partition: 0,
		MinBytes: 1, MaxBytes: 32 << 20, MaxWait: 200 * time.Millisecond, ReadBatchTimeout: 2 * time.Second,
		ErrorLogger: kafka.LoggerFunc(s.log.Sugar().Debugf)})
	defer r.Close()
	if err := r.SetOffset(start); err != nil {
		return fmt.Errorf("seeking registry.records to %d: %w", start, err)
	}
	w := bus.NewWriter(s.cfg.Brokers, s.log)
	defer w.Close()
	buf := map[string]*pending{}
	for {
		m, err := r.FetchMessage(ctx)
		if err != nil {
			return fmt.Errorf("fetch: %w", err)
		}
		msg, err := schema.Decode[schema.RecordMsg](m.Value)
		if err != nil {
			d, dm := stage.DeadLetter("differ", m, err)
			if err := w.WriteMessages(ctx, dm); err != nil {
				return fmt.Errorf("publishing a dead letter: %w", err)
			}
			if s.cfg.Metrics != nil {
				s.cfg.Metrics.DeadLetters.WithLabelValues("differ", d.Reason).Inc()
			}
			s.log.Warn("bad record message to the dlq", zap.String("at", d.Source), zap.String("reason", d.Reason))
			continue
		}
		switch msg.Type {
		case schema.MsgRecord:
			p := buf[msg.SnapshotID]
			if p == nil {
				p = &pending{mode: msg.Mode, observedAt: msg.ObservedAt, entries: map[string]schema.Entry{}}
				buf[msg.SnapshotID] = p
			}
			k := msg.Entry.Server.Name + "@" + msg.Entry.Server.Version
			if _, ok := p.entries[k]; !ok {
				p.order = append(p.order, k)
			}
			p.entries[k] = *msg.Entry
		case schema.MsgSnapshotEnd:
			if err := s.apply(ctx, w, msg, buf[msg.SnapshotID], m.Offset+1); err != nil {
				return err
			}
			delete(buf, msg.SnapshotID)
			for id, p := range buf { // older leftovers can never complete now
				if !p.observedAt.After(msg.ObservedAt) {
					delete(buf, id)
				}
			}
		}
	}
}

func (s *Stage) apply(ctx context.Context, w *bus.Writer, end schema.RecordMsg, p *pending, nextOffset int64) error {
	s.mu.Lock()
	known := s.state
	s.mu.Unlock()
	if !end.ObservedAt.After(known.Applied) {
		s.log.Info("snapshot already applied, skipping redelivery", zap.String("snapshot", end.SnapshotID))
		cp := *known
		cp.NextOffset = nextOffset
		return s.checkpoint(&cp)
	}
	snap := Snapshot{ID: end.SnapshotID, Mode: end.Mode, ObservedAt: end.ObservedAt, Incomplete: end.End.Incomplete}
	if p != nil {
		sort.Strings(p.order)
		snap.Entries = make([]schema.Entry, 0, len(p.order))
		for _, k := range p.order {
			snap.Entries = append(snap.Entries, p.entries[k])
		}
	}
	if len(snap.Entries) == 0 && end.Mode == schema.ModeFull {
		// An empty full listing is an outage, not a registry with no servers.
		snap.Incomplete = true
	}
	res := Diff(known, snap, Options{PartialRatio: s.cfg.PartialRatio})
	res.Next.NextOffset = nextOffset
	msgs := make([]kafka.Message, 0, len(res.Events)+1)
	for i := range res.Events {
		b, _ := json.Marshal(&res.Events[i])
		msgs = append(msgs, kafka.Message{Topic: schema.TopicRegistryDiffs, Key: []byte(res.Events[i].Server), Value: b})
	}
	sum := schema.SnapshotSummary{
		ID: end.SnapshotID, Mode: end.Mode, Source: end.End.Source, ObservedAt: end.ObservedAt.UTC(),
		Entries: len(snap.Entries), Names: res.Names, KnownNames: len(res.Next.Latest), Rejects: end.End.Rejects,
		Partial: res.Partial, Events: len(res.Events), Counts: Counts(res.Events),
	}
	b, _ := json.Marshal(&sum)
	msgs = append(msgs, kafka.Message{Topic: schema.TopicRegistrySnapshots, Key: []byte(sum.ID), Value: b})
	for i := 0; i < len(msgs); i += 1000 {
		if err := w.WriteMessages(ctx, msgs[i:min(i+1000, len(msgs))]...); err != nil {
			return fmt.Errorf("publishing drift events: %w", bus.SummarizeWriteError(err))
		}
	}
	if err := s.checkpoint(res.Next); err != nil {
		return err
	}
	s.log.Info("snapshot applied", zap.String("snapshot", sum.ID), zap.Int("entries", sum.Entries), zap.Int("names", sum.Names),
		zap.Bool("partial", sum.Partial), zap.String("partial_reason", res.PartialReason), zap.Int("rejects", sum.Rejects),
		zap.Int("events", sum.Events), zap.String("counts", FormatCounts(sum.Counts)))
	return nil
}

func (s *Stage) checkpoint(st *State) error {
	if s.cfg.StatePath != "" {
		if err := SaveState(s.cfg.StatePath, st); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.state = st
	s.mu.Unlock()
	return nil
}

func writeJSON(ctx context.Context, w *bus.Writer, topic, key string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	if err := w.WriteMessages(ctx, kafka.Message{Topic: topic, Key: []byte(key), Value: b}); err != nil {
		return fmt.Errorf("publishing to %s: %w", topic, err)
	}
	return nil
}
