-- 0004_trust: the scorer's publications (SPEC §5), sql/store.TrustStore.
--
-- trust_records: one row per server per publication; record is the sealed
-- record (RFC 8785 canonical JSON with content_sha256), the other columns are
-- copies analysts filter on. The last write of (server, publication_id) wins.
-- Column names equal ClickHouse's; computed_at_ms is a VIRTUAL
-- epoch_ms(computed_at), as in 0002.
CREATE TABLE IF NOT EXISTS trust_records (
    server           VARCHAR   NOT NULL,
    publication_id   VARCHAR   NOT NULL,
    computed_at      TIMESTAMP NOT NULL,
    score            DOUBLE,
    band             VARCHAR   NOT NULL,
    toolfinder_score INTEGER   NOT NULL,
    content_sha256   VARCHAR   NOT NULL,
    record           VARCHAR   NOT NULL,
    computed_at_ms   BIGINT    GENERATED ALWAYS AS (epoch_ms(computed_at)) VIRTUAL,
    PRIMARY KEY (server, publication_id)
);
CREATE INDEX IF NOT EXISTS trust_records_publication ON trust_records (publication_id, server);

-- publications: one signed header per scoring run, keyed by id.
CREATE TABLE IF NOT EXISTS publications (
    id             VARCHAR   NOT NULL PRIMARY KEY,
    method_version VARCHAR   NOT NULL,
    weights_sha256 VARCHAR   NOT NULL,
    record_count   BIGINT    NOT NULL,
    merkle_root    VARCHAR   NOT NULL,
    signature      VARCHAR   NOT NULL,
    key_id         VARCHAR   NOT NULL,
    computed_at    TIMESTAMP NOT NULL,
    computed_at_ms BIGINT    GENERATED ALWAYS AS (epoch_ms(computed_at)) VIRTUAL
);
