-- 0006_review_approvals: admin approvals of popular-server review holds
-- (SPEC §4), sql/store.ReviewStore. A record held as review_pending whose
-- (server, publication_id) has a row here is served as the current record.
--
-- Conventions of 0001: Int64 Unix milliseconds (UTC) with a DateTime ALIAS,
-- ReplacingMergeTree read with FINAL; without a version column the last
-- inserted row of a key wins, like DuckDB's ON CONFLICT DO UPDATE. Runs on
-- ClickHouse 18.16.
CREATE TABLE IF NOT EXISTS review_approvals (
    server         String,
    publication_id String,
    who            String,
    reason         String,
    approved_at_ms Int64,
    approved_at    DateTime ALIAS toDateTime(intDiv(approved_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (server, publication_id);
