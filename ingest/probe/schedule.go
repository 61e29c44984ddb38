package probe

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/bits"
	"net/url"
	"slices"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
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

// Offsets returns where in each interval every target's probe falls
// (parallel to targets). A host's remotes are spread evenly over the
// interval, so that our probes never bunch on one host (SPEC §1.3, "be a
// polite client"): the k-th of a host's n remotes, in the order of a hash of
// (server, URL), falls at base + k·interval/n, where base is a hash of the
// host. Consecutive probes of one host are therefore interval/n apart
// (rounded down to the nanosecond), wrap-around included; a host with one
// remote sits at its base. Hosts are independent of each other, and the
// bases spread hosts across the interval.
//
// Stability: the same target set gives the same offsets whatever its order,
// so a restart keeps every slot. When a host gains or loses a remote, each
// of its other slots moves by at most one gap (interval/n, n the larger
// count), and other hosts' slots do not move: at worst a remote is probed
// twice, or once less, in the interval of the change.
func Offsets(targets []Target, interval time.Duration) []time.Duration {
	type member struct {
		i int
		h uint64
	}
	byHost := map[string][]member{}
	for i, t := range targets {
		k := targetHost(t.URL)
		byHost[k] = append(byHost[k], member{i, slotHash(t.Server, t.URL)})
	}
	out := make([]time.Duration, len(targets))
	for host, ms := range byHost {
		slices.SortFunc(ms, func(a, b member) int {
			if c := cmp.Compare(a.h, b.h); c != 0 {
				return c
			}
			ta, tb := targets[a.i], targets[b.i]
			return cmp.Or(cmp.Compare(ta.Server, tb.Server), cmp.Compare(ta.URL, tb.URL))
		})
		base := slotHash(host, "") % uint64(interval)
		n := uint64(len(ms))
		for k, m := range ms {
			// k·interval/n exactly: the product can pass 64 bits for long
			// intervals and big hosts.
			hi, lo := bits.Mul64(uint64(k), uint64(interval))
			step, _ := bits.Div64(hi, lo, n)
			out[m.i] = time.Duration((base + step) % uint64(interval))
		}
	}
	return out
}

// targetHost is the host a target's probes go to (see hostKey); a URL that
// does not parse (templates) is a host of its own.
func targetHost(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	return hostKey(u)
}

func slotHash(a, b string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(a))
	h.Write([]byte{0})
	h.Write([]byte(b))
	return h.Sum64()
}

