package probe

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/schema"
)

// SchedulerStateFile is the scheduler's checkpoint under the data dir.
const SchedulerStateFile = "probe-scheduler.json"

// Group is the probers' consumer group: every prober joins it, so the
// partitions of probe.requests — and the work — are split among them.
const Group = "forum-prober"

func init() {
	component.Register(component.Spec{
		Name: "probe-scheduler", Role: component.RoleSource,
		Out:   []string{schema.TopicProbeRequests},
		Doc:   "one probe request per remote per --probe-interval, at a spread slot (reads the latest view from the store)",
		InRun: func(component.Settings) bool { return true },
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			l, ok := d.Store.(Lister)
			if !ok {
				return nil, fmt.Errorf("the probe scheduler needs the store's latest view (store %T)", d.Store)
			}
			w := bus.NewWriter(d.Brokers, d.Log)
			s := &Scheduler{Lister: l, W: w, Interval: d.Settings.Probe.Interval,
				StatePath: filepath.Join(d.DataDir, SchedulerStateFile), Log: d.Log.Named("probe-scheduler")}
			return component.RunFunc(func(ctx context.Context) error {
				defer w.Close()
				return s.Run(ctx)
			}), nil
		},
	})
	component.Register(component.Spec{
		Name: "prober", Role: component.RoleSource, Group: Group,
		In:    []string{schema.TopicProbeRequests},
		Out:   []string{schema.TopicHealthChecks, schema.TopicDLQ},
		Doc:   "execute probe requests (MCP handshakes) onto health.checks; run several: they split the work as one group",
		InRun: func(component.Settings) bool { return true },
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			p := d.Settings.Probe
			opts := []Option{WithTimeout(p.Timeout), WithPerHostLimit(p.PerHost), WithAllow(p.Allow...), WithLogger(d.Log.Named("prober"))}
			if p.Interval > 0 {
				opts = append(opts, WithMaxBackoff(p.Interval)) // a host's back-off never outlasts the probe interval
			}
			return &Worker{Prober: New(opts...), Brokers: d.Brokers, Group: Group, Concurrency: p.Concurrency,
				Metrics: NewMetrics(d.Registry), StageMetrics: d.Stage, Log: d.Log.Named("prober")}, nil
		},
	})
}
