-- 0007_provenance: GitHub observations (store.Provenance), one row per
-- observation id, written by the provenance sink (processors/history,
-- topic provenance.obs), and the analyst view provenance_v.
--
-- Column names equal ClickHouse's. Time columns are TIMESTAMP (UTC, ms);
-- the view adds *_ms (Unix ms) and observed_day. NULL times are unknown
-- (owner not looked up, commits not fetched, no commit seen).
--
-- flag_* are derived from the observation alone, at its observed_at, with
-- processors/provenance.FlagsOf's definitions: NULL where the observation
-- cannot say (repo not resolved; commit flags before the commits were
-- fetched; owner_older_than_1y before the owner was looked up).
--
-- The winner of an id is the latest of observed_at, commits_observed_at and
-- owner_observed_at (store.Provenance.Stamp): a commit fetch or an owner
-- lookup re-publishes its repo observation under the same id.
CREATE TABLE IF NOT EXISTS provenance (
    id                       VARCHAR   NOT NULL PRIMARY KEY,
    repo                     VARCHAR   NOT NULL,
    observed_at              TIMESTAMP NOT NULL,
    status                   VARCHAR   NOT NULL,
    http_status              INTEGER   NOT NULL,
    not_modified             BOOLEAN   NOT NULL,
    full_name                VARCHAR   NOT NULL,
    renamed_to               VARCHAR   NOT NULL,
    owner_login              VARCHAR   NOT NULL,
    owner_type               VARCHAR   NOT NULL,
    owner_created_at         TIMESTAMP,
    owner_observed_at        TIMESTAMP,
    created_at               TIMESTAMP,
    pushed_at                TIMESTAMP,
    stars                    BIGINT    NOT NULL,
    fork                     BOOLEAN   NOT NULL,
    archived                 BOOLEAN   NOT NULL,
    disabled                 BOOLEAN   NOT NULL,
    license_spdx             VARCHAR   NOT NULL,
    commits_fetched          BOOLEAN   NOT NULL,
    commits_observed_at      TIMESTAMP,
    commits_count            INTEGER   NOT NULL,
    authors                  INTEGER   NOT NULL,
    verified                 INTEGER   NOT NULL,
    empty                    BOOLEAN   NOT NULL,
    cap_hit                  BOOLEAN   NOT NULL,
    last_commit_at           TIMESTAMP,
    flag_no_license          BOOLEAN,
    flag_single_author_90d   BOOLEAN,
    flag_no_commits_90d      BOOLEAN,
    flag_repo_under_30d      BOOLEAN,
    flag_stale_over_1y       BOOLEAN,
    flag_commit_cap_hit      BOOLEAN,
    flag_archived            BOOLEAN,
    flag_fork                BOOLEAN,
    flag_owner_older_than_1y BOOLEAN,
    flag_stars_ge_100        BOOLEAN
);
CREATE INDEX IF NOT EXISTS provenance_repo ON provenance (repo, observed_at);

CREATE OR REPLACE VIEW provenance_v AS
SELECT id, repo, observed_at, epoch_ms(observed_at) AS observed_at_ms, CAST(observed_at AS DATE) AS observed_day,
       status, http_status, not_modified, full_name, renamed_to, owner_login, owner_type,
       owner_created_at, epoch_ms(owner_created_at) AS owner_created_at_ms,
       owner_observed_at, epoch_ms(owner_observed_at) AS owner_observed_at_ms,
       created_at, epoch_ms(created_at) AS created_at_ms,
       pushed_at, epoch_ms(pushed_at) AS pushed_at_ms,
       stars, fork, archived, disabled, license_spdx,
       commits_fetched, commits_observed_at, epoch_ms(commits_observed_at) AS commits_observed_at_ms,
       commits_count, authors, verified, empty, cap_hit,
       last_commit_at, epoch_ms(last_commit_at) AS last_commit_at_ms,
       flag_no_license, flag_single_author_90d, flag_no_commits_90d, flag_repo_under_30d, flag_stale_over_1y,
       flag_commit_cap_hit, flag_archived, flag_fork, flag_owner_older_than_1y, flag_stars_ge_100
FROM provenance;
