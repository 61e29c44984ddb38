package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/processors/drift"
	"github.com/forum-mcp/forum/processors/incidents"
	"github.com/forum-mcp/forum/processors/ownerburst"
	"github.com/forum-mcp/forum/sql/store"
)

// The running processors' states, set by their stages' start, for the
// scorer's wiring to read (nil until started; each State is safe for
// concurrent use).
var (
	driftState    *drift.State
	incidentState *incidents.State
	burstState    *ownerburst.State
)

// Checkpoint files under --data-dir.
const (
	driftCheckpoint     = "drift-state.json"
	incidentsCheckpoint = "incidents-state.json"
	burstCheckpoint     = "ownerburst-state.json"
)

// envAdminToken holds the admin API's bearer tokens: "label:token" pairs,
// comma-separated (a bare token gets the label "admin").
const envAdminToken = "FORUM_ADMIN_TOKEN"

func init() {
	registerStage(stageSpec{name: "drift", group: drift.Group, topics: drift.Topics,
		start: func(_ context.Context, a *app) (func(context.Context) error, error) {
			st, err := drift.NewStage(a.brokers, filepath.Join(a.cfg.DataDir, driftCheckpoint), a.log)
			if err != nil {
				return nil, err
			}
			driftState = st.State
			return st.Run, nil
		}})
	registerStage(stageSpec{name: "ownerburst", group: ownerburst.Group, topics: ownerburst.Topics,
		start: func(_ context.Context, a *app) (func(context.Context) error, error) {
			st, err := ownerburst.NewStage(a.brokers, filepath.Join(a.cfg.DataDir, burstCheckpoint), a.log)
			if err != nil {
				return nil, err
			}
			burstState = st.State
			a.routes = append(a.routes, api.BurstRoutes(api.BurstOptions{Flagged: st.State.Flagged, Watermark: st.State.Watermark}))
			return st.Run, nil
		}})
	registerStage(stageSpec{name: "incidents", group: incidents.Group, topics: incidents.Topics,
		start: func(ctx context.Context, a *app) (func(context.Context) error, error) {
			is, ok := a.store.(store.IncidentStore)
			if !ok {
				return nil, fmt.Errorf("the store %T keeps no incidents", a.store)
			}
			if err := ensureIncidentTopic(ctx, a); err != nil {
				return nil, err
			}
			st, err := incidents.NewStage(a.brokers, is, filepath.Join(a.cfg.DataDir, incidentsCheckpoint), a.log)
			if err != nil {
				return nil, err
			}
			incidentState = st.State
			w := bus.NewWriter(a.brokers, a.log)
			pub := &incidents.Publisher{W: w}
			tokens := adminTokens(a, "incident admin API")
			a.routes = append(a.routes, api.IncidentRoutes(api.IncidentOptions{
				Tokens:  tokens,
				Lookup:  incidents.StoreLookup{Servers: a.store, Incidents: is, State: st.State},
				Publish: func(ctx context.Context, m incidents.Msg) error { return pub.Publish(ctx, m) },
				Store:   is,
				Now:     time.Now,
				Log:     a.log.Named("incidents-api"),
			}))
			return func(ctx context.Context) error {
				defer w.Close()
				return st.Run(ctx)
			}, nil
		}})
}

func ensureIncidentTopic(ctx context.Context, a *app) error {
	parts := a.cfg.Partitions
	if parts <= 0 {
		parts = 1
	}
	if err := bus.EnsureTopics(ctx, a.brokers, []bus.TopicSpec{{Name: incidents.Topic, Partitions: parts}}, a.log); err != nil {
		return fmt.Errorf("creating the %s topic: %w", incidents.Topic, err)
	}
	return nil
}
