package provenance

import (
	"math"
	"sort"
	"time"

	"github.com/forum-mcp/forum/ingest/github"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// Server is one server's provenance as the processor computes it
// (schema.ProvenanceSignal: the value on provenance.signals).
type Server = schema.ProvenanceSignal

// Rate is one flag's live base rate next to the pinned one (schema.BaseRate).
type Rate = schema.BaseRate

// Denominators.
const (
	DenomObserved = "observed_github_servers"
	DenomResolved = "resolved_servers"
	DenomCommits  = "resolved_servers_with_commits"
	DenomOwnerAge = "resolved_servers_with_owner_age"
	DenomListings = "all_listings"
)

// flagDef says how a flag is counted.
type flagDef struct {
	name  string
	denom string
	get   func(Flags) bool
}

// FlagDefs are every flag with a live base rate, in API order.
var flagDefs = []flagDef{
	{FlagRepoResolved, DenomObserved, func(f Flags) bool { return f.Resolved }},
	{"single_author_90d", DenomCommits, func(f Flags) bool { return f.SingleAuthor }},
	{"no_license", DenomResolved, func(f Flags) bool { return f.NoLicense }},
	{"commit_cap_hit", DenomCommits, func(f Flags) bool { return f.CapHit }},
	{FlagNoCommits90d, DenomCommits, func(f Flags) bool { return f.NoCommits90d }},
	{"repo_under_30d", DenomResolved, func(f Flags) bool { return f.Under30d }},
	{"namespace_owner_mismatch", DenomListings, func(f Flags) bool { return f.Mismatch }},
	{"archived", DenomResolved, func(f Flags) bool { return f.Archived }},
	{"fork", DenomResolved, func(f Flags) bool { return f.Fork }},
	{FlagStaleOver1y, DenomResolved, func(f Flags) bool { return f.StaleOver1y }},
	{"repo_created_after_listing_gt30d", DenomResolved, func(f Flags) bool { return f.LateGT30d }},
	{"repo_created_after_listing_1_30d", DenomResolved, func(f Flags) bool { return f.Late1to30d }},
	{"co_registration_cluster_with_hygiene", DenomListings, func(f Flags) bool { return f.CoRegCluster }},
	{"one_repo_many_servers_with_hygiene", DenomListings, func(f Flags) bool { return f.OneRepoMany }},
	{"verified_commits_90d", DenomCommits, func(f Flags) bool { return f.Verified }},
	{"stars_ge_100", DenomResolved, func(f Flags) bool { return f.Stars100 }},
	{"owner_older_than_1y", DenomOwnerAge, func(f Flags) bool { return f.OwnerOld }},
}

// FlagNames are the flags with a live base rate.
func FlagNames() []string {
	out := make([]string, len(flagDefs))
	for i, d := range flagDefs {
		out[i] = d.name
	}
	return out
}

// Evaluate computes every listed server's provenance at now with the
// weights w (the pinned calibration), sorted by server name.
func (s *State) Evaluate(w *method.Weights, now time.Time) []Server {
	s.mu.RLock()
	listings := s.listings
	obs := make([]*github.Observation, len(listings))
	for i, l := range listings {
		if key, _, _, ok := github.RepoKey(l.RepoURL); ok {
			if o, ok := s.obs[key]; ok {
				obs[i] = &o
			}
		}
	}
	s.mu.RUnlock()
	tl := make([]trust.Listing, len(listings))
	for i, l := range listings {
		tl[i] = trust.Listing{Name: l.Server, RepoURL: l.RepoURL, PublishedAt: l.ListedAt}
		if o := obs[i]; o != nil && o.Status == github.StatusResolved {
			tl[i].RepoOwner = o.OwnerLogin
		}
	}
	facts := trust.RegistryFacts(w, tl)
	out := make([]Server, len(listings))
	for i, l := range listings {
		f := facts[l.Server]
		in := Input(l, obs[i], f)
		r := trust.ComputeWith(w, trust.Input{Server: l.Server, Provenance: in}, now)
		out[i] = Server{Server: l.Server, RepoURL: l.RepoURL, ListedAt: l.ListedAt, Observation: obs[i],
			Flags: FlagsOf(w, l, obs[i], f, now), Provenance: r.Provenance}
	}
	return out
}

// BaseRates counts every flag over the evaluated servers and puts the
// pinned rate of w beside it.
func BaseRates(w *method.Weights, servers []Server) []Rate {
	n := map[string]int{}
	for _, sv := range servers {
		f := sv.Flags
		n[DenomListings]++
		if f.GitHubURL && f.Observed {
			n[DenomObserved]++
		}
		if f.Resolved {
			n[DenomResolved]++
		}
		if f.CommitsKnown {
			n[DenomCommits]++
		}
		if f.Resolved && f.OwnerKnown {
			n[DenomOwnerAge]++
		}
	}
	out := make([]Rate, 0, len(flagDefs))
	for _, d := range flagDefs {
		r := Rate{Flag: d.name, Denominator: d.denom, N: n[d.denom]}
		for _, sv := range servers {
			f := sv.Flags
			in := false
			switch d.denom {
			case DenomObserved:
				in = f.GitHubURL && f.Observed
			case DenomResolved:
				in = f.Resolved
			case DenomCommits:
				in = f.CommitsKnown
			case DenomOwnerAge:
				in = f.Resolved && f.OwnerKnown
			case DenomListings:
				in = true
			}
			if in && d.get(f) {
				r.Count++
			}
		}
		if r.N > 0 {
			v := round6(float64(r.Count) / float64(r.N))
			r.Live = &v
		}
		if spec, ok := w.Provenance.Signals[d.name]; ok {
			p := spec.BaseRate
			r.Pinned, r.PinnedSource, r.Scored, r.Direction = &p, spec.BaseRateSource, true, spec.Direction
		} else if v, ok := w.Provenance.ReferenceBaseRates[d.name].(float64); ok {
			r.Pinned = &v
			r.PinnedSource = "reference_base_rates"
		}
		if r.Live != nil && r.Pinned != nil {
			d := round6(100 * (*r.Live - *r.Pinned))
			r.DeltaPP = &d
		}
		out = append(out, r)
	}
	return out
}

// Snapshot is the processor's view at a time: servers, rates and gate.
type Snapshot struct {
	At      time.Time `json:"at"`
	Gate    GateState `json:"gate"`
	Rates   []Rate    `json:"rates"`
	Servers []Server  `json:"-"`
}

// Snapshot evaluates everything at now.
func (s *State) Snapshot(w *method.Weights, now time.Time) Snapshot {
	sv := s.Evaluate(w, now)
	return Snapshot{At: now.UTC(), Gate: s.Gate(now), Rates: BaseRates(w, sv), Servers: sv}
}

// Lookup finds a server in a snapshot.
func (sn Snapshot) Lookup(server string) (Server, bool) {
	i := sort.Search(len(sn.Servers), func(i int) bool { return sn.Servers[i].Server >= server })
	if i < len(sn.Servers) && sn.Servers[i].Server == server {
		return sn.Servers[i], true
	}
	return Server{}, false
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }
