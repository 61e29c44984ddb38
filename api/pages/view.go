package pages

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/store"
)

// The view models: plain values the templates print. Every string that
// came from a stranger stays a string (the template escapes it).

type errorView struct {
	Title   string
	API     string
	Status  int
	Message string
}

type homeView struct {
	Title         string
	API           string
	Categories    []string
	Category      string
	PublicationID string
	Servers       int
	Rows          []listRow
}

type searchView struct {
	Title         string
	API           string
	Query         string
	Terms         []string
	PublicationID string
	Total         int
	Results       []listRow
	Sponsored     []listRow
}

// listRow is one server in a listing (leaderboard, search results).
type listRow struct {
	Rank        int
	Name        string
	Link        string
	Title       string
	Description string
	Score       int
	Band        string
	Why         string
	Flags       []string
	Categories  []string
	Hold        *search.SafetyHold
	SearchRank  float64 // 0 on the leaderboard
	Multiplier  float64
	Sponsored   bool
}

func rowOf(rank int, d search.Doc, searchRank float64) listRow {
	return listRow{Rank: rank, Name: d.Name, Link: ServerPath(d.Name), Title: d.Title, Description: d.Description, Score: d.Score, Band: d.Band,
		Why: whyOf(d), Flags: d.Flags, Categories: d.Categories, Hold: d.Hold, SearchRank: searchRank}
}

// componentLabel names a Toolfinder component for people.
var componentLabel = map[string]string{
	"health": "health", "auth_ease": "auth ease", "tool_quality": "tool quality", "maintenance": "maintenance",
	"adoption": "adoption", "usage": "usage", "security": "security",
}

func label(c string) string {
	if l, ok := componentLabel[c]; ok {
		return l
	}
	return strings.ReplaceAll(c, "_", " ")
}

// whyOf is a listing's one line on why a server has its score: the two
// components that gave it the most points, and the one where it lost the
// most, with the finding that says why. Usage is 0 for everyone (a
// placeholder of the method) and is not a reason.
func whyOf(d search.Doc) string {
	var strong []search.Part
	var weak *search.Part
	for i, c := range d.Parts {
		if c.Max <= 0 || c.Name == "usage" {
			continue
		}
		if c.Score > 0 {
			strong = append(strong, c)
		}
		if lost := c.Max - c.Score; lost > 0 && (weak == nil || lost > weak.Max-weak.Score) {
			weak = &d.Parts[i]
		}
	}
	sort.SliceStable(strong, func(i, j int) bool { return strong[i].Score > strong[j].Score })
	var parts []string
	for i, c := range strong {
		if i == 2 {
			break
		}
		parts = append(parts, fmt.Sprintf("%s %s/%s", label(c.Name), num(c.Score), num(c.Max)))
	}
	s := strings.Join(parts, " · ")
	if weak != nil {
		if s != "" {
			s += "; "
		}
		s += fmt.Sprintf("lost most on %s (%s/%s", label(weak.Name), num(weak.Score), num(weak.Max))
		if weak.Note != "" {
			s += ": " + weak.Note
		}
		s += ")"
	}
	if len(d.Flags) > 0 {
		s += "; flagged: " + strings.Join(d.Flags, ", ")
	}
	return s
}

// num prints a number with at most two decimals and no trailing zeros
// (25, 12.5, 0.35).
func num(f float64) string {
	s := strconv.FormatFloat(f, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		return "0"
	}
	return s
}

type registryView struct {
	Title, Description, Version, Status string
	PublishedAt, UpdatedAt              time.Time
}

type serverView struct {
	Name, Title, API                                                  string
	TrustAPI, ProofAPI, ServerAPI, HealthAPI, EventsAPI, IncidentsAPI string
	Registry                                                          *registryView
	Record                                                            *recordView
	Health                                                            healthView
	Timeline                                                          []eventView
	EventCount                                                        int
	Incidents                                                         []incidentView
}

type recordView struct {
	PublicationID, MethodVersion, WeightsSHA256, ContentSHA256 string
	ComputedAt                                                 time.Time
	Score                                                      *float64
	Band, BandReason, Visibility                               string
	VisibilityNote                                             string
	SubScores                                                  []subScoreView
	OpenSignals                                                []openSignalView
	Unobserved                                                 []schema.Unobserved
	Toolfinder                                                 toolfinderView
	Categories                                                 []string
	Primary                                                    string
	Hold                                                       *search.SafetyHold
	Review                                                     *schema.ReviewPending
	OwnerBurst                                                 *schema.OwnerBurst
	StaticCoverage                                             string
	Findings                                                   []schema.ScannedFinding
	DriftObservedSince                                         *time.Time
}

