package trust

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/forum-mcp/forum/processors/method"
)

// Static coverage values (SPEC §1.4).
const (
	CoverageScanned      = "scanned"
	CoverageAuthRequired = "auth_required"
	CoverageUnreachable  = "unreachable"
	CoverageNoEndpoint   = "no_endpoint"
)

// StaticInput is the static scan result of one server.
type StaticInput struct {
	Coverage string // scanned|auth_required|unreachable|no_endpoint; "" = not scanned
	Findings []StaticFinding
}

// StaticFinding is one scanner finding (ingest/scan.Finding plus its stored id).
type StaticFinding struct {
	ID         string // evidence id of the stored finding
	ObservedAt time.Time
	Class      string // tool_poisoning|shadowing|hardcoded_secret|command_injection|suspicious_description|hygiene
	Severity   string // high|medium|low
	RuleID     string
	Tool       string
}

// static computes max(0, 85 − Σ weight(class) × impact(severity)), each
// (class, rule id) once at its highest severity (SPEC §4 Static).
func static(w *method.Weights, in StaticInput) SubScore {
	sub := SubScore{Signals: []Signal{}, Evidence: []Evidence{}}
	if in.Coverage != CoverageScanned {
		sub.Reason = in.Coverage
		if sub.Reason == "" {
			sub.Reason = ReasonNotScanned
		}
		return sub
	}
	type key struct{ class, rule string }
	type agg struct {
		sev      string
		impact   float64
		evidence []Evidence
		tools    map[string]bool
	}
	groups := map[key]*agg{}
	for _, f := range in.Findings {
		k := key{f.Class, f.RuleID}
		g := groups[k]
		if g == nil {
			g = &agg{impact: -1, tools: map[string]bool{}}
			groups[k] = g
		}
		imp, ok := w.Static.SeverityImpact[f.Severity]
		if !ok {
			imp = 0 // unknown severity: kept as evidence, scores nothing
		}
		if imp > g.impact {
			g.impact, g.sev = imp, f.Severity
		}
		g.evidence = append(g.evidence, Evidence{Kind: EvScanFinding, ID: f.ID, ObservedAt: f.ObservedAt})
		if f.Tool != "" {
			g.tools[f.Tool] = true
		}
	}
	keys := make([]key, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int { // map keys: unique, so the order is total
		if c := strings.Compare(a.class, b.class); c != 0 {
			return c
		}
		return strings.Compare(a.rule, b.rule)
	})
	total := 0.0
	for _, k := range keys {
		g := groups[k]
		cw, known := w.Static.ClassWeights[k.class]
		pen := cw * g.impact
		dir := method.Negative
		if g.sev == "high" && slices.Contains(w.Static.StrongNegativeClasses, k.class) {
			dir = method.StrongNegative
		}
		s := Signal{
			ID: k.class + "/" + k.rule, Direction: dir, Severity: g.sev, Open: true,
			Penalty:  round6(pen),
			Values:   map[string]float64{"class_weight": cw, "impact": g.impact, "findings": float64(len(g.evidence)), "tools": float64(len(g.tools))},
			Evidence: g.evidence,
		}
		if !known || g.impact <= 0 {
			s.Penalty, s.Open = 0, false
			s.Note = "unknown class or severity: kept as evidence, not scored"
		}
		sortEvidence(s.Evidence)
		sub.Signals = append(sub.Signals, s)
		sub.Evidence = append(sub.Evidence, s.Evidence...)
		total += s.Penalty
	}
	sortEvidence(sub.Evidence)
	sub.Value = ptr(round2(math.Max(0, w.Static.Baseline-total)))
	return sub
}
