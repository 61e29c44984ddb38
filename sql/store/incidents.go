package store

import (
	"context"
	"time"
)

// Incident is one row of incidents: a curated incident record (SPEC §1.5)
// in its current state. Rows are keyed by ID; the row with the greatest
// (UpdatedAt, Status == "retracted") wins, so a retraction replayed before
// or after its insert leaves the same row (see NewerIncident).
type Incident struct {
	ID        string
	Server    string
	Date      time.Time // when the incident happened (event time of the score)
	Class     string    // rug_pull|malicious_update|credential_theft|data_exfiltration|vulnerability|takedown|other
	Severity  string    // critical|high|medium|low
	Status    string    // confirmed|suspected|retracted
	SourceURI string
	Curator   string
	Note      string
	UpdatedAt time.Time // when the last insert/retraction of it was recorded
}

// IncidentAudit is one row of incident_audit, the append-only log of every
// insert and retraction: who (the admin token's label or the file loader's
// --who), why (a required reason) and the record after the action (JSON).
// Rows are keyed by ID; rewriting an ID changes nothing.
type IncidentAudit struct {
	ID         string
	IncidentID string
	Server     string
	Action     string // insert|retract
	Who        string
	Reason     string
	At         time.Time
	Record     string // the incident after the action, as JSON
}

// AuditQuery filters IncidentAuditLog. Empty fields match everything.
type AuditQuery struct {
	Server     string
	IncidentID string
	Limit      int // 1..MaxEventLimit
}

// IncidentStore is implemented by every engine (sql/duckdb, sql/clickhouse)
// beside Store; the incidents processor writes it, the API reads it.
type IncidentStore interface {
	// InsertIncidents upserts incident rows (winner: NewerIncident).
	InsertIncidents(ctx context.Context, rows []Incident) error
	// InsertIncidentAudit appends audit rows; an ID already stored is kept as is.
	InsertIncidentAudit(ctx context.Context, rows []IncidentAudit) error
	// Incidents returns the incidents of a server ("" for all), oldest
	// Date first (ties by ID), retracted ones included.
	Incidents(ctx context.Context, server string) ([]Incident, error)
	// GetIncident returns one incident, or ErrNotFound.
	GetIncident(ctx context.Context, id string) (Incident, error)
	// IncidentAuditLog returns audit rows oldest first (ties by ID).
	IncidentAuditLog(ctx context.Context, q AuditQuery) ([]IncidentAudit, error)
}

// Incident statuses the winner rule knows.
const IncidentRetracted = "retracted"

// NewerIncident reports whether a should replace b as the row of their ID:
// the later UpdatedAt wins; on a tie a retraction beats a non-retraction,
// and otherwise the later write (a) wins.
func NewerIncident(a, b Incident) bool {
	if c := Millis(a.UpdatedAt).Compare(Millis(b.UpdatedAt)); c != 0 {
		return c > 0
	}
	ar, br := a.Status == IncidentRetracted, b.Status == IncidentRetracted
	if ar != br {
		return ar
	}
	return true
}

// ReduceIncidents keeps one row per ID by NewerIncident, in first-seen order.
func ReduceIncidents(rows []Incident) []Incident {
	at := make(map[string]int, len(rows))
	out := make([]Incident, 0, len(rows))
	for _, r := range rows {
		if i, ok := at[r.ID]; ok {
			if NewerIncident(r, out[i]) {
				out[i] = r
			}
			continue
		}
		at[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}

// FirstByID keeps, for each id(x), the first element of xs (append-only
// tables: the first write of a key is the one kept).
func FirstByID[T any](xs []T, id func(T) string) []T {
	seen := make(map[string]bool, len(xs))
	out := make([]T, 0, len(xs))
	for _, x := range xs {
		if seen[id(x)] {
			continue
		}
		seen[id(x)] = true
		out = append(out, x)
	}
	return out
}
