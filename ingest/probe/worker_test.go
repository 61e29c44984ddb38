package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/segmentio/kafka-go"
	"go.uber.org/zap/zaptest"

	"github.com/forum-mcp/forum/schema"
)

func requestMsgs(t *testing.T, reqs ...Request) []kafka.Message {
	t.Helper()
	var out []kafka.Message
	for i, r := range reqs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, kafka.Message{Topic: schema.TopicProbeRequests, Offset: int64(i), Key: []byte(r.Server), Value: b})
	}
	return out
}

// The per-host limit holds across the Worker's concurrency: a batch of 40
// requests for one host, 32 probes in flight, never more than 3 on the host.
func TestWorkerPerHostLimitAcrossConcurrency(t *testing.T) {
	var cur, peak atomic.Int32
	h := mcp.NewStreamableHTTPHandler(sdkHandlerFunc, &mcp.StreamableHTTPOptions{JSONResponse: true})
	ts := handlerServer(t, func(w http.ResponseWriter, r *http.Request) {
		n := cur.Add(1)
		defer cur.Add(-1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(5 * time.Millisecond)
		h.ServeHTTP(w, r)
	})
	var reqs []Request
	for i := range 40 {
		reqs = append(reqs, Request{Server: fmt.Sprintf("io.example/s%d", i), URL: fmt.Sprintf("%s/r%d", ts.URL, i), Transport: TransportStreamableHTTP})
	}
	// The handler's deferred decrement can trail the response the client
	// already read, so two back-to-back requests of one probe may overlap
	// by a moment: the server can see up to 2× the limit, never more.
	const limit = 3
	w := &Worker{Prober: newTestProber(t, WithPerHostLimit(limit)), Concurrency: 32, Log: zaptest.NewLogger(t)}
	w.setDefaults()
	out := w.probeBatch(context.Background(), requestMsgs(t, reqs...))
	if len(out) != 40 {
		t.Fatalf("%d results", len(out))
	}
	for _, m := range out {
		var c Check
		if err := json.Unmarshal(m.Value, &c); err != nil || m.Topic != schema.TopicHealthChecks || c.Outcome != OutcomeOK {
			t.Fatalf("%s: %s %v", m.Topic, c.Outcome, err)
		}
	}
	if p := peak.Load(); p > 2*limit {
		t.Fatalf("peak %d requests in flight on one host, limit %d probes", p, limit)
	}
	t.Logf("peak requests in flight on the host: %d (limit %d probes)", peak.Load(), limit)
}

func TestWorkerMetrics(t *testing.T) {
	ok := streamableServer(t, sdkServer(0, 0), nil)
	limited, _ := refuse(429, "30", "")(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	w := &Worker{Prober: newTestProber(t), Metrics: m}
	w.setDefaults()
	msgs := requestMsgs(t,
		Request{Server: "a/ok", URL: ok.URL},
		Request{Server: "a/limited", URL: limited + "/1"},
		Request{Server: "a/limited", URL: limited + "/2"}, // in back-off by the time it runs, or refused itself
	)
	msgs = append(msgs, kafka.Message{Topic: schema.TopicProbeRequests, Value: []byte(`{"server":""}`)})
	w.Concurrency = 1 // in order, so the second limited request meets the back-off
	out := w.probeBatch(context.Background(), msgs)
	if out[3].Topic != schema.TopicDLQ {
		t.Fatalf("bad request went to %s", out[3].Topic)
	}
	for _, tc := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{m.Checks.WithLabelValues("ok", "none"), 1},
		{m.Checks.WithLabelValues("rate_limited", "rate_limited"), 1},
		{m.Checks.WithLabelValues("rate_limited", "backoff"), 1},
		{m.BatchChecks.WithLabelValues("rate_limited"), 2},
		{m.BatchChecks.WithLabelValues("ok"), 1},
		{m.RateLimitedRatio, 2.0 / 3},
		{m.WindowChecks, 3},
		{m.BackoffHosts, 1},
		{m.BadRequests, 1},
		{m.Batches, 1},
	} {
		if got := metricValue(t, tc.c); got != tc.want {
			t.Errorf("%s = %v, want %v", describe(tc.c), got, tc.want)
		}
	}
	// Two checks are too few to name a host: both count under "other"
	// (TestMetricsHostCardinality shows heavy hosts named).
	if got := metricValue(t, m.HostChecks.WithLabelValues(OtherHost, "rate_limited")); got != 2 {
		t.Errorf("other rate_limited = %v, want 2", got)
	}
	// Everything registered is named forum_probe_*.
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "forum_probe_") {
			t.Errorf("metric %s is not forum_probe_*", mf.GetName())
		}
	}
	// The next batch replaces the batch gauges; the counters add up.
	w.probeBatch(context.Background(), requestMsgs(t, Request{Server: "a/ok", URL: ok.URL}))
	if got := metricValue(t, m.BatchChecks.WithLabelValues("ok")); got != 1 {
		t.Errorf("batch ok = %v after the second batch", got)
	}
	if n := seriesCount(m.BatchChecks); n != 1 {
		t.Errorf("%d batch outcome series, want only ok's", n)
	}
	if got := metricValue(t, m.Checks.WithLabelValues("ok", "none")); got != 2 {
		t.Errorf("ok total = %v", got)
	}
}

