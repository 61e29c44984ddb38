package scorer_test

import (
	"context"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// fixedListings is a ListingSource that holds every snapshot.
type fixedListings []provenance.Listing

func (fixedListings) SnapshotLoaded(context.Context, string) (bool, error) { return true, nil }
func (l fixedListings) Listings(context.Context, schema.SnapshotSummary) ([]provenance.Listing, error) {
	return l, nil
}

// The provenance processor reaches the scorer only through its output
// topic: the processor concludes and publishes on provenance.signals (the
// embedded broker), the scorer's table reads it, and the records show it.
// With the gate open, GitHub counts in Toolfinder and provenance has a
// value with evidence; with the gate closed (coverage < 99 %), Toolfinder
// uses the registry-date fallbacks while provenance still uses the
// observation; 49 h later the gate closes again.
func TestProvenanceReachesTheScorerThroughItsTopic(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	log := zaptest.NewLogger(t)
	b, err := bus.StartEmbedded(t.TempDir(), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := bus.EnsureTopics(ctx, b.Addrs(), bus.TopicSpecs(2), log); err != nil {
		t.Fatal(err)
	}
	w := bus.NewWriter(b.Addrs(), log)
	defer w.Close()

	at := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	entry := func(name, repo string) scorer.ServerInput {
		return scorer.ServerInput{Entry: schema.Entry{
			Server: schema.ServerDetail{Name: name, Description: "A server that does useful things for tests", Version: "1.0.0", Repository: &schema.Repository{URL: repo}},
			Meta:   schema.OfficialMeta{Status: "active", PublishedAt: at.Add(-400 * day), UpdatedAt: at.Add(-100 * day), IsLatest: true}}}
	}
	inputs := []scorer.ServerInput{entry("io.github.o/a", "https://github.com/o/a"), entry("io.github.o/b", "https://github.com/o/b")}
	w8 := method.Embedded().Weights
	signals := &stage.Emitter{Stage: provenance.Name, Topic: schema.TopicProvenanceSignals, Brokers: b.Addrs(), W: w}
	rates := &stage.Emitter{Stage: provenance.Name, Topic: schema.TopicProvenanceRates, Brokers: b.Addrs(), W: w}
	ps, err := provenance.NewStage(w8, "", fixedListings{{Server: "io.github.o/a", RepoURL: "https://github.com/o/a"}, {Server: "io.github.o/b", RepoURL: "https://github.com/o/b"}},
		signals, rates, log)
	if err != nil {
		t.Fatal(err)
	}
	obs := github.Observation{Repo: "github.com/o/a", ID: "github:github.com/o/a@1", Status: github.StatusResolved, ObservedAt: at.Add(-time.Hour),
		CreatedAt: at.Add(-500 * day), PushedAt: at.Add(-2 * day), Stars: 500, LicenseSPDX: "MIT", OwnerLogin: "o",
		OwnerCreatedAt: at.Add(-900 * day), OwnerObservedAt: at.Add(-time.Hour),
		Commits: &github.CommitStats{ObservedAt: at.Add(-time.Hour), Count: 9, Authors: 3}}
	apply := func(snapAt time.Time, o github.Observation) {
		t.Helper()
		o2 := o
		sum := schema.SnapshotSummary{ID: "s" + snapAt.Format(time.RFC3339), Mode: schema.ModeFull, ObservedAt: snapAt}
		ob, _ := schema.Marshal(o2)
		sb, _ := schema.Marshal(sum)
		batch := []kafka.Message{{Topic: provenance.Topic, Value: ob}, {Topic: schema.TopicRegistrySnapshots, Value: sb}}
		st, err := stage.New(ps.Config(b.Addrs(), nil))
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Handle(ctx, batch); err != nil {
			t.Fatal(err)
		}
	}
	apply(at, obs)

	tables := scorer.NewTableSources(b.Addrs(), w8, w, nil, log)
	tctx, tstop := context.WithCancel(ctx)
	defer tstop()
	go func() { _ = tables.Run(tctx) }()
	if err := tables.Provenance.WaitWatermark(ctx, at, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	src := tables.Sources()
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
	at2 := at.Add(time.Minute)
	apply(at2, obs)
	if err := tables.Provenance.WaitWatermark(ctx, at2, 20*time.Second); err != nil {
		t.Fatal(err)
	}
	recs = scorer.Compute(inputs, src, scorer.Meta{PublicationID: "p", ComputedAt: at2}, nil)
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
	// in the record with the observation as its evidence, which the API
	// resolves by the observation's own id.
	owner := false
	for _, sg := range recs[0].Provenance.Signals {
		owner = owner || (sg.ID == "owner_older_than_1y" && len(sg.Evidence) == 1 && sg.Evidence[0].ID == "github:github.com/o/a@1")
	}
	if !owner {
		t.Fatalf("owner_older_than_1y missing from the record: %+v", recs[0].Provenance.Signals)
	}
	ev := recs[0].Provenance.Evidence
	if len(ev) == 0 || ev[0].Kind != trust.EvGitHubRepo || ev[0].ID != "github:github.com/o/a@1" || ev[0].URI != schema.EvidenceURI("github:github.com/o/a@1") {
		t.Fatalf("evidence: %+v", ev)
	}
	recs = scorer.Compute(inputs, src, scorer.Meta{PublicationID: "p", ComputedAt: at.Add(49 * time.Hour)}, nil)
	if recs[0].Toolfinder.GitHubGate.Open {
		t.Fatal("gate open on 49 h old observations")
	}
}
