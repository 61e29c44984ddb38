package provenance_test

import (
	"context"
	"math"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/ingest/github/githubfake"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/provenance"
	"github.com/forum-mcp/forum/processors/trust"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

type world struct {
	pop   *githubfake.Population
	state *provenance.State
	now   time.Time
}

var (
	crawled     world
	crawledOnce sync.Once
)

// crawl runs the crawler over a generated 28k population against the fake
// GitHub (in-process transport, simulated clock) until every repo and its
// commits are observed, feeding a provenance State as the bus would.
func crawl(t *testing.T) world {
	t.Helper()
	crawledOnce.Do(func() {
		clock := githubfake.NewSimClock(t0)
		pop := githubfake.Generate(28000, githubfake.SeedRates, t0, github.DefaultCommitPageCap, 7)
		srv := &githubfake.Server{Pop: pop, Limits: githubfake.Limits{PerHour: 200000}, Clock: clock}
		st := provenance.NewState()
		var ls []provenance.Listing
		for _, l := range pop.Listings() {
			ls = append(ls, provenance.Listing{Server: l.Server, RepoURL: l.RepoURL, ListedAt: l.ListedAt})
		}
		st.SetListings(ls)
		urls := pop.URLs()
		c := &github.Crawler{Client: github.NewClient("", "token", clock, srv.Transport()),
			Targets: func(context.Context) ([]string, error) { return urls, nil },
			Publish: func(_ context.Context, o github.Observation) error { st.Apply(o); return nil }}
		if err := c.RunUntil(context.Background(), t0.Add(2*time.Hour)); err != nil {
			panic(err)
		}
		crawled = world{pop: pop, state: st, now: clock.Now()}
	})
	return crawled
}

// Measured base rates on the generated population are within ±1 pp of the
// generator's (seed 002 §4.1).
func TestBaseRatesMatchGenerator(t *testing.T) {
	w := crawl(t)
	sn := w.state.Snapshot(method.Embedded().Weights, w.now)
	want := map[string]float64{
		"repo_resolved": 0.86, "single_author_90d": 0.36, "no_license": 0.23, "commit_cap_hit": 0.19,
		"no_commits_90d": 0.14, "repo_under_30d": 0.11, "namespace_owner_mismatch": 0.027, "archived": 0.008,
		"fork": 0.005, "stale_over_1y": 0.004, "repo_created_after_listing_gt30d": 0.001,
		"owner_older_than_1y": githubfake.SeedRates.OwnerOlder1y,
	}
	got := map[string]provenance.Rate{}
	for _, r := range sn.Rates {
		got[r.Flag] = r
	}
	for flag, rate := range want {
		r := got[flag]
		if r.Live == nil {
			t.Errorf("%s: no live rate (n=%d)", flag, r.N)
			continue
		}
		t.Logf("%-34s live %.4f (%d/%d) pinned %v", flag, *r.Live, r.Count, r.N, deref(r.Pinned))
		if math.Abs(*r.Live-rate) > 0.01 {
			t.Errorf("%s: live %.4f, generator %.4f: more than 1 pp apart", flag, *r.Live, rate)
		}
	}
	// Every resolved repo's owner was looked up: the owner-age denominator
	// is the resolved servers.
	if r, res := got["owner_older_than_1y"], got["no_license"]; r.N != res.N || r.Denominator != provenance.DenomOwnerAge || !r.Scored {
		t.Errorf("owner_older_than_1y over %d (%s), want all %d resolved servers: %+v", r.N, r.Denominator, res.N, r)
	}
	if !sn.Gate.Open || sn.Gate.CoveragePct < 99 {
		t.Errorf("gate after a full crawl: %+v", sn.Gate)
	}
}

// The planted copycat class (repo created > 30 d after its listing) ranks in
// the bottom decile of provenance scores.
func TestCopycatsInBottomDecile(t *testing.T) {
	w := crawl(t)
	sn := w.state.Snapshot(method.Embedded().Weights, w.now)
	late := map[string]bool{}
	for _, r := range w.pop.Repos {
		if r.Truth.Late {
			late[r.Server] = true
		}
	}
	var scores []float64
	for _, s := range sn.Servers {
		if s.Provenance.Value != nil {
			scores = append(scores, *s.Provenance.Value)
		}
	}
	sort.Float64s(scores)
	n := 0
	for _, s := range sn.Servers {
		if !late[s.Server] {
			continue
		}
		n++
		if s.Provenance.Value == nil {
			t.Fatalf("copycat %s has no provenance score: %+v", s.Server, s.Provenance)
		}
		below := sort.SearchFloat64s(scores, *s.Provenance.Value) // strictly lower
		pct := float64(below) / float64(len(scores))
		if pct > 0.10 {
			t.Errorf("copycat %s: provenance %.2f at percentile %.3f, want bottom decile", s.Server, *s.Provenance.Value, pct)
		}
		if !s.Flags.LateGT30d {
			t.Errorf("copycat %s: flag not set (lag %.1f d)", s.Server, s.Flags.LagDays)
		}
	}
	if n < 20 {
		t.Fatalf("only %d copycats planted", n)
	}
	t.Logf("%d copycats, %d scored servers, decile cut %.2f", n, len(scores), scores[len(scores)/10])
}

// The gate: closed before coverage, open at >= 99 % fresh, closed again
// once observations are older than 48 h.
func TestGate(t *testing.T) {
	st := provenance.NewState()
	var ls []provenance.Listing
	for i := 0; i < 200; i++ {
		ls = append(ls, provenance.Listing{Server: "io.github.o/s" + itoa(i), RepoURL: "https://github.com/o/r" + itoa(i)})
	}
	ls = append(ls, provenance.Listing{Server: "x/no-repo"}, provenance.Listing{Server: "x/gitlab", RepoURL: "https://gitlab.com/a/b"},
		provenance.Listing{Server: "io.github.o/dup", RepoURL: "https://github.com/O/R0.git"}) // same repo as s0
	st.SetListings(ls)
	if g := st.Gate(t0); g.Open || g.Resolvable != 200 || g.Oldest != nil {
		t.Fatalf("empty: %+v", g)
	}
	for i := 0; i < 197; i++ {
		st.Apply(github.Observation{Repo: "github.com/o/r" + itoa(i), ObservedAt: t0.Add(time.Duration(i) * time.Minute), Status: github.StatusResolved})
	}
	if g := st.Gate(t0.Add(4 * time.Hour)); g.Open || g.CoveragePct != 98.5 {
		t.Fatalf("98.5%%: %+v", g)
	}
	st.Apply(github.Observation{Repo: "github.com/o/r197", ObservedAt: t0, Status: github.StatusUnresolved}) // a 404 is an observation
	g := st.Gate(t0.Add(4 * time.Hour))
	if !g.Open || g.CoveragePct != 99 || !g.Oldest.Equal(t0) {
		t.Fatalf("99%%: %+v", g)
	}
	if g := st.Gate(t0.Add(48*time.Hour + 30*time.Minute)); g.Open {
		t.Fatalf("stale: %+v", g)
	}
}

// Every flag's definition, pinned at its boundaries.
func TestFlagDefinitions(t *testing.T) {
	w := method.Embedded().Weights
	now := t0
	day := 24 * time.Hour
	base := func() github.Observation {
		return github.Observation{Repo: "github.com/o/r", Status: github.StatusResolved, ObservedAt: now,
			CreatedAt: now.Add(-400 * day), PushedAt: now.Add(-day), LicenseSPDX: "MIT", Stars: 5,
			Commits: &github.CommitStats{ObservedAt: now, Count: 10, Authors: 2}}
	}
	l := provenance.Listing{Server: "io.github.o/r", RepoURL: "https://github.com/o/r", ListedAt: now.Add(-400 * day)}
	cases := []struct {
		name  string
		mod   func(*github.Observation, *provenance.Listing)
		check func(provenance.Flags) bool
	}{
		{"clean", func(*github.Observation, *provenance.Listing) {}, func(f provenance.Flags) bool {
			return f.Resolved && !f.NoLicense && !f.Under30d && !f.LateGT30d && !f.Late1to30d && !f.SingleAuthor && !f.NoCommits90d && !f.StaleOver1y
		}},
		{"no_license null", func(o *github.Observation, _ *provenance.Listing) { o.LicenseSPDX = "" }, func(f provenance.Flags) bool { return f.NoLicense }},
		{"NOASSERTION is a license", func(o *github.Observation, _ *provenance.Listing) { o.LicenseSPDX = "NOASSERTION" }, func(f provenance.Flags) bool { return !f.NoLicense }},
		{"under_30d at 29.9 d", func(o *github.Observation, l *provenance.Listing) {
			o.CreatedAt = now.Add(-29*day - 21*time.Hour)
			l.ListedAt = o.CreatedAt
		}, func(f provenance.Flags) bool { return f.Under30d }},
		{"not under_30d at 30 d", func(o *github.Observation, l *provenance.Listing) {
			o.CreatedAt = now.Add(-30 * day)
			l.ListedAt = o.CreatedAt
		}, func(f provenance.Flags) bool { return !f.Under30d }},
		{"late > 30 d", func(o *github.Observation, l *provenance.Listing) { l.ListedAt = o.CreatedAt.Add(-30*day - time.Hour) }, func(f provenance.Flags) bool { return f.LateGT30d && !f.Late1to30d }},
		{"late exactly 30 d is mild", func(o *github.Observation, l *provenance.Listing) { l.ListedAt = o.CreatedAt.Add(-30 * day) }, func(f provenance.Flags) bool { return !f.LateGT30d && f.Late1to30d }},
		{"late 1 d is mild", func(o *github.Observation, l *provenance.Listing) { l.ListedAt = o.CreatedAt.Add(-day) }, func(f provenance.Flags) bool { return f.Late1to30d }},
		{"late 23 h is nothing", func(o *github.Observation, l *provenance.Listing) { l.ListedAt = o.CreatedAt.Add(-23 * time.Hour) }, func(f provenance.Flags) bool { return !f.Late1to30d && !f.LateGT30d }},
		{"stale > 365 d", func(o *github.Observation, _ *provenance.Listing) { o.PushedAt = now.Add(-366 * day) }, func(f provenance.Flags) bool { return f.StaleOver1y }},
		{"not stale at 364 d", func(o *github.Observation, _ *provenance.Listing) { o.PushedAt = now.Add(-364 * day) }, func(f provenance.Flags) bool { return !f.StaleOver1y }},
		{"single author", func(o *github.Observation, _ *provenance.Listing) { o.Commits.Authors = 1 }, func(f provenance.Flags) bool { return f.SingleAuthor }},
		{"no commits", func(o *github.Observation, _ *provenance.Listing) { o.Commits.Count, o.Commits.Authors = 0, 0 }, func(f provenance.Flags) bool { return f.NoCommits90d && !f.SingleAuthor }},
		{"409 empty", func(o *github.Observation, _ *provenance.Listing) {
			o.Commits = &github.CommitStats{ObservedAt: now, Empty: true}
		}, func(f provenance.Flags) bool { return f.NoCommits90d }},
		{"commits pending: unknown", func(o *github.Observation, _ *provenance.Listing) { o.Commits = nil }, func(f provenance.Flags) bool { return !f.CommitsKnown && !f.NoCommits90d }},
		{"cap hit", func(o *github.Observation, _ *provenance.Listing) { o.Commits.CapHit = true }, func(f provenance.Flags) bool { return f.CapHit }},
		{"verified", func(o *github.Observation, _ *provenance.Listing) { o.Commits.Verified = 1 }, func(f provenance.Flags) bool { return f.Verified }},
		{"stars 100", func(o *github.Observation, _ *provenance.Listing) { o.Stars = 100 }, func(f provenance.Flags) bool { return f.Stars100 }},
		{"stars 99", func(o *github.Observation, _ *provenance.Listing) { o.Stars = 99 }, func(f provenance.Flags) bool { return !f.Stars100 }},
		{"fork", func(o *github.Observation, _ *provenance.Listing) { o.Fork = true }, func(f provenance.Flags) bool { return f.Fork }},
		{"archived", func(o *github.Observation, _ *provenance.Listing) { o.Archived = true }, func(f provenance.Flags) bool { return f.Archived }},
		{"404", func(o *github.Observation, _ *provenance.Listing) {
			*o = github.Observation{Repo: o.Repo, Status: github.StatusUnresolved, ObservedAt: now}
		}, func(f provenance.Flags) bool { return f.Observed && !f.Resolved && !f.NoLicense }},
	}
	for _, c := range cases {
		o, ll := base(), l
		c.mod(&o, &ll)
		f := provenance.FlagsOf(w, ll, &o, trust.Facts{}, now)
		if !c.check(f) {
			t.Errorf("%s: %+v", c.name, f)
		}
	}
	// Combination flags need strict weak hygiene (fork OR no_commits_90d).
	o := base()
	facts := trust.Facts{CoRegistrationCluster: true, RepoServers: 2}
	if f := provenance.FlagsOf(w, l, &o, facts, now); f.CoRegCluster || f.OneRepoMany {
		t.Errorf("combination flags without hygiene: %+v", f)
	}
	o.Fork = true
	if f := provenance.FlagsOf(w, l, &o, facts, now); !f.CoRegCluster || !f.OneRepoMany {
		t.Errorf("combination flags with fork: %+v", f)
	}
}

// The base-rate factor f(p) = clamp(log10(1/p)/2, 0.25, 1.5) of the pinned
// calibration, and the copycat penalty it yields.
func TestBaseRateFactorPinned(t *testing.T) {
	w := method.Embedded().Weights
	for p, want := range map[float64]float64{0.01: 1, 0.001: 1.5, 0.0001: 1.5, 0.36: 0.25, 0.23: 0.319136, 0.027: 0.784318, 0: 1.5} {
		if got := trust.BaseRateFactor(w, p); math.Abs(got-want) > 1e-6 {
			t.Errorf("f(%v) = %v, want %v", p, got, want)
		}
	}
	st := provenance.NewState()
	st.SetListings([]provenance.Listing{{Server: "io.github.o/r", RepoURL: "https://github.com/o/r", ListedAt: t0.Add(-200 * 24 * time.Hour)}})
	st.Apply(github.Observation{Repo: "github.com/o/r", ID: "github:github.com/o/r@x", Status: github.StatusResolved, ObservedAt: t0,
		CreatedAt: t0.Add(-100 * 24 * time.Hour), PushedAt: t0, LicenseSPDX: "MIT",
		Commits: &github.CommitStats{ObservedAt: t0, Count: 5, Authors: 3}})
	sv := st.Evaluate(w, t0)
	// 100 − 40 × f(0.001) = 100 − 60 = 40.
	if v := sv[0].Provenance.Value; v == nil || *v != 40 {
		t.Fatalf("copycat provenance %v, want 40: %+v", v, sv[0].Provenance)
	}
	if len(sv[0].Provenance.Evidence) == 0 || sv[0].Provenance.Evidence[0].Kind != trust.EvGitHubRepo {
		t.Fatalf("no github evidence: %+v", sv[0].Provenance.Evidence)
	}
}

// owner_older_than_1y: fires at >= 365 d of owner account age (the same
// comparison the trust scorer makes, so the flag and the scored signal
// agree), not below; an unknown owner age neither fires nor counts in the
// base-rate denominator. The scored signal carries the GitHub evidence and
// lifts the score by 5 × f(0.70).
func TestOwnerOlderThan1y(t *testing.T) {
	w := method.Embedded().Weights
	day := 24 * time.Hour
	cases := []struct {
		name         string
		age          time.Duration // 0 = unknown
		status       string
		known, fires bool
	}{
		{"366 d", 366 * day, github.StatusResolved, true, true},
		{"365 d + 1 h", 365*day + time.Hour, github.StatusResolved, true, true},
		{"exactly 365 d", 365 * day, github.StatusResolved, true, true},
		{"364 d 23 h", 365*day - time.Hour, github.StatusResolved, true, false},
		{"30 d", 30 * day, github.StatusResolved, true, false},
		{"unknown", 0, github.StatusResolved, false, false},
		{"unresolved repo", 3000 * day, github.StatusUnresolved, false, false},
	}
	var ls []provenance.Listing
	st := provenance.NewState()
	for i, c := range cases {
		repo := "github.com/o/r" + itoa(i)
		ls = append(ls, provenance.Listing{Server: "io.github.o/s" + itoa(i), RepoURL: "https://" + repo, ListedAt: t0.Add(-400 * day)})
		o := github.Observation{Repo: repo, ID: github.ObservationID(repo, t0), Status: c.status, ObservedAt: t0, OwnerLogin: "o",
			CreatedAt: t0.Add(-400 * day), PushedAt: t0.Add(-day), Commits: &github.CommitStats{ObservedAt: t0, Count: 4, Authors: 2}}
		if c.age > 0 {
			o.OwnerCreatedAt, o.OwnerObservedAt = t0.Add(-c.age), t0
		}
		st.Apply(o)
	}
	st.SetListings(ls)
	sn := st.Snapshot(w, t0)
	bonus := -w.Provenance.Magnitudes[method.MildPositive] * trust.BaseRateFactor(w, w.Provenance.Signals["owner_older_than_1y"].BaseRate)
	var base float64 // the score without the bonus (no_license only)
	for i, c := range cases {
		sv := sn.Servers[i]
		f := sv.Flags
		if f.OwnerKnown != c.known || f.OwnerOld != c.fires {
			t.Errorf("%s: known %v fires %v, want %v %v", c.name, f.OwnerKnown, f.OwnerOld, c.known, c.fires)
		}
		var sig *trust.Signal
		for j := range sv.Provenance.Signals {
			if sv.Provenance.Signals[j].ID == "owner_older_than_1y" {
				sig = &sv.Provenance.Signals[j]
			}
		}
		if (sig != nil) != (c.fires && c.status == github.StatusResolved) {
			t.Errorf("%s: scored signal %+v, flag %v", c.name, sig, f.OwnerOld)
		}
		if sig != nil && (len(sig.Evidence) == 0 || sig.Evidence[0].Kind != trust.EvGitHubRepo || sig.Direction != method.MildPositive) {
			t.Errorf("%s: signal without GitHub evidence: %+v", c.name, sig)
		}
		if c.name == "30 d" {
			base = *sv.Provenance.Value
		}
	}
	if v := sn.Servers[0].Provenance.Value; v == nil || math.Abs(*v-(base+bonus)) > 0.01 || bonus <= 0 {
		t.Errorf("old owner scores %v, want %.2f + %.2f", v, base, bonus)
	}
	for _, r := range sn.Rates {
		if r.Flag != "owner_older_than_1y" {
			continue
		}
		// 6 resolved servers, one of unknown owner age: n = 5, 3 fire.
		if r.N != 5 || r.Count != 3 || r.Live == nil || *r.Live != 0.6 {
			t.Errorf("owner_older_than_1y rate %+v, want 3/5", r)
		}
	}
}

func TestApplyIdempotentAndCheckpoint(t *testing.T) {
	st := provenance.NewState()
	o := github.Observation{Repo: "github.com/o/r", ObservedAt: t0, Status: github.StatusResolved}
	if st.Apply(o) != 1 || st.Apply(o) != 0 || st.Apply(github.Observation{Repo: "github.com/o/r", ObservedAt: t0.Add(-time.Hour)}) != 0 {
		t.Fatal("Apply not idempotent")
	}
	path := t.TempDir() + "/provenance-state.json"
	stg, err := provenance.NewStage(method.Embedded().Weights, path, nil, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	stg.State().Apply(o)
	if err := stg.Checkpoint(context.Background()); err != nil {
		t.Fatal(err)
	}
	st2, err := provenance.Load(path)
	if err != nil || st2.Len() != 1 {
		t.Fatalf("load: %v %d", err, st2.Len())
	}
	if got, ok := st2.Observation("https://github.com/O/R"); !ok || !got.ObservedAt.Equal(t0) {
		t.Fatalf("%+v %v", got, ok)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func itoa(i int) string {
	const d = "0123456789"
	if i < 10 {
		return d[i : i+1]
	}
	return itoa(i/10) + d[i%10:i%10+1]
}
