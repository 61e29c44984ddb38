-- 0002_health_checks: probe results (store.HealthCheck), one row per check id.
--
-- Same column names as DuckDB's health_checks; the time convention of 0001:
-- observed_at_ms is Int64 Unix milliseconds (UTC) with a DateTime ALIAS
-- observed_at (second precision). tools_listed is UInt8; check_json is the
-- whole check as JSON (read it with visitParamExtract*).
--
-- ORDER BY (server, remote_url, observed_at_ms, id) makes per-server history
-- reads a range of the primary key. The id is probe.CheckID(server, url,
-- observed_at), so it determines the other key columns and one id is one
-- row after the replacing merge. _ver is the write's sequence (writer clock,
-- ns, strictly increasing per process): ReplacingMergeTree(_ver) keeps the
-- last write of a key, and reads also take LIMIT 1 BY id ordered by _ver, so
-- a rewrite that moves an id to another remote_url or observed_at within the
-- same server still shows one row, the last written.
CREATE TABLE IF NOT EXISTS health_checks (
    id               String,
    server           String,
    remote_url       String,
    observed_at_ms   Int64,
    transport        String,
    outcome          String,
    error_class      String,
    http_status      Int32,
    latency_ms       Float64,
    auth_kind        String,
    protocol_version String,
    tool_count       Int32,
    tools_listed     UInt8,
    check_json       String,
    _ver             UInt64,
    observed_at      DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000))
) ENGINE = ReplacingMergeTree(_ver)
ORDER BY (server, remote_url, observed_at_ms, id);
