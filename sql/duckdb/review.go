package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/forum-mcp/forum/sql/store"
)

// The store.ReviewStore half of the DuckDB store (migrations/0006_review_approvals.sql).

var _ store.ReviewStore = (*Store)(nil)

var reviewCols = []string{"server", "publication_id", "who", "reason", "approved_at"}

// reviewConflict: the last write of (server, publication_id) wins; identical rows are skipped.
var reviewConflict = "ON CONFLICT (server, publication_id) DO UPDATE SET " + setAll(reviewCols, "server", "publication_id") +
	" WHERE " + differs("review_approvals", reviewCols, "server", "publication_id")

// InsertReviewApproval stores an approval; the last write of (server, publication_id) wins.
func (s *Store) InsertReviewApproval(ctx context.Context, a store.ReviewApproval) error {
	row := []any{a.Server, a.PublicationID, a.Who, a.Reason, store.Millis(a.ApprovedAt)}
	if err := s.write(ctx, batch{"review_approvals", reviewCols, [][]any{row}, reviewConflict}); err != nil {
		return fmt.Errorf("duckdb: insert review approval %s@%s: %w", a.Server, a.PublicationID, err)
	}
	return nil
}

// ReviewApproval returns the approval of (server, publicationID) or store.ErrNotFound.
func (s *Store) ReviewApproval(ctx context.Context, server, publicationID string) (store.ReviewApproval, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(reviewCols, ", ")+` FROM review_approvals
		WHERE server = ? AND publication_id = ?`, server, publicationID)
	if err != nil {
		return store.ReviewApproval{}, fmt.Errorf("duckdb: review approval %s@%s: %w", server, publicationID, err)
	}
	out, err := scanReviews(rows)
	if err != nil {
		return store.ReviewApproval{}, fmt.Errorf("duckdb: review approval %s@%s: %w", server, publicationID, err)
	}
	if len(out) == 0 {
		return store.ReviewApproval{}, fmt.Errorf("duckdb: review approval %s@%s: %w", server, publicationID, store.ErrNotFound)
	}
	return out[0], nil
}

func scanReviews(rows *sql.Rows) ([]store.ReviewApproval, error) {
	defer rows.Close()
	var out []store.ReviewApproval
	for rows.Next() {
		var a store.ReviewApproval
		if err := rows.Scan(&a.Server, &a.PublicationID, &a.Who, &a.Reason, &a.ApprovedAt); err != nil {
			return nil, err
		}
		a.ApprovedAt = a.ApprovedAt.UTC()
		out = append(out, a)
	}
	return out, rows.Err()
}
