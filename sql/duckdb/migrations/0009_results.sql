-- 0009_results: what the processors conclude ("results are data",
-- ARCHITECTURE.md; sql/store.ResultStore), the Merkle leaf hash of every
-- trust record, and the analyst views over them. Same table, column and
-- view names as ClickHouse's 0009_results.sql.
--
-- Each table is keyed by its PRIMARY KEY; a second write of a key changes
-- nothing visible and the last write wins on the other columns (INSERT …
-- ON CONFLICT DO UPDATE). Times are TIMESTAMP (UTC, ms) with a VIRTUAL
-- *_ms twin, epoch_ms(…), as in 0002. state is the processor's message
-- verbatim (schema.DriftState, schema.IncidentState, …) as JSON.
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
-- its publication ('' on rows stored before this migration; DuckDB cannot
-- add a column with a NOT NULL constraint, the Go side never writes NULL).
--
-- Views (one row per key, plus as_of_day, the UTC day of as_of):
-- drift_states_v, incident_states_v, owner_bursts_v (one row per
-- (namespace, day): the greatest as_of), provenance_signals_v, base_rates_v,
-- provenance_gate_v, registry_loads_v.

CREATE TABLE IF NOT EXISTS drift_states (
    server          VARCHAR   NOT NULL,
    namespace       VARCHAR   NOT NULL,
    as_of           TIMESTAMP NOT NULL,
    score           DOUBLE,
    strong_negative BOOLEAN   NOT NULL,
    events          INTEGER   NOT NULL,
    state           VARCHAR   NOT NULL,
    as_of_ms        BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL,
    PRIMARY KEY (server, as_of)
);

CREATE TABLE IF NOT EXISTS incident_states (
    server    VARCHAR   NOT NULL,
    as_of     TIMESTAMP NOT NULL,
    score     DOUBLE,
    incidents INTEGER   NOT NULL,
    counted   INTEGER   NOT NULL,
    state     VARCHAR   NOT NULL,
    as_of_ms  BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL,
    PRIMARY KEY (server, as_of)
);

CREATE TABLE IF NOT EXISTS owner_bursts (
    namespace              VARCHAR   NOT NULL,
    day                    DATE      NOT NULL,
    as_of                  TIMESTAMP NOT NULL,
    flagged                BOOLEAN   NOT NULL,
    recurring_burst        BOOLEAN   NOT NULL,
    first_window_burst     BOOLEAN   NOT NULL,
    windows_over_threshold INTEGER   NOT NULL,
    current_window_new     INTEGER   NOT NULL,
    state                  VARCHAR   NOT NULL,
    as_of_ms               BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL,
    PRIMARY KEY (day, namespace, as_of)
);

-- provenance_signals: the flags are false when not observable (observed
-- and resolved say which).
CREATE TABLE IF NOT EXISTS provenance_signals (
    server                        VARCHAR   NOT NULL,
    as_of                         TIMESTAMP NOT NULL,
    repo                          VARCHAR   NOT NULL,
    repo_url                      VARCHAR   NOT NULL,
    score                         DOUBLE,
    reason                        VARCHAR   NOT NULL,
    observed                      BOOLEAN   NOT NULL,
    resolved                      BOOLEAN   NOT NULL,
    flag_fork                     BOOLEAN   NOT NULL,
    flag_archived                 BOOLEAN   NOT NULL,
    flag_no_license               BOOLEAN   NOT NULL,
    flag_repo_under_30d           BOOLEAN   NOT NULL,
    flag_namespace_owner_mismatch BOOLEAN   NOT NULL,
    flag_late_gt_30d              BOOLEAN   NOT NULL,
    flag_late_1_30d               BOOLEAN   NOT NULL,
    flag_no_commits_90d           BOOLEAN   NOT NULL,
    flag_single_author_90d        BOOLEAN   NOT NULL,
    flag_commit_cap_hit           BOOLEAN   NOT NULL,
    flag_co_registration          BOOLEAN   NOT NULL,
    flag_one_repo_many            BOOLEAN   NOT NULL,
    flag_verified_90d             BOOLEAN   NOT NULL,
    flag_stars_ge_100             BOOLEAN   NOT NULL,
    flag_owner_older_than_1y      BOOLEAN   NOT NULL,
    state                         VARCHAR   NOT NULL,
    as_of_ms                      BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL,
    PRIMARY KEY (server, as_of)
);

