package incidents

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Name is the stage's name; Group its consumer group.
const (
	Name  = "incidents"
	Group = "forum-incidents"
)

// Topic carries every accepted incident insert and retraction.
const Topic = schema.TopicIncidents

// Topics the processor reads.
var Topics = []string{Topic}

// Stage is the incidents processor on the bus (bus/stage's shape): the
// incidents topic in (keyed by server, so one server's actions stay in
// order); the state folded in, and after each message one
// schema.IncidentState of its server on incidents.state, as of the action's
// time — one output per input, so batching never changes the outputs — then
// the state checkpointed and the batch committed. A marker follows every
// batch; its Loaded flag is set once the group has read the topic to the
// end: from then on the incidents sub-score is known (an empty feed means
// 100, an unread one means "not checked").
type Stage struct {
	w       *method.Weights
	brokers []string
	path    string
	state   *State
	out     *stage.Emitter
	log     *zap.Logger
	last    time.Time // greatest action time applied (the marker's watermark)
}

// NewStage loads the checkpoint at path ("" keeps it in memory).
func NewStage(w *method.Weights, brokers []string, path string, out *stage.Emitter, log *zap.Logger) (*Stage, error) {
	if log == nil {
		log = zap.NewNop()
	}
	st, err := Load(path)
	if err != nil {
		return nil, err
	}
	return &Stage{w: w, brokers: brokers, path: path, state: st, out: out, log: log.Named(Name)}, nil
}

// State is the processor's state.
func (s *Stage) State() *State { return s.state }

// Decode reads one incidents message.
func Decode(m kafka.Message) (Msg, error) { return schema.Decode[schema.IncidentMsg](m.Value) }

// Apply folds messages in and publishes each one's server state.
func (s *Stage) Apply(ctx context.Context, batch []stage.Item[Msg]) error {
	keys := make([]string, 0, len(batch))
	vals := make([]schema.IncidentState, 0, len(batch))
	for _, it := range batch {
		m := it.Value
		s.state.Apply(m)
		at := m.Incident.UpdatedAt.UTC()
		if at.After(s.last) {
			s.last = at
		}
		keys = append(keys, m.Incident.Server)
		vals = append(vals, s.StateOf(m.Incident.Server, at))
	}
	if s.out == nil {
		return nil
	}
	if err := stage.EmitJSON(ctx, s.out, keys, vals); err != nil {
		return err
	}
	return s.out.Mark(ctx, s.last, s.state.Loaded())
}

// StateOf is the published state of a server at `at`: every incident's
// current row, and the incidents sub-score at `at`.
func (s *Stage) StateOf(server string, at time.Time) schema.IncidentState {
	h := s.state.History(server)
	st := schema.IncidentState{Server: server, AsOf: at, Incidents: make([]schema.Incident, 0, len(h))}
	in := trust.IncidentsInput{Checked: true}
	for _, e := range h {
		st.Incidents = append(st.Incidents, e.Record)
		in.Items = append(in.Items, TrustIncident(e.Record))
	}
	st.Score = trust.IncidentsScore(s.w, in, at)
	return st
}

// TrustIncident is the trust view of an incident.
func TrustIncident(r schema.Incident) trust.Incident {
	return trust.Incident{ID: r.ID, Server: r.Server, Date: r.Date, Class: r.Class, Severity: r.Severity, Status: r.Status, SourceURI: r.SourceURI}
}

// InputOf is the trust.IncidentsInput of a server from its published state
// (nil: no incident) and whether the feed is loaded.
func InputOf(st *schema.IncidentState, loaded bool) trust.IncidentsInput {
	in := trust.IncidentsInput{Checked: loaded}
	if st != nil {
		for _, r := range st.Incidents {
			in.Items = append(in.Items, TrustIncident(r))
		}
	}
	return in
}

// Checkpoint writes the state atomically.
func (s *Stage) Checkpoint(context.Context) error {
	if s.path == "" {
		return nil
	}
	if err := s.state.Save(s.path); err != nil {
		return fmt.Errorf("incidents checkpoint: %w", err)
	}
	return nil
}

// Config returns the stage's shape for bus/stage.
func (s *Stage) Config(metrics *stage.Metrics) stage.Config[Msg] {
	return stage.Config[Msg]{Name: Name, Group: Group, Topics: Topics, Brokers: s.brokers, Decode: Decode, Apply: s.Apply,
		Checkpoint: s.Checkpoint, MaxBatch: 500, MaxWait: 50 * time.Millisecond, Metrics: metrics, Log: s.log}
}

// WatchLoaded marks the state loaded the first time the group has no lag,
// and writes a marker saying so.
func (s *Stage) WatchLoaded(ctx context.Context) {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for !s.state.Loaded() {
		if s.tryLoaded(ctx) {
			s.log.Info("incident feed loaded")
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// tryLoaded marks the state loaded if the group has no lag. The marker goes
// out before the state says loaded, so whoever waits on Loaded (a test, a
// shutdown) finds it on the topic; a failed write is tried on the next tick.
func (s *Stage) tryLoaded(ctx context.Context) bool {
	lag, err := bus.Lag(ctx, s.brokers, Group, Topics)
	if err != nil || lag != 0 {
		return false
	}
	if s.out != nil {
		if err := s.out.Mark(ctx, s.last, true); err != nil {
			s.log.Warn("incidents: loaded marker", zap.Error(err))
			return false
		}
	}
	s.state.MarkLoaded()
	return true
}

// Publisher writes messages on the topic (admin API, file loader).
type Publisher struct {
	W stage.Writer
}

// Publish writes msgs, keyed by server, and returns once the broker has them.
func (p *Publisher) Publish(ctx context.Context, msgs ...Msg) error {
	if p == nil || p.W == nil {
		return errors.New("no bus to publish incidents on")
	}
	km := make([]kafka.Message, 0, len(msgs))
	for _, m := range msgs {
		b, err := schema.Marshal(m)
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
// and incidents table (the incidents sink keeps it; a retraction entered
// within milliseconds of its insert may not find it yet and is refused as
// unknown, and can simply be sent again).
type StoreLookup struct {
	Servers interface {
		GetServer(ctx context.Context, name string) (store.ServerRow, error)
	}
	Incidents store.IncidentStore
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
