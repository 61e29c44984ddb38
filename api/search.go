package api

import (
	"context"
	"errors"
	"net/http"

	"github.com/danielgtaylor/huma/v2"
	"go.uber.org/zap"

	"github.com/forum-mcp/forum/api/search"
)

// SearchOptions configure the search and leaderboard routes (SPEC §6).
type SearchOptions struct {
	// Index is kept on the newest publication by a search.Refresher. Nil
	// (or not built yet): the routes answer 503.
	Index *search.Index
	// Sponsors is the sponsorship campaign: server names in campaign order.
	// At most one of them, among a query's matches, scoring >= 50 and not
	// under a safety hold, is returned, in the separate sponsored list only.
	Sponsors []string
	Log      *zap.Logger
}

// SearchHit is one search result with the parts of its rank.
type SearchHit struct {
	Name        string   `json:"name"`
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description"`
	Score       int      `json:"score" doc:"Toolfinder v0.3 score (0-100)."`
	Band        string   `json:"band,omitempty" doc:"FORUM trust band of the record."`
	TrustScore  *float64 `json:"trust_score" doc:"FORUM overall score; null when every sub-score is unknown."`
	Flags       []string `json:"flags"`
	Categories  []string `json:"categories"`
	LastOutcome string   `json:"last_check,omitempty" doc:"Outcome of the check the record was scored on."`
	Relevance   float64  `json:"relevance" doc:"-bm25 over the query's best -bm25 (0-1)."`
	Coverage    float64  `json:"coverage" doc:"Share of query terms found in name or title."`
	NSMatch     float64  `json:"ns_match" doc:"1 when a query term names the server's verified namespace."`
	Multiplier  float64  `json:"multiplier" doc:"Display factor: flagged or under a safety hold x0.5 (once, either or both), last check unreachable/handshake_failed x0.85."`
	Rank        float64  `json:"rank" doc:"(0.5 relevance + 0.15 coverage + 0.25 ns_match + 0.3 score/100) x multiplier."`
	Sponsored   bool     `json:"sponsored,omitempty" doc:"Set only on entries of the sponsored list."`
	// SafetyHold is set when the server's FORUM record holds it (SPEC §3).
	SafetyHold *search.SafetyHold `json:"safety_hold,omitempty" doc:"Safety hold (SPEC §3): the server's newest FORUM record is band D or F or has an open strong-negative signal, so it is displayed as flagged (rank x0.5, off the leaderboard, never sponsored); names the signals and their evidence. Absent when not held. The Toolfinder score is unchanged."`
}

// SearchBody is a search answer.
type SearchBody struct {
	PublicationID string      `json:"publication_id" doc:"The publication the index was built from."`
	Terms         []string    `json:"terms" doc:"The query terms, OR-ed."`
	Total         int         `json:"total" doc:"Matches ranked (at most 2000, the best by bm25)."`
	Results       []SearchHit `json:"results" doc:"Organic results by rank; sponsorship never changes them."`
	Sponsored     []SearchHit `json:"sponsored" doc:"At most one sponsored server (score >= 50, never one under a safety hold), labelled; separate from the organic results."`
}

type searchInput struct {
	Q     string `query:"q" required:"true" minLength:"1" maxLength:"256" doc:"Search terms (at most 8, each at most 64 bytes)."`
	Limit int    `query:"limit" minimum:"1" maximum:"100" default:"20"`
}

type searchOutput struct{ Body SearchBody }

// LeaderboardEntry is one leaderboard row.
type LeaderboardEntry struct {
	Rank       int      `json:"rank"`
	Name       string   `json:"name"`
	Title      string   `json:"title,omitempty"`
	Score      int      `json:"score" doc:"Toolfinder v0.3 score."`
	Band       string   `json:"band,omitempty"`
	Categories []string `json:"categories"`
}

// LeaderboardBody is the leaderboard.
type LeaderboardBody struct {
	PublicationID string             `json:"publication_id"`
	Category      string             `json:"category,omitempty"`
	Entries       []LeaderboardEntry `json:"entries" doc:"Servers neither flagged nor under a safety hold, at most 2 per namespace, score descending, ties by name."`
}

