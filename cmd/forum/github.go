package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/provenance"
)

// 'forum github': the GitHub provenance crawler as its own role (SPEC §1.2).
// It reads the repository URLs of the registry's latest entries from the
// store and publishes observations on provenance.obs; 'forum process' (or
// 'run') runs the provenance processor that reads them. FORUM_GITHUB_CRAWL=1
// runs the crawler inside run/process too (stages_provenance.go).
// Checkpoint: DATA_DIR/github-crawler.json (ETags, last observations and
// the owner accounts looked up).

const githubCheckpoint = "github-crawler.json"

func init() { registerCommand(newGitHubCmd) }

type githubFlags struct {
	token        string
	base         string
	pageCap      int
	refresh      time.Duration
	ownerRefresh time.Duration
}

func newGitHubCmd() *cobra.Command {
	cfg := &config{}
	gf := githubFlags{}
	cmd := &cobra.Command{
		Use:   "github",
		Short: "Run the GitHub provenance crawler (ingest role github)",
		Long: `github crawls the GitHub repository of every listed server and publishes one
observation per fetch on provenance.obs (keyed by repo):
  GET /repos/{owner}/{repo}                       (301 renames followed, 404 unresolved)
  GET /repos/{owner}/{repo}/commits?since=90d     (per_page=100, --commit-page-cap pages;
                                                   409 = empty repo)
  GET /users/{login}                              (each owner once, after the commits,
                                                   again after --owner-refresh: the
                                                   account age for owner_older_than_1y)
Without a token GitHub allows 60 requests/h: the crawler covers what it can and
the coverage gate stays closed (scores use the registry-date fallbacks). With
GITHUB_TOKEN (5,000/h) ~28k repos are covered in about 6 hours. Requests are
spread evenly over the rate-limit window; If-None-Match makes unchanged repos
free (304); primary limits wait for x-ratelimit-reset, secondary limits honour
retry-after or back off >= 60 s.

Example:
  GITHUB_TOKEN=... forum github --data-dir ./data`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			a, err := openApp(ctx, cfg, withStore|withBus)
			if err != nil {
				return err
			}
			defer a.close()
			if err := ensureProvenanceTopic(ctx, a); err != nil {
				return err
			}
			run, err := githubCrawler(a, gf)
			if err != nil {
				return err
			}
			return run(ctx)
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cmd.Flags().StringVar(&gf.token, "github-token", os.Getenv("GITHUB_TOKEN"), "GitHub token (env GITHUB_TOKEN); empty = 60 requests/h")
	cmd.Flags().StringVar(&gf.base, "github-api", envOr("FORUM_GITHUB_API", github.DefaultBaseURL), "GitHub REST base URL (env FORUM_GITHUB_API)")
	cmd.Flags().IntVar(&gf.pageCap, "commit-page-cap", github.DefaultCommitPageCap, "commit pages (of 100) per repo; more sets commit_cap_hit")
	cmd.Flags().DurationVar(&gf.refresh, "refresh", github.DefaultRefresh, "re-observe each repo this long after its last observation")
	cmd.Flags().DurationVar(&gf.ownerRefresh, "owner-refresh", github.DefaultOwnerRefresh, "look each owner account up again this long after the last lookup (a 304 is free)")
	return cmd
}

// githubCrawler builds the crawler on the app's store and bus.
func githubCrawler(a *app, gf githubFlags) (func(context.Context) error, error) {
	if a.store == nil {
		return nil, fmt.Errorf("the GitHub crawler needs the store (repository URLs of the listed servers)")
	}
	w := bus.NewWriter(a.brokers, a.log)
	pub := provenance.Publisher{W: w}
	log := a.log.Named("github")
	if gf.token == "" {
		log.Warn("GITHUB_TOKEN is not set: 60 requests/h, the coverage gate will stay closed")
	}
	c := &github.Crawler{
		Client: github.NewClient(gf.base, gf.token, github.RealClock{}, nil),
		Targets: func(ctx context.Context) ([]string, error) {
			ls, err := storeListings(ctx, a.store)
			if err != nil {
				return nil, err
			}
			urls := make([]string, 0, len(ls))
			for _, l := range ls {
				if l.RepoURL != "" {
					urls = append(urls, l.RepoURL)
				}
			}
			return urls, nil
		},
		Publish:       pub.Publish,
		CommitPageCap: gf.pageCap,
		Refresh:       gf.refresh,
		OwnerRefresh:  gf.ownerRefresh,
		StatePath:     filepath.Join(a.cfg.DataDir, githubCheckpoint),
		Log:           log,
	}
	if err := c.Load(); err != nil {
		w.Close()
		return nil, err
	}
	return func(ctx context.Context) error {
		defer w.Close()
		return c.Run(ctx)
	}, nil
}
