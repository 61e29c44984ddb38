package duckdb

import (
	"context"
	"fmt"

	"github.com/forum-mcp/forum/sql/store"
)

var _ store.BulkHealthReader = (*Store)(nil)

// LatestHealthAll returns LatestHealth of every server in one query: per
// (server, remote_url) the check with the greatest (observed_at, id) among
// the last writes of each id (health_checks_v).
func (s *Store) LatestHealthAll(ctx context.Context) ([]store.HealthCheck, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+healthSelect+` FROM health_checks_v
		QUALIFY row_number() OVER (PARTITION BY server, remote_url ORDER BY observed_at DESC, id DESC) = 1
		ORDER BY server, remote_url`)
	if err != nil {
		return nil, fmt.Errorf("duckdb: latest health of all servers: %w", err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: latest health of all servers: %w", err)
	}
	return out, nil
}
