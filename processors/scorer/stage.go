package scorer

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	ckpt "github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Name is the stage's name; Group its consumer group.
const (
	Name  = "scorer"
	Group = "forum-scorer"
)

// Topics the stage consumes: one publication per applied snapshot.
var Topics = []string{schema.TopicRegistrySnapshots}

// StageStore is what the stage reads of the store: the registry's latest
// view and health as of a publication's time, and whether a snapshot's
// records are all stored.
type StageStore interface {
	Reader
	SnapshotLoaded(ctx context.Context, snapshotID string) (bool, error)
}

// Output receives a sealed publication: its records first, then — after
// its root is committed — its header. In production the records and the
// header go on trust.records and trust.publications (BusOutput) and the
// results and publications sinks store them; StoreOutput writes the store
// directly (tests, tools without a bus).
type Output interface {
	Records(ctx context.Context, recs []schema.TrustRecordMsg) error
	Header(ctx context.Context, p schema.PublicationMsg) error
}

// Stage publishes: once per applied snapshot, as of the snapshot's time
// (event time, so a replay gives the same records), once the store holds
// the snapshot's records and the processors' conclusions have reached its
// time (Wait); and every Interval of wall-clock time in live mode (the
// first one Interval after start).
//
// What the other processors concluded comes in through Sources (in
// production: local tables of their output topics, TableSources); what the
// stage concludes leaves through Output. Its own state is the last
// publication's served bands (for the popular-server review hold), kept in
// the checkpoint at Path, written after each publication's output and
// before the snapshot's offset is committed.
type Stage struct {
	Store   StageStore
	Method  *method.Method
	Sources Sources
	// Wait blocks until the event-time sources have concluded through t
	// (TableSources.WaitFor); nil: no wait.
	Wait      func(ctx context.Context, t time.Time) error
	Out       Output
	Key       ed25519.PrivateKey
	Committer publish.Committer
	Path      string        // checkpoint; "" keeps it in memory
	Interval  time.Duration // wall-clock publications; 0: none
	// SnapshotWait bounds how long a snapshot waits for the store to hold
	// its records (default 2 min); the batch then fails and comes again.
	SnapshotWait time.Duration
	Now          func() time.Time // the wall clock (default time.Now)
	// Reviews looks up admin approvals of popular-server review holds
	// (store.ReviewStore): an approved hold is over, so the held record's
	// own band is the previous band of the next publication. Nil: holds
	// last their 24 h.
	Reviews ReviewLookup
	Log     *zap.Logger
	Metrics *Metrics // nil for none

	// ticker makes the Interval ticker (nil: time.NewTicker); tests step
	// it by hand beside a fake Now.
	ticker func(d time.Duration) (c <-chan time.Time, stop func())

	mu     sync.Mutex // one publication at a time
	loaded bool
	ck     scorerCheckpoint
}

// scorerCheckpoint is what the stage keeps between publications.
type scorerCheckpoint struct {
	Version int `json:"version"`
	// LastID is the last publication; Served what it serves per server
	// (its band, or the band it holds back while under review).
	LastID string            `json:"last_id"`
	LastAt time.Time         `json:"last_at,omitzero"`
	Served map[string]Served `json:"served"`
	// Before is what LastID was computed against, so a publication handled
	// again after a crash is recomputed against the same previous bands.
	Before map[string]Previous `json:"before"`
}

// Served is what a publication serves for one server.
type Served struct {
	Band string         `json:"band"`
	Hold *ReviewPending `json:"hold,omitempty"`
}

func (s *Stage) log() *zap.Logger {
	if s.Log == nil {
		return zap.NewNop()
	}
	return s.Log
}

func (s *Stage) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Decode reads a snapshot summary.
func Decode(m kafka.Message) (schema.SnapshotSummary, error) {
	return schema.Decode[schema.SnapshotSummary](m.Value)
}

// Config returns the stage's shape for bus/stage.
func (s *Stage) Config(brokers []string, metrics *stage.Metrics) stage.Config[schema.SnapshotSummary] {
	return stage.Config[schema.SnapshotSummary]{Name: Name, Group: Group, Topics: Topics, Brokers: brokers, Decode: Decode,
		Apply: s.Apply, MaxBatch: 100, MaxWait: 100 * time.Millisecond, Metrics: metrics, Log: s.log()}
}

// Run runs the stage and, with an Interval, the wall-clock publications.
func (s *Stage) Run(ctx context.Context, st *stage.Stage[schema.SnapshotSummary]) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s.Interval > 0 {
			s.tick(ctx)
		}
	}()
	err := st.Run(ctx)
	<-done
	return err
}

func (s *Stage) tick(ctx context.Context) {
	newTicker := s.ticker
	if newTicker == nil {
		newTicker = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	c, stop := newTicker(s.Interval)
	defer stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c:
			// As of the tick itself (PublishAt keeps milliseconds, the
			// store's precision): cut to the second, a check run in the
			// fraction of a second before the tick would wait one more
			// interval. The id still names the second; a second
			// publication within one (intervals under a second) takes
			// the next id (PublishAt).
			if _, err := s.PublishAt(ctx, s.now(), false); err != nil && ctx.Err() == nil {
				s.log().Error("wall-clock publication failed; the next tick tries again", zap.Error(err))
			}
		}
	}
}

