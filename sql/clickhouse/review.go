package clickhouse

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/forum-mcp/forum/sql/store"
)

// The store.ReviewStore half of the ClickHouse store
// (migrations/0006_review_approvals.sql): ReplacingMergeTree without a
// version column, so the last inserted row of a key wins, read with FINAL.

var _ store.ReviewStore = (*Store)(nil)

const reviewCols = "server, publication_id, who, reason, approved_at_ms"

// InsertReviewApproval stores an approval; the last write of (server, publication_id) wins.
func (s *Store) InsertReviewApproval(ctx context.Context, a store.ReviewApproval) error {
	err := s.send(ctx, "INSERT INTO review_approvals ("+reviewCols+")", 1, func(b driver.Batch) error {
		return b.Append(a.Server, a.PublicationID, a.Who, a.Reason, ms(a.ApprovedAt))
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert review approval %s@%s: %w", a.Server, a.PublicationID, err)
	}
	return nil
}

// ReviewApproval returns the approval of (server, publicationID) or store.ErrNotFound.
func (s *Store) ReviewApproval(ctx context.Context, server, publicationID string) (store.ReviewApproval, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+reviewCols+` FROM review_approvals FINAL
		WHERE server = ? AND publication_id = ? LIMIT 1`, server, publicationID)
	if err != nil {
		return store.ReviewApproval{}, fmt.Errorf("clickhouse: review approval %s@%s: %w", server, publicationID, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return store.ReviewApproval{}, fmt.Errorf("clickhouse: review approval %s@%s: %w", server, publicationID, err)
		}
		return store.ReviewApproval{}, fmt.Errorf("clickhouse: review approval %s@%s: %w", server, publicationID, store.ErrNotFound)
	}
	var a store.ReviewApproval
	var at int64
	if err := rows.Scan(&a.Server, &a.PublicationID, &a.Who, &a.Reason, &at); err != nil {
		return store.ReviewApproval{}, fmt.Errorf("clickhouse: review approval %s@%s: %w", server, publicationID, err)
	}
	a.ApprovedAt = fromMS(at)
	return a, nil
}
