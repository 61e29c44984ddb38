package harness

// Benchmark 5: forum's prober (ingest/probe) against the go-sdk client, on
// the same local go-sdk endpoints in the same run.
//
// The harness serves N real go-sdk MCP endpoints (Streamable HTTP, one
// mcp.Server per path, spread over a few loopback listeners, so the
// per-host limit sees several hosts), then runs the two arms in turn, each
// in a child process of its own so that its peak RSS (VmHWM) and its heap
// allocations are that arm's alone:
//
//	forum: probe.Prober.Probe (initialize, initialized, tools/list, DELETE)
//	sdk:   mcp.NewClient + StreamableClientTransport: Connect (initialize,
//	       initialized), Tools (tools/list), Close (DELETE)
//
// Both run the same handshakes at the same concurrency against the same
// servers. The child is this same binary, started with the parent's own
// arguments and probeArmEnv set (so `go run ./bench` and any command that
// calls Main work alike); Main hands it to runProbeArm before anything else.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forum-mcp/forum/ingest/probe"
)

// probeArmEnv carries a probeArmConfig (JSON) to a child process.
const probeArmEnv = "FORUM_BENCH_PROBE_ARM"

// probeArmConfig is what a child runs.
type probeArmConfig struct {
	Arm     string `json:"arm"` // forum | sdk
	Targets string `json:"targets"`
	C       int    `json:"c"`
	PerHost int    `json:"per_host"`
	Profile string `json:"profile,omitempty"` // write a CPU profile of the run here
}

// probeArmResult is what a child prints (JSON) for the parent.
type probeArmResult struct {
	Arm         string         `json:"arm"`
	N           int            `json:"n"`
	OK          int            `json:"ok"`
	Failures    map[string]int `json:"failures,omitempty"`
	WallSec     float64        `json:"wall_sec"`
	ProbesPerS  float64        `json:"probes_per_s"`
	InitP50MS   float64        `json:"init_p50_ms"`
	InitP99MS   float64        `json:"init_p99_ms"`
	TotalP50MS  float64        `json:"total_p50_ms"`
	TotalP99MS  float64        `json:"total_p99_ms"`
	VmHWMMiB    float64        `json:"vm_hwm_mib"`
	PeakHeapMiB float64        `json:"peak_heap_inuse_mib"`
	AllocBytes  uint64         `json:"alloc_bytes"`   // heap bytes allocated during the run
	AllocObjs   uint64         `json:"alloc_objects"` // heap objects allocated during the run
	CPUSec      float64        `json:"cpu_sec"`       // the child's user+system CPU during the run
	Goroutines  int            `json:"peak_goroutines"`
}

