package scorer

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/schema"
)

// Files under the data dir.
const (
	CheckpointFile = "scorer-state.json"
	CommitLogFile  = "publications.log" // the append-only root commitments (publish.FileCommitter)
)

// SourceWait bounds how long a snapshot's publication waits for the drift,
// owner-burst and provenance processors to conclude it; the batch then
// fails and comes again (the processors may be restarting).
const SourceWait = 2 * time.Minute

func init() {
	component.Register(component.Spec{
		Name: Name, Role: component.RoleProcess, Group: Group,
		In:     Topics,
		Tables: []string{schema.TopicDriftState, schema.TopicOwnerBursts, schema.TopicIncidentState, schema.TopicProvenanceSignals},
		Out:    []string{schema.TopicTrustRecords, schema.TopicTrustPublications},
		Doc:    "one signed publication per applied snapshot (and every --publish-interval): Toolfinder and FORUM records",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			st, ok := d.Store.(StageStore)
			if !ok {
				return nil, fmt.Errorf("the store %T cannot feed the scorer", d.Store)
			}
			m, err := method.Load(d.Settings.MethodWeights)
			if err != nil {
				return nil, err
			}
			keyPath := d.Settings.SigningKey
			if keyPath == "" {
				keyPath = filepath.Join(d.DataDir, KeyFile)
			}
			key, err := LoadOrCreateKey(keyPath)
			if err != nil {
				return nil, err
			}
			w := bus.NewWriter(d.Brokers, d.Log)
			tables := NewTableSources(d.Brokers, m.Weights, w, d.Stage, d.Log.Named("scorer-tables"))
			s := &Stage{
				Store: st, Method: m, Sources: tables.Sources(),
				Wait: func(ctx context.Context, t time.Time) error { return tables.WaitFor(ctx, t, SourceWait) },
				Out: BusOutput{
					RecordsOut: &stage.Emitter{Stage: Name, Topic: schema.TopicTrustRecords, Brokers: d.Brokers, W: w, Metrics: d.Stage},
					HeadersOut: &stage.Emitter{Stage: Name, Topic: schema.TopicTrustPublications, Brokers: d.Brokers, W: w, Metrics: d.Stage},
				},
				Key: key, Committer: publish.NewFileCommitter(filepath.Join(d.DataDir, CommitLogFile)),
				Path: filepath.Join(d.DataDir, CheckpointFile), Interval: d.Settings.PublishInterval,
				Log: d.Log.Named(Name), Metrics: NewMetrics(d.Registry),
			}
			if rv, ok := d.Store.(ReviewLookup); ok {
				s.Reviews = rv // an approved review hold is over for the next publication
			}
			sg, err := stage.New(s.Config(d.Brokers, d.Stage))
			if err != nil {
				w.Close()
				return nil, err
			}
			return component.RunFunc(func(ctx context.Context) error {
				defer w.Close()
				tctx, cancel := context.WithCancel(ctx)
				done := make(chan struct{})
				go func() {
					defer close(done)
					_ = tables.Run(tctx)
				}()
				err := s.Run(ctx, sg)
				cancel()
				<-done
				return err
			}), nil
		},
	})
}
