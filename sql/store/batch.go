package store

import (
	"context"

	"github.com/forum-mcp/forum/schema"
)

// Batch is one sink batch's rows for every table it writes. A sink builds
// one per consumed batch and hands it to BatchWriter.WriteBatch, so the
// store can write all of it at once: on DuckDB one transaction (one WAL
// write and fsync instead of one per table), on ClickHouse one native
// insert per table. Empty slices are skipped.
type Batch struct {
	Records   []Record // written before Loads: a load row says its records are stored
	Loads     []RegistryLoad
	Events    []schema.DriftEvent
	Snapshots []schema.SnapshotSummary
	Checks    []HealthCheck
	Prov      []Provenance
	Audit     []IncidentAudit // written before Incidents: an incident row never exists without its audit entry
	Incidents []Incident
	DLQ       []schema.DLQMessage

	DriftStates    []DriftStateRow
	IncidentStates []IncidentStateRow
	OwnerBursts    []OwnerBurstRow
	ProvSignals    []ProvenanceSignalRow
	BaseRates      []BaseRateRow
	Gates          []GateRow
	TrustRecords   []TrustRecord
}

// Len is the number of rows in the batch.
func (b *Batch) Len() int {
	return len(b.Records) + len(b.Loads) + len(b.Events) + len(b.Snapshots) + len(b.Checks) + len(b.Prov) +
		len(b.Audit) + len(b.Incidents) + len(b.DLQ) + len(b.DriftStates) + len(b.IncidentStates) + len(b.OwnerBursts) +
		len(b.ProvSignals) + len(b.BaseRates) + len(b.Gates) + len(b.TrustRecords)
}

// BatchWriter is implemented by stores that write a whole Batch at once.
// The contract is the one of the Insert methods it stands for (idempotent,
// the same winner rules, durable when it returns nil), plus: every row of
// the batch is written, in the order of Batch's fields where an order is
// documented, or WriteBatch returns an error and the caller writes the
// batch again (at-least-once: the sinks commit offsets only after it
// returned nil).
type BatchWriter interface {
	WriteBatch(ctx context.Context, b *Batch) error
}
