package ownerburst

import (
	"context"
	"path/filepath"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

// CheckpointFile is the stage's checkpoint under the data dir.
const CheckpointFile = "ownerburst-state.json"

func init() {
	component.Register(component.Spec{
		Name: Name, Role: component.RoleProcess, Group: Group, In: Topics, Out: []string{schema.TopicOwnerBursts},
		Doc: "new_server events -> owner-burst windows per namespace and day, at every applied snapshot",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			m, err := method.Load(d.Settings.MethodWeights)
			if err != nil {
				return nil, err
			}
			w := bus.NewWriter(d.Brokers, d.Log)
			out := &stage.Emitter{Stage: Name, Topic: schema.TopicOwnerBursts, Brokers: d.Brokers, W: w, Metrics: d.Stage}
			s, err := NewStage(m.Weights, filepath.Join(d.DataDir, CheckpointFile), out, d.Log)
			if err != nil {
				w.Close()
				return nil, err
			}
			st, err := stage.New(s.Config(d.Brokers, d.Stage))
			if err != nil {
				w.Close()
				return nil, err
			}
			return component.RunFunc(func(ctx context.Context) error {
				defer w.Close()
				return st.Run(ctx)
			}), nil
		},
	})
}
