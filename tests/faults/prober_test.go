package faults

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/segmentio/kafka-go"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/schema"
)

// mcpFarm is a real MCP server (the official Go SDK) answering on one path
// per remote, counting the initialize requests each path receives and
// holding each for delay, so probes are in flight long enough to kill a
// prober in the middle of them.
type mcpFarm struct {
	srv   *httptest.Server
	delay time.Duration

	mu       sync.Mutex
	inits    map[string]int // path → initialize requests
	inFlight int
}

func newFarm(t *testing.T, delay time.Duration) *mcpFarm {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "fault-farm", Version: "1.0.0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: "Echo the text back."}, func(_ context.Context, _ *mcp.CallToolRequest, in struct {
		Text string `json:"text"`
	}) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: in.Text}}}, nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	f := &mcpFarm{delay: delay, inits: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte(`"initialize"`)) {
				f.mu.Lock()
				f.inits[r.URL.Path]++
				f.inFlight++
				f.mu.Unlock()
				defer func() {
					f.mu.Lock()
					f.inFlight--
					f.mu.Unlock()
				}()
				time.Sleep(f.delay)
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *mcpFarm) url(i int) string { return fmt.Sprintf("%s/mcp/%d", f.srv.URL, i) }

func (f *mcpFarm) snapshot() (map[string]int, int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := make(map[string]int, len(f.inits))
	for k, v := range f.inits {
		m[k] = v
	}
	return m, f.inFlight
}

