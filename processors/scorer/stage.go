package scorer

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Group is the stage's consumer group; Topics what it reads.
const Group = "forum-scorer"

// Topics the stage consumes: one publication per applied snapshot.
var Topics = []string{schema.TopicRegistrySnapshots}

// StageStore is what the stage needs of the store.
type StageStore interface {
	Reader
	Writer
	Snapshots(ctx context.Context) ([]schema.SnapshotSummary, error)
	Publications(ctx context.Context, limit int) ([]store.Publication, error)
	GetPublication(ctx context.Context, id string) (store.Publication, error)
	PublicationRecords(ctx context.Context, id string) ([]store.TrustRecord, error)
}

// Stage publishes: once per applied snapshot (event time = the snapshot's
// observed_at, so a replay gives the same records), and every Interval of
// wall-clock time in live mode (the first tick one Interval after start, so
// a replay that finishes within it publishes only event-time publications).
type Stage struct {
	Store     StageStore
	Sources   Sources
	Key       ed25519.PrivateKey
	Committer publish.Committer
	Brokers   []string
	Interval  time.Duration // 0: no timer
	// SnapshotWait bounds how long a snapshot summary waits for the history
	// sink to have stored that snapshot (default 2 min).
	SnapshotWait time.Duration
	// SourceWait bounds how long a publication waits for Watermarked
	// sources to reach its event time (default 10 s).
	SourceWait time.Duration
	Now        func() time.Time // wall clock for the timer (default time.Now)
	// Reviews looks up admin approvals of popular-server review holds
	// (store.ReviewStore): an approved hold is over, so the held record's
	// own band is the previous band of the next publication. Nil: holds
	// last their 24 h.
	Reviews ReviewLookup
	Log     *zap.Logger
	Metrics *Metrics // nil for none

	mu sync.Mutex // one publication at a time
}

func (s *Stage) log() *zap.Logger {
	if s.Log == nil {
		return zap.NewNop()
	}
	return s.Log
}

// Run consumes snapshot summaries and ticks the timer until ctx ends.
func (s *Stage) Run(ctx context.Context) error {
	if s.Interval > 0 {
		go s.tick(ctx)
	}
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: s.Brokers, Group: Group, Topics: Topics, MaxBatch: 100, Log: s.log()}, s.Handle)
}

func (s *Stage) tick(ctx context.Context) {
	t := time.NewTicker(s.Interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := time.Now
			if s.Now != nil {
				now = s.Now
			}
			if _, err := s.PublishAt(ctx, now().UTC().Truncate(time.Second), false); err != nil && ctx.Err() == nil {
				s.log().Error("hourly publication failed", zap.Error(err))
			}
		}
	}
}

// Handle publishes once per snapshot summary in the batch (a bus.Handler).
// A summary that does not decode is skipped: the history sink already sent
// it to the DLQ.
func (s *Stage) Handle(ctx context.Context, msgs []kafka.Message) error {
	for _, m := range msgs {
		var sn schema.SnapshotSummary
		if err := json.Unmarshal(m.Value, &sn); err != nil || sn.ID == "" {
			continue
		}
		if err := s.waitStored(ctx, sn.ID); err != nil {
			return err
		}
		presentOnly := sn.Mode == schema.ModeFull && !sn.Partial
		s.waitSources(ctx, sn.ObservedAt)
		if _, err := s.PublishAt(ctx, sn.ObservedAt, presentOnly); err != nil {
			return err
		}
	}
	return nil
}

// Metrics count what the stage published.
type Metrics struct {
	Publications prometheus.Counter
	Records      prometheus.Gauge
	Seconds      prometheus.Histogram
	Failures     prometheus.Counter
}

