package provenance_test

import (
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// The processor as the scorer's ProvenanceSource: with the gate open,
// GitHub counts in Toolfinder and provenance has a value with evidence;
// with the gate closed (coverage < 99 %), Toolfinder uses the registry-date
// fallbacks while provenance still uses the observation.
func TestScorerSource(t *testing.T) {
	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	entry := func(name, repo string) scorer.ServerInput {
		return scorer.ServerInput{Entry: schema.Entry{
			Server: schema.ServerDetail{Name: name, Description: "A server that does useful things for tests", Version: "1.0.0", Repository: &schema.Repository{URL: repo}},
			Meta:   schema.OfficialMeta{Status: "active", PublishedAt: at.Add(-400 * day), UpdatedAt: at.Add(-100 * day), IsLatest: true}}}
	}
	inputs := []scorer.ServerInput{entry("io.github.o/a", "https://github.com/o/a"), entry("io.github.o/b", "https://github.com/o/b")}
	st := provenance.NewState()
	st.SetListings([]provenance.Listing{{Server: "io.github.o/a", RepoURL: "https://github.com/o/a"}, {Server: "io.github.o/b", RepoURL: "https://github.com/o/b"}})
	obs := github.Observation{Repo: "github.com/o/a", ID: "github:github.com/o/a@1", Status: github.StatusResolved, ObservedAt: at.Add(-time.Hour),
		CreatedAt: at.Add(-500 * day), PushedAt: at.Add(-2 * day), Stars: 500, LicenseSPDX: "MIT", OwnerLogin: "o",
		OwnerCreatedAt: at.Add(-900 * day), OwnerObservedAt: at.Add(-time.Hour),
		Commits: &github.CommitStats{ObservedAt: at.Add(-time.Hour), Count: 9, Authors: 3}}
	st.Apply(obs)
	src := scorer.Sources{Provenance: provenance.Source{State: st}}
	recs := scorer.Compute(inputs, src, scorer.Meta{PublicationID: "p", ComputedAt: at}, nil)
	a := recs[0]
	if a.Toolfinder.GitHubGate.Open || a.Toolfinder.GitHubGate.Reason != scorer.GateClosedCoverage {
		t.Fatalf("50%% coverage: gate %+v", a.Toolfinder.GitHubGate)
	}
	if a.Provenance.Value == nil || !a.GitHub.Observed {
		t.Fatalf("observed repo without provenance: %+v", a.Provenance)
	}
	if recs[1].Provenance.Value != nil || recs[1].Provenance.Reason != trust.ReasonRepoNotObserved {
		t.Fatalf("unobserved repo: %+v", recs[1].Provenance)
	}
	obs.Repo, obs.ID = "github.com/o/b", "github:github.com/o/b@1"
	st.Apply(obs)
	recs = scorer.Compute(inputs, src, scorer.Meta{PublicationID: "p", ComputedAt: at}, nil)
	if !recs[0].Toolfinder.GitHubGate.Open {
		t.Fatalf("full coverage: gate %+v", recs[0].Toolfinder.GitHubGate)
	}
	var adoption float64 = -1
	for _, c := range recs[0].Toolfinder.Components {
		if c.Name == "adoption" {
			adoption = c.Score
		}
	}
	if adoption <= 0 {
		t.Fatalf("gate open but no adoption credit: %+v", recs[0].Toolfinder.Components)
	}
	// The owner account's age reaches the scorer: owner_older_than_1y fires
	// in the record with the observation as its evidence.
	owner := false
	for _, sg := range recs[0].Provenance.Signals {
		owner = owner || (sg.ID == "owner_older_than_1y" && len(sg.Evidence) == 1 && sg.Evidence[0].ID == "github:github.com/o/a@1")
	}
	if !owner {
		t.Fatalf("owner_older_than_1y missing from the record: %+v", recs[0].Provenance.Signals)
	}
	ev := recs[0].Provenance.Evidence
	if len(ev) == 0 || ev[0].Kind != trust.EvGitHubRepo || ev[0].ID != "github:github.com/o/a@1" {
		t.Fatalf("evidence: %+v", ev)
	}
	// Stale: 49 h later the gate closes again.
	recs = scorer.Compute(inputs, src, scorer.Meta{PublicationID: "p", ComputedAt: at.Add(48 * time.Hour)}, nil)
	if recs[0].Toolfinder.GitHubGate.Open {
		t.Fatal("gate open on 49 h old observations")
	}
}
