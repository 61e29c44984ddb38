// Package scorer is the scoring processor: once per publication it computes,
// for every latest registry entry, the Toolfinder v0.3 result
// (processors/toolfinder), the FORUM trust result (processors/trust), the
// categories (processors/categories) and the static scan (ingest/scan), and
// assembles the published record of SPEC §5. Files: scorer.go (the pure
// record computation), load.go (the store's view as of the publication
// time), publish.go (seal: hashes, Merkle root, signature; store and commit;
// the signing key), stage.go (the bus stage: one publication per applied
// snapshot, plus an hourly timer), separation.go (SPEC §7's three-arm test)
// and gen.go (a synthetic population with planted known-bad servers for it).
//
// In: []ServerInput — each server's latest registry entry as of the
// publication time, the latest health check of each of its remotes as of
// that time, and its first listing date (Load reads them from the store) —
// plus the other processors' state through small consumer-side interfaces
// (DriftSource, IncidentSource, BurstSource, ProvenanceSource). A nil source
// means "not observed": the sub-score it feeds is null with a reason, never
// a guess. Out: one Record per server, sorted by name, ready to seal.
//
// Compute is pure and uses only event time (Meta.ComputedAt): the same
// inputs give byte-identical records, which is what makes a replay's
// publications reproducible and the golden file (testdata/records.golden.jsonl)
// meaningful. Compute asks the sources serially, then computes the records
// on GOMAXPROCS goroutines, each into its own slot; Seal writes each
// record's canonical JSON once (publish's canonical encoder) and seals in
// parallel too. testdata/generated.golden.txt pins a generated publication
// (root, signature, every sealed record) as it was before that work.
//
// Readings where the SPEC is silent (pinned by tests):
//   - A server with several remotes is scored on its best remote's latest
//     counted check (ok > auth_required > handshake_failed > unreachable;
//     ties: newest, then URL). Every remote's check is still evidence.
//   - A rate_limited or not_checked check counts neither for nor against
//     (SPEC §1.3, §3 Health): each remote's latest check is its latest
//     other one as of the publication time (Load), and a remote with none
//     is not checked — health 0 "not checked", static not_scanned,
//     visibility not-checked.
//   - Static coverage follows that check: ok → scanned (tools, instructions
//     and registry text); auth_required, unreachable, handshake_failed → null
//     with that reason; no check → not_scanned; no remote → no_endpoint.
//   - GitHub is not crawled yet (no ProvenanceSource in production): the
//     Toolfinder GitHub gate is closed (registry-date fallbacks for everyone)
//     and provenance is null with repo_unresolved (no repo URL) or
//     repo_not_observed. The record's "github" block says so.
//   - Deleted entries get no record; deprecated ones do.
package scorer

import (
	"encoding/json"
	"sort"
	"strings"
	"time"

	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/ingest/scan"
	"github.com/forum-mcp/forum/processors/categories"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/toolfinder"
	"github.com/forum-mcp/forum/processors/trust"
	"github.com/forum-mcp/forum/schema"
)

// DriftSource gives one server's drift history (the drift processor's state).
type DriftSource interface {
	DriftInput(server string) trust.DriftInput
}

// IncidentSource gives one server's curated incidents.
type IncidentSource interface {
	IncidentsInput(server string) trust.IncidentsInput
}

// BurstSource gives a namespace's owner-burst evidence; ok is false when the
// namespace is not flagged (the record then has no owner_burst field).
type BurstSource interface {
	OwnerBurst(namespace string, now time.Time) (trust.OwnerBurst, bool)
}

// ProvenanceSource gives GitHub observations (the GitHub crawler's state;
// not built yet, so production passes nil). GateOpen is SPEC §1.2's coverage
// gate at now: GitHub signals count in the Toolfinder score only while open.
type ProvenanceSource interface {
	GitHub(server, repoURL string) (GitHubObservation, bool)
	GateOpen(now time.Time) bool
}

