-- 0008_trust_views: analyst views over the scorer's publications (0004), with
-- the same names, columns and meaning on DuckDB (sql/examples):
--   publications_v   one row per publication id (FINAL)
--   trust_records_v  one row per (publication_id, server) (FINAL: the
--                    table's key is exactly that, so the replacing merge
--                    keeps the last write), only of visible publications
--                    (whose publications row exists: the scorer writes it
--                    last), plus computed_day (the UTC day, from the day
--                    number so it does not depend on the server time zone)
CREATE VIEW IF NOT EXISTS publications_v AS
SELECT id, method_version, weights_sha256, record_count, merkle_root, signature, key_id,
       computed_at, computed_at_ms, toDate(intDiv(computed_at_ms, 86400000)) AS computed_day
FROM publications FINAL;

CREATE VIEW IF NOT EXISTS trust_records_v AS
SELECT publication_id, server, computed_at, computed_at_ms, toDate(intDiv(computed_at_ms, 86400000)) AS computed_day,
       score, band, toolfinder_score, content_sha256, record
FROM trust_records FINAL
WHERE publication_id IN (SELECT id FROM publications);
