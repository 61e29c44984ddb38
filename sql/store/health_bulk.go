package store

import "context"

// BulkHealthReader is an optional extension of Store, implemented by every
// engine here (sql/duckdb, sql/clickhouse), for readers that need the
// latest health of the whole registry at once (the scorer's Load, which
// otherwise asks LatestHealth once per server).
//
// LatestHealthAll returns LatestHealth of every server in one query: for
// each (server, remote URL) the check with the greatest (ObservedAt, ID),
// ordered by server then remote URL (byte order, as LatestHealth orders
// remote URLs). The rows of one server are exactly what LatestHealth returns
// for it, with the same duplicate rules (the last write of an ID wins); a
// server without checks has no rows. An empty, non-nil slice when the store
// holds no checks.
type BulkHealthReader interface {
	LatestHealthAll(ctx context.Context) ([]HealthCheck, error)
}
