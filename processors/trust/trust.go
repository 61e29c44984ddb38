// Package trust computes the FORUM trust record's scores, method
// 0.1.0-draft5 (SPEC §4, seed 002): four sub-scores (provenance, static,
// drift, incidents), the renormalized overall score, the band, open signals,
// the visibility tier and the coverage reasons.
//
// In: one Input per server — plain structs the scoring processor fills from
// the other processors' state (GitHub observations, registry-wide facts from
// RegistryFacts, scan findings, drift events as schema.DriftEvent, curated
// incidents, the last health check) — plus the publication time `now`. All
// windows and decay are evaluated against `now` (event time), never the wall
// clock, so a replay gives the same result as living through it.
// Out: a Result. Compute is pure: no I/O, no globals beyond the embedded,
// read-only method weights and suspect-domain list.
//
// Every number comes from processors/method's weights file; this package holds
// no weight of its own. Registry-wide helpers (co-registration clusters,
// one-repo-many-servers, namespace/owner mismatch, bulk edits, owner bursts)
// are pure functions over all servers' facts, for the processor's global
// state.
//
// Reading of the SPEC where it is silent (each pinned by a test):
//   - Sub-score values and the overall score are rounded to 2 decimals (half
//     away from zero); bands are derived from the rounded, published values
//     so a consumer re-deriving the band from the record gets the same one.
//   - An "open high-severity signal" is: a strong-negative signal while open,
//     the repo-created->30 d-after-listing signal, a high-severity static
//     finding of any class, a suspect-destination endpoint move or a
//     multi_change_24h while its decayed weight is >= 10 % of the original,
//     and a suspected critical/high incident while its decayed weight is
//     >= 10 % of the original. Only the four classes in
//     static.strong_negative_classes (high severity), the late-repo signal,
//     the suspect endpoint and multi_change_24h are strong negatives (→ D).
//   - multi_change_24h adds to the weights of the events that make it up.
//   - For an unresolved repo, Fork/NoCommits90d may carry the last
//     successful observation: a repo deleted after its listing keeps its
//     known hygiene, so a co-registration cluster can still fire and, with
//     repo_unresolved, give band F.
package trust

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

// The record parts are wire types (schema/trust.go): they travel in
// processor outputs and sealed records.
type (
	Evidence   = schema.Evidence
	Signal     = schema.Signal
	SubScore   = schema.SubScore
	Unobserved = schema.Unobserved
	OpenSignal = schema.OpenSignal
	OwnerBurst = schema.OwnerBurst
	BulkEdit   = schema.BulkEdit
)

// Evidence kinds.
const (
	EvHealthCheck   = schema.EvHealthCheck
	EvRegistryEvent = schema.EvRegistryEvent
	EvGitHubRepo    = schema.EvGitHubRepo
	EvScanFinding   = schema.EvScanFinding
	EvIncident      = schema.EvIncident
)

// SeverityHigh is the severity of a signal that is open high-severity.
const SeverityHigh = schema.SeverityHigh

// Reason codes for unknown sub-scores and unobserved dimensions.
const (
	ReasonRepoUnresolved  = "repo_unresolved"
	ReasonRepoNotObserved = "repo_not_observed"
	ReasonNotScanned      = "not_scanned"
	ReasonAuthRequired    = "auth_required"
	ReasonUnreachable     = "unreachable"
	ReasonNoEndpoint      = "no_endpoint"
	ReasonDriftNotObs     = "not_observed"
	ReasonIncidentsNotChk = "incidents_not_checked"
	ReasonHandshakeFailed = "handshake_failed"
	ReasonNotChecked      = "not_checked"
)

// Visibility tiers (SPEC §4 Coverage honesty).
const (
	VisLiveEndpoint = "live-endpoint"
	VisOAuthGated   = "oauth-gated"
	VisNoEndpoint   = "no-endpoint"
	VisUnreachable  = "unreachable"
	VisNotChecked   = "not-checked"
)

// Bands.
const (
	BandA = "A"
	BandB = "B"
	BandC = "C"
	BandD = "D"
	BandF = "F"
)

// Input is everything the trust scorer reads for one server.
type Input struct {
	Server     string
	Namespace  string // derived from Server when empty
	Provenance ProvenanceInput
	Static     StaticInput
	Drift      DriftInput
	Incidents  IncidentsInput
	Endpoint   EndpointInput
}

// EndpointInput is the last counted health check, for the visibility tier.
type EndpointInput struct {
	HasRemote bool
	// Outcome is ok|auth_required|handshake_failed|unreachable; "",
	// not_checked and rate_limited all mean no counted check.
	Outcome string
	Check   *Evidence // the health check, when there is one
}

