package duckdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The store.TrustStore half of the DuckDB store (tables of
// migrations/0004_trust.sql). Same write path as the rest: rows are reduced
// in Go (last write per key), then merged with INSERT … ON CONFLICT.

var _ store.TrustStore = (*Store)(nil)

var trustRecordCols = []string{"server", "publication_id", "computed_at", "score", "band", "toolfinder_score", "content_sha256", "leaf_hash", "record"}

var publicationCols = []string{"id", "method_version", "weights_sha256", "record_count", "merkle_root", "signature", "key_id", "computed_at"}

func trustRecordBatch(recs []store.TrustRecord) batch {
	recs = store.LastByID(recs, func(r store.TrustRecord) string { return r.Server + "\x00" + r.PublicationID })
	rows := mapArgs(recs, func(r store.TrustRecord) []any {
		var score any // NULL when unknown
		if r.Score != nil {
			score = *r.Score
		}
		return []any{r.Server, r.PublicationID, store.Millis(r.ComputedAt), score, r.Band, int32(r.ToolfinderScore), r.ContentSHA256, r.LeafHash, r.Record}
	})
	return batch{"trust_records", trustRecordCols, rows, "ON CONFLICT (server, publication_id) DO UPDATE SET " + setAll(trustRecordCols, "server", "publication_id")}
}

// InsertTrustRecords stores records; the last write of (server, publication_id) wins.
func (s *Store) InsertTrustRecords(ctx context.Context, recs []store.TrustRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if err := s.write(ctx, trustRecordBatch(recs)); err != nil {
		return fmt.Errorf("duckdb: insert trust records: %w", err)
	}
	s.changed()
	return nil
}

// InsertPublication stores a publication header; the last write of an id wins.
func (s *Store) InsertPublication(ctx context.Context, p store.Publication) error {
	row := []any{p.ID, p.MethodVersion, p.WeightsSHA256, int64(p.RecordCount), p.MerkleRoot, p.Signature, p.KeyID, store.Millis(p.ComputedAt)}
	if err := s.write(ctx, batch{"publications", publicationCols, [][]any{row}, idConflict("publications", publicationCols)}); err != nil {
		return fmt.Errorf("duckdb: insert publication %s: %w", p.ID, err)
	}
	s.changed()
	return nil
}

func scanPublications(rows *sql.Rows) ([]store.Publication, error) {
	defer rows.Close()
	out := []store.Publication{}
	for rows.Next() {
		var p store.Publication
		var n int64
		if err := rows.Scan(&p.ID, &p.MethodVersion, &p.WeightsSHA256, &n, &p.MerkleRoot, &p.Signature, &p.KeyID, &p.ComputedAt); err != nil {
			return nil, err
		}
		p.RecordCount, p.ComputedAt = int(n), p.ComputedAt.UTC()
		out = append(out, p)
	}
	return out, rows.Err()
}

// Publications returns publications newest first.
func (s *Store) Publications(ctx context.Context, limit int) ([]store.Publication, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(publicationCols, ", ")+` FROM publications
		ORDER BY computed_at DESC, id DESC LIMIT ?`, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: publications: %w", err)
	}
	out, err := scanPublications(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: publications: %w", err)
	}
	return out, nil
}

