package main

import (
	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"

	"github.com/forum-mcp/forum/internal/component"
)

// 'forum github': the GitHub provenance crawler as its own role (SPEC
// §1.2), with all its flags: the same component as 'forum ingest --role
// github' (ingest/github), which 'forum run' also starts when
// FORUM_GITHUB_CRAWL=1. Checkpoint: DATA_DIR/github-crawler.json (ETags,
// last observations and the owner accounts looked up).
func newGitHubCmd() *cobra.Command {
	cfg := &config{}
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
			spec, _ := component.Lookup("github")
			g, gctx := errgroup.WithContext(ctx)
			if _, err := a.start(gctx, g, []component.Spec{spec}); err != nil {
				return waitAfter(g, err)
			}
			return g.Wait()
		},
	}
	cfg.bindCommon(cmd.Flags())
	cfg.bindBus(cmd.Flags())
	cfg.bindStore(cmd.Flags())
	cfg.bindGitHub(cmd.Flags())
	return cmd
}