type subScoreView struct {
	Name     string
	Weight   float64
	Value    *float64
	Reason   string
	Note     string // what the reason means
	Signals  []schema.Signal
	Evidence []schema.Evidence
}

type openSignalView struct {
	SubScore, ID, Kind string
	Evidence           []schema.Evidence
}

type toolfinderView struct {
	Version    string
	Score      int
	RawSum     float64
	Rounded    int
	Components []componentView
	Penalties  []penaltyView
	Flags      []string
	GateOpen   bool
	GateReason string
}

type componentView struct {
	Name     string
	Label    string
	Score    float64
	Max      float64
	Pct      float64 // 0..100, for the bar
	Findings []schema.ToolfinderFinding
}

type penaltyView struct {
	Flag   string
	Points int
	Reason string // the record's
	Rule   string // the method's rule (SPEC §3)
}

// reasonNote explains an unknown sub-score's reason code.
var reasonNote = map[string]string{
	"repo_unresolved":   "no resolvable source repository, or the GitHub crawl has not observed it",
	"not_scanned":       "the server's tools were never captured by a probe, so nothing could be scanned",
	"no_endpoint":       "the server lists no remote endpoint to probe (code distribution only)",
	"auth_required":     "the endpoint requires credentials, so its tool list could not be read",
	"unreachable":       "the endpoint could not be reached, so its tool list could not be read",
	"handshake_failed":  "the endpoint answered but not with a valid MCP handshake",
	"not_observed":      "not observed yet",
	"repo_not_observed": "the repository is listed but the GitHub crawl has not observed it yet",
}

// visibilityNote explains a visibility tier (SPEC §4 coverage honesty).
var visibilityNote = map[string]string{
	"live-endpoint": "its endpoint answered the MCP handshake",
	"oauth-gated":   "its endpoint requires OAuth; the handshake stopped at the challenge",
	"no-endpoint":   "code distribution only: there is no remote to check",
	"unreachable":   "its last counted check could not connect",
	"not-checked":   "it has remotes, none with a counted check yet",
}

// penaltyRule is each Toolfinder flag's rule (SPEC §3 table).
var penaltyRule = map[string]string{
	"placeholder":        "empty/whitespace description, or a template one (\"Description of my MCP server\", …)",
	"retired":            "description starts with retired, deprecated, \"moved to\", or \"use X instead\"",
	"test_or_demo":       "a name segment is test, demo, example, sample, hello-world, playground, tmp, foo or my-mcp",
	"cloned_description": "the same normalized description on ≥ 5 servers of one namespace",
	"shared_endpoint":    "≥ 3 latest registry entries point at the same normalized remote URL",
	"bulk_publisher":     "the namespace has > 100 servers",
}

// penaltyRules and componentRules are the method page's tables.
var penaltyRules = []penaltyView{
	{Flag: "placeholder", Points: 20, Rule: penaltyRule["placeholder"]},
	{Flag: "retired", Points: 25, Rule: penaltyRule["retired"]},
	{Flag: "test_or_demo", Points: 15, Rule: penaltyRule["test_or_demo"]},
	{Flag: "cloned_description", Points: 10, Rule: penaltyRule["cloned_description"]},
	{Flag: "shared_endpoint", Points: 10, Rule: penaltyRule["shared_endpoint"]},
	{Flag: "bulk_publisher", Points: 5, Rule: penaltyRule["bulk_publisher"]},
}

type componentRule struct {
	Name string
	Max  int
	Rule string
}

var componentRules = []componentRule{
	{"health", 25, "from the last counted check: ok max(17, 25 − floor(max(0, L − 250)/250)), auth_required 18, handshake_failed 5, unreachable or not checked 0"},
	{"auth ease", 15, "no auth 15, OAuth 12, static key 6, unknown 4; local-only 9 (5 with a required secret)"},
	{"tool quality", 15, "4 + 5·described + 3·with schema + 3 (≤ 40 tools) or 1.5 (≤ 80); auth_required 7.5; no tool list 0"},
	{"maintenance", 15, "GitHub push age (gate open) 15/12/8/4/1, archived 0; else registry updatedAt 7/5/3/1"},
	{"adoption", 10, "min(10, 10·log10(stars+1)/4), stars once per repo; 0 while the GitHub gate is closed"},
	{"usage", 10, "0 for everyone (placeholder)"},
	{"security", 10, "+3 HTTPS remotes (+1 local-only), +3 public repo, +2 OSI licence, +2 OAuth/no-credential or local"},
}

