-- 0010_admin_audit: every admin API call, accepted or refused
-- (store.AdminAudit, store.AdminStore), written by the API's admin gate and
-- read by GET /v1/admin/audit. Append-only: rows are keyed by a hash of
-- their content and never updated (ON CONFLICT DO NOTHING). Calls refused
-- before authentication are aggregated per (route, outcome, remote,
-- fingerprint, minute) by the API, so a burst of them leaves a bounded
-- number of rows (calls = at least this many calls of the key in the minute).
-- Column names equal ClickHouse's; called_at_ms is a VIRTUAL epoch_ms(called_at), as in 0004.
CREATE TABLE IF NOT EXISTS admin_audit (
    id          VARCHAR   NOT NULL PRIMARY KEY,
    called_at   TIMESTAMP NOT NULL,
    route       VARCHAR   NOT NULL,
    path        VARCHAR   NOT NULL,
    outcome     VARCHAR   NOT NULL,
    status      INTEGER   NOT NULL,
    remote      VARCHAR   NOT NULL,
    fingerprint VARCHAR   NOT NULL,
    who         VARCHAR   NOT NULL,
    calls       INTEGER   NOT NULL,
    called_at_ms BIGINT   GENERATED ALWAYS AS (epoch_ms(called_at)) VIRTUAL
);
CREATE INDEX IF NOT EXISTS admin_audit_at ON admin_audit (called_at);
