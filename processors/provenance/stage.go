package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/schema"
)

// Group is the provenance processor's consumer group.
const Group = "forum-provenance"

// Topic is the topic the processor reads (defined by the crawler).
const Topic = github.Topic

// Topics the processor reads.
var Topics = []string{Topic}

// StageName names the stage in dead letters.
const StageName = "provenance"

// Writer is where dead letters go (a *kafka.Writer on the bus).
type Writer interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}

// Stage runs a State against the bus: provenance.obs in, the checkpoint
// file out (observations and the last listings), written after each batch
// before its offsets are committed, so a restart loses nothing; Apply is
// idempotent, so a redelivered tail changes nothing. Listings come from
// the store through Listings, refreshed every ListingsEvery.
//
// Bad input never stops the stream: a message that does not decode or
// fails github.DecodeObservation's validation goes to the dlq topic (built
// with schema.NewDLQ: deterministic id, so a redelivery is stored once)
// with its reason code, is counted, and the batch goes on. The dead
// letters are written before the batch returns, so its offsets are
// committed only once they are on the bus.
type Stage struct {
	Brokers        []string
	CheckpointPath string
	State          *State
	Listings       func(ctx context.Context) ([]Listing, error)
	ListingsEvery  time.Duration
	Log            *zap.Logger
	// DLQ receives dead letters; Run opens one on Brokers when nil. With
	// neither, bad messages are only logged and counted.
	DLQ     Writer
	Metrics *Metrics

	saveMu sync.Mutex
}

// Metrics count what the stage did with its input.
type Metrics struct {
	Applied     prometheus.Counter
	DeadLetters *prometheus.CounterVec // by reason
}

// NewMetrics registers the stage's metrics on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Applied: prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_provenance_observations_applied_total",
			Help: "GitHub observations that changed the provenance state."}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_provenance_dead_letters_total",
			Help: "provenance.obs messages sent to the dlq topic, by reason code."}, []string{"reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.Applied, m.DeadLetters)
	}
	return m
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
	return &Stage{Brokers: brokers, CheckpointPath: path, State: st, Log: log.Named("provenance")}, nil
}

// Handle applies one batch and checkpoints; it is a bus.Handler. Bad
// messages go to the DLQ (see Stage); an error writing them fails the
// batch, which is then redelivered whole (Apply and the DLQ ids make that
// harmless).
func (s *Stage) Handle(ctx context.Context, msgs []kafka.Message) error {
	obs := make([]github.Observation, 0, len(msgs))
	var dead []kafka.Message
	for _, m := range msgs {
		o, err := github.DecodeObservation(m.Value)
		if err == nil {
			obs = append(obs, o)
			continue
		}
		reason := schema.ReasonOf(err)
		src := fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset)
		at := m.Time
		if at.IsZero() {
			at = time.Now()
		}
		d := schema.NewDLQ(StageName, src, reason, err.Error(), string(m.Key), m.Value, at)
		s.Log.Warn("bad GitHub observation to the dlq", zap.String("at", src), zap.String("reason", reason), zap.Error(err))
		if s.Metrics != nil {
			s.Metrics.DeadLetters.WithLabelValues(reason).Inc()
		}
		b, err := json.Marshal(d)
		if err != nil {
			return fmt.Errorf("provenance: encoding a dead letter: %w", err)
		}
		dead = append(dead, kafka.Message{Topic: schema.TopicDLQ, Key: []byte(d.Key), Value: b, Time: at})
	}
	if len(dead) > 0 && s.DLQ != nil {
		if err := s.DLQ.WriteMessages(ctx, dead...); err != nil {
			return fmt.Errorf("provenance: writing %d dead letters: %w", len(dead), bus.SummarizeWriteError(err))
		}
	}
	n := s.State.Apply(obs...)
	if s.Metrics != nil {
		s.Metrics.Applied.Add(float64(n))
	}
	if n > 0 {
		if err := s.save(); err != nil {
			return err
		}
	}
	return nil
}

func (s *Stage) save() error {
	if s.CheckpointPath == "" {
		return nil
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if err := s.State.Save(s.CheckpointPath); err != nil {
		return fmt.Errorf("provenance checkpoint: %w", err)
	}
	return nil
}

// Run consumes until ctx ends, refreshing the listings alongside.
func (s *Stage) Run(ctx context.Context) error {
	if s.Listings != nil {
		go func() {
			every := s.ListingsEvery
			if every <= 0 {
				every = 10 * time.Minute
			}
			for {
				if ls, err := s.Listings(ctx); err != nil {
					s.Log.Warn("provenance: listings", zap.Error(err))
				} else {
					s.State.SetListings(ls)
					if err := s.save(); err != nil {
						s.Log.Warn("provenance checkpoint", zap.Error(err))
					}
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(every):
				}
			}
		}()
	}
	if s.DLQ == nil && len(s.Brokers) > 0 {
		w := bus.NewWriter(s.Brokers, s.Log)
		s.DLQ = w
		defer func() {
			w.Close()
			s.DLQ = nil
		}()
	}
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: s.Brokers, Group: Group, Topics: Topics, MaxBatch: 2000, MaxWait: 200 * time.Millisecond, Log: s.Log}, s.Handle)
}

// Publisher writes observations to the bus, keyed by repo.
type Publisher struct{ W *kafka.Writer }

// Publish sends one observation.
func (p Publisher) Publish(ctx context.Context, o github.Observation) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	return p.W.WriteMessages(ctx, kafka.Message{Topic: Topic, Key: []byte(o.Repo), Value: b, Time: o.ObservedAt})
}
