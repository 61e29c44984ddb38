package ownerburst

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	ckpt "github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

// Name is the stage's name; Group its consumer group.
const (
	Name  = "ownerburst"
	Group = "forum-ownerburst"
)

// Topics the detector reads.
var Topics = []string{schema.TopicRegistryDiffs, schema.TopicRegistrySnapshots}

// Stage is the owner-burst detector on the bus (bus/stage's shape): drift
// events and snapshot summaries in; at every released snapshot
// (stage.SnapshotBarrier: all its events in, in order) one
// schema.OwnerBurstWindow per namespace with a new server in the evaluated
// windows, keyed "namespace|day", evaluated at the snapshot's time — so the
// outputs do not depend on batching or redelivery — then the state is
// pruned at that time and a marker written. State, barrier and all are
// checkpointed after each batch, before its commit.
type Stage struct {
	path    string
	state   *State
	barrier stage.SnapshotBarrier
	out     *stage.Emitter
	log     *zap.Logger
}

// NewStage loads the checkpoint at path ("" keeps it in memory).
func NewStage(w *method.Weights, path string, out *stage.Emitter, log *zap.Logger) (*Stage, error) {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Stage{path: path, state: NewStateWith(w), out: out, log: log.Named(Name)}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// State is the detector's state.
func (s *Stage) State() *State { return s.state }

type input struct {
	event   *schema.DriftEvent
	summary *schema.SnapshotSummary
}

// Decode reads a registry.diffs or registry.snapshots message.
func Decode(m kafka.Message) (input, error) {
	if m.Topic == schema.TopicRegistrySnapshots {
		v, err := schema.Decode[schema.SnapshotSummary](m.Value)
		return input{summary: &v}, err
	}
	v, err := schema.Decode[schema.DriftEvent](m.Value)
	return input{event: &v}, err
}

// Apply folds a batch in and concludes the released snapshots.
func (s *Stage) Apply(ctx context.Context, batch []stage.Item[input]) error {
	for _, it := range batch {
		switch v := it.Value; {
		case v.event != nil:
			s.state.Apply(*v.event)
			s.barrier.Event(*v.event)
		case v.summary != nil:
			s.state.ApplySnapshot(*v.summary)
			s.barrier.Summary(*v.summary)
		}
	}
	for _, sn := range s.barrier.Release() {
		at := sn.ObservedAt.UTC()
		if s.out != nil {
			ws := s.state.Windows(at)
			keys := make([]string, len(ws))
			for i, w := range ws {
				keys[i] = schema.OwnerBurstKey(w.Namespace, w.Day)
			}
			if err := stage.EmitJSON(ctx, s.out, keys, ws); err != nil {
				return err
			}
			if err := s.out.Mark(ctx, at, true); err != nil {
				return err
			}
		}
		s.state.Prune(at)
	}
	return nil
}

type stageCheckpoint struct {
	Version int                   `json:"version"`
	State   *State                `json:"state"`
	Barrier stage.SnapshotBarrier `json:"barrier"`
}

// Checkpoint writes the stage's file atomically.
func (s *Stage) Checkpoint(context.Context) error {
	if s.path == "" {
		return nil
	}
	if err := ckpt.Save(s.path, stageCheckpoint{Version: 2, State: s.state, Barrier: s.barrier}); err != nil {
		return fmt.Errorf("owner-burst checkpoint: %w", err)
	}
	return nil
}

func (s *Stage) load() error {
	if s.path == "" {
		return nil
	}
	b, err := os.ReadFile(s.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("owner-burst checkpoint: %w", err)
	}
	var probe struct {
		Version int `json:"version"`
	}
	_ = json.Unmarshal(b, &probe)
	if probe.Version == 1 {
		return s.state.UnmarshalJSON(b) // written before the stage published outputs
	}
	c := stageCheckpoint{State: s.state}
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("owner-burst checkpoint %s: %w", s.path, err)
	}
	if c.Version != 2 {
		return fmt.Errorf("owner-burst checkpoint %s: version %d, want 2", s.path, c.Version)
	}
	s.barrier = c.Barrier
	return nil
}

// Config returns the stage's shape for bus/stage.
func (s *Stage) Config(brokers []string, metrics *stage.Metrics) stage.Config[input] {
	return stage.Config[input]{Name: Name, Group: Group, Topics: Topics, Brokers: brokers, Decode: Decode, Apply: s.Apply,
		Checkpoint: s.Checkpoint, MaxBatch: 2000, MaxWait: 100 * time.Millisecond, Metrics: metrics, Log: s.log}
}
