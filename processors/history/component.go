package history

import (
	"context"
	"fmt"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/processors/method"
)

func init() {
	component.Register(component.Spec{
		Name: Name, Role: component.RoleProcess, Group: Group, In: Topics,
		Doc: "stores what came in: registry records, drift events, snapshots, health checks, GitHub observations, incidents, dead letters",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			w, ok := d.Store.(Writer)
			if !ok {
				return nil, fmt.Errorf("the store %T cannot keep the history", d.Store)
			}
			m, err := method.Load(d.Settings.MethodWeights)
			if err != nil {
				return nil, err
			}
			s := &Sink{W: w, Weights: m.Weights, Log: d.Log, Times: NewWriteTimes(d.Registry)}
			return stage.New(s.Config(d.Brokers, d.Stage))
		},
	})
	component.Register(component.Spec{
		Name: ResultsName, Role: component.RoleProcess, Group: ResultsGroup, In: ResultsTopics,
		Doc: "stores what the processors concluded: drift, incident and provenance state, owner bursts, base rates, trust records",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			w, ok := d.Store.(ResultsWriter)
			if !ok {
				return nil, fmt.Errorf("the store %T cannot keep the processors' results", d.Store)
			}
			s := &ResultsSink{W: w, Log: d.Log, Times: NewWriteTimes(d.Registry)}
			return stage.New(s.Config(d.Brokers, d.Stage))
		},
	})
	component.Register(component.Spec{
		Name: PublicationsName, Role: component.RoleProcess, Group: PublicationsGroup, In: PublicationsTopics,
		Doc: "stores each publication's signed header once all its records are stored",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			w, ok := d.Store.(PublicationsWriter)
			if !ok {
				return nil, fmt.Errorf("the store %T keeps no publications", d.Store)
			}
			s := &PublicationsSink{W: w, Log: d.Log, Times: NewWriteTimes(d.Registry)}
			return stage.New(s.Config(d.Brokers, d.Stage))
		},
	})
}