// GitHubObservation is one repository observation, as far as both methods
// need it.
type GitHubObservation struct {
	Status             string // trust.RepoResolved, or trust.RepoUnresolved for a 404
	Evidence           *trust.Evidence
	RepoCreatedAt      time.Time
	OwnerCreatedAt     time.Time
	PushedAt           time.Time
	Stars              int
	Fork               bool
	Archived           bool
	Private            bool
	LicenseSPDX        string
	OwnerLogin         string
	SingleAuthor90d    bool
	NoCommits90d       bool
	CommitCapHit       bool
	VerifiedCommits90d bool
}

// ObservationOf is what the scorer reads of a GitHub observation (the
// provenance processor's signal carries it). Its evidence pointer is the
// observation's own id, which /v1/evidence resolves for as long as the
// observation is stored (not just the repo's newest one).
func ObservationOf(o schema.GitHubObservation) GitHubObservation {
	so := GitHubObservation{
		Status:   trust.RepoUnresolved,
		Evidence: &trust.Evidence{Kind: trust.EvGitHubRepo, ID: o.ID, ObservedAt: o.ObservedAt.UTC(), URI: schema.EvidenceURI(o.ID)},
	}
	if o.Status != schema.StatusResolved {
		return so
	}
	so.Status = trust.RepoResolved
	so.RepoCreatedAt, so.OwnerCreatedAt, so.PushedAt, so.Stars = o.CreatedAt, o.OwnerCreatedAt, o.PushedAt, o.Stars
	so.Fork, so.Archived, so.Private, so.LicenseSPDX, so.OwnerLogin = o.Fork, o.Archived, o.Private, o.LicenseSPDX, o.OwnerLogin
	if c := o.Commits; c != nil && !c.ObservedAt.IsZero() {
		so.SingleAuthor90d = c.Authors == 1
		so.NoCommits90d = c.Empty || c.Count == 0
		so.CommitCapHit = c.CapHit
		so.VerifiedCommits90d = c.Verified > 0
	}
	return so
}

// Sources bundles the optional state of the other processors.
type Sources struct {
	Drift      DriftSource
	Incidents  IncidentSource
	Burst      BurstSource
	Provenance ProvenanceSource
}

// ServerInput is what the store knows about one server at publication time.
type ServerInput struct {
	Entry schema.Entry
	// Checks are the latest check of each remote, as of the publication time.
	Checks []probe.Check
	// FirstListed is the earliest publishedAt over all stored versions (zero:
	// the latest entry's publishedAt is used).
	FirstListed time.Time
}

// Previous is what the last publication said about a server, for the
// popular-server review hold.
type Previous struct {
	Band          string
	PublicationID string
}

// Meta describes the publication being computed.
type Meta struct {
	PublicationID string
	ComputedAt    time.Time
	// Weights are the method the records are scored with (and stamped
	// with: method_version, weights_sha256); nil: the embedded method.
	Weights *method.Weights
}

// The published record is a wire type (schema/record.go): it is sealed
// here and travels on trust.records; these names keep the scorer's code
// short.
type (
	Record              = schema.Record
	ReviewPending       = schema.ReviewPending
	ToolfinderBlock     = schema.ToolfinderBlock
	GateState           = schema.ToolfinderGate
	GitHubState         = schema.GitHubState
	StaticScan          = schema.StaticScan
	ScannedFinding      = schema.ScannedFinding
	RegistryObservation = schema.RegistryObservation
)

// Reasons stated in records.
const (
	GateClosedNoCrawler = "github_not_crawled: GitHub enrichment is not running, so every server uses the registry-date fallbacks (maintenance half credit, adoption 0)"
	GateClosedCoverage  = "coverage_below_99pct_or_stale: every server uses the registry-date fallbacks"
	GateOpenReason      = "coverage >= 99% of resolvable repos observed within 48 h"
	GitHubNotCrawled    = "github_not_crawled"
	CoverageNotScanned  = "not_scanned"
)

// EvidenceURI is where the API resolves an evidence id (schema.EvidenceURI).
func EvidenceURI(id string) string { return schema.EvidenceURI(id) }

