package history_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/ingest/github/githubfake"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

// TestProvenanceSink: good observations land in the provenance table, one
// row per id (the commit fetch's re-publication wins over the bare one, in
// either order), bad messages become dead letters with their reason and
// position, and a redelivered batch changes nothing.
func TestProvenanceSink(t *testing.T) {
	ctx := context.Background()
	s, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "p.duckdb"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2025, 10, 9, 20, 30, 3, 0, time.UTC)
	bare := github.Observation{ID: github.ObservationID("github.com/o/a", t0), Repo: "github.com/o/a", ObservedAt: t0,
		Status: github.StatusResolved, HTTPStatus: 200, CreatedAt: t0.AddDate(-2, 0, 0), PushedAt: t0.Add(-time.Hour), Stars: 120}
	full := bare
	full.Commits = &github.CommitStats{ObservedAt: t0.Add(time.Minute), Count: 4, Authors: 1, Verified: 1, Last: t0.Add(-time.Hour)}
	gone := github.Observation{ID: github.ObservationID("github.com/o/b", t0), Repo: "github.com/o/b", ObservedAt: t0,
		Status: github.StatusUnresolved, HTTPStatus: 404}
	batch := []kafka.Message{
		msg(t, github.Topic, full),
		msg(t, github.Topic, gone),
		msg(t, github.Topic, bare), // redelivered after the commit fetch: must not win
		{Topic: github.Topic, Partition: 1, Offset: 7, Key: []byte("github.com/o/c"), Value: []byte(`{"id":`)},
		{Topic: github.Topic, Partition: 2, Offset: 8, Value: []byte(`{"repo":"github.com/o/d"}`)},
	}
	sink := &history.Sink{W: s, Weights: method.Embedded().Weights}
	storeDead := func(ctx context.Context, dead []kafka.Message) error {
		st, _ := stage.New(sink.Config(nil, nil))
		return st.Handle(ctx, dead)
	}
	for i := 0; i < 2; i++ {
		handle(t, sink.Config(nil, nil), storeDead, batch)
	}
	rows, err := s.ProvenanceObservations(ctx, store.ProvenanceQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d rows, want 2: %+v", len(rows), rows)
	}
	a := rows[0]
	if a.Repo != "github.com/o/a" {
		a = rows[1]
	}
	if !a.CommitsFetched || a.Authors != 1 || a.Flags.SingleAuthor90d == nil || !*a.Flags.SingleAuthor90d ||
		a.Flags.StarsGE100 == nil || !*a.Flags.StarsGE100 || a.Flags.OwnerOlderThan1y != nil {
		t.Errorf("observation with commits: %+v", a)
	}
	dl, err := s.DLQ(ctx, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(dl) != 2 {
		t.Fatalf("%d dead letters, want 2: %+v", len(dl), dl)
	}
	for _, d := range dl {
		if d.Reason == "" || d.Stage != history.Name || d.Detail == "" || d.Source == "" {
			t.Errorf("dead letter without reason, stage, detail or position: %+v", d)
		}
	}
}

// failingWriter fails InsertProvenance: the store does not have the batch.
type failingWriter struct{ history.Writer }

func (failingWriter) InsertProvenance(context.Context, []store.Provenance) error {
	return errors.New("disk full")
}

