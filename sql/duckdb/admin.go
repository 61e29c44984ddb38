package duckdb

import (
	"context"
	"fmt"
	"strings"

	"github.com/forum-mcp/forum/sql/store"
)

// The store.AdminStore half of the DuckDB store (migrations/0010_admin_audit.sql).

var _ store.AdminStore = (*Store)(nil)

var adminAuditCols = []string{"id", "called_at", "route", "path", "outcome", "status", "remote", "fingerprint", "who", "calls"}

// InsertAdminAudit appends rows; an id already stored is kept.
func (s *Store) InsertAdminAudit(ctx context.Context, rows []store.AdminAudit) error {
	if len(rows) == 0 {
		return nil
	}
	rows = store.FirstByID(rows, func(a store.AdminAudit) string { return a.ID })
	args := mapArgs(rows, func(a store.AdminAudit) []any {
		return []any{a.ID, store.Millis(a.At), a.Route, a.Path, a.Outcome, int32(a.Status), a.Remote, a.Fingerprint, a.Who, int32(a.Calls)}
	})
	if err := s.write(ctx, batch{"admin_audit", adminAuditCols, args, "ON CONFLICT (id) DO NOTHING"}); err != nil {
		return fmt.Errorf("duckdb: insert admin audit: %w", err)
	}
	return nil
}

// AdminAudit returns the newest rows first (ties: id descending).
func (s *Store) AdminAudit(ctx context.Context, limit int) ([]store.AdminAudit, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(adminAuditCols, ", ")+` FROM admin_audit
		ORDER BY called_at DESC, id DESC LIMIT ?`, store.ClampLimit(limit, store.MaxAdminAuditLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: admin audit: %w", err)
	}
	defer rows.Close()
	out := []store.AdminAudit{}
	for rows.Next() {
		var a store.AdminAudit
		var status, calls int32
		if err := rows.Scan(&a.ID, &a.At, &a.Route, &a.Path, &a.Outcome, &status, &a.Remote, &a.Fingerprint, &a.Who, &calls); err != nil {
			return nil, fmt.Errorf("duckdb: admin audit: %w", err)
		}
		a.At, a.Status, a.Calls = a.At.UTC(), int(status), int(calls)
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: admin audit: %w", err)
	}
	return out, nil
}
