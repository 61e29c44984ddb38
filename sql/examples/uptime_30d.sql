-- uptime_30d: uptime per server over the 30 days before a reference instant.
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Replace
-- {{now_ms}} with the instant as Unix milliseconds (UTC); the window is
-- [now - 30 days, now): a check exactly at now is left for the next window.
--
--   checks          checks in the window that were attempted (outcome
--                   not_checked — no probe was made — says nothing about
--                   the server and is left out of every column)
--   up_checks       checks with outcome ok or auth_required
--   uptime          up_checks / checks, 0..1
--   p50_latency_ms  median initialize latency of the checks whose initialize
--                   was answered (latency_ms > 0); NULL when none was. On
--                   ClickHouse median() is exact up to 8192 checks per server
--                   in the window and sampled beyond.
--
-- auth_required counts as up: the server answered, and answered as a
-- correctly protected MCP endpoint should (401/403, usually with an OAuth
-- challenge). The prober holds no credentials, so that answer is the best
-- evidence of health it can get; counting it as down would mark every
-- authenticated server as permanently broken.
SELECT
    server,
    count(*) AS checks,
    sum(CASE WHEN outcome IN ('ok', 'auth_required') THEN 1 ELSE 0 END) AS up_checks,
    sum(CASE WHEN outcome IN ('ok', 'auth_required') THEN 1 ELSE 0 END) / count(*) AS uptime,
    median(CASE WHEN latency_ms > 0 THEN latency_ms END) AS p50_latency_ms
FROM health_checks_v
WHERE observed_at_ms >= {{now_ms}} - 2592000000
  AND observed_at_ms < {{now_ms}}
  AND outcome <> 'not_checked'
GROUP BY server
ORDER BY server
