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
	pyOut, pyWall, pyRSS, pyCPU, err := runPython(ctx, c.Python, "bench/baselines/diff.py", oldP, newP)
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
	b.WriteString("| arm | what | wall | CPU | MB/s | alloc MB | allocs | records | events |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
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
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %.0f | %.0f | %d | %d | %d |\n", arm.Name, arm.What, ms(m.Wall), ms(m.CPU), float64(sizes)/1e6/m.Wall.Seconds(),
			float64(m.Bytes)/1e6, m.Allocs, m.Records, m.Events)
	}
	dOnly, counts, err := diffbench.DiffOnly(oldP, newP)
	if err != nil {
		return sec, err
	}
	fmt.Fprintf(&b, "| diff only | differ.Diff(empty, old) + Diff(known, new) on decoded entries | %s | %s | | %.0f | %d | %d | %d |\n", ms(dOnly.Wall), ms(dOnly.CPU), float64(dOnly.Bytes)/1e6, dOnly.Allocs, dOnly.Records, dOnly.Events)
	fmt.Fprintf(&b, "| **Python baseline** | `%s bench/baselines/diff.py OLD NEW` (json.loads + dicts): whole process | %s | %s | %.0f | | | | %d |\n\n", c.Python, ms(pyWall), ms(pyCPU), float64(sizes)/1e6/pyWall.Seconds(), py.Events)
	fmt.Fprintf(&b, "Python inside the process: load %.2f s, diff %.2f s, total %.2f s (the rest of the wall time is interpreter start and freeing ~%.1f GB of objects at exit); peak RSS %.0f MB.\n\n", py.LoadS, py.DiffS, py.TotalS, float64(pyRSS)/1e9, float64(pyRSS)/1e6)
	same := "identical"
	if fmtCounts(counts) != fmtCounts(py.Counts) {
		same = "DIFFERENT"
	}
	fmt.Fprintf(&b, "Event counts (%s) — Go: %s; Python: %s.\n\n", same, fmtCounts(counts), fmtCounts(py.Counts))

	forum, ref := best["e2e: forum"], best["e2e: reference"]
	decF, decR := best["decode: forum"], best["decode: reference"]
	floorMin := best["floor: encoding/json → minimal struct"]
	floorGoccy := best["floor: goccy/go-json → minimal struct"]
	floorRead := best["floor: read files"]
	pyT := pyWall.Seconds()
	pyIn := py.TotalS
	ratio := func(m diffbench.Measure) string {
		r := fmt.Sprintf("%.1f× Python (%.1f× its in-process time", pyT/m.Wall.Seconds(), pyIn/m.Wall.Seconds())
		if m.CPU > 0 && pyCPU > 0 {
			r += fmt.Sprintf("; %.1f× its CPU time", pyCPU.Seconds()/m.CPU.Seconds())
		}
		return r + ")"
	}
	fmt.Fprintf(&b, "Ratios (same run): forum %s; the reference path (forum before the fast path) %s. Decoding alone: forum %s, the reference %s (%.1f× faster), %.0f× fewer allocations end to end (%d vs %d). Against the Go floors: forum's end to end is %.2f× encoding/json into the minimal struct (%s), %.2f× goccy/go-json into it (%s), %.1f× reading the files (%s); diff alone takes %s.\n\n",
		ratio(forum), ratio(ref), ms(decF.Wall), ms(decR.Wall), decR.Wall.Seconds()/decF.Wall.Seconds(),
		float64(ref.Allocs)/float64(max(forum.Allocs, 1)), forum.Allocs, ref.Allocs,
		forum.Wall.Seconds()/floorMin.Wall.Seconds(), ms(floorMin.Wall), forum.Wall.Seconds()/floorGoccy.Wall.Seconds(), ms(floorGoccy.Wall),
		forum.Wall.Seconds()/floorRead.Wall.Seconds(), ms(floorRead.Wall), ms(dOnly.Wall))

	// Profile of the forum arm: where the time goes.
	prof, err := profile(func() { _, _, _ = diffbench.ForumArm().Run(oldP, newP) })
	if err == nil {
		fmt.Fprintf(&b, "Profile of `e2e: forum` (CPU, top functions by cumulative time):\n\n```\n%s```\n\n", prof)
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
		fmt.Sprintf("| 1. diff 2×170k snapshots, e2e, forum (LoadSnapshotFile fast path + Diff) | %s (CPU %s), %.0f MB alloc, %d allocs | Python %s | **%.1f×** | < 1 s and ≥ 10×: %s |", ms(forum.Wall), ms(forum.CPU), float64(forum.Bytes)/1e6, forum.Allocs, ms(pyWall), pyT/forum.Wall.Seconds(), target(forum)),
		fmt.Sprintf("| 1. same, reference path (json.Decoder + ParseEntry: forum before) | %s (CPU %s), %.0f MB alloc, %d allocs | Python %s | **%.1f×** | — |", ms(ref.Wall), ms(ref.CPU), float64(ref.Bytes)/1e6, ref.Allocs, ms(pyWall), pyT/ref.Wall.Seconds()),
		fmt.Sprintf("| 1. floor: encoding/json → minimal struct (both files) | %s | forum %s | forum = %.2f× floor | — |", ms(floorMin.Wall), ms(forum.Wall), forum.Wall.Seconds()/floorMin.Wall.Seconds()),
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
