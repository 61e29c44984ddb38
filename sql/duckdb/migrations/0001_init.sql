-- 0001_init: the logical tables of the store (see sql/store/store.go).
-- Times are TIMESTAMP (UTC, truncated to milliseconds by the Go side); a zero
-- time.Time is stored as 0001-01-01 00:00:00.

-- registry_records: one row per (name, version, content_sha256); the row of
-- the earliest observation is kept (ties: the later write).
CREATE TABLE IF NOT EXISTS registry_records (
    name           VARCHAR   NOT NULL,
    version        VARCHAR   NOT NULL,
    content_sha256 VARCHAR   NOT NULL,
    namespace      VARCHAR   NOT NULL,
    observed_at    TIMESTAMP NOT NULL,
    snapshot_id    VARCHAR   NOT NULL,
    status         VARCHAR   NOT NULL,
    is_latest      BOOLEAN   NOT NULL,
    published_at   TIMESTAMP NOT NULL,
    updated_at     TIMESTAMP NOT NULL,
    description    VARCHAR   NOT NULL,
    title          VARCHAR   NOT NULL,
    server         VARCHAR   NOT NULL,
    PRIMARY KEY (name, version, content_sha256)
);

-- servers_latest: one row per server name, the is_latest record with the
-- greatest (observed_at, published_at, version, content_sha256).
CREATE TABLE IF NOT EXISTS servers_latest (
    name           VARCHAR   NOT NULL PRIMARY KEY,
    version        VARCHAR   NOT NULL,
    content_sha256 VARCHAR   NOT NULL,
    namespace      VARCHAR   NOT NULL,
    observed_at    TIMESTAMP NOT NULL,
    snapshot_id    VARCHAR   NOT NULL,
    status         VARCHAR   NOT NULL,
    is_latest      BOOLEAN   NOT NULL,
    published_at   TIMESTAMP NOT NULL,
    updated_at     TIMESTAMP NOT NULL,
    description    VARCHAR   NOT NULL,
    title          VARCHAR   NOT NULL,
    server         VARCHAR   NOT NULL
);
CREATE INDEX IF NOT EXISTS servers_latest_namespace ON servers_latest (namespace, name);

-- drift_events: keyed by the deterministic event id; the last write wins.
CREATE TABLE IF NOT EXISTS drift_events (
    id           VARCHAR   NOT NULL PRIMARY KEY,
    server       VARCHAR   NOT NULL,
    namespace    VARCHAR   NOT NULL,
    kind         VARCHAR   NOT NULL,
    version      VARCHAR   NOT NULL,
    before       VARCHAR   NOT NULL,
    after        VARCHAR   NOT NULL,
    observed_at  TIMESTAMP NOT NULL,
    version_bump BOOLEAN   NOT NULL,
    snapshot_id  VARCHAR   NOT NULL
);

-- snapshots: one row per applied snapshot; counts is the per-kind map as JSON.
CREATE TABLE IF NOT EXISTS snapshots (
    id          VARCHAR   NOT NULL PRIMARY KEY,
    mode        VARCHAR   NOT NULL,
    source      VARCHAR   NOT NULL,
    observed_at TIMESTAMP NOT NULL,
    entries     BIGINT    NOT NULL,
    names       BIGINT    NOT NULL,
    known_names BIGINT    NOT NULL,
    rejects     BIGINT    NOT NULL,
    partial     BOOLEAN   NOT NULL,
    events      BIGINT    NOT NULL,
    counts      VARCHAR   NOT NULL
);

-- dlq: dead letters keyed by their deterministic id; the last write wins.
CREATE TABLE IF NOT EXISTS dlq (
    id             VARCHAR   NOT NULL PRIMARY KEY,
    stage          VARCHAR   NOT NULL,
    source         VARCHAR   NOT NULL,
    reason         VARCHAR   NOT NULL,
    detail         VARCHAR   NOT NULL,
    key            VARCHAR   NOT NULL,
    observed_at    TIMESTAMP NOT NULL,
    payload        VARCHAR   NOT NULL,
    payload_bytes  BIGINT    NOT NULL,
    payload_sha256 VARCHAR   NOT NULL
);

-- Reserved for later migrations (same names on ClickHouse): health_checks,
-- provenance_obs, scan_findings, incidents, trust_records.
