// Package provenance is the provenance processor (SPEC §1.2 and §4, issue 4).
//
// In: GitHub observations from provenance.obs (ingest/github), keyed by
// repo, and the registry's listings (server, repository URL, first
// listing), read from the store. Out: per-server provenance signals and the
// provenance sub-score (computed by processors/trust from the PINNED
// calibration of the method version), live registry-wide base rates for
// every flag next to the pinned ones, and the coverage gate. The scorer
// reads it through scorer.ProvenanceSource (Source); the API through
// api/provenance.go.
//
// Flag definitions (pinned by tests; a server counts once):
//   - repo_resolved: the last observation of the server's GitHub repo is
//     200 (denominator: servers with a github.com repo URL that were observed).
//   - GitHub-side flags are over servers whose repo is resolved:
//     fork, archived, no_license (license.spdx_id null; NOASSERTION is a
//     license), repo_under_30d (created_at younger than 30 d at now),
//     stale_over_1y (pushed_at older than 365 d), stars_ge_100,
//     repo_created_after_listing_gt30d (created_at − first listing > 30 d),
//     repo_created_after_listing_1_30d (1 d ≤ lag ≤ 30 d).
//   - Commit flags are over resolved servers whose commits were fetched:
//     no_commits_90d (no commit since now−90 d, incl. 409 empty),
//     single_author_90d (exactly one author among the fetched commits),
//     commit_cap_hit (the page cap cut the listing), verified_commits_90d
//     (at least one verified commit).
//   - owner_older_than_1y: the owner account's created_at (GET
//     /users/{login}) is at least owner_old_days (365) before now — the
//     same comparison processors/trust scores. Denominator: resolved
//     servers whose owner age is known; an unknown age (owner not looked up
//     yet, account gone) neither fires nor counts.
//   - Registry-side flags are over all listings: namespace_owner_mismatch,
//     co_registration_cluster_with_hygiene, one_repo_many_servers_with_hygiene
//     (trust.RegistryFacts + strict weak hygiene: fork or no_commits_90d).
//
// Bad input: a provenance.obs message that github.DecodeObservation refuses
// (undecodable, no repo key, bad status, zero observed_at, implausible
// values) goes to the dlq topic with its reason code and the stream moves
// on (stage.go).
//
// Coverage gate (SPEC §1.2): open while >= 99 % of the distinct github.com
// repos listed have an observation (200, 404 or 409 alike) younger than
// 48 h. The state (coverage %, counts, oldest observation) is in every
// record through GateOpen and on the API.
package provenance

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/forum-mcp/forum/ingest/github"
	ckpt "github.com/forum-mcp/forum/internal/checkpoint"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// Gate parameters (SPEC §1.2).
const (
	GateMinCoverage = 0.99
	GateMaxAge      = 48 * time.Hour
)

// Flag names beyond the method's scored signals.
const (
	FlagRepoResolved = "repo_resolved"
	FlagNoCommits90d = "no_commits_90d"
	FlagStaleOver1y  = "stale_over_1y"
)

// Listing is one server as the processor sees it.
type Listing struct {
	Server   string    `json:"server"`
	RepoURL  string    `json:"repo_url"`
	ListedAt time.Time `json:"listed_at"`
}

// State holds the latest observation per repo and the listings. Safe for
// concurrent use.
type State struct {
	mu       sync.RWMutex
	obs      map[string]github.Observation
	listings []Listing
}

// NewState returns an empty state.
func NewState() *State { return &State{obs: map[string]github.Observation{}} }

// Apply keeps each repo's newest observation; it is idempotent (a
// redelivered or older observation changes nothing). Returns how many
// observations were new.
func (s *State) Apply(obs ...github.Observation) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, o := range obs {
		if o.Repo == "" {
			continue
		}
		if cur, ok := s.obs[o.Repo]; ok && !stamp(o).After(stamp(cur)) {
			continue
		}
		s.obs[o.Repo] = o
		n++
	}
	return n
}

