-- 0003_analyst_views: the views analysts' SQL reads (sql/examples), with the
-- same names, columns and meaning on ClickHouse, so one SQL text runs on both
-- engines. Each shows one row per id (ClickHouse needs FINAL for that; DuckDB
-- tables are keyed already) and adds:
--   observed_at_ms  BIGINT, Unix milliseconds, UTC
--   observed_day    DATE, the UTC day of observed_at
CREATE OR REPLACE VIEW health_checks_v AS
SELECT id, server, remote_url, observed_at, observed_at_ms, CAST(observed_at AS DATE) AS observed_day,
       transport, outcome, error_class, http_status, latency_ms, auth_kind, protocol_version,
       tool_count, tools_listed, check_json
FROM health_checks;

CREATE OR REPLACE VIEW drift_events_v AS
SELECT id, server, namespace, kind, version, before, after, observed_at,
       epoch_ms(observed_at) AS observed_at_ms, CAST(observed_at AS DATE) AS observed_day,
       version_bump, snapshot_id
FROM drift_events;
