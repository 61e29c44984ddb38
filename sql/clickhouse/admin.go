package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/forum-mcp/forum/sql/store"
)

// The store.AdminStore half of the ClickHouse store
// (migrations/0010_admin_audit.sql): append-only rows keyed by a content
// hash, read with FINAL.

var _ store.AdminStore = (*Store)(nil)

const adminAuditCols = "id, called_at_ms, route, path, outcome, status, remote, fingerprint, who, calls"

// InsertAdminAudit appends rows (an id always carries the same content).
func (s *Store) InsertAdminAudit(ctx context.Context, rows []store.AdminAudit) error {
	rows = store.FirstByID(rows, func(a store.AdminAudit) string { return a.ID })
	err := s.send(ctx, "INSERT INTO admin_audit ("+adminAuditCols+")", len(rows), func(b driver.Batch) error {
		for _, a := range rows {
			if err := b.Append(a.ID, ms(a.At), a.Route, a.Path, a.Outcome, int32(a.Status), a.Remote, a.Fingerprint, a.Who, int64(a.Calls)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert admin_audit: %w", err)
	}
	return nil
}

// AdminAudit returns the newest rows first (ties: id descending).
func (s *Store) AdminAudit(ctx context.Context, limit int) ([]store.AdminAudit, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+adminAuditCols+` FROM admin_audit FINAL
		ORDER BY called_at_ms DESC, id DESC LIMIT 1 BY id LIMIT ?`, store.ClampLimit(limit, store.MaxAdminAuditLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: admin audit: %w", err)
	}
	defer rows.Close()
	out := []store.AdminAudit{}
	for rows.Next() {
		var a store.AdminAudit
		var at, calls int64
		var status int32
		if err := rows.Scan(&a.ID, &at, &a.Route, &a.Path, &a.Outcome, &status, &a.Remote, &a.Fingerprint, &a.Who, &calls); err != nil {
			return nil, fmt.Errorf("clickhouse: admin audit: %w", err)
		}
		a.At, a.Status, a.Calls = fromMS(at), int(status), int(calls)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: admin audit: %w", err)
	}
	return out, nil
}
