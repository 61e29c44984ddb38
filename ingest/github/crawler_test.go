package github_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/ingest/github/githubfake"
	"github.com/forum-mcp/forum/internal/testenv"
)

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

type rig struct {
	clock   *githubfake.SimClock
	pop     *githubfake.Population
	srv     *githubfake.Server
	client  *github.Client
	crawler *github.Crawler
	obs     map[string]github.Observation
	count   int
}

func newRig(t *testing.T, n int, limits githubfake.Limits, token string) *rig {
	t.Helper()
	r := &rig{clock: githubfake.NewSimClock(t0), obs: map[string]github.Observation{}}
	r.pop = githubfake.Generate(n, githubfake.SeedRates, t0, github.DefaultCommitPageCap, 42)
	r.srv = &githubfake.Server{Pop: r.pop, Limits: limits, Clock: r.clock}
	r.client = github.NewClient("https://api.github.com", token, r.clock, r.srv.Transport())
	urls := r.pop.URLs()
	r.crawler = &github.Crawler{Client: r.client,
		Targets: func(context.Context) ([]string, error) { return urls, nil },
		Publish: func(_ context.Context, o github.Observation) error {
			r.obs[o.Repo] = o
			r.count++
			return nil
		},
		TargetsEvery: 6 * time.Hour,
	}
	return r
}

func (r *rig) runTo(t *testing.T, d time.Duration) {
	t.Helper()
	if err := r.crawler.RunUntil(context.Background(), t0.Add(d)); err != nil {
		t.Fatal(err)
	}
}

func gateOpen(c github.Coverage) bool {
	return c.Listed > 0 && float64(c.Fresh) >= 0.99*float64(c.Listed)
}

// At 5,000/h over ~28k repos: never over the limit, coverage >= 99 % within
// ~6 h (the gate opens), commits follow, and a refresh of unchanged repos
// is answered with 304s that cost no quota.
func TestCrawler5000PerHourCoversIn6h(t *testing.T) {
	t.Parallel()
	testenv.Long(t, "simulates a day of crawling") // pins a Done-when of issue 4
	r := newRig(t, 28000, githubfake.Limits{PerHour: 5000, SecondaryPerMinute: 100}, "token")
	r.runTo(t, 6*time.Hour)
	cv := r.crawler.Coverage(r.clock.Now(), 48*time.Hour)
	st := r.srv.Stats()
	t.Logf("6h: coverage %d/%d, server %+v, client %+v", cv.Fresh, cv.Listed, st, r.client.Stats())
	if !gateOpen(cv) {
		t.Fatalf("coverage %d/%d after 6 h, want >= 99%%", cv.Fresh, cv.Listed)
	}
	if st.PrimaryRejected != 0 || st.MaxUsedInWindow > 5000 || st.SecondaryHits != 0 {
		t.Fatalf("limits exceeded: %+v", st)
	}
	// Commits of every resolved repo within the next ~5 h.
	r.runTo(t, 12*time.Hour)
	missing := 0
	for _, o := range r.obs {
		if o.Status == github.StatusResolved && o.Commits == nil {
			missing++
		}
	}
	if missing != 0 {
		t.Fatalf("%d resolved repos without commits after 12 h", missing)
	}
	// The owner accounts follow the commits (one request per owner, ~1 per
	// 3 repos): all looked up before the refreshes begin at 24 h.
	r.runTo(t, 24*time.Hour)
	owners := resolvedOwners(r.pop)
	lookups := r.srv.UserLookups()
	t.Logf("24h: %d owners of resolved repos, %d looked up, server %+v", len(owners), len(lookups), r.srv.Stats())
	if len(lookups) != len(owners) {
		t.Fatalf("%d owners looked up, want %d", len(lookups), len(owners))
	}
	// A day later everything is refreshed; unchanged repos answer 304 and
	// cost nothing: only the 404s (no ETag) are charged.
	before := r.srv.Stats()
	r.runTo(t, 40*time.Hour)
	after := r.srv.Stats()
	unresolved := 0
	for _, o := range r.obs {
		if o.Status == github.StatusUnresolved {
			unresolved++
		}
	}
	charged := after.Charged - before.Charged
	t.Logf("refresh: charged %d, 304s %d, unresolved %d", charged, after.NotModified-before.NotModified, unresolved)
	if after.NotModified-before.NotModified < 20000 {
		t.Fatalf("refresh answered only %d 304s", after.NotModified-before.NotModified)
	}
	if charged > 2*unresolved {
		t.Fatalf("refresh charged %d requests, want only the %d unresolved (x <=2 passes)", charged, unresolved)
	}
	if after.PrimaryRejected != 0 || after.MaxUsedInWindow > 5000 {
		t.Fatalf("limits exceeded: %+v", after)
	}
	if cv := r.crawler.Coverage(r.clock.Now(), 48*time.Hour); !gateOpen(cv) {
		t.Fatalf("coverage fell to %d/%d", cv.Fresh, cv.Listed)
	}
	for login, n := range r.srv.UserLookups() {
		if n != 1 {
			t.Fatalf("owner %s looked up %d times within 40 h, want once (refresh 30 d)", login, n)
		}
	}
}

