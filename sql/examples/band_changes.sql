-- band_changes: servers whose band changed between the two latest
-- publications computed before a reference instant.
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Replace
-- {{now_ms}} with the instant as Unix milliseconds (UTC): the two newest
-- publications with computed_at < now are compared (by computed_at, then
-- id, as the API orders them). To compare two given publications instead,
-- replace the subquery marked NEW by the newer id as a string literal and
-- the one marked PAIR by the list of both ids, e.g. ('pub-a', 'pub-b').
--
-- Reads trust_records_v (one row per (publication, server), visible
-- publications only) and publications_v. A server present in only one of
-- the two publications is not a change and is left out.
--
--   old_publication, new_publication  the two publication ids
--   old_band, new_band                 A (best) … F (worst)
--   old_score, new_score               overall score, NULL when unknown
--   direction                          'up' (better band) or 'down'
SELECT
    server,
    old_publication,
    new_publication,
    old_band,
    new_band,
    old_score,
    new_score,
    CASE WHEN (CASE WHEN new_band = 'A' THEN 5 WHEN new_band = 'B' THEN 4 WHEN new_band = 'C' THEN 3 WHEN new_band = 'D' THEN 2 ELSE 1 END)
            > (CASE WHEN old_band = 'A' THEN 5 WHEN old_band = 'B' THEN 4 WHEN old_band = 'C' THEN 3 WHEN old_band = 'D' THEN 2 ELSE 1 END)
         THEN 'up' ELSE 'down' END AS direction
FROM (
    SELECT
        server,
        max(CASE WHEN is_new = 0 THEN publication_id END) AS old_publication,
        max(CASE WHEN is_new = 1 THEN publication_id END) AS new_publication,
        max(CASE WHEN is_new = 0 THEN band END) AS old_band,
        max(CASE WHEN is_new = 1 THEN band END) AS new_band,
        max(CASE WHEN is_new = 0 THEN score END) AS old_score,
        max(CASE WHEN is_new = 1 THEN score END) AS new_score,
        count(*) AS publications
    FROM (
        SELECT
            server,
            publication_id,
            band,
            score,
            CASE WHEN publication_id = (
                -- NEW: the newest publication before now
                SELECT id FROM publications_v WHERE computed_at_ms < {{now_ms}}
                ORDER BY computed_at_ms DESC, id DESC LIMIT 1
            ) THEN 1 ELSE 0 END AS is_new
        FROM trust_records_v
        WHERE publication_id IN (
            -- PAIR: the two newest publications before now
            SELECT id FROM publications_v WHERE computed_at_ms < {{now_ms}}
            ORDER BY computed_at_ms DESC, id DESC LIMIT 2
        )
    ) AS r
    GROUP BY server
) AS pairs
WHERE publications = 2
  AND old_band <> new_band
ORDER BY server