// GetPublication returns one publication or store.ErrNotFound.
func (s *Store) GetPublication(ctx context.Context, id string) (store.Publication, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(publicationCols, ", ")+` FROM publications WHERE id = ?`, id)
	if err != nil {
		return store.Publication{}, fmt.Errorf("duckdb: publication %q: %w", id, err)
	}
	out, err := scanPublications(rows)
	if err != nil {
		return store.Publication{}, fmt.Errorf("duckdb: publication %q: %w", id, err)
	}
	if len(out) == 0 {
		return store.Publication{}, fmt.Errorf("duckdb: publication %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

func scanTrustRecords(rows *sql.Rows) ([]store.TrustRecord, error) {
	defer rows.Close()
	out := []store.TrustRecord{}
	for rows.Next() {
		var r store.TrustRecord
		var score sql.NullFloat64
		var leaf sql.NullString // NULL only if written around the store: the column is added by ALTER, without NOT NULL
		var tf int32
		if err := rows.Scan(&r.Server, &r.PublicationID, &r.ComputedAt, &score, &r.Band, &tf, &r.ContentSHA256, &leaf, &r.Record); err != nil {
			return nil, err
		}
		if score.Valid {
			v := score.Float64
			r.Score = &v
		}
		r.ComputedAt, r.ToolfinderScore, r.LeafHash = r.ComputedAt.UTC(), int(tf), leaf.String
		out = append(out, r)
	}
	return out, rows.Err()
}

var trustRecordSelect = strings.Join(trustRecordCols, ", ")

// PublicationRecords returns a publication's records ordered by server.
// The rows are sorted here, not by DuckDB: an ORDER BY over 50k records'
// JSON (~300 MB) needs its blocks pinned at once, more than the buffer
// pool of an embedded run holds (DefaultMemoryLimit), while the scan alone
// streams.
func (s *Store) PublicationRecords(ctx context.Context, id string) ([]store.TrustRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+trustRecordSelect+` FROM trust_records WHERE publication_id = ?`, id)
	if err != nil {
		return nil, fmt.Errorf("duckdb: records of publication %q: %w", id, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: records of publication %q: %w", id, err)
	}
	slices.SortFunc(out, func(a, b store.TrustRecord) int { return strings.Compare(a.Server, b.Server) })
	return out, nil
}

// LatestTrustRecord returns the server's record from the newest visible
// publication that holds it.
func (s *Store) LatestTrustRecord(ctx context.Context, server string) (store.TrustRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+trustRecordSelect+` FROM trust_records
		WHERE server = ? AND publication_id IN (SELECT id FROM publications)
		ORDER BY computed_at DESC, publication_id DESC LIMIT 1`, server)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("duckdb: trust record of %q: %w", server, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("duckdb: trust record of %q: %w", server, err)
	}
	if len(out) == 0 {
		return store.TrustRecord{}, fmt.Errorf("duckdb: trust record of %q: %w", server, store.ErrNotFound)
	}
	return out[0], nil
}

// TrustRecordIn returns a server's record in one visible publication, or
// ErrNotFound.
func (s *Store) TrustRecordIn(ctx context.Context, server, publicationID string) (store.TrustRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+trustRecordSelect+` FROM trust_records
		WHERE server = ? AND publication_id = ? AND publication_id IN (SELECT id FROM publications) LIMIT 1`, server, publicationID)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("duckdb: trust record of %q in %q: %w", server, publicationID, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("duckdb: trust record of %q in %q: %w", server, publicationID, err)
	}
	if len(out) == 0 {
		return store.TrustRecord{}, fmt.Errorf("duckdb: trust record of %q in %q: %w", server, publicationID, store.ErrNotFound)
	}
	return out[0], nil
}

// TrustRecordsOf returns a server's records of every visible publication,
// newest first, at most limit (ClampLimit with MaxEventLimit).
func (s *Store) TrustRecordsOf(ctx context.Context, server string, limit int) ([]store.TrustRecord, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+trustRecordSelect+` FROM trust_records
		WHERE server = ? AND publication_id IN (SELECT id FROM publications)
		ORDER BY computed_at DESC, publication_id DESC LIMIT ?`, server, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: trust records of %q: %w", server, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("duckdb: trust records of %q: %w", server, err)
	}
	return out, nil
}

// HealthCheckByID returns one stored health check.
func (s *Store) HealthCheckByID(ctx context.Context, id string) (store.HealthCheck, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+healthSelect+` FROM health_checks WHERE id = ? ORDER BY _seq DESC LIMIT 1`, id)
	if err != nil {
		return store.HealthCheck{}, fmt.Errorf("duckdb: health check %q: %w", id, err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return store.HealthCheck{}, fmt.Errorf("duckdb: health check %q: %w", id, err)
	}
	if len(out) == 0 {
		return store.HealthCheck{}, fmt.Errorf("duckdb: health check %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

// EventByID returns one stored drift event.
func (s *Store) EventByID(ctx context.Context, id string) (schema.DriftEvent, error) {
	var e schema.DriftEvent
	err := s.db.QueryRowContext(ctx, `SELECT `+strings.Join(eventCols, ", ")+` FROM drift_events WHERE id = ? ORDER BY _seq DESC LIMIT 1`, id).Scan(
		&e.ID, &e.Server, &e.Namespace, &e.Kind, &e.Version, &e.Before, &e.After, &e.ObservedAt, &e.VersionBump, &e.SnapshotID)
	if errors.Is(err, sql.ErrNoRows) {
		return schema.DriftEvent{}, fmt.Errorf("duckdb: drift event %q: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return schema.DriftEvent{}, fmt.Errorf("duckdb: drift event %q: %w", id, err)
	}
	e.ObservedAt = e.ObservedAt.UTC()
	return e, nil
}

// FirstListed returns each server's earliest non-zero published_at.
func (s *Store) FirstListed(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT name, min(published_at) FROM registry_records
		WHERE published_at > ?::TIMESTAMP GROUP BY name`, store.Millis(time.Time{}))
	if err != nil {
		return nil, fmt.Errorf("duckdb: first listed: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var n string
		var t time.Time
		if err := rows.Scan(&n, &t); err != nil {
			return nil, fmt.Errorf("duckdb: first listed: %w", err)
		}
		out[n] = t.UTC()
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: first listed: %w", err)
	}
	return out, nil
}
