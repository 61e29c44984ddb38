package clickhouse

import (
	"context"
	"fmt"

	"github.com/forum-mcp/forum/sql/store"
)

var _ store.BulkHealthReader = (*Store)(nil)

// lastWrites is serverHealth's rule for every server at once, on the columns
// cols: FINAL collapses rewrites of the same key, and LIMIT 1 BY server, id
// keeps the last write (greatest _ver) of an id within its server (an id
// moved to another remote_url or observed_at leaves a stale row under the
// old key that merges never remove).
func lastWrites(cols, where string) string {
	return `(SELECT ` + cols + `, _ver FROM health_checks FINAL ` + where + ` ORDER BY _ver DESC LIMIT 1 BY server, id)`
}

// newestPerRemote keeps, per (server, remote_url), the greatest
// (observed_at_ms, id): LatestHealth's order and pick.
const newestPerRemote = ` ORDER BY server, remote_url, observed_at_ms DESC, id DESC LIMIT 1 BY server, remote_url`

// latestHealthAll picks the winners on the key columns first, so the check
// JSON of the whole history is never sorted, then reads the full rows of the
// winning ids only. Applying both rules again on that small set keeps the
// answer one row per remote even when a write lands between the two reads
// of health_checks (the rewritten id then shows its newer write).
var latestHealthAll = `SELECT ` + healthCols + ` FROM ` +
	lastWrites(healthCols, `WHERE (server, id) IN (SELECT server, id FROM `+
		lastWrites("server, id, remote_url, observed_at_ms", "")+newestPerRemote+`)`) +
	newestPerRemote

// LatestHealthAll returns LatestHealth of every server in one query: per
// (server, remote_url) the check with the greatest (observed_at, id) among
// the last writes of each id, ordered by server then remote_url.
func (s *Store) LatestHealthAll(ctx context.Context) ([]store.HealthCheck, error) {
	rows, err := s.conn.Query(readCtx(ctx), latestHealthAll)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: latest health of all servers: %w", err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: latest health of all servers: %w", err)
	}
	return out, nil
}
