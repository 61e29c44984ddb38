package github

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/internal/component"
	"github.com/forum-mcp/forum/schema"
)

// CheckpointFile is the crawler's checkpoint (ETags, last observations, the
// owner accounts looked up) under the data dir.
const CheckpointFile = "github-crawler.json"

// Lister pages over the registry's latest view (the stores implement it;
// see probe.Lister): where the repositories to observe come from.
type Lister interface {
	LatestEntries(ctx context.Context, after string, limit int) (entries []schema.Entry, next string, err error)
}

// RepoURLs lists the repository URL of every active latest entry.
func RepoURLs(ctx context.Context, l Lister) ([]string, error) {
	var out []string
	after := ""
	for {
		page, next, err := l.LatestEntries(ctx, after, 1000)
		if err != nil {
			return nil, fmt.Errorf("listing servers: %w", err)
		}
		for _, e := range page {
			if e.Status() != "deleted" && e.Server.Repository != nil && e.Server.Repository.URL != "" {
				out = append(out, e.Server.Repository.URL)
			}
		}
		if next == "" {
			return out, nil
		}
		after = next
	}
}

func init() {
	component.Register(component.Spec{
		Name: "github", Role: component.RoleSource,
		Out:   []string{schema.TopicProvenanceObs},
		Doc:   "crawl the GitHub repository of every listed server onto provenance.obs (GITHUB_TOKEN: 5,000 requests/h)",
		InRun: func(s component.Settings) bool { return s.GitHub.Enabled },
		New: func(_ context.Context, d *component.Deps) (component.Runner, error) {
			l, ok := d.Store.(Lister)
			if !ok {
				return nil, fmt.Errorf("the GitHub crawler needs the store's latest view (store %T)", d.Store)
			}
			g := d.Settings.GitHub
			log := d.Log.Named("github")
			if g.Token == "" {
				log.Warn("GITHUB_TOKEN is not set: 60 requests/h, the coverage gate will stay closed")
			}
			w := bus.NewWriter(d.Brokers, d.Log)
			c := &Crawler{
				Client:        NewClient(g.BaseURL, g.Token, RealClock{}, nil),
				Targets:       func(ctx context.Context) ([]string, error) { return RepoURLs(ctx, l) },
				Publish:       func(ctx context.Context, o Observation) error { return publish(ctx, w, o) },
				CommitPageCap: g.PageCap,
				Refresh:       g.Refresh,
				OwnerRefresh:  g.OwnerRefresh,
				StatePath:     filepath.Join(d.DataDir, CheckpointFile),
				Log:           log,
			}
			if err := c.Load(); err != nil {
				w.Close()
				return nil, err
			}
			return component.RunFunc(func(ctx context.Context) error {
				defer w.Close()
				return c.Run(ctx)
			}), nil
		},
	})
}

// publish writes one observation on provenance.obs, keyed by repo.
func publish(ctx context.Context, w *bus.Writer, o Observation) error {
	b, err := schema.Marshal(o)
	if err != nil {
		return err
	}
	if err := w.WriteMessages(ctx, kafka.Message{Topic: Topic, Key: []byte(o.Repo), Value: b, Time: o.ObservedAt}); err != nil {
		return fmt.Errorf("publishing a GitHub observation: %w", bus.SummarizeWriteError(err))
	}
	return nil
}
