-- 0008_trust_views: analyst views over the scorer's publications (0004), with
-- the same names, columns and meaning on ClickHouse (sql/examples):
--   publications_v   one row per publication id
--   trust_records_v  one row per (publication_id, server), only of visible
--                    publications (whose publications row exists: the
--                    scorer writes it last), plus computed_day (UTC)
-- DuckDB tables are keyed already; the views exist so one SQL text runs on
-- both engines.
CREATE OR REPLACE VIEW publications_v AS
SELECT id, method_version, weights_sha256, record_count, merkle_root, signature, key_id,
       computed_at, computed_at_ms, CAST(computed_at AS DATE) AS computed_day
FROM publications;

CREATE OR REPLACE VIEW trust_records_v AS
SELECT publication_id, server, computed_at, computed_at_ms, CAST(computed_at AS DATE) AS computed_day,
       score, band, toolfinder_score, content_sha256, record
FROM trust_records
WHERE publication_id IN (SELECT id FROM publications);