func recordViewOf(r schema.Record, weights map[string]float64) *recordView {
	v := &recordView{PublicationID: r.PublicationID, MethodVersion: r.MethodVersion, WeightsSHA256: r.WeightsSHA256, ContentSHA256: r.ContentSHA256,
		ComputedAt: r.ComputedAt.UTC(), Score: r.Score, Band: r.Band, BandReason: r.BandReason, Visibility: r.Visibility,
		VisibilityNote: visibilityNote[r.Visibility], Unobserved: r.Unobserved, Categories: r.Categories.Categories, Primary: r.Categories.Primary,
		Hold: search.SafetyHoldOf(r), Review: r.ReviewPending, OwnerBurst: r.OwnerBurst, StaticCoverage: r.StaticScan.Coverage,
		Findings: r.StaticScan.Findings, DriftObservedSince: r.DriftObservedSince}
	for _, s := range []struct {
		name string
		sub  schema.SubScore
	}{{"provenance", r.Provenance}, {"static", r.Static}, {"drift", r.Drift}, {"incidents", r.Incidents}} {
		sv := subScoreView{Name: s.name, Weight: weights[s.name], Value: s.sub.Value, Reason: s.sub.Reason, Signals: s.sub.Signals, Evidence: s.sub.Evidence}
		if s.sub.Value == nil {
			sv.Note = reasonNote[s.sub.Reason]
		}
		v.SubScores = append(v.SubScores, sv)
	}
	// Each open signal with the evidence of the sub-score signal it names
	// (as the safety hold lists them).
	subs := map[string]schema.SubScore{"provenance": r.Provenance, "static": r.Static, "drift": r.Drift, "incidents": r.Incidents}
	for _, o := range r.OpenSignals {
		ov := openSignalView{SubScore: o.SubScore, ID: o.ID, Kind: o.Kind}
		for _, sg := range subs[o.SubScore].Signals {
			if sg.ID == o.ID {
				ov.Evidence = sg.Evidence
				break
			}
		}
		v.OpenSignals = append(v.OpenSignals, ov)
	}
	tf := r.Toolfinder
	v.Toolfinder = toolfinderView{Version: tf.Version, Score: tf.Score, RawSum: tf.RawSum, Rounded: tf.Rounded, Flags: tf.Flags,
		GateOpen: tf.GitHubGate.Open, GateReason: tf.GitHubGate.Reason}
	for _, c := range tf.Components {
		pct := 0.0
		if c.Max > 0 {
			pct = math.Max(0, math.Min(100, 100*c.Score/c.Max))
		}
		v.Toolfinder.Components = append(v.Toolfinder.Components, componentView{Name: c.Name, Label: label(c.Name), Score: c.Score, Max: c.Max, Pct: pct, Findings: c.Findings})
	}
	for _, p := range tf.Penalties {
		v.Toolfinder.Penalties = append(v.Toolfinder.Penalties, penaltyView{Flag: p.Flag, Points: p.Points, Reason: p.Reason, Rule: penaltyRule[p.Flag]})
	}
	return v
}

type eventView struct {
	Kind, Version, Before, After string
	ObservedAt                   time.Time
	VersionBump                  bool
	Evidence                     string
}

// maxEventText bounds what a timeline row shows of a before/after value
// (descriptions are ≤ 100 chars in the registry, but endpoints lists are not).
const maxEventText = 300

func clip(s string) string {
	if len(s) <= maxEventText {
		return s
	}
	cut := maxEventText
	for cut > 0 && (s[cut]&0xC0) == 0x80 { // do not split a UTF-8 sequence
		cut--
	}
	return s[:cut] + "…"
}

func eventViewOf(e schema.DriftEvent) eventView {
	return eventView{Kind: e.Kind, Version: e.Version, Before: clip(e.Before), After: clip(e.After), ObservedAt: e.ObservedAt.UTC(),
		VersionBump: e.VersionBump, Evidence: schema.EvidenceURI(e.ID)}
}

type incidentView struct {
	ID, Class, Severity, Status, SourceURI, Curator, Note, Evidence string
	Date                                                            time.Time
}

