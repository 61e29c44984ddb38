package toolfinder

import (
	"fmt"
	"testing"
	"time"

	"github.com/forum-mcp/forum/schema"
)

// BenchmarkScore scores one server (the scorer runs it once per server per
// publication), its registry-wide Context included.
func BenchmarkScore(b *testing.B) {
	var pe []PopEntry
	for i := range 1000 {
		pe = append(pe, PopEntry{Name: fmt.Sprintf("io.github.dev%04d/weather-mcp", i), Description: "A weather server for local workflows.",
			RepoURL: fmt.Sprintf("https://github.com/dev%04d/weather-mcp", i), RemoteURLs: []string{fmt.Sprintf("https://mcp.dev%04d.example.com/mcp", i)}})
	}
	pop := NewPopulation(pe)
	now := time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)
	in := Input{Name: pe[500].Name, Description: pe[500].Description, RepoURL: pe[500].RepoURL, UpdatedAt: now.Add(-40 * 24 * time.Hour),
		Remotes: []Remote{{Type: "streamable-http", URL: pe[500].RemoteURLs[0]}},
		Health:  Health{Outcome: OutcomeOK, InitializeLatencyMS: 300, ToolsListed: true, Tools: []Tool{{Name: "forecast", Description: "Forecast for a city, next 7 days.", HasInputSchema: true}}}}
	b.ReportAllocs()
	for b.Loop() {
		in.Context = pop.Context(in.Name)
		_ = Score(in, now)
	}
}

// BenchmarkNormalizeRepoURL is the sibling key, computed several times per
// server by both methods.
func BenchmarkNormalizeRepoURL(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = schema.NormalizeRepoURL("https://github.com/acme/weather-mcp/tree/main/server")
	}
}
