package provenance

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"time"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// CheckpointFile is the stage's checkpoint under the data dir.
const CheckpointFile = "provenance-state.json"

func init() {
	component.Register(component.Spec{
		Name: Name, Role: component.RoleProcess, Group: Group, In: Topics,
		Out: []string{schema.TopicProvenanceSignals, schema.TopicProvenanceRates},
		Doc: "GitHub observations + listings -> per-server provenance signals, live base rates, coverage gate",
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			ls, ok := d.Store.(StoreReader)
			if !ok {
				return nil, fmt.Errorf("the store %T cannot list the registry for the provenance processor", d.Store)
			}
			m, err := method.Load(d.Settings.MethodWeights)
			if err != nil {
				return nil, err
			}
			w := bus.NewWriter(d.Brokers, d.Log)
			signals := &stage.Emitter{Stage: Name, Topic: schema.TopicProvenanceSignals, Brokers: d.Brokers, W: w, Metrics: d.Stage}
			rates := &stage.Emitter{Stage: Name, Topic: schema.TopicProvenanceRates, Brokers: d.Brokers, W: w, Metrics: d.Stage}
			s, err := NewStage(m.Weights, filepath.Join(d.DataDir, CheckpointFile), StoreListings{S: ls}, signals, rates, d.Log)
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
				return s.Run(ctx, st)
			}), nil
		},
	})
}

// StoreReader is what StoreListings reads of the store.
type StoreReader interface {
	store.AsOfReader
	FirstListed(ctx context.Context) (map[string]time.Time, error)
	SnapshotLoaded(ctx context.Context, snapshotID string) (bool, error)
}

// StoreListings reads the listings from the store's latest view.
type StoreListings struct{ S StoreReader }

// SnapshotLoaded implements ListingSource.
func (l StoreListings) SnapshotLoaded(ctx context.Context, id string) (bool, error) {
	return l.S.SnapshotLoaded(ctx, id)
}

// Listings returns every active server's repository URL and first listing
// as of a snapshot (store.LatestAsOf).
func (l StoreListings) Listings(ctx context.Context, sn schema.SnapshotSummary) ([]Listing, error) {
	first, err := l.S.FirstListed(ctx)
	if err != nil {
		return nil, err
	}
	var out []Listing
	presentOnly := sn.Mode == schema.ModeFull && !sn.Partial
	err = store.LatestAsOf(ctx, l.S, sn.ObservedAt, presentOnly, func(r store.Record) error {
		if r.Status == "deleted" {
			return nil
		}
		var d schema.ServerDetail
		if err := json.Unmarshal([]byte(r.Server), &d); err != nil {
			return nil // it decoded once, when it was stored
		}
		li := Listing{Server: r.Name, ListedAt: first[r.Name]}
		if d.Repository != nil {
			li.RepoURL = d.Repository.URL
		}
		out = append(out, li)
		return nil
	})
	return out, err
}
