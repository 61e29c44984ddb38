package trust

import (
	"math"
	"slices"
	"strings"
	"time"

	"github.com/forum-mcp/forum/processors/method"
)

// Incident statuses and severities (SPEC §1.5).
const (
	IncidentConfirmed = "confirmed"
	IncidentSuspected = "suspected"
	IncidentRetracted = "retracted"
)

// Incident is one curated incident record (SPEC §1.5).
type Incident struct {
	ID        string
	Server    string
	Date      time.Time
	Class     string // rug_pull|malicious_update|credential_theft|data_exfiltration|vulnerability|takedown|other
	Severity  string // critical|high|medium|low
	Status    string // confirmed|suspected|retracted
	SourceURI string
}

// IncidentsInput is the curated incident feed's view of one server.
// Checked=false means the feed was not available: the sub-score is unknown.
// Checked with no Items is the common case: 100.
type IncidentsInput struct {
	Checked bool
	Items   []Incident
}

// incidents computes max(0, 100 − Σ sev × 1.5^(k−1) × status × 0.5^(age/180))
// (SPEC §4 Incidents). k is the incident's rank among the server's counted
// (confirmed or suspected) incidents within the recurrence window ending at
// it: the first is 1, a second within 365 d is 2, and so on. Incidents dated
// after now are ignored (event time). Returns the confirmed incident that
// forces band F, if any.
func incidents(w *method.Weights, in IncidentsInput, now time.Time) (SubScore, *Signal) {
	sub := SubScore{Signals: []Signal{}, Evidence: []Evidence{}}
	if !in.Checked {
		sub.Reason = ReasonIncidentsNotChk
		return sub, nil
	}
	items := make([]Incident, 0, len(in.Items))
	for _, it := range in.Items {
		if it.Date.After(now) {
			continue
		}
		items = append(items, it)
	}
	slices.SortStableFunc(items, func(a, b Incident) int {
		if c := a.Date.Compare(b.Date); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	wi := w.Incidents
	window := time.Duration(wi.RecurrenceWindowDays * 24 * float64(time.Hour))
	var counted []Incident
	var fSig *Signal
	total := 0.0
	for _, it := range items {
		// The pointer's uri is where it resolves through the API (the
		// publisher fills it in); the outside source is in the note and in
		// what the pointer resolves to.
		ev := Evidence{Kind: EvIncident, ID: it.ID, ObservedAt: it.Date.UTC()}
		sub.Evidence = append(sub.Evidence, ev)
		status := it.Status
		factor, ok := wi.StatusFactors[status]
		if !ok {
			factor = 0
		}
		sev := wi.SeverityWeights[it.Severity]
		age := math.Max(0, ageDays(now, it.Date))
		d := decay(age, wi.HalfLifeDays)
		s := Signal{
			ID: it.ID, Direction: method.Negative, Severity: it.Severity,
			Values:   map[string]float64{"severity_weight": sev, "status_factor": factor, "age_days": round6(age), "decay": round6(d)},
			Evidence: []Evidence{ev},
			Note:     it.Class + " (" + status + ")" + sourceNote(it.SourceURI),
		}
		if factor == 0 || sev == 0 {
			// Retracted (or unknown status/severity): counts 0, stays in the evidence.
			sub.Signals = append(sub.Signals, s)
			continue
		}
		k := 1
		for _, c := range counted {
			if it.Date.Sub(c.Date) <= window {
				k++
			}
		}
		counted = append(counted, it)
		esc := math.Pow(wi.RecurrenceBase, float64(k-1))
		s.Values["k"] = float64(k)
		s.Values["escalation"] = round6(esc)
		s.Penalty = round6(sev * esc * factor * d)
		open := d >= wi.FBandMinFraction
		switch {
		case status == IncidentConfirmed && open:
			s.Open = true
			s.Direction = method.StrongNegative
			s.Severity = SeverityHigh
		case status == IncidentSuspected && open && (it.Severity == "critical" || it.Severity == "high"):
			s.Open = true
			s.Severity = SeverityHigh
		}
		total += s.Penalty
		sub.Signals = append(sub.Signals, s)
		if status == IncidentConfirmed && open && fSig == nil {
			c := s
			fSig = &c
		}
	}
	sub.Value = ptr(round2(math.Max(0, wi.Baseline-total)))
	return sub, fSig
}

// IncidentsScore is the incidents sub-score of one server at now (SPEC §4
// Incidents), for the processor that publishes it beside its state.
func IncidentsScore(w *method.Weights, in IncidentsInput, now time.Time) SubScore {
	s, _ := incidents(w, in, now)
	return s
}

func sourceNote(uri string) string {
	if uri == "" {
		return ""
	}
	return ", source " + uri
}