// stamp orders observations: the latest of the repo, the commits and the
// owner lookup (a commit fetch or an owner lookup re-publishes the repo
// observation it extends).
func stamp(o github.Observation) time.Time {
	t := o.ObservedAt
	if o.Commits != nil && o.Commits.ObservedAt.After(t) {
		t = o.Commits.ObservedAt
	}
	if o.OwnerObservedAt.After(t) {
		t = o.OwnerObservedAt
	}
	return t
}

// SetListings replaces the registry listings.
func (s *State) SetListings(ls []Listing) {
	cp := append([]Listing(nil), ls...)
	sort.Slice(cp, func(i, j int) bool { return cp[i].Server < cp[j].Server })
	s.mu.Lock()
	s.listings = cp
	s.mu.Unlock()
}

// Observation returns the latest observation of a repository URL.
func (s *State) Observation(repoURL string) (github.Observation, bool) {
	key, _, _, ok := github.RepoKey(repoURL)
	if !ok {
		return github.Observation{}, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	o, ok := s.obs[key]
	return o, ok
}

// Len is the number of repos observed.
func (s *State) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.obs)
}

// GateState is the coverage gate at a time (schema.ProvenanceGate).
type GateState = schema.ProvenanceGate

// Gate computes the coverage gate at now.
func (s *State) Gate(now time.Time) GateState {
	s.mu.RLock()
	defer s.mu.RUnlock()
	repos := map[string]time.Time{}
	for _, l := range s.listings {
		key, _, _, ok := github.RepoKey(l.RepoURL)
		if !ok {
			continue
		}
		var at time.Time
		if o, ok := s.obs[key]; ok {
			at = o.ObservedAt
		}
		repos[key] = at
	}
	return GateOf(repos, now)
}

// GateOf is SPEC §1.2's coverage gate at now over the distinct listed
// github.com repos, each with the time of its latest observation (zero:
// never observed): open while >= 99 % were observed within 48 h. The
// processor and the scorer (from the processor's published signals) both
// compute it here.
func GateOf(repos map[string]time.Time, now time.Time) GateState {
	g := GateState{MaxAgeHours: GateMaxAge.Hours(), MinCoverage: GateMinCoverage, At: now.UTC(), Resolvable: len(repos)}
	for _, at := range repos {
		if at.IsZero() {
			continue
		}
		g.Observed++
		if age := now.Sub(at); age < GateMaxAge && age >= -time.Minute {
			g.Fresh++
		}
		if g.Oldest == nil || at.Before(*g.Oldest) {
			t := at.UTC()
			g.Oldest = &t
		}
	}
	if g.Resolvable > 0 {
		g.CoveragePct = round2(100 * float64(g.Fresh) / float64(g.Resolvable))
		g.Open = float64(g.Fresh) >= GateMinCoverage*float64(g.Resolvable)
	}
	return g
}

// Flags are the observable facts of one server (the definitions in the
// package doc; schema.ProvenanceFlags, as they travel on provenance.signals).
type Flags = schema.ProvenanceFlags

// FlagsOf derives a server's flags from its observation (nil: not
// observed), listing and registry facts, at now.
func FlagsOf(w *method.Weights, l Listing, o *github.Observation, f trust.Facts, now time.Time) Flags {
	th := w.Provenance.Thresholds
	var fl Flags
	_, _, _, fl.GitHubURL = github.RepoKey(l.RepoURL)
	fl.Mismatch = f.NamespaceOwnerMismatch
	if o == nil {
		return fl
	}
	fl.Observed = true
	if o.Status != github.StatusResolved {
		return fl
	}
	fl.Resolved = true
	day := 24 * time.Hour
	fl.Fork, fl.Archived, fl.NoLicense = o.Fork, o.Archived, o.LicenseSPDX == ""
	if !o.CreatedAt.IsZero() {
		fl.RepoAgeDays = now.Sub(o.CreatedAt).Hours() / 24
		fl.Under30d = fl.RepoAgeDays >= 0 && fl.RepoAgeDays < th.RepoYoungDays
		if !l.ListedAt.IsZero() {
			fl.LagDays = o.CreatedAt.Sub(l.ListedAt).Hours() / 24
			fl.LateGT30d = fl.LagDays > th.LateRepoStrongDays
			fl.Late1to30d = !fl.LateGT30d && fl.LagDays >= th.LateRepoMildMinDays
		}
	}
	fl.StaleOver1y = !o.PushedAt.IsZero() && now.Sub(o.PushedAt) > 365*day
	fl.Stars100 = o.Stars >= th.StarsPositive
	if !o.OwnerCreatedAt.IsZero() {
		fl.OwnerKnown = true
		fl.OwnerAgeDays = now.Sub(o.OwnerCreatedAt).Hours() / 24
		fl.OwnerOld = fl.OwnerAgeDays >= th.OwnerOldDays
	}
	if c := o.Commits; c != nil && !c.ObservedAt.IsZero() {
		fl.CommitsKnown = true
		fl.NoCommits90d = c.Empty || c.Count == 0
		fl.SingleAuthor = c.Authors == 1
		fl.CapHit = c.CapHit
		fl.Verified = c.Verified > 0
	}
	weak := fl.Fork || fl.NoCommits90d
	fl.CoRegCluster = f.CoRegistrationCluster && weak
	fl.OneRepoMany = f.RepoServers >= th.OneRepoMinServers && weak
	return fl
}

