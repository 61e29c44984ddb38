package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/github"
)

// Group is the provenance processor's consumer group.
const Group = "forum-provenance"

// Topic is the topic the processor reads (defined by the crawler).
const Topic = github.Topic

// Topics the processor reads.
var Topics = []string{Topic}

// Stage runs a State against the bus: provenance.obs in, the checkpoint
// file out (observations and the last listings), written after each batch
// before its offsets are committed, so a restart loses nothing; Apply is
// idempotent, so a redelivered tail changes nothing. Listings come from
// the store through Listings, refreshed every ListingsEvery.
type Stage struct {
	Brokers        []string
	CheckpointPath string
	State          *State
	Listings       func(ctx context.Context) ([]Listing, error)
	ListingsEvery  time.Duration
	Log            *zap.Logger

	saveMu sync.Mutex
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

// Handle applies one batch and checkpoints; it is a bus.Handler. A message
// that does not decode is logged and skipped.
func (s *Stage) Handle(_ context.Context, msgs []kafka.Message) error {
	obs := make([]github.Observation, 0, len(msgs))
	for _, m := range msgs {
		var o github.Observation
		if err := json.Unmarshal(m.Value, &o); err != nil || o.Repo == "" {
			s.Log.Warn("skipping undecodable observation", zap.String("at", fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset)), zap.Error(err))
			continue
		}
		obs = append(obs, o)
	}
	n := s.State.Apply(obs...)
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
