package scorer

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/processors/drift"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/ownerburst"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// TableSources are the other processors' conclusions as the scorer reads
// them: local copies of their compacted output topics (stage.Table), never
// their memory, so the scorer runs in any process that reaches the bus.
type TableSources struct {
	Drift      *stage.Table[schema.DriftState]
	Bursts     *stage.Table[schema.OwnerBurstWindow]
	Incidents  *stage.Table[schema.IncidentState]
	Provenance *stage.Table[schema.ProvenanceSignal]
	Weights    *method.Weights

	mu       sync.Mutex
	burstAt  time.Time
	burstIdx map[string]schema.OwnerBurstWindow // namespace -> its newest window as of burstAt
}

// NewTableSources makes the tables of the four output topics on brokers.
func NewTableSources(brokers []string, w *method.Weights, dlq stage.Writer, metrics *stage.Metrics, log *zap.Logger) *TableSources {
	return &TableSources{
		Drift: &stage.Table[schema.DriftState]{Topic: schema.TopicDriftState, Producer: drift.Name, Brokers: brokers, DLQ: dlq, Metrics: metrics, Log: log,
			Decode: func(m kafka.Message) (schema.DriftState, error) {
				var v schema.DriftState
				if err := schema.Unmarshal(m.Value, &v); err != nil {
					return v, err
				}
				if v.Server == "" && v.Namespace != "" { // a namespace's bulk edits
					return v, nil
				}
				return v, v.Validate()
			}},
		Bursts: &stage.Table[schema.OwnerBurstWindow]{Topic: schema.TopicOwnerBursts, Producer: ownerburst.Name, Brokers: brokers, DLQ: dlq, Metrics: metrics, Log: log,
			Decode: func(m kafka.Message) (schema.OwnerBurstWindow, error) {
				return schema.Decode[schema.OwnerBurstWindow](m.Value)
			}},
		Incidents: &stage.Table[schema.IncidentState]{Topic: schema.TopicIncidentState, Producer: incidents.Name, Brokers: brokers, DLQ: dlq, Metrics: metrics, Log: log,
			Decode: func(m kafka.Message) (schema.IncidentState, error) {
				return schema.Decode[schema.IncidentState](m.Value)
			}},
		Provenance: &stage.Table[schema.ProvenanceSignal]{Topic: schema.TopicProvenanceSignals, Producer: provenance.Name, Brokers: brokers, DLQ: dlq, Metrics: metrics, Log: log,
			Decode: func(m kafka.Message) (schema.ProvenanceSignal, error) {
				return schema.Decode[schema.ProvenanceSignal](m.Value)
			}},
		Weights: w,
	}
}

// Run reads the four tables until ctx ends.
func (ts *TableSources) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for _, run := range []func(context.Context) error{ts.Drift.Run, ts.Bursts.Run, ts.Incidents.Run, ts.Provenance.Run} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := run(ctx); err != nil && ctx.Err() == nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// WaitFor waits (up to max) until the drift, owner-burst and provenance
// processors have concluded through event time t and the incidents
// processor has read its feed to the end once (so every publication's
// incidents sub-score is known, in a replay as in a live run).
func (ts *TableSources) WaitFor(ctx context.Context, t time.Time, max time.Duration) error {
	deadline := time.Now().Add(max)
	for !ts.Incidents.Loaded() {
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: the incidents processor has not loaded its feed: %w", schema.TopicIncidentState, stage.ErrNotReached)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	for _, w := range []interface {
		WaitWatermark(ctx context.Context, at time.Time, max time.Duration) error
	}{ts.Drift, ts.Bursts, ts.Provenance} {
		if err := w.WaitWatermark(ctx, t, time.Until(deadline)); err != nil {
			return err
		}
	}
	return nil
}

// Sources are the scorer's source interfaces over the tables.
func (ts *TableSources) Sources() Sources {
	return Sources{Drift: tableDrift{ts}, Incidents: tableIncidents{ts}, Burst: tableBursts{ts}, Provenance: tableProvenance{ts}}
}