// ScanFindingID is the evidence id of a scan finding (schema.ScanFindingID).
func ScanFindingID(server, checkID string, f scan.Finding) string {
	return schema.ScanFindingID(server, checkID, f)
}

// ParseScanFindingID splits a scan-finding id into its server.
func ParseScanFindingID(id string) (server string, ok bool) { return schema.ParseScanFindingID(id) }

// Compute scores every listed (non-deleted) server. prev (may be nil) holds
// the previous publication's bands for the review hold.
func Compute(inputs []ServerInput, src Sources, meta Meta, prev map[string]Previous) []Record {
	now := meta.ComputedAt.UTC()
	w := meta.Weights
	if w == nil {
		w = method.Embedded().Weights
	}
	// Listed servers by name (stable): the order is sorted as indices, so
	// 50k inputs are not swapped around as whole structs.
	var keep []int
	for i := range inputs {
		if inputs[i].Entry.Status() == "deleted" || inputs[i].Entry.Server.Name == "" {
			continue
		}
		keep = append(keep, i)
	}
	sort.SliceStable(keep, func(a, b int) bool { return inputs[keep[a]].Entry.Server.Name < inputs[keep[b]].Entry.Server.Name })
	live := make([]*ServerInput, len(keep)) // pointers: no copy of 50k inputs
	for n, i := range keep {
		live[n] = &inputs[i]
	}

	entries := make([]schema.Entry, len(live))
	listings := make([]trust.Listing, 0, len(live))
	gh := make([]*GitHubObservation, len(live))
	for i := range live {
		e := live[i].Entry
		e.Meta.IsLatest = true // the latest view, whatever the flag said when first observed
		entries[i] = e
		repo := repoURL(&e)
		l := trust.Listing{Name: e.Server.Name, RepoURL: repo, PublishedAt: firstListed(live[i])}
		if src.Provenance != nil && repo != "" {
			if o, ok := src.Provenance.GitHub(e.Server.Name, repo); ok {
				gh[i] = &o
				if o.Status == trust.RepoResolved {
					l.RepoOwner = o.OwnerLogin
				}
			}
		}
		listings = append(listings, l)
	}
	// The two registry-wide passes read disjoint inputs: run them side by side.
	var facts map[string]trust.Facts
	factsDone := make(chan struct{})
	go func() {
		defer close(factsDone)
		facts = trust.RegistryFacts(w, listings)
	}()
	pop := toolfinder.NewPopulationFromEntries(entries)
	<-factsDone
	gateOpen := src.Provenance != nil && src.Provenance.GateOpen(now)

	// The sources are asked in order, on this goroutine (they are other
	// processors' state: no promise of concurrent use); the records are then
	// computed on GOMAXPROCS goroutines, each writing only its own slot, so
	// the output is the same for any number of them.
	ext := make([]external, len(live))
	for i := range live {
		name := live[i].Entry.Server.Name
		if src.Drift != nil {
			ext[i].drift = src.Drift.DriftInput(name)
		}
		if src.Incidents != nil {
			ext[i].incidents = src.Incidents.IncidentsInput(name)
		}
		if src.Burst != nil {
			if b, ok := src.Burst.OwnerBurst(schema.Namespace(name), now); ok && b.Flagged() {
				ext[i].burst = &b
			}
		}
	}
	out := make([]Record, len(live))
	_ = publish.ForEach(len(live), func(i int) error {
		out[i] = computeOne(w, live[i], gh[i], gateOpen, pop, facts[live[i].Entry.Server.Name], ext[i], src, meta, prev)
		return nil
	})
	return out
}

// external is what the other processors' state says about one server.
type external struct {
	drift     trust.DriftInput
	incidents trust.IncidentsInput
	burst     *trust.OwnerBurst // flagged bursts only
}

func repoURL(e *schema.Entry) string {
	if e.Server.Repository == nil {
		return ""
	}
	return strings.TrimSpace(e.Server.Repository.URL)
}

func firstListed(in *ServerInput) time.Time {
	if !in.FirstListed.IsZero() {
		return in.FirstListed.UTC()
	}
	return in.Entry.Meta.PublishedAt.UTC()
}

