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
	ListServers(ctx context.Context, q store.ListQuery) ([]store.ServerRow, error)
	FirstListed(ctx context.Context) (map[string]time.Time, error)
	SnapshotLoaded(ctx context.Context, snapshotID string) (bool, error)
}

// StoreListings reads the listings from the store's latest view.
type StoreListings struct{ S StoreReader }

// SnapshotLoaded implements ListingSource.
func (l StoreListings) SnapshotLoaded(ctx context.Context, id string) (bool, error) {
	return l.S.SnapshotLoaded(ctx, id)
}

// Listings returns every active latest entry's repository URL and first
// listing.
func (l StoreListings) Listings(ctx context.Context) ([]Listing, error) {
	first, err := l.S.FirstListed(ctx)
	if err != nil {
		return nil, err
	}
	var out []Listing
	cursor := ""
	for {
		rows, err := l.S.ListServers(ctx, store.ListQuery{Cursor: cursor, Limit: store.MaxListLimit})
		if err != nil {
			return nil, fmt.Errorf("listing servers: %w", err)
		}
		for _, r := range rows {
			if r.Status == "deleted" {
				continue
			}
			var d schema.ServerDetail
			if err := json.Unmarshal([]byte(r.Server), &d); err != nil {
				continue
			}
			li := Listing{Server: r.Name, ListedAt: first[r.Name]}
			if d.Repository != nil {
				li.RepoURL = d.Repository.URL
			}
			out = append(out, li)
		}
		if len(rows) < store.MaxListLimit {
			return out, nil
		}
		cursor = rows[len(rows)-1].Name
	}
}
