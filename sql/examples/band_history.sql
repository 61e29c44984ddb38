-- band_history: one server's band and score over the 90 days before a
-- reference instant, one row per publication that held the server, with the
-- change from the publication before it.
--
-- Runs unchanged on DuckDB and on ClickHouse 18.16 (see README.md). Two
-- placeholders, both replaced textually:
--   {{now_ms}}  the instant as Unix milliseconds (UTC); the window is
--               [now - 90 days, now) on computed_at
--   {{server}}  the server's registry name, e.g. io.github.someone/some-mcp
--               (it sits inside a string literal; registry names hold no
--               quote, so it needs no escaping)
-- Reads trust_records_v (one row per (publication, server), visible
-- publications only).
--
-- The previous publication is the server's newest record computed before
-- the row's, within the window or before it (so the first row in the
-- window has its change too), and NULL for the server's first record.
-- Publications are scoring runs, one computed_at each. No window
-- functions (ClickHouse 18.16 has none): the server's records are
-- CROSS JOINed with themselves and each row keeps, with argMax, the
-- record with the greatest earlier computed_at (prev_key; -1 marks "not
-- earlier"). Nullable values go through argMax coded (score -1 for NULL)
-- because ClickHouse's aggregates skip NULL arguments.
--
--   publication_id, computed_at_ms, computed_day   the publication that held it
--   band, score                                    its band (A best … F worst) and score (NULL: unknown)
--   previous_publication_id, previous_band, previous_score
--   score_change    score - previous_score, NULL when either is unknown
--   band_change     up (better band), down, same; NULL for the first record
SELECT
    publication_id,
    computed_at_ms,
    computed_day,
    band,
    score,
    previous_publication_id,
    previous_band,
    previous_score,
    score - previous_score AS score_change,
    CASE WHEN previous_band IS NULL THEN NULL
         WHEN (CASE WHEN band = 'A' THEN 5 WHEN band = 'B' THEN 4 WHEN band = 'C' THEN 3 WHEN band = 'D' THEN 2 ELSE 1 END)
            > (CASE WHEN previous_band = 'A' THEN 5 WHEN previous_band = 'B' THEN 4 WHEN previous_band = 'C' THEN 3 WHEN previous_band = 'D' THEN 2 ELSE 1 END)
         THEN 'up'
         WHEN band = previous_band THEN 'same'
         ELSE 'down' END AS band_change
FROM (
    SELECT
        publication_id,
        computed_at_ms,
        computed_day,
        band,
        max(score) AS score,
        CASE WHEN max(prev_key) >= 0 THEN argMax(p_publication_id, prev_key) END AS previous_publication_id,
        CASE WHEN max(prev_key) >= 0 THEN argMax(p_band, prev_key) END AS previous_band,
        CASE WHEN max(prev_key) >= 0 AND argMax(p_score_code, prev_key) >= 0 THEN argMax(p_score_code, prev_key) END AS previous_score
    FROM (
        SELECT
            publication_id,
            computed_at_ms,
            computed_day,
            band,
            score,
            p_publication_id,
            p_band,
            p_score_code,
            CASE WHEN p_computed_at_ms < computed_at_ms THEN p_computed_at_ms ELSE -1 END AS prev_key
        FROM (
            SELECT publication_id, computed_at_ms, computed_day, band, score
            FROM trust_records_v
            WHERE server = '{{server}}'
              AND computed_at_ms >= {{now_ms}} - 7776000000
              AND computed_at_ms < {{now_ms}}
        ) AS cur
        CROSS JOIN (
            SELECT
                publication_id AS p_publication_id,
                computed_at_ms AS p_computed_at_ms,
                band AS p_band,
                CASE WHEN score IS NULL THEN -1 ELSE score END AS p_score_code
            FROM trust_records_v
            WHERE server = '{{server}}'
              AND computed_at_ms < {{now_ms}}
        ) AS prev
    ) AS pairs
    GROUP BY publication_id, computed_at_ms, computed_day, band
) AS history
ORDER BY computed_at_ms, publication_id
