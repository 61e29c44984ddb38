package api_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// searchServer stores a generated publication (records, registry entries,
// health checks) in DuckDB, builds the index through the Refresher as
// production does, and serves the search routes.
func searchServer(t *testing.T, sponsors []string) (*httptest.Server, *search.Index) {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "search.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	publishGenerated(t, s)
	idx := &search.Index{}
	ref := &search.Refresher{Index: idx, Source: s}
	if swapped, err := ref.Refresh(ctx); err != nil || !swapped {
		t.Fatalf("refresh: %v %v", swapped, err)
	}
	if swapped, err := ref.Refresh(ctx); err != nil || swapped {
		t.Fatalf("a second refresh of the same publication rebuilt: %v %v", swapped, err)
	}
	t.Cleanup(func() { idx.Current().Close() })
	h, _ := api.New(api.Options{Store: s, Routes: []func(huma.API){api.SearchRoutes(api.SearchOptions{Index: idx, Sponsors: sponsors})}})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, idx
}

// publishGenerated stores a generated, sealed publication of 60 servers
// with their registry entries and health checks, as the scorer and the
// history sink would.
func publishGenerated(t *testing.T, s *duckdb.Store) {
	t.Helper()
	ctx := context.Background()
	g := scorer.Generate(60, 5, trustAt)
	meta := scorer.Meta{PublicationID: scorer.PublicationID(trustAt), ComputedAt: trustAt}
	sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, 32)))
	if err != nil {
		t.Fatal(err)
	}
	if err := scorer.Publish(ctx, scorer.StoreOutput{W: s}, nil, sealed); err != nil {
		t.Fatal(err)
	}
	var checks []store.HealthCheck
	var recs []store.Record
	for _, in := range g.Inputs {
		e := in.Entry
		e.Meta.IsLatest = true
		recs = append(recs, store.RecordFromEntry(&e, "snap-1", trustAt))
		for i := range in.Checks {
			checks = append(checks, history.HealthRow(&in.Checks[i], nil))
		}
	}
	if err := s.InsertRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}
	if err := s.InsertHealthChecks(ctx, checks); err != nil {
		t.Fatal(err)
	}
}

func TestSearchAPI(t *testing.T) {
	srv, idx := searchServer(t, nil)
	var b api.SearchBody
	get(t, srv, "/v1/search?q=weather", http.StatusOK, &b)
	if len(b.Results) == 0 || b.PublicationID != idx.Current().PublicationID {
		t.Fatalf("weather: %+v", b)
	}
	found := false
	for i, r := range b.Results {
		found = found || r.Name == scorer.PlantedTunnel
		if i > 0 && b.Results[i-1].Rank < r.Rank {
			t.Errorf("not in rank order at %d", i)
		}
		if r.Sponsored {
			t.Errorf("organic %s labelled sponsored", r.Name)
		}
	}
	if !found {
		t.Errorf("%s not found by its description", scorer.PlantedTunnel)
	}
	if len(b.Sponsored) != 0 {
		t.Errorf("sponsored without a campaign: %v", b.Sponsored)
	}
	// tool names are indexed (they come from the stored checks)
	get(t, srv, "/v1/search?q=get_forecast&limit=5", http.StatusOK, &b)
	if len(b.Results) > 5 {
		t.Errorf("limit 5 gave %d", len(b.Results))
	}

	for _, q := range []string{"", "%21%21%21", url.QueryEscape("a b c d e f g h i"), url.QueryEscape(strings.Repeat("x", 300))} {
		resp, err := http.Get(srv.URL + "/v1/search?q=" + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Errorf("q=%.30s: %d, want 4xx", q, resp.StatusCode)
		}
	}
	get(t, srv, "/v1/search?q=weather&limit=1000", http.StatusUnprocessableEntity, nil)
}

func TestSearchAPISponsored(t *testing.T) {
	srv, idx := searchServer(t, nil)
	var base api.SearchBody
	get(t, srv, "/v1/search?q=weather+notes+calc+pdf&limit=100", http.StatusOK, &base)
	var eligible string
	for _, r := range base.Results {
		if r.Score >= 50 && r.SafetyHold == nil { // a held server is never sponsored
			eligible = r.Name
		}
	}
	if eligible == "" {
		t.Fatal("no server scores >= 50 in the population: the sponsorship check would prove nothing")
	}
	_ = idx
	srv2, _ := searchServer(t, []string{"io.github.nobody/none", eligible})
	var got api.SearchBody
	get(t, srv2, "/v1/search?q=weather+notes+calc+pdf&limit=100", http.StatusOK, &got)
	if len(got.Sponsored) != 1 || got.Sponsored[0].Name != eligible || !got.Sponsored[0].Sponsored {
		t.Fatalf("sponsored %+v, want %s labelled", got.Sponsored, eligible)
	}
	if len(got.Results) != len(base.Results) {
		t.Fatal("sponsorship changed the organic list")
	}
	for i := range got.Results {
		if got.Results[i].Name != base.Results[i].Name || got.Results[i].Sponsored {
			t.Fatalf("sponsorship changed organic position %d", i)
		}
	}
}

func TestLeaderboardAPI(t *testing.T) {
	srv, _ := searchServer(t, nil)
	var b api.LeaderboardBody
	get(t, srv, "/v1/leaderboard?limit=500", http.StatusOK, &b)
	if len(b.Entries) == 0 {
		t.Fatal("empty leaderboard")
	}
	per := map[string]int{}
	for i, e := range b.Entries {
		per[schema.Namespace(e.Name)]++
		if per[schema.Namespace(e.Name)] > 2 {
			t.Errorf("%s: more than 2 of its namespace", e.Name)
		}
		if e.Rank != i+1 || (i > 0 && (b.Entries[i-1].Score < e.Score || b.Entries[i-1].Score == e.Score && b.Entries[i-1].Name > e.Name)) {
			t.Errorf("order at %d", i)
		}
	}
	cat := b.Entries[0].Categories[0]
	var c api.LeaderboardBody
	get(t, srv, "/v1/leaderboard?category="+cat+"&limit=3", http.StatusOK, &c)
	if len(c.Entries) == 0 || len(c.Entries) > 3 || c.Category != cat {
		t.Errorf("category %s: %+v", cat, c)
	}
	get(t, srv, "/v1/leaderboard?category=DROP%20TABLE", http.StatusUnprocessableEntity, nil)
}

func TestSearchNotReady(t *testing.T) {
	h, _ := api.New(api.Options{Routes: []func(huma.API){api.SearchRoutes(api.SearchOptions{Index: &search.Index{}})}})
	srv := httptest.NewServer(h)
	defer srv.Close()
	get(t, srv, "/v1/search?q=x", http.StatusServiceUnavailable, nil)
	get(t, srv, "/v1/leaderboard", http.StatusServiceUnavailable, nil)
}
