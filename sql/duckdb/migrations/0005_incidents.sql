-- 0005_incidents: curated incidents (SPEC §1.5) and their append-only audit
-- log (store.Incident, store.IncidentAudit). Written by the incidents
-- processor from the `incidents` topic; read by the API.
--
-- incidents: one row per incident id, its current state. The winner is the
-- greatest (updated_at, status = 'retracted') (store.NewerIncident), so a
-- redelivered insert can never undo a retraction.
CREATE TABLE IF NOT EXISTS incidents (
    id          VARCHAR   NOT NULL PRIMARY KEY,
    server      VARCHAR   NOT NULL,
    date        TIMESTAMP NOT NULL,
    class       VARCHAR   NOT NULL,
    severity    VARCHAR   NOT NULL,
    status      VARCHAR   NOT NULL,
    source_uri  VARCHAR   NOT NULL,
    curator     VARCHAR   NOT NULL,
    note        VARCHAR   NOT NULL,
    updated_at  TIMESTAMP NOT NULL
);
CREATE INDEX IF NOT EXISTS incidents_server ON incidents (server);

-- incident_audit: every insert and retraction with who and why; rows are
-- never updated (ON CONFLICT DO NOTHING).
CREATE TABLE IF NOT EXISTS incident_audit (
    id          VARCHAR   NOT NULL PRIMARY KEY,
    incident_id VARCHAR   NOT NULL,
    server      VARCHAR   NOT NULL,
    action      VARCHAR   NOT NULL,
    who         VARCHAR   NOT NULL,
    reason      VARCHAR   NOT NULL,
    recorded_at TIMESTAMP NOT NULL,
    record      VARCHAR   NOT NULL
);
CREATE INDEX IF NOT EXISTS incident_audit_server ON incident_audit (server);
