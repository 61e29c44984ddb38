package diffbench

import (
	"os"
	"path/filepath"
	"testing"
)

// benchCorpus is the generated corpus of bench/README.md, when present.
func benchCorpus(b *testing.B) (string, string) {
	dir := os.Getenv("FORUM_BENCH_DIR")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "forum-bench")
	}
	o, n := filepath.Join(dir, "2026-01-01.json"), filepath.Join(dir, "2026-01-02.json")
	if _, err := os.Stat(n); err != nil {
		b.Skipf("no corpus in %s (go run ./bench/gen -servers 50000 -out %s)", dir, dir)
	}
	return o, n
}

// BenchmarkEndToEnd is benchmark 1's forum arm on the generated corpus:
// read + decode both snapshots, then the two Diffs.
func BenchmarkEndToEnd(b *testing.B) {
	o, n := benchCorpus(b)
	arm := ForumArm()
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := arm.Run(o, n); err != nil {
			b.Fatal(err)
		}
	}
}
