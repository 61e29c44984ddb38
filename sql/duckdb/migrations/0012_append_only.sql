-- 0012_append_only: the histories become append-only, deduplicated on read,
-- as ClickHouse's ReplacingMergeTree tables already are.
--
-- Why: a keyed upsert (PRIMARY KEY + INSERT … ON CONFLICT DO UPDATE, plus
-- health_checks' secondary index) probes an ART index per row on every
-- write, and the index of a month of health checks (~15 M ids) alone would
-- outgrow the embedded run's memory. The tables below take DuckDB's
-- appender straight into the table instead (sql/duckdb/history.go).
--
-- Every history table gets _seq BIGINT, the write's sequence number
-- (Store.nextSeq: increasing with every write, across restarts). A
-- redelivered or rewritten row is a second row; reads keep one row per key:
--   health_checks, drift_events        per id, the greatest _seq (last write)
--   provenance                         per id, the greatest (stamp, _seq): the
--                                      fuller re-publication wins (store.Provenance.Stamp)
--   drift_states, incident_states,
--   provenance_signals                 per (server, as_of), the greatest _seq
--   owner_bursts                       per (day, namespace, as_of), the greatest _seq
--   base_rates                         per (as_of, flag), the greatest _seq
--   provenance_gate                    per as_of, the greatest _seq
--   registry_loads                     per snapshot_id, the greatest _seq
-- The *_v views below apply exactly that, so analysts' SQL (sql/examples)
-- and exports still see each key once; the Go reads (duckdb.go,
-- results.go, provenance.go) apply the same rule. Rows already stored keep
-- _seq 0: they were unique, and any later write wins over them.
--
-- DuckDB cannot drop a PRIMARY KEY, so each table is rebuilt: created under
-- a new name, filled from the old one, the old one dropped (with its
-- indexes) and the new one renamed. Column names and order are unchanged,
-- _seq comes last before the VIRTUAL columns.

CREATE TABLE health_checks_append (
    id               VARCHAR   NOT NULL,
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
    _seq             BIGINT    NOT NULL,
    observed_at_ms   BIGINT    GENERATED ALWAYS AS (epoch_ms(observed_at)) VIRTUAL
);
INSERT INTO health_checks_append (id, server, remote_url, observed_at, transport, outcome, error_class, http_status,
    latency_ms, auth_kind, protocol_version, tool_count, tools_listed, check_json, _seq)
SELECT id, server, remote_url, observed_at, transport, outcome, error_class, http_status,
    latency_ms, auth_kind, protocol_version, tool_count, tools_listed, check_json, 0
FROM health_checks;
DROP TABLE health_checks;
ALTER TABLE health_checks_append RENAME TO health_checks;

CREATE TABLE drift_events_append (
    id           VARCHAR   NOT NULL,
    server       VARCHAR   NOT NULL,
    namespace    VARCHAR   NOT NULL,
    kind         VARCHAR   NOT NULL,
    version      VARCHAR   NOT NULL,
    before       VARCHAR   NOT NULL,
    after        VARCHAR   NOT NULL,
    observed_at  TIMESTAMP NOT NULL,
    version_bump BOOLEAN   NOT NULL,
    snapshot_id  VARCHAR   NOT NULL,
    _seq         BIGINT    NOT NULL
);
INSERT INTO drift_events_append (id, server, namespace, kind, version, before, after, observed_at, version_bump, snapshot_id, _seq)
SELECT id, server, namespace, kind, version, before, after, observed_at, version_bump, snapshot_id, 0 FROM drift_events;
DROP TABLE drift_events;
ALTER TABLE drift_events_append RENAME TO drift_events;

CREATE TABLE provenance_append (
    id                       VARCHAR   NOT NULL,
    repo                     VARCHAR   NOT NULL,
    observed_at              TIMESTAMP NOT NULL,
    status                   VARCHAR   NOT NULL,
    http_status              INTEGER   NOT NULL,
    not_modified             BOOLEAN   NOT NULL,
    full_name                VARCHAR   NOT NULL,
    renamed_to               VARCHAR   NOT NULL,
    owner_login              VARCHAR   NOT NULL,
    owner_type               VARCHAR   NOT NULL,
    owner_created_at         TIMESTAMP,
    owner_observed_at        TIMESTAMP,
    created_at               TIMESTAMP,
    pushed_at                TIMESTAMP,
    stars                    BIGINT    NOT NULL,
    fork                     BOOLEAN   NOT NULL,
    archived                 BOOLEAN   NOT NULL,
    disabled                 BOOLEAN   NOT NULL,
    license_spdx             VARCHAR   NOT NULL,
    commits_fetched          BOOLEAN   NOT NULL,
    commits_observed_at      TIMESTAMP,
    commits_count            INTEGER   NOT NULL,
    authors                  INTEGER   NOT NULL,
    verified                 INTEGER   NOT NULL,
    empty                    BOOLEAN   NOT NULL,
    cap_hit                  BOOLEAN   NOT NULL,
    last_commit_at           TIMESTAMP,
    flag_no_license          BOOLEAN,
    flag_single_author_90d   BOOLEAN,
    flag_no_commits_90d      BOOLEAN,
    flag_repo_under_30d      BOOLEAN,
    flag_stale_over_1y       BOOLEAN,
    flag_commit_cap_hit      BOOLEAN,
    flag_archived            BOOLEAN,
    flag_fork                BOOLEAN,
    flag_owner_older_than_1y BOOLEAN,
    flag_stars_ge_100        BOOLEAN,
    _seq                     BIGINT    NOT NULL
);
INSERT INTO provenance_append SELECT *, 0 FROM provenance;
DROP TABLE provenance;
ALTER TABLE provenance_append RENAME TO provenance;

CREATE TABLE drift_states_append (
    server          VARCHAR   NOT NULL,
    namespace       VARCHAR   NOT NULL,
    as_of           TIMESTAMP NOT NULL,
    score           DOUBLE,
    strong_negative BOOLEAN   NOT NULL,
    events          INTEGER   NOT NULL,
    state           VARCHAR   NOT NULL,
    _seq            BIGINT    NOT NULL,
    as_of_ms        BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL
);
INSERT INTO drift_states_append (server, namespace, as_of, score, strong_negative, events, state, _seq)
SELECT server, namespace, as_of, score, strong_negative, events, state, 0 FROM drift_states;
DROP TABLE drift_states;
ALTER TABLE drift_states_append RENAME TO drift_states;

CREATE TABLE incident_states_append (
    server    VARCHAR   NOT NULL,
    as_of     TIMESTAMP NOT NULL,
    score     DOUBLE,
    incidents INTEGER   NOT NULL,
    counted   INTEGER   NOT NULL,
    state     VARCHAR   NOT NULL,
    _seq      BIGINT    NOT NULL,
    as_of_ms  BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL
);
INSERT INTO incident_states_append (server, as_of, score, incidents, counted, state, _seq)
SELECT server, as_of, score, incidents, counted, state, 0 FROM incident_states;
DROP TABLE incident_states;
ALTER TABLE incident_states_append RENAME TO incident_states;

CREATE TABLE owner_bursts_append (
    namespace              VARCHAR   NOT NULL,
    day                    DATE      NOT NULL,
    as_of                  TIMESTAMP NOT NULL,
    flagged                BOOLEAN   NOT NULL,
    recurring_burst        BOOLEAN   NOT NULL,
    first_window_burst     BOOLEAN   NOT NULL,
    windows_over_threshold INTEGER   NOT NULL,
    current_window_new     INTEGER   NOT NULL,
    state                  VARCHAR   NOT NULL,
    _seq                   BIGINT    NOT NULL,
    as_of_ms               BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL
);
INSERT INTO owner_bursts_append (namespace, day, as_of, flagged, recurring_burst, first_window_burst,
    windows_over_threshold, current_window_new, state, _seq)
SELECT namespace, day, as_of, flagged, recurring_burst, first_window_burst,
    windows_over_threshold, current_window_new, state, 0 FROM owner_bursts;
DROP TABLE owner_bursts;
ALTER TABLE owner_bursts_append RENAME TO owner_bursts;

CREATE TABLE provenance_signals_append (
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
    _seq                          BIGINT    NOT NULL,
    as_of_ms                      BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL
);
INSERT INTO provenance_signals_append (server, as_of, repo, repo_url, score, reason, observed, resolved,
    flag_fork, flag_archived, flag_no_license, flag_repo_under_30d, flag_namespace_owner_mismatch,
    flag_late_gt_30d, flag_late_1_30d, flag_no_commits_90d, flag_single_author_90d, flag_commit_cap_hit,
    flag_co_registration, flag_one_repo_many, flag_verified_90d, flag_stars_ge_100, flag_owner_older_than_1y, state, _seq)
SELECT server, as_of, repo, repo_url, score, reason, observed, resolved,
    flag_fork, flag_archived, flag_no_license, flag_repo_under_30d, flag_namespace_owner_mismatch,
    flag_late_gt_30d, flag_late_1_30d, flag_no_commits_90d, flag_single_author_90d, flag_commit_cap_hit,
    flag_co_registration, flag_one_repo_many, flag_verified_90d, flag_stars_ge_100, flag_owner_older_than_1y, state, 0
FROM provenance_signals;
DROP TABLE provenance_signals;
ALTER TABLE provenance_signals_append RENAME TO provenance_signals;

CREATE TABLE base_rates_append (
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
    _seq           BIGINT    NOT NULL,
    as_of_ms       BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL
);
INSERT INTO base_rates_append (flag, as_of, denominator, flagged, n, live, pinned, delta_pp, scored, direction, method_version, state, _seq)
SELECT flag, as_of, denominator, flagged, n, live, pinned, delta_pp, scored, direction, method_version, state, 0 FROM base_rates;
DROP TABLE base_rates;
ALTER TABLE base_rates_append RENAME TO base_rates;

CREATE TABLE provenance_gate_append (
    as_of        TIMESTAMP NOT NULL,
    open         BOOLEAN   NOT NULL,
    coverage_pct DOUBLE    NOT NULL,
    resolvable   BIGINT    NOT NULL,
    fresh        BIGINT    NOT NULL,
    observed     BIGINT    NOT NULL,
    state        VARCHAR   NOT NULL,
    _seq         BIGINT    NOT NULL,
    as_of_ms     BIGINT    GENERATED ALWAYS AS (epoch_ms(as_of)) VIRTUAL
);
INSERT INTO provenance_gate_append (as_of, open, coverage_pct, resolvable, fresh, observed, state, _seq)
SELECT as_of, open, coverage_pct, resolvable, fresh, observed, state, 0 FROM provenance_gate;
DROP TABLE provenance_gate;
ALTER TABLE provenance_gate_append RENAME TO provenance_gate;

CREATE TABLE registry_loads_append (
    snapshot_id    VARCHAR   NOT NULL,
    observed_at    TIMESTAMP NOT NULL,
    entries        BIGINT    NOT NULL,
    _seq           BIGINT    NOT NULL,
    observed_at_ms BIGINT    GENERATED ALWAYS AS (epoch_ms(observed_at)) VIRTUAL
);
INSERT INTO registry_loads_append (snapshot_id, observed_at, entries, _seq)
SELECT snapshot_id, observed_at, entries, 0 FROM registry_loads;
DROP TABLE registry_loads;
ALTER TABLE registry_loads_append RENAME TO registry_loads;

-- The views: the same names and columns as before (and as ClickHouse's),
-- one row per key by the rules above.
CREATE OR REPLACE VIEW health_checks_v AS
SELECT id, server, remote_url, observed_at, observed_at_ms, CAST(observed_at AS DATE) AS observed_day,
       transport, outcome, error_class, http_status, latency_ms, auth_kind, protocol_version,
       tool_count, tools_listed, check_json
FROM health_checks
QUALIFY row_number() OVER (PARTITION BY id ORDER BY _seq DESC) = 1;

CREATE OR REPLACE VIEW drift_events_v AS
SELECT id, server, namespace, kind, version, before, after, observed_at,
       epoch_ms(observed_at) AS observed_at_ms, CAST(observed_at AS DATE) AS observed_day,
       version_bump, snapshot_id
FROM drift_events
QUALIFY row_number() OVER (PARTITION BY id ORDER BY _seq DESC) = 1;

CREATE OR REPLACE VIEW provenance_v AS
SELECT id, repo, observed_at, epoch_ms(observed_at) AS observed_at_ms, CAST(observed_at AS DATE) AS observed_day,
       status, http_status, not_modified, full_name, renamed_to, owner_login, owner_type,
       owner_created_at, epoch_ms(owner_created_at) AS owner_created_at_ms,
       owner_observed_at, epoch_ms(owner_observed_at) AS owner_observed_at_ms,
       created_at, epoch_ms(created_at) AS created_at_ms,
       pushed_at, epoch_ms(pushed_at) AS pushed_at_ms,
       stars, fork, archived, disabled, license_spdx,
       commits_fetched, commits_observed_at, epoch_ms(commits_observed_at) AS commits_observed_at_ms,
       commits_count, authors, verified, empty, cap_hit,
       last_commit_at, epoch_ms(last_commit_at) AS last_commit_at_ms,
       flag_no_license, flag_single_author_90d, flag_no_commits_90d, flag_repo_under_30d, flag_stale_over_1y,
       flag_commit_cap_hit, flag_archived, flag_fork, flag_owner_older_than_1y, flag_stars_ge_100
FROM provenance
QUALIFY row_number() OVER (PARTITION BY id ORDER BY greatest(observed_at, coalesce(commits_observed_at, observed_at),
    coalesce(owner_observed_at, observed_at)) DESC, _seq DESC) = 1;

CREATE OR REPLACE VIEW drift_states_v AS
SELECT server, namespace, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       score, strong_negative, events, state
FROM drift_states
QUALIFY row_number() OVER (PARTITION BY server, as_of ORDER BY _seq DESC) = 1;

CREATE OR REPLACE VIEW incident_states_v AS
SELECT server, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       score, incidents, counted, state
FROM incident_states
QUALIFY row_number() OVER (PARTITION BY server, as_of ORDER BY _seq DESC) = 1;

-- One row per (namespace, day): the greatest as_of, and of its rows the last write.
CREATE OR REPLACE VIEW owner_bursts_v AS
SELECT namespace, day, as_of, as_of_ms, flagged, recurring_burst, first_window_burst,
       windows_over_threshold, current_window_new, state
FROM owner_bursts
QUALIFY row_number() OVER (PARTITION BY namespace, day ORDER BY as_of DESC, _seq DESC) = 1;

CREATE OR REPLACE VIEW provenance_signals_v AS
SELECT server, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       repo, repo_url, score, reason, observed, resolved,
       flag_fork, flag_archived, flag_no_license, flag_repo_under_30d, flag_namespace_owner_mismatch,
       flag_late_gt_30d, flag_late_1_30d, flag_no_commits_90d, flag_single_author_90d, flag_commit_cap_hit,
       flag_co_registration, flag_one_repo_many, flag_verified_90d, flag_stars_ge_100, flag_owner_older_than_1y,
       state
FROM provenance_signals
QUALIFY row_number() OVER (PARTITION BY server, as_of ORDER BY _seq DESC) = 1;

CREATE OR REPLACE VIEW base_rates_v AS
SELECT flag, as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       denominator, flagged, n, live, pinned, delta_pp, scored, direction, method_version, state
FROM base_rates
QUALIFY row_number() OVER (PARTITION BY as_of, flag ORDER BY _seq DESC) = 1;

CREATE OR REPLACE VIEW provenance_gate_v AS
SELECT as_of, as_of_ms, CAST(as_of AS DATE) AS as_of_day,
       open, coverage_pct, resolvable, fresh, observed, state
FROM provenance_gate
QUALIFY row_number() OVER (PARTITION BY as_of ORDER BY _seq DESC) = 1;

CREATE OR REPLACE VIEW registry_loads_v AS
SELECT snapshot_id, observed_at, observed_at_ms, CAST(observed_at AS DATE) AS observed_day, entries
FROM registry_loads
QUALIFY row_number() OVER (PARTITION BY snapshot_id ORDER BY _seq DESC) = 1;
