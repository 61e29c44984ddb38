-- 0011_registry_sightings: the most recent observation of each stored
-- registry content. registry_records keeps a (name, version, content_sha256)
-- row's earliest observation, and the content hash covers isLatest and
-- status, so after an incremental crawl the old latest version has two rows
-- (isLatest true, first seen before; false, first seen now). Which of a
-- version's rows is its current one — and so the version's flags — is the
-- one sighted last (sql/store/versions.go); this table says when that was.
--
-- One row per registry_records key; an upsert keeps the greatest
-- last_observed_at. Existing rows start at their first observation (the only
-- one recorded before this table existed).
CREATE TABLE IF NOT EXISTS registry_sightings (
    name             VARCHAR   NOT NULL,
    version          VARCHAR   NOT NULL,
    content_sha256   VARCHAR   NOT NULL,
    last_observed_at TIMESTAMP NOT NULL,
    PRIMARY KEY (name, version, content_sha256)
);
INSERT INTO registry_sightings (name, version, content_sha256, last_observed_at)
SELECT name, version, content_sha256, observed_at FROM registry_records
ON CONFLICT (name, version, content_sha256) DO NOTHING;
