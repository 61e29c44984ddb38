package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/forum-mcp/forum/sql/store"
)

var _ store.ProvenanceStore = (*Store)(nil)

const provenanceCols = "id, repo, observed_at_ms, status, http_status, not_modified, full_name, renamed_to, " +
	"owner_login, owner_type, owner_created_at_ms, owner_observed_at_ms, created_at_ms, pushed_at_ms, stars, fork, archived, disabled, " +
	"license_spdx, commits_fetched, commits_observed_at_ms, commits_count, authors, verified, empty, cap_hit, " +
	"last_commit_at_ms, flag_no_license, flag_single_author_90d, flag_no_commits_90d, flag_repo_under_30d, " +
	"flag_stale_over_1y, flag_commit_cap_hit, flag_archived, flag_fork, flag_owner_older_than_1y, flag_stars_ge_100"

// nullMS is a Nullable(Int64) time: nil (NULL) for the zero time.
func nullMS(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := ms(t)
	return &v
}

// nullB8 is a Nullable(UInt8) flag.
func nullB8(b *bool) *uint8 {
	if b == nil {
		return nil
	}
	v := b8(*b)
	return &v
}

// InsertProvenance stores GitHub observations. _ver is the row's stamp
// (store.Provenance.Stamp), so ReplacingMergeTree(_ver) keeps the winner of
// store.ReduceProvenance whatever order batches arrive in.
func (s *Store) InsertProvenance(ctx context.Context, rows []store.Provenance) error {
	rows = store.ReduceProvenance(rows)
	err := s.send(ctx, "INSERT INTO provenance ("+provenanceCols+", _ver)", len(rows), func(b driver.Batch) error {
		for _, p := range rows {
			f := p.Flags
			if err := b.Append(p.ID, p.Repo, ms(p.ObservedAt), p.Status, int32(p.HTTPStatus), b8(p.NotModified), p.FullName,
				p.RenamedTo, p.OwnerLogin, p.OwnerType, nullMS(p.OwnerCreatedAt), nullMS(p.OwnerObservedAt), nullMS(p.CreatedAt), nullMS(p.PushedAt),
				int64(p.Stars), b8(p.Fork), b8(p.Archived), b8(p.Disabled), p.LicenseSPDX, b8(p.CommitsFetched),
				nullMS(p.CommitsObservedAt), int32(p.CommitsCount), int32(p.Authors), int32(p.Verified), b8(p.Empty),
				b8(p.CapHit), nullMS(p.LastCommitAt),
				nullB8(f.NoLicense), nullB8(f.SingleAuthor90d), nullB8(f.NoCommits90d), nullB8(f.RepoUnder30d),
				nullB8(f.StaleOver1y), nullB8(f.CommitCapHit), nullB8(f.Archived), nullB8(f.Fork),
				nullB8(f.OwnerOlderThan1y), nullB8(f.StarsGE100),
				uint64(verBase+p.Stamp().UnixMilli())); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("clickhouse: insert provenance: %w", err)
	}
	return nil
}

// ProvenanceObservations returns observations oldest first (ties: id),
// deduplicated with FINAL (the table's key is the id).
func (s *Store) ProvenanceObservations(ctx context.Context, q store.ProvenanceQuery) ([]store.Provenance, error) {
	var since int64 = -1 << 62
	if !q.Since.IsZero() {
		since = ms(q.Since)
	}
	rows, err := s.conn.Query(readCtx(ctx), `SELECT `+provenanceCols+` FROM provenance FINAL
		WHERE (? = '' OR repo = ?) AND observed_at_ms >= ? ORDER BY observed_at_ms, id LIMIT ?`,
		q.Repo, q.Repo, since, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("clickhouse: provenance: %w", err)
	}
	defer rows.Close()
	out := []store.Provenance{}
	for rows.Next() {
		var p store.Provenance
		var obs, stars int64
		var status, count, authors, verified int32
		var notMod, fork, archived, disabled, fetched, empty, capHit uint8
		var oc, oo, cr, pu, co, lc *int64
		var fl [10]*uint8
		if err := rows.Scan(&p.ID, &p.Repo, &obs, &p.Status, &status, &notMod, &p.FullName, &p.RenamedTo,
			&p.OwnerLogin, &p.OwnerType, &oc, &oo, &cr, &pu, &stars, &fork, &archived, &disabled, &p.LicenseSPDX,
			&fetched, &co, &count, &authors, &verified, &empty, &capHit, &lc,
			&fl[0], &fl[1], &fl[2], &fl[3], &fl[4], &fl[5], &fl[6], &fl[7], &fl[8], &fl[9]); err != nil {
			return nil, fmt.Errorf("clickhouse: provenance: %w", err)
		}
		p.ObservedAt, p.HTTPStatus, p.Stars = fromMS(obs), int(status), int(stars)
		p.NotModified, p.Fork, p.Archived, p.Disabled = notMod != 0, fork != 0, archived != 0, disabled != 0
		p.CommitsFetched, p.Empty, p.CapHit = fetched != 0, empty != 0, capHit != 0
		p.CommitsCount, p.Authors, p.Verified = int(count), int(authors), int(verified)
		for _, x := range []struct {
			dst *time.Time
			src *int64
		}{{&p.OwnerCreatedAt, oc}, {&p.OwnerObservedAt, oo}, {&p.CreatedAt, cr}, {&p.PushedAt, pu}, {&p.CommitsObservedAt, co}, {&p.LastCommitAt, lc}} {
			if x.src != nil {
				*x.dst = fromMS(*x.src)
			}
		}
		f := &p.Flags
		for i, dst := range []**bool{&f.NoLicense, &f.SingleAuthor90d, &f.NoCommits90d, &f.RepoUnder30d, &f.StaleOver1y,
			&f.CommitCapHit, &f.Archived, &f.Fork, &f.OwnerOlderThan1y, &f.StarsGE100} {
			if fl[i] != nil {
				b := *fl[i] != 0
				*dst = &b
			}
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("clickhouse: provenance: %w", err)
	}
	return out, nil
}
