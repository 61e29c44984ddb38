-- 0009_results: what the processors conclude ("results are data",
-- ARCHITECTURE.md; sql/store.ResultStore), the Merkle leaf hash of every
-- trust record, and the analyst views over them. Same table, column and
-- view names as DuckDB's 0009_results.sql.
--
-- Conventions of 0001: Int64 Unix milliseconds (UTC) *_ms columns with a
-- DateTime ALIAS; booleans UInt8; ReplacingMergeTree without a version
-- column, read with FINAL, so the last inserted row of a key wins (the
-- contract: a second write of a key changes nothing visible, the last write
-- wins on the other columns). The ORDER BY of each table is its key.
-- state is the processor's message verbatim (schema.DriftState,
-- schema.IncidentState, …) as JSON: read fields with visitParamExtract*.
--
-- Tables:
--   drift_states        (server, as_of)          the drift processor's state of a server
--   incident_states     (server, as_of)          a server's curated incidents as held at as_of
--   owner_bursts        (day, namespace, as_of)  a namespace's owner-burst evaluation on a UTC day
--   provenance_signals  (server, as_of)          a server's provenance flags and sub-score
--   base_rates          (as_of, flag)            one flag's live base rate beside the pinned one
--   provenance_gate     (as_of)                  the GitHub coverage gate
--   registry_loads      (snapshot_id)            every record of the snapshot is stored
-- and trust_records.leaf_hash: the RFC 6962 leaf hash (hex) of the record in
-- its publication ('' on rows stored before this migration), with its copy
-- publication_leaves keyed by (publication_id, server) (below).
--
-- Views (one row per key whatever merges have run, plus as_of_day, the UTC
-- day of as_of_ms from the day number, so it does not depend on the server
-- time zone): drift_states_v, incident_states_v, owner_bursts_v (one row per
-- (namespace, day): the greatest as_of), provenance_signals_v, base_rates_v,
-- provenance_gate_v, registry_loads_v.
--
-- 18.16 has no ADD COLUMN IF NOT EXISTS: the migration runner (Migrate)
-- runs an "ALTER TABLE t ADD COLUMN c …" statement only when
-- system.columns lacks the column, which keeps it idempotent.

