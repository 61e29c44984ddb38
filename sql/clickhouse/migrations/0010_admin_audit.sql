-- 0010_admin_audit: every admin API call, accepted or refused
-- (store.AdminAudit, store.AdminStore), written by the API's admin gate and
-- read by GET /v1/admin/audit. Append-only: rows are keyed by a hash of
-- their content, so a rewritten id carries the same content and FINAL
-- collapses it. Calls refused before authentication are aggregated per
-- (route, outcome, remote, fingerprint, minute) by the API, so a burst of
-- them leaves a bounded number of rows.
-- Conventions of 0001: Int64 Unix milliseconds (UTC) with a DateTime ALIAS,
-- ReplacingMergeTree read with FINAL. Runs on ClickHouse 18.16.
CREATE TABLE IF NOT EXISTS admin_audit (
    id          String,
    called_at_ms Int64,
    route       String,
    path        String,
    outcome     String,
    status      Int32,
    remote      String,
    fingerprint String,
    who         String,
    calls       Int64,
    called_at   DateTime ALIAS toDateTime(intDiv(called_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (called_at_ms, id);
