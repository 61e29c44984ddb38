-- base_rate_trends: per UTC day over the 30 days before a reference
-- instant, per provenance flag: repos observed, repos the flag is defined
-- for, repos with the flag, and the share (the day's base rate).
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Replace
-- {{now_ms}} with the instant as Unix milliseconds (UTC); the window is
-- [now - 30 days, now). Reads provenance_v (one row per GitHub observation).
--
-- Each repo counts once per day, with its latest observation of that day
-- (argMax on observed_at_ms: one repo never has two observations in the
-- same millisecond, so the pick is deterministic). Days without any
-- observation have no rows.
--
--   repos_observed  repos with an observation that day (any status)
--   repos           of those, repos whose latest observation defines the
--                   flag (flag_* not NULL): resolved repos, and for the
--                   commit flags only those whose commits were fetched,
--                   for owner_older_than_1y those whose owner was looked
--                   up — the denominators of processors/provenance
--   flagged         repos with the flag set
--   share           flagged / repos, NULL when repos = 0
--
-- The flags are coded -1 (NULL), 0, 1 before argMax because aggregate
-- functions skip NULL arguments on ClickHouse: a NULL latest value must not
-- let an earlier non-NULL one through. The flag list is a UNION ALL
-- subquery joined with CROSS JOIN (no arrayJoin/UNNEST: neither is on both
-- engines).
SELECT
    observed_day AS day,
    flag,
    count(*) AS repos_observed,
    sum(CASE WHEN code >= 0 THEN 1 ELSE 0 END) AS repos,
    sum(CASE WHEN code = 1 THEN 1 ELSE 0 END) AS flagged,
    CASE WHEN sum(CASE WHEN code >= 0 THEN 1 ELSE 0 END) > 0
         THEN sum(CASE WHEN code = 1 THEN 1 ELSE 0 END) / sum(CASE WHEN code >= 0 THEN 1 ELSE 0 END) END AS share
FROM (
    SELECT
        observed_day,
        flag,
        CASE
            WHEN flag = 'no_license' THEN c_no_license
            WHEN flag = 'single_author_90d' THEN c_single_author_90d
            WHEN flag = 'no_commits_90d' THEN c_no_commits_90d
            WHEN flag = 'repo_under_30d' THEN c_repo_under_30d
            WHEN flag = 'stale_over_1y' THEN c_stale_over_1y
            WHEN flag = 'commit_cap_hit' THEN c_commit_cap_hit
            WHEN flag = 'archived' THEN c_archived
            WHEN flag = 'fork' THEN c_fork
            WHEN flag = 'owner_older_than_1y' THEN c_owner_older_than_1y
            ELSE c_stars_ge_100
        END AS code
    FROM (
        SELECT
            repo,
            observed_day,
            argMax(CASE WHEN flag_no_license IS NULL THEN -1 WHEN flag_no_license = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_no_license,
            argMax(CASE WHEN flag_single_author_90d IS NULL THEN -1 WHEN flag_single_author_90d = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_single_author_90d,
            argMax(CASE WHEN flag_no_commits_90d IS NULL THEN -1 WHEN flag_no_commits_90d = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_no_commits_90d,
            argMax(CASE WHEN flag_repo_under_30d IS NULL THEN -1 WHEN flag_repo_under_30d = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_repo_under_30d,
            argMax(CASE WHEN flag_stale_over_1y IS NULL THEN -1 WHEN flag_stale_over_1y = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_stale_over_1y,
            argMax(CASE WHEN flag_commit_cap_hit IS NULL THEN -1 WHEN flag_commit_cap_hit = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_commit_cap_hit,
            argMax(CASE WHEN flag_archived IS NULL THEN -1 WHEN flag_archived = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_archived,
            argMax(CASE WHEN flag_fork IS NULL THEN -1 WHEN flag_fork = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_fork,
            argMax(CASE WHEN flag_owner_older_than_1y IS NULL THEN -1 WHEN flag_owner_older_than_1y = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_owner_older_than_1y,
            argMax(CASE WHEN flag_stars_ge_100 IS NULL THEN -1 WHEN flag_stars_ge_100 = 1 THEN 1 ELSE 0 END, observed_at_ms) AS c_stars_ge_100
        FROM provenance_v
        WHERE observed_at_ms >= {{now_ms}} - 2592000000
          AND observed_at_ms < {{now_ms}}
        GROUP BY repo, observed_day
    ) AS latest
    CROSS JOIN (
        SELECT 'no_license' AS flag
        UNION ALL SELECT 'single_author_90d'
        UNION ALL SELECT 'no_commits_90d'
        UNION ALL SELECT 'repo_under_30d'
        UNION ALL SELECT 'stale_over_1y'
        UNION ALL SELECT 'commit_cap_hit'
        UNION ALL SELECT 'archived'
        UNION ALL SELECT 'fork'
        UNION ALL SELECT 'owner_older_than_1y'
        UNION ALL SELECT 'stars_ge_100'
    ) AS flags
) AS coded
GROUP BY observed_day, flag
ORDER BY day, flag