// resolvedOwners are the lower-case logins owning at least one resolved repo.
func resolvedOwners(p *githubfake.Population) map[string]bool {
	out := map[string]bool{}
	for _, x := range p.Repos {
		if x.Resolved {
			out[strings.ToLower(x.Owner)] = true
		}
	}
	return out
}

// Owner accounts: one GET /users/{login} per owner however many repos it
// has; its created_at rides on every observation of its repos (re-published
// once looked up); a refresh sends If-None-Match and the 304 is free; a
// restart does not ask again.
func TestOwnerLookups(t *testing.T) {
	r := newRig(t, 2000, githubfake.Limits{PerHour: 5000}, "token")
	r.crawler.OwnerRefresh = 3 * time.Hour
	r.crawler.StatePath = filepath.Join(t.TempDir(), "github-state.json")
	r.runTo(t, 2*time.Hour)
	owners := resolvedOwners(r.pop)
	repos := 0
	for _, x := range r.pop.Repos {
		if x.Resolved {
			repos++
		}
	}
	if len(owners) == 0 || len(owners) >= repos*2/3 {
		t.Fatalf("%d owners for %d resolved repos: owners should repeat", len(owners), repos)
	}
	lookups := r.srv.UserLookups()
	for login := range owners {
		if lookups[login] != 1 {
			t.Fatalf("owner %s looked up %d times, want 1", login, lookups[login])
		}
	}
	if len(lookups) != len(owners) {
		t.Fatalf("%d logins looked up, want the %d owners of resolved repos only", len(lookups), len(owners))
	}
	for _, x := range r.pop.Repos {
		key, _, _, _ := github.RepoKey(x.URL())
		o := r.obs[key]
		switch {
		case !x.Resolved && !o.OwnerCreatedAt.IsZero():
			t.Fatalf("%s unresolved with an owner age: %+v", key, o)
		case x.Resolved && !o.OwnerCreatedAt.Equal(r.pop.OwnerOf(x).CreatedAt):
			t.Fatalf("%s: owner_created_at %v, want %v", key, o.OwnerCreatedAt, r.pop.OwnerOf(x).CreatedAt)
		case x.Resolved && (o.OwnerObservedAt.IsZero() || o.Commits == nil):
			t.Fatalf("%s: %+v", key, o)
		}
	}
	// 3 h after their lookup the owners are due again: If-None-Match → 304,
	// no quota.
	before := r.srv.Stats()
	r.runTo(t, 5*time.Hour)
	after := r.srv.Stats()
	asked, free := after.UserRequests-before.UserRequests, after.UserNotModified-before.UserNotModified
	if asked != len(owners) || free != asked {
		t.Fatalf("owner refresh: %d requests, %d of them 304, want %d and all 304", asked, free, len(owners))
	}
	if charged := after.Charged - before.Charged; charged != 0 {
		t.Fatalf("owner refresh charged %d requests", charged)
	}
	// A restarted crawler remembers the owners: nothing is asked again.
	c2 := &github.Crawler{Client: r.client, StatePath: r.crawler.StatePath, Targets: r.crawler.Targets, OwnerRefresh: 3 * time.Hour}
	if err := c2.Load(); err != nil {
		t.Fatal(err)
	}
	n := r.srv.Stats().UserRequests
	if err := c2.RunUntil(context.Background(), t0.Add(5*time.Hour+30*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := r.srv.Stats().UserRequests; got != n {
		t.Fatalf("restart asked %d owners again", got-n)
	}
}

// A checkpoint of format 1 (the bare repo map, before owners) still loads:
// the repos are not fetched again, only their owners are.
func TestCheckpointFormat1(t *testing.T) {
	r := newRig(t, 50, githubfake.Limits{PerHour: 5000}, "token")
	path := filepath.Join(t.TempDir(), "github-state.json")
	r.crawler.StatePath = path
	r.runTo(t, time.Hour)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cp struct {
		Format int             `json:"format"`
		Repos  json.RawMessage `json:"repos"`
	}
	if err := json.Unmarshal(b, &cp); err != nil || cp.Format != 2 {
		t.Fatalf("checkpoint format %d: %v", cp.Format, err)
	}
	if err := os.WriteFile(path, cp.Repos, 0o644); err != nil {
		t.Fatal(err)
	}
	c2 := &github.Crawler{Client: r.client, StatePath: path, Targets: r.crawler.Targets}
	if err := c2.Load(); err != nil {
		t.Fatal(err)
	}
	before := r.srv.Stats()
	if err := c2.RunUntil(context.Background(), t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	after := r.srv.Stats()
	if got, want := after.Charged-before.Charged, after.UserRequests-before.UserRequests; got != want || want == 0 {
		t.Fatalf("after a format-1 restart: charged %d, owner lookups %d; want only the owners", got, want)
	}
}

// Without a token (60/h) the crawler covers what it can, never exceeds the
// limit, and coverage stays far below the gate.
func TestCrawler60PerHourStaysClosed(t *testing.T) {
	t.Parallel()
	r := newRig(t, 28000, githubfake.Limits{PerHour: 60}, "")
	r.runTo(t, 48*time.Hour)
	cv := r.crawler.Coverage(r.clock.Now(), 48*time.Hour)
	st := r.srv.Stats()
	t.Logf("coverage %d/%d, server %+v", cv.Fresh, cv.Listed, st)
	if gateOpen(cv) {
		t.Fatal("gate open at 60/h")
	}
	if st.PrimaryRejected != 0 || st.MaxUsedInWindow > 60 {
		t.Fatalf("limits exceeded: %+v", st)
	}
	if cv.Fresh < 48*55 {
		t.Fatalf("only %d repos covered in 48 h at 60/h: budget not used", cv.Fresh)
	}
}

// A 304 costs no quota: the remaining budget is unchanged.
func TestNotModifiedIsFree(t *testing.T) {
	r := newRig(t, 50, githubfake.Limits{PerHour: 5000}, "token")
	var repo *githubfake.Repo
	for _, x := range r.pop.Repos {
		if x.Resolved && x.NewOwner == "" {
			repo = x
			break
		}
	}
	ctx := context.Background()
	first, err := r.client.Get(ctx, "/repos/"+repo.Owner+"/"+repo.Name, "")
	if err != nil || first.Status != http.StatusOK || first.ETag == "" {
		t.Fatalf("first: %v %+v", err, first)
	}
	rem := r.client.Budget().Remaining
	charged := r.srv.Stats().Charged
	second, err := r.client.Get(ctx, "/repos/"+repo.Owner+"/"+repo.Name, first.ETag)
	if err != nil || second.Status != http.StatusNotModified {
		t.Fatalf("second: %v %+v", err, second)
	}
	if got := r.client.Budget().Remaining; got != rem {
		t.Fatalf("remaining %d after a 304, want %d", got, rem)
	}
	if r.srv.Stats().Charged != charged {
		t.Fatal("the server charged a 304")
	}
}

// Primary limit: a spent budget (another client used it) makes the crawler
// wait for x-ratelimit-reset, once, then continue.
func TestPrimaryLimitWaitsForReset(t *testing.T) {
	r := newRig(t, 200, githubfake.Limits{PerHour: 100}, "token")
	// Spend the window from "elsewhere".
	other := github.NewClient("https://api.github.com", "token", r.clock, r.srv.Transport())
	for i := 0; i < 100; i++ {
		r.srv.ServeHTTP(nopWriter{}, mustReq("/repos/x/y"))
	}
	_ = other
	r.runTo(t, 4*time.Hour)
	st := r.srv.Stats()
	if st.PrimaryRejected != 1 {
		t.Fatalf("primary rejections %d, want exactly 1 (then wait for reset)", st.PrimaryRejected)
	}
	if r.client.Stats().PrimaryWaits < 1 {
		t.Fatal("client never waited for the reset")
	}
	if cv := r.crawler.Coverage(r.clock.Now(), 48*time.Hour); cv.Fresh != 200 {
		t.Fatalf("coverage %d/200 after 4 h at 100/h", cv.Fresh)
	}
}

// Secondary limit: retry-after is honoured; without it the client backs off
// >= 60 s. Either way no request is sent within 60 s of a hit.
func TestSecondaryLimit(t *testing.T) {
	for _, noRA := range []bool{false, true} {
		r := newRig(t, 300, githubfake.Limits{PerHour: 5000, SecondaryPerMinute: 20, SecondaryNoRetryAfter: noRA}, "token")
		r.runTo(t, 3*time.Hour)
		st := r.srv.Stats()
		if st.SecondaryHits == 0 {
			t.Fatal("the test did not trigger the secondary limit")
		}
		if st.RequestsAfterHit != 0 {
			t.Fatalf("retry-after=%v: %d requests within 60 s of a secondary hit", !noRA, st.RequestsAfterHit)
		}
		if cv := r.crawler.Coverage(r.clock.Now(), 48*time.Hour); cv.Fresh != 300 {
			t.Fatalf("coverage %d/300", cv.Fresh)
		}
	}
}

// Renames, 404s, 409s and the commit-page cap are recorded.
func TestObservationKinds(t *testing.T) {
	r := newRig(t, 2000, githubfake.Limits{PerHour: 5000}, "token")
	r.runTo(t, 2*time.Hour)
	seen := map[string]int{}
	for _, x := range r.pop.Repos {
		key, _, _, _ := github.RepoKey(x.URL())
		o, ok := r.obs[key]
		if !ok {
			t.Fatalf("%s not observed", key)
		}
		switch {
		case !x.Resolved:
			seen["404"]++
			if o.Status != github.StatusUnresolved || o.HTTPStatus != 404 {
				t.Fatalf("%s: %+v", key, o)
			}
			continue
		case o.Status != github.StatusResolved || o.Commits == nil:
			t.Fatalf("%s: %+v", key, o)
		case x.NewOwner != "":
			seen["rename"]++
			if o.RenamedTo != x.NewOwner+"/"+x.NewName {
				t.Fatalf("%s renamed_to %q", key, o.RenamedTo)
			}
		}
		if x.Empty != o.Commits.Empty {
			t.Fatalf("%s empty %v, observed %v", key, x.Empty, o.Commits.Empty)
		}
		if x.Truth.CapHit != o.Commits.CapHit {
			t.Fatalf("%s cap hit %v, observed %+v", key, x.Truth.CapHit, o.Commits)
		}
		if x.Truth.SingleAuthor != (o.Commits.Authors == 1) {
			t.Fatalf("%s single author %v, observed %+v", key, x.Truth.SingleAuthor, o.Commits)
		}
		if x.Truth.NoCommits != (o.Commits.Count == 0) {
			t.Fatalf("%s no commits %v, observed %+v", key, x.Truth.NoCommits, o.Commits)
		}
		if (x.License == "") != (o.LicenseSPDX == "") {
			t.Fatalf("%s license %q observed %q", key, x.License, o.LicenseSPDX)
		}
		if x.Empty {
			seen["409"]++
		}
		if x.Truth.CapHit {
			seen["cap"]++
		}
	}
	for _, k := range []string{"404", "rename", "409", "cap"} {
		if seen[k] == 0 {
			t.Fatalf("no %s case in the population", k)
		}
	}
}

// The checkpoint survives a restart: a restarted crawler does not refetch.
func TestCheckpoint(t *testing.T) {
	r := newRig(t, 100, githubfake.Limits{PerHour: 5000}, "token")
	r.crawler.StatePath = t.TempDir() + "/github-state.json"
	r.runTo(t, time.Hour)
	charged := r.srv.Stats().Charged
	c2 := &github.Crawler{Client: r.client, StatePath: r.crawler.StatePath, Targets: r.crawler.Targets}
	if err := c2.Load(); err != nil {
		t.Fatal(err)
	}
	if err := c2.RunUntil(context.Background(), t0.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got := r.srv.Stats().Charged; got != charged {
		t.Fatalf("restart refetched: charged %d → %d", charged, got)
	}
	if cv := c2.Coverage(r.clock.Now(), 48*time.Hour); cv.Fresh != 100 {
		t.Fatalf("coverage after restart %d", cv.Fresh)
	}
}

func TestRepoKey(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/Foo/Bar.git":        "github.com/foo/bar",
		"git+https://github.com/foo/bar/tree/x": "github.com/foo/bar",
		"https://gitlab.com/foo/bar":            "",
		"https://github.com/foo":                "",
		"":                                      "",
	} {
		got, _, _, _ := github.RepoKey(in)
		if got != want {
			t.Errorf("RepoKey(%q) = %q, want %q", in, got, want)
		}
	}
}

type nopWriter struct{}

func (nopWriter) Header() http.Header         { return http.Header{} }
func (nopWriter) Write(b []byte) (int, error) { return len(b), nil }
func (nopWriter) WriteHeader(int)             {}

func mustReq(path string) *http.Request {
	r, _ := http.NewRequest(http.MethodGet, "https://api.github.com"+path, nil)
	return r
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// A repo that answers its metadata but not its commits (it vanished between
// the two calls) keeps unknown commit facts — not "no commits in 90 d" — and
// is not asked for its commits again until its metadata is fetched again.
func TestVanishedCommitsStayUnknown(t *testing.T) {
	r := newRig(t, 300, githubfake.Limits{PerHour: 5000}, "token")
	var gone *githubfake.Repo
	for _, x := range r.pop.Repos {
		if x.Resolved && x.NewOwner == "" && !x.Empty {
			gone = x
			break
		}
	}
	commitsPath := "/repos/" + gone.Owner + "/" + gone.Name + "/commits"
	asked := 0
	inner := r.srv.Transport()
	r.crawler.Client = github.NewClient("https://api.github.com", "token", r.clock, roundTrip(func(req *http.Request) (*http.Response, error) {
		if req.URL.Path == commitsPath {
			asked++
			return &http.Response{StatusCode: http.StatusNotFound, Body: io.NopCloser(strings.NewReader(`{"message":"Not Found"}`)),
				Header: http.Header{"Content-Type": {"application/json"}}, Request: req}, nil
		}
		return inner.RoundTrip(req)
	}))
	r.runTo(t, 3*time.Hour)
	key, _, _, _ := github.RepoKey(gone.URL())
	o, ok := r.obs[key]
	if !ok || o.Status != github.StatusResolved {
		t.Fatalf("%s: %+v (observed %v)", key, o, ok)
	}
	if o.Commits != nil {
		t.Fatalf("commit facts of a repo whose commits answered 404: %+v, want unknown (nil)", *o.Commits)
	}
	if asked != 1 {
		t.Fatalf("commits asked %d times before the next metadata refresh, want 1", asked)
	}
}
