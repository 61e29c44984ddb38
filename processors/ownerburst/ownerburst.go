// Package ownerburst is the owner-burst detector (SPEC §4 Owner burst,
// seed 002 change log 0.1.0-draft6-note): evidence only, no score impact.
//
// In: schema.DriftEvent values from registry.diffs (only new_server events
// are kept) and schema.SnapshotSummary values from registry.snapshots (the
// earliest applied snapshot is the baseline). Out: State.OwnerBurst(ns, now),
// the trust.OwnerBurst evidence of one namespace and whether it is flagged,
// and State.Flagged(now), every flagged namespace. The definitions
// themselves (7 windows of 24 h ending at now; recurring_burst: >= 10 new
// servers in >= 2 windows; first_window_burst: >= 20 in the current window)
// are trust.OwnerBurstOf's, with the numbers from the method weights.
//
// The baseline snapshot — the first listing a fresh pipeline ever applies —
// reports every existing server as new_server (seed §4.3: the first observed
// snapshot is the baseline, no drift history yet). Those events are not
// registrations in a 24 h window and are ignored here; otherwise the first
// crawl of a 20k-server registry would flag every large namespace.
//
// Event time only; bounded state: Prune(at) drops new_server events older
// than Retention before at, which cannot fall into any window of a query
// at or after at. Callers prune at points that do not depend on how input
// was batched (the stage: each released snapshot's time), so a query at a
// released snapshot sees every event it should.
package ownerburst

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"

	ckpt "github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// Retention is how long new_server events are kept behind the watermark:
// the 7 windows plus a week of tolerance for late delivery and for queries
// slightly in the past.
const Retention = 14 * 24 * time.Hour

// NamespaceBurst is one flagged namespace.
type NamespaceBurst struct {
	Namespace string `json:"namespace"`
	trust.OwnerBurst
}

type newServer struct {
	At       time.Time `json:"at"`
	Snapshot string    `json:"snapshot,omitempty"`
}

// State is the detector's state. It is safe for concurrent use.
type State struct {
	mu        sync.RWMutex
	w         *method.Weights
	watermark time.Time
	baseline  schema.SnapshotSummary          // earliest applied snapshot (ID "" until seen)
	ns        map[string]map[string]newServer // namespace -> event id -> event
}

// NewStateWith returns an empty state using w (tests).
func NewStateWith(w *method.Weights) *State {
	return &State{w: w, ns: map[string]map[string]newServer{}}
}

// Apply folds drift events in (only new_server counts). Idempotent by
// event ID, order-insensitive.
func (s *State) Apply(evs ...schema.DriftEvent) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range evs {
		if e.ID == "" {
			continue
		}
		if e.ObservedAt.After(s.watermark) {
			s.watermark = e.ObservedAt.UTC()
		}
		if e.Kind != schema.KindNewServer {
			continue
		}
		nsName := e.Namespace
		if nsName == "" {
			nsName = schema.Namespace(e.Server)
		}
		m := s.ns[nsName]
		if m == nil {
			m = map[string]newServer{}
			s.ns[nsName] = m
		}
		if _, ok := m[e.ID]; ok {
			continue
		}
		m[e.ID] = newServer{At: e.ObservedAt.UTC(), Snapshot: e.SnapshotID}
		n++
	}
	return n
}

// Prune drops new_server events older than Retention before at.
func (s *State) Prune(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pruneLocked(at)
}

// ApplySnapshot records an applied snapshot; the earliest one (by
// ObservedAt, then ID) is the baseline.
func (s *State) ApplySnapshot(sums ...schema.SnapshotSummary) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sum := range sums {
		if sum.ID == "" {
			continue
		}
		b := s.baseline
		if b.ID == "" || sum.ObservedAt.Before(b.ObservedAt) || (sum.ObservedAt.Equal(b.ObservedAt) && sum.ID < b.ID) {
			s.baseline = schema.SnapshotSummary{ID: sum.ID, ObservedAt: sum.ObservedAt.UTC(), Source: sum.Source}
		}
		if sum.ObservedAt.After(s.watermark) {
			s.watermark = sum.ObservedAt.UTC()
		}
	}
}

func (s *State) pruneLocked(at time.Time) {
	cutoff := at.Add(-Retention)
	for nsName, m := range s.ns {
		for id, e := range m {
			if e.At.Before(cutoff) {
				delete(m, id)
			}
		}
		if len(m) == 0 {
			delete(s.ns, nsName)
		}
	}
}

