package history

// The provenance sink: provenance.obs (ingest/github.Observation, keyed by
// repo) -> the store's provenance table, one row per observation id, with
// flags derived from the observation alone (ProvenanceRow). It has its own
// consumer group, so it neither slows nor is slowed by the history sink or
// the provenance processor, and keeps the history sink's contract: the
// store has the batch before its offsets are committed (bus.Consume), rows
// dedup on the observation id, and a message that does not decode becomes
// a dead letter with its reason.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// ProvenanceGroup is the provenance sink's consumer group.
const ProvenanceGroup = "forum-provenance-sink"

// ProvenanceStage names the sink in dead letters.
const ProvenanceStage = "provenance-sink"

// ProvenanceTopics are the topics the provenance sink reads.
var ProvenanceTopics = []string{github.Topic}

// ProvenanceWriter is what the provenance sink needs of the store.
type ProvenanceWriter interface {
	InsertProvenance(ctx context.Context, rows []store.Provenance) error
	InsertDLQ(ctx context.Context, msgs []schema.DLQMessage) error
}

// ProvenanceMetrics counts what the provenance sink stored.
type ProvenanceMetrics struct {
	Rows prometheus.Counter
	DLQ  *prometheus.CounterVec // by reason
}

// NewProvenanceMetrics registers the sink's metrics on reg (nil: unregistered).
func NewProvenanceMetrics(reg prometheus.Registerer) *ProvenanceMetrics {
	m := &ProvenanceMetrics{
		Rows: prometheus.NewCounter(prometheus.CounterOpts{Name: "forum_provenance_sink_rows_total", Help: "GitHub observations written to the store by the provenance sink (before dedup)."}),
		DLQ:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "forum_provenance_sink_dlq_total", Help: "Dead letters stored by the provenance sink, by reason code."}, []string{"reason"}),
	}
	if reg != nil {
		reg.MustRegister(m.Rows, m.DLQ)
	}
	return m
}

// ProvenanceSink stores GitHub observations.
type ProvenanceSink struct {
	W       ProvenanceWriter
	Weights *method.Weights // thresholds of the flags; nil: method.Current()
	Log     *zap.Logger
	Metrics *ProvenanceMetrics
	Now     func() time.Time // dead letters' observed_at; nil: time.Now
}

var errNoID = errors.New("observation without an id, repo or observed_at")

// Handle decodes one batch and writes it; it is a bus.Handler.
func (s *ProvenanceSink) Handle(ctx context.Context, msgs []kafka.Message) error {
	w := s.Weights
	if w == nil {
		w = method.Current()
	}
	now := s.Now
	if now == nil {
		now = time.Now
	}
	rows := make([]store.Provenance, 0, len(msgs))
	var dlq []schema.DLQMessage
	for _, m := range msgs {
		var o github.Observation
		err := json.Unmarshal(m.Value, &o)
		if err == nil && (o.ID == "" || o.Repo == "" || o.ObservedAt.IsZero()) {
			err = errNoID
		}
		if err != nil {
			dlq = append(dlq, schema.NewDLQ(ProvenanceStage, fmt.Sprintf("%s/%d@%d", m.Topic, m.Partition, m.Offset),
				schema.ReasonBadMessage, err.Error(), string(m.Key), m.Value, now()))
			continue
		}
		rows = append(rows, ProvenanceRow(w, o))
	}
	if err := s.W.InsertProvenance(ctx, rows); err != nil {
		return fmt.Errorf("storing provenance: %w", err)
	}
	if len(dlq) > 0 {
		if err := s.W.InsertDLQ(ctx, dlq); err != nil {
			return fmt.Errorf("storing dead letters: %w", err)
		}
		if s.Log != nil {
			s.Log.Warn("provenance sink: dead letters", zap.Int("n", len(dlq)))
		}
	}
	if s.Metrics != nil {
		s.Metrics.Rows.Add(float64(len(rows)))
		for _, d := range dlq {
			s.Metrics.DLQ.WithLabelValues(d.Reason).Inc()
		}
	}
	return nil
}

// Run consumes provenance.obs until ctx ends.
func (s *ProvenanceSink) Run(ctx context.Context, brokers []string) error {
	return bus.Consume(ctx, bus.ConsumeConfig{Brokers: brokers, Group: ProvenanceGroup, Topics: ProvenanceTopics,
		MaxBatch: 2000, MaxWait: 200 * time.Millisecond, Log: s.Log}, s.Handle)
}

// ProvenanceRow is the provenance row of an observation. Its flags are
// processors/provenance.FlagsOf at the observation's own observed_at (no
// listing, no registry facts: only what the observation says), NULL where
// FlagsOf's denominators leave the observation out: unresolved repos for
// every flag, unfetched commits for the commit flags, an owner not yet
// looked up for owner_older_than_1y.
func ProvenanceRow(w *method.Weights, o github.Observation) store.Provenance {
	p := store.Provenance{
		ID: o.ID, Repo: o.Repo, ObservedAt: o.ObservedAt.UTC(), Status: o.Status, HTTPStatus: o.HTTPStatus,
		NotModified: o.NotModified, FullName: o.FullName, RenamedTo: o.RenamedTo, OwnerLogin: o.OwnerLogin,
		OwnerType: o.OwnerType, OwnerCreatedAt: o.OwnerCreatedAt.UTC(), OwnerObservedAt: o.OwnerObservedAt.UTC(), CreatedAt: o.CreatedAt.UTC(),
		PushedAt: o.PushedAt.UTC(), Stars: o.Stars, Fork: o.Fork, Archived: o.Archived, Disabled: o.Disabled,
		LicenseSPDX: o.LicenseSPDX,
	}
	fl := provenance.FlagsOf(w, provenance.Listing{RepoURL: "https://" + o.Repo}, &o, trust.Facts{}, o.ObservedAt)
	if c := o.Commits; fl.CommitsKnown && c != nil {
		p.CommitsFetched, p.CommitsObservedAt = true, c.ObservedAt.UTC()
		p.CommitsCount, p.Authors, p.Verified, p.Empty, p.CapHit, p.LastCommitAt = c.Count, c.Authors, c.Verified, c.Empty, c.CapHit, c.Last.UTC()
	}
	if !fl.Resolved {
		return p
	}
	b := func(v bool) *bool { return &v }
	f := &p.Flags
	f.NoLicense, f.RepoUnder30d, f.StaleOver1y = b(fl.NoLicense), b(fl.Under30d), b(fl.StaleOver1y)
	f.Archived, f.Fork, f.StarsGE100 = b(fl.Archived), b(fl.Fork), b(fl.Stars100)
	if fl.CommitsKnown {
		f.SingleAuthor90d, f.NoCommits90d, f.CommitCapHit = b(fl.SingleAuthor), b(fl.NoCommits90d), b(fl.CapHit)
	}
	if fl.OwnerKnown {
		f.OwnerOlderThan1y = b(fl.OwnerOld)
	}
	return p
}
