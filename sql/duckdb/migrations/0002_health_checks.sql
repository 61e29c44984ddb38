-- 0002_health_checks: probe results (store.HealthCheck), one row per check id;
-- the last write of an id wins (INSERT … ON CONFLICT (id) DO UPDATE).
--
-- Column names equal ClickHouse's health_checks, as analysts see them:
-- observed_at is a TIMESTAMP (UTC, ms precision) and observed_at_ms is a
-- VIRTUAL generated column, epoch_ms(observed_at), so integer millisecond
-- arithmetic (e.g. day buckets) reads the same on both engines. The check as
-- JSON is check_json (CHECK is a reserved word in DuckDB).
CREATE TABLE IF NOT EXISTS health_checks (
    id               VARCHAR   NOT NULL PRIMARY KEY,
    server           VARCHAR   NOT NULL,
    remote_url       VARCHAR   NOT NULL,
    observed_at      TIMESTAMP NOT NULL,
    transport        VARCHAR   NOT NULL,
    outcome          VARCHAR   NOT NULL,
    error_class      VARCHAR   NOT NULL,
    http_status      INTEGER   NOT NULL,
    latency_ms       DOUBLE    NOT NULL,
    auth_kind        VARCHAR   NOT NULL,
    protocol_version VARCHAR   NOT NULL,
    tool_count       INTEGER   NOT NULL,
    tools_listed     BOOLEAN   NOT NULL,
    check_json       VARCHAR   NOT NULL,
    observed_at_ms   BIGINT    GENERATED ALWAYS AS (epoch_ms(observed_at)) VIRTUAL
);
-- Per-server history, newest first (HealthChecks, LatestHealth).
CREATE INDEX IF NOT EXISTS health_checks_server ON health_checks (server, remote_url, observed_at);
