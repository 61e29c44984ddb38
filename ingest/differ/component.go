package differ

import (
	"context"
	"path/filepath"

	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/schema"
)

// CheckpointFile is the differ's checkpoint (known state + next input
// offset) under the data dir.
const CheckpointFile = "differ-state.json"

func init() {
	component.Register(component.Spec{
		Name: "differ", Role: component.RoleProcess,
		In:     []string{}, // registry.records' one partition, read at its own checkpointed offset (no group): Lag
		Tables: []string{schema.TopicRegistryRecords},
		Out:    []string{schema.TopicRegistryDiffs, schema.TopicRegistrySnapshots, schema.TopicDLQ},
		Doc:    "registry snapshots -> drift events and one summary per applied snapshot (partial-crawl guard)",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			return NewStage(StageConfig{Brokers: d.Brokers, StatePath: filepath.Join(d.DataDir, CheckpointFile), Log: d.Log, Metrics: d.Stage})
		},
	})
}
