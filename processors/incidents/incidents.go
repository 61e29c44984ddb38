// Package incidents is the curated-incident processor (SPEC §1.5, §4
// Incidents; seed 002 §4.4).
//
// In: Msg values on the `incidents` topic — inserts and retractions, each
// already validated and carrying its audit entry (who, why, when). They are
// published by the admin API (api/incidents.go) and the file loader
// (`forum incidents load`), both of which call Validate first and publish
// nothing when anything is wrong. Out: the incidents and incident_audit
// tables (store.IncidentStore), and State.IncidentsInput(server), the
// trust.IncidentsInput the scorer hands to trust.Compute (severity weights,
// 180 d decay, recurrence escalation and the F band are trust's math, not
// repeated here), plus State.History(server) for the API.
//
// Idempotent and order-insensitive: an incident's current row is the one
// with the greatest (UpdatedAt, retracted) (store.NewerIncident), both in the
// store and in State, so a redelivered insert can never undo a retraction.
// Audit rows have deterministic IDs and are append-only.
package incidents

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Classes, severities and statuses (SPEC §1.5).
var (
	Classes    = []string{"rug_pull", "malicious_update", "credential_theft", "data_exfiltration", "vulnerability", "takedown", "other"}
	Severities = []string{"critical", "high", "medium", "low"}
	// Statuses an insert may carry; "retracted" is reached only by a retraction.
	Statuses = []string{trust.IncidentConfirmed, trust.IncidentSuspected}
)

// Actions on the topic and in the audit log.
const (
	ActionInsert  = schema.IncidentActionInsert
	ActionRetract = schema.IncidentActionRetract
)

// The wire types live in schema (they cross the incidents topic).
type (
	Record = schema.Incident
	Audit  = schema.IncidentAudit
	Msg    = schema.IncidentMsg
)

// Row returns the store row of an incident.
func Row(r schema.Incident) store.Incident {
	return store.Incident{ID: r.ID, Server: r.Server, Date: r.Date.UTC(), Class: r.Class, Severity: r.Severity, Status: r.Status,
		SourceURI: r.SourceURI, Curator: r.Curator, Note: r.Note, UpdatedAt: r.UpdatedAt.UTC()}
}

// FromRow is the record of a store row.
func FromRow(r store.Incident) schema.Incident {
	return schema.Incident{ID: r.ID, Server: r.Server, Date: r.Date, Class: r.Class, Severity: r.Severity, Status: r.Status,
		SourceURI: r.SourceURI, Curator: r.Curator, Note: r.Note, UpdatedAt: r.UpdatedAt}
}

// AuditRow returns the audit row of a message.
func AuditRow(m schema.IncidentMsg) store.IncidentAudit {
	rec, _ := json.Marshal(m.Incident)
	return store.IncidentAudit{ID: m.Audit.ID, IncidentID: m.Incident.ID, Server: m.Incident.Server, Action: m.Audit.Action,
		Who: m.Audit.Who, Reason: m.Audit.Reason, At: m.Audit.At.UTC(), Record: string(rec)}
}

