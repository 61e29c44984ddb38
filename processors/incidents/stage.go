package incidents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/sql/store"
)

// Group is the processor's consumer group.
const Group = "forum-incidents"

// Topics the processor reads.
var Topics = []string{Topic}

// Stage runs the processor: incidents topic in; store rows, then the
// checkpoint, then the commit (bus.Consume), so a crash anywhere only
// redelivers what the store and State absorb idempotently.
type Stage struct {
	Brokers        []string
	Store          store.IncidentStore
	CheckpointPath string
	State          *State
	Log            *zap.Logger
}

// NewStage loads the checkpoint at path (or starts empty).
func NewStage(brokers []string, st store.IncidentStore, path string, log *zap.Logger) (*Stage, error) {
	if log == nil {
		log = zap.NewNop()
	}
	s, err := Load(path)
	if err != nil {
		return nil, err
	}
	return &Stage{Brokers: brokers, Store: st, CheckpointPath: path, State: s, Log: log.Named("incidents")}, nil
}

// Apply stores messages, folds them into the state and checkpoints.
func (s *Stage) Apply(ctx context.Context, msgs []Msg) error {
	if len(msgs) == 0 {
		return nil
	}
	rows := make([]store.Incident, 0, len(msgs))
	audit := make([]store.IncidentAudit, 0, len(msgs))
	for _, m := range msgs {
		rows = append(rows, Row(m.Incident))
		if m.Audit.ID != "" {
			audit = append(audit, AuditRow(m))
		}
	}
	if s.Store != nil {
		// The audit row first: an incident row never exists without the
		// entry that says who entered it and why.
		if err := s.Store.InsertIncidentAudit(ctx, audit); err != nil {
			return fmt.Errorf("storing incident audit: %w", err)
		}
		if err := s.Store.InsertIncidents(ctx, rows); err != nil {
			return fmt.Errorf("storing incidents: %w", err)
		}
	}
	s.State.Apply(msgs...)
	if s.CheckpointPath != "" {
		if err := s.State.Save(s.CheckpointPath); err != nil {
			return fmt.Errorf("incidents checkpoint: %w", err)
		}
	}
	return nil
}

// Handle decodes a batch and applies it; it is a bus.Handler.
func (s *Stage) Handle(ctx context.Context, msgs []kafka.Message) error {
	out := make([]Msg, 0, len(msgs))
	for _, m := range msgs {
		var x Msg
		if err := json.Unmarshal(m.Value, &x); err != nil || x.Incident.ID == "" || x.Incident.Server == "" {
			s.Log.Warn("skipping undecodable incident message", zap.String("at", fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset)), zap.Error(err))
			continue
		}
		out = append(out, x)
	}
	return s.Apply(ctx, out)
}

// Run consumes until ctx ends. The state is marked loaded the first time
// the group has no lag: from then on the incidents sub-score is known.
func (s *Stage) Run(ctx context.Context) error {
	go s.watchLoaded(ctx)
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: s.Brokers, Group: Group, Topics: Topics, MaxBatch: 500, MaxWait: 50 * time.Millisecond, Log: s.Log}, s.Handle)
}

func (s *Stage) watchLoaded(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for !s.State.Loaded() {
		lag, err := bus.Lag(ctx, s.Brokers, Group, Topics)
		if err == nil && lag == 0 {
			s.State.MarkLoaded()
			s.Log.Info("incident feed loaded")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Publisher writes messages on the topic (admin API, file loader).
type Publisher struct {
	W *kafka.Writer
}

// Publish writes msgs, keyed by server, and returns once the broker has them.
func (p *Publisher) Publish(ctx context.Context, msgs ...Msg) error {
	if p == nil || p.W == nil {
		return errors.New("no bus to publish incidents on")
	}
	km := make([]kafka.Message, 0, len(msgs))
	for _, m := range msgs {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("encoding incident %s: %w", m.Incident.ID, err)
		}
		km = append(km, kafka.Message{Topic: Topic, Key: []byte(m.Incident.Server), Value: b})
	}
	if err := p.W.WriteMessages(ctx, km...); err != nil {
		return fmt.Errorf("publishing incidents: %w", bus.SummarizeWriteError(err))
	}
	return nil
}

// StoreLookup answers validation's questions from the store's latest view
// and incidents (and the in-memory state first, which may be ahead of the
// store by the batch being written).
type StoreLookup struct {
	Servers interface {
		GetServer(ctx context.Context, name string) (store.ServerRow, error)
	}
	Incidents store.IncidentStore
	State     *State
}

// ServerExists implements Lookup.
func (l StoreLookup) ServerExists(ctx context.Context, server string) (bool, error) {
	_, err := l.Servers.GetServer(ctx, server)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Incident implements Lookup.
func (l StoreLookup) Incident(ctx context.Context, id string) (Record, bool, error) {
	if l.State != nil {
		if r, ok := l.State.Incident(id); ok {
			return r, true, nil
		}
	}
	if l.Incidents == nil {
		return Record{}, false, nil
	}
	r, err := l.Incidents.GetIncident(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Record{}, false, nil
	}
	if err != nil {
		return Record{}, false, err
	}
	return FromRow(r), true, nil
}
