package categories

import (
	"fmt"
	"testing"
)

// BenchmarkClassify classifies one server with five tools (the scorer runs
// it once per server per publication).
func BenchmarkClassify(b *testing.B) {
	in := Input{Name: "io.github.dev0001/fast-weather-mcp", Title: "Weather", Description: "A weather server for local workflows with forecasts and alerts."}
	for i := 0; i < 5; i++ {
		in.Tools = append(in.Tools, Tool{Name: fmt.Sprintf("weather_action_%d", i), Description: fmt.Sprintf("Runs weather action number %d and returns the result as JSON.", i)})
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Classify(in)
	}
}