func checkEvidence(c *probe.Check) *trust.Evidence {
	if c == nil {
		return nil
	}
	return &trust.Evidence{Kind: trust.EvHealthCheck, ID: c.ID, ObservedAt: c.ObservedAt.UTC(), URI: EvidenceURI(c.ID)}
}

var outcomeRank = map[probe.Outcome]int{probe.OutcomeOK: 4, probe.OutcomeAuthRequired: 3, probe.OutcomeHandshakeFailed: 2, probe.OutcomeUnreachable: 1}

// Counted reports whether a check's outcome counts for or against a server:
// every outcome but rate_limited (refused for load, not the server's fault)
// and not_checked (the probe never ran) — SPEC §1.3 and §3 Health.
func Counted(o probe.Outcome) bool { return outcomeRank[o] > 0 }

// bestCheck picks the check a server is scored on (see the package doc);
// nil when no check counts.
func bestCheck(checks []probe.Check) *probe.Check {
	var best *probe.Check
	for i := range checks {
		c := &checks[i]
		if !Counted(c.Outcome) {
			continue
		}
		if best == nil {
			best = c
			continue
		}
		rc, rb := outcomeRank[c.Outcome], outcomeRank[best.Outcome]
		switch {
		case rc != rb:
			if rc > rb {
				best = c
			}
		case !c.ObservedAt.Equal(best.ObservedAt):
			if c.ObservedAt.After(best.ObservedAt) {
				best = c
			}
		case c.RemoteURL < best.RemoteURL:
			best = c
		}
	}
	return best
}

