package trust

import (
	"fmt"
	"testing"
	"time"

	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
)

// Decay evaluation is the per-record hot path of the drift and incident
// windows: every publication re-evaluates Σ w·0.5^(age/half-life) over each
// server's events at the publication time (event time, so nothing is
// cached between publications). A busy server: 40 drift events over 180 days
// (versions, descriptions, endpoints, titles) and 4 incidents.
func BenchmarkDecay(b *testing.B) {
	w := method.Embedded().Weights
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	kinds := []string{schema.KindVersionAdded, schema.KindDescriptionChanged, schema.KindEndpointsChanged, schema.KindTitleChanged}
	var evs []schema.DriftEvent
	for i := range 40 {
		k := kinds[i%len(kinds)]
		e := schema.DriftEvent{ID: fmt.Sprintf("e%d", i), Server: "io.github.x/busy", Namespace: "io.github.x", Kind: k,
			Version: fmt.Sprintf("1.%d.0", i), ObservedAt: now.Add(-time.Duration(180-i*4) * 24 * time.Hour), VersionBump: i%3 == 0}
		if k == schema.KindEndpointsChanged {
			e.Before, e.After = `["https://a.example.com/mcp"]`, fmt.Sprintf(`["https://b%d.example.com/mcp"]`, i)
		} else {
			e.Before, e.After = "before", "after"
		}
		evs = append(evs, e)
	}
	din := DriftInput{ObservedSince: now.Add(-200 * 24 * time.Hour), Events: evs}
	iin := IncidentsInput{Checked: true}
	for i, sev := range []string{"critical", "high", "medium", "low"} {
		iin.Items = append(iin.Items, Incident{ID: fmt.Sprintf("i%d", i), Server: "io.github.x/busy", Date: now.Add(-time.Duration(30+i*90) * 24 * time.Hour),
			Class: "vulnerability", Severity: sev, Status: IncidentConfirmed, SourceURI: "https://example.com/advisory"})
	}
	b.Run("drift", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if s := drift(w, din, now); s.Value == nil {
				b.Fatal("drift unknown")
			}
		}
	})
	b.Run("incidents", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if s, _ := incidents(w, iin, now); s.Value == nil {
				b.Fatal("incidents unknown")
			}
		}
	})
}
