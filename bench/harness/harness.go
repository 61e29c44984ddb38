// Package harness runs the benchmarks of bench/ and writes bench/RESULTS.md:
// each benchmark side by side with its baseline, measured in the same run,
// with the command, the machine and the date. `go run ./bench` and
// `forum bench` both call Main.
package harness

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/forum-mcp/forum/bench/corpus"
	"github.com/forum-mcp/forum/ingest/probe"
)

// Config is what a harness run does.
type Config struct {
	Dir     string // generated corpus (created when missing)
	Servers int
	Runs    int
	Only    string // comma-separated benchmark ids (diff,score,api,pipeline); empty: all
	Out     string // RESULTS.md path; empty: stdout only
	Python  string
	Rate    int // API offered rate, req/s
	// APIRoutes are the API benchmark's route ids to run (comma-separated;
	// empty: all). The floor always runs.
	APIRoutes string
	Secs      int // API run length
	// Benchmark 3's history: days after day 0 and remotes probed hourly
	// (the month is 30 days × 21,000 remotes).
	PipelineDays    int
	PipelineRemotes int
	PipelineArms    string // comma-separated subset of floor,embedded,clickhouse,sink; empty: all
	// PipelineGoMemLimit is the Go soft memory limit (GOMEMLIMIT syntax)
	// of the embedded arm, as README recommends for an embedded run; "off":
	// none.
	PipelineGoMemLimit string
	// Benchmark 5: go-sdk endpoints served, probes in flight, the loopback
	// listeners they are spread over (hosts, for the per-host limit), tools
	// per endpoint, and the prober's per-host limit (the SDK client's idle
	// connections per host).
	ProbeN, ProbeC, ProbeListeners, ProbeTools, ProbePerHost int
	Command                                                  string
}

// Section is one benchmark's part of RESULTS.md.
type Section struct {
	ID      string
	Title   string
	Summary []string // rows of the headline table: benchmark | result | baseline | ratio | target
	Body    string
}