// Input builds processors/trust's ProvenanceInput for a server. The
// evidence pointer is the observation's own id (schema.EvidenceURI).
func Input(l Listing, o *github.Observation, f trust.Facts) trust.ProvenanceInput {
	in := trust.ProvenanceInput{RepoURL: l.RepoURL, ListedAt: l.ListedAt.UTC(), Registry: f}
	switch {
	case l.RepoURL == "":
		in.RepoStatus = trust.RepoUnresolved
		return in
	case o == nil:
		in.RepoStatus = trust.RepoNotObserved
		return in
	}
	in.Observation = &trust.Evidence{Kind: trust.EvGitHubRepo, ID: o.ID, ObservedAt: o.ObservedAt.UTC(), URI: schema.EvidenceURI(o.ID)}
	in.RepoStatus = trust.RepoUnresolved
	if o.Status != github.StatusResolved {
		return in
	}
	in.RepoStatus = trust.RepoResolved
	in.RepoCreatedAt, in.OwnerCreatedAt, in.Stars = o.CreatedAt, o.OwnerCreatedAt, o.Stars
	in.Fork, in.Archived, in.LicenseSPDX = o.Fork, o.Archived, o.LicenseSPDX
	if c := o.Commits; c != nil && !c.ObservedAt.IsZero() {
		in.SingleAuthor90d = c.Authors == 1
		in.NoCommits90d = c.Empty || c.Count == 0
		in.CommitCapHit = c.CapHit
		in.VerifiedCommits90d = c.Verified > 0
	}
	return in
}

// contents returns the observations (sorted by repo) and the listings,
// for the stage's checkpoint.
func (s *State) contents() ([]github.Observation, []Listing) {
	s.mu.RLock()
	obs := make([]github.Observation, 0, len(s.obs))
	for _, o := range s.obs {
		obs = append(obs, o)
	}
	ls := append([]Listing{}, s.listings...)
	s.mu.RUnlock()
	sort.Slice(obs, func(i, j int) bool { return obs[i].Repo < obs[j].Repo })
	return obs, ls
}

func round2(x float64) float64 { return float64(int64(x*100+0.5)) / 100 }

// Load reads the observations and listings of a processor checkpoint
// ("" or a missing file: an empty state), for tools that evaluate it
// offline (forum calibrate).
func Load(path string) (*State, error) {
	s := NewState()
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("provenance checkpoint: %w", err)
	}
	var cp struct {
		Observations []github.Observation `json:"observations"`
		Listings     []Listing            `json:"listings"`
	}
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("provenance checkpoint %s: %w", path, err)
	}
	s.Apply(cp.Observations...)
	s.SetListings(cp.Listings)
	return s, nil
}

// Save writes the observations and listings atomically, in the form Load
// reads (the stage's checkpoint is a superset of it).
func (s *State) Save(path string) error {
	obs, ls := s.contents()
	return ckpt.Save(path, struct {
		Observations []github.Observation `json:"observations"`
		Listings     []Listing            `json:"listings"`
	}{obs, ls})
}
