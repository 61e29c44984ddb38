package trust

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/forum-mcp/forum/processors/method"
)

// Repo status of a server's source repository for provenance.
const (
	RepoResolved    = "resolved"     // GitHub answered with the repo
	RepoUnresolved  = "unresolved"   // no URL, or GitHub 404: provenance null, reason repo_unresolved
	RepoNotObserved = "not_observed" // a URL exists but no fresh observation yet: null, reason repo_not_observed
)

// ProvenanceInput is the GitHub-side and registry-side provenance of one server.
type ProvenanceInput struct {
	RepoURL     string
	RepoStatus  string    // RepoResolved | RepoUnresolved | RepoNotObserved ("" = derived: no URL → unresolved, else not observed)
	Observation *Evidence // the github_repo observation behind the fields below

	ListedAt       time.Time // the server's first registry listing (earliest publishedAt)
	RepoCreatedAt  time.Time
	OwnerCreatedAt time.Time
	Fork           bool
	Archived       bool
	// LicenseSPDX is GitHub's license.spdx_id; "" (null) is no_license.
	// NOASSERTION means a license file GitHub could not identify: not no_license.
	LicenseSPDX        string
	SingleAuthor90d    bool
	NoCommits90d       bool
	CommitCapHit       bool
	VerifiedCommits90d bool
	Stars              int

	// Registry-side facts from RegistryFacts (computable without GitHub).
	Registry Facts
}

// provFacts carries what the band rules need beyond the sub-score.
type provFacts struct {
	registryNegative string // id of a negative registry-side signal that fired, "" if none
}

// BaseRateFactor is f(p) = clamp(log10(1/p)/divisor, min, max) (SPEC §4).
func BaseRateFactor(w *method.Weights, p float64) float64 {
	f := w.Provenance.BaseRateFactor
	if p <= 0 {
		return f.Max
	}
	return math.Max(f.Min, math.Min(f.Max, math.Log10(1/p)/f.Divisor))
}

