// Package drift is the drift processor: the per-server, event-time state the
// drift sub-score (SPEC §4 Drift) is computed from.
//
// In: schema.DriftEvent values from the registry.diffs topic (keyed by
// server), in any order within a partition's tolerance, possibly more than
// once (at-least-once delivery). Out: State.DriftInput(server), the
// trust.DriftInput the scorer hands to trust.Compute — the server's
// drift_observed_since, its retained drift events and its namespace's bulk
// edits (trust.BulkEdits). The math (decay, suspect destinations,
// multi_change_24h, bulk_edit) lives in processors/trust and is not repeated
// here: this package only keeps the right events, deterministically.
//
// Event time only: the state's clock is its watermark, the greatest
// ObservedAt it has seen. No wall clock is read anywhere in the state, so a
// replay of 90 days in seconds builds exactly the state living through them
// would.
//
// Bounded state (ARCHITECTURE: ~50k servers). An event whose age exceeds
// Horizon (540 d = 18 half-lives) contributes at most
// 90·0.5^18 ≈ 3.4e-4 points to the drift score (the largest weight of one
// event is 50 for a suspect endpoint move plus 40 for a multi_change_24h it
// completes), far below the 0.01 the score is published with: dropping them
// moves a published score by at most one rounding step (TestPruneBound
// checks it against keeping everything) and never changes an open signal,
// since those close at 10 % of their weight (~100 d). Such events are
// pruned, but only as a prefix of the server's history followed by a quiet
// gap longer than the 24 h multi-change window (and, per namespace, the
// bulk-edit window): multi_change_24h and bulk_edit are greedy scans over
// time-ordered events, and cutting a prefix that ends before such a gap
// cannot change what the scan finds after it. Pruning depends only on the
// event set and the watermark, so live and replayed deliveries prune alike
// as long as late events arrive within Tolerance of the watermark
// (Horizon ≫ Tolerance + window). Events arriving at or before a server's
// pruned-through time are dropped (they would have been pruned).
//
// Kinds whose before/after text the drift math does not read (new_server,
// version_added, description_changed, title_changed, removed) are kept
// without it, which bounds memory at ~150 bytes an event.
package drift

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

// Horizon is the age beyond which an event can no longer matter (see the
// package doc for the bound).
const Horizon = 540 * 24 * time.Hour

// Tolerance is how far behind the watermark an event may arrive and still
// be treated exactly as in an in-order delivery. The differ publishes one
// snapshot at a time, so in practice events are at most one snapshot late.
const Tolerance = 30 * 24 * time.Hour

// serverState is one server's retained history.
type serverState struct {
	ObservedSince time.Time           `json:"observed_since,omitzero"`
	FirstEvent    time.Time           `json:"first_event,omitzero"` // fallback when new_server was never seen
	PrunedThrough time.Time           `json:"pruned_through,omitzero"`
	Events        []schema.DriftEvent `json:"events"` // ordered by (ObservedAt, ID), unique IDs
}

// nsState is one namespace's description_changed events, for bulk edits.
type nsState struct {
	PrunedThrough time.Time           `json:"pruned_through,omitzero"`
	Events        []schema.DriftEvent `json:"events"`
	bulk          []trust.BulkEdit    // cache, nil when stale
	bulkOK        bool
}

// State is the drift processor's state. It is safe for concurrent use.
type State struct {
	mu        sync.RWMutex
	w         *method.Weights
	watermark time.Time
	servers   map[string]*serverState
	ns        map[string]*nsState
	applied   int64 // events accepted (not counting duplicates)
}

// NewStateWith returns an empty state using w (tests).
func NewStateWith(w *method.Weights) *State {
	return &State{w: w, servers: map[string]*serverState{}, ns: map[string]*nsState{}}
}

func less(a, b schema.DriftEvent) bool {
	if !a.ObservedAt.Equal(b.ObservedAt) {
		return a.ObservedAt.Before(b.ObservedAt)
	}
	return a.ID < b.ID
}

// insert adds e to a time-ordered, ID-unique slice; false if present.
func insert(evs []schema.DriftEvent, e schema.DriftEvent) ([]schema.DriftEvent, bool) {
	i := sort.Search(len(evs), func(i int) bool { return !less(evs[i], e) })
	if i < len(evs) && evs[i].ID == e.ID {
		return evs, false
	}
	// The same ID at another time cannot happen (the ID hashes the time),
	// but a linear check keeps the set property unconditional.
	for _, x := range evs {
		if x.ID == e.ID {
			return evs, false
		}
	}
	evs = append(evs, schema.DriftEvent{})
	copy(evs[i+1:], evs[i:])
	evs[i] = e
	return evs, true
}

