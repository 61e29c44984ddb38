package probe_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/bus"
	"github.com/forum-mcp/forum/bus/stage"
	"github.com/forum-mcp/forum/ingest/probe"
	"github.com/forum-mcp/forum/processors/history"
	"github.com/forum-mcp/forum/processors/method"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

type pingIn struct {
	Q string `json:"q" jsonschema:"what to ping"`
}

// TestScheduledProbesReachTheStore runs the probe stage for real: scheduler
// -> probe.requests (embedded broker) -> prober workers -> health.checks ->
// history sink -> DuckDB, against a real go-sdk MCP server and a dead port.
func TestScheduledProbesReachTheStore(t *testing.T) {
	log := zaptest.NewLogger(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	srv := mcp.NewServer(&mcp.Implementation{Name: "live", Version: "1.0.0"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "ping", Description: "Answers pong to whatever it is sent."},
		func(context.Context, *mcp.CallToolRequest, pingIn) (*mcp.CallToolResult, any, error) {
			return nil, nil, nil
		})
	ts := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	defer ts.Close()

	b, err := bus.StartEmbedded(filepath.Join(t.TempDir(), "kafka"), 0, log)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var topics []bus.TopicSpec
	for _, tp := range schema.TopicNames() {
		topics = append(topics, bus.TopicSpec{Name: tp, Partitions: 2})
	}
	if err := bus.EnsureTopics(ctx, b.Addrs(), topics, log); err != nil {
		t.Fatal(err)
	}
	st, err := duckdb.Open(ctx, filepath.Join(t.TempDir(), "s.duckdb"), log)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(name, detail string) store.Record {
		return store.Record{Name: name, Version: "1.0.0", Namespace: schema.Namespace(name), ContentSHA256: name, ObservedAt: t0, Status: "active", IsLatest: true, Server: detail}
	}
	recs := []store.Record{
		rec("io.example/live", `{"name":"io.example/live","remotes":[{"type":"streamable-http","url":"`+ts.URL+`"}]}`),
		rec("io.example/down", `{"name":"io.example/down","remotes":[{"type":"streamable-http","url":"http://127.0.0.1:1/mcp"}]}`),
		rec("io.example/local", `{"name":"io.example/local","packages":[{"registryType":"npm","identifier":"x"}]}`),
		rec("io.example/template", `{"name":"io.example/template","remotes":[{"type":"sse","url":"https://{tenant}.example.com/sse"}]}`),
	}
	if err := st.InsertRecords(ctx, recs); err != nil {
		t.Fatal(err)
	}

	w := bus.NewWriter(b.Addrs(), log)
	defer w.Close()
	now := t0
	statePath := filepath.Join(t.TempDir(), "sched.json")
	sched := &probe.Scheduler{Lister: st, W: w, Interval: time.Hour, StatePath: statePath, Log: log, Now: func() time.Time { return now }}
	if n, err := sched.RunOnce(ctx); err != nil || n > 3 {
		t.Fatalf("first pass: %d requests, %v", n, err)
	}
	afterFirst, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	now = t0.Add(time.Hour)
	started := time.Now() // the probes run on the wall clock, after this
	n, err := sched.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// One hour covered since the first pass: each remote exactly once, unless
	// its slot fell inside the first pass's one-second window.
	if n < 2 || n > 3 {
		t.Fatalf("second pass published %d requests, want one per remote (3)", n)
	}
	if n2, _ := sched.RunOnce(ctx); n2 != 0 {
		t.Fatalf("a pass at the same instant must publish nothing, got %d", n2)
	}

	pr := probe.New(probe.WithAllow(netip.MustParsePrefix("127.0.0.0/8")), probe.WithTimeout(5*time.Second), probe.WithLogger(log))
	worker := &probe.Worker{Prober: pr, Brokers: b.Addrs(), Log: log}
	sink, err := stage.New((&history.Sink{W: st, Weights: method.Embedded().Weights, Log: log}).Config(b.Addrs(), nil))
	if err != nil {
		t.Fatal(err)
	}
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	go worker.Run(rctx)
	go sink.Run(rctx)

	want := map[string]string{"io.example/live": "ok", "io.example/down": "unreachable", "io.example/template": "handshake_failed"}
	got := map[string]store.HealthCheck{}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && len(got) < n {
		for name := range want {
			hs, err := st.LatestHealth(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) == 1 {
				got[name] = hs[0]
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(got) != n {
		t.Fatalf("stored checks for %d servers, want %d: %v", len(got), n, got)
	}
	for name, h := range got {
		if h.Outcome != want[name] {
			t.Errorf("%s: outcome %s (%s), want %s", name, h.Outcome, h.ErrorClass, want[name])
		}
		var c probe.Check
		if err := json.Unmarshal([]byte(h.Check), &c); err != nil {
			t.Fatal(err)
		}
		// The slot is kept and names the check; observed_at is when the
		// probe ran (the worker's clock), not the slot.
		if c.ScheduledAt.Before(t0) || !c.ScheduledAt.Before(t0.Add(time.Hour+time.Second)) {
			t.Errorf("%s: scheduled_at %v is not its slot time", name, c.ScheduledAt)
		}
		if h.ObservedAt.Before(started.Truncate(time.Millisecond)) || h.ObservedAt.After(time.Now()) {
			t.Errorf("%s: observed_at %v is not when the probe ran (after %v)", name, h.ObservedAt, started)
		}
		if h.ID != probe.CheckID(name, c.RemoteURL, c.ScheduledAt) {
			t.Errorf("%s: id %s is not CheckID of the slot", name, h.ID)
		}
	}

	// The scheduler crashes before its checkpoint: the same slots go out
	// again and are probed again, later. Each check is overwritten (same
	// id, the new run's observed_at), never duplicated.
	if err := os.WriteFile(statePath, afterFirst, 0o644); err != nil {
		t.Fatal(err)
	}
	if n2, err := sched.RunOnce(ctx); err != nil || n2 != n {
		t.Fatalf("republished %d requests (%v), want the same %d", n2, err, n)
	}
	for time.Now().Before(deadline) {
		moved := 0
		for name, first := range got {
			hs, err := st.LatestHealth(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			if len(hs) == 1 && hs[0].ObservedAt.After(first.ObservedAt) {
				moved++
			}
		}
		if moved == len(got) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for name, first := range got {
		all, err := st.HealthChecks(ctx, store.HealthQuery{Server: name, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != 1 || all[0].ID != first.ID || !all[0].ObservedAt.After(first.ObservedAt) {
			t.Errorf("%s after a redelivery: %d checks (want the one %s, re-stamped after %v): %+v", name, len(all), first.ID, first.ObservedAt, all)
		}
	}
	if live, ok := got["io.example/live"]; ok {
		var c probe.Check
		if err := json.Unmarshal([]byte(live.Check), &c); err != nil {
			t.Fatal(err)
		}
		if !c.ToolsListed || len(c.Tools) != 1 || c.Tools[0].Name != "ping" || c.ServerInfo == nil || c.ServerInfo.Name != "live" || c.AuthKind != probe.AuthNone {
			t.Errorf("live check: %+v", c)
		}
	}
	if _, ok := got["io.example/local"]; ok {
		t.Error("a local-only server was probed")
	}
}

// Hosts with one remote each spread across the whole interval; a single
// target gets one slot per interval at its offset. (SPEC §1.3 now spreads a
// host's remotes evenly rather than by a hash of each remote: see
// TestHostRemotesSpreadEvenly for one host with many remotes.)
func TestOffsetsSpreadAcrossTheInterval(t *testing.T) {
	const n = 2000
	var targets []probe.Target
	for i := range n {
		targets = append(targets, probe.Target{Server: "io.example/s", URL: fmt.Sprintf("https://h%d.example/mcp", i)})
	}
	buckets := make([]int, 12)
	for _, off := range probe.Offsets(targets, time.Hour) {
		if off < 0 || off >= time.Hour {
			t.Fatalf("offset %v outside the interval", off)
		}
		buckets[int(off/(5*time.Minute))]++
	}
	for i, c := range buckets {
		if c < n/12/2 || c > n/12*2 {
			t.Errorf("5-minute bucket %d holds %d of %d probes: not spread", i, c, n)
		}
	}
	tg := []probe.Target{{Server: "a/b", URL: "https://x"}}
	off := probe.Offsets(tg, time.Hour)[0]
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if d := probe.DueIn(off, time.Hour, t0, t0.Add(3*time.Hour)); len(d) != 3 {
		t.Errorf("3 hours hold %d slots, want 3", len(d))
	}
	if d := probe.DueIn(off, time.Hour, t0, t0.Add(time.Hour)); len(d) != 1 || !d[0].Equal(t0.Add(off)) {
		t.Errorf("slot = %v", d)
	}
}
