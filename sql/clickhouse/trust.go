package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The store.TrustStore half of the ClickHouse store (tables of
// migrations/0004_trust.sql): ReplacingMergeTree without a version column,
// so the last inserted row of a key wins, read with FINAL; 18.16-safe SQL
// (IN (subquery), LIMIT n, no window functions).

var _ store.TrustStore = (*Store)(nil)

const trustRecordCols = "server, publication_id, computed_at_ms, score, band, toolfinder_score, content_sha256, leaf_hash, record"

const publicationCols = "id, method_version, weights_sha256, record_count, merkle_root, signature, key_id, computed_at_ms"

// InsertTrustRecords stores records; the last write of (server, publication_id) wins.
func (s *Store) InsertTrustRecords(ctx context.Context, recs []store.TrustRecord) error {
	recs = store.LastByID(recs, func(r store.TrustRecord) string { return r.Server + "\x00" + r.PublicationID })
	err := s.send(ctx, "INSERT INTO trust_records ("+trustRecordCols+")", len(recs), func(b driver.Batch) error {
		for _, r := range recs {
			if err := b.Append(r.Server, r.PublicationID, ms(r.ComputedAt), r.Score, r.Band, int32(r.ToolfinderScore), r.ContentSHA256, r.LeafHash, r.Record); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert trust_records: %w", err)
	}
	return nil
}

// InsertPublication stores a publication header; the last write of an id wins.
func (s *Store) InsertPublication(ctx context.Context, p store.Publication) error {
	err := s.send(ctx, "INSERT INTO publications ("+publicationCols+")", 1, func(b driver.Batch) error {
		return b.Append(p.ID, p.MethodVersion, p.WeightsSHA256, int64(p.RecordCount), p.MerkleRoot, p.Signature, p.KeyID, ms(p.ComputedAt))
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert publication %s: %w", p.ID, err)
	}
	return nil
}

func scanPublications(rows driver.Rows) ([]store.Publication, error) {
	defer rows.Close()
	out := []store.Publication{}
	for rows.Next() {
		var p store.Publication
		var n, at int64
		if err := rows.Scan(&p.ID, &p.MethodVersion, &p.WeightsSHA256, &n, &p.MerkleRoot, &p.Signature, &p.KeyID, &at); err != nil {
			return nil, err
		}
		p.RecordCount, p.ComputedAt = int(n), fromMS(at)
		out = append(out, p)
	}
	return out, rows.Err()
}

// Publications returns publications newest first.
func (s *Store) Publications(ctx context.Context, limit int) ([]store.Publication, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+publicationCols+` FROM publications FINAL
		ORDER BY computed_at_ms DESC, id DESC LIMIT ?`, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: publications: %w", err)
	}
	out, err := scanPublications(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: publications: %w", err)
	}
	return out, nil
}

// GetPublication returns one publication or store.ErrNotFound.
func (s *Store) GetPublication(ctx context.Context, id string) (store.Publication, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+publicationCols+` FROM publications FINAL WHERE id = ?`, id)
	if err != nil {
		return store.Publication{}, fmt.Errorf("clickhouse: publication %q: %w", id, err)
	}
	out, err := scanPublications(rows)
	if err != nil {
		return store.Publication{}, fmt.Errorf("clickhouse: publication %q: %w", id, err)
	}
	if len(out) == 0 {
		return store.Publication{}, fmt.Errorf("clickhouse: publication %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

func scanTrustRecords(rows driver.Rows) ([]store.TrustRecord, error) {
	defer rows.Close()
	out := []store.TrustRecord{}
	for rows.Next() {
		var r store.TrustRecord
		var at int64
		var score *float64
		var tf int32
		if err := rows.Scan(&r.Server, &r.PublicationID, &at, &score, &r.Band, &tf, &r.ContentSHA256, &r.LeafHash, &r.Record); err != nil {
			return nil, err
		}
		r.ComputedAt, r.Score, r.ToolfinderScore = fromMS(at), score, int(tf)
		out = append(out, r)
	}
	return out, rows.Err()
}

// PublicationRecords returns a publication's records ordered by server.
func (s *Store) PublicationRecords(ctx context.Context, id string) ([]store.TrustRecord, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+trustRecordCols+` FROM trust_records FINAL
		WHERE publication_id = ? ORDER BY server`, id)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: records of publication %q: %w", id, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: records of publication %q: %w", id, err)
	}
	return out, nil
}

// LatestTrustRecord returns the server's record from the newest visible
// publication that holds it.
func (s *Store) LatestTrustRecord(ctx context.Context, server string) (store.TrustRecord, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+trustRecordCols+` FROM trust_records FINAL
		WHERE server = ? AND publication_id IN (SELECT id FROM publications FINAL)
		ORDER BY computed_at_ms DESC, publication_id DESC LIMIT 1`, server)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("clickhouse: trust record of %q: %w", server, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("clickhouse: trust record of %q: %w", server, err)
	}
	if len(out) == 0 {
		return store.TrustRecord{}, fmt.Errorf("clickhouse: trust record of %q: %w", server, store.ErrNotFound)
	}
	return out[0], nil
}

// TrustRecordIn returns a server's record in one visible publication, or
// ErrNotFound.
func (s *Store) TrustRecordIn(ctx context.Context, server, publicationID string) (store.TrustRecord, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+trustRecordCols+` FROM trust_records FINAL
		WHERE server = ? AND publication_id = ? AND publication_id IN (SELECT id FROM publications FINAL) LIMIT 1`, server, publicationID)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("clickhouse: trust record of %q in %q: %w", server, publicationID, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return store.TrustRecord{}, fmt.Errorf("clickhouse: trust record of %q in %q: %w", server, publicationID, err)
	}
	if len(out) == 0 {
		return store.TrustRecord{}, fmt.Errorf("clickhouse: trust record of %q in %q: %w", server, publicationID, store.ErrNotFound)
	}
	return out[0], nil
}

