package history

import (
	"context"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The results sink's name and group.
const (
	ResultsName  = "results"
	ResultsGroup = "forum-results"
)

// ResultsTopics are the processors' output topics the results sink stores.
var ResultsTopics = []string{schema.TopicDriftState, schema.TopicIncidentState, schema.TopicOwnerBursts,
	schema.TopicProvenanceSignals, schema.TopicProvenanceRates, schema.TopicTrustRecords}

// ResultsWriter is what the results sink needs of the store.
type ResultsWriter interface {
	InsertDriftStates(ctx context.Context, rows []store.DriftStateRow) error
	InsertIncidentStates(ctx context.Context, rows []store.IncidentStateRow) error
	InsertOwnerBursts(ctx context.Context, rows []store.OwnerBurstRow) error
	InsertProvenanceSignals(ctx context.Context, rows []store.ProvenanceSignalRow) error
	InsertBaseRates(ctx context.Context, rates []store.BaseRateRow, gates []store.GateRow) error
	InsertTrustRecords(ctx context.Context, recs []store.TrustRecord) error
}

// ResultsSink stores the processors' conclusions.
type ResultsSink struct {
	W     ResultsWriter
	Log   *zap.Logger
	Times *WriteTimes // nil: not measured
}

type result struct {
	drift  *schema.DriftState
	inc    *schema.IncidentState
	burst  *schema.OwnerBurstWindow
	prov   *schema.ProvenanceSignal
	rates  *schema.ProvenanceRates
	record *schema.TrustRecordMsg
	raw    []byte
}

// DecodeResult reads a message of any output topic. A tombstone (a key a
// processor dropped, e.g. a server no longer listed) is skipped: histories
// keep what was concluded.
func DecodeResult(m kafka.Message) (result, error) {
	r := result{raw: m.Value}
	if m.Value == nil {
		return r, nil
	}
	var err error
	switch m.Topic {
	case schema.TopicDriftState:
		var v schema.DriftState
		if v, err = decodeDriftState(m.Value); err == nil {
			r.drift = &v
		}
	case schema.TopicIncidentState:
		var v schema.IncidentState
		if v, err = schema.Decode[schema.IncidentState](m.Value); err == nil {
			r.inc = &v
		}
	case schema.TopicOwnerBursts:
		var v schema.OwnerBurstWindow
		if v, err = schema.Decode[schema.OwnerBurstWindow](m.Value); err == nil {
			r.burst = &v
		}
	case schema.TopicProvenanceSignals:
		var v schema.ProvenanceSignal
		if v, err = schema.Decode[schema.ProvenanceSignal](m.Value); err == nil {
			r.prov = &v
		}
	case schema.TopicProvenanceRates:
		var v schema.ProvenanceRates
		if v, err = schema.Decode[schema.ProvenanceRates](m.Value); err == nil {
			r.rates = &v
		}
	case schema.TopicTrustRecords:
		var v schema.TrustRecordMsg
		if v, err = schema.Decode[schema.TrustRecordMsg](m.Value); err == nil {
			r.record = &v
		}
	default:
		err = schema.Invalid(schema.ReasonUnknownKind, "the results sink does not read topic %q", m.Topic)
	}
	return r, err
}

// decodeDriftState accepts both kinds of drift.state values: a server's
// state, and a namespace's bulk edits (Server empty, keyed by namespace).
func decodeDriftState(b []byte) (schema.DriftState, error) {
	var v schema.DriftState
	if err := schema.Unmarshal(b, &v); err != nil {
		return v, err
	}
	if v.Server == "" && v.Namespace != "" && !v.AsOf.IsZero() && len(v.Events) == 0 {
		return v, nil
	}
	return v, v.Validate()
}

// Apply stores a batch of conclusions, in one call when the store writes
// a whole batch at once (store.BatchWriter).
func (s *ResultsSink) Apply(ctx context.Context, batch []stage.Item[result]) error {
	var b store.Batch
	for _, it := range batch {
		v := it.Value
		switch {
		case v.drift != nil:
			if v.drift.Server == "" {
				continue // a namespace's bulk edits: evidence in its servers' records, not a history row
			}
			b.DriftStates = append(b.DriftStates, DriftRow(v.drift, v.raw))
		case v.inc != nil:
			b.IncidentStates = append(b.IncidentStates, IncidentStateRowOf(v.inc, v.raw))
		case v.burst != nil:
			b.OwnerBursts = append(b.OwnerBursts, OwnerBurstRowOf(v.burst, v.raw))
		case v.prov != nil:
			b.ProvSignals = append(b.ProvSignals, ProvenanceSignalRowOf(v.prov, v.raw))
		case v.rates != nil:
			rs, g := RateRows(v.rates)
			b.BaseRates = append(b.BaseRates, rs...)
			b.Gates = append(b.Gates, g)
		case v.record != nil:
			b.TrustRecords = append(b.TrustRecords, TrustRecordOf(v.record))
		}
	}
	return s.Times.write(ctx, s.W, "results_batch", &b, []step{
		{"drift states", "drift_states", len(b.DriftStates), func() error { return s.W.InsertDriftStates(ctx, b.DriftStates) }},
		{"incident states", "incident_states", len(b.IncidentStates), func() error { return s.W.InsertIncidentStates(ctx, b.IncidentStates) }},
		{"owner bursts", "owner_bursts", len(b.OwnerBursts), func() error { return s.W.InsertOwnerBursts(ctx, b.OwnerBursts) }},
		{"provenance signals", "provenance_signals", len(b.ProvSignals), func() error { return s.W.InsertProvenanceSignals(ctx, b.ProvSignals) }},
		{"base rates", "base_rates", len(b.Gates), func() error { return s.W.InsertBaseRates(ctx, b.BaseRates, b.Gates) }},
		{"trust records", "trust_records", len(b.TrustRecords), func() error { return s.W.InsertTrustRecords(ctx, b.TrustRecords) }},
	})
}

// Config returns the sink's shape for bus/stage.
func (s *ResultsSink) Config(brokers []string, metrics *stage.Metrics) stage.Config[result] {
	return stage.Config[result]{Name: ResultsName, Group: ResultsGroup, Topics: ResultsTopics, Brokers: brokers, Decode: DecodeResult,
		Apply: s.Apply, MaxBatch: 5000, MaxWait: 250 * time.Millisecond, Metrics: metrics, Log: s.Log}
}

// DriftRow is the drift_states row of a server's drift state.
func DriftRow(d *schema.DriftState, raw []byte) store.DriftStateRow {
	r := store.DriftStateRow{Server: d.Server, Namespace: d.Namespace, AsOf: d.AsOf.UTC(), Score: d.Drift.Value, Events: len(d.Events), State: string(raw)}
	for _, sg := range d.Drift.Signals {
		if sg.StrongNegative() {
			r.StrongNegative = true
		}
	}
	return r
}

// IncidentStateRowOf is the incident_states row of a server's incident state.
func IncidentStateRowOf(s *schema.IncidentState, raw []byte) store.IncidentStateRow {
	r := store.IncidentStateRow{Server: s.Server, AsOf: s.AsOf.UTC(), Score: s.Score.Value, Incidents: len(s.Incidents), State: string(raw)}
	for _, in := range s.Incidents {
		if in.Status == schema.IncidentConfirmed || in.Status == schema.IncidentSuspected {
			r.Counted++
		}
	}
	return r
}

// OwnerBurstRowOf is the owner_bursts row of a window.
func OwnerBurstRowOf(w *schema.OwnerBurstWindow, raw []byte) store.OwnerBurstRow {
	r := store.OwnerBurstRow{Namespace: w.Namespace, Day: w.Day, AsOf: w.AsOf.UTC(), Flagged: w.Flagged, RecurringBurst: w.RecurringBurst,
		FirstWindowBurst: w.FirstWindowBurst, WindowsOverThreshold: w.WindowsOverThreshold, State: string(raw)}
	if n := len(w.PerWindowNew); n > 0 {
		r.CurrentWindowNew = w.PerWindowNew[n-1]
	}
	return r
}

// ProvenanceSignalRowOf is the provenance_signals row of a signal.
func ProvenanceSignalRowOf(p *schema.ProvenanceSignal, raw []byte) store.ProvenanceSignalRow {
	f := p.Flags
	return store.ProvenanceSignalRow{Server: p.Server, AsOf: p.AsOf.UTC(), Repo: p.Repo, RepoURL: p.RepoURL, Score: p.Provenance.Value,
		Reason: p.Provenance.Reason, Observed: f.Observed, Resolved: f.Resolved, Fork: f.Fork, Archived: f.Archived, NoLicense: f.NoLicense,
		RepoUnder30d: f.Under30d, NamespaceOwnerMismatch: f.Mismatch, LateGT30d: f.LateGT30d, Late1to30d: f.Late1to30d,
		NoCommits90d: f.NoCommits90d, SingleAuthor90d: f.SingleAuthor, CommitCap: f.CapHit, CoRegistration: f.CoRegCluster,
		OneRepoMany: f.OneRepoMany, Verified90d: f.Verified, StarsGE100: f.Stars100, OwnerOld1y: f.OwnerOld, State: string(raw)}
}

// RateRows are the base_rates rows and the provenance_gate row of the rates.
func RateRows(r *schema.ProvenanceRates) ([]store.BaseRateRow, store.GateRow) {
	at := r.AsOf.UTC()
	rows := make([]store.BaseRateRow, 0, len(r.Rates))
	for _, x := range r.Rates {
		b, _ := schema.Marshal(x)
		rows = append(rows, store.BaseRateRow{Flag: x.Flag, AsOf: at, Denominator: x.Denominator, Count: x.Count, N: x.N, Live: x.Live,
			Pinned: x.Pinned, DeltaPP: x.DeltaPP, Scored: x.Scored, Direction: x.Direction, MethodVersion: r.MethodVersion, State: string(b)})
	}
	gb, _ := schema.Marshal(r.Gate)
	g := store.GateRow{AsOf: at, Open: r.Gate.Open, CoveragePct: r.Gate.CoveragePct, Resolvable: r.Gate.Resolvable, Fresh: r.Gate.Fresh,
		Observed: r.Gate.Observed, State: string(gb)}
	return rows, g
}

// TrustRecordOf is the trust_records row of a sealed record.
func TrustRecordOf(t *schema.TrustRecordMsg) store.TrustRecord {
	return store.TrustRecord{Server: t.Server, PublicationID: t.PublicationID, ComputedAt: t.ComputedAt.UTC(), Score: t.Score, Band: t.Band,
		ToolfinderScore: t.ToolfinderScore, ContentSHA256: t.ContentSHA256, LeafHash: t.LeafHash, Record: t.Record}
}
