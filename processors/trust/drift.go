package trust

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

//go:embed suspect_domains.json
var suspectDomainsJSON []byte

// SuspectDomain is a free-DDNS/tunnel/worker domain and why it is suspect.
type SuspectDomain struct {
	Domain string `json:"domain"`
	Reason string `json:"reason"`
}

var suspectDomains = sync.OnceValue(func() []SuspectDomain {
	var f struct {
		Domains []SuspectDomain `json:"domains"`
	}
	if err := json.Unmarshal(suspectDomainsJSON, &f); err != nil {
		panic(fmt.Sprintf("trust: suspect_domains.json: %v", err))
	}
	return f.Domains
})

// SuspectDomains returns the embedded suspect-destination list.
func SuspectDomains() []SuspectDomain { return append([]SuspectDomain(nil), suspectDomains()...) }

// SuspectHost returns the matching suspect domain for a host name, if any.
func SuspectHost(host string) (SuspectDomain, bool) {
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	for _, d := range suspectDomains() {
		if h == d.Domain || strings.HasSuffix(h, "."+d.Domain) {
			return d, true
		}
	}
	return SuspectDomain{}, false
}

var urlRe = regexp.MustCompile(`(?i)\b(?:https?|wss?)://[^\s"'\],}<>]+`)

// endpointHosts extracts the host names of the URLs in an endpoint set as the
// differ writes it (JSON pairs of type and URL) or any text holding URLs.
func endpointHosts(s string) map[string]bool {
	out := map[string]bool{}
	for _, m := range urlRe.FindAllString(s, -1) {
		// {placeholders} in real URLs do not parse; cut at the first one.
		if i := strings.IndexAny(m, "{"); i >= 0 {
			m = m[:i]
		}
		u, err := url.Parse(m)
		if err != nil || u.Hostname() == "" {
			continue
		}
		out[strings.ToLower(u.Hostname())] = true
	}
	return out
}

// DriftInput is one server's drift history.
type DriftInput struct {
	// ObservedSince is the first snapshot that held the server; zero means
	// the server was never observed and drift is unknown.
	ObservedSince time.Time
	Events        []schema.DriftEvent
	// BulkEdits are the server's namespace's bulk edits (from BulkEdits):
	// a pattern flag in the evidence, weight 0.
	BulkEdits []BulkEdit
}

