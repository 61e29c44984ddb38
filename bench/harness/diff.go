package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"

	"github.com/forum-mcp/forum/bench/diffbench"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d)/1e6) }

func benchDiff(ctx context.Context, c Config, oldP, newP string) (Section, error) {
	sec := Section{ID: "diff", Title: "1. Diff of two 170k-record snapshots"}
	var sizes int64
	for _, p := range []string{oldP, newP} {
		st, err := os.Stat(p)
		if err != nil {
			return sec, err
		}
		sizes += st.Size()
	}
	// Python first (it needs ~1.3 GB while it runs; Go's heap is small then).
	pyOut, pyWall, pyRSS, err := runPython(ctx, c.Python, "bench/baselines/diff.py", oldP, newP)
	if err != nil {
		return sec, err
	}
	var py struct {
		Counts map[string]int `json:"counts"`
		Events int            `json:"events"`
		LoadS  float64        `json:"load_s"`
		DiffS  float64        `json:"diff_s"`
		TotalS float64        `json:"total_s"`
	}
	if err := json.Unmarshal(pyOut, &py); err != nil {
		return sec, fmt.Errorf("python output: %w", err)
	}

	var b strings.Builder
	fmt.Fprintf(&b, "Inputs: `%s` and `%s` (%.1f MB together), day 0 and day 1 of the generated registry. Each arm runs %d times in this process after a GC; the best wall time is shown, with the Go heap bytes and objects allocated in that run. GOMAXPROCS %d.\n\n",
		oldP, newP, float64(sizes)/1e6, c.Runs, runtime.GOMAXPROCS(0))
	b.WriteString("| arm | what | wall | MB/s | alloc MB | allocs | records | events |\n|---|---|---:|---:|---:|---:|---:|---:|\n")
	best := map[string]diffbench.Measure{}
	for _, arm := range diffbench.Arms() {
		var runs []diffbench.Measure
		for i := 0; i < c.Runs; i++ {
			m, err := diffbench.Measured(func() (int, int, error) { return arm.Run(oldP, newP) })
			if err != nil {
				return sec, fmt.Errorf("%s: %w", arm.Name, err)
			}
			runs = append(runs, m)
		}
		m := diffbench.Best(runs)
		best[arm.Name] = m
		fmt.Fprintf(&b, "| %s | %s | %s | %.0f | %.0f | %d | %d | %d |\n", arm.Name, arm.What, ms(m.Wall), float64(sizes)/1e6/m.Wall.Seconds(),
			float64(m.Bytes)/1e6, m.Allocs, m.Records, m.Events)
	}
	dOnly, counts, err := diffbench.DiffOnly(oldP, newP)
	if err != nil {
		return sec, err
	}
	fmt.Fprintf(&b, "| diff only | differ.Diff(empty, old) + Diff(known, new) on decoded entries | %s | | %.0f | %d | %d | %d |\n", ms(dOnly.Wall), float64(dOnly.Bytes)/1e6, dOnly.Allocs, dOnly.Records, dOnly.Events)
	fmt.Fprintf(&b, "| **Python baseline** | `%s bench/baselines/diff.py OLD NEW` (json.loads + dicts): whole process | %s | %.0f | | | | %d |\n\n", c.Python, ms(pyWall), float64(sizes)/1e6/pyWall.Seconds(), py.Events)
	fmt.Fprintf(&b, "Python inside the process: load %.2f s, diff %.2f s, total %.2f s (the rest of the wall time is interpreter start and freeing ~%.1f GB of objects at exit); peak RSS %.0f MB.\n\n", py.LoadS, py.DiffS, py.TotalS, float64(pyRSS)/1e9, float64(pyRSS)/1e6)
	same := "identical"
	if fmtCounts(counts) != fmtCounts(py.Counts) {
		same = "DIFFERENT"
	}
	fmt.Fprintf(&b, "Event counts (%s) — Go: %s; Python: %s.\n\n", same, fmtCounts(counts), fmtCounts(py.Counts))

	today, par, fast := best["e2e: forum today"], best["e2e: parallel ParseEntry"], best["e2e: parallel FastParseEntry"]
	floorMin := best["floor: encoding/json → minimal struct"]
	floorRaw := best["floor: encoding/json → []RawMessage"]
	pyT := pyWall.Seconds()
	pyIn := py.TotalS
	ratio := func(m diffbench.Measure) string {
		return fmt.Sprintf("%.1f× Python (%.1f× its in-process time)", pyT/m.Wall.Seconds(), pyIn/m.Wall.Seconds())
	}
	fmt.Fprintf(&b, "Ratios (same run): forum today %s; parallel ParseEntry %s; parallel FastParseEntry %s. Against the Go floor (encoding/json into the minimal struct, %s): forum today is %.1f× the floor, the FastParseEntry prototype %.1f×; json.Unmarshal into []RawMessage alone takes %s.\n\n",
		ratio(today), ratio(par), ratio(fast), ms(floorMin.Wall), today.Wall.Seconds()/floorMin.Wall.Seconds(), fast.Wall.Seconds()/floorMin.Wall.Seconds(), ms(floorRaw.Wall))

	// Profile of forum today: where the time goes.
	prof, err := profile(func() { _, _, _ = diffbench.Arms()[8].Run(oldP, newP) })
	if err == nil {
		fmt.Fprintf(&b, "Profile of `e2e: forum today` (CPU, top functions by cumulative time):\n\n```\n%s```\n\n", prof)
	} else {
		fmt.Fprintf(&b, "(profile failed: %v)\n\n", err)
	}
	target := func(m diffbench.Measure) string {
		ok := m.Wall < time.Second && pyT/m.Wall.Seconds() >= 10
		if ok {
			return "met"
		}
		return "missed"
	}
	sec.Summary = []string{
		fmt.Sprintf("| 1. diff 2×170k snapshots, e2e, forum today (ReadSnapshot + Diff) | %s, %.0f MB alloc | Python %s | **%.1f×** | < 1 s and ≥ 10×: %s |", ms(today.Wall), float64(today.Bytes)/1e6, ms(pyWall), pyT/today.Wall.Seconds(), target(today)),
		fmt.Sprintf("| 1. same, prototype: split + goccy FastParseEntry ×%d | %s, %.0f MB alloc | Python %s | **%.1f×** | %s |", runtime.GOMAXPROCS(0), ms(fast.Wall), float64(fast.Bytes)/1e6, ms(pyWall), pyT/fast.Wall.Seconds(), target(fast)),
		fmt.Sprintf("| 1. floor: encoding/json → minimal struct (both files) | %s | forum today %s | forum = %.1f× floor | — |", ms(floorMin.Wall), ms(today.Wall), today.Wall.Seconds()/floorMin.Wall.Seconds()),
	}
	sec.Body = b.String()
	return sec, nil
}

func fmtCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sortStrings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

func profile(f func()) (string, error) {
	tmp, err := os.CreateTemp("", "forum-bench-*.pprof")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if err := pprof.StartCPUProfile(tmp); err != nil {
		return "", err
	}
	f()
	pprof.StopCPUProfile()
	tmp.Close()
	return topFunctions(tmp.Name())
}
