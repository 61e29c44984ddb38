-- 0007_provenance: GitHub observations (store.Provenance), one row per
-- observation id, written by the provenance sink (processors/history,
-- topic provenance.obs), and the analyst view provenance_v (same columns as
-- DuckDB's).
--
-- Conventions of 0001: Int64 Unix ms (UTC) *_ms columns with DateTime
-- ALIASes; booleans UInt8. Unknown times are NULL (Nullable(Int64)): owner
-- not looked up, commits not fetched, no commit seen.
--
-- flag_* are derived from the observation alone, at its observed_at, with
-- processors/provenance.FlagsOf's definitions; NULL where the observation
-- cannot say (repo not resolved; commit flags before the commits were
-- fetched; owner_older_than_1y before the owner was looked up).
--
-- _ver = 2^62 + the latest of observed_at_ms, commits_observed_at_ms and
-- owner_observed_at_ms (store.Provenance.Stamp): a commit fetch or an owner
-- lookup re-publishes its repo observation under the same id, and must win
-- whatever the arrival order.
-- The id is "github:<repo>@<time>", so ORDER BY id also clusters by repo.
CREATE TABLE IF NOT EXISTS provenance (
    id                       String,
    repo                     String,
    observed_at_ms           Int64,
    status                   String,
    http_status              Int32,
    not_modified             UInt8,
    full_name                String,
    renamed_to               String,
    owner_login              String,
    owner_type               String,
    owner_created_at_ms      Nullable(Int64),
    owner_observed_at_ms     Nullable(Int64),
    created_at_ms            Nullable(Int64),
    pushed_at_ms             Nullable(Int64),
    stars                    Int64,
    fork                     UInt8,
    archived                 UInt8,
    disabled                 UInt8,
    license_spdx             String,
    commits_fetched          UInt8,
    commits_observed_at_ms   Nullable(Int64),
    commits_count            Int32,
    authors                  Int32,
    verified                 Int32,
    empty                    UInt8,
    cap_hit                  UInt8,
    last_commit_at_ms        Nullable(Int64),
    flag_no_license          Nullable(UInt8),
    flag_single_author_90d   Nullable(UInt8),
    flag_no_commits_90d      Nullable(UInt8),
    flag_repo_under_30d      Nullable(UInt8),
    flag_stale_over_1y       Nullable(UInt8),
    flag_commit_cap_hit      Nullable(UInt8),
    flag_archived            Nullable(UInt8),
    flag_fork                Nullable(UInt8),
    flag_owner_older_than_1y Nullable(UInt8),
    flag_stars_ge_100        Nullable(UInt8),
    _ver                     UInt64,
    observed_at              DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000))
) ENGINE = ReplacingMergeTree(_ver)
ORDER BY id;

-- provenance_v: one row per id whatever merges have run (FINAL), with
-- observed_day (the UTC day of observed_at_ms, a day number so it does not
-- depend on the server's time zone) and DateTime copies of the ms columns.
CREATE VIEW IF NOT EXISTS provenance_v AS
SELECT id, repo, observed_at, observed_at_ms, toDate(intDiv(observed_at_ms, 86400000)) AS observed_day,
       status, http_status, not_modified, full_name, renamed_to, owner_login, owner_type,
       toDateTime(intDiv(owner_created_at_ms, 1000)) AS owner_created_at, owner_created_at_ms,
       toDateTime(intDiv(owner_observed_at_ms, 1000)) AS owner_observed_at, owner_observed_at_ms,
       toDateTime(intDiv(created_at_ms, 1000)) AS created_at, created_at_ms,
       toDateTime(intDiv(pushed_at_ms, 1000)) AS pushed_at, pushed_at_ms,
       stars, fork, archived, disabled, license_spdx,
       commits_fetched, toDateTime(intDiv(commits_observed_at_ms, 1000)) AS commits_observed_at, commits_observed_at_ms,
       commits_count, authors, verified, empty, cap_hit,
       toDateTime(intDiv(last_commit_at_ms, 1000)) AS last_commit_at, last_commit_at_ms,
       flag_no_license, flag_single_author_90d, flag_no_commits_90d, flag_repo_under_30d, flag_stale_over_1y,
       flag_commit_cap_hit, flag_archived, flag_fork, flag_owner_older_than_1y, flag_stars_ge_100
FROM provenance FINAL;