// proberSigkill: two probers split the work of one scheduler as one
// consumer group, no remote is probed twice in a slot, and a prober
// SIGKILLed with probes in flight loses none of them — the other redoes
// them (the check ids, derived from the slot, absorb the redone ones).
func (e *env) proberSigkill(t *testing.T) {
	const remotes = 30
	const interval = 30 * time.Second
	s := e.fresh(t, "prober")
	farm := newFarm(t, 2*time.Second)

	// The remotes reach the store's latest view through the pipeline.
	dir := t.TempDir()
	var entries []map[string]any
	for i := range remotes {
		entries = append(entries, map[string]any{
			"server": map[string]any{"name": fmt.Sprintf("io.github.fault/remote-%02d", i), "description": "A fault-test remote.", "version": "1.0.0",
				"remotes": []map[string]any{{"type": "streamable-http", "url": farm.url(i)}}},
			"_meta": map[string]any{"io.modelcontextprotocol.registry/official": map[string]any{"status": "active", "isLatest": true,
				"publishedAt": "2026-11-01T00:00:00Z", "updatedAt": "2026-11-01T00:00:00Z"}},
		})
	}
	b, _ := json.Marshal(entries)
	if err := os.WriteFile(filepath.Join(dir, "2026-11-01.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	proc := s.process(t, "")
	defer proc.stop()
	r := startProc(t, e.bin, s.env(), "ingest", "--role", "replay", "--snapshots", dir, "--data-dir", t.TempDir(), "--log-level", "warn")
	if err := r.wait(2 * time.Minute); err != nil {
		t.Fatalf("replay: %v\n%s", err, r.tail())
	}
	waitFor(t, 2*time.Minute, "the remotes in the latest view", func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		n, err := s.count(ctx, "servers_latest")
		return err == nil && n >= remotes
	})

	probeArgs := func(role, ops string) []string {
		return []string{"ingest", "--role", role, "--data-dir", t.TempDir(), "--probe-interval", interval.String(), "--probe-allow", "127.0.0.0/8",
			"--probe-per-host", "64", "--probe-concurrency", "16", "--ops-listen", ops, "--log-level", "warn"}
	}
	opsA, opsB := freeAddr(t), freeAddr(t)
	a := startProc(t, e.bin, s.env(), probeArgs("prober", opsA)...)
	bp := startProc(t, e.bin, s.env(), probeArgs("prober", opsB)...)
	defer bp.stop()
	sched := startProc(t, e.bin, s.env(), probeArgs("probe-scheduler", freeAddr(t))...)
	defer sched.stop()

	// Phase 1: a full round (the scheduler's second tick covers a whole
	// interval), done by both probers.
	brokers := []string{e.svc.brokers()}
	waitFor(t, 3*time.Minute, "a full round of probe requests done", func() bool {
		reqs := requests(t, brokers)
		_, inFlight := farm.snapshot()
		return len(reqs) >= remotes && inFlight == 0 && groupLag(brokers) == 0
	})
	reqs := requests(t, brokers)
	inits, _ := farm.snapshot()
	slots := map[string][]time.Time{}
	for _, q := range reqs {
		slots[q.URL] = append(slots[q.URL], q.ObservedAt)
	}
	twice := 0
	for url, at := range slots {
		path := strings.TrimPrefix(url, farm.srv.URL)
		if inits[path] != len(at) {
			twice++
			t.Errorf("%s: %d slots, probed %d times", path, len(at), inits[path])
		}
		slices.SortFunc(at, func(x, y time.Time) int { return x.Compare(y) })
		for i := 1; i < len(at); i++ {
			if at[i].Sub(at[i-1]) < interval {
				t.Errorf("%s: two slots %s apart, within one interval (%s)", path, at[i].Sub(at[i-1]), interval)
			}
		}
	}
	doneA, doneB := checksDone(opsA), checksDone(opsB)
	if doneA == 0 || doneB == 0 {
		t.Errorf("the work was not split: prober A did %d checks, prober B %d", doneA, doneB)
	}
	t.Logf("two probers: %d requests over %d remotes, A did %d checks and B %d, %d remotes probed more than their slots", len(reqs), len(slots), doneA, doneB, twice)
	split := fmt.Sprintf("%d requests, A %d / B %d checks, %d probed twice in a slot", len(reqs), doneA, doneB, twice)

	// Phase 2: the next round goes out; prober A is killed with probes in
	// flight, and the scheduler stops so the request set is fixed.
	before := len(reqs)
	waitFor(t, 2*time.Minute, "the next round in flight", func() bool {
		_, inFlight := farm.snapshot()
		return inFlight >= 4 && len(requests(t, brokers)) > before
	})
	_, inFlight := farm.snapshot()
	killedAt := time.Now()
	a.kill()
	sched.stop()
	waitFor(t, 3*time.Minute, "prober B to redo prober A's requests", func() bool {
		_, n := farm.snapshot()
		return n == 0 && groupLag(brokers) == 0 && !bp.exited()
	})
	reqs = requests(t, brokers)
	ids := map[string]bool{}
	for _, q := range reqs {
		ids[probe.CheckID(q.Server, q.URL, q.ObservedAt)] = true
	}
	var stored map[string]bool
	waitFor(t, 2*time.Minute, "every check stored", func() bool {
		stored = healthCheckIDs(t, s)
		for id := range ids {
			if !stored[id] {
				return false
			}
		}
		return true
	})
	recovered := time.Since(killedAt)
	lost, extra := 0, 0
	for id := range ids {
		if !stored[id] {
			lost++
		}
	}
	for id := range stored {
		if !ids[id] {
			extra++
		}
	}
	inits, _ = farm.snapshot()
	handshakes := 0
	for _, n := range inits {
		handshakes += n
	}
	redone := handshakes - len(ids)
	if lost > 0 || extra > 0 {
		t.Errorf("health checks: %d requests, %d stored: %d lost, %d extra", len(ids), len(stored), lost, extra)
	}
	if redone <= 0 {
		t.Errorf("no probe was redone after the SIGKILL (%d in flight at the kill): the kill proved nothing", inFlight)
	}
	t.Logf("prober A SIGKILLed with %d probes in flight: %d requests, %d checks stored, %d probes redone by B, recovered in %s", inFlight, len(ids), len(stored), redone, recovered.Round(100*time.Millisecond))
	e.report.add(row{scenario: "two probers; one SIGKILLed with probes in flight", faults: fmt.Sprintf("1 SIGKILL, %d probes in flight (round 1: %s)", inFlight, split),
		messages: int64(len(reqs)), rows: len(stored), lost: lost, duplicated: extra, absorbed: int64(redone), recover: recovered.Round(100 * time.Millisecond).String()})
}

// requests reads every probe request on the bus.
func requests(t *testing.T, brokers []string) []schema.ProbeRequest {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := bus.Partitions(ctx, brokers, schema.TopicProbeRequests)
	if err != nil {
		return nil
	}
	var out []schema.ProbeRequest
	for p := range n {
		end, err := bus.EndOffset(ctx, brokers, schema.TopicProbeRequests, p)
		if err != nil || end == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: schema.TopicProbeRequests, Partition: p, MaxWait: 100 * time.Millisecond})
		for {
			m, err := r.FetchMessage(ctx)
			if err != nil {
				t.Fatalf("reading probe requests: %v", err)
			}
			if q, err := schema.Decode[schema.ProbeRequest](m.Value); err == nil {
				out = append(out, q)
			}
			if m.Offset+1 >= end {
				break
			}
		}
		r.Close()
	}
	return out
}

func groupLag(brokers []string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := bus.Lag(ctx, brokers, probe.Group, []string{schema.TopicProbeRequests})
	if err != nil {
		return -1
	}
	return l
}

var checksTotal = regexp.MustCompile(`(?m)^forum_probe_checks_total\{[^}]*\} ([0-9.e+]+)$`)

// checksDone sums a prober's forum_probe_checks_total.
func checksDone(ops string) int {
	_, body := get(ops, "/metrics")
	n := 0.0
	for _, m := range checksTotal.FindAllStringSubmatch(body, -1) {
		v, _ := strconv.ParseFloat(m[1], 64)
		n += v
	}
	return int(n)
}

func healthCheckIDs(t *testing.T, s *scenario) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rows, err := s.conn.Query(ctx, "SELECT id FROM "+s.db+".health_checks FINAL")
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		out[id] = true
	}
	return out
}

func waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
