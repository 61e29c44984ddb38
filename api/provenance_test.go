package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/danielgtaylor/huma/v2"
	"github.com/danielgtaylor/huma/v2/adapters/humago"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// provenanceServer serves the provenance routes from a store holding what
// the provenance processor concluded from st at `at` (as the results sink
// stores it) and st's observations (as the history sink does).
func provenanceServer(t *testing.T, st *provenance.State, at time.Time) *httptest.Server {
	t.Helper()
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "p.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	w := method.Embedded().Weights
	if st != nil {
		sn := st.Snapshot(w, at)
		var rows []store.ProvenanceSignalRow
		var obs []store.Provenance
		for _, sv := range sn.Servers {
			sv.AsOf = at
			if key, _, _, ok := github.RepoKey(sv.RepoURL); ok {
				sv.Repo = key
			}
			raw, _ := schema.Marshal(sv)
			rows = append(rows, history.ProvenanceSignalRowOf(&sv, raw))
			if sv.Observation != nil {
				obs = append(obs, history.ProvenanceRow(w, *sv.Observation))
			}
		}
		rates, gate := history.RateRows(&schema.ProvenanceRates{AsOf: at, MethodVersion: w.MethodVersion, WeightsSHA256: w.SHA256(), Gate: sn.Gate, Rates: sn.Rates})
		if err := s.InsertProvenanceSignals(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertBaseRates(ctx, rates, []store.GateRow{gate}); err != nil {
			t.Fatal(err)
		}
		if err := s.InsertProvenance(ctx, obs); err != nil {
			t.Fatal(err)
		}
	}
	mux := http.NewServeMux()
	a := humago.New(mux, huma.DefaultConfig("forum provenance", api.Version))
	api.ProvenanceRoutes(api.ProvenanceOptions{Store: s})(a)
	api.TrustRoutes(api.TrustOptions{Store: s})(a)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func getJSON(t *testing.T, u string, want int, v any) {
	t.Helper()
	res, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != want {
		t.Fatalf("GET %s: %d, want %d", u, res.StatusCode, want)
	}
	if v != nil {
		if err := json.NewDecoder(res.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
}

func TestProvenanceRoutes(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	st := provenance.NewState()
	st.SetListings([]provenance.Listing{
		{Server: "io.github.o/copycat", RepoURL: "https://github.com/o/copycat", ListedAt: at.Add(-200 * day)},
		{Server: "io.github.o/fine", RepoURL: "https://github.com/o/fine", ListedAt: at.Add(-300 * day)},
	})
	st.Apply(github.Observation{Repo: "github.com/o/copycat", ID: "github:github.com/o/copycat@1", Status: github.StatusResolved, ObservedAt: at.Add(-time.Hour),
		CreatedAt: at.Add(-100 * day), PushedAt: at.Add(-day), LicenseSPDX: "MIT", Commits: &github.CommitStats{ObservedAt: at.Add(-time.Hour), Count: 3, Authors: 2}},
		github.Observation{Repo: "github.com/o/fine", ID: "github:github.com/o/fine@1", Status: github.StatusResolved, ObservedAt: at.Add(-time.Hour),
			CreatedAt: at.Add(-301 * day), PushedAt: at.Add(-day), LicenseSPDX: "MIT", OwnerLogin: "o", OwnerCreatedAt: at.Add(-800 * day), OwnerObservedAt: at.Add(-time.Hour), Commits: &github.CommitStats{ObservedAt: at.Add(-time.Hour), Count: 3, Authors: 2}})
	srv := provenanceServer(t, st, at)

	var br struct {
		MethodVersion string               `json:"method_version"`
		Gate          provenance.GateState `json:"gate"`
		Rates         []provenance.Rate    `json:"rates"`
	}
	getJSON(t, srv.URL+"/v1/method/base-rates", 200, &br)
	if br.MethodVersion != method.Embedded().Version() || !br.Gate.Open || len(br.Rates) != len(provenance.FlagNames()) {
		t.Fatalf("base rates: %+v", br)
	}
	for _, r := range br.Rates {
		if r.Flag == "repo_created_after_listing_gt30d" {
			if r.Count != 1 || r.N != 2 || *r.Live != 0.5 || *r.Pinned != 0.001 || !r.Scored {
				t.Fatalf("late rate: %+v", r)
			}
		}
	}
	var sp struct {
		Server     string `json:"server"`
		Provenance struct {
			Value   *float64 `json:"value"`
			Signals []struct {
				ID       string `json:"id"`
				Evidence []struct {
					Kind, ID, URI string
				} `json:"evidence"`
			} `json:"signals"`
		} `json:"provenance"`
		Gate provenance.GateState `json:"gate"`
	}
	getJSON(t, srv.URL+"/v1/servers/"+url.PathEscape("io.github.o/copycat")+"/provenance", 200, &sp)
	if sp.Server != "io.github.o/copycat" || sp.Provenance.Value == nil || *sp.Provenance.Value != 40 || len(sp.Provenance.Signals) != 1 ||
		sp.Provenance.Signals[0].ID != "repo_created_after_listing_gt30d" || len(sp.Provenance.Signals[0].Evidence) != 1 {
		t.Fatalf("server provenance: %+v", sp)
	}
	// The evidence pointer resolves through /v1/evidence to the stored
	// observation itself (its id, not the repo's newest observation).
	ev := sp.Provenance.Signals[0].Evidence[0]
	var resolved struct {
		ID   string `json:"id"`
		Kind string `json:"kind"`
		Data struct {
			ID   string `json:"ID"`
			Repo string `json:"Repo"`
		} `json:"data"`
	}
	getJSON(t, srv.URL+ev.URI, 200, &resolved)
	if resolved.Kind != "github_repo" || resolved.Data.ID != ev.ID || resolved.Data.Repo != "github.com/o/copycat" {
		t.Fatalf("evidence %s resolved to %+v", ev.ID, resolved)
	}
	// The owner's account age: the fine server's owner is 800 d old, the
	// copycat's was never looked up (unknown: not in the denominator).
	var fine struct {
		Flags      provenance.Flags `json:"flags"`
		Provenance struct {
			Signals []struct {
				ID       string            `json:"id"`
				Evidence []json.RawMessage `json:"evidence"`
			} `json:"signals"`
		} `json:"provenance"`
	}
	getJSON(t, srv.URL+"/v1/servers/"+url.PathEscape("io.github.o/fine")+"/provenance", 200, &fine)
	fired := false
	for _, s := range fine.Provenance.Signals {
		fired = fired || (s.ID == "owner_older_than_1y" && len(s.Evidence) == 1)
	}
	if !fine.Flags.OwnerOld || !fine.Flags.OwnerKnown || !fired {
		t.Fatalf("owner_older_than_1y on the fine server: %+v", fine)
	}
	for _, r := range br.Rates {
		if r.Flag == "owner_older_than_1y" && (r.Count != 1 || r.N != 1 || r.Live == nil || *r.Live != 1 || r.Pinned == nil || *r.Pinned != 0.7 ||
			!r.Scored || r.Denominator != provenance.DenomOwnerAge) {
			t.Fatalf("owner_older_than_1y rate: %+v", r)
		}
	}
	getJSON(t, srv.URL+"/v1/servers/nope%2Fx/provenance", 404, nil)
	var g provenance.GateState
	getJSON(t, srv.URL+"/v1/provenance/gate", 200, &g)
	if !g.Open || g.CoveragePct != 100 || g.Resolvable != 2 {
		t.Fatalf("gate: %+v", g)
	}
	off := provenanceServer(t, nil, at)
	getJSON(t, off.URL+"/v1/method/base-rates", 503, nil)
}
