// Package history is the sink that keeps the registry's history in the
// store: registry.records -> registry_records + servers_latest,
// registry.diffs -> drift_events, registry.snapshots -> snapshots,
// health.checks -> health_checks, dlq -> dlq.
//
// It is the at-least-once boundary: a batch is written to the store first and
// its offsets are committed after (bus.Consume), and every table dedups on a
// deterministic key, so a crash between the two only re-writes the same rows.
// A message that does not decode is stored as a dead letter with its reason;
// it never stops the stream.
package history

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// Topics the sink reads.
var Topics = []string{schema.TopicRegistryRecords, schema.TopicRegistryDiffs, schema.TopicRegistrySnapshots, schema.TopicHealthChecks, schema.TopicDLQ}

// Group is the sink's consumer group.
const Group = "forum-history"

// Writer is what the sink needs of the store.
type Writer interface {
	InsertRecords(ctx context.Context, recs []store.Record) error
	InsertEvents(ctx context.Context, evs []schema.DriftEvent) error
	InsertSnapshots(ctx context.Context, snaps []schema.SnapshotSummary) error
	InsertDLQ(ctx context.Context, msgs []schema.DLQMessage) error
	InsertHealthChecks(ctx context.Context, checks []store.HealthCheck) error
}

// Metrics counts what the sink stored.
type Metrics struct {
	Rows    *prometheus.CounterVec // by table
	DLQ     *prometheus.CounterVec // by reason
	Batches prometheus.Histogram
}

// NewMetrics registers the sink's metrics on reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Rows:    prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_history_rows_total", Help: "Rows written to the store by the history sink (before dedup)."}, []string{"table"}),
		DLQ:     prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_dlq_messages_total", Help: "Dead letters stored, by reason code."}, []string{"reason"}),
		Batches: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "forum_history_batch_seconds", Help: "Time to store one batch.", Buckets: prometheus.DefBuckets}),
	}
	if reg != nil {
		reg.MustRegister(m.Rows, m.DLQ, m.Batches)
	}
	return m
}

// Sink stores batches.
type Sink struct {
	W       Writer
	Log     *zap.Logger
	Metrics *Metrics
}

// Handle decodes one batch and writes it; it is a bus.Handler.
func (s *Sink) Handle(ctx context.Context, msgs []kafka.Message) error {
	start := time.Now()
	var recs []store.Record
	var evs []schema.DriftEvent
	var snaps []schema.SnapshotSummary
	var dlq []schema.DLQMessage
	var checks []store.HealthCheck
	bad := func(m kafka.Message, err error) {
		dlq = append(dlq, schema.NewDLQ("history", fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset), schema.ReasonBadMessage, err.Error(), string(m.Key), m.Value, time.Now()))
	}
	for _, m := range msgs {
		switch m.Topic {
		case schema.TopicRegistryRecords:
			var r schema.RecordMsg
			if err := json.Unmarshal(m.Value, &r); err != nil {
				bad(m, err)
				continue
			}
			if r.Type == schema.MsgRecord {
				if r.Entry == nil || r.Entry.Server.Name == "" {
					bad(m, fmt.Errorf("record message without an entry"))
					continue
				}
				recs = append(recs, store.RecordFromEntry(r.Entry, r.SnapshotID, r.ObservedAt))
			}
		case schema.TopicRegistryDiffs:
			var e schema.DriftEvent
			if err := json.Unmarshal(m.Value, &e); err != nil || e.ID == "" {
				if err == nil {
					err = fmt.Errorf("drift event without an id")
				}
				bad(m, err)
				continue
			}
			evs = append(evs, e)
		case schema.TopicRegistrySnapshots:
			var sn schema.SnapshotSummary
			if err := json.Unmarshal(m.Value, &sn); err != nil || sn.ID == "" {
				if err == nil {
					err = fmt.Errorf("snapshot summary without an id")
				}
				bad(m, err)
				continue
			}
			snaps = append(snaps, sn)
		case schema.TopicHealthChecks:
			var c probe.Check
			if err := json.Unmarshal(m.Value, &c); err != nil || c.ID == "" || c.Server == "" {
				if err == nil {
					err = fmt.Errorf("health check without an id or server")
				}
				bad(m, err)
				continue
			}
			checks = append(checks, HealthRow(&c, m.Value))
		case schema.TopicDLQ:
			var d schema.DLQMessage
			if err := json.Unmarshal(m.Value, &d); err != nil || d.ID == "" {
				if err == nil {
					err = fmt.Errorf("dead letter without an id")
				}
				bad(m, err)
				continue
			}
			dlq = append(dlq, d)
		}
	}
	if len(recs) > 0 {
		if err := s.W.InsertRecords(ctx, recs); err != nil {
			return fmt.Errorf("storing registry records: %w", err)
		}
	}
	if len(evs) > 0 {
		if err := s.W.InsertEvents(ctx, evs); err != nil {
			return fmt.Errorf("storing drift events: %w", err)
		}
	}
	if len(snaps) > 0 {
		if err := s.W.InsertSnapshots(ctx, snaps); err != nil {
			return fmt.Errorf("storing snapshots: %w", err)
		}
	}
	if len(checks) > 0 {
		if err := s.W.InsertHealthChecks(ctx, checks); err != nil {
			return fmt.Errorf("storing health checks: %w", err)
		}
	}
	if len(dlq) > 0 {
		if err := s.W.InsertDLQ(ctx, dlq); err != nil {
			return fmt.Errorf("storing dead letters: %w", err)
		}
	}
	if s.Metrics != nil {
		s.Metrics.Rows.WithLabelValues("registry_records").Add(float64(len(recs)))
		s.Metrics.Rows.WithLabelValues("drift_events").Add(float64(len(evs)))
		s.Metrics.Rows.WithLabelValues("snapshots").Add(float64(len(snaps)))
		s.Metrics.Rows.WithLabelValues("dlq").Add(float64(len(dlq)))
		s.Metrics.Rows.WithLabelValues("health_checks").Add(float64(len(checks)))
		for _, d := range dlq {
			s.Metrics.DLQ.WithLabelValues(d.Reason).Inc()
		}
		s.Metrics.Batches.Observe(time.Since(start).Seconds())
	}
	return nil
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

// Run consumes the sink's topics until ctx ends.
func (s *Sink) Run(ctx context.Context, brokers []string) error {
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: brokers, Group: Group, Topics: Topics, MaxBatch: MaxBatch, MaxWait: MaxWait, Log: s.Log}, s.Handle)
}

// HealthRow is the health_checks row of a check; raw is the check as JSON.
func HealthRow(c *probe.Check, raw []byte) store.HealthCheck {
	if raw == nil {
		raw, _ = json.Marshal(c)
	}
	return store.HealthCheck{
		ID: c.ID, Server: c.Server, RemoteURL: c.RemoteURL, ObservedAt: c.ObservedAt.UTC(), Transport: c.Transport,
		Outcome: string(c.Outcome), ErrorClass: string(c.ErrorClass), HTTPStatus: c.HTTPStatus, LatencyMS: c.InitializeLatencyMS,
		AuthKind: string(c.AuthKind), ProtocolVersion: c.ProtocolVersion, ToolCount: len(c.Tools), ToolsListed: c.ToolsListed, Check: string(raw),
	}
}
