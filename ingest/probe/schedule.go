package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/schema"
)

// Lister is what the scheduler reads: the registry's latest view, a page at
// a time (names after `after`; next is "" after the last page). The stores
// implement it (sql/store.LatestEntries).
type Lister interface {
	LatestEntries(ctx context.Context, after string, limit int) (entries []schema.Entry, next string, err error)
}

// Target is one remote to probe.
type Target struct {
	Server    string
	URL       string
	Transport string
	Headers   []schema.KeyValue
}

// Targets reads every remote of every active latest entry.
func Targets(ctx context.Context, l Lister) ([]Target, error) {
	var out []Target
	after := ""
	for {
		page, next, err := l.LatestEntries(ctx, after, 1000)
		if err != nil {
			return nil, fmt.Errorf("listing servers: %w", err)
		}
		for _, e := range page {
			if e.Status() == "deleted" {
				continue
			}
			for _, rem := range e.Server.Remotes {
				if rem.URL == "" || (rem.Type != TransportStreamableHTTP && rem.Type != TransportSSE) {
					continue
				}
				out = append(out, Target{Server: e.Server.Name, URL: rem.URL, Transport: rem.Type, Headers: rem.Headers})
			}
		}
		if next == "" {
			return out, nil
		}
		after = next
	}
}

// Offset is where in each interval a target's probe falls: a hash of server
// and URL, so probes spread evenly across the hour, the same target keeps its
// slot across restarts, and many entries on one host do not fire together.
func Offset(server, url string, interval time.Duration) time.Duration {
	h := fnv.New64a()
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(url))
	return time.Duration(h.Sum64() % uint64(interval))
}

// DueIn returns the slot times of t in [from, to): every instant
// cycleStart+Offset, with cycles aligned to the Unix epoch.
func DueIn(t Target, interval time.Duration, from, to time.Time) []time.Time {
	off := Offset(t.Server, t.URL, interval)
	var out []time.Time
	start := from.Truncate(interval)
	for c := start; c.Before(to); c = c.Add(interval) {
		at := c.Add(off)
		if !at.Before(from) && at.Before(to) {
			out = append(out, at)
		}
	}
	return out
}

// Scheduler publishes a probe request for every remote of every latest
// registry entry once per Interval, each at its own slot (see Offset).
// Requests carry their slot time as ObservedAt, so a check's ID is
// deterministic and a re-published request overwrites rather than
// duplicates. The last covered instant is checkpointed, so a restart neither
// repeats nor skips a window (windows older than one Interval are not
// back-filled: a stale probe says nothing about now).
type Scheduler struct {
	Lister    Lister
	W         *kafka.Writer
	Interval  time.Duration // default 1 h
	Tick      time.Duration // default 30 s
	StatePath string
	Log       *zap.Logger
	Now       func() time.Time
}

type schedState struct {
	Covered time.Time `json:"covered"`
}

// RunOnce publishes the requests due in (covered, now] and advances covered.
func (s *Scheduler) RunOnce(ctx context.Context) (int, error) {
	interval := s.Interval
	if interval <= 0 {
		interval = time.Hour
	}
	now := time.Now().UTC()
	if s.Now != nil {
		now = s.Now().UTC()
	}
	st := s.load()
	from := st.Covered
	if from.IsZero() || now.Sub(from) > interval {
		from = now.Add(-time.Second)
		if !st.Covered.IsZero() {
			from = now.Add(-interval)
		}
	}
	targets, err := Targets(ctx, s.Lister)
	if err != nil {
		return 0, err
	}
	var msgs []kafka.Message
	for _, t := range targets {
		for _, at := range DueIn(t, interval, from, now) {
			b, _ := json.Marshal(Request{Server: t.Server, URL: t.URL, Transport: t.Transport, RemoteHeaders: t.Headers, ObservedAt: at})
			msgs = append(msgs, kafka.Message{Topic: schema.TopicProbeRequests, Key: []byte(t.Server), Value: b})
		}
	}
	if len(msgs) > 0 {
		if err := s.W.WriteMessages(ctx, msgs...); err != nil {
			return 0, fmt.Errorf("publishing probe requests: %w", bus.SummarizeWriteError(err))
		}
	}
	st.Covered = now
	if err := s.save(st); err != nil {
		return len(msgs), err
	}
	return len(msgs), nil
}

// Run publishes due requests every Tick until ctx ends.
func (s *Scheduler) Run(ctx context.Context) error {
	tick := s.Tick
	if tick <= 0 {
		tick = 30 * time.Second
	}
	log := s.Log
	if log == nil {
		log = zap.NewNop()
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		n, err := s.RunOnce(ctx)
		if err != nil && ctx.Err() == nil {
			log.Warn("probe scheduling failed; retrying next tick", zap.Error(err))
		} else if n > 0 {
			log.Debug("probe requests published", zap.Int("n", n))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func (s *Scheduler) load() schedState {
	var st schedState
	if s.StatePath != "" {
		_, _ = checkpoint.Load(s.StatePath, &st) // a corrupt checkpoint only costs one window
	}
	return st
}

func (s *Scheduler) save(st schedState) error {
	if s.StatePath == "" {
		return nil
	}
	return checkpoint.Save(s.StatePath, st)
}

// Worker executes probe requests from probe.requests and publishes each
// Check on health.checks. Offsets are committed after the checks are on the
// bus; a redelivered request yields the same check ID, so sinks dedup it.
type Worker struct {
	Prober      *Prober
	Brokers     []string
	Group       string // default "forum-prober"
	Concurrency int    // probes in flight, default 32
	Log         *zap.Logger
}

// Run consumes until ctx ends.
func (w *Worker) Run(ctx context.Context) error {
	if w.Group == "" {
		w.Group = "forum-prober"
	}
	if w.Concurrency <= 0 {
		w.Concurrency = 32
	}
	log := w.Log
	if log == nil {
		log = zap.NewNop()
	}
	out := bus.NewWriter(w.Brokers, log)
	defer out.Close()
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: w.Brokers, Group: w.Group, Topics: []string{schema.TopicProbeRequests},
		MaxBatch: w.Concurrency * 2, MaxWait: 50 * time.Millisecond, Log: log},
		func(ctx context.Context, msgs []kafka.Message) error {
			results := make([]kafka.Message, len(msgs))
			sem := make(chan struct{}, w.Concurrency)
			done := make(chan struct{})
			pending := len(msgs)
			if pending == 0 {
				return nil
			}
			for i, m := range msgs {
				sem <- struct{}{}
				go func() {
					defer func() {
						<-sem
						done <- struct{}{}
					}()
					var req Request
					if err := json.Unmarshal(m.Value, &req); err != nil || req.Server == "" || req.URL == "" {
						if err == nil {
							err = errors.New("probe request without server or url")
						}
						d := schema.NewDLQ("prober", fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset), schema.ReasonBadMessage, err.Error(), string(m.Key), m.Value, time.Now())
						b, _ := json.Marshal(d)
						results[i] = kafka.Message{Topic: schema.TopicDLQ, Key: []byte(d.Key), Value: b}
						return
					}
					c := w.Prober.Probe(ctx, req)
					b, _ := json.Marshal(c)
					results[i] = kafka.Message{Topic: schema.TopicHealthChecks, Key: []byte(c.Server), Value: b}
				}()
			}
			for range msgs {
				<-done
			}
			if ctx.Err() != nil {
				return ctx.Err() // probes were cut short: do not commit them as done
			}
			if err := out.WriteMessages(ctx, results...); err != nil {
				return fmt.Errorf("publishing health checks: %w", bus.SummarizeWriteError(err))
			}
			return nil
		})
}
