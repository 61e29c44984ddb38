// Package history holds the sinks that keep the pipeline's history in the
// store, each on bus/stage's shape (decode, validate, dead-letter with a
// reason, apply = insert, commit only after the store has the batch):
//
//   - the history sink (group forum-history): what came in —
//     registry.records → registry_records + servers_latest (+ registry_loads
//     at each snapshot's end), registry.diffs → drift_events,
//     registry.snapshots → snapshots, health.checks → health_checks,
//     provenance.obs → provenance, incidents → incidents + incident_audit,
//     dlq → dlq;
//   - the results sink (group forum-results): what the processors
//     concluded — drift.state → drift_states, incidents.state →
//     incident_states, ownerburst.windows → owner_bursts,
//     provenance.signals → provenance_signals, provenance.rates →
//     base_rates + provenance_gate, trust.records → trust_records;
//   - the publications sink (group forum-publications): trust.publications
//     → publications, each written only once all its records are stored, so
//     a reader never sees half a publication.
//
// Every table dedups on a deterministic key, so a redelivered batch
// rewrites the same rows. Bad input never stops a sink: it goes to the dlq
// topic with its reason (and from there into the dlq table).
package history

import (
	"context"
	"encoding/json"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The history sink's name, group and input topics.
const (
	Name  = "history"
	Group = "forum-history"
)

// Topics the history sink reads.
var Topics = []string{schema.TopicRegistryRecords, schema.TopicRegistryDiffs, schema.TopicRegistrySnapshots,
	schema.TopicHealthChecks, schema.TopicProvenanceObs, schema.TopicIncidents, schema.TopicDLQ}

// Writer is what the history sink needs of the store.
type Writer interface {
	InsertRecords(ctx context.Context, recs []store.Record) error
	InsertEvents(ctx context.Context, evs []schema.DriftEvent) error
	InsertSnapshots(ctx context.Context, snaps []schema.SnapshotSummary) error
	InsertDLQ(ctx context.Context, msgs []schema.DLQMessage) error
	InsertHealthChecks(ctx context.Context, checks []store.HealthCheck) error
	InsertProvenance(ctx context.Context, rows []store.Provenance) error
	InsertIncidents(ctx context.Context, rows []store.Incident) error
	InsertIncidentAudit(ctx context.Context, rows []store.IncidentAudit) error
	InsertRegistryLoads(ctx context.Context, rows []store.RegistryLoad) error
}

// Sink is the history sink.
type Sink struct {
	W       Writer
	Weights *method.Weights // the provenance rows' flag thresholds
	Log     *zap.Logger
	Times   *WriteTimes // nil: not measured
}

// input is one decoded message of any of the sink's topics.
type input struct {
	rec   *schema.RecordMsg
	ev    *schema.DriftEvent
	snap  *schema.SnapshotSummary
	check *schema.HealthCheck
	obs   *schema.GitHubObservation
	inc   *schema.IncidentMsg
	dlq   *schema.DLQMessage
	raw   []byte // the message value (a check is stored as sent)
}

// Decode reads a message of any of the sink's topics.
func Decode(m kafka.Message) (input, error) {
	var in input
	var err error
	switch m.Topic {
	case schema.TopicRegistryRecords:
		var v schema.RecordMsg
		v, err = schema.Decode[schema.RecordMsg](m.Value)
		in.rec = &v
	case schema.TopicRegistryDiffs:
		var v schema.DriftEvent
		v, err = schema.Decode[schema.DriftEvent](m.Value)
		in.ev = &v
	case schema.TopicRegistrySnapshots:
		var v schema.SnapshotSummary
		v, err = schema.Decode[schema.SnapshotSummary](m.Value)
		in.snap = &v
	case schema.TopicHealthChecks:
		var v schema.HealthCheck
		v, err = schema.Decode[schema.HealthCheck](m.Value)
		in.check = &v
	case schema.TopicProvenanceObs:
		var v schema.GitHubObservation
		v, err = schema.DecodeGitHubObservation(m.Value)
		in.obs = &v
	case schema.TopicIncidents:
		var v schema.IncidentMsg
		v, err = schema.Decode[schema.IncidentMsg](m.Value)
		in.inc = &v
	case schema.TopicDLQ:
		var v schema.DLQMessage
		v, err = schema.Decode[schema.DLQMessage](m.Value)
		in.dlq = &v
	default:
		err = schema.Invalid(schema.ReasonUnknownKind, "the history sink does not read topic %q", m.Topic)
	}
	in.raw = m.Value
	return in, err
}

// Apply stores a batch: registry records (and, after them, the loads of
// the snapshots whose end marker they reached), then the rest. Every insert
// is idempotent. A store that writes a whole batch at once
// (store.BatchWriter: DuckDB, one transaction) gets it in one call.
func (s *Sink) Apply(ctx context.Context, batch []stage.Item[input]) error {
	var b store.Batch
	for _, it := range batch {
		v := it.Value
		switch {
		case v.rec != nil:
			switch v.rec.Type {
			case schema.MsgRecord:
				b.Records = append(b.Records, store.RecordFromEntry(v.rec.Entry, v.rec.SnapshotID, v.rec.ObservedAt))
			case schema.MsgSnapshotEnd:
				// registry.records has one partition: every record of the
				// snapshot came before its end, in this batch or an
				// earlier one, and is stored before the load row.
				b.Loads = append(b.Loads, store.RegistryLoad{SnapshotID: v.rec.SnapshotID, ObservedAt: v.rec.ObservedAt.UTC(), Entries: v.rec.End.Entries})
			}
		case v.ev != nil:
			b.Events = append(b.Events, *v.ev)
		case v.snap != nil:
			b.Snapshots = append(b.Snapshots, *v.snap)
		case v.check != nil:
			b.Checks = append(b.Checks, HealthRow(v.check, v.raw))
		case v.obs != nil:
			b.Prov = append(b.Prov, ProvenanceRow(s.Weights, *v.obs))
		case v.inc != nil:
			b.Incidents = append(b.Incidents, incidents.Row(v.inc.Incident))
			if v.inc.Audit.ID != "" {
				b.Audit = append(b.Audit, incidents.AuditRow(*v.inc))
			}
		case v.dlq != nil:
			b.DLQ = append(b.DLQ, *v.dlq)
		}
	}
	return s.Times.write(ctx, s.W, "history_batch", &b, []step{
		{"registry records", "registry_records", len(b.Records), func() error { return s.W.InsertRecords(ctx, b.Records) }},
		{"registry loads", "registry_loads", len(b.Loads), func() error { return s.W.InsertRegistryLoads(ctx, b.Loads) }},
		{"drift events", "drift_events", len(b.Events), func() error { return s.W.InsertEvents(ctx, b.Events) }},
		{"snapshots", "snapshots", len(b.Snapshots), func() error { return s.W.InsertSnapshots(ctx, b.Snapshots) }},
		{"health checks", "health_checks", len(b.Checks), func() error { return s.W.InsertHealthChecks(ctx, b.Checks) }},
		{"provenance", "provenance", len(b.Prov), func() error { return s.W.InsertProvenance(ctx, b.Prov) }},
		// The audit row first: an incident row never exists without the
		// entry that says who entered it and why.
		{"incident audit", "incident_audit", len(b.Audit), func() error { return s.W.InsertIncidentAudit(ctx, b.Audit) }},
		{"incidents", "incidents", len(b.Incidents), func() error { return s.W.InsertIncidents(ctx, b.Incidents) }},
		{"dead letters", "dlq", len(b.DLQ), func() error { return s.W.InsertDLQ(ctx, b.DLQ) }},
	})
}

// The sink's batch: up to MaxBatch messages, or what arrived within MaxWait
// of the first. Every store insert is a transaction whose commit (a WAL
// write and fsync on DuckDB, a part on ClickHouse) costs about as much as a
// few thousand rows, so large batches are what makes catching up fast
// (bench/PIPELINE.md); MaxWait bounds the lag this adds when the stream is
// quiet. Offsets are still committed only after the whole batch is stored.
const (
	MaxBatch = 10_000
	MaxWait  = 250 * time.Millisecond
)

// Config returns the sink's shape for bus/stage.
func (s *Sink) Config(brokers []string, metrics *stage.Metrics) stage.Config[input] {
	return stage.Config[input]{Name: Name, Group: Group, Topics: Topics, Brokers: brokers, Decode: Decode, Apply: s.Apply,
		MaxBatch: MaxBatch, MaxWait: MaxWait, Metrics: metrics, Log: s.Log}
}

// HealthRow is the health_checks row of a check; raw is the check as JSON.
func HealthRow(c *schema.HealthCheck, raw []byte) store.HealthCheck {
	if raw == nil {
		raw, _ = json.Marshal(c)
	}
	return store.HealthCheck{
		ID: c.ID, Server: c.Server, RemoteURL: c.RemoteURL, ObservedAt: c.ObservedAt.UTC(), Transport: c.Transport,
		Outcome: string(c.Outcome), ErrorClass: string(c.ErrorClass), HTTPStatus: c.HTTPStatus, LatencyMS: c.InitializeLatencyMS,
		AuthKind: string(c.AuthKind), ProtocolVersion: c.ProtocolVersion, ToolCount: len(c.Tools), ToolsListed: c.ToolsListed, Check: string(raw),
	}
}