// Reason codes of rejected input (stable: clients branch on them).
const (
	ReasonUnknownServer   = "unknown_server"
	ReasonFutureDate      = "future_date"
	ReasonMissingDate     = "missing_date"
	ReasonMissingSource   = "missing_source_uri"
	ReasonBadSource       = "bad_source_uri"
	ReasonUnknownClass    = "unknown_class"
	ReasonUnknownSeverity = "unknown_severity"
	ReasonUnknownStatus   = "unknown_status"
	ReasonMissingReason   = "missing_reason"
	ReasonMissingServer   = "missing_server"
	ReasonUnknownIncident = "unknown_incident"
	ReasonDuplicateID     = "duplicate_id"
	ReasonAlreadyRetract  = "already_retracted"
	ReasonBadID           = "bad_id"
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid incident input")

// InvalidError is bad input with a reason code and the field at fault.
type InvalidError struct {
	Reason string // a Reason* code
	Field  string
	Detail string
}

func (e *InvalidError) Error() string {
	return fmt.Sprintf("%s: %s (%s)", e.Field, e.Detail, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *InvalidError) Unwrap() error { return ErrInvalid }

// Conflict reports whether the error is a conflict with stored state (409)
// rather than malformed or unknown input.
func (e *InvalidError) Conflict() bool {
	return e.Reason == ReasonDuplicateID || e.Reason == ReasonAlreadyRetract
}

// NotFound reports whether the error names something that does not exist.
func (e *InvalidError) NotFound() bool {
	return e.Reason == ReasonUnknownIncident
}

func invalid(reason, field, format string, args ...any) error {
	return &InvalidError{Reason: reason, Field: field, Detail: fmt.Sprintf(format, args...)}
}

// Input is an incident as entered by a curator (API body or a line of the
// loader's file).
type Input struct {
	ID        string    `json:"id,omitempty" doc:"Optional; derived from server, date, class and source_uri when empty."`
	Server    string    `json:"server" doc:"Server name as in the registry (namespace/name)."`
	Date      time.Time `json:"date" doc:"When the incident happened (RFC 3339); not in the future."`
	Class     string    `json:"class" doc:"rug_pull, malicious_update, credential_theft, data_exfiltration, vulnerability, takedown or other."`
	Severity  string    `json:"severity" doc:"critical, high, medium or low."`
	Status    string    `json:"status" doc:"confirmed or suspected (retract with the retract operation)."`
	SourceURI string    `json:"source_uri" doc:"Where the incident is documented (http or https URL)."`
	Curator   string    `json:"curator,omitempty" doc:"Who curated it; defaults to the caller."`
	Note      string    `json:"note,omitempty"`
	Reason    string    `json:"reason" doc:"Why it is entered (kept in the audit log)."`
}

// Lookup is what validation needs to know about the world.
type Lookup interface {
	// ServerExists reports whether the store's latest view holds the server.
	ServerExists(ctx context.Context, server string) (bool, error)
	// Incident returns a known incident by id.
	Incident(ctx context.Context, id string) (Record, bool, error)
}

func oneOf(v string, set []string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

// IncidentID derives an id from what identifies an incident.
func IncidentID(server string, date time.Time, class, sourceURI string) string {
	h := sha256.Sum256([]byte(server + "\x00" + date.UTC().Format(time.RFC3339Nano) + "\x00" + class + "\x00" + sourceURI))
	return "inc-" + hex.EncodeToString(h[:8])
}

func auditID(action, incidentID string, at time.Time, who string) string {
	h := sha256.Sum256([]byte(action + "\x00" + incidentID + "\x00" + at.UTC().Format(time.RFC3339Nano) + "\x00" + who))
	return "aud-" + hex.EncodeToString(h[:10])
}

const maxText = 2000

// ValidateInsert checks an insert and builds its message. who is the
// caller's label; now is the intake's clock (the only wall-clock reading
// in this package: it rejects dates in the future and stamps the audit).
// Nothing is written here: the caller publishes the message only on nil.
func ValidateInsert(ctx context.Context, in Input, who string, now time.Time, lk Lookup) (Msg, error) {
	in.Server = strings.TrimSpace(in.Server)
	switch {
	case in.Server == "":
		return Msg{}, invalid(ReasonMissingServer, "server", "a server name is required")
	case in.Date.IsZero():
		return Msg{}, invalid(ReasonMissingDate, "date", "the incident date is required (RFC 3339)")
	case in.Date.After(now):
		return Msg{}, invalid(ReasonFutureDate, "date", "date %s is in the future (now %s)", in.Date.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case strings.TrimSpace(in.SourceURI) == "":
		return Msg{}, invalid(ReasonMissingSource, "source_uri", "a source URI documenting the incident is required")
	case !oneOf(in.Class, Classes):
		return Msg{}, invalid(ReasonUnknownClass, "class", "unknown class %q; one of %s", in.Class, strings.Join(Classes, ", "))
	case !oneOf(in.Severity, Severities):
		return Msg{}, invalid(ReasonUnknownSeverity, "severity", "unknown severity %q; one of %s", in.Severity, strings.Join(Severities, ", "))
	case !oneOf(in.Status, Statuses):
		return Msg{}, invalid(ReasonUnknownStatus, "status", "unknown status %q for an insert; one of %s (retract with the retract operation)", in.Status, strings.Join(Statuses, ", "))
	case strings.TrimSpace(in.Reason) == "":
		return Msg{}, invalid(ReasonMissingReason, "reason", "a reason is required: it is kept in the audit log")
	case len(in.Note) > maxText || len(in.Reason) > maxText || len(in.SourceURI) > maxText:
		return Msg{}, invalid(ReasonBadSource, "note", "note, reason and source_uri are limited to %d bytes", maxText)
	}
	u, err := url.Parse(strings.TrimSpace(in.SourceURI))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Msg{}, invalid(ReasonBadSource, "source_uri", "source_uri %q is not an http(s) URL", in.SourceURI)
	}
	id := strings.TrimSpace(in.ID)
	if id == "" {
		id = IncidentID(in.Server, in.Date, in.Class, u.String())
	} else if len(id) > 200 || strings.ContainsAny(id, "/ \t\n") {
		return Msg{}, invalid(ReasonBadID, "id", "id %q: at most 200 characters, no '/' or whitespace", id)
	}
	ok, err := lk.ServerExists(ctx, in.Server)
	if err != nil {
		return Msg{}, fmt.Errorf("looking up server %q: %w", in.Server, err)
	}
	if !ok {
		return Msg{}, invalid(ReasonUnknownServer, "server", "no server named %q in the registry's latest view", in.Server)
	}
	if _, found, err := lk.Incident(ctx, id); err != nil {
		return Msg{}, fmt.Errorf("looking up incident %q: %w", id, err)
	} else if found {
		return Msg{}, invalid(ReasonDuplicateID, "id", "incident %s already exists (retract it and enter a corrected one)", id)
	}
	curator := strings.TrimSpace(in.Curator)
	if curator == "" {
		curator = who
	}
	now = now.UTC()
	rec := Record{ID: id, Server: in.Server, Date: in.Date.UTC(), Class: in.Class, Severity: in.Severity, Status: in.Status,
		SourceURI: u.String(), Curator: curator, Note: in.Note, UpdatedAt: now}
	return Msg{Incident: rec, Audit: Audit{ID: auditID(ActionInsert, id, now, who), Action: ActionInsert, Who: who, Reason: strings.TrimSpace(in.Reason), At: now}}, nil
}

// ValidateRetract checks a retraction of id and builds its message.
func ValidateRetract(ctx context.Context, id, reason, who string, now time.Time, lk Lookup) (Msg, error) {
	if strings.TrimSpace(reason) == "" {
		return Msg{}, invalid(ReasonMissingReason, "reason", "a reason is required: it is kept in the audit log")
	}
	if len(reason) > maxText {
		return Msg{}, invalid(ReasonMissingReason, "reason", "reason is limited to %d bytes", maxText)
	}
	rec, found, err := lk.Incident(ctx, id)
	if err != nil {
		return Msg{}, fmt.Errorf("looking up incident %q: %w", id, err)
	}
	if !found {
		return Msg{}, invalid(ReasonUnknownIncident, "id", "no incident with id %q", id)
	}
	if rec.Status == trust.IncidentRetracted {
		return Msg{}, invalid(ReasonAlreadyRetract, "id", "incident %s is already retracted", id)
	}
	now = now.UTC()
	if !now.After(rec.UpdatedAt) {
		// The retraction must order after the insert it retracts.
		now = rec.UpdatedAt.Add(time.Millisecond)
	}
	rec.Status, rec.UpdatedAt = trust.IncidentRetracted, now
	return Msg{Incident: rec, Audit: Audit{ID: auditID(ActionRetract, id, now, who), Action: ActionRetract, Who: who, Reason: strings.TrimSpace(reason), At: now}}, nil
}