// slim drops the text the drift math never reads for this kind.
func slim(e schema.DriftEvent) schema.DriftEvent {
	switch e.Kind {
	case schema.KindEndpointsChanged, schema.KindStatusChanged:
	default:
		e.Before, e.After = "", ""
	}
	e.ObservedAt = e.ObservedAt.UTC()
	return e
}

// Apply folds events into the state. It is idempotent (an event ID already
// held is skipped) and order-insensitive within Tolerance. It returns how
// many events were new.
func (s *State) Apply(evs ...schema.DriftEvent) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range evs {
		if e.ID == "" || e.Server == "" {
			continue
		}
		e = slim(e)
		ss := s.servers[e.Server]
		if ss == nil {
			ss = &serverState{}
			s.servers[e.Server] = ss
		}
		// First-seen facts are kept forever (one time per server), even for
		// events older than the pruned prefix.
		if e.Kind == schema.KindNewServer && (ss.ObservedSince.IsZero() || e.ObservedAt.Before(ss.ObservedSince)) {
			ss.ObservedSince = e.ObservedAt
		}
		if ss.FirstEvent.IsZero() || e.ObservedAt.Before(ss.FirstEvent) {
			ss.FirstEvent = e.ObservedAt
		}
		if e.ObservedAt.After(s.watermark) {
			s.watermark = e.ObservedAt
		}
		if !ss.PrunedThrough.IsZero() && !e.ObservedAt.After(ss.PrunedThrough) {
			continue
		}
		var added bool
		ss.Events, added = insert(ss.Events, e)
		if !added {
			continue
		}
		n++
		if e.Kind == schema.KindDescriptionChanged {
			nsName := e.Namespace
			if nsName == "" {
				nsName = schema.Namespace(e.Server)
			}
			ns := s.ns[nsName]
			if ns == nil {
				ns = &nsState{}
				s.ns[nsName] = ns
			}
			if ns.PrunedThrough.IsZero() || e.ObservedAt.After(ns.PrunedThrough) {
				ns.Events, _ = insert(ns.Events, e)
				ns.bulkOK = false
			}
		}
	}
	s.applied += int64(n)
	// Prune everything: the watermark may have moved for every server.
	s.pruneLocked()
	return n
}

// prunePrefix returns how many leading events to drop: the longest prefix
// whose last event is older than cutoff and is followed by a gap > gap (or
// is the whole slice).
func prunePrefix(evs []schema.DriftEvent, cutoff time.Time, gap time.Duration) int {
	k := 0
	for i := range evs {
		if !evs[i].ObservedAt.Before(cutoff) {
			break
		}
		if i == len(evs)-1 || evs[i+1].ObservedAt.Sub(evs[i].ObservedAt) > gap {
			k = i + 1
		}
	}
	return k
}

func (s *State) pruneLocked() {
	if s.watermark.IsZero() {
		return
	}
	cutoff := s.watermark.Add(-Horizon)
	mc := time.Duration(s.w.Drift.MultiChangeWindowHrs * float64(time.Hour))
	be := time.Duration(s.w.Drift.BulkEditWindowHours * float64(time.Hour))
	for _, ss := range s.servers {
		if len(ss.Events) == 0 || !ss.Events[0].ObservedAt.Before(cutoff) {
			continue
		}
		if k := prunePrefix(ss.Events, cutoff, mc); k > 0 {
			ss.PrunedThrough = ss.Events[k-1].ObservedAt
			ss.Events = append([]schema.DriftEvent(nil), ss.Events[k:]...)
		}
	}
	for _, ns := range s.ns {
		if len(ns.Events) == 0 || !ns.Events[0].ObservedAt.Before(cutoff) {
			continue
		}
		if k := prunePrefix(ns.Events, cutoff, be); k > 0 {
			ns.PrunedThrough = ns.Events[k-1].ObservedAt
			ns.Events = append([]schema.DriftEvent(nil), ns.Events[k:]...)
			ns.bulkOK = false
		}
	}
}

// DriftInput returns the server's drift history for trust.Compute:
// ObservedSince is the first snapshot that held it (zero when never seen:
// drift unknown), Events its retained events oldest first, BulkEdits its
// namespace's bulk description edits. The returned slices are copies.
func (s *State) DriftInput(server string) trust.DriftInput {
	s.mu.RLock()
	ss := s.servers[server]
	var in trust.DriftInput
	if ss != nil {
		in.ObservedSince = ss.ObservedSince
		if in.ObservedSince.IsZero() {
			in.ObservedSince = ss.FirstEvent
		}
		in.Events = append([]schema.DriftEvent(nil), ss.Events...)
	}
	nsName := schema.Namespace(server)
	ns := s.ns[nsName]
	cached := ns != nil && ns.bulkOK
	if cached {
		in.BulkEdits = append([]trust.BulkEdit(nil), ns.bulk...)
	}
	s.mu.RUnlock()
	if ns == nil || cached {
		return in
	}
	s.mu.Lock()
	if !ns.bulkOK {
		ns.bulk = trust.BulkEdits(s.w, ns.Events)[nsName]
		ns.bulkOK = true
	}
	in.BulkEdits = append([]trust.BulkEdit(nil), ns.bulk...)
	s.mu.Unlock()
	return in
}

