package store

import (
	"context"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// ResultStore keeps what the processors conclude ("results are data",
// ARCHITECTURE.md): each processor publishes its conclusions on a compacted
// topic (schema/topics.go) and the results sink (processors/history) stores
// every value here, so the API of any replica answers from the store and
// analysts query the history in SQL. Every engine implements it beside
// Store; the conformance suite is storetest.RunResults.
//
// Contract, on top of Store's (idempotent writes, durable on nil, reads
// never show duplicates, ms-precision UTC times):
//   - Histories are append-only: a row is keyed by what it is about and the
//     event time it was concluded at (as_of); a second write of the same
//     key changes nothing visible (the last write wins on the non-key
//     columns, as for drift_events). Nothing is ever updated in place.
//   - Each row keeps the processor's message verbatim (State, JSON) beside
//     the columns analysts filter on, so the API serves exactly what was
//     concluded.
type ResultStore interface {
	// InsertDriftStates appends drift_states rows, keyed by (server, as_of).
	InsertDriftStates(ctx context.Context, rows []DriftStateRow) error
	// InsertIncidentStates appends incident_states rows, keyed by (server, as_of).
	InsertIncidentStates(ctx context.Context, rows []IncidentStateRow) error
	// InsertOwnerBursts appends owner_bursts rows, keyed by (namespace, day, as_of).
	InsertOwnerBursts(ctx context.Context, rows []OwnerBurstRow) error
	// InsertProvenanceSignals appends provenance_signals rows, keyed by (server, as_of).
	InsertProvenanceSignals(ctx context.Context, rows []ProvenanceSignalRow) error
	// InsertBaseRates appends base_rates rows (keyed by (flag, as_of)) and
	// provenance_gate rows (keyed by as_of).
	InsertBaseRates(ctx context.Context, rates []BaseRateRow, gates []GateRow) error
	// InsertRegistryLoads records that every registry record of a snapshot
	// is stored (the registry sink writes it after the snapshot's records,
	// in the same or a later batch), keyed by snapshot id.
	InsertRegistryLoads(ctx context.Context, rows []RegistryLoad) error

	// SnapshotLoaded reports whether every record of the snapshot is stored
	// (a registry_loads row exists): the latest view then holds it.
	SnapshotLoaded(ctx context.Context, snapshotID string) (bool, error)
	// LatestProvenanceSignal returns the server's newest provenance_signals
	// row (greatest as_of), or ErrNotFound.
	LatestProvenanceSignal(ctx context.Context, server string) (ProvenanceSignalRow, error)
	// LatestBaseRates returns the rows of the newest as_of of base_rates,
	// ordered by flag, and the newest provenance_gate row; both empty (and
	// a zero GateRow) when none was stored yet.
	LatestBaseRates(ctx context.Context) ([]BaseRateRow, GateRow, error)
	// OwnerBursts returns, per (namespace, day), the row with the greatest
	// as_of, filtered by q, ordered by day then namespace.
	OwnerBursts(ctx context.Context, q OwnerBurstQuery) ([]OwnerBurstRow, error)
	// LatestOwnerBurstDay returns the newest day of owner_bursts ("" when empty).
	LatestOwnerBurstDay(ctx context.Context) (string, error)
	// DriftStates returns a server's drift_states rows, newest as_of first,
	// at most limit (ClampLimit with MaxEventLimit).
	DriftStates(ctx context.Context, server string, limit int) ([]DriftStateRow, error)
	// IncidentStates returns a server's incident_states rows, newest as_of
	// first, at most limit.
	IncidentStates(ctx context.Context, server string, limit int) ([]IncidentStateRow, error)
	// PublicationLeaves returns a publication's servers and Merkle leaf
	// hashes (hex, as stored in trust_records.leaf_hash) in server order —
	// the leaf order — so proofs are built without re-canonicalising.
	PublicationLeaves(ctx context.Context, publicationID string) (servers, leaves []string, err error)
}

// DriftStateRow is one row of drift_states: the drift processor's state of
// a server at AsOf (schema.DriftState).
type DriftStateRow struct {
	Server         string
	Namespace      string
	AsOf           time.Time
	Score          *float64 // the drift sub-score at AsOf; nil when unknown
	StrongNegative bool     // an open strong-negative drift signal at AsOf
	Events         int      // retained events
	State          string   // schema.DriftState as JSON
}

// IncidentStateRow is one row of incident_states: a server's curated
// incidents as the incidents processor held them at AsOf
// (schema.IncidentState).
type IncidentStateRow struct {
	Server    string
	AsOf      time.Time
	Score     *float64 // the incidents sub-score at AsOf
	Incidents int      // incidents held, retracted ones included
	Counted   int      // confirmed or suspected ones
	State     string   // schema.IncidentState as JSON
}

// OwnerBurstRow is one row of owner_bursts: a namespace's owner-burst
// evaluation on a UTC day, at AsOf (schema.OwnerBurstWindow).
type OwnerBurstRow struct {
	Namespace            string
	Day                  string // YYYY-MM-DD
	AsOf                 time.Time
	Flagged              bool
	RecurringBurst       bool
	FirstWindowBurst     bool
	WindowsOverThreshold int
	CurrentWindowNew     int    // new servers in the window ending at AsOf
	State                string // schema.OwnerBurstWindow as JSON
}

// OwnerBurstQuery filters OwnerBursts. Empty fields match everything.
type OwnerBurstQuery struct {
	Namespace   string
	From, To    string // days, inclusive (YYYY-MM-DD)
	FlaggedOnly bool
	Limit       int // 1..MaxEventLimit
}

// ProvenanceSignalRow is one row of provenance_signals: a server's
// provenance as the provenance processor concluded it at AsOf
// (schema.ProvenanceSignal), with the flags analysts ask about as columns.
type ProvenanceSignalRow struct {
	Server   string
	AsOf     time.Time
	Repo     string // github.com/owner/name, "" when not a GitHub repo
	RepoURL  string
	Score    *float64 // the provenance sub-score; nil when unknown
	Reason   string   // why it is unknown
	Observed bool
	Resolved bool
	// Flags (false when not observable; Observed/Resolved say which).
	Fork, Archived, NoLicense, RepoUnder30d, NamespaceOwnerMismatch  bool
	LateGT30d, Late1to30d, NoCommits90d, SingleAuthor90d, CommitCap  bool
	CoRegistration, OneRepoMany, Verified90d, StarsGE100, OwnerOld1y bool
	State                                                            string // schema.ProvenanceSignal as JSON
}

// BaseRateRow is one row of base_rates: one flag's live base rate at AsOf
// beside the pinned rate of the method in force (schema.BaseRate).
type BaseRateRow struct {
	Flag          string
	AsOf          time.Time
	Denominator   string
	Count, N      int
	Live          *float64
	Pinned        *float64
	DeltaPP       *float64
	Scored        bool
	Direction     string
	MethodVersion string
	State         string // schema.BaseRate as JSON
}

// GateRow is one row of provenance_gate: the GitHub coverage gate at AsOf
// (schema.ProvenanceGate).
type GateRow struct {
	AsOf        time.Time
	Open        bool
	CoveragePct float64
	Resolvable  int
	Fresh       int
	Observed    int
	State       string // schema.ProvenanceGate as JSON
}

// RegistryLoad is one row of registry_loads: snapshot ID's records are all
// stored.
type RegistryLoad struct {
	SnapshotID string
	ObservedAt time.Time
	Entries    int
}

// BulkReader reads whole tables in one pass each, in the orders the API's
// read models need, so a replica builds them at start on any engine (one
// query per table, not one per server). Every engine implements it; the
// conformance suite checks it against the per-server reads.
type BulkReader interface {
	// ChangeMarker returns a short value that differs whenever a write the
	// read models can see has landed since the last call returned it
	// (record contents, the latest view, drift events, snapshots,
	// publications). Cheap: called every couple of seconds.
	ChangeMarker(ctx context.Context) (string, error)
	// AllLatest returns every row of the latest view (with the server
	// object), ordered by name.
	AllLatest(ctx context.Context) ([]Record, error)
	// AllVersions calls fn for every stored record, ordered by name, then
	// as Versions orders a server's rows (observed_at DESC, version DESC,
	// content_sha256 DESC). Record.Server (the object) is left empty.
	AllVersions(ctx context.Context, fn func(Record) error) error
	// AllEvents calls fn for every drift event ordered by server, then
	// observed_at, then id (the Events order within a server).
	AllEvents(ctx context.Context, fn func(ev schema.DriftEvent) error) error
}
