-- 0006_review_approvals: admin approvals of popular-server review holds
-- (SPEC §4), sql/store.ReviewStore. A record held as review_pending whose
-- (server, publication_id) has a row here is served as the current record.
-- The last write of a key wins. Column names equal ClickHouse's;
-- approved_at_ms is a VIRTUAL epoch_ms(approved_at), as in 0004.
CREATE TABLE IF NOT EXISTS review_approvals (
    server         VARCHAR   NOT NULL,
    publication_id VARCHAR   NOT NULL,
    who            VARCHAR   NOT NULL,
    reason         VARCHAR   NOT NULL,
    approved_at    TIMESTAMP NOT NULL,
    approved_at_ms BIGINT    GENERATED ALWAYS AS (epoch_ms(approved_at)) VIRTUAL,
    PRIMARY KEY (server, publication_id)
);