func (s *State) timesLocked(nsName string) []time.Time {
	m := s.ns[nsName]
	out := make([]time.Time, 0, len(m))
	for _, e := range m {
		if s.baseline.ID != "" && e.Snapshot == s.baseline.ID {
			continue
		}
		out = append(out, e.At)
	}
	return out
}

// OwnerBurst evaluates one namespace at now (event time). The bool is true
// when the namespace is flagged (the record field is set only then).
func (s *State) OwnerBurst(namespace string, now time.Time) (trust.OwnerBurst, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	b := trust.OwnerBurstOf(s.w, s.timesLocked(namespace), now.UTC())
	return b, b.Flagged()
}

// Windows returns, at now, every namespace with a new_server event (the
// baseline's excepted) in the evaluated windows — (now − windows·24 h, now]
// — with the event times the detector holds for it at or before now and
// its evaluation: what the stage publishes per namespace and day, sorted
// by namespace.
func (s *State) Windows(now time.Time) []schema.OwnerBurstWindow {
	s.mu.RLock()
	defer s.mu.RUnlock()
	now = now.UTC()
	span := time.Duration(float64(s.w.OwnerBurst.Windows) * s.w.OwnerBurst.WindowHours * float64(time.Hour))
	names := make([]string, 0, len(s.ns))
	for n := range s.ns {
		names = append(names, n)
	}
	sort.Strings(names)
	var out []schema.OwnerBurstWindow
	for _, n := range names {
		var times []time.Time
		active := false
		for _, t := range s.timesLocked(n) {
			if t.After(now) || t.Before(now.Add(-Retention)) {
				continue
			}
			times = append(times, t)
			if t.After(now.Add(-span)) {
				active = true
			}
		}
		if !active {
			continue
		}
		sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
		b := trust.OwnerBurstOf(s.w, times, now)
		out = append(out, schema.OwnerBurstWindow{Namespace: n, Day: now.Format(time.DateOnly), AsOf: now, NewServers: times, OwnerBurst: b, Flagged: b.Flagged()})
	}
	return out
}

// Flagged returns every namespace flagged at now, sorted by name.
func (s *State) Flagged(now time.Time) []NamespaceBurst {
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, 0, len(s.ns))
	for n := range s.ns {
		names = append(names, n)
	}
	sort.Strings(names)
	out := []NamespaceBurst{}
	for _, n := range names {
		if b := trust.OwnerBurstOf(s.w, s.timesLocked(n), now.UTC()); b.Flagged() {
			out = append(out, NamespaceBurst{Namespace: n, OwnerBurst: b})
		}
	}
	return out
}

// Watermark is the greatest event time seen.
func (s *State) Watermark() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.watermark
}

// Baseline returns the baseline snapshot's ID ("" when none seen yet).
func (s *State) Baseline() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.baseline.ID
}

type checkpoint struct {
	Version    int                             `json:"version"`
	Watermark  time.Time                       `json:"watermark,omitzero"`
	Baseline   schema.SnapshotSummary          `json:"baseline"`
	Namespaces map[string]map[string]newServer `json:"namespaces"`
}

// MarshalJSON returns the canonical form of the state.
func (s *State) MarshalJSON() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return json.Marshal(checkpoint{Version: 1, Watermark: s.watermark, Baseline: s.baseline, Namespaces: s.ns})
}

// UnmarshalJSON restores a state written by MarshalJSON.
func (s *State) UnmarshalJSON(b []byte) error {
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	if c.Version != 1 {
		return fmt.Errorf("owner-burst checkpoint version %d, want 1", c.Version)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watermark, s.baseline, s.ns = c.Watermark, c.Baseline, c.Namespaces
	if s.ns == nil {
		s.ns = map[string]map[string]newServer{}
	}
	return nil
}

// Load reads a checkpoint; a missing file is an empty state scored with w.
func Load(path string, w *method.Weights) (*State, error) {
	s := NewStateWith(w)
	if _, err := ckpt.Load(path, s); err != nil {
		return nil, fmt.Errorf("owner-burst state: %w", err)
	}
	return s, nil
}

// Save writes a checkpoint atomically (internal/checkpoint).
func (s *State) Save(path string) error { return ckpt.Save(path, s) }
