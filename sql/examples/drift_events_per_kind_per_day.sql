-- drift_events_per_kind_per_day: drift events per UTC day and kind over the
-- 30 days before a reference instant.
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Replace
-- {{now_ms}} with the instant as Unix milliseconds (UTC); the window is
-- [now - 30 days, now). Days without events have no row.
--
--   day      the UTC day (observed_day of drift_events_v: a DATE on DuckDB,
--            a Date on ClickHouse)
--   kind     the drift kind (new_server, version_added, …)
--   events   events of that kind that day
--   servers  distinct servers with such an event that day
SELECT
    observed_day AS day,
    kind,
    count(*) AS events,
    count(DISTINCT server) AS servers
FROM drift_events_v
WHERE observed_at_ms >= {{now_ms}} - 2592000000
  AND observed_at_ms < {{now_ms}}
GROUP BY observed_day, kind
ORDER BY day, kind