// drift computes max(0, 100 − Σ w·0.5^(age/30)) (SPEC §4 Drift).
func drift(w *method.Weights, in DriftInput, now time.Time) SubScore {
	sub := SubScore{Signals: []Signal{}, Evidence: []Evidence{}}
	if in.ObservedSince.IsZero() {
		sub.Reason = ReasonDriftNotObs
		return sub
	}
	evs := make([]schema.DriftEvent, 0, len(in.Events))
	for _, e := range in.Events {
		if e.ObservedAt.After(now) {
			continue // not yet happened at publication time (event time)
		}
		evs = append(evs, e)
	}
	slices.SortStableFunc(evs, func(a, b schema.DriftEvent) int {
		if c := a.ObservedAt.Compare(b.ObservedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	hl := w.Drift.HalfLifeDays
	total := 0.0
	addSig := func(id, dir string, weight float64, at time.Time, ev []Evidence, note string, strongWhileOpen bool) {
		age := math.Max(0, ageDays(now, at))
		d := decay(age, hl)
		s := Signal{
			ID: id, Direction: dir, Penalty: round6(weight * d),
			Values:   map[string]float64{"weight": weight, "age_days": round6(age), "decay": round6(d)},
			Note:     note,
			Evidence: ev,
		}
		// Weighted drift always counts in the score; only the strong
		// negatives are "open" (band-relevant), and only while their decayed
		// weight is >= open_signal_min_fraction of the original.
		if strongWhileOpen {
			s.Open = d >= w.Drift.OpenSignalMinFraction
			s.Severity = SeverityHigh
			if !s.Open {
				s.Direction = method.Negative // expired: still evidence, no longer a strong negative
			}
		}
		total += s.Penalty
		sub.Signals = append(sub.Signals, s)
		sub.Evidence = append(sub.Evidence, ev...)
	}
	for _, e := range evs {
		ev := []Evidence{{Kind: EvRegistryEvent, ID: e.ID, ObservedAt: e.ObservedAt.UTC()}}
		switch e.Kind {
		case schema.KindEndpointsChanged:
			before := endpointHosts(e.Before)
			var hit *SuspectDomain
			var hitHost string
			hosts := endpointHosts(e.After)
			names := make([]string, 0, len(hosts))
			for h := range hosts {
				names = append(names, h)
			}
			sort.Strings(names)
			for _, h := range names {
				if before[h] {
					continue // only a *new* endpoint is a move to a destination
				}
				if d, ok := SuspectHost(h); ok {
					hit, hitHost = &d, h
					break
				}
			}
			if hit != nil {
				addSig("endpoints_changed_suspect_destination", method.StrongNegative,
					w.Drift.Weights["endpoints_changed_suspect_destination"], e.ObservedAt, ev,
					"new endpoint host "+hitHost+": "+hit.Reason, true)
			} else {
				addSig("endpoints_changed", method.MildNegative, w.Drift.Weights["endpoints_changed"], e.ObservedAt, ev, "", false)
			}
		case schema.KindDescriptionChanged:
			if e.VersionBump {
				addSig("description_changed_with_version_bump", method.NearNeutral,
					w.Drift.Weights["description_changed_with_version_bump"], e.ObservedAt, ev, "", false)
			} else {
				addSig("description_changed_no_version_bump", method.MildNegative,
					w.Drift.Weights["description_changed_no_version_bump"], e.ObservedAt, ev, "", false)
			}
		case schema.KindTitleChanged:
			addSig("title_changed", method.NearNeutral, w.Drift.Weights["title_changed"], e.ObservedAt, ev, "", false)
		case schema.KindStatusChanged:
			after := strings.ToLower(strings.TrimSpace(e.After))
			if after == "deprecated" || after == "deleted" {
				addSig("status_changed_deprecated_or_deleted", method.NearNeutral,
					w.Drift.Weights["status_changed_deprecated_or_deleted"], e.ObservedAt, ev, "status "+after, false)
			}
			// new_server, version_added, removed and other status changes weigh 0.
		}
	}
	for _, mc := range multiChanges(w, evs) {
		ev := make([]Evidence, 0, len(mc.events))
		for _, e := range mc.events {
			ev = append(ev, Evidence{Kind: EvRegistryEvent, ID: e.ID, ObservedAt: e.ObservedAt.UTC()})
		}
		addSig("multi_change_24h", method.StrongNegative, w.Drift.Weights["multi_change_24h"], mc.at, ev,
			strings.Join(mc.kinds, "+")+" within 24 h", true)
	}
	for _, b := range in.BulkEdits {
		sub.Signals = append(sub.Signals, Signal{
			ID: "bulk_edit", Direction: method.None, Penalty: w.Drift.Weights["bulk_edit"],
			Values: map[string]float64{"servers": float64(b.Servers)},
			Note:   "pattern flag: namespace " + b.Namespace + " edited descriptions of many servers from " + b.Start.Format(time.RFC3339),
		})
		total += w.Drift.Weights["bulk_edit"]
	}
	sortEvidence(sub.Evidence)
	sub.Value = ptr(round2(math.Max(0, w.Drift.Baseline-total)))
	return sub
}

type multiChange struct {
	at     time.Time
	kinds  []string
	events []schema.DriftEvent
}

// changeKind maps an event to the multi-change dimension it touches
// (endpoint, description, title, version); "" for none. An event carrying a
// version bump also touches "version".
func changeKinds(e schema.DriftEvent) []string {
	var k []string
	switch e.Kind {
	case schema.KindEndpointsChanged:
		k = append(k, "endpoint")
	case schema.KindDescriptionChanged:
		k = append(k, "description")
	case schema.KindTitleChanged:
		k = append(k, "title")
	case schema.KindVersionAdded:
		k = append(k, "version")
	}
	if e.VersionBump && e.Kind != schema.KindVersionAdded {
		k = append(k, "version")
	}
	return k
}

// multiChanges finds multi_change_24h occurrences: >= multi_change_min_kinds
// of endpoint/description/title/version changed within the window. One
// occurrence is reported at the event that completes the set (its time
// dates the signal, so its weight); the search then restarts with events
// after it, so one burst counts once.
//
// The signal's window is the multi_change_window_hours from the change
// that opened the burst (its earliest member): every change in it happened
// within 24 h of that one, which is what "changed within 24 h" counts. The
// note and the evidence list every change of the window known at
// publication time, including those after the completing event, so the
// record shows the whole burst, not the prefix that tripped the rule.
// Listing them changes neither the count nor the dates of occurrences,
// so the score is the same as before.
func multiChanges(w *method.Weights, evs []schema.DriftEvent) []multiChange {
	win := time.Duration(w.Drift.MultiChangeWindowHrs * float64(time.Hour))
	var out []multiChange
	start := 0 // events before start belong to a reported occurrence
	for i := range evs {
		if len(changeKinds(evs[i])) == 0 {
			continue
		}
		t := evs[i].ObservedAt
		kinds := map[string]bool{}
		var members []schema.DriftEvent
		for j := start; j <= i; j++ {
			if t.Sub(evs[j].ObservedAt) > win {
				continue
			}
			ks := changeKinds(evs[j])
			if len(ks) == 0 {
				continue
			}
			for _, k := range ks {
				kinds[k] = true
			}
			members = append(members, evs[j])
		}
		if len(kinds) >= w.Drift.MultiChangeMinKinds {
			// The rest of the window: changes after the completing one, up
			// to win after the opening one.
			end := members[0].ObservedAt.Add(win)
			for j := i + 1; j < len(evs) && !evs[j].ObservedAt.After(end); j++ {
				ks := changeKinds(evs[j])
				if len(ks) == 0 {
					continue
				}
				for _, k := range ks {
					kinds[k] = true
				}
				members = append(members, evs[j])
			}
			names := make([]string, 0, len(kinds))
			for _, k := range []string{"endpoint", "description", "title", "version"} {
				if kinds[k] {
					names = append(names, k)
				}
			}
			out = append(out, multiChange{at: t, kinds: names, events: members})
			start = i + 1
		}
	}
	return out
}

// DriftScore is the drift sub-score of one server at now (SPEC §4 Drift),
// for processors that publish it beside their state.
func DriftScore(w *method.Weights, in DriftInput, now time.Time) SubScore { return drift(w, in, now) }