type tableDrift struct{ ts *TableSources }

func (d tableDrift) DriftInput(server string) trust.DriftInput {
	var sp, np *schema.DriftState
	if v, ok := d.ts.Drift.Get(server); ok {
		sp = &v
	}
	if v, ok := d.ts.Drift.Get(schema.Namespace(server)); ok {
		np = &v
	}
	return drift.InputOf(sp, np)
}

type tableIncidents struct{ ts *TableSources }

func (i tableIncidents) IncidentsInput(server string) trust.IncidentsInput {
	loaded := i.ts.Incidents.Loaded()
	if v, ok := i.ts.Incidents.Get(server); ok {
		return incidents.InputOf(&v, loaded)
	}
	return incidents.InputOf(nil, loaded)
}

type tableBursts struct{ ts *TableSources }

// OwnerBurst evaluates a namespace at now from the window that covers now:
// the earliest at or after now (a window holds the new_server times of the
// two weeks before its as_of, and the evaluation ignores later ones), else
// the newest before now (the detector emits a window at every snapshot that
// brings the namespace a new server, so no new server lies between that
// window and now). A window that leaves part of now's evaluated span
// uncovered is not used: no evidence rather than a wrong count.
func (b tableBursts) OwnerBurst(namespace string, now time.Time) (trust.OwnerBurst, bool) {
	ts := b.ts
	ts.mu.Lock()
	if !ts.burstAt.Equal(now) || ts.burstIdx == nil {
		after, before := map[string]schema.OwnerBurstWindow{}, map[string]schema.OwnerBurstWindow{}
		ts.Bursts.Range(func(_ string, w schema.OwnerBurstWindow) bool {
			if !w.AsOf.Before(now) {
				if cur, ok := after[w.Namespace]; !ok || w.AsOf.Before(cur.AsOf) {
					after[w.Namespace] = w
				}
			} else if cur, ok := before[w.Namespace]; !ok || w.AsOf.After(cur.AsOf) {
				before[w.Namespace] = w
			}
			return true
		})
		for ns, w := range before {
			if _, ok := after[ns]; !ok {
				after[ns] = w
			}
		}
		ts.burstAt, ts.burstIdx = now, after
	}
	w, ok := ts.burstIdx[namespace]
	ts.mu.Unlock()
	span := time.Duration(float64(ts.Weights.OwnerBurst.Windows) * ts.Weights.OwnerBurst.WindowHours * float64(time.Hour))
	if !ok || now.Sub(w.AsOf) > ownerburst.Retention-span || w.AsOf.Sub(now) > ownerburst.Retention-span {
		return trust.OwnerBurst{}, false
	}
	ob := trust.OwnerBurstOf(ts.Weights, w.NewServers, now)
	return ob, ob.Flagged()
}

type tableProvenance struct{ ts *TableSources }

// GitHub returns the observation of the server's repository, when the
// processor's signal for the server is about that repository.
func (p tableProvenance) GitHub(server, repoURL string) (GitHubObservation, bool) {
	v, ok := p.ts.Provenance.Get(server)
	if !ok || v.Observation == nil {
		return GitHubObservation{}, false
	}
	if key, _, _, ok := schema.GitHubRepoKey(repoURL); !ok || key != v.Observation.Repo {
		return GitHubObservation{}, false
	}
	return ObservationOf(*v.Observation), true
}

// GateOpen is the coverage gate at now over the repos of the processor's
// signals.
func (p tableProvenance) GateOpen(now time.Time) bool {
	repos := map[string]time.Time{}
	p.ts.Provenance.Range(func(_ string, v schema.ProvenanceSignal) bool {
		if v.Repo == "" {
			return true
		}
		var at time.Time
		if v.Observation != nil {
			at = v.Observation.ObservedAt
		}
		if cur, ok := repos[v.Repo]; !ok || at.After(cur) {
			repos[v.Repo] = at
		}
		return true
	})
	return provenance.GateOf(repos, now).Open
}
