package publish

import (
	"fmt"
	"testing"
)

// BenchmarkSeal seals one ~2 KB record: RFC 8785 canonical JSON, SHA-256,
// the hash field added, canonical again.
func BenchmarkSeal(b *testing.B) {
	rec := map[string]any{"server": "io.github.dev0001/fast-weather-mcp", "score": 71.5, "band": "B"}
	var comps []map[string]any
	for i := 0; i < 12; i++ {
		comps = append(comps, map[string]any{"id": fmt.Sprintf("component_%d", i), "value": float64(i) / 7, "weight": 0.1,
			"findings": []map[string]any{{"outcome": "pass", "message": "observed within the window", "evidence": []string{fmt.Sprintf("/v1/evidence/ev-%d", i)}}}})
	}
	rec["components"] = comps
	b.ReportAllocs()
	for b.Loop() {
		if _, _, _, err := Seal(rec); err != nil {
			b.Fatal(err)
		}
	}
}
