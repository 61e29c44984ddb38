package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/forum-mcp/forum/sql/store"
)

var _ store.IncidentStore = (*Store)(nil)

var incidentCols = []string{"id", "server", "date", "class", "severity", "status", "source_uri", "curator", "note", "updated_at"}

// incidentConflict encodes store.NewerIncident: a later updated_at wins; on
// a tie a retraction wins over a non-retraction; identical rows are skipped.
var incidentConflict = "ON CONFLICT (id) DO UPDATE SET " + setAll(incidentCols, "id") + ` WHERE
	excluded.updated_at > incidents.updated_at OR (excluded.updated_at = incidents.updated_at AND (
	(excluded.status = 'retracted' AND incidents.status <> 'retracted') OR
	((excluded.status = 'retracted') = (incidents.status = 'retracted') AND ` + differs("incidents", incidentCols, "id") + `)))`

func incidentBatch(rows []store.Incident) batch {
	return batch{"incidents", incidentCols, mapArgs(store.ReduceIncidents(rows), func(r store.Incident) []any {
		return []any{r.ID, r.Server, store.Millis(r.Date), r.Class, r.Severity, r.Status, r.SourceURI, r.Curator, r.Note, store.Millis(r.UpdatedAt)}
	}), incidentConflict}
}

// InsertIncidents upserts incidents (winner: store.NewerIncident).
func (s *Store) InsertIncidents(ctx context.Context, rows []store.Incident) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.write(ctx, incidentBatch(rows)); err != nil {
		return fmt.Errorf("duckdb: insert incidents: %w", err)
	}
	return nil
}

var auditCols = []string{"id", "incident_id", "server", "action", "who", "reason", "recorded_at", "record"}

func auditBatch(rows []store.IncidentAudit) batch {
	rows = store.FirstByID(rows, func(a store.IncidentAudit) string { return a.ID })
	return batch{"incident_audit", auditCols, mapArgs(rows, func(a store.IncidentAudit) []any {
		return []any{a.ID, a.IncidentID, a.Server, a.Action, a.Who, a.Reason, store.Millis(a.At), a.Record}
	}), "ON CONFLICT (id) DO NOTHING"}
}

// InsertIncidentAudit appends audit rows; an id already stored is kept.
func (s *Store) InsertIncidentAudit(ctx context.Context, rows []store.IncidentAudit) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.write(ctx, auditBatch(rows)); err != nil {
		return fmt.Errorf("duckdb: insert incident audit: %w", err)
	}
	return nil
}

func scanIncidents(rows *sql.Rows) ([]store.Incident, error) {
	defer rows.Close()
	out := []store.Incident{}
	for rows.Next() {
		var r store.Incident
		if err := rows.Scan(&r.ID, &r.Server, &r.Date, &r.Class, &r.Severity, &r.Status, &r.SourceURI, &r.Curator, &r.Note, &r.UpdatedAt); err != nil {
			return nil, err
		}
		r.Date, r.UpdatedAt = r.Date.UTC(), r.UpdatedAt.UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}

// Incidents returns a server's incidents ("" for all), oldest date first.
func (s *Store) Incidents(ctx context.Context, server string) ([]store.Incident, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(incidentCols, ", ")+` FROM incidents
		WHERE (? = '' OR server = ?) ORDER BY date, id`, server, server)
	if err != nil {
		return nil, fmt.Errorf("duckdb: incidents of %q: %w", server, err)
	}
	out, err := scanIncidents(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: incidents of %q: %w", server, err)
	}
	return out, nil
}

// GetIncident returns one incident or store.ErrNotFound.
func (s *Store) GetIncident(ctx context.Context, id string) (store.Incident, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(incidentCols, ", ")+` FROM incidents WHERE id = ?`, id)
	if err != nil {
		return store.Incident{}, fmt.Errorf("duckdb: get incident %q: %w", id, err)
	}
	out, err := scanIncidents(rows)
	if err != nil {
		return store.Incident{}, fmt.Errorf("duckdb: get incident %q: %w", id, err)
	}
	if len(out) == 0 {
		return store.Incident{}, fmt.Errorf("duckdb: get incident %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

// IncidentAuditLog returns audit rows oldest first (ties by id).
func (s *Store) IncidentAuditLog(ctx context.Context, q store.AuditQuery) ([]store.IncidentAudit, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(auditCols, ", ")+` FROM incident_audit
		WHERE (? = '' OR server = ?) AND (? = '' OR incident_id = ?) ORDER BY recorded_at, id LIMIT ?`,
		q.Server, q.Server, q.IncidentID, q.IncidentID, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: incident audit: %w", err)
	}
	defer rows.Close()
	out := []store.IncidentAudit{}
	for rows.Next() {
		var a store.IncidentAudit
		if err := rows.Scan(&a.ID, &a.IncidentID, &a.Server, &a.Action, &a.Who, &a.Reason, &a.At, &a.Record); err != nil {
			return nil, fmt.Errorf("duckdb: incident audit: %w", err)
		}
		a.At = a.At.UTC()
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: incident audit: %w", err)
	}
	return out, nil
}
