-- 0011_registry_sightings: the most recent observation of each stored
-- registry content. registry_records keeps a (name, version, content_sha256)
-- row's earliest observation, and the content hash covers isLatest and
-- status, so after an incremental crawl the old latest version has two rows
-- (isLatest true, first seen before; false, first seen now). Which of a
-- version's rows is its current one — and so the version's flags — is the
-- one sighted last (sql/store/versions.go); this table says when that was.
--
-- One row per registry_records key after merges: the greatest
-- last_observed_at_ms wins (_ver = 2^62 + last_observed_at_ms); reads take
-- max(last_observed_at_ms) per key, right before and after merges alike.
-- Existing rows start at their first observation (the only one recorded
-- before this table existed); running the backfill twice adds nothing a
-- max() sees.
CREATE TABLE IF NOT EXISTS registry_sightings (
    name                String,
    version             String,
    content_sha256      String,
    last_observed_at_ms Int64,
    _ver                UInt64,
    last_observed_at    DateTime ALIAS toDateTime(intDiv(last_observed_at_ms, 1000))
) ENGINE = ReplacingMergeTree(_ver)
ORDER BY (name, version, content_sha256);
INSERT INTO registry_sightings (name, version, content_sha256, last_observed_at_ms, _ver)
SELECT name, version, content_sha256, observed_at_ms, toUInt64(4611686018427387904 + observed_at_ms) FROM registry_records FINAL;
