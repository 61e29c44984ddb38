package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/forum-mcp/forum/sql/store"
)

var _ store.ProvenanceStore = (*Store)(nil)

var provenanceCols = []string{"id", "repo", "observed_at", "status", "http_status", "not_modified", "full_name", "renamed_to",
	"owner_login", "owner_type", "owner_created_at", "owner_observed_at", "created_at", "pushed_at", "stars", "fork", "archived", "disabled",
	"license_spdx", "commits_fetched", "commits_observed_at", "commits_count", "authors", "verified", "empty", "cap_hit",
	"last_commit_at", "flag_no_license", "flag_single_author_90d", "flag_no_commits_90d", "flag_repo_under_30d",
	"flag_stale_over_1y", "flag_commit_cap_hit", "flag_archived", "flag_fork", "flag_owner_older_than_1y", "flag_stars_ge_100"}

// provenanceStamp is store.Provenance.Stamp in SQL.
func provenanceStamp(t string) string {
	return "greatest(" + t + ".observed_at, coalesce(" + t + ".commits_observed_at, " + t + ".observed_at), coalesce(" +
		t + ".owner_observed_at, " + t + ".observed_at))"
}

// provenanceDedup keeps one row per id of the append-only provenance table
// (history.go): store.ReduceProvenance's winner, the greatest stamp, and
// on a tie the later write.
var provenanceDedup = " QUALIFY row_number() OVER (PARTITION BY id ORDER BY " + provenanceStamp("provenance") + " DESC, _seq DESC) = 1"

// nullTime is NULL for the zero time, else the time as stored.
func nullTime(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return store.Millis(t)
}

func nullBool(b *bool) any {
	if b == nil {
		return nil
	}
	return *b
}

// provenanceBatch appends GitHub observations (a history; winner:
// store.ReduceProvenance, applied on read).
func provenanceBatch(rows []store.Provenance) batch {
	rows = store.ReduceProvenance(rows)
	return batch{"provenance", provenanceCols, mapArgs(rows, func(p store.Provenance) []any {
		f := p.Flags
		return []any{p.ID, p.Repo, store.Millis(p.ObservedAt), p.Status, p.HTTPStatus, p.NotModified, p.FullName, p.RenamedTo,
			p.OwnerLogin, p.OwnerType, nullTime(p.OwnerCreatedAt), nullTime(p.OwnerObservedAt), nullTime(p.CreatedAt), nullTime(p.PushedAt), int64(p.Stars),
			p.Fork, p.Archived, p.Disabled, p.LicenseSPDX, p.CommitsFetched, nullTime(p.CommitsObservedAt), p.CommitsCount,
			p.Authors, p.Verified, p.Empty, p.CapHit, nullTime(p.LastCommitAt),
			nullBool(f.NoLicense), nullBool(f.SingleAuthor90d), nullBool(f.NoCommits90d), nullBool(f.RepoUnder30d),
			nullBool(f.StaleOver1y), nullBool(f.CommitCapHit), nullBool(f.Archived), nullBool(f.Fork),
			nullBool(f.OwnerOlderThan1y), nullBool(f.StarsGE100)}
	}), ""}
}

// InsertProvenance stores GitHub observations (winner: store.ReduceProvenance).
func (s *Store) InsertProvenance(ctx context.Context, rows []store.Provenance) error {
	if len(rows) == 0 {
		return nil
	}
	if err := s.write(ctx, provenanceBatch(rows)); err != nil {
		return fmt.Errorf("duckdb: insert provenance: %w", err)
	}
	return nil
}

// ProvenanceObservations returns observations oldest first (ties: id).
func (s *Store) ProvenanceObservations(ctx context.Context, q store.ProvenanceQuery) ([]store.Provenance, error) {
	since := time.Unix(-62135596800, 0).UTC() // 0001-01-01: everything
	if !q.Since.IsZero() {
		since = store.Millis(q.Since)
	}
	// repo may filter before the deduplication (an id names its repo:
	// "github:<repo>@<time>"), since only after it.
	rows, err := s.db.QueryContext(ctx, `SELECT `+strings.Join(provenanceCols, ", ")+` FROM (SELECT * FROM provenance
		WHERE (? = '' OR repo = ?)`+provenanceDedup+`) WHERE observed_at >= ? ORDER BY observed_at, id LIMIT ?`,
		q.Repo, q.Repo, since, store.ClampLimit(q.Limit, store.MaxEventLimit))
	if err != nil {
		return nil, fmt.Errorf("duckdb: provenance: %w", err)
	}
	defer rows.Close()
	out := []store.Provenance{}
	for rows.Next() {
		var p store.Provenance
		var stars int64
		var oc, oo, cr, pu, co, lc sql.NullTime
		var fl [10]sql.NullBool
		if err := rows.Scan(&p.ID, &p.Repo, &p.ObservedAt, &p.Status, &p.HTTPStatus, &p.NotModified, &p.FullName, &p.RenamedTo,
			&p.OwnerLogin, &p.OwnerType, &oc, &oo, &cr, &pu, &stars, &p.Fork, &p.Archived, &p.Disabled, &p.LicenseSPDX,
			&p.CommitsFetched, &co, &p.CommitsCount, &p.Authors, &p.Verified, &p.Empty, &p.CapHit, &lc,
			&fl[0], &fl[1], &fl[2], &fl[3], &fl[4], &fl[5], &fl[6], &fl[7], &fl[8], &fl[9]); err != nil {
			return nil, fmt.Errorf("duckdb: provenance: %w", err)
		}
		p.ObservedAt, p.Stars = p.ObservedAt.UTC(), int(stars)
		for _, x := range []struct {
			dst *time.Time
			src sql.NullTime
		}{{&p.OwnerCreatedAt, oc}, {&p.OwnerObservedAt, oo}, {&p.CreatedAt, cr}, {&p.PushedAt, pu}, {&p.CommitsObservedAt, co}, {&p.LastCommitAt, lc}} {
			if x.src.Valid {
				*x.dst = x.src.Time.UTC()
			}
		}
		f := &p.Flags
		for i, dst := range []**bool{&f.NoLicense, &f.SingleAuthor90d, &f.NoCommits90d, &f.RepoUnder30d, &f.StaleOver1y,
			&f.CommitCapHit, &f.Archived, &f.Fork, &f.OwnerOlderThan1y, &f.StarsGE100} {
			if fl[i].Valid {
				b := fl[i].Bool
				*dst = &b
			}
		}
		out = append(out, p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: provenance: %w", err)
	}
	return out, nil
}