// DueIn returns the slot times in [from, to) of a target whose offset is
// off: every instant cycleStart+off, with cycles aligned to the Unix epoch.
func DueIn(off, interval time.Duration, from, to time.Time) []time.Time {
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
// registry entry once per Interval, each at its own slot (see Offsets: a
// host's remotes are spread evenly over the interval). Requests are
// published every Tick, so a host's slots that fall within one tick go out
// together: at most ceil(n·Tick/Interval) of a host's n remotes (5 for 500
// remotes at 30 s / 1 h), and the Prober's per-host limit bounds how many of
// those run at once. (After downtime the whole catch-up window goes out in
// one pass; the per-host limit is then all that paces a host.)
// Requests carry their slot time as ObservedAt; the check keeps it as
// ScheduledAt and derives its ID from it, so a re-published request
// overwrites rather than duplicates, while the check's own ObservedAt is
// when the probe ran (up to a Tick, plus any per-host wait, after the slot). The last covered instant is checkpointed, so a restart neither
// repeats nor skips a window (windows older than one Interval are not
// back-filled: a stale probe says nothing about now).
type Scheduler struct {
	Lister    Lister
	W         Writer
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
	offs := Offsets(targets, interval)
	var msgs []kafka.Message
	for i, t := range targets {
		for _, at := range DueIn(offs[i], interval, from, now) {
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
//
// Politeness holds across the Worker's concurrency: every probe of a batch
// goes through the one Prober, whose per-host limit and back-off are shared
// by all of them (and by every batch), so Concurrency bounds probes in
// flight overall while PerHostLimit bounds them per host.
type Worker struct {
	Prober      *Prober
	Brokers     []string
	Group       string // default "forum-prober"
	Concurrency int    // probes in flight, default 32
	Log         *zap.Logger
	Metrics     *Metrics // nil: no metrics
	// StageMetrics count bad requests with every stage's dead letters
	// (forum_stage_dead_letters_total{stage="prober"}); nil: not counted.
	StageMetrics *stage.Metrics
}

func (w *Worker) setDefaults() {
	if w.Group == "" {
		w.Group = "forum-prober"
	}
	if w.Concurrency <= 0 {
		w.Concurrency = 32
	}
	if w.Log == nil {
		w.Log = zap.NewNop()
	}
}

// Run consumes until ctx ends. Probers share the group; when one joins or
// leaves, the batch each has in hand is finished and committed before the
// requests move (bus.ConsumeDraining), so no remote is probed twice for
// one request. A prober killed mid-batch commits nothing: the batch's next
// owner probes it (the check ids, derived from the slot, absorb a check
// that was published just before the kill).
func (w *Worker) Run(ctx context.Context) error {
	w.setDefaults()
	out := bus.NewWriter(w.Brokers, w.Log)
	defer out.Close()
	// A batch is two waves of Concurrency probes, each bounded by the
	// probe timeout; the margin covers per-host waits and the publish.
	drain := 2*w.Prober.opts.Timeout + 15*time.Second
	return bus.ConsumeDraining(ctx, bus.DrainConfig{Drain: drain, ConsumeConfig: bus.ConsumeConfig{Brokers: w.Brokers, Group: w.Group,
		Topics: []string{schema.TopicProbeRequests}, MaxBatch: w.Concurrency * 2, MaxWait: 50 * time.Millisecond, Log: w.Log}},
		func(ctx context.Context, msgs []kafka.Message) error {
			results := w.probeBatch(ctx, msgs)
			if ctx.Err() != nil {
				return ctx.Err() // probes were cut short: do not commit them as done
			}
			if len(results) == 0 {
				return nil
			}
			if err := out.WriteMessages(ctx, results...); err != nil {
				return fmt.Errorf("publishing health checks: %w", bus.SummarizeWriteError(err))
			}
			return nil
		})
}

// probeBatch probes a batch of requests, at most Concurrency at once, and
// returns the messages to publish: a check per request, or a dead letter
// for a request that does not decode.
func (w *Worker) probeBatch(ctx context.Context, msgs []kafka.Message) []kafka.Message {
	if len(msgs) == 0 {
		return nil
	}
	start := time.Now()
	results := make([]kafka.Message, len(msgs))
	checks := make([]*Check, len(msgs))
	sem := make(chan struct{}, w.Concurrency)
	var wg sync.WaitGroup
	for i, m := range msgs {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			req, err := schema.Decode[schema.ProbeRequest](m.Value)
			if err != nil {
				d, dm := stage.DeadLetter("prober", m, err)
				if w.StageMetrics != nil {
					w.StageMetrics.DeadLetters.WithLabelValues("prober", d.Reason).Inc()
				}
				results[i] = dm
				return
			}
			c := w.Prober.Probe(ctx, req)
			b, _ := json.Marshal(c)
			results[i] = kafka.Message{Topic: schema.TopicHealthChecks, Key: []byte(c.Server), Value: b}
			checks[i] = &c
		})
	}
	wg.Wait()
	if w.Metrics != nil && ctx.Err() == nil { // a cut-short batch is redelivered: count it then
		var done []Check
		for _, c := range checks {
			if c != nil {
				done = append(done, *c)
			}
		}
		w.Metrics.ObserveBatch(done, len(msgs)-len(done), time.Since(start), w.Prober.backoff.running(w.Prober.opts.Now()))
	}
	return results
}

// Writer writes messages: a *bus.Writer, which rides out broker outages.
type Writer interface {
	WriteMessages(ctx context.Context, msgs ...kafka.Message) error
}
