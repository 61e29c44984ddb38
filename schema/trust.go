package schema

import "time"

// The parts of a published trust record that processors conclude and pass
// on (drift, incidents and provenance state, owner bursts) and the scorer
// seals: evidence pointers, signals, sub-scores. processors/trust computes
// them and keeps aliases of these names.

// DirectionStrongNegative is the method direction that makes an open signal
// hold the band at D (processors/method.StrongNegative has the same value).
const DirectionStrongNegative = "strong_negative"

// Evidence is a machine-readable pointer to a stored observation (SPEC §5).
type Evidence struct {
	Kind       string    `json:"kind"` // health_check|registry_event|github_repo|scan_finding|incident
	ID         string    `json:"id"`
	ObservedAt time.Time `json:"observed_at"`
	URI        string    `json:"uri,omitempty"`
}

// Evidence kinds.
const (
	EvHealthCheck   = "health_check"
	EvRegistryEvent = "registry_event"
	EvGitHubRepo    = "github_repo"
	EvScanFinding   = "scan_finding"
	EvIncident      = "incident"
)

// Severity of a signal that is open high-severity.
const SeverityHigh = "high"

// Signal is one finding behind a sub-score. Penalty is what it subtracted
// (negative for a bonus) after base-rate factors and decay.
type Signal struct {
	ID        string             `json:"id"`
	Direction string             `json:"direction"`          // method direction (strong_negative, negative, …)
	Severity  string             `json:"severity,omitempty"` // "high" for open high-severity signals; the finding's severity for static/incidents
	Open      bool               `json:"open"`               // counts for the band now
	Penalty   float64            `json:"penalty"`
	Values    map[string]float64 `json:"values,omitempty"` // base_rate, factor, magnitude, decay, age_days …
	Note      string             `json:"note,omitempty"`
	Evidence  []Evidence         `json:"evidence,omitempty"`
}

// StrongNegative reports whether the signal is an open strong negative.
func (s Signal) StrongNegative() bool { return s.Open && s.Direction == DirectionStrongNegative }

// HighSeverity reports whether the signal is an open high-severity signal.
func (s Signal) HighSeverity() bool {
	return s.Open && (s.Severity == SeverityHigh || s.Direction == DirectionStrongNegative)
}

// SubScore is one of the four sub-scores. Value is nil when unknown, with
// Reason saying why (never 0 for unknown).
type SubScore struct {
	Value    *float64   `json:"value"`
	Reason   string     `json:"reason,omitempty"`
	Signals  []Signal   `json:"signals"`
	Evidence []Evidence `json:"evidence"`
}

// Known reports whether the sub-score has a value.
func (s SubScore) Known() bool { return s.Value != nil }

// Unobserved names a dimension that could not be observed and why.
type Unobserved struct {
	Dimension string `json:"dimension"` // provenance|static|drift|incidents|endpoint
	Reason    string `json:"reason"`
}

// OpenSignal is a record-level summary of a signal that affects the band.
type OpenSignal struct {
	SubScore string `json:"sub_score"`
	ID       string `json:"id"`
	Kind     string `json:"kind"` // strong_negative | high_severity
}

// OwnerBurst is the draft6 owner-burst evidence (SPEC §4 Owner burst): no
// score impact, attached only to records of flagged namespaces.
type OwnerBurst struct {
	RecurringBurst       bool `json:"recurring_burst"`
	WindowsOverThreshold int  `json:"windows_over_threshold"`
	FirstWindowBurst     bool `json:"first_window_burst"`
	// PerWindowNew counts new_server events per 24 h window, oldest first;
	// the last element is the current window (now−24 h, now].
	PerWindowNew []int `json:"per_window_new"`
}

// Flagged reports whether the namespace meets either definition.
func (b OwnerBurst) Flagged() bool { return b.RecurringBurst || b.FirstWindowBurst }

// BulkEdit is one namespace-level bulk description edit (SPEC §4 Drift):
// one namespace changed the descriptions of >= bulk_edit_min_servers distinct
// servers within bulk_edit_window_hours. A pattern flag, weight 0.
type BulkEdit struct {
	Namespace string    `json:"namespace"`
	Start     time.Time `json:"start"`
	Servers   int       `json:"servers"`
}