// Apply publishes once per snapshot summary in the batch.
func (s *Stage) Apply(ctx context.Context, batch []stage.Item[schema.SnapshotSummary]) error {
	for _, it := range batch {
		sn := it.Value
		if err := s.waitStored(ctx, sn.ID); err != nil {
			return err
		}
		if s.Wait != nil {
			if err := s.Wait(ctx, sn.ObservedAt); err != nil {
				return fmt.Errorf("scorer: the processors have not concluded snapshot %s: %w", sn.ID, err)
			}
		}
		presentOnly := sn.Mode == schema.ModeFull && !sn.Partial
		if _, err := s.PublishAt(ctx, sn.ObservedAt, presentOnly); err != nil {
			return err
		}
	}
	return nil
}

// waitStored waits until the history sink has stored every record of the
// snapshot, so the latest view holds them.
func (s *Stage) waitStored(ctx context.Context, id string) error {
	wait := s.SnapshotWait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := s.Store.SnapshotLoaded(ctx, id)
		if err != nil {
			return fmt.Errorf("scorer: is snapshot %s stored: %w", id, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("scorer: snapshot %s not stored after %s", id, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
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
		Publications: prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_scorer_publications_total", Help: "Publications computed, sealed and published."}),
		Records:      prometheus.NewGauge(prometheus.GaugeOpts{Name: "forum_scorer_records", Help: "Records in the last publication."}),
		Seconds:      prometheus.NewHistogram(prometheus.HistogramOpts{Name: "forum_scorer_publication_seconds", Help: "Time to compute, seal and publish one publication.", Buckets: prometheus.ExponentialBuckets(0.1, 2, 12)}),
		Failures:     prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_scorer_failures_total", Help: "Publications that failed (retried)."}),
	}
	if reg != nil {
		reg.MustRegister(m.Publications, m.Records, m.Seconds, m.Failures)
	}
	return m
}

// PublishAt computes, seals, outputs and commits the publication at event
// time t. If a crash left a committed root under the id and the
// recomputation differs (a source's state moved on), the publication gets
// the next id, PublicationID(t)+"-2", and so on: the commitment log is
// append-only and is never contradicted.
func (s *Stage) PublishAt(ctx context.Context, t time.Time, presentOnly bool) (*store.Publication, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadCheckpoint(); err != nil {
		return nil, err
	}
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
	start := time.Now()
	inputs, err := Load(ctx, s.Store, LoadOptions{AsOf: t, PresentOnly: presentOnly})
	if err != nil {
		return nil, err
	}
	prev, err := s.previous(ctx, id, t)
	if err != nil {
		return nil, err
	}
	m := s.Method
	if m == nil {
		m = method.Embedded()
	}
	meta := Meta{PublicationID: id, ComputedAt: t, Weights: m.Weights}
	recs := Compute(inputs, s.Sources, meta, prev)
	sealed, err := Seal(recs, meta, s.Key)
	if err != nil {
		return nil, err
	}
	if err := Publish(ctx, s.Out, s.Committer, sealed); err != nil {
		if s.Metrics != nil {
			s.Metrics.Failures.Inc()
		}
		return nil, err
	}
	if err := s.remember(id, t, recs, prev); err != nil {
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

// previous returns, per server, the band the last publication serves at t:
// its own band, or — while its review hold is on at t and not approved by
// then — the band it holds back. Publication id handled again (a crash
// between its output and its commit) is recomputed against what it was
// computed against the first time.
func (s *Stage) previous(ctx context.Context, id string, t time.Time) (map[string]Previous, error) {
	if s.ck.LastID == id && s.ck.Before != nil {
		return s.ck.Before, nil
	}
	if s.ck.LastID == "" || !s.ck.LastAt.Before(t) {
		return nil, nil
	}
	out := make(map[string]Previous, len(s.ck.Served))
	for server, sv := range s.ck.Served {
		p := Previous{Band: sv.Band, PublicationID: s.ck.LastID}
		if h := sv.Hold; h != nil && h.Until.After(t) {
			ok := false
			if s.Reviews != nil {
				var err error
				if ok, err = Approved(ctx, s.Reviews, server, s.ck.LastID, t); err != nil {
					return nil, err
				}
			}
			if !ok {
				p = Previous{Band: h.PreviousBand, PublicationID: h.PreviousPublicationID}
			}
		}
		out[server] = p
	}
	return out, nil
}

// remember keeps what publication id serves, and checkpoints it.
func (s *Stage) remember(id string, t time.Time, recs []Record, prev map[string]Previous) error {
	served := make(map[string]Served, len(recs))
	for i := range recs {
		served[recs[i].Server] = Served{Band: recs[i].Band, Hold: recs[i].ReviewPending}
	}
	if prev == nil {
		prev = map[string]Previous{}
	}
	s.ck = scorerCheckpoint{Version: 1, LastID: id, LastAt: t, Served: served, Before: prev}
	if s.Path == "" {
		return nil
	}
	if err := ckpt.Save(s.Path, s.ck); err != nil {
		return fmt.Errorf("scorer checkpoint: %w", err)
	}
	return nil
}

func (s *Stage) loadCheckpoint() error {
	if s.loaded {
		return nil
	}
	s.loaded = true
	if s.Path == "" {
		return nil
	}
	if _, err := ckpt.Load(s.Path, &s.ck); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("scorer checkpoint: %w", err)
	}
	return nil
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

// BusOutput writes a publication on the bus: its records on trust.records
// (keyed by server), its header on trust.publications.
type BusOutput struct {
	RecordsOut *stage.Emitter
	HeadersOut *stage.Emitter
}

// Records implements Output.
func (b BusOutput) Records(ctx context.Context, recs []schema.TrustRecordMsg) error {
	keys := make([]string, len(recs))
	for i := range recs {
		keys[i] = recs[i].Server
	}
	return stage.EmitJSON(ctx, b.RecordsOut, keys, recs)
}

// Header implements Output.
func (b BusOutput) Header(ctx context.Context, p schema.PublicationMsg) error {
	return stage.EmitJSON(ctx, b.HeadersOut, []string{p.ID}, []schema.PublicationMsg{p})
}

// StoreOutput writes a publication straight into the store: the records,
// then the header.
type StoreOutput struct{ W Writer }

// Records implements Output.
func (o StoreOutput) Records(ctx context.Context, recs []schema.TrustRecordMsg) error {
	rows := make([]store.TrustRecord, len(recs))
	for i := range recs {
		r := &recs[i]
		rows[i] = store.TrustRecord{Server: r.Server, PublicationID: r.PublicationID, ComputedAt: r.ComputedAt, Score: r.Score, Band: r.Band,
			ToolfinderScore: r.ToolfinderScore, ContentSHA256: r.ContentSHA256, LeafHash: r.LeafHash, Record: r.Record}
	}
	for i := 0; i < len(rows); i += 2000 {
		if err := o.W.InsertTrustRecords(ctx, rows[i:min(i+2000, len(rows))]); err != nil {
			return err
		}
	}
	return nil
}

// Header implements Output.
func (o StoreOutput) Header(ctx context.Context, p schema.PublicationMsg) error {
	return o.W.InsertPublication(ctx, store.Publication{ID: p.ID, MethodVersion: p.MethodVersion, WeightsSHA256: p.WeightsSHA256,
		RecordCount: p.RecordCount, MerkleRoot: p.MerkleRoot, Signature: p.Signature, KeyID: p.KeyID, ComputedAt: p.ComputedAt})
}

// Publish outputs a sealed publication: the records, then the commitment of
// its root, then the header. The header comes last so a reader never sees
// half a publication, and after the commitment so a visible publication is
// always committed. If the root differs from a root already committed under
// the id, Commit fails with publish.ErrAlreadyCommits and the caller
// publishes under a new id (Stage.PublishAt) rather than contradict the log.
func Publish(ctx context.Context, out Output, c publish.Committer, s *Sealed) error {
	msgs := make([]schema.TrustRecordMsg, len(s.Records))
	for i, r := range s.Records {
		msgs[i] = schema.TrustRecordMsg{Server: r.Server, PublicationID: r.PublicationID, ComputedAt: r.ComputedAt, Score: r.Score, Band: r.Band,
			ToolfinderScore: r.ToolfinderScore, ContentSHA256: r.ContentSHA256, LeafHash: hex.EncodeToString(s.Pub.Leaves[i]), Record: r.Record}
	}
	if out != nil {
		if err := out.Records(ctx, msgs); err != nil {
			return fmt.Errorf("scorer: records of %s: %w", s.Row.ID, err)
		}
	}
	if c != nil {
		if err := c.Commit(ctx, publish.Commitment{PublicationID: s.Row.ID, Root: s.Row.MerkleRoot,
			MethodVersion: s.Row.MethodVersion, Time: s.Row.ComputedAt}); err != nil {
			return fmt.Errorf("scorer: commit root of %s: %w", s.Row.ID, err)
		}
	}
	if out != nil {
		h := schema.PublicationMsg{ID: s.Row.ID, MethodVersion: s.Row.MethodVersion, WeightsSHA256: s.Row.WeightsSHA256, RecordCount: s.Row.RecordCount,
			MerkleRoot: s.Row.MerkleRoot, Signature: s.Row.Signature, KeyID: s.Row.KeyID, ComputedAt: s.Row.ComputedAt}
		if err := out.Header(ctx, h); err != nil {
			return fmt.Errorf("scorer: publication %s: %w", s.Row.ID, err)
		}
	}
	return nil
}