func provenance(w *method.Weights, in ProvenanceInput, now time.Time) (SubScore, provFacts) {
	status := in.RepoStatus
	if status == "" {
		if in.RepoURL == "" {
			status = RepoUnresolved
		} else {
			status = RepoNotObserved
		}
	}
	resolved := status == RepoResolved
	th := w.Provenance.Thresholds
	var sigs []Signal
	var pf provFacts
	var ghEv []Evidence
	if in.Observation != nil {
		ghEv = []Evidence{*in.Observation}
	}
	// add computes one signal's penalty: magnitude(direction) × f(p) × scale.
	add := func(id string, scale float64, ev []Evidence, extra map[string]float64) *Signal {
		spec := w.Provenance.Signals[id]
		mag := w.Provenance.Magnitudes[spec.Direction]
		f := BaseRateFactor(w, spec.BaseRate)
		s := Signal{
			ID: id, Direction: spec.Direction, Open: true,
			Penalty:  round6(mag * f * scale),
			Values:   map[string]float64{"magnitude": mag, "base_rate": spec.BaseRate, "factor": round6(f)},
			Evidence: ev,
		}
		if scale != 1 {
			s.Values["scale"] = round6(scale)
		}
		for k, v := range extra {
			s.Values[k] = v
		}
		if spec.OpenHighSeverity {
			s.Severity = SeverityHigh
		}
		sigs = append(sigs, s)
		return &sigs[len(sigs)-1]
	}

	// GitHub-side signals need an observation; for an unresolved repo they
	// may come from the last good one (see package doc).
	if resolved {
		if !in.RepoCreatedAt.IsZero() && !in.ListedAt.IsZero() {
			lag := in.RepoCreatedAt.Sub(in.ListedAt).Hours() / 24
			switch {
			case lag > th.LateRepoStrongDays:
				add("repo_created_after_listing_gt30d", 1, ghEv, map[string]float64{"lag_days": round6(lag)})
			case lag >= th.LateRepoMildMinDays:
				add("repo_created_after_listing_1_30d", 1, ghEv, map[string]float64{"lag_days": round6(lag)})
			}
		}
		if in.Fork {
			add("fork", 1, ghEv, nil)
		}
		if in.Archived {
			add("archived", 1, ghEv, nil)
		}
		if !in.RepoCreatedAt.IsZero() {
			age := ageDays(now, in.RepoCreatedAt)
			spec := w.Provenance.Signals["repo_under_30d"]
			if age >= 0 && age < spec.LinearDecayDays {
				// Linear decay: full weight on day 0, nothing at 30 d.
				add("repo_under_30d", 1-age/spec.LinearDecayDays, ghEv, map[string]float64{"age_days": round6(age)})
			}
		}
		if in.LicenseSPDX == "" {
			add("no_license", 1, ghEv, nil)
		}
		if in.SingleAuthor90d {
			add("single_author_90d", 1, ghEv, nil)
		}
		if in.CommitCapHit {
			s := add("commit_cap_hit", 1, ghEv, nil)
			s.Note = "data-quality note: author counts are unreliable"
			s.Open = false
		}
		if in.VerifiedCommits90d {
			add("verified_commits_90d", 1, ghEv, nil)
		}
		if !in.OwnerCreatedAt.IsZero() && ageDays(now, in.OwnerCreatedAt) >= th.OwnerOldDays {
			add("owner_older_than_1y", 1, ghEv, nil)
		}
		if in.Stars >= th.StarsPositive {
			add("stars_ge_100", 1, ghEv, map[string]float64{"stars": float64(in.Stars)})
		}
	}
	// Registry-side signals: computable without GitHub.
	weakHygiene := in.Fork || in.NoCommits90d
	if in.Registry.NamespaceOwnerMismatch {
		add("namespace_owner_mismatch", 1, in.Registry.Evidence, nil)
		pf.registryNegative = "namespace_owner_mismatch"
	}
	if in.Registry.CoRegistrationCluster && weakHygiene {
		s := add("co_registration_cluster_with_hygiene", 1, in.Registry.Evidence,
			map[string]float64{"cluster_size": float64(in.Registry.ClusterSize)})
		s.Note = "cluster " + in.Registry.ClusterKey + " with weak hygiene (fork or no commits in 90 d)"
		if pf.registryNegative == "" {
			pf.registryNegative = "co_registration_cluster_with_hygiene"
		}
	}
	if in.Registry.RepoServers >= th.OneRepoMinServers && weakHygiene {
		add("one_repo_many_servers_with_hygiene", 1, in.Registry.Evidence,
			map[string]float64{"repo_servers": float64(in.Registry.RepoServers)})
	}
	slices.SortStableFunc(sigs, func(a, b Signal) int { return strings.Compare(a.ID, b.ID) })

	sub := SubScore{Signals: nonNilSignals(sigs), Evidence: []Evidence{}}
	if in.Observation != nil {
		sub.Evidence = append(sub.Evidence, *in.Observation)
	}
	sub.Evidence = append(sub.Evidence, in.Registry.Evidence...)
	sortEvidence(sub.Evidence)
	if !resolved {
		if status == RepoUnresolved {
			sub.Reason = ReasonRepoUnresolved
		} else {
			sub.Reason = ReasonRepoNotObserved
		}
		// Signals stay in the evidence but score nothing: the sub-score is unknown.
		return sub, pf
	}
	total := 0.0
	for _, s := range sigs {
		total += s.Penalty
	}
	v := math.Max(0, math.Min(100, w.Provenance.Baseline-total))
	sub.Value = ptr(round2(v))
	return sub, pf
}

func round6(x float64) float64 { return math.Round(x*1e6) / 1e6 }

func nonNilSignals(s []Signal) []Signal {
	if s == nil {
		return []Signal{}
	}
	return s
}