type leaderboardInput struct {
	Category string `query:"category" maxLength:"64" pattern:"^[a-z0-9-]*$" doc:"Only servers whose stored categories include this one."`
	Limit    int    `query:"limit" minimum:"1" maximum:"500" default:"50"`
}

type leaderboardOutput struct{ Body LeaderboardBody }

func hit(r search.Result, sponsored bool) SearchHit {
	return SearchHit{Name: r.Name, Title: r.Title, Description: r.Description, Score: r.Score, Band: r.Band, TrustScore: r.TrustScore,
		Flags: nonNilStrings(r.Flags), Categories: nonNilStrings(r.Categories), LastOutcome: r.LastOutcome, Relevance: r.Relevance,
		Coverage: r.Coverage, NSMatch: r.NSMatch, Multiplier: r.Multiplier, Rank: r.Rank, Sponsored: sponsored, SafetyHold: r.Hold}
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// SearchRoutes registers GET /v1/search and GET /v1/leaderboard.
func SearchRoutes(o SearchOptions) func(huma.API) {
	if o.Log == nil {
		o.Log = zap.NewNop()
	}
	return func(api huma.API) {
		huma.Register(api, huma.Operation{OperationID: "search", Method: http.MethodGet, Path: "/v1/search", Summary: "Search servers",
			Description: "Full-text search (SQLite FTS5, porter stemming, bm25 weights name 6, title 6, description 2, tools 1, categories 2; terms OR-ed) " +
				"ranked by 0.5 relevance + 0.15 coverage + 0.25 ns_match + 0.3 score/100, flagged x0.5, down x0.85. A server under a safety hold " +
				"(FORUM band D/F or an open strong-negative signal) counts as flagged and carries safety_hold with the signals and their evidence. " +
				"Sponsored results come apart and never include a held server.",
			Tags: []string{"search"}, Errors: []int{http.StatusBadRequest, http.StatusServiceUnavailable}},
			func(ctx context.Context, in *searchInput) (*searchOutput, error) {
				if o.Index == nil {
					return nil, huma.Error503ServiceUnavailable(search.ErrNotReady.Error())
				}
				resp, err := o.Index.Search(ctx, in.Q, in.Limit, o.Sponsors)
				switch {
				case errors.Is(err, search.ErrBadQuery):
					return nil, huma.Error400BadRequest(err.Error())
				case errors.Is(err, search.ErrNotReady):
					return nil, huma.Error503ServiceUnavailable(err.Error())
				case err != nil:
					o.Log.Error("search failed", zap.Error(err))
					return nil, huma.Error500InternalServerError("search failed; see the server log")
				}
				b := SearchBody{PublicationID: resp.PublicationID, Terms: resp.Terms, Total: resp.Total, Results: []SearchHit{}, Sponsored: []SearchHit{}}
				for _, r := range resp.Results {
					b.Results = append(b.Results, hit(r, false))
				}
				for _, r := range resp.Sponsored {
					b.Sponsored = append(b.Sponsored, hit(r, true))
				}
				return &searchOutput{Body: b}, nil
			})
		huma.Register(api, huma.Operation{OperationID: "leaderboard", Method: http.MethodGet, Path: "/v1/leaderboard", Summary: "Leaderboard",
			Description: "Toolfinder score descending, unflagged servers only (a safety hold counts as a flag: FORUM band D/F or an open strong-negative signal), " +
				"at most 2 per namespace, ties by name; optionally one category.",
			Tags: []string{"search"}, Errors: []int{http.StatusServiceUnavailable}},
			func(ctx context.Context, in *leaderboardInput) (*leaderboardOutput, error) {
				var s *search.Snapshot
				if o.Index != nil {
					s = o.Index.Current()
				}
				if s == nil {
					return nil, huma.Error503ServiceUnavailable(search.ErrNotReady.Error())
				}
				b := LeaderboardBody{PublicationID: s.PublicationID, Category: in.Category, Entries: []LeaderboardEntry{}}
				for i, d := range s.Leaderboard(in.Category, in.Limit) {
					b.Entries = append(b.Entries, LeaderboardEntry{Rank: i + 1, Name: d.Name, Title: d.Title, Score: d.Score, Band: d.Band, Categories: nonNilStrings(d.Categories)})
				}
				return &leaderboardOutput{Body: b}, nil
			})
	}
}
