-- 0005_incidents: curated incidents (SPEC §1.5) and their append-only audit
-- log (store.Incident, store.IncidentAudit), with the conventions of 0001:
-- Int64 ms time columns with DateTime ALIASes, ReplacingMergeTree read with
-- FINAL. Runs on ClickHouse 18.16.

-- incidents: one row per id. _ver = 2^62 + 2*updated_at_ms + (status =
-- 'retracted'), so the greatest (updated_at, retracted) wins
-- (store.NewerIncident) whatever order rows were inserted in.
CREATE TABLE IF NOT EXISTS incidents (
    id            String,
    server        String,
    date_ms       Int64,
    class         String,
    severity      String,
    status        String,
    source_uri    String,
    curator       String,
    note          String,
    updated_at_ms Int64,
    _ver          UInt64,
    date          DateTime ALIAS toDateTime(intDiv(date_ms, 1000)),
    updated_at    DateTime ALIAS toDateTime(intDiv(updated_at_ms, 1000))
) ENGINE = ReplacingMergeTree(_ver)
ORDER BY id;

-- incident_audit: append-only; a rewritten id carries the same content.
CREATE TABLE IF NOT EXISTS incident_audit (
    id          String,
    incident_id String,
    server      String,
    action      String,
    who         String,
    reason      String,
    recorded_at_ms Int64,
    record      String,
    recorded_at DateTime ALIAS toDateTime(intDiv(recorded_at_ms, 1000))
) ENGINE = ReplacingMergeTree
ORDER BY id;
