// Command gen writes a synthetic MCP Registry at scale (bench/corpus): a
// day-0 snapshot and, with -days N, N more daily snapshots with churn
// (~1,400 drift events a day), as v0.1 snapshot JSON files named by date,
// with a MANIFEST.tsv of capture times and a CHURN.tsv of what each day did.
//
//	go run ./bench/gen -servers 50000 -out /tmp/forum-bench
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/forum-mcp/forum/bench/corpus"
)

func main() {
	servers := flag.Int("servers", 50_000, "servers in the day-0 registry")
	versions := flag.Int("versions", 0, "records in the day-0 registry (0: 3.4 per server, ~170,000 at 50k)")
	days := flag.Int("days", 1, "days of churn after day 0 (each one more snapshot file)")
	perDay := flag.Int("events-per-day", 1400, "drift events a day")
	seed := flag.Uint64("seed", 1, "RNG seed: the same seed gives the same files")
	out := flag.String("out", "", "output directory (required)")
	flag.Parse()
	if *out == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*out, corpus.Config{Servers: *servers, Versions: *versions, Seed: *seed, EventsPerDay: *perDay}, *days); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(out string, cfg corpus.Config, days int) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	r := corpus.New(cfg)
	var manifest, churn strings.Builder
	manifest.WriteString("file\tcaptured_at_utc\n")
	churn.WriteString("day\tkind\tevents\n")
	for d := 0; d <= days; d++ {
		if d > 0 {
			c := r.Advance()
			kinds := make([]string, 0, len(c))
			for k := range c {
				kinds = append(kinds, k)
			}
			sort.Strings(kinds)
			for _, k := range kinds {
				fmt.Fprintf(&churn, "%d\t%s\t%d\n", d, k, c[k])
			}
		}
		name := r.Now().Format("2006-01-02") + ".json"
		paths, recs, err := write(filepath.Join(out, name), r)
		if err != nil {
			return err
		}
		fmt.Fprintf(&manifest, "%s\t%s\n", name, r.Now().Format("2006-01-02T15:04:05Z"))
		fmt.Printf("%s: %d servers, %d records, %.1f MB\n", paths, len(r.Servers), recs, float64(fileSize(paths))/1e6)
	}
	if err := os.WriteFile(filepath.Join(out, "MANIFEST.tsv"), []byte(manifest.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "CHURN.tsv"), []byte(churn.String()), 0o644)
}

func write(path string, r *corpus.Registry) (string, int, error) {
	f, err := os.Create(path)
	if err != nil {
		return path, 0, err
	}
	n, err := r.WriteSnapshot(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, n, err
}

func fileSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return st.Size()
}