// healthView is the 30-day strip and the latency sparkline, drawn by the
// template from these numbers.
type healthView struct {
	From, To   time.Time
	Days       []dayCell
	Checks     int
	Up         int
	Uptime     string // "" when no attempted check
	Latency    []point
	Polyline   string // SVG points of the sparkline
	MinMS      float64
	MaxMS      float64
	MedianMS   float64
	LastStatus string
}

type dayCell struct {
	X      int
	Day    string
	Class  string // up | partial | down | none
	Checks int
	Up     int
}

type point struct {
	X, Y float64
}

// Sparkline geometry (the SVG's viewBox).
const (
	sparkW = 300.0
	sparkH = 40.0
	cellW  = 10
)

// healthViewOf buckets checks into the HealthDays UTC days ending at end.
// not_checked and rate_limited say nothing about the server (SPEC §1.3)
// and are left out, as in uptime_30d.sql; auth_required counts as up.
func healthViewOf(checks []store.HealthCheck, end time.Time) healthView {
	for _, c := range checks {
		if c.ObservedAt.After(end) {
			end = c.ObservedAt
		}
	}
	endDay := end.UTC().Truncate(24 * time.Hour)
	first := endDay.Add(-(HealthDays - 1) * 24 * time.Hour)
	h := healthView{From: first, To: end.UTC()}
	for i := 0; i < HealthDays; i++ {
		h.Days = append(h.Days, dayCell{X: i * cellW, Day: first.Add(time.Duration(i) * 24 * time.Hour).Format("2006-01-02"), Class: "none"})
	}
	sorted := append([]store.HealthCheck(nil), checks...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].ObservedAt.Before(sorted[j].ObservedAt) })
	var lat []float64
	var times []time.Time
	for _, c := range sorted {
		if c.Outcome == "not_checked" || c.Outcome == "rate_limited" || c.ObservedAt.Before(first) {
			continue
		}
		i := int(c.ObservedAt.UTC().Sub(first) / (24 * time.Hour))
		if i < 0 || i >= HealthDays {
			continue
		}
		d := &h.Days[i]
		d.Checks++
		h.Checks++
		if c.Outcome == "ok" || c.Outcome == "auth_required" {
			d.Up++
			h.Up++
		}
		h.LastStatus = c.Outcome
		if c.LatencyMS > 0 {
			lat = append(lat, c.LatencyMS)
			times = append(times, c.ObservedAt)
		}
	}
	for i := range h.Days {
		d := &h.Days[i]
		switch {
		case d.Checks == 0:
		case d.Up == d.Checks:
			d.Class = "up"
		case d.Up == 0:
			d.Class = "down"
		default:
			d.Class = "partial"
		}
	}
	if h.Checks > 0 {
		h.Uptime = fmt.Sprintf("%.1f %%", 100*float64(h.Up)/float64(h.Checks))
	}
	if len(lat) > 0 {
		s := append([]float64(nil), lat...)
		sort.Float64s(s)
		h.MinMS, h.MaxMS, h.MedianMS = s[0], s[len(s)-1], s[len(s)/2]
		span := float64(h.To.Sub(first))
		rng := h.MaxMS - h.MinMS
		var pts []string
		for i, l := range lat {
			x := sparkW * float64(times[i].Sub(first)) / span
			y := sparkH / 2
			if rng > 0 {
				y = sparkH - 2 - (sparkH-4)*(l-h.MinMS)/rng
			}
			h.Latency = append(h.Latency, point{X: x, Y: y})
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, y))
		}
		h.Polyline = strings.Join(pts, " ")
	}
	return h
}

type methodView struct {
	Title, API                                string
	MethodVersion, WeightsFile, WeightsSHA256 string
	ToolfinderVersion                         string
	Aggregation                               []weightRow
	Components                                []componentRule
	Penalties                                 []penaltyView
	Changelog                                 []method.ChangeRow
	WeightsJSON                               string
	Rates                                     []rateRow
	RatesAsOf                                 time.Time
	Gate                                      *gateView
}

type weightRow struct {
	Name   string
	Weight float64
}

type rateRow struct {
	Flag                  string
	Count, N              int
	Live, Pinned, DeltaPP *float64
	Scored                bool
	Direction             string
}

type gateView struct {
	AsOf              time.Time
	Open              bool
	CoveragePct       float64
	Resolvable, Fresh int
}
