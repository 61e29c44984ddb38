package ownerburst

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

// Group is the detector's consumer group.
const Group = "forum-ownerburst"

// Topics the detector reads.
var Topics = []string{schema.TopicRegistryDiffs, schema.TopicRegistrySnapshots}

// Stage runs a State against the bus: apply a batch, checkpoint
// atomically, then commit (bus.Consume), so a crash anywhere only
// redelivers what Apply absorbs idempotently.
type Stage struct {
	Brokers        []string
	CheckpointPath string
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
	return &Stage{Brokers: brokers, CheckpointPath: path, State: st, Log: log.Named("ownerburst")}, nil
}

// Handle applies one batch and checkpoints; it is a bus.Handler.
func (s *Stage) Handle(_ context.Context, msgs []kafka.Message) error {
	var evs []schema.DriftEvent
	var sums []schema.SnapshotSummary
	for _, m := range msgs {
		switch m.Topic {
		case schema.TopicRegistrySnapshots:
			var sum schema.SnapshotSummary
			if err := json.Unmarshal(m.Value, &sum); err != nil || sum.ID == "" {
				s.Log.Warn("skipping undecodable snapshot summary", zap.String("at", fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset)), zap.Error(err))
				continue
			}
			sums = append(sums, sum)
		default:
			var e schema.DriftEvent
			if err := json.Unmarshal(m.Value, &e); err != nil || e.ID == "" {
				s.Log.Warn("skipping undecodable drift event", zap.String("at", fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset)), zap.Error(err))
				continue
			}
			evs = append(evs, e)
		}
	}
	s.State.ApplySnapshot(sums...)
	s.State.Apply(evs...)
	if s.CheckpointPath != "" {
		if err := s.State.Save(s.CheckpointPath); err != nil {
			return fmt.Errorf("owner-burst checkpoint: %w", err)
		}
	}
	return nil
}

// Run consumes until ctx ends.
func (s *Stage) Run(ctx context.Context) error {
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: s.Brokers, Group: Group, Topics: Topics, MaxBatch: 2000, MaxWait: 100 * time.Millisecond, Log: s.Log}, s.Handle)
}
