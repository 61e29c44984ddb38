package differ_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/forum-mcp/forum/ingest/differ"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/schema"
)

// scaled repeats the last bundled snapshot under new names until it holds n
// entries: real shapes, registry scale.
func scaled(b *testing.B, n int) []schema.Entry {
	b.Helper()
	files, err := registry.ListSnapshots(bundled)
	if err != nil {
		b.Fatal(err)
	}
	base, _, _, err := registry.LoadSnapshotFile(files[len(files)-1])
	if err != nil {
		b.Fatal(err)
	}
	out := make([]schema.Entry, 0, n)
	for i := 0; len(out) < n; i++ {
		for _, e := range base {
			if len(out) == n {
				break
			}
			e.Server.Name = fmt.Sprintf("%s-%d", e.Server.Name, i)
			out = append(out, e)
		}
	}
	return out
}

// BenchmarkDiff170k diffs two 170k-record snapshots (one description changed
// in every 100th entry), decoding excluded: the differ's own cost.
func BenchmarkDiff170k(b *testing.B) {
	old := scaled(b, 170_000)
	cur := make([]schema.Entry, len(old))
	copy(cur, old)
	for i := 0; i < len(cur); i += 100 {
		cur[i].Server.Description += " (changed)"
	}
	t0 := time.Date(2025, 10, 1, 0, 0, 0, 0, time.UTC)
	known := differ.Diff(differ.NewState(), differ.Snapshot{ID: "a", Mode: schema.ModeFull, ObservedAt: t0, Entries: old}, differ.Options{}).Next
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res := differ.Diff(known, differ.Snapshot{ID: "b", Mode: schema.ModeFull, ObservedAt: t0.Add(time.Hour), Entries: cur}, differ.Options{})
		if len(res.Events) == 0 {
			b.Fatal("no events")
		}
	}
}