// metricValue is the value of the one counter or gauge c collects.
func metricValue(t *testing.T, c prometheus.Collector) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 1)
	go func() { c.Collect(ch); close(ch) }()
	var vals []float64
	for m := range ch {
		var pb dto.Metric
		if err := m.Write(&pb); err != nil {
			t.Fatal(err)
		}
		switch {
		case pb.Counter != nil:
			vals = append(vals, pb.Counter.GetValue())
		case pb.Gauge != nil:
			vals = append(vals, pb.Gauge.GetValue())
		}
	}
	if len(vals) != 1 {
		t.Fatalf("%s: %d values", describe(c), len(vals))
	}
	return vals[0]
}

// seriesCount is how many series c collects.
func seriesCount(c prometheus.Collector) int {
	ch := make(chan prometheus.Metric)
	go func() { c.Collect(ch); close(ch) }()
	n := 0
	for range ch {
		n++
	}
	return n
}

func describe(c prometheus.Collector) string {
	ch := make(chan *prometheus.Desc, 1)
	c.Describe(ch)
	return (<-ch).String()
}

// Host labels stay bounded however many hosts there are, and the heavy
// hosts (the gateways our load can hurt) are the ones named.
func TestMetricsHostCardinality(t *testing.T) {
	m := NewMetrics(nil)
	for batch := range 50 {
		var cs []Check
		for i := range 200 { // 10,000 one-off hosts in all
			cs = append(cs, Check{RemoteURL: fmt.Sprintf("https://h%d-%d.example/mcp", batch, i), Outcome: OutcomeOK})
		}
		for g := range 5 { // five gateways, 20 remotes each per batch
			for i := range 20 {
				cs = append(cs, Check{RemoteURL: fmt.Sprintf("https://gw%d.example/%d", g, i), Outcome: OutcomeRateLimited})
			}
		}
		m.ObserveBatch(cs, 0, time.Second, 0)
	}
	// Two outcomes were recorded, so at most two series per host value.
	if n := seriesCount(m.HostChecks); n > 2*(2*MetricsTopHosts+1) {
		t.Fatalf("%d host series, bound %d", n, 2*(2*MetricsTopHosts+1))
	}
	if got := metricValue(t, m.HostChecks.WithLabelValues(OtherHost, "ok")); got != 50*200 {
		t.Errorf("other: %v ok checks, want %d", got, 50*200)
	}
	for g := range 5 {
		h := fmt.Sprintf("gw%d.example", g)
		if got := metricValue(t, m.HostChecks.WithLabelValues(h, "rate_limited")); got != 50*20 {
			t.Errorf("%s: %v rate_limited checks under its own name, want %d", h, got, 50*20)
		}
	}
}

func TestMetricsRateLimitedWindow(t *testing.T) {
	m := NewMetrics(nil)
	batch := func(n int, o Outcome) {
		cs := make([]Check, n)
		for i := range cs {
			cs[i] = Check{RemoteURL: "https://x.example/mcp", Outcome: o}
		}
		m.ObserveBatch(cs, 0, 0, 0)
	}
	batch(10, OutcomeRateLimited)
	if got := metricValue(t, m.RateLimitedRatio); got != 1 {
		t.Fatalf("ratio %v after 10 of 10", got)
	}
	batch(MetricsWindow-10, OutcomeOK)
	if got := metricValue(t, m.RateLimitedRatio); got != 10.0/MetricsWindow {
		t.Fatalf("ratio %v, want %v", got, 10.0/MetricsWindow)
	}
	batch(10, OutcomeOK) // the ten rate_limited checks slide out
	if got := metricValue(t, m.RateLimitedRatio); got != 0 {
		t.Fatalf("ratio %v after the window slid past the spike", got)
	}
	if got := metricValue(t, m.WindowChecks); got != MetricsWindow {
		t.Fatalf("window %v", got)
	}
}