// TrustRecordsOf returns a server's records of every visible publication,
// newest first, at most limit (ClampLimit with MaxEventLimit).
func (s *Store) TrustRecordsOf(ctx context.Context, server string, limit int) ([]store.TrustRecord, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+trustRecordCols+` FROM trust_records FINAL
		WHERE server = ? AND publication_id IN (SELECT id FROM publications FINAL)
		ORDER BY computed_at_ms DESC, publication_id DESC LIMIT ?`, server, store.ClampLimit(limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: trust records of %q: %w", server, err)
	}
	out, err := scanTrustRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("clickhouse: trust records of %q: %w", server, err)
	}
	return out, nil
}

// HealthCheckByID returns one stored health check (the last write of the id).
func (s *Store) HealthCheckByID(ctx context.Context, id string) (store.HealthCheck, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+healthCols+` FROM health_checks FINAL WHERE id = ?
		ORDER BY _ver DESC LIMIT 1`, id)
	if err != nil {
		return store.HealthCheck{}, fmt.Errorf("clickhouse: health check %q: %w", id, err)
	}
	out, err := scanHealth(rows)
	if err != nil {
		return store.HealthCheck{}, fmt.Errorf("clickhouse: health check %q: %w", id, err)
	}
	if len(out) == 0 {
		return store.HealthCheck{}, fmt.Errorf("clickhouse: health check %q: %w", id, store.ErrNotFound)
	}
	return out[0], nil
}

// EventByID returns one stored drift event.
func (s *Store) EventByID(ctx context.Context, id string) (schema.DriftEvent, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+eventCols+` FROM drift_events FINAL WHERE id = ? LIMIT 1`, id)
	if err != nil {
		return schema.DriftEvent{}, fmt.Errorf("clickhouse: drift event %q: %w", id, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return schema.DriftEvent{}, fmt.Errorf("clickhouse: drift event %q: %w", id, err)
		}
		return schema.DriftEvent{}, fmt.Errorf("clickhouse: drift event %q: %w", id, store.ErrNotFound)
	}
	var e schema.DriftEvent
	var obs int64
	var bump uint8
	if err := rows.Scan(&e.ID, &e.Server, &e.Namespace, &e.Kind, &e.Version, &e.Before, &e.After, &obs, &bump, &e.SnapshotID); err != nil {
		return schema.DriftEvent{}, fmt.Errorf("clickhouse: drift event %q: %w", id, err)
	}
	e.ObservedAt, e.VersionBump = fromMS(obs), bump != 0
	return e, nil
}

// FirstListed returns each server's earliest non-zero published_at.
func (s *Store) FirstListed(ctx context.Context) (map[string]time.Time, error) {
	rows, err := s.conn.Query(readCtx(ctx), `SELECT name, min(published_at_ms) FROM registry_records FINAL
		WHERE published_at_ms > ? GROUP BY name`, ms(time.Time{}))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: first listed: %w", err)
	}
	defer rows.Close()
	out := map[string]time.Time{}
	for rows.Next() {
		var n string
		var v int64
		if err := rows.Scan(&n, &v); err != nil {
			return nil, fmt.Errorf("clickhouse: first listed: %w", err)
		}
		out[n] = fromMS(v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: first listed: %w", err)
	}
	return out, nil
}
