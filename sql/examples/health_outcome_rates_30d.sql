-- health_outcome_rates_30d: the registry-wide base rate of each handshake
-- outcome over the 30 days before a reference instant.
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Replace
-- {{now_ms}} with the instant as Unix milliseconds (UTC); the window is
-- [now - 30 days, now). Run it for successive instants to see the trend
-- (e.g. one reference instant per week).
--
--   outcome   ok | auth_required | handshake_failed | unreachable
--   checks    attempted checks with this outcome in the window (not_checked
--             — no probe was made — is left out, as in uptime_30d.sql)
--   servers   distinct servers with at least one such check
--   share     checks / all attempted checks in the window, 0..1
SELECT
    outcome,
    count(*) AS checks,
    count(DISTINCT server) AS servers,
    count(*) / (SELECT count(*) FROM health_checks_v
                WHERE observed_at_ms >= {{now_ms}} - 2592000000
                  AND observed_at_ms < {{now_ms}}
                  AND outcome <> 'not_checked') AS share
FROM health_checks_v
WHERE observed_at_ms >= {{now_ms}} - 2592000000
  AND observed_at_ms < {{now_ms}}
  AND outcome <> 'not_checked'
GROUP BY outcome
ORDER BY outcome