func computeOne(w *method.Weights, in *ServerInput, gh *GitHubObservation, gateOpen bool, pop *toolfinder.Population,
	facts trust.Facts, x external, src Sources, meta Meta, prev map[string]Previous) Record {
	now := meta.ComputedAt.UTC()
	d := &in.Entry.Server
	name := d.Name
	repo := repoURL(&in.Entry)
	check := bestCheck(in.Checks)
	checkEv := checkEvidence(check)

	drift := x.drift

	// Toolfinder.
	tin := toolfinder.Input{
		Name: name, Title: d.Title, Description: d.Description, RepoURL: repo,
		UpdatedAt: in.Entry.Meta.UpdatedAt.UTC(), GateOpen: gateOpen, Context: pop.Context(name),
		Registry: registryEvidence(drift, d.Version),
	}
	if len(d.Remotes) > 0 {
		tin.Remotes = make([]toolfinder.Remote, 0, len(d.Remotes))
	}
	for _, r := range d.Remotes {
		rr := toolfinder.Remote{Type: r.Type, URL: r.URL}
		if len(r.Headers) > 0 {
			rr.Headers = make([]toolfinder.Header, 0, len(r.Headers))
		}
		for _, h := range r.Headers {
			rr.Headers = append(rr.Headers, toolfinder.Header{Name: h.Name, IsRequired: h.IsRequired, IsSecret: h.IsSecret})
		}
		tin.Remotes = append(tin.Remotes, rr)
	}
	if len(d.Packages) > 0 {
		tin.Packages = make([]toolfinder.Package, 0, len(d.Packages))
	}
	for _, p := range d.Packages {
		pp := toolfinder.Package{RegistryType: p.RegistryType, Identifier: p.Identifier}
		if len(p.EnvironmentVariables) > 0 {
			pp.Env = make([]toolfinder.EnvVar, 0, len(p.EnvironmentVariables))
		}
		for _, e := range p.EnvironmentVariables {
			pp.Env = append(pp.Env, toolfinder.EnvVar{Name: e.Name, IsRequired: e.IsRequired, IsSecret: e.IsSecret})
		}
		tin.Packages = append(tin.Packages, pp)
	}
	if check != nil {
		h := toolfinder.Health{
			Outcome: string(check.Outcome), InitializeLatencyMS: int(check.InitializeLatencyMS + 0.5), HTTPStatus: check.HTTPStatus,
			ChallengeScheme: check.Auth.ChallengeScheme, ResourceMetadataURL: check.Auth.ResourceMetadataURL,
			ProtectedResource: check.Auth.ResourceMetadata != nil, ToolsListed: check.ToolsListed,
			Check: &toolfinder.Evidence{Kind: checkEv.Kind, ID: checkEv.ID, ObservedAt: checkEv.ObservedAt, URI: checkEv.URI},
		}
		if len(check.Tools) > 0 {
			h.Tools = make([]toolfinder.Tool, 0, len(check.Tools))
		}
		for _, t := range check.Tools {
			h.Tools = append(h.Tools, toolfinder.Tool{Name: t.Name, Description: t.Description, HasInputSchema: t.InputSchemaPresent})
		}
		tin.Health = h
	}
	if gh != nil && gh.Status == trust.RepoResolved {
		tin.GitHub = toolfinder.GitHub{Resolved: true, Stars: gh.Stars, PushedAt: gh.PushedAt, Archived: gh.Archived,
			LicenseSPDX: gh.LicenseSPDX, OwnerLogin: gh.OwnerLogin, Private: gh.Private, Observation: tfEvidence(gh.Evidence)}
	}
	tf := toolfinder.Score(tin, now)

	// Static scan.
	ss, sin := staticScan(in, check, checkEv)

	// Provenance.
	pin := trust.ProvenanceInput{RepoURL: repo, ListedAt: firstListed(in), Registry: facts}
	ghState := GitHubState{RepoURL: repo}
	switch {
	case repo == "":
		pin.RepoStatus = trust.RepoUnresolved
		ghState.Reason = trust.ReasonRepoUnresolved
	case gh == nil:
		pin.RepoStatus = trust.RepoNotObserved
		ghState.Reason = GitHubNotCrawled
		if src.Provenance != nil {
			ghState.Reason = trust.ReasonRepoNotObserved
		}
	default:
		ghState.Observed = true
		pin.RepoStatus = gh.Status
		if pin.RepoStatus == "" {
			pin.RepoStatus = trust.RepoResolved
		}
		pin.Observation = gh.Evidence
		pin.RepoCreatedAt, pin.OwnerCreatedAt = gh.RepoCreatedAt, gh.OwnerCreatedAt
		pin.Fork, pin.Archived, pin.LicenseSPDX = gh.Fork, gh.Archived, gh.LicenseSPDX
		pin.SingleAuthor90d, pin.NoCommits90d, pin.CommitCapHit = gh.SingleAuthor90d, gh.NoCommits90d, gh.CommitCapHit
		pin.VerifiedCommits90d, pin.Stars = gh.VerifiedCommits90d, gh.Stars
		if gh.Status == trust.RepoUnresolved {
			ghState.Reason = trust.ReasonRepoUnresolved
		}
	}

	incidents := x.incidents
	endpoint := trust.EndpointInput{HasRemote: len(d.Remotes) > 0, Check: checkEv}
	if check != nil {
		endpoint.Outcome = string(check.Outcome)
	}
	tr := trust.ComputeWith(w, trust.Input{Server: name, Provenance: pin, Static: sin, Drift: drift, Incidents: incidents, Endpoint: endpoint}, now)

	gate := GateState{Open: gateOpen, Reason: GateOpenReason}
	if !gateOpen {
		gate.Reason = GateClosedCoverage
		if src.Provenance == nil {
			gate.Reason = GateClosedNoCrawler
		}
	}

	catIn := categories.Input{Name: name, Title: d.Title, Description: d.Description}
	if check != nil && len(check.Tools) > 0 {
		catIn.Tools = make([]categories.Tool, 0, len(check.Tools))
		for _, t := range check.Tools {
			catIn.Tools = append(catIn.Tools, categories.Tool{Name: t.Name, Description: t.Description})
		}
	}

	rec := Record{
		Server: name, Version: d.Version, Namespace: tr.Namespace, Status: in.Entry.Status(),
		MethodVersion: tr.MethodVersion, WeightsSHA256: tr.WeightsSHA256,
		ComputedAt: now, PublicationID: meta.PublicationID,
		Score: tr.Score, Band: tr.Band, BandReason: tr.BandReason,
		Provenance: tr.Provenance, Static: tr.Static, Drift: tr.Drift, Incidents: tr.Incidents,
		OpenSignals: tr.OpenSignals, Visibility: tr.Visibility, Unobserved: tr.Unobserved,
		DriftObservedSince: tr.DriftObservedSince,
		Toolfinder: ToolfinderBlock{Version: tf.Version, Score: tf.Score, RawSum: tf.RawSum, Rounded: tf.Rounded,
			Components: tf.Components, Flags: tf.Flags, Penalties: tf.Penalties, GitHubGate: gate},
		Categories: categories.Classify(catIn),
		StaticScan: ss,
		GitHub:     ghState,
		Health:     make([]trust.Evidence, 0, len(in.Checks)),
		Registry:   RegistryObservation{ContentSHA256: in.Entry.ContentSHA256, UpdatedAt: optTime(in.Entry.Meta.UpdatedAt), FirstListed: optTime(firstListed(in))},
	}
	for i := range in.Checks {
		c := &in.Checks[i]
		if !Counted(c.Outcome) {
			continue // neither for nor against: not what the server is scored on
		}
		rec.Health = append(rec.Health, trust.Evidence{Kind: trust.EvHealthCheck, ID: c.ID, ObservedAt: c.ObservedAt.UTC(), URI: EvidenceURI(c.ID)})
	}
	rec.OwnerBurst = x.burst // asked with schema.Namespace(name), which is tr.Namespace
	stars := 0
	if gh != nil {
		stars = gh.Stars
	}
	if p, ok := prev[name]; ok && trust.ReviewHold(w, p.Band, rec.Band, stars) {
		rec.ReviewPending = &ReviewPending{PreviousBand: p.Band, PreviousPublicationID: p.PublicationID, Stars: stars, Until: trust.HoldUntil(w, now).UTC()}
	}
	fillURIs(&rec)
	return rec
}

func optTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

func tfEvidence(e *trust.Evidence) *toolfinder.Evidence {
	if e == nil {
		return nil
	}
	return &toolfinder.Evidence{Kind: e.Kind, ID: e.ID, ObservedAt: e.ObservedAt, URI: e.URI}
}

// registryEvidence points at the drift event that introduced the scored
// version (new_server or version_added), when the drift state has it.
func registryEvidence(d trust.DriftInput, version string) *toolfinder.Evidence {
	var best *schema.DriftEvent
	for i := range d.Events {
		e := &d.Events[i]
		if (e.Kind == schema.KindNewServer || e.Kind == schema.KindVersionAdded) && e.Version == version {
			if best == nil || e.ObservedAt.Before(best.ObservedAt) {
				best = e
			}
		}
	}
	if best == nil {
		return nil
	}
	return &toolfinder.Evidence{Kind: trust.EvRegistryEvent, ID: best.ID, ObservedAt: best.ObservedAt.UTC(), URI: EvidenceURI(best.ID)}
}

// staticScan runs the built-in scanner when the check allows it.
func staticScan(in *ServerInput, check *probe.Check, checkEv *trust.Evidence) (StaticScan, trust.StaticInput) {
	d := &in.Entry.Server
	ss := StaticScan{Findings: []ScannedFinding{}, Check: checkEv}
	switch {
	case len(d.Remotes) == 0:
		ss.Coverage = trust.CoverageNoEndpoint
	case check == nil:
		ss.Coverage = CoverageNotScanned
	case check.Outcome == probe.OutcomeOK:
		ss.Coverage = trust.CoverageScanned
	default:
		ss.Coverage = string(check.Outcome) // auth_required | unreachable | handshake_failed | not_checked
	}
	if ss.Coverage != trust.CoverageScanned {
		cov := ss.Coverage
		if cov == CoverageNotScanned {
			cov = ""
		}
		return ss, trust.StaticInput{Coverage: cov}
	}
	target := scanTarget(in, check)
	sin := trust.StaticInput{Coverage: trust.CoverageScanned}
	found := scan.Scan(target)
	if len(found) > 0 {
		ss.Findings = make([]ScannedFinding, 0, len(found))
		sin.Findings = make([]trust.StaticFinding, 0, len(found))
	}
	for _, f := range found {
		id := ScanFindingID(d.Name, check.ID, f)
		ss.Findings = append(ss.Findings, ScannedFinding{ID: id, ScanFinding: f})
		sin.Findings = append(sin.Findings, trust.StaticFinding{ID: id, ObservedAt: check.ObservedAt.UTC(), Class: f.Class, Severity: f.Severity, RuleID: f.RuleID, Tool: f.Tool})
	}
	return ss, sin
}