// InputAsOf is DriftInput as of at: only events observed at or before at,
// and the namespace's bulk edits from those events, so what a released
// snapshot concludes does not depend on later events already applied.
func (s *State) InputAsOf(server string, at time.Time) trust.DriftInput {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var in trust.DriftInput
	if ss := s.servers[server]; ss != nil {
		in.ObservedSince = ss.ObservedSince
		if in.ObservedSince.IsZero() {
			in.ObservedSince = ss.FirstEvent
		}
		if !in.ObservedSince.After(at) {
			in.Events = upTo(ss.Events, at)
		} else {
			in.ObservedSince = time.Time{}
		}
	}
	in.BulkEdits = s.bulkAsOfLocked(schema.Namespace(server), at)
	return in
}

// BulkEditsAsOf are a namespace's bulk description edits from its events
// observed at or before at.
func (s *State) BulkEditsAsOf(namespace string, at time.Time) []trust.BulkEdit {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bulkAsOfLocked(namespace, at)
}

func (s *State) bulkAsOfLocked(namespace string, at time.Time) []trust.BulkEdit {
	ns := s.ns[namespace]
	if ns == nil {
		return []trust.BulkEdit{}
	}
	out := trust.BulkEdits(s.w, upTo(ns.Events, at))[namespace]
	if out == nil {
		out = []trust.BulkEdit{}
	}
	return out
}

// upTo copies the prefix of time-ordered events observed at or before at.
func upTo(evs []schema.DriftEvent, at time.Time) []schema.DriftEvent {
	n := sort.Search(len(evs), func(i int) bool { return evs[i].ObservedAt.After(at) })
	return append(make([]schema.DriftEvent, 0, n), evs[:n]...)
}

// Watermark is the greatest event time seen (zero when empty).
func (s *State) Watermark() time.Time {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.watermark
}

// Servers returns the names the state holds, sorted.
func (s *State) Servers() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]string, 0, len(s.servers))
	for n := range s.servers {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Stats counts what the state holds (for logs and metrics).
type Stats struct {
	Servers    int   `json:"servers"`
	Namespaces int   `json:"namespaces"`
	Events     int   `json:"events"`
	Applied    int64 `json:"applied"`
}

// Stats returns the state's size.
func (s *State) Stats() Stats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := Stats{Servers: len(s.servers), Namespaces: len(s.ns), Applied: s.applied}
	for _, ss := range s.servers {
		st.Events += len(ss.Events)
	}
	return st
}

// checkpoint is the on-disk form. applied is not part of it: it counts work
// done by this process, not state.
type checkpoint struct {
	Version    int                     `json:"version"`
	Watermark  time.Time               `json:"watermark,omitzero"`
	Servers    map[string]*serverState `json:"servers"`
	Namespaces map[string]*nsState     `json:"namespaces"`
}

// MarshalJSON returns the canonical form of the state (map keys sorted by
// encoding/json): two states are equal exactly when these bytes are.
func (s *State) MarshalJSON() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return json.Marshal(checkpoint{Version: 1, Watermark: s.watermark, Servers: s.servers, Namespaces: s.ns})
}

// UnmarshalJSON restores a state written by MarshalJSON.
func (s *State) UnmarshalJSON(b []byte) error {
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	if c.Version != 1 {
		return fmt.Errorf("drift checkpoint version %d, want 1", c.Version)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.watermark = c.Watermark
	s.servers, s.ns = c.Servers, c.Namespaces
	if s.servers == nil {
		s.servers = map[string]*serverState{}
	}
	if s.ns == nil {
		s.ns = map[string]*nsState{}
	}
	return nil
}

// Load reads a checkpoint; a missing file is an empty state scored with w.
func Load(path string, w *method.Weights) (*State, error) {
	s := NewStateWith(w)
	if _, err := ckpt.Load(path, s); err != nil {
		return nil, fmt.Errorf("drift state: %w", err)
	}
	return s, nil
}

// Save writes a checkpoint atomically (internal/checkpoint).
func (s *State) Save(path string) error { return ckpt.Save(path, s) }
