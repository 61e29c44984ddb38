package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/forum-mcp/forum/sql/store"
)

var _ store.IncidentStore = (*Store)(nil)

const incidentCols = "id, server, date_ms, class, severity, status, source_uri, curator, note, updated_at_ms"

// incidentVer orders rows of one id as store.NewerIncident does.
func incidentVer(r store.Incident) uint64 {
	v := uint64(verBase + 2*ms(r.UpdatedAt))
	if r.Status == store.IncidentRetracted {
		v++
	}
	return v
}

// InsertIncidents upserts incidents (ReplacingMergeTree(_ver), see the migration).
func (s *Store) InsertIncidents(ctx context.Context, rows []store.Incident) error {
	rows = store.ReduceIncidents(rows)
	err := s.send(ctx, "INSERT INTO incidents ("+incidentCols+", _ver)", len(rows), func(b driver.Batch) error {
		for _, r := range rows {
			if err := b.Append(r.ID, r.Server, ms(r.Date), r.Class, r.Severity, r.Status, r.SourceURI, r.Curator, r.Note,
				ms(r.UpdatedAt), incidentVer(r)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert incidents: %w", err)
	}
	return nil
}

const auditCols = "id, incident_id, server, action, who, reason, recorded_at_ms, record"

// InsertIncidentAudit appends audit rows (an id always carries the same content).
func (s *Store) InsertIncidentAudit(ctx context.Context, rows []store.IncidentAudit) error {
	rows = store.FirstByID(rows, func(a store.IncidentAudit) string { return a.ID })
	err := s.send(ctx, "INSERT INTO incident_audit ("+auditCols+")", len(rows), func(b driver.Batch) error {
		for _, a := range rows {
			if err := b.Append(a.ID, a.IncidentID, a.Server, a.Action, a.Who, a.Reason, ms(a.At), a.Record); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert incident_audit: %w", err)
	}
	return nil
}

// currentIncidents is the deduplicated incidents table: FINAL collapses
// rows of one id, and LIMIT 1 BY id keeps the greatest _ver should a merge
// not have run (FINAL already guarantees it; the clause documents intent).
const currentIncidents = `(SELECT ` + incidentCols + ` FROM incidents FINAL ORDER BY _ver DESC LIMIT 1 BY id)`

func scanIncidents(rows driver.Rows) ([]store.Incident, error) {
	defer rows.Close()
	out := []store.Incident{}
	for rows.Next() {
		var r store.Incident
		var date, upd int64
		if err := rows.Scan(&r.ID, &r.Server, &date, &r.Class, &r.Severity, &r.Status, &r.SourceURI, &r.Curator, &r.Note, &upd); err != nil {
			return nil, err
		}
		r.Date, r.UpdatedAt = fromMS(date), fromMS(upd)
		out = append(out, r)
	}
	return out, rows.Err()
}

// Incidents returns a server's incidents ("" for all), oldest date first.
func (s *Store) Incidents(ctx context.Context, server string) ([]store.Incident, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+incidentCols+` FROM `+currentIncidents+`
		WHERE (? = '' OR server = ?) ORDER BY date_ms, id`, server, server)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: incidents of %q: %w", server, err)
	}
	out, err := scanIncidents(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: incidents of %q: %w", server, err)
	}
	return out, nil
}

// GetIncident returns one incident or store.ErrNotFound.
func (s *Store) GetIncident(ctx context.Context, id string) (store.Incident, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+incidentCols+` FROM `+currentIncidents+` WHERE id = ?`, id)
	if err != nil {
		return store.Incident{}, fmt.Errorf("clickhouse: get incident %q: %w", id, err)
	}
	out, err := scanIncidents(rows)
	if err != nil {
		return store.Incident{}, fmt.Errorf("clickhouse: get incident %q: %w", id, err)
	}
	if len(out) == 0 {
		return store.Incident{}, fmt.Errorf("clickhouse: get incident %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

// IncidentAuditLog returns audit rows oldest first (ties by id).
func (s *Store) IncidentAuditLog(ctx context.Context, q store.AuditQuery) ([]store.IncidentAudit, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+auditCols+` FROM incident_audit FINAL
		WHERE (? = '' OR server = ?) AND (? = '' OR incident_id = ?) ORDER BY recorded_at_ms, id LIMIT 1 BY id LIMIT ?`,
		q.Server, q.Server, q.IncidentID, q.IncidentID, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: incident audit: %w", err)
	}
	defer rows.Close()
	out := []store.IncidentAudit{}
	for rows.Next() {
		var a store.IncidentAudit
		var at int64
		if err := rows.Scan(&a.ID, &a.IncidentID, &a.Server, &a.Action, &a.Who, &a.Reason, &at, &a.Record); err != nil {
			return nil, fmt.Errorf("clickhouse: incident audit: %w", err)
		}
		a.At = fromMS(at)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: incident audit: %w", err)
	}
	return out, nil
}
