package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/api/search"
)

// The search index stage: it keeps an in-memory SQLite FTS5 index on the
// newest publication (polling the store; a new publication is indexed
// beside the current one and swapped in, so queries never wait) and adds
// /v1/search and /v1/leaderboard to the API of 'run' and 'replay --serve'.
//
// FORUM_SPONSORED names the sponsorship campaign: comma-separated server
// names in campaign order. At most one of them per query (score >= 50, among
// the matches, not under a safety hold) is returned, in the separate
// "sponsored" list only.

// envSponsored names the sponsorship campaign.
const envSponsored = "FORUM_SPONSORED"

// searchRefreshInterval is how often the stage looks for a new publication.
const searchRefreshInterval = 30 * time.Second

func init() {
	registerStage(stageSpec{name: "search-index", serve: true,
		start: func(_ context.Context, a *app) (func(context.Context) error, error) {
			src, ok := a.store.(search.Source)
			if !ok {
				return nil, fmt.Errorf("the store %T keeps no publications to index", a.store)
			}
			idx := &search.Index{}
			a.routes = append(a.routes, api.SearchRoutes(api.SearchOptions{Index: idx, Sponsors: sponsors(), Log: a.log.Named("search-api")}))
			r := &search.Refresher{Index: idx, Source: src, Interval: searchRefreshInterval, Log: a.log.Named("search-index")}
			return r.Run, nil
		}})
}

// sponsors reads FORUM_SPONSORED.
func sponsors() []string {
	var out []string
	for _, s := range strings.Split(os.Getenv(envSponsored), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
