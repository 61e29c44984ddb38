-- 0004_trust: the scorer's publications (SPEC §5), sql/store.TrustStore.
--
-- Conventions of 0001: Int64 Unix milliseconds (UTC) with a DateTime ALIAS,
-- ReplacingMergeTree read with FINAL; without a version column the last
-- inserted row of a key wins, like DuckDB's ON CONFLICT DO UPDATE.
--
-- trust_records: one row per server per publication; record is the sealed
-- record (RFC 8785 canonical JSON with content_sha256; read fields with
-- visitParamExtract*), the other columns are copies analysts filter on.
CREATE TABLE IF NOT EXISTS trust_records (
    server           String,
    publication_id   String,
    computed_at_ms   Int64,
    score            Nullable(Float64),
    band             String,
    toolfinder_score Int32,
    content_sha256   String,
    record           String,
    computed_at      DateTime ALIAS toDateTime(intDiv(computed_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY (server, publication_id);

-- publications: one signed header per scoring run, keyed by id.
CREATE TABLE IF NOT EXISTS publications (
    id             String,
    method_version String,
    weights_sha256 String,
    record_count   Int64,
    merkle_root    String,
    signature      String,
    key_id         String,
    computed_at_ms Int64,
    computed_at    DateTime ALIAS toDateTime(intDiv(computed_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY id;
