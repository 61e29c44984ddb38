package drift

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/schema"
)

// Group is the drift processor's consumer group.
const Group = "forum-drift"

// Topics the drift processor reads.
var Topics = []string{schema.TopicRegistryDiffs}

// Stage runs a State against the bus: registry.diffs in; the checkpoint
// file out. Each batch is applied, the checkpoint written (atomically), and
// only then are the batch's offsets committed (bus.Consume), so a SIGKILL
// at any point restarts from a checkpoint that already holds everything up
// to the last commit, and the redelivered tail is absorbed by Apply's
// idempotency.
type Stage struct {
	Brokers        []string
	CheckpointPath string // "" keeps the state in memory only (tests)
	State          *State
	Log            *zap.Logger
}

// NewStage loads the checkpoint at path (or starts empty).
func NewStage(brokers []string, path string, log *zap.Logger) (*Stage, error) {
	if log == nil {
		log = zap.NewNop()
	}
	st, err := Load(path)
	if err != nil {
		return nil, err
	}
	return &Stage{Brokers: brokers, CheckpointPath: path, State: st, Log: log.Named("drift")}, nil
}

// Handle applies one batch and checkpoints; it is a bus.Handler. A message
// that does not decode is logged and skipped: the differ is the only
// producer and the history sink already dead-letters such messages.
func (s *Stage) Handle(_ context.Context, msgs []kafka.Message) error {
	evs := make([]schema.DriftEvent, 0, len(msgs))
	for _, m := range msgs {
		var e schema.DriftEvent
		if err := json.Unmarshal(m.Value, &e); err != nil || e.ID == "" || e.Server == "" {
			s.Log.Warn("skipping undecodable drift event", zap.String("at", fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset)), zap.Error(err))
			continue
		}
		evs = append(evs, e)
	}
	n := s.State.Apply(evs...)
	if s.CheckpointPath != "" {
		if err := s.State.Save(s.CheckpointPath); err != nil {
			return fmt.Errorf("drift checkpoint: %w", err)
		}
	}
	s.Log.Debug("drift batch applied", zap.Int("messages", len(msgs)), zap.Int("new", n))
	return nil
}

// Run consumes until ctx ends.
func (s *Stage) Run(ctx context.Context) error {
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: s.Brokers, Group: Group, Topics: Topics, MaxBatch: 2000, MaxWait: 100 * time.Millisecond, Log: s.Log}, s.Handle)
}
