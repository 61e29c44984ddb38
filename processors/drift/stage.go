package drift

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	ckpt "github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// Name is the stage's name; Group its consumer group.
const (
	Name  = "drift"
	Group = "forum-drift"
)

// Topics the drift processor reads: the events, and the snapshot summaries
// that say when a snapshot's events are all in (stage.SnapshotBarrier).
var Topics = []string{schema.TopicRegistryDiffs, schema.TopicRegistrySnapshots}

// Stage is the drift processor on the bus (bus/stage's shape): drift
// events and snapshot summaries in; the state folded in, and at every
// released snapshot (all its events in, in snapshot order) one
// schema.DriftState per server its events changed, and one per namespace
// whose description edits changed (key: the namespace, which has no '/',
// carrying its BulkEdits), on drift.state — each as of the snapshot's time,
// with events after it left out, so the outputs are the same however the
// input was batched or redelivered — then a progress marker at the
// snapshot's time. The state, the barrier and the per-snapshot change sets
// are checkpointed after each batch, before its commit.
type Stage struct {
	w       *method.Weights
	path    string
	state   *State
	barrier stage.SnapshotBarrier
	// changed[snapshot id] are the servers and namespaces whose state that
	// snapshot's events changed, waiting for its release.
	changed map[string]*changeSet
	out     *stage.Emitter
	log     *zap.Logger
}

type changeSet struct {
	Servers    []string `json:"servers"`
	Namespaces []string `json:"namespaces"`
}

func (c *changeSet) add(list *[]string, v string) {
	i := sort.SearchStrings(*list, v)
	if i < len(*list) && (*list)[i] == v {
		return
	}
	*list = append(*list, "")
	copy((*list)[i+1:], (*list)[i:])
	(*list)[i] = v
}

// NewStage loads the checkpoint at path ("" keeps everything in memory)
// and writes outputs through out.
func NewStage(w *method.Weights, path string, out *stage.Emitter, log *zap.Logger) (*Stage, error) {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Stage{w: w, path: path, state: NewStateWith(w), changed: map[string]*changeSet{}, out: out, log: log.Named(Name)}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// State is the processor's state (tests, the bursts command).
func (s *Stage) State() *State { return s.state }

// input is one decoded message: an event or a summary.
type input struct {
	event   *schema.DriftEvent
	summary *schema.SnapshotSummary
}

// Decode reads a registry.diffs or registry.snapshots message.
func Decode(m kafka.Message) (input, error) {
	switch m.Topic {
	case schema.TopicRegistrySnapshots:
		v, err := schema.Decode[schema.SnapshotSummary](m.Value)
		return input{summary: &v}, err
	default:
		v, err := schema.Decode[schema.DriftEvent](m.Value)
		return input{event: &v}, err
	}
}

// Apply folds a batch in and emits what the released snapshots concluded.
func (s *Stage) Apply(ctx context.Context, batch []stage.Item[input]) error {
	for _, it := range batch {
		switch v := it.Value; {
		case v.event != nil:
			e := *v.event
			if s.state.Apply(e) > 0 && e.SnapshotID != "" {
				cs := s.changed[e.SnapshotID]
				if cs == nil {
					cs = &changeSet{}
					s.changed[e.SnapshotID] = cs
				}
				cs.add(&cs.Servers, e.Server)
				if e.Kind == schema.KindDescriptionChanged {
					cs.add(&cs.Namespaces, nsOf(e))
				}
			}
			s.barrier.Event(e)
		case v.summary != nil:
			s.barrier.Summary(*v.summary)
		}
	}
	for _, sn := range s.barrier.Release() {
		if err := s.emit(ctx, sn); err != nil {
			return err
		}
		delete(s.changed, sn.ID)
	}
	return nil
}

func nsOf(e schema.DriftEvent) string {
	if e.Namespace != "" {
		return e.Namespace
	}
	return schema.Namespace(e.Server)
}

// emit writes the outputs of one released snapshot and its marker.
func (s *Stage) emit(ctx context.Context, sn schema.SnapshotSummary) error {
	at := sn.ObservedAt.UTC()
	cs := s.changed[sn.ID]
	if cs != nil && s.out != nil {
		var keys []string
		var vals []schema.DriftState
		for _, ns := range cs.Namespaces {
			keys = append(keys, ns)
			vals = append(vals, schema.DriftState{Namespace: ns, AsOf: at, Events: []schema.DriftEvent{}, BulkEdits: s.state.BulkEditsAsOf(ns, at)})
		}
		for _, name := range cs.Servers {
			in := s.state.InputAsOf(name, at)
			st := schema.DriftState{Server: name, Namespace: schema.Namespace(name), AsOf: at, ObservedSince: in.ObservedSince,
				Events: in.Events, BulkEdits: in.BulkEdits, Drift: trust.DriftScore(s.w, in, at)}
			if st.Events == nil {
				st.Events = []schema.DriftEvent{}
			}
			keys = append(keys, name)
			vals = append(vals, st)
		}
		if err := stage.EmitJSON(ctx, s.out, keys, vals); err != nil {
			return err
		}
	}
	if s.out != nil {
		if err := s.out.Mark(ctx, at, true); err != nil {
			return err
		}
	}
	s.log.Debug("snapshot released", zap.String("snapshot", sn.ID), zap.Time("at", at))
	return nil
}

// stageCheckpoint is the stage's file: the state, the barrier and the change
// sets of snapshots not yet released.
type stageCheckpoint struct {
	Version int                   `json:"version"`
	State   *State                `json:"state"`
	Barrier stage.SnapshotBarrier `json:"barrier"`
	Changed map[string]*changeSet `json:"changed"`
}

// Checkpoint writes the stage's file atomically.
func (s *Stage) Checkpoint(context.Context) error {
	if s.path == "" {
		return nil
	}
	if err := ckpt.Save(s.path, stageCheckpoint{Version: 2, State: s.state, Barrier: s.barrier, Changed: s.changed}); err != nil {
		return fmt.Errorf("drift checkpoint: %w", err)
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
		return fmt.Errorf("drift checkpoint: %w", err)
	}
	var probe struct {
		Version int `json:"version"`
	}
	_ = json.Unmarshal(b, &probe)
	if probe.Version == 1 {
		// A state written before the stage published its outputs: no
		// barrier yet; the next snapshots start one.
		return s.state.UnmarshalJSON(b)
	}
	c := stageCheckpoint{State: s.state}
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("drift checkpoint %s: %w", s.path, err)
	}
	if c.Version != 2 {
		return fmt.Errorf("drift checkpoint %s: version %d, want 2", s.path, c.Version)
	}
	s.barrier = c.Barrier
	if c.Changed != nil {
		s.changed = c.Changed
	}
	return nil
}

// Config returns the stage's shape for bus/stage.
func (s *Stage) Config(brokers []string, metrics *stage.Metrics) stage.Config[input] {
	return stage.Config[input]{Name: Name, Group: Group, Topics: Topics, Brokers: brokers, Decode: Decode, Apply: s.Apply,
		Checkpoint: s.Checkpoint, MaxBatch: 2000, MaxWait: 100 * time.Millisecond, Metrics: metrics, Log: s.log}
}

// InputOf is the trust.DriftInput of a server from drift.state values: its
// own state and its namespace's (either may be missing).
func InputOf(server *schema.DriftState, ns *schema.DriftState) trust.DriftInput {
	var in trust.DriftInput
	if server != nil {
		in.ObservedSince, in.Events = server.ObservedSince, server.Events
	}
	if ns != nil {
		in.BulkEdits = ns.BulkEdits
	}
	return in
}