// TestProvenanceSinkStoreErrorFailsTheBatch: when the store refuses the
// batch, the stage returns the error, so bus.Consume does not commit
// offsets and the batch is redelivered.
func TestProvenanceSinkStoreErrorFailsTheBatch(t *testing.T) {
	o := github.Observation{ID: "github:github.com/o/a@2025-01-01T00:00:00Z", Repo: "github.com/o/a", ObservedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), Status: github.StatusResolved}
	st, err := stage.New((&history.Sink{W: failingWriter{}, Weights: method.Embedded().Weights}).Config(nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Handle(context.Background(), []kafka.Message{msg(t, github.Topic, o)}); err == nil {
		t.Fatal("the batch succeeded although the store failed")
	}
}

// TestProvenanceRowMatchesProcessor pins the table's flags to the
// processors: on every observation a crawl of a generated population
// publishes (bare, with commits, with the owner), each flag_* column equals
// processors/provenance.FlagsOf at observed_at where it is defined, is NULL
// exactly where FlagsOf's denominators leave the observation out, and
// fires exactly when processors/trust raises the signal of the same name.
func TestProvenanceRowMatchesProcessor(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	clock := githubfake.NewSimClock(t0)
	pop := githubfake.Generate(1500, githubfake.SeedRates, t0, github.DefaultCommitPageCap, 11)
	srv := &githubfake.Server{Pop: pop, Limits: githubfake.Limits{PerHour: 200000}, Clock: clock}
	var obs []github.Observation
	urls := pop.URLs()
	c := &github.Crawler{Client: github.NewClient("", "token", clock, srv.Transport()),
		Targets: func(context.Context) ([]string, error) { return urls, nil },
		Publish: func(_ context.Context, o github.Observation) error { obs = append(obs, o); return nil }}
	if err := c.RunUntil(context.Background(), t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	w := method.Embedded().Weights
	type tally struct{ defined, set int }
	seen := map[string]*tally{}
	for _, o := range obs {
		// Through JSON, as the sink gets it.
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		var dec github.Observation
		if err := json.Unmarshal(b, &dec); err != nil {
			t.Fatal(err)
		}
		row := history.ProvenanceRow(w, dec)
		l := provenance.Listing{Server: "io.github.x/y", RepoURL: "https://" + o.Repo}
		fl := provenance.FlagsOf(w, l, &o, trust.Facts{}, o.ObservedAt)
		in := provenance.Input(l, &o, trust.Facts{})
		res := trust.ComputeWith(w, trust.Input{Server: l.Server, Provenance: in}, o.ObservedAt)
		fired := map[string]bool{}
		for _, s := range res.Provenance.Signals {
			fired[s.ID] = true
		}
		commits := fl.Resolved && fl.CommitsKnown
		owner := fl.Resolved && fl.OwnerKnown
		f := row.Flags
		for _, c := range []struct {
			name    string
			got     *bool
			defined bool
			want    bool // FlagsOf
			trust   bool // the trust signal exists
		}{
			{"no_license", f.NoLicense, fl.Resolved, fl.NoLicense, true},
			{"repo_under_30d", f.RepoUnder30d, fl.Resolved, fl.Under30d, true},
			{"stale_over_1y", f.StaleOver1y, fl.Resolved, fl.StaleOver1y, false},
			{"archived", f.Archived, fl.Resolved, fl.Archived, true},
			{"fork", f.Fork, fl.Resolved, fl.Fork, true},
			{"stars_ge_100", f.StarsGE100, fl.Resolved, fl.Stars100, true},
			{"single_author_90d", f.SingleAuthor90d, commits, fl.SingleAuthor, true},
			{"no_commits_90d", f.NoCommits90d, commits, fl.NoCommits90d, false},
			{"commit_cap_hit", f.CommitCapHit, commits, fl.CapHit, true},
			{"owner_older_than_1y", f.OwnerOlderThan1y, owner, fl.OwnerOld, true},
		} {
			if (c.got != nil) != c.defined {
				t.Fatalf("%s of %s: defined %v, want %v", c.name, o.ID, c.got != nil, c.defined)
			}
			if c.got == nil {
				continue
			}
			if *c.got != c.want {
				t.Fatalf("%s of %s: %v, FlagsOf says %v", c.name, o.ID, *c.got, c.want)
			}
			if c.trust && *c.got != fired[c.name] {
				t.Fatalf("%s of %s: %v, processors/trust fired %v", c.name, o.ID, *c.got, fired[c.name])
			}
			tl := seen[c.name]
			if tl == nil {
				tl = &tally{}
				seen[c.name] = tl
			}
			tl.defined++
			if *c.got {
				tl.set++
			}
		}
		if row.CommitsFetched != commits && fl.Resolved {
			t.Fatalf("commits_fetched of %s: %v", o.ID, row.CommitsFetched)
		}
	}
	// Not vacuous: the crawl exercised each flag both ways (the generator's
	// rarest, stale_over_1y at 0.4 %, still fires a few times in 1,500).
	for _, name := range []string{"no_license", "repo_under_30d", "stale_over_1y", "archived", "fork", "stars_ge_100",
		"single_author_90d", "no_commits_90d", "commit_cap_hit", "owner_older_than_1y"} {
		tl := seen[name]
		if tl == nil || tl.set == 0 || tl.set == tl.defined {
			t.Errorf("%s: never seen both ways (%+v) in %d observations", name, tl, len(obs))
		}
	}
	t.Logf("%d observations; flag tallies: %v", len(obs), func() map[string]tally {
		m := map[string]tally{}
		for k, v := range seen {
			m[k] = *v
		}
		return m
	}())
}