// Main parses args (without the program name) and runs the harness. In a
// child process started by benchmark 5 (probeArmEnv set) it runs that
// arm instead.
func Main(ctx context.Context, args []string, command string) error {
	if arm := os.Getenv(probeArmEnv); arm != "" {
		return runProbeArm(ctx, arm)
	}
	if len(args) > 0 && args[0] == producerFlag {
		return producerMain(ctx, args[1:])
	}
	setSelf(args)
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	var c Config
	fs.StringVar(&c.Dir, "dir", filepath.Join(os.TempDir(), "forum-bench"), "generated corpus directory (bench/gen output; generated when missing)")
	fs.IntVar(&c.Servers, "servers", 50_000, "servers in the generated registry")
	fs.IntVar(&c.Runs, "runs", 3, "runs per arm (best is reported)")
	fs.StringVar(&c.Only, "only", "", "comma-separated benchmarks to run: diff,score,api,pipeline,micro,probe (empty: all)")
	fs.StringVar(&c.Out, "out", "", "write the results here (e.g. bench/RESULTS.md); empty: stdout")
	fs.StringVar(&c.Python, "python", "python3", "Python for the baseline")
	fs.IntVar(&c.Rate, "rate", 2000, "API benchmark: offered requests/s (open loop)")
	fs.IntVar(&c.Secs, "secs", 10, "API benchmark: seconds per route")
	fs.StringVar(&c.APIRoutes, "api-routes", "", "API benchmark: route ids to run, e.g. page-server,page-leaderboard (empty: all; the floor always runs)")
	fs.IntVar(&c.PipelineDays, "pipeline-days", 1, "pipeline benchmark: days of generated history (the issue's month: 30)")
	fs.IntVar(&c.PipelineRemotes, "pipeline-remotes", 21_000, "pipeline benchmark: remotes probed hourly")
	fs.StringVar(&c.PipelineArms, "pipeline-arms", "", "pipeline benchmark: arms to run, of floor,embedded,clickhouse,sink (empty: all)")
	fs.StringVar(&c.PipelineGoMemLimit, "pipeline-gomemlimit", "400MiB", "pipeline benchmark: the embedded arm's Go soft memory limit, GOMEMLIMIT syntax (README's setting for an embedded run; off: none)")
	fs.IntVar(&c.ProbeN, "probe-n", 2000, "prober benchmark: go-sdk MCP endpoints served (and probes per arm)")
	fs.IntVar(&c.ProbeC, "probe-c", 64, "prober benchmark: probes in flight")
	fs.IntVar(&c.ProbeListeners, "probe-listeners", 32, "prober benchmark: loopback listeners (hosts) the endpoints are spread over")
	fs.IntVar(&c.ProbeTools, "probe-tools", 5, "prober benchmark: tools per endpoint")
	fs.IntVar(&c.ProbePerHost, "probe-per-host", probe.DefaultPerHostLimit, "prober benchmark: the prober's per-host limit (and the SDK client's idle connections per host)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	c.Command = command
	return Run(ctx, c)
}

func (c Config) want(id string) bool {
	if c.Only == "" {
		return true
	}
	for _, s := range strings.Split(c.Only, ",") {
		if strings.TrimSpace(s) == id {
			return true
		}
	}
	return false
}

func (c Config) wantRoute(id string) bool {
	if c.APIRoutes == "" || id == "floor" {
		return true
	}
	for _, s := range strings.Split(c.APIRoutes, ",") {
		if strings.TrimSpace(s) == id {
			return true
		}
	}
	return false
}

// Run runs the selected benchmarks and writes the report.
func Run(ctx context.Context, c Config) error {
	start := time.Now().UTC()
	oldP, newP, err := ensureCorpus(c)
	if err != nil {
		return err
	}
	var secs []Section
	steps := []struct {
		id string
		f  func(context.Context, Config, string, string) (Section, error)
	}{{"diff", benchDiff}, {"score", benchScore}, {"api", benchAPI}, {"pipeline", benchPipeline}, {"probe", benchProbe}, {"micro", benchMicro}}
	for _, s := range steps {
		if !c.want(s.id) {
			continue
		}
		if s.f == nil {
			secs = append(secs, notBuilt(s.id))
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: %s …\n", s.id)
		sec, err := s.f(ctx, c, oldP, newP)
		if err != nil {
			sec = Section{ID: s.id, Title: s.id, Body: "**failed:** " + err.Error() + "\n", Summary: []string{fmt.Sprintf("| %s | failed: %s | | | |", s.id, err)}}
		}
		fmt.Fprintln(os.Stderr, strings.Join(sec.Summary, "\n"))
		secs = append(secs, sec)
	}
	doc := render(c, start, secs)
	if c.Out == "" {
		_, err := io.WriteString(os.Stdout, doc)
		return err
	}
	return os.WriteFile(c.Out, []byte(doc), 0o644)
}

func ensureCorpus(c Config) (string, string, error) {
	oldP, newP := filepath.Join(c.Dir, "2026-01-01.json"), filepath.Join(c.Dir, "2026-01-02.json")
	if _, err := os.Stat(newP); err == nil {
		return oldP, newP, nil
	}
	if err := os.MkdirAll(c.Dir, 0o755); err != nil {
		return "", "", err
	}
	r := corpus.New(corpus.Config{Servers: c.Servers})
	for _, p := range []string{oldP, newP} {
		if p == newP {
			r.Advance()
		}
		f, err := os.Create(p)
		if err != nil {
			return "", "", err
		}
		if _, err := r.WriteSnapshot(f); err != nil {
			f.Close()
			return "", "", err
		}
		if err := f.Close(); err != nil {
			return "", "", err
		}
	}
	return oldP, newP, nil
}

func machine() string {
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		var kb int64
		fmt.Sscanf(strings.TrimPrefix(strings.SplitN(string(b), "\n", 2)[0], "MemTotal:"), "%d", &kb)
		mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
	}
	cpu := ""
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "model name") {
				cpu = strings.TrimSpace(strings.SplitN(l, ":", 2)[1])
				break
			}
		}
	}
	return fmt.Sprintf("nproc %d (%s), %s RAM, %s/%s, %s", runtime.NumCPU(), cpu, mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:3], " ")
}

var loadStart string

func init() { loadStart = loadavg() }

func render(c Config, start time.Time, secs []Section) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# bench results\n\n")
	fmt.Fprintf(&b, "Command: `%s`\n\n", c.Command)
	fmt.Fprintf(&b, "Date: %s (took %s)  \nMachine: %s  \nLoad average (1/5/15 min): %s at start, %s at end — other engineers' tests share this 2-core box; ratios compare arms measured in the same run.\n\n",
		start.Format(time.RFC3339), time.Since(start).Round(time.Second), machine(), loadStart, loadavg())
	fmt.Fprintf(&b, "Corpus: `go run ./bench/gen -servers %d -out %s` (day 0 and day 1; see bench/README.md for the calibration).\n\n", c.Servers, c.Dir)
	b.WriteString("| benchmark | forum | baseline | ratio | target |\n|---|---|---|---|---|\n")
	for _, s := range secs {
		for _, r := range s.Summary {
			b.WriteString(r + "\n")
		}
	}
	b.WriteString("\n")
	for _, s := range secs {
		fmt.Fprintf(&b, "## %s\n\n%s\n", s.Title, s.Body)
	}
	return b.String()
}

// runPython runs the Python baseline and returns its output, wall time,
// peak RSS and CPU time (user+system).
func runPython(ctx context.Context, py string, args ...string) ([]byte, time.Duration, int64, time.Duration, error) {
	cmd := exec.CommandContext(ctx, py, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	wall := time.Since(t0)
	var rss int64
	var cpu time.Duration
	if cmd.ProcessState != nil {
		rss = maxRSS(cmd.ProcessState)
		cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	}
	if err != nil {
		return nil, wall, rss, cpu, fmt.Errorf("%s %v: %w: %s", py, args, err, errb.String())
	}
	return out.Bytes(), wall, rss, cpu, nil
}

func notBuilt(id string) Section {
	return Section{ID: id, Title: id, Body: "Not built.\n"}
}