// NewMetrics registers the stage's metrics on reg (nil: unregistered).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Publications: prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_scorer_publications_total", Help: "Publications computed, sealed and stored."}),
		Records:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "forum_scorer_records", Help: "Records in the last publication."}),
		Seconds:      prometheus.NewHistogram(prometheus.HistogramOpts{Name: "forum_scorer_publication_seconds", Help: "Time to compute, seal and store one publication.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 12)}),
		Failures:     prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_scorer_failures_total", Help: "Publications that failed (retried)."}),
	}
	if reg != nil {
		reg.MustRegister(m.Publications, m.Records, m.Seconds, m.Failures)
	}
	return m
}

// Watermarked is implemented by sources whose state advances with event
// time (the drift and owner-burst processors).
type Watermarked interface {
	Watermark() time.Time
}

// waitSources gives event-time sources up to SourceWait to reach t, so a
// replay scores each snapshot with its own drift events. A source whose
// watermark only moves with events may never reach t (a snapshot without
// changes): after the wait the publication goes ahead, and says nothing
// false — trust ignores events after t anyway.
func (s *Stage) waitSources(ctx context.Context, t time.Time) {
	wait := s.SourceWait
	if wait <= 0 {
		wait = 10 * time.Second
	}
	deadline := time.Now().Add(wait)
	for _, src := range []any{s.Sources.Drift, s.Sources.Burst} {
		wm, ok := src.(Watermarked)
		if !ok {
			continue
		}
		for wm.Watermark().Before(t) && time.Now().Before(deadline) {
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
}

// waitStored waits until the history sink has stored the snapshot, so the
// latest view holds its entries.
func (s *Stage) waitStored(ctx context.Context, id string) error {
	wait := s.SnapshotWait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		snaps, err := s.Store.Snapshots(ctx)
		if err != nil {
			return fmt.Errorf("scorer: snapshots: %w", err)
		}
		for _, sn := range snaps {
			if sn.ID == id {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("scorer: snapshot %s not stored after %s", id, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// PublishAt computes, seals, stores and commits the publication at event
// time t. A publication that is already stored is not recomputed (its root
// is re-committed, which is idempotent): at-least-once delivery and
// restarts never give one id two roots. If a crash left a committed root
// without a stored publication and the recomputation differs (a source's
// state moved on), the publication gets the next id, PublicationID(t)+"-2",
// and so on: the commitment log is append-only and is never contradicted.
func (s *Stage) PublishAt(ctx context.Context, t time.Time, presentOnly bool) (*store.Publication, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t = store.Millis(t)
	base := PublicationID(t)
	for attempt := 1; attempt <= maxAttempts; attempt++ {
		id := base
		if attempt > 1 {
			id = fmt.Sprintf("%s-%d", base, attempt)
		}
		p, err := s.publishAs(ctx, id, t, presentOnly)
		if errors.Is(err, publish.ErrAlreadyCommits) {
			s.log().Warn("a different root is already committed under this id; publishing under the next id", zap.String("publication", id), zap.Error(err))
			continue
		}
		return p, err
	}
	return nil, fmt.Errorf("scorer: publication at %s: %d ids already committed with other roots", t.Format(time.RFC3339), maxAttempts)
}

const maxAttempts = 5

func (s *Stage) publishAs(ctx context.Context, id string, t time.Time, presentOnly bool) (*store.Publication, error) {
	if p, err := s.Store.GetPublication(ctx, id); err == nil {
		if s.Committer != nil {
			if err := s.Committer.Commit(ctx, publish.Commitment{PublicationID: p.ID, Root: p.MerkleRoot, MethodVersion: p.MethodVersion, Time: p.ComputedAt}); err != nil {
				return nil, fmt.Errorf("scorer: re-commit %s: %w", id, err)
			}
		}
		return &p, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, fmt.Errorf("scorer: publication %s: %w", id, err)
	}
	start := time.Now()
	inputs, err := Load(ctx, s.Store, LoadOptions{AsOf: t, PresentOnly: presentOnly})
	if err != nil {
		return nil, err
	}
	prev, err := s.previous(ctx, t)
	if err != nil {
		return nil, err
	}
	meta := Meta{PublicationID: id, ComputedAt: t}
	recs := Compute(inputs, s.Sources, meta, prev)
	sealed, err := Seal(recs, meta, s.Key)
	if err != nil {
		return nil, err
	}
	if err := Store(ctx, s.Store, s.Committer, sealed); err != nil {
		if s.Metrics != nil {
			s.Metrics.Failures.Inc()
		}
		return nil, err
	}
	if s.Metrics != nil {
		s.Metrics.Publications.Inc()
		s.Metrics.Records.Set(float64(len(recs)))
		s.Metrics.Seconds.Observe(time.Since(start).Seconds())
	}
	s.log().Info("published", zap.String("publication", id), zap.Int("records", len(recs)),
		zap.String("root", sealed.Row.MerkleRoot), zap.Duration("took", time.Since(start)))
	return &sealed.Row, nil
}

// previous returns, per server, the band the newest publication before t
// serves (a held record serves its previous band).
func (s *Stage) previous(ctx context.Context, t time.Time) (map[string]Previous, error) {
	pubs, err := s.Store.Publications(ctx, 50)
	if err != nil {
		return nil, fmt.Errorf("scorer: publications: %w", err)
	}
	var last *store.Publication
	for i := range pubs {
		if pubs[i].ComputedAt.Before(t) {
			last = &pubs[i]
			break
		}
	}
	if last == nil {
		return nil, nil
	}
	recs, err := s.Store.PublicationRecords(ctx, last.ID)
	if err != nil {
		return nil, fmt.Errorf("scorer: records of %s: %w", last.ID, err)
	}
	var approved func(server string) (bool, error)
	if s.Reviews != nil {
		approved = func(server string) (bool, error) { return Approved(ctx, s.Reviews, server, last.ID, t) }
	}
	return PreviousBandsWith(recs, last.ID, t, approved)
}

// ReviewLookup reads admin approvals of review holds (the read half of
// store.ReviewStore).
type ReviewLookup interface {
	ReviewApproval(ctx context.Context, server, publicationID string) (store.ReviewApproval, error)
}

// Approved reports whether the server's record in publication pubID was
// approved through the admin API at or before t (event time: a replay of an
// earlier publication does not see later approvals).
func Approved(ctx context.Context, r ReviewLookup, server, pubID string, t time.Time) (bool, error) {
	a, err := r.ReviewApproval(ctx, server, pubID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("scorer: review approval of %s in %s: %w", server, pubID, err)
	}
	return !a.ApprovedAt.After(t), nil
}

// PreviousBands reads the served band of each record: its band, or its
// review_pending.previous_band while the hold is still on at t.
func PreviousBands(recs []store.TrustRecord, pubID string, t time.Time) map[string]Previous {
	out, _ := PreviousBandsWith(recs, pubID, t, nil)
	return out
}

// PreviousBandsWith is PreviousBands where a hold still on at t is over when
// approved(server) says its record was approved (SPEC §4 Popular-server
// review): the served band is then the record's own. approved is asked only
// about records under a running hold; nil approves nothing.
func PreviousBandsWith(recs []store.TrustRecord, pubID string, t time.Time, approved func(server string) (bool, error)) (map[string]Previous, error) {
	out := make(map[string]Previous, len(recs))
	for _, r := range recs {
		p := Previous{Band: r.Band, PublicationID: pubID}
		var held struct {
			Review *ReviewPending `json:"review_pending"`
		}
		if json.Unmarshal([]byte(r.Record), &held) == nil && held.Review != nil && held.Review.Until.After(t) {
			ok := false
			if approved != nil {
				var err error
				if ok, err = approved(r.Server); err != nil {
					return nil, err
				}
			}
			if !ok {
				p = Previous{Band: held.Review.PreviousBand, PublicationID: held.Review.PreviousPublicationID}
			}
		}
		out[r.Server] = p
	}
	return out, nil
}