// ScanTarget is what Compute hands the static scanner for one server, and
// false when the server is not scanned (no remote, no check, or a check
// that did not succeed). The benchmark uses it to time the scanner alone.
func ScanTarget(in ServerInput) (scan.Target, bool) {
	check := bestCheck(in.Checks)
	if len(in.Entry.Server.Remotes) == 0 || check == nil || check.Outcome != probe.OutcomeOK {
		return scan.Target{}, false
	}
	return scanTarget(&in, check), true
}

func scanTarget(in *ServerInput, check *probe.Check) scan.Target {
	d := &in.Entry.Server
	target := scan.Target{Name: d.Name, Title: d.Title, Description: d.Description, ToolsListed: check.ToolsListed}
	for _, p := range d.Packages {
		for _, e := range p.EnvironmentVariables {
			target.Extra = append(target.Extra, kvTexts("registry.env."+e.Name, e)...)
		}
		if p.Transport != nil {
			for _, h := range p.Transport.Headers {
				target.Extra = append(target.Extra, kvTexts("registry.header."+h.Name, h)...)
			}
		}
	}
	for _, r := range d.Remotes {
		for _, h := range r.Headers {
			target.Extra = append(target.Extra, kvTexts("registry.header."+h.Name, h)...)
		}
	}
	if check.Instructions != "" {
		target.Extra = append(target.Extra, scan.Text{Field: "server.instructions", Value: check.Instructions})
	}
	if len(check.Tools) > 0 {
		target.Tools = make([]scan.Tool, 0, len(check.Tools))
	}
	for _, t := range check.Tools {
		var schemaRaw json.RawMessage
		if t.InputSchemaPresent && len(t.InputSchema) > 0 {
			schemaRaw = t.InputSchema
		} else if t.InputSchemaPresent {
			schemaRaw = json.RawMessage(`{}`) // present but over the size cap: not missing
		}
		target.Tools = append(target.Tools, scan.Tool{Name: t.Name, Description: t.Description, InputSchema: schemaRaw})
	}
	return target
}

func kvTexts(field string, kv schema.KeyValue) []scan.Text {
	var out []scan.Text
	for _, x := range []struct{ suffix, v string }{{".default", kv.Default}, {".value", kv.Value}, {".description", kv.Description}} {
		if x.v != "" {
			out = append(out, scan.Text{Field: field + x.suffix, Value: x.v})
		}
	}
	return out
}

// fillURIs gives every evidence pointer that has none the API address that
// resolves it.
func fillURIs(r *Record) {
	fix := func(ev []trust.Evidence) {
		for i := range ev {
			if ev[i].URI == "" {
				ev[i].URI = EvidenceURI(ev[i].ID)
			}
		}
	}
	for _, s := range []*trust.SubScore{&r.Provenance, &r.Static, &r.Drift, &r.Incidents} {
		fix(s.Evidence)
		for i := range s.Signals {
			fix(s.Signals[i].Evidence)
		}
	}
	for i := range r.Toolfinder.Components {
		for j := range r.Toolfinder.Components[i].Findings {
			evs := r.Toolfinder.Components[i].Findings[j].Evidence
			for k := range evs {
				if evs[k].URI == "" {
					evs[k].URI = EvidenceURI(evs[k].ID)
				}
			}
		}
	}
}
