package provenance

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/ingest/github"
	ckpt "github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

// Name is the stage's name; Group its consumer group.
const (
	Name  = "provenance"
	Group = "forum-provenance"
)

// Topic is the topic of GitHub observations.
const Topic = schema.TopicProvenanceObs

// Topics the processor reads: observations, and the snapshot summaries
// after which it re-reads the registry's listings.
var Topics = []string{Topic, schema.TopicRegistrySnapshots}

// ListingSource reads the registry's listings once a snapshot is stored.
type ListingSource interface {
	// SnapshotLoaded reports whether every record of a snapshot is stored.
	SnapshotLoaded(ctx context.Context, snapshotID string) (bool, error)
	// Listings returns every active server's repository and first listing
	// as of a snapshot.
	Listings(ctx context.Context, sn schema.SnapshotSummary) ([]Listing, error)
}

// Stage is the provenance processor on the bus (bus/stage's shape):
// GitHub observations and snapshot summaries in. It concludes — evaluates
// every listed server's flags and provenance sub-score with the pinned
// calibration, the live base rates and the coverage gate — at each
// snapshot, in order (as of the snapshot's time, on the listings as of
// that time, once the store holds the snapshot), and, when observations
// arrived since, at most every EvaluateEvery of wall time (as of the
// newest observation). Each
// conclusion publishes the servers whose signal changed (flags, sub-score,
// the observation behind it; not ages, which move with time) on
// provenance.signals, the rates on provenance.rates, then a marker.
// State, the last conclusions' fingerprints and the watermark are
// checkpointed after each batch, before its commit.
type Stage struct {
	w        *method.Weights
	path     string
	state    *State
	listings ListingSource
	signals  *stage.Emitter
	rates    *stage.Emitter
	log      *zap.Logger
	// EvaluateEvery bounds how often observations alone trigger a
	// conclusion (a crawl delivers thousands an hour); default 30 s.
	EvaluateEvery time.Duration
	// SnapshotWait bounds the wait for the store to hold a snapshot's
	// records before the batch is failed and comes again; default 2 min.
	SnapshotWait time.Duration

	mu        sync.Mutex
	printed   map[string]string // server -> fingerprint of the last published signal
	watermark time.Time         // the last conclusion's time
	newest    time.Time         // the newest observation stamp applied
	dirty     bool              // observations applied since the last conclusion
	lastEval  time.Time         // wall clock of the last conclusion
}

// NewStage loads the checkpoint at path ("" keeps it in memory).
func NewStage(w *method.Weights, path string, listings ListingSource, signals, rates *stage.Emitter, log *zap.Logger) (*Stage, error) {
	if log == nil {
		log = zap.NewNop()
	}
	s := &Stage{w: w, path: path, state: NewState(), listings: listings, signals: signals, rates: rates, log: log.Named(Name), printed: map[string]string{}}
	if err := s.load(); err != nil {
		return nil, err
	}
	return s, nil
}

// State is the processor's state.
func (s *Stage) State() *State { return s.state }

type input struct {
	obs     *github.Observation
	summary *schema.SnapshotSummary
}

// Decode reads a provenance.obs or registry.snapshots message.
func Decode(m kafka.Message) (input, error) {
	if m.Topic == schema.TopicRegistrySnapshots {
		v, err := schema.Decode[schema.SnapshotSummary](m.Value)
		return input{summary: &v}, err
	}
	v, err := schema.DecodeGitHubObservation(m.Value)
	return input{obs: &v}, err
}

// Apply folds a batch in and concludes when it is time.
func (s *Stage) Apply(ctx context.Context, batch []stage.Item[input]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, it := range batch {
		switch v := it.Value; {
		case v.obs != nil:
			if s.state.Apply(*v.obs) > 0 {
				s.dirty = true
				if st := stamp(*v.obs); st.After(s.newest) {
					s.newest = st
				}
			}
		case v.summary != nil:
			// Every snapshot is concluded, in order, on the listings as of
			// its own time: the outputs do not depend on batching.
			if !v.summary.ObservedAt.After(s.watermark) {
				continue // a redelivery
			}
			if err := s.reloadListings(ctx, *v.summary); err != nil {
				return err
			}
			if err := s.concludeLocked(ctx, v.summary.ObservedAt); err != nil {
				return err
			}
		}
	}
	if s.dirty && time.Since(s.lastEval) >= s.every() {
		return s.concludeLocked(ctx, maxTime(s.newest, s.watermark))
	}
	return nil
}

