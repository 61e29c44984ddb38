package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The provenance processor stage: provenance.obs in (from 'forum github'),
// per-server signals, live base rates and the coverage gate out, for the
// scorer (lazyProvenance) and the API (/v1/method/base-rates,
// /v1/provenance/gate, /v1/servers/{name}/provenance,
// /v1/provenance/observation). Bad observations: dlq topic with a reason
// code (processors/provenance.Stage). State: DATA_DIR/provenance-state.json.

// provenanceState is the running processor's state (nil until started).
var provenanceState *provenance.State

const provenanceCheckpoint = "provenance-state.json"

// envGitHubCrawl=1 also runs the GitHub crawler inside run/process.
const envGitHubCrawl = "FORUM_GITHUB_CRAWL"

func init() {
	registerStage(stageSpec{name: "provenance",
		start: func(ctx context.Context, a *app) (func(context.Context) error, error) {
			if err := ensureProvenanceTopic(ctx, a); err != nil {
				return nil, err
			}
			st, err := provenance.NewStage(a.brokers, filepath.Join(a.cfg.DataDir, provenanceCheckpoint), a.log)
			if err != nil {
				return nil, err
			}
			// Bad observations go to the dlq topic (Run opens the writer on
			// a.brokers) and are counted here.
			st.Metrics = provenance.NewMetrics(a.reg)
			if a.store != nil {
				st.Listings = func(ctx context.Context) ([]provenance.Listing, error) { return storeListings(ctx, a.store) }
			}
			provenanceState = st.State
			snap := cachedSnapshot(st.State)
			a.routes = append(a.routes, api.ProvenanceRoutes(api.ProvenanceOptions{Snapshot: snap, Observation: st.State.Observation}))
			if os.Getenv(envGitHubCrawl) != "1" {
				return st.Run, nil
			}
			gf := githubFlags{token: os.Getenv("GITHUB_TOKEN"), base: envOr("FORUM_GITHUB_API", github.DefaultBaseURL), pageCap: github.DefaultCommitPageCap,
				refresh: github.DefaultRefresh, ownerRefresh: github.DefaultOwnerRefresh}
			crawl, err := githubCrawler(a, gf)
			if err != nil {
				return nil, err
			}
			return func(ctx context.Context) error {
				errc := make(chan error, 1)
				go func() { errc <- crawl(ctx) }()
				err := st.Run(ctx)
				if cerr := <-errc; err == nil {
					err = cerr
				}
				return err
			}, nil
		}})
}

func ensureProvenanceTopic(ctx context.Context, a *app) error {
	parts := max(a.cfg.Partitions, 1)
	if err := bus.EnsureTopics(ctx, a.brokers, []bus.TopicSpec{{Name: provenance.Topic, Partitions: parts}}, a.log); err != nil {
		return fmt.Errorf("creating the %s topic: %w", provenance.Topic, err)
	}
	return nil
}

// cachedSnapshot evaluates the state at most once a minute for the API
// (28k servers take a fraction of a second).
func cachedSnapshot(st *provenance.State) func(time.Time) *provenance.Snapshot {
	var mu sync.Mutex
	var last *provenance.Snapshot
	return func(now time.Time) *provenance.Snapshot {
		mu.Lock()
		defer mu.Unlock()
		if last == nil || now.Sub(last.At) > time.Minute || now.Before(last.At) {
			s := st.Snapshot(method.Current(), now)
			last = &s
		}
		return last
	}
}

// storeListings reads every active latest entry's repository URL and first
// listing from the store.
func storeListings(ctx context.Context, s store.Store) ([]provenance.Listing, error) {
	first := map[string]time.Time{}
	if ts, ok := s.(store.TrustStore); ok {
		m, err := ts.FirstListed(ctx)
		if err != nil {
			return nil, err
		}
		first = m
	}
	var out []provenance.Listing
	cursor := ""
	for {
		rows, err := s.ListServers(ctx, store.ListQuery{Cursor: cursor, Limit: store.MaxListLimit})
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
			l := provenance.Listing{Server: r.Name, ListedAt: first[r.Name]}
			if d.Repository != nil {
				l.RepoURL = d.Repository.URL
			}
			out = append(out, l)
		}
		if len(rows) < store.MaxListLimit {
			return out, nil
		}
		cursor = rows[len(rows)-1].Name
	}
}

// lazyProvenance is the provenance processor's state for the scorer; before
// it runs, nothing is observed and the gate is closed.
type lazyProvenance struct{}

func (lazyProvenance) GitHub(server, repoURL string) (scorer.GitHubObservation, bool) {
	if provenanceState == nil {
		return scorer.GitHubObservation{}, false
	}
	return provenance.Source{State: provenanceState}.GitHub(server, repoURL)
}

func (lazyProvenance) GateOpen(now time.Time) bool {
	if provenanceState == nil {
		return false
	}
	return provenanceState.Gate(now).Open
}