func benchProbe(ctx context.Context, c Config, _, _ string) (Section, error) {
	sec := Section{ID: "probe", Title: "5. The prober against the go-sdk client"}
	urls, stop, err := serveMCP(c.ProbeN, c.ProbeListeners, c.ProbeTools)
	if err != nil {
		return sec, err
	}
	defer stop()
	f, err := os.CreateTemp("", "forum-bench-probe-targets-*.txt")
	if err != nil {
		return sec, err
	}
	defer os.Remove(f.Name())
	if _, err := fmt.Fprintln(f, strings.Join(urls, "\n")); err != nil {
		f.Close()
		return sec, err
	}
	if err := f.Close(); err != nil {
		return sec, err
	}
	prof, err := os.CreateTemp("", "forum-bench-probe-*.pprof")
	if err != nil {
		return sec, err
	}
	prof.Close()
	defer os.Remove(prof.Name())

	var rs []probeArmResult
	for round := range c.Runs {
		for _, arm := range []string{"forum", "sdk"} {
			ac := probeArmConfig{Arm: arm, Targets: f.Name(), C: c.ProbeC, PerHost: c.ProbePerHost}
			if arm == "forum" && round == c.Runs-1 {
				ac.Profile = prof.Name()
			}
			r, err := runProbeChild(ctx, ac)
			if err != nil {
				return sec, fmt.Errorf("probe arm %s, round %d: %w", arm, round+1, err)
			}
			fmt.Fprintf(os.Stderr, "bench: probe %-5s round %d: %d/%d ok, %.0f probes/s, %.1f allocs/probe\n", arm, round+1, r.OK, r.N, r.ProbesPerS, float64(r.AllocObjs)/float64(r.N))
			rs = append(rs, r)
		}
	}

	best := map[string]probeArmResult{}
	for _, r := range rs {
		if cur, ok := best[r.Arm]; !ok || r.ProbesPerS > cur.ProbesPerS {
			best[r.Arm] = r
		}
	}
	fo, sd := best["forum"], best["sdk"]
	var b strings.Builder
	fmt.Fprintf(&b, "%d go-sdk %s Streamable HTTP endpoints (one `mcp.Server` each, %d tools, SSE-framed answers) served by the harness process on %d loopback listeners; each arm runs in a child process of its own, %d probes at concurrency %d, so its peak RSS (VmHWM), its CPU time and its heap allocations are its own. The servers share the 2 cores with the arm under test: both arms pay the same server cost. Rounds alternate forum, sdk (`-runs`); the best round of each arm is compared.\n\n",
		c.ProbeN, sdkVersion(), c.ProbeTools, c.ProbeListeners, c.ProbeN, c.ProbeC)
	b.WriteString("- **forum**: `probe.Prober.Probe` — initialize, notifications/initialized, tools/list, DELETE session; SSRF-guarded dialer (loopback allow-listed), body and time caps, per-host limit " + fmt.Sprint(c.ProbePerHost) + ".\n")
	b.WriteString("- **sdk**: `mcp.NewClient` + `StreamableClientTransport{DisableStandaloneSSE: true, MaxRetries: -1}` — `Connect` (initialize + initialized), `Tools` (tools/list), `Close` (DELETE); one shared `http.Client` with " + fmt.Sprint(c.ProbePerHost) + " idle connections per host.\n")
	b.WriteString("- init = the initialize round trip (forum: `initialize_latency_ms`; sdk: `Connect`, which also sends initialized); total = the whole handshake as the caller sees it, including the wait for a per-host slot (forum).\n\n")
	b.WriteString("| arm | round | ok/n | probes/s | init p50 ms | init p99 ms | total p50 ms | total p99 ms | CPU s | allocs/probe | KiB alloc/probe | VmHWM MiB | Go heap peak MiB | peak goroutines |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for i, r := range rs {
		fmt.Fprintf(&b, "| %s | %d | %d/%d | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.1f | %.1f | %d |\n",
			r.Arm, i/2+1, r.OK, r.N, r.ProbesPerS, r.InitP50MS, r.InitP99MS, r.TotalP50MS, r.TotalP99MS, r.CPUSec,
			float64(r.AllocObjs)/float64(r.N), float64(r.AllocBytes)/1024/float64(r.N), r.VmHWMMiB, r.PeakHeapMiB, r.Goroutines)
		if len(r.Failures) > 0 {
			fmt.Fprintf(&b, "| ↳ failures | | %s | | | | | | | | | | | |\n", fmtCounts(r.Failures))
		}
	}
	fmt.Fprintf(&b, "\nServer process (the harness) VmHWM: %.0f MiB.\n\n", float64(procStatus("VmHWM"))/(1<<20))
	tput := fo.ProbesPerS / sd.ProbesPerS
	fmt.Fprintf(&b, "**forum / sdk** (best round each): throughput %.2f×, total p50 %.2f×, total p99 %.2f×, CPU per probe %.2f×, allocations per probe %.2f× (bytes %.2f×), VmHWM %.2f×.\n\n",
		tput, fo.TotalP50MS/sd.TotalP50MS, fo.TotalP99MS/sd.TotalP99MS,
		(fo.CPUSec/float64(fo.N))/(sd.CPUSec/float64(sd.N)), float64(fo.AllocObjs)/float64(sd.AllocObjs), float64(fo.AllocBytes)/float64(sd.AllocBytes), fo.VmHWMMiB/sd.VmHWMMiB)
	if top, err := topFunctions(prof.Name()); err == nil {
		fmt.Fprintf(&b, "Profile of the forum arm's last round (the child process: the client side only):\n\n```\n%s```\n", top)
	} else {
		fmt.Fprintf(&b, "(profile failed: %v)\n", err)
	}
	verdict := "missed"
	if fo.OK == fo.N && sd.OK == sd.N && tput >= 1 {
		verdict = "met"
	}
	sec.Summary = []string{fmt.Sprintf("| 5. prober, %d local go-sdk MCP endpoints, concurrency %d | %.0f probes/s, %.0f allocs/probe (best of %d) | go-sdk client: %.0f probes/s, %.0f allocs/probe | **%.2f×** throughput, %.2f× allocations | ≥ the SDK client's throughput: %s |",
		c.ProbeN, c.ProbeC, fo.ProbesPerS, float64(fo.AllocObjs)/float64(fo.N), c.Runs, sd.ProbesPerS, float64(sd.AllocObjs)/float64(sd.N), tput, float64(fo.AllocObjs)/float64(sd.AllocObjs), verdict)}
	sec.Body = b.String()
	return sec, nil
}

