package incidents

import (
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	ckpt "github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/sql/store"
)

// Entry is one incident with its audit trail, for the API.
type Entry struct {
	Record
	Audit []Audit `json:"audit"`
}

// State is every incident's current record and audit trail. Incidents are
// curated by hand (tens to hundreds), so it is kept whole. Safe for
// concurrent use.
type State struct {
	mu     sync.RWMutex
	loaded bool
	byID   map[string]*Entry
}

// NewState returns an empty state, not yet loaded.
func NewState() *State { return &State{byID: map[string]*Entry{}} }

// MarkLoaded records that the incident feed has been read to its end once:
// from then on IncidentsInput reports Checked.
func (s *State) MarkLoaded() {
	s.mu.Lock()
	s.loaded = true
	s.mu.Unlock()
}

// Loaded reports whether the feed has been read to its end once.
func (s *State) Loaded() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.loaded
}

// Apply folds messages in; idempotent and order-insensitive (the winner of
// an id is store.NewerIncident's, audit entries are a set by ID).
func (s *State) Apply(msgs ...Msg) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range msgs {
		if m.Incident.ID == "" {
			continue
		}
		e := s.byID[m.Incident.ID]
		if e == nil {
			e = &Entry{Record: m.Incident}
			s.byID[m.Incident.ID] = e
		} else if store.NewerIncident(Row(m.Incident), Row(e.Record)) {
			e.Record = m.Incident
		}
		if m.Audit.ID != "" {
			dup := false
			for _, a := range e.Audit {
				if a.ID == m.Audit.ID {
					dup = true
					break
				}
			}
			if !dup {
				e.Audit = append(e.Audit, m.Audit)
				sort.Slice(e.Audit, func(i, j int) bool {
					if !e.Audit[i].At.Equal(e.Audit[j].At) {
						return e.Audit[i].At.Before(e.Audit[j].At)
					}
					return e.Audit[i].ID < e.Audit[j].ID
				})
			}
		}
	}
}

// Incident returns the current record of an incident.
func (s *State) Incident(id string) (Record, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	e := s.byID[id]
	if e == nil {
		return Record{}, false
	}
	return e.Record, true
}

// History returns a server's incidents, retracted ones included, each with
// its audit trail, oldest date first (ties by id).
func (s *State) History(server string) []Entry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := []Entry{}
	for _, e := range s.byID {
		if e.Server == server {
			c := *e
			c.Audit = append([]Audit(nil), e.Audit...)
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Date.Equal(out[j].Date) {
			return out[i].Date.Before(out[j].Date)
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// IncidentsInput returns the server's incidents for trust.Compute.
// Checked is false until the feed has been loaded (the sub-score is then
// unknown, never 100 by default).
func (s *State) IncidentsInput(server string) trust.IncidentsInput {
	h := s.History(server)
	in := trust.IncidentsInput{Checked: s.Loaded()}
	for _, e := range h {
		in.Items = append(in.Items, trust.Incident{ID: e.ID, Server: e.Server, Date: e.Date, Class: e.Class,
			Severity: e.Severity, Status: e.Status, SourceURI: e.SourceURI})
	}
	return in
}

type checkpoint struct {
	Version   int               `json:"version"`
	Incidents map[string]*Entry `json:"incidents"`
}

// MarshalJSON returns the canonical form of the state (loaded is a runtime
// fact, re-established on start, and not part of it).
func (s *State) MarshalJSON() ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return json.Marshal(checkpoint{Version: 1, Incidents: s.byID})
}

// UnmarshalJSON restores a state written by MarshalJSON.
func (s *State) UnmarshalJSON(b []byte) error {
	var c checkpoint
	if err := json.Unmarshal(b, &c); err != nil {
		return err
	}
	if c.Version != 1 {
		return fmt.Errorf("incidents checkpoint version %d, want 1", c.Version)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID = c.Incidents
	if s.byID == nil {
		s.byID = map[string]*Entry{}
	}
	return nil
}

// Load reads a checkpoint; a missing file is an empty state.
func Load(path string) (*State, error) {
	s := NewState()
	if _, err := ckpt.Load(path, s); err != nil {
		return nil, fmt.Errorf("incidents state: %w", err)
	}
	return s, nil
}

// Save writes a checkpoint atomically (internal/checkpoint).
func (s *State) Save(path string) error { return ckpt.Save(path, s) }