// Result is the trust part of one published record.
type Result struct {
	Server             string       `json:"server"`
	Namespace          string       `json:"namespace"`
	MethodVersion      string       `json:"method_version"`
	WeightsSHA256      string       `json:"weights_sha256"`
	Score              *float64     `json:"score"`
	Band               string       `json:"band"`
	BandReason         string       `json:"band_reason"`
	Provenance         SubScore     `json:"provenance"`
	Static             SubScore     `json:"static"`
	Drift              SubScore     `json:"drift"`
	Incidents          SubScore     `json:"incidents"`
	OpenSignals        []OpenSignal `json:"open_signals"`
	Visibility         string       `json:"visibility"`
	Unobserved         []Unobserved `json:"unobserved"`
	DriftObservedSince *time.Time   `json:"drift_observed_since"`
}

// ComputeWith scores one server with the given weights (tests, re-derivation
// of historical records with an older weights file).
func ComputeWith(w *method.Weights, in Input, now time.Time) Result {
	now = now.UTC()
	ns := in.Namespace
	if ns == "" {
		ns = schema.Namespace(in.Server)
	}
	r := Result{
		Server:        in.Server,
		Namespace:     ns,
		MethodVersion: w.MethodVersion,
		WeightsSHA256: w.SHA256(),
	}
	var provFacts provFacts
	r.Provenance, provFacts = provenance(w, in.Provenance, now)
	r.Static = static(w, in.Static)
	r.Drift = drift(w, in.Drift, now)
	var fIncident *Signal
	r.Incidents, fIncident = incidents(w, in.Incidents, now)
	if !in.Drift.ObservedSince.IsZero() {
		t := in.Drift.ObservedSince.UTC()
		r.DriftObservedSince = &t
	}

	subs := []struct {
		name string
		s    *SubScore
	}{{"provenance", &r.Provenance}, {"static", &r.Static}, {"drift", &r.Drift}, {"incidents", &r.Incidents}}
	r.OpenSignals = []OpenSignal{}
	for _, sub := range subs {
		for _, sg := range sub.s.Signals {
			switch {
			case sg.StrongNegative():
				r.OpenSignals = append(r.OpenSignals, OpenSignal{SubScore: sub.name, ID: sg.ID, Kind: "strong_negative"})
			case sg.HighSeverity():
				r.OpenSignals = append(r.OpenSignals, OpenSignal{SubScore: sub.name, ID: sg.ID, Kind: "high_severity"})
			}
		}
	}
	r.Score = Aggregate(w, r.Provenance.Value, r.Static.Value, r.Drift.Value, r.Incidents.Value)
	r.Band, r.BandReason = band(w, &r, provFacts, fIncident)
	r.Visibility, r.Unobserved = coverage(in, &r)
	return r
}

// Aggregate is the weighted mean of the known sub-scores, renormalized over
// the known ones; nil only when all four are unknown (SPEC §4 Aggregation).
// Arguments are in method.SubScores order.
func Aggregate(w *method.Weights, prov, stat, drift, inc *float64) *float64 {
	vals := []*float64{prov, stat, drift, inc}
	num, den := 0.0, 0.0
	for i, v := range vals {
		if v == nil {
			continue
		}
		wt := w.Aggregation.Weights[method.SubScores[i]]
		num += wt * *v
		den += wt
	}
	if den == 0 {
		return nil
	}
	return ptr(round2(num / den))
}

// band applies SPEC §4 Bands, first rule that applies.
func band(w *method.Weights, r *Result, pf provFacts, fIncident *Signal) (string, string) {
	if fIncident != nil {
		return BandF, "F: confirmed incident " + fIncident.ID + " still >= 10% of its original weight"
	}
	if r.Provenance.Reason == ReasonRepoUnresolved && pf.registryNegative != "" {
		return BandF, "F: repo_unresolved with negative registry-side provenance signal " + pf.registryNegative
	}
	subs := []SubScore{r.Provenance, r.Static, r.Drift, r.Incidents}
	for i, s := range subs {
		if s.Value != nil && *s.Value < w.Bands.DBelow {
			return BandD, "D: " + method.SubScores[i] + " below " + fmtNum(w.Bands.DBelow)
		}
	}
	high := false
	for _, o := range r.OpenSignals {
		if o.Kind == "strong_negative" {
			return BandD, "D: open strong-negative signal " + o.SubScore + "/" + o.ID
		}
		high = true
	}
	allKnown, minV := true, math.Inf(1)
	for _, s := range subs {
		if s.Value == nil {
			allKnown = false
			continue
		}
		minV = math.Min(minV, *s.Value)
	}
	switch {
	case allKnown && minV >= w.Bands.AMin && !high:
		return BandA, "A: all sub-scores known and >= " + fmtNum(w.Bands.AMin)
	case allKnown && minV >= w.Bands.BMin && !high:
		return BandB, "B: all sub-scores known and >= " + fmtNum(w.Bands.BMin)
	case !allKnown:
		return BandC, "C: limited visibility (unknown sub-score)"
	case high:
		return BandC, "C: open high-severity signal"
	default:
		return BandC, "C: a sub-score below " + fmtNum(w.Bands.BMin)
	}
}

