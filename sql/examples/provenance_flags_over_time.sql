-- provenance_flags_over_time: per UTC day over the 30 days before a
-- reference instant and per provenance flag of the provenance processor
-- (its signals, not the raw GitHub observations of base_rate_trends.sql):
-- how many servers carried the flag.
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Replace
-- {{now_ms}} with the instant as Unix milliseconds (UTC); the window is
-- [now - 30 days, now). Reads provenance_signals_v (one row per (server,
-- as_of)).
--
-- Each server counts once per day, with its latest signal of that day
-- (argMax on as_of_ms: a server has one signal per as_of). Days without
-- any signal have no rows; a day with signals has a row for every flag.
--
--   day      the UTC day of the signals
--   flag     fork, archived, no_license, repo_under_30d,
--            namespace_owner_mismatch, late_gt_30d (repo created more
--            than 30 days after the listing), late_1_30d, no_commits_90d,
--            single_author_90d, commit_cap_hit, co_registration,
--            one_repo_many, verified_90d, stars_ge_100, owner_older_than_1y
--   servers  servers with a signal that day
--   flagged  of those, servers whose latest signal of the day has the flag
--            (a flag is false when it cannot be observed: compare with
--            observed/resolved in provenance_signals_v for coverage)
SELECT
    as_of_day AS day,
    flag,
    count(*) AS servers,
    sum(CASE
            WHEN flag = 'fork' THEN c_fork
            WHEN flag = 'archived' THEN c_archived
            WHEN flag = 'no_license' THEN c_no_license
            WHEN flag = 'repo_under_30d' THEN c_repo_under_30d
            WHEN flag = 'namespace_owner_mismatch' THEN c_namespace_owner_mismatch
            WHEN flag = 'late_gt_30d' THEN c_late_gt_30d
            WHEN flag = 'late_1_30d' THEN c_late_1_30d
            WHEN flag = 'no_commits_90d' THEN c_no_commits_90d
            WHEN flag = 'single_author_90d' THEN c_single_author_90d
            WHEN flag = 'commit_cap_hit' THEN c_commit_cap_hit
            WHEN flag = 'co_registration' THEN c_co_registration
            WHEN flag = 'one_repo_many' THEN c_one_repo_many
            WHEN flag = 'verified_90d' THEN c_verified_90d
            WHEN flag = 'stars_ge_100' THEN c_stars_ge_100
            ELSE c_owner_older_than_1y
        END) AS flagged
FROM (
    SELECT
        server,
        as_of_day,
        argMax(CASE WHEN flag_fork = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_fork,
        argMax(CASE WHEN flag_archived = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_archived,
        argMax(CASE WHEN flag_no_license = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_no_license,
        argMax(CASE WHEN flag_repo_under_30d = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_repo_under_30d,
        argMax(CASE WHEN flag_namespace_owner_mismatch = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_namespace_owner_mismatch,
        argMax(CASE WHEN flag_late_gt_30d = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_late_gt_30d,
        argMax(CASE WHEN flag_late_1_30d = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_late_1_30d,
        argMax(CASE WHEN flag_no_commits_90d = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_no_commits_90d,
        argMax(CASE WHEN flag_single_author_90d = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_single_author_90d,
        argMax(CASE WHEN flag_commit_cap_hit = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_commit_cap_hit,
        argMax(CASE WHEN flag_co_registration = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_co_registration,
        argMax(CASE WHEN flag_one_repo_many = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_one_repo_many,
        argMax(CASE WHEN flag_verified_90d = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_verified_90d,
        argMax(CASE WHEN flag_stars_ge_100 = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_stars_ge_100,
        argMax(CASE WHEN flag_owner_older_than_1y = 1 THEN 1 ELSE 0 END, as_of_ms) AS c_owner_older_than_1y
    FROM provenance_signals_v
    WHERE as_of_ms >= {{now_ms}} - 2592000000
      AND as_of_ms < {{now_ms}}
    GROUP BY server, as_of_day
) AS latest
CROSS JOIN (
    SELECT 'fork' AS flag
    UNION ALL SELECT 'archived'
    UNION ALL SELECT 'no_license'
    UNION ALL SELECT 'repo_under_30d'
    UNION ALL SELECT 'namespace_owner_mismatch'
    UNION ALL SELECT 'late_gt_30d'
    UNION ALL SELECT 'late_1_30d'
    UNION ALL SELECT 'no_commits_90d'
    UNION ALL SELECT 'single_author_90d'
    UNION ALL SELECT 'commit_cap_hit'
    UNION ALL SELECT 'co_registration'
    UNION ALL SELECT 'one_repo_many'
    UNION ALL SELECT 'verified_90d'
    UNION ALL SELECT 'stars_ge_100'
    UNION ALL SELECT 'owner_older_than_1y'
) AS flags
GROUP BY as_of_day, flag
ORDER BY day, flag