-- base_rates: flagged of n is the live count; live, pinned and delta_pp
-- are NULL when unknown.
CREATE TABLE IF NOT EXISTS base_rates (
    flag           VARCHAR   NOT NULL,
    as_of          TIMESTAMP NOT NULL,
    denominator    VARCHAR   NOT NULL,
    flagged        BIGINT    NOT NULL,
    n              BIGINT    NOT NULL,
    live           DOUBLE,
    pinned         DOUBLE,
    delta_pp       DOUBLE,
    scored         BOOLEAN   NOT NULL,
    direction      VARCHAR   NOT NULL,
    method_version VARCHAR   NOT NULL,
    state          VARCHAR   NOT NULL,
    as_of_ms       BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL,
    PRIMARY KEY (as_of, flag)
);

CREATE TABLE IF NOT EXISTS provenance_gate (
    as_of        TIMESTAMP NOT NULL PRIMARY KEY,
    open         BOOLEAN   NOT NULL,
    coverage_pct DOUBLE    NOT NULL,
    resolvable   BIGINT    NOT NULL,
    fresh        BIGINT    NOT NULL,
    observed     BIGINT    NOT NULL,
    state        VARCHAR   NOT NULL,
    as_of_ms     BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL
);

CREATE TABLE IF NOT EXISTS registry_loads (
    snapshot_id    VARCHAR   NOT NULL PRIMARY KEY,
    observed_at    TIMESTAMP NOT NULL,
    entries        BIGINT    NOT NULL,
    observed_at_ms BIGINT    GENERATED ALWAYS AS (epoch_ms(observed_at)) VIRTUAL
);

ALTER TABLE trust_records ADD COLUMN IF NOT EXISTS leaf_hash VARCHAR DEFAULT '';

CREATE OR REPLACE VIEW drift_states_v AS
SELECT server, namespace, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       score, strong_negative, events, state
FROM drift_states;

CREATE OR REPLACE VIEW incident_states_v AS
SELECT server, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       score, incidents, counted, state
FROM incident_states;

CREATE OR REPLACE VIEW owner_bursts_v AS
SELECT namespace, day, as_of, as_of_ms, flagged, recurring_burst, first_window_burst,
       windows_over_threshold, current_window_new, state
FROM owner_bursts
QUALIFY row_number() OVER (PARTITION BY namespace, day ORDER BY as_of DESC) = 1;

CREATE OR REPLACE VIEW provenance_signals_v AS
SELECT server, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       repo, repo_url, score, reason, observed, resolved,
       flag_fork, flag_archived, flag_no_license, flag_repo_under_30d, flag_namespace_owner_mismatch,
       flag_late_gt_30d, flag_late_1_30d, flag_no_commits_90d, flag_single_author_90d, flag_commit_cap_hit,
       flag_co_registration, flag_one_repo_many, flag_verified_90d, flag_stars_ge_100, flag_owner_older_than_1y,
       state
FROM provenance_signals;

CREATE OR REPLACE VIEW base_rates_v AS
SELECT flag, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       denominator, flagged, n, live, pinned, delta_pp, scored, direction, method_version, state
FROM base_rates;

CREATE OR REPLACE VIEW provenance_gate_v AS
SELECT as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       open, coverage_pct, resolvable, fresh, observed, state
FROM provenance_gate;

CREATE OR REPLACE VIEW registry_loads_v AS
SELECT snapshot_id, observed_at, observed_at_ms, CAST(observed_at AS DATE) AS observed_day, entries
FROM registry_loads;
