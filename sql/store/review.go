package store

import (
	"context"
	"time"
)

// ReviewStore keeps the admin approvals of popular-server review holds
// (SPEC §4 "Popular-server review"): a record held as review_pending is
// released early when its (server, publication) is approved. Every engine
// that implements TrustStore implements it too (sql/duckdb, sql/clickhouse);
// the conformance suite is storetest.RunReview.
//
// Contract: approvals are keyed by (server, publication_id); the last write
// of a key wins and identical rewrites change nothing.
type ReviewStore interface {
	// InsertReviewApproval stores one approval.
	InsertReviewApproval(ctx context.Context, a ReviewApproval) error
	// ReviewApproval returns the approval of the server's record in the
	// publication, or ErrNotFound when there is none.
	ReviewApproval(ctx context.Context, server, publicationID string) (ReviewApproval, error)
}

// ReviewApproval is one row of review_approvals: who released which held
// record, when and why.
type ReviewApproval struct {
	Server        string
	PublicationID string // the publication of the held record
	Who           string // the admin token's label
	Reason        string
	ApprovedAt    time.Time
}
