package schema

import "time"

// The incident wire type: IncidentMsg is the value on the incidents topic,
// published by the admin API and 'forum incidents load' after validation
// (processors/incidents), keyed by server name.

// Incident is one curated incident (SPEC §1.5) as it travels on the
// incidents topic and is served.
type Incident struct {
	ID        string    `json:"id"`
	Server    string    `json:"server"`
	Date      time.Time `json:"date"`
	Class     string    `json:"class"`
	Severity  string    `json:"severity"`
	Status    string    `json:"status"`
	SourceURI string    `json:"source_uri"`
	Curator   string    `json:"curator"`
	Note      string    `json:"note,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// IncidentAudit is one audit-log entry: who did what to an incident, and why.
type IncidentAudit struct {
	ID     string    `json:"id"`
	Action string    `json:"action"` // insert|retract
	Who    string    `json:"who"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// IncidentMsg is the value on the incidents topic: the incident after the
// action, and the audit entry of the action.
type IncidentMsg struct {
	Incident Incident      `json:"incident"`
	Audit    IncidentAudit `json:"audit"`
}

// Incident actions (the audit entry's Action).
const (
	IncidentActionInsert  = "insert"
	IncidentActionRetract = "retract"
)

// Incident statuses.
const (
	IncidentConfirmed = "confirmed"
	IncidentSuspected = "suspected"
	IncidentRetracted = "retracted"
)

// Validate checks what the incidents processor and sink rely on.
func (m *IncidentMsg) Validate() error {
	in := &m.Incident
	switch {
	case in.ID == "":
		return Invalid(ReasonMissingField, "incident without an id")
	case in.Server == "":
		return Invalid(ReasonMissingName, "incident %s without a server", Bound(in.ID, 200))
	case in.UpdatedAt.IsZero():
		return Invalid(ReasonMissingField, "incident %s without updated_at", Bound(in.ID, 200))
	case in.Status != IncidentConfirmed && in.Status != IncidentSuspected && in.Status != IncidentRetracted:
		return Invalid(ReasonInvalidValue, "incident %s: status %q", Bound(in.ID, 200), Bound(in.Status, 50))
	case m.Audit.ID != "" && m.Audit.Action != IncidentActionInsert && m.Audit.Action != IncidentActionRetract:
		return Invalid(ReasonInvalidValue, "incident %s: audit action %q", Bound(in.ID, 200), Bound(m.Audit.Action, 50))
	}
	return nil
}