// sdkVersion is the go-sdk module version this binary was built with.
func sdkVersion() string {
	if v := moduleVersion("github.com/modelcontextprotocol/go-sdk"); v != "" {
		return v
	}
	return "(version unknown)"
}

// runProbeChild runs one arm in a child process: this binary, with the
// parent's arguments and the arm's config in probeArmEnv.
func runProbeChild(ctx context.Context, ac probeArmConfig) (probeArmResult, error) {
	var r probeArmResult
	exe, err := os.Executable()
	if err != nil {
		return r, fmt.Errorf("finding this binary: %w", err)
	}
	cfg, err := json.Marshal(ac)
	if err != nil {
		return r, err
	}
	cmd := exec.CommandContext(ctx, exe, os.Args[1:]...)
	cmd.Env = append(os.Environ(), probeArmEnv+"="+string(cfg))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return r, fmt.Errorf("child: %w", err)
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return r, fmt.Errorf("child output %q: %w", out, err)
	}
	return r, nil
}

// serveMCP starts n go-sdk endpoints: endpoint i is /mcp/i on listener
// i%listeners, each with its own mcp.Server, so no two probes share server
// state.
func serveMCP(n, listeners, tools int) ([]string, func(), error) {
	muxes := make([]*http.ServeMux, listeners)
	bases := make([]string, listeners)
	var servers []*http.Server
	stop := func() {
		for _, s := range servers {
			s.Close()
		}
	}
	for i := range muxes {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			stop()
			return nil, nil, fmt.Errorf("listening: %w", err)
		}
		muxes[i] = http.NewServeMux()
		bases[i] = "http://" + ln.Addr().String()
		srv := &http.Server{Handler: muxes[i], ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go srv.Serve(ln)
	}
	urls := make([]string, n)
	for i := range n {
		s := mcp.NewServer(&mcp.Implementation{Name: fmt.Sprintf("bench-%d", i), Version: "1.0.0"}, nil)
		for j := range tools {
			s.AddTool(&mcp.Tool{
				Name:        fmt.Sprintf("tool_%d", j),
				Description: fmt.Sprintf("Benchmark tool %d of server %d, which does nothing.", j, i),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"query"}},"required":["q"]}`),
			}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{}, nil
			})
		}
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
			&mcp.StreamableHTTPOptions{SessionTimeout: time.Minute})
		path := fmt.Sprintf("/mcp/%d", i)
		muxes[i%listeners].Handle(path, h)
		urls[i] = bases[i%listeners] + path
	}
	return urls, stop, nil
}

// runProbeArm runs one arm in this (child) process and prints its result
// as JSON on stdout.
func runProbeArm(ctx context.Context, cfgJSON string) error {
	var ac probeArmConfig
	if err := json.Unmarshal([]byte(cfgJSON), &ac); err != nil {
		return fmt.Errorf("%s: %w", probeArmEnv, err)
	}
	raw, err := os.ReadFile(ac.Targets)
	if err != nil {
		return err
	}
	urls := strings.Fields(string(raw))
	do, closeArm, err := probeArm(ac)
	if err != nil {
		return err
	}
	defer closeArm()

	var peakHeap atomic.Uint64
	var peakG atomic.Int64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() { // sample the Go heap while the arm runs
		defer close(sampled)
		t := time.NewTicker(10 * time.Millisecond)
		defer t.Stop()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peakHeap.Store(max(peakHeap.Load(), ms.HeapInuse))
			peakG.Store(max(peakG.Load(), int64(runtime.NumGoroutine())))
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()

	if ac.Profile != "" {
		pf, err := os.Create(ac.Profile)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pprof.StartCPUProfile(pf); err != nil {
			return err
		}
	}
	inits := make([]float64, len(urls))
	totals := make([]float64, len(urls))
	fails := make([]string, len(urls))
	var next atomic.Int64
	var wg sync.WaitGroup
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	cpu0 := processCPU()
	start := time.Now()
	for range ac.C {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(urls) {
					return
				}
				inits[i], totals[i], fails[i] = do(ctx, urls[i])
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	cpu := processCPU() - cpu0
	close(done)
	<-sampled
	runtime.ReadMemStats(&m1)
	if ac.Profile != "" {
		pprof.StopCPUProfile()
	}

	r := probeArmResult{Arm: ac.Arm, N: len(urls), WallSec: wall.Seconds(), ProbesPerS: float64(len(urls)) / wall.Seconds(),
		VmHWMMiB: float64(procStatus("VmHWM")) / (1 << 20), PeakHeapMiB: float64(peakHeap.Load()) / (1 << 20),
		AllocBytes: m1.TotalAlloc - m0.TotalAlloc, AllocObjs: m1.Mallocs - m0.Mallocs, CPUSec: cpu.Seconds(), Goroutines: int(peakG.Load())}
	var okInit, okTotal []float64
	for i := range urls {
		if fails[i] != "" {
			if r.Failures == nil {
				r.Failures = map[string]int{}
			}
			r.Failures[fails[i]]++
			continue
		}
		r.OK++
		okInit = append(okInit, inits[i])
		okTotal = append(okTotal, totals[i])
	}
	r.InitP50MS, r.InitP99MS = percentile(okInit, 50), percentile(okInit, 99)
	r.TotalP50MS, r.TotalP99MS = percentile(okTotal, 50), percentile(okTotal, 99)
	return json.NewEncoder(os.Stdout).Encode(r)
}

// probeArm returns one handshake of the arm: initialize latency and total
// time in ms, and a failure label ("" for a full handshake with tools).
func probeArm(ac probeArmConfig) (func(ctx context.Context, u string) (float64, float64, string), func(), error) {
	switch ac.Arm {
	case "forum":
		p := probe.New(probe.WithAllow(netip.MustParsePrefix("127.0.0.0/8")), probe.WithPerHostLimit(ac.PerHost))
		return func(ctx context.Context, u string) (float64, float64, string) {
			t0 := time.Now()
			c := p.Probe(ctx, probe.Request{Server: "bench", URL: u, Transport: probe.TransportStreamableHTTP})
			total := msOf(time.Since(t0))
			if c.Outcome != probe.OutcomeOK || !c.ToolsListed || len(c.Tools) == 0 {
				return 0, total, string(c.Outcome) + "/" + string(c.ErrorClass)
			}
			return c.InitializeLatencyMS, total, ""
		}, p.Close, nil
	case "sdk":
		hc := &http.Client{Transport: &http.Transport{MaxIdleConns: 512, MaxIdleConnsPerHost: ac.PerHost, IdleConnTimeout: 30 * time.Second}}
		return func(ctx context.Context, u string) (float64, float64, string) {
			ctx, cancel := context.WithTimeout(ctx, probe.DefaultTimeout)
			defer cancel()
			t0 := time.Now()
			client := mcp.NewClient(&mcp.Implementation{Name: "bench-sdk", Version: "0.1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: u, HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}, nil)
			init := msOf(time.Since(t0))
			if err != nil {
				return 0, msOf(time.Since(t0)), "connect"
			}
			n := 0
			for _, err := range cs.Tools(ctx, nil) {
				if err != nil {
					cs.Close()
					return 0, msOf(time.Since(t0)), "tools"
				}
				n++
			}
			cs.Close()
			if n == 0 {
				return 0, msOf(time.Since(t0)), "no-tools"
			}
			return init, msOf(time.Since(t0)), ""
		}, hc.CloseIdleConnections, nil
	}
	return nil, nil, fmt.Errorf("unknown probe arm %q", ac.Arm)
}

func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	i := int(p/100*float64(len(s))+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func msOf(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// moduleVersion is the version of a module this binary was built with ("" when unknown).
func moduleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			return d.Version
		}
	}
	return ""
}
