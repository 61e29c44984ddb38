package store

import (
	"context"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// TrustStore keeps the scorer's publications (SPEC §5) and answers the
// evidence look-ups of the trust API. Every engine that implements Store
// implements it too (sql/duckdb, sql/clickhouse); the conformance suite is
// storetest.RunTrust.
//
// Contract, on top of Store's:
//   - trust_records are keyed by (server, publication_id), publications by
//     id; the last write of a key wins and identical rewrites change nothing,
//     so a publication recomputed after a crash converges.
//   - A publication is visible once its publications row exists. The scorer
//     writes the records first and the publication row last, so readers that
//     go through a publication (PublicationRecords, the latest record of a
//     server) never see half a publication.
type TrustStore interface {
	// InsertTrustRecords stores one publication's records (any batch size).
	InsertTrustRecords(ctx context.Context, recs []TrustRecord) error
	// InsertPublication stores a publication header, after its records.
	InsertPublication(ctx context.Context, p Publication) error
	// Publications returns publications, newest computed_at first (ties: id
	// descending), at most limit rows (ClampLimit with MaxEventLimit).
	Publications(ctx context.Context, limit int) ([]Publication, error)
	// GetPublication returns one publication or ErrNotFound.
	GetPublication(ctx context.Context, id string) (Publication, error)
	// PublicationRecords returns every record of a publication ordered by
	// server name (the Merkle leaf order); empty when there is none.
	PublicationRecords(ctx context.Context, id string) ([]TrustRecord, error)
	// LatestTrustRecord returns the server's record from the newest visible
	// publication that holds it, or ErrNotFound.
	LatestTrustRecord(ctx context.Context, server string) (TrustRecord, error)
	// TrustRecordIn returns the server's record in one visible
	// publication, or ErrNotFound.
	TrustRecordIn(ctx context.Context, server, publicationID string) (TrustRecord, error)
	// TrustRecordsOf returns the server's records of every visible
	// publication, newest first, at most limit (ClampLimit with
	// MaxEventLimit): every stored publication's evidence resolves.
	TrustRecordsOf(ctx context.Context, server string, limit int) ([]TrustRecord, error)

	// HealthCheckByID returns one stored health check or ErrNotFound.
	HealthCheckByID(ctx context.Context, id string) (HealthCheck, error)
	// EventByID returns one stored drift event or ErrNotFound.
	EventByID(ctx context.Context, id string) (schema.DriftEvent, error)
	// FirstListed returns, per server name, the earliest non-zero
	// published_at over every stored version: the server's first listing
	// (provenance: repo created after listing; co-registration clusters).
	FirstListed(ctx context.Context) (map[string]time.Time, error)
}

// TrustRecord is one row of trust_records: the published record as sealed
// JSON plus the columns analysts filter on.
type TrustRecord struct {
	Server          string
	PublicationID   string
	ComputedAt      time.Time
	Score           *float64 // nil when every sub-score is unknown
	Band            string
	ToolfinderScore int
	ContentSHA256   string
	// LeafHash is the record's RFC 6962 Merkle leaf hash (hex) in its
	// publication, stored so inclusion proofs never re-canonicalise.
	LeafHash string
	Record   string // the sealed record (RFC 8785 canonical JSON with content_sha256)
}

// Publication is one row of publications: a scoring run's signed header.
type Publication struct {
	ID            string
	MethodVersion string
	WeightsSHA256 string
	RecordCount   int
	MerkleRoot    string // hex
	Signature     string // base64 (standard, padded) Ed25519 over the header
	KeyID         string // hex SHA-256 of the public key
	ComputedAt    time.Time
}