func (s *Stage) every() time.Duration {
	if s.EvaluateEvery <= 0 {
		return 30 * time.Second
	}
	return s.EvaluateEvery
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// reloadListings waits for the store to hold the snapshot, then reads the
// listings.
func (s *Stage) reloadListings(ctx context.Context, sn schema.SnapshotSummary) error {
	if s.listings == nil {
		return nil
	}
	wait := s.SnapshotWait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	deadline := time.Now().Add(wait)
	for {
		ok, err := s.listings.SnapshotLoaded(ctx, sn.ID)
		if err != nil {
			return fmt.Errorf("provenance: is snapshot %s stored: %w", sn.ID, err)
		}
		if ok {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("provenance: snapshot %s not stored after %s", sn.ID, wait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	ls, err := s.listings.Listings(ctx, sn)
	if err != nil {
		return fmt.Errorf("provenance: listings: %w", err)
	}
	s.state.SetListings(ls)
	return nil
}

// Tick concludes when observations are waiting and EvaluateEvery has
// passed (the stage calls it between batches; Run also ticks, so the last
// observations of a crawl are concluded without more input).
func (s *Stage) Tick(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.dirty || time.Since(s.lastEval) < s.every() {
		return nil
	}
	if err := s.concludeLocked(ctx, maxTime(s.newest, s.watermark)); err != nil {
		return err
	}
	return s.checkpointLocked()
}

// concludeLocked evaluates everything at `at` and publishes what changed.
func (s *Stage) concludeLocked(ctx context.Context, at time.Time) error {
	at = at.UTC()
	sn := s.state.Snapshot(s.w, at)
	var keys []string
	var vals []schema.ProvenanceSignal
	next := make(map[string]string, len(sn.Servers))
	for _, sv := range sn.Servers {
		sv.AsOf = at
		if key, _, _, ok := github.RepoKey(sv.RepoURL); ok {
			sv.Repo = key
		}
		fp := fingerprint(sv)
		next[sv.Server] = fp
		if s.printed[sv.Server] == fp {
			continue
		}
		keys = append(keys, sv.Server)
		vals = append(vals, sv)
	}
	// Servers no longer listed get a tombstone: the table forgets them.
	var gone []string
	for name := range s.printed {
		if _, ok := next[name]; !ok {
			gone = append(gone, name)
		}
	}
	sort.Strings(gone)
	if s.signals != nil {
		if err := stage.EmitJSON(ctx, s.signals, keys, vals); err != nil {
			return err
		}
		if len(gone) > 0 {
			tomb := make([]kafka.Message, len(gone))
			for i, g := range gone {
				tomb[i] = kafka.Message{Key: []byte(g)}
			}
			if err := s.signals.Emit(ctx, tomb...); err != nil {
				return err
			}
		}
		if err := s.signals.Mark(ctx, at, true); err != nil {
			return err
		}
	}
	if s.rates != nil {
		r := schema.ProvenanceRates{AsOf: at, MethodVersion: s.w.MethodVersion, WeightsSHA256: s.w.SHA256(), Gate: sn.Gate, Rates: sn.Rates}
		if err := stage.EmitJSON(ctx, s.rates, []string{schema.ProvenanceRatesKey}, []schema.ProvenanceRates{r}); err != nil {
			return err
		}
		if err := s.rates.Mark(ctx, at, true); err != nil {
			return err
		}
	}
	s.printed, s.watermark, s.dirty, s.lastEval = next, at, false, time.Now()
	s.log.Debug("provenance concluded", zap.Time("at", at), zap.Int("changed", len(keys)), zap.Int("gone", len(gone)))
	return nil
}

// fingerprint identifies what a signal concludes: the observation behind
// it, the flags that are facts (not the ages, which move every day), the
// sub-score and its signals.
func fingerprint(sv schema.ProvenanceSignal) string {
	f := sv.Flags
	f.OwnerAgeDays, f.LagDays, f.RepoAgeDays = 0, 0, 0
	type sig struct {
		ID   string
		Open bool
	}
	var sigs []sig
	for _, x := range sv.Provenance.Signals {
		sigs = append(sigs, sig{x.ID, x.Open})
	}
	v := struct {
		Obs      string
		Stamp    time.Time
		Repo     string
		Listed   time.Time
		Flags    schema.ProvenanceFlags
		Value    *float64
		Reason   string
		Signals  []sig
		Evidence int
	}{Repo: sv.RepoURL, Listed: sv.ListedAt, Flags: f, Value: sv.Provenance.Value, Reason: sv.Provenance.Reason, Signals: sigs, Evidence: len(sv.Provenance.Evidence)}
	if sv.Observation != nil {
		v.Obs, v.Stamp = sv.Observation.ID, stamp(*sv.Observation)
	}
	b, _ := json.Marshal(v)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}

type stageCheckpoint struct {
	Version      int                  `json:"version"`
	Observations []github.Observation `json:"observations"`
	Listings     []Listing            `json:"listings"`
	Printed      map[string]string    `json:"printed"`
	Watermark    time.Time            `json:"watermark,omitzero"`
	Newest       time.Time            `json:"newest,omitzero"`
	Dirty        bool                 `json:"dirty"`
}

// Checkpoint writes the stage's file atomically.
func (s *Stage) Checkpoint(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.checkpointLocked()
}

func (s *Stage) checkpointLocked() error {
	if s.path == "" {
		return nil
	}
	obs, ls := s.state.contents()
	if err := ckpt.Save(s.path, stageCheckpoint{Version: 2, Observations: obs, Listings: ls, Printed: s.printed,
		Watermark: s.watermark, Newest: s.newest, Dirty: s.dirty}); err != nil {
		return fmt.Errorf("provenance checkpoint: %w", err)
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
		return fmt.Errorf("provenance checkpoint: %w", err)
	}
	var c stageCheckpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return fmt.Errorf("provenance checkpoint %s: %w", s.path, err)
	}
	s.state.Apply(c.Observations...)
	s.state.SetListings(c.Listings)
	if c.Printed != nil {
		s.printed = c.Printed
	}
	s.watermark, s.newest, s.dirty = c.Watermark, c.Newest, c.Dirty || c.Version < 2
	return nil
}

// The stage's batch: up to MaxBatch messages or what arrived within
// MaxWait. Its checkpoint writes the whole state (every server's
// observations and listings, tens of MB at 50k servers) once per batch;
// with 2,000 messages or 200 ms the checkpoints of a day's 43k GitHub
// observations were a fifth of the embedded pipeline's CPU
// (bench/README.md). GitHub observations come once a day per repository,
// so waiting a second to fill a batch delays nothing anyone reads.
const (
	MaxBatch = 10_000
	MaxWait  = time.Second
)

// Config returns the stage's shape for bus/stage.
func (s *Stage) Config(brokers []string, metrics *stage.Metrics) stage.Config[input] {
	return stage.Config[input]{Name: Name, Group: Group, Topics: Topics, Brokers: brokers, Decode: Decode, Apply: s.Apply,
		Checkpoint: s.Checkpoint, MaxBatch: MaxBatch, MaxWait: MaxWait, Metrics: metrics, Log: s.log}
}

// Run runs the stage and its tick until ctx ends.
func (s *Stage) Run(ctx context.Context, st *stage.Stage[input]) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(s.every())
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.Tick(ctx); err != nil && ctx.Err() == nil {
					s.log.Warn("provenance: concluding on the tick failed; the next batch or tick retries", zap.Error(err))
				}
			}
		}
	}()
	err := st.Run(ctx)
	<-done
	return err
}