CREATE TABLE IF NOT EXISTS drift_states (
    server          String,
    namespace       String,
    as_of_ms        Int64,
    score           Nullable(Float64),
    strong_negative UInt8,
    events          Int32,
    state           String,
    as_of           DateTime ALIAS toDateTime(intDiv(as_of_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (server, as_of_ms);

CREATE TABLE IF NOT EXISTS incident_states (
    server    String,
    as_of_ms  Int64,
    score     Nullable(Float64),
    incidents Int32,
    counted   Int32,
    state     String,
    as_of     DateTime ALIAS toDateTime(intDiv(as_of_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (server, as_of_ms);

-- owner_bursts: day first in the key, since reads go by day (the latest
-- day's flagged namespaces, a range of days).
CREATE TABLE IF NOT EXISTS owner_bursts (
    namespace              String,
    day                    Date,
    as_of_ms               Int64,
    flagged                UInt8,
    recurring_burst        UInt8,
    first_window_burst     UInt8,
    windows_over_threshold Int32,
    current_window_new     Int32,
    state                  String,
    as_of                  DateTime ALIAS toDateTime(intDiv(as_of_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (day, namespace, as_of_ms);

-- provenance_signals: the flags are false when not observable (observed
-- and resolved say which).
CREATE TABLE IF NOT EXISTS provenance_signals (
    server                        String,
    as_of_ms                      Int64,
    repo                          String,
    repo_url                      String,
    score                         Nullable(Float64),
    reason                        String,
    observed                      UInt8,
    resolved                      UInt8,
    flag_fork                     UInt8,
    flag_archived                 UInt8,
    flag_no_license               UInt8,
    flag_repo_under_30d           UInt8,
    flag_namespace_owner_mismatch UInt8,
    flag_late_gt_30d              UInt8,
    flag_late_1_30d               UInt8,
    flag_no_commits_90d           UInt8,
    flag_single_author_90d        UInt8,
    flag_commit_cap_hit           UInt8,
    flag_co_registration          UInt8,
    flag_one_repo_many            UInt8,
    flag_verified_90d             UInt8,
    flag_stars_ge_100             UInt8,
    flag_owner_older_than_1y      UInt8,
    state                         String,
    as_of                         DateTime ALIAS toDateTime(intDiv(as_of_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (server, as_of_ms);

-- base_rates: as_of first in the key, since the API reads the newest set.
-- flagged of n is the live count; live, pinned and delta_pp are NULL when
-- unknown.
CREATE TABLE IF NOT EXISTS base_rates (
    flag           String,
    as_of_ms       Int64,
    denominator    String,
    flagged        Int64,
    n              Int64,
    live           Nullable(Float64),
    pinned         Nullable(Float64),
    delta_pp       Nullable(Float64),
    scored         UInt8,
    direction      String,
    method_version String,
    state          String,
    as_of          DateTime ALIAS toDateTime(intDiv(as_of_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (as_of_ms, flag);

CREATE TABLE IF NOT EXISTS provenance_gate (
    as_of_ms     Int64,
    open         UInt8,
    coverage_pct Float64,
    resolvable   Int64,
    fresh        Int64,
    observed     Int64,
    state        String,
    as_of        DateTime ALIAS toDateTime(intDiv(as_of_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY as_of_ms;

CREATE TABLE IF NOT EXISTS registry_loads (
    snapshot_id    String,
    observed_at_ms Int64,
    entries        Int64,
    observed_at    DateTime ALIAS toDateTime(intDiv(observed_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY snapshot_id;

ALTER TABLE trust_records ADD COLUMN leaf_hash String DEFAULT '' AFTER content_sha256;

-- publication_leaves (ClickHouse only, for PublicationLeaves; not an
-- analyst table): the leaf hashes of trust_records keyed by
-- (publication_id, server), filled by ClickHouse on every insert into
-- trust_records (POPULATE copies the rows already there). trust_records is
-- ordered by (server, publication_id), so reading one publication there
-- scans every publication ever stored (0.2-0.7 s at 1M rows, growing with
-- the history); here it is one range of the primary key. Same replacing
-- rule as trust_records (the last inserted row of a key wins), read with
-- FINAL. Run migrations before the writers start: rows inserted while
-- POPULATE runs may be missed.
CREATE MATERIALIZED VIEW IF NOT EXISTS publication_leaves
ENGINE = ReplacingMergeTree
ORDER BY (publication_id, server)
POPULATE AS SELECT publication_id, server, leaf_hash FROM trust_records;

CREATE VIEW IF NOT EXISTS drift_states_v AS
SELECT server, namespace, as_of, as_of_ms, toDate(intDiv(as_of_ms, 86400000)) AS as_of_day,
       score, strong_negative, events, state
FROM drift_states FINAL;

CREATE VIEW IF NOT EXISTS incident_states_v AS
SELECT server, as_of, as_of_ms, toDate(intDiv(as_of_ms, 86400000)) AS as_of_day,
       score, incidents, counted, state
FROM incident_states FINAL;

CREATE VIEW IF NOT EXISTS owner_bursts_v AS
SELECT namespace, day, as_of, as_of_ms, flagged, recurring_burst, first_window_burst,
       windows_over_threshold, current_window_new, state
FROM owner_bursts FINAL
ORDER BY as_of_ms DESC
LIMIT 1 BY namespace, day;

CREATE VIEW IF NOT EXISTS provenance_signals_v AS
SELECT server, as_of, as_of_ms, toDate(intDiv(as_of_ms, 86400000)) AS as_of_day,
       repo, repo_url, score, reason, observed, resolved,
       flag_fork, flag_archived, flag_no_license, flag_repo_under_30d, flag_namespace_owner_mismatch,
       flag_late_gt_30d, flag_late_1_30d, flag_no_commits_90d, flag_single_author_90d, flag_commit_cap_hit,
       flag_co_registration, flag_one_repo_many, flag_verified_90d, flag_stars_ge_100, flag_owner_older_than_1y,
       state
FROM provenance_signals FINAL;

CREATE VIEW IF NOT EXISTS base_rates_v AS
SELECT flag, as_of, as_of_ms, toDate(intDiv(as_of_ms, 86400000)) AS as_of_day,
       denominator, flagged, n, live, pinned, delta_pp, scored, direction, method_version, state
FROM base_rates FINAL;

CREATE VIEW IF NOT EXISTS provenance_gate_v AS
SELECT as_of, as_of_ms, toDate(intDiv(as_of_ms, 86400000)) AS as_of_day,
       open, coverage_pct, resolvable, fresh, observed, state
FROM provenance_gate FINAL;

CREATE VIEW IF NOT EXISTS registry_loads_v AS
SELECT snapshot_id, observed_at, observed_at_ms, toDate(intDiv(observed_at_ms, 86400000)) AS observed_day, entries
FROM registry_loads FINAL;