// BandRank orders bands from best (A=4) to worst (F=0); unknown = -1.
func BandRank(b string) int {
	switch b {
	case BandA:
		return 4
	case BandB:
		return 3
	case BandC:
		return 2
	case BandD:
		return 1
	case BandF:
		return 0
	}
	return -1
}

// ReviewHold reports whether a new record must be held as review_pending
// (SPEC §4 Popular-server review): the server has >= min_stars and the new
// band is at least min_band_drop bands below the previous one. A first record
// (prevBand "") is never held. HoldUntil gives the end of the hold.
func ReviewHold(w *method.Weights, prevBand, newBand string, stars int) bool {
	if prevBand == "" || stars < w.PopularReview.MinStars {
		return false
	}
	p, n := BandRank(prevBand), BandRank(newBand)
	if p < 0 || n < 0 {
		return false
	}
	return p-n >= w.PopularReview.MinBandDrop
}

// HoldUntil is the end of a review hold that starts at computedAt.
func HoldUntil(w *method.Weights, computedAt time.Time) time.Time {
	return computedAt.Add(time.Duration(w.PopularReview.HoldHours * float64(time.Hour)))
}

// coverage derives the visibility tier and the unobserved dimensions.
func coverage(in Input, r *Result) (string, []Unobserved) {
	un := []Unobserved{}
	outcome := in.Endpoint.Outcome
	switch outcome {
	case "", string(schema.OutcomeNotChecked), string(schema.OutcomeRateLimited):
		// A refusal for load counts neither way (SPEC §1.3): like a probe
		// that never ran, it is no counted check.
		outcome = ReasonNotChecked
	}
	var vis string
	switch {
	case !in.Endpoint.HasRemote:
		vis = VisNoEndpoint
		un = append(un, Unobserved{Dimension: "endpoint", Reason: ReasonNoEndpoint})
	case outcome == ReasonNotChecked:
		// Remotes exist but none has a counted check yet (SPEC §4): not
		// evidence that they are down.
		vis = VisNotChecked
		un = append(un, Unobserved{Dimension: "endpoint", Reason: ReasonNotChecked})
	case outcome == "ok":
		vis = VisLiveEndpoint
	case outcome == "auth_required":
		vis = VisOAuthGated
		un = append(un, Unobserved{Dimension: "endpoint", Reason: ReasonAuthRequired})
	default:
		// unreachable and handshake_failed: the last counted check failed.
		// SPEC §4 has no tier of its own for a server that answers but not
		// as MCP; the reason code keeps the two apart.
		vis = VisUnreachable
		un = append(un, Unobserved{Dimension: "endpoint", Reason: outcome})
	}
	for _, s := range []struct {
		name string
		s    SubScore
	}{{"provenance", r.Provenance}, {"static", r.Static}, {"drift", r.Drift}, {"incidents", r.Incidents}} {
		if s.s.Value == nil {
			un = append(un, Unobserved{Dimension: s.name, Reason: s.s.Reason})
		}
	}
	return vis, un
}

// decay is 0.5^(age/halfLife) with age clamped at 0.
func decay(ageDays, halfLife float64) float64 {
	if ageDays < 0 {
		ageDays = 0
	}
	return math.Pow(0.5, ageDays/halfLife)
}

func ageDays(now, t time.Time) float64 { return now.Sub(t).Hours() / 24 }

// round2 rounds half away from zero to 2 decimals, first snapping float noise
// (e.g. 32.49999999999 for an exact 32.5).
func round2(x float64) float64 {
	x = math.Round(x*1e9) / 1e9
	return math.Round(x*100) / 100
}

func ptr(f float64) *float64 { return &f }

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func sortEvidence(ev []Evidence) {
	slices.SortStableFunc(ev, func(a, b Evidence) int {
		if c := a.ObservedAt.Compare(b.ObservedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
