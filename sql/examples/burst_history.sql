-- burst_history: the namespaces flagged as owner bursts, per UTC day, over
-- the 30 days before a reference instant, with the kinds of burst and the
-- new servers of the current window.
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Replace
-- {{now_ms}} with the instant as Unix milliseconds (UTC). Reads
-- owner_bursts_v: one row per (namespace, day), the day's latest
-- evaluation (the greatest as_of). A namespace counts as flagged on a day
-- when that latest evaluation is flagged: an evaluation flagged in the
-- morning and cleared by the evening is not a flagged day.
--
-- The window is [now - 30 days, now) on the as_of of that latest
-- evaluation, and every evaluation of a day falls within the day, so with
-- a reference instant at 00:00 UTC the rows are the 30 whole days before
-- it; with another instant, today's partial day is left out until its
-- latest evaluation is before now.
--
--   day                     the UTC day (a DATE on DuckDB, a Date on ClickHouse)
--   namespace               the owner namespace (io.github.someone, com.example, …)
--   kinds                   recurring, first_window or recurring+first_window
--                           (SPEC §4 Owner burst: a recurring burst, or a burst in
--                           the namespace's first window)
--   windows_over_threshold  24 h windows over the threshold in the lookback
--   current_window_new      new servers in the window ending at that evaluation
SELECT
    day,
    namespace,
    CASE WHEN recurring_burst = 1 AND first_window_burst = 1 THEN 'recurring+first_window'
         WHEN recurring_burst = 1 THEN 'recurring'
         ELSE 'first_window' END AS kinds,
    windows_over_threshold,
    current_window_new
FROM owner_bursts_v
WHERE flagged = 1
  AND as_of_ms >= {{now_ms}} - 2592000000
  AND as_of_ms < {{now_ms}}
ORDER BY day, namespace
