-- 0001_init: the logical tables of the store (see sql/store/store.go).
--
-- Must run on ClickHouse 18.16 and current releases: no LowCardinality,
-- DateTime64, TTL, Map/JSON. Times are Int64 milliseconds since the Unix
-- epoch, UTC (*_ms columns; a zero time.Time is -62135596800000); each has a
-- DateTime ALIAS (second precision) for analysts. Booleans are UInt8.
--
-- Every table is a ReplacingMergeTree read with FINAL, so reads never show
-- duplicates whether or not merges ran. _ver decides which duplicate wins;
-- on equal _ver (or none) the last inserted row wins, like DuckDB's
-- ON CONFLICT DO UPDATE. Statements are separated by a semicolon at the end
-- of a line; each must be idempotent (there are no DDL transactions).

-- registry_records: one row per (name, version, content_sha256); the earliest
-- observation wins: _ver = 2^62 - observed_at_ms.
CREATE TABLE IF NOT EXISTS registry_records (
    name            String,
    version         String,
    content_sha256  String,
    namespace       String,
    observed_at_ms  Int64,
    snapshot_id     String,
    status          String,
    is_latest       UInt8,
    published_at_ms Int64,
    updated_at_ms   Int64,
    description     String,
    title           String,
    server          String,
    _ver            UInt64,
    observed_at     DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000)),
    published_at    DateTime ALIAS toDateTime(intDiv(published_at_ms, 1000)),
    updated_at      DateTime ALIAS toDateTime(intDiv(updated_at_ms, 1000))
) ENGINE = ReplacingMergeTree(_ver)
ORDER BY (name, version, content_sha256);

-- servers_latest: candidates for each server's latest entry. Rows of the same
-- (name, published_at_ms, version, content_sha256) collapse to the latest
-- observation (_ver = 2^62 + observed_at_ms); reads then take, per name, the
-- greatest (observed_at_ms, published_at_ms, version, content_sha256) with
-- ORDER BY … LIMIT 1 BY name.
CREATE TABLE IF NOT EXISTS servers_latest (
    name            String,
    version         String,
    content_sha256  String,
    namespace       String,
    observed_at_ms  Int64,
    snapshot_id     String,
    status          String,
    is_latest       UInt8,
    published_at_ms Int64,
    updated_at_ms   Int64,
    description     String,
    title           String,
    server          String,
    _ver            UInt64,
    observed_at     DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000)),
    published_at    DateTime ALIAS toDateTime(intDiv(published_at_ms, 1000)),
    updated_at      DateTime ALIAS toDateTime(intDiv(updated_at_ms, 1000))
) ENGINE = ReplacingMergeTree(_ver)
ORDER BY (name, published_at_ms, version, content_sha256);

-- drift_events: keyed by the deterministic event id; the last write wins.
CREATE TABLE IF NOT EXISTS drift_events (
    id             String,
    server         String,
    namespace      String,
    kind           String,
    version        String,
    before         String,
    after          String,
    observed_at_ms Int64,
    version_bump   UInt8,
    snapshot_id    String,
    observed_at    DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY id;

-- snapshots: one row per applied snapshot; counts is the per-kind map as JSON
-- (read it with visitParamExtractUInt(counts, 'new_server')).
CREATE TABLE IF NOT EXISTS snapshots (
    id             String,
    mode           String,
    source         String,
    observed_at_ms Int64,
    entries        Int64,
    names          Int64,
    known_names    Int64,
    rejects        Int64,
    partial        UInt8,
    events         Int64,
    counts         String,
    observed_at    DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY id;

-- dlq: dead letters keyed by their deterministic id; the last write wins.
CREATE TABLE IF NOT EXISTS dlq (
    id             String,
    stage          String,
    source         String,
    reason         String,
    detail         String,
    key            String,
    observed_at_ms Int64,
    payload        String,
    payload_bytes  Int64,
    payload_sha256 String,
    observed_at    DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY id;

-- Reserved for later migrations (same names on DuckDB): health_checks,
-- provenance_obs, scan_findings, incidents, trust_records.
