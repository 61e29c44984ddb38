-- 0003_analyst_views: the views analysts' SQL reads (sql/examples), with the
-- same names, columns and meaning on DuckDB, so one SQL text runs on both
-- engines. Each shows one row per id whatever merges have run (FINAL; for
-- health_checks also the last write of an id, LIMIT 1 BY id on _ver) and has:
--   observed_at_ms  Int64, Unix milliseconds, UTC
--   observed_at     DateTime (second precision)
--   observed_day    Date, the UTC day of observed_at_ms (toDate of a day
--                   number, so it does not depend on the server's time zone)
-- Booleans are UInt8 here and BOOLEAN on DuckDB: compare them with = 1.
CREATE VIEW IF NOT EXISTS health_checks_v AS
SELECT id, server, remote_url, observed_at, observed_at_ms, toDate(intDiv(observed_at_ms, 86400000)) AS observed_day,
       transport, outcome, error_class, http_status, latency_ms, auth_kind, protocol_version,
       tool_count, tools_listed, check_json
FROM health_checks FINAL
ORDER BY _ver DESC
LIMIT 1 BY id;

CREATE VIEW IF NOT EXISTS drift_events_v AS
SELECT id, server, namespace, kind, version, before, after, observed_at,
       observed_at_ms, toDate(intDiv(observed_at_ms, 86400000)) AS observed_day,
       version_bump, snapshot_id
FROM drift_events FINAL;
