package harness

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/bench/diffbench"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

func init() { benchAPI = apiBench }

// apiBench is benchmark 4: the Huma API on a DuckDB store filled from the
// generated day-0 snapshot, under open-loop load on loopback.
func apiBench(ctx context.Context, c Config, oldP, _ string) (Section, error) {
	sec := Section{ID: "api", Title: "4. API under bounded loopback load"}
	dir, err := os.MkdirTemp("", "forum-bench-api-*")
	if err != nil {
		return sec, err
	}
	defer os.RemoveAll(dir)
	st, err := duckdb.Open(ctx, filepath.Join(dir, "forum.duckdb"), nil)
	if err != nil {
		return sec, err
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		return sec, err
	}
	fill := time.Now()
	ents, err := diffbench.ParallelLoad(oldP)
	if err != nil {
		return sec, err
	}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	recs := make([]store.Record, 0, len(ents))
	names := make([]string, 0, len(ents)/3)
	for _, e := range ents {
		recs = append(recs, store.Record{Name: e.Server.Name, Version: e.Server.Version, Namespace: schema.Namespace(e.Server.Name),
			ContentSHA256: e.ContentSHA256, ObservedAt: at, SnapshotID: "2026-01-01.json", Status: e.Status(), IsLatest: e.Meta.IsLatest,
			PublishedAt: e.Meta.PublishedAt, UpdatedAt: e.Meta.UpdatedAt, Description: e.Server.Description, Title: e.Server.Title, Server: string(e.Raw)})
		if e.Meta.IsLatest {
			names = append(names, e.Server.Name)
		}
	}
	for i := 0; i < len(recs); i += 10_000 {
		if err := st.InsertRecords(ctx, recs[i:min(i+10_000, len(recs))]); err != nil {
			return sec, fmt.Errorf("fill: %w", err)
		}
	}
	fillTook := time.Since(fill)
	// A small publication, for the trust route.
	trustN := 2000
	g := scorer.Generate(trustN, 1, at)
	seed := sha256.Sum256([]byte("forum bench"))
	key := ed25519.NewKeyFromSeed(seed[:])
	meta := scorer.Meta{PublicationID: scorer.PublicationID(at), ComputedAt: at}
	sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, key)
	if err != nil {
		return sec, err
	}
	if err := scorer.Store(ctx, st, nil, sealed); err != nil {
		return sec, err
	}
	trustNames := make([]string, 0, len(sealed.Records))
	for _, r := range sealed.Records {
		trustNames = append(trustNames, r.Server)
	}
	h, _ := api.New(api.Options{Store: st, Routes: []func(huma.API){api.TrustRoutes(api.TrustOptions{Store: st, PublicKey: key.Public().(ed25519.PublicKey)})}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return sec, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	var b strings.Builder
	fmt.Fprintf(&b, "Store: DuckDB file in a temp dir, filled with the %d records (%d servers) of `%s` via `InsertRecords` in %s, plus a publication of %d trust records (`scorer.Generate` population: Compute, Seal, `scorer.Store`). Server: `api.New` (Huma) with the trust routes, `net/http` on 127.0.0.1, in the harness process. Load: an open-loop generator (bench/harness/api.go): requests are scheduled at a fixed rate, each in its own goroutine, and latency is measured from the *scheduled* send time (no coordinated omission); keep-alive client. Offered rate %d req/s for %d s per route, random names. GOMAXPROCS %d: client and server share the 2 cores.\n\n",
		len(recs), len(names), filepath.Base(oldP), fillTook.Round(time.Millisecond), trustN, c.Rate, c.Secs, runtime.GOMAXPROCS(0))
	b.WriteString("| route | offered req/s | achieved req/s | ok | errors | p50 ms | p90 ms | p99 ms | max ms |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	type route struct {
		label string
		path  func(i int) string
		names []string
	}
	routes := []route{
		{"GET /v1/servers/{name}", func(i int) string { return "/v1/servers/" + url.PathEscape(names[i%len(names)]) }, names},
		{"GET /v1/servers/{name}/trust", func(i int) string { return "/v1/servers/" + url.PathEscape(trustNames[i%len(trustNames)]) + "/trust" }, trustNames},
		{"GET /healthz (floor: the HTTP stack alone)", func(int) string { return "/healthz" }, nil},
	}
	for _, rt := range routes {
		// Warm up and check the route answers 200.
		resp, err := http.Get(base + rt.path(0))
		if err != nil {
			return sec, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return sec, fmt.Errorf("%s: status %d", rt.label, resp.StatusCode)
		}
		cap := closedLoop(ctx, base, rt.path, 4, 3*time.Second)
		fmt.Fprintf(&b, "| %s, closed loop (4 clients back to back, 3 s: capacity) | — | %.0f | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", rt.label, cap.achieved, cap.ok, cap.errors, cap.p(0.5), cap.p(0.9), cap.p(0.99), cap.p(1))
		r := openLoop(ctx, base, rt.path, c.Rate, time.Duration(c.Secs)*time.Second)
		fmt.Fprintf(&b, "| %s | %d | %.0f | %d | %d | %.2f | %.2f | %.2f | %.2f |\n", rt.label, c.Rate, r.achieved, r.ok, r.errors, r.p(0.5), r.p(0.9), r.p(0.99), r.p(1))
		status := "met"
		if r.p(0.99) >= 5 || r.errors > 0 {
			status = "missed"
		}
		if strings.HasPrefix(rt.label, "GET /healthz") {
			sec.Summary = append(sec.Summary, fmt.Sprintf("| 4. floor: GET /healthz at %d req/s | p99 %.2f ms | | | — |", c.Rate, r.p(0.99)))
			continue
		}
		sec.Summary = append(sec.Summary, fmt.Sprintf("| 4. %s at %d req/s offered | p50 %.2f ms, p99 %.2f ms, %.0f req/s served, %d failed or shed; capacity %.0f req/s (closed loop, p50 %.1f ms) | offered %d req/s | %.3f× of offered | p99 < 5 ms: %s |", rt.label, c.Rate, r.p(0.5), r.p(0.99), r.achieved, r.errors, cap.achieved, cap.p(0.5), c.Rate, r.achieved/float64(c.Rate), status))
	}
	b.WriteString("\nFailed requests (timeouts after 10 s, non-200) and requests shed because 256 were already in flight count as infinite latency in the open-loop percentiles (shown as +Inf).\n")
	b.WriteString("\nSearch (api/search, FTS5) is not driven by this harness yet, so the search target (p99 < 20 ms) is not measured.\n")
	sec.Body = b.String()
	return sec, nil
}

type loadResult struct {
	lat      []float64 // ms, sorted
	ok       int
	errors   int
	achieved float64
}

func (r loadResult) p(q float64) float64 {
	if len(r.lat) == 0 {
		return 0
	}
	i := int(q * float64(len(r.lat)-1))
	return r.lat[i]
}

// openLoop sends GET base+path(i) at rate/s for d, each request on its own
// goroutine; latency counts from the scheduled time.
func openLoop(ctx context.Context, base string, path func(int) string, rate int, d time.Duration) loadResult {
	tr := &http.Transport{MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: time.Minute}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	n := int(d.Seconds() * float64(rate))
	lat := make([]float64, n)
	okv := make([]bool, n)
	interval := time.Second / time.Duration(rate)
	var wg sync.WaitGroup
	var inflight atomic.Int64
	const maxInflight = 256
	start := time.Now()
	for i := 0; i < n; i++ {
		sched := start.Add(time.Duration(i) * interval)
		if w := time.Until(sched); w > 0 {
			time.Sleep(w)
		}
		if ctx.Err() != nil {
			break
		}
		if inflight.Load() >= maxInflight { // shed: the server is far behind; keep the run bounded
			lat[i] = math.Inf(1)
			continue
		}
		inflight.Add(1)
		wg.Add(1)
		go func(i int) {
			defer inflight.Add(-1)
			defer wg.Done()
			resp, err := cl.Get(base + path(i*7919))
			if err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				okv[i] = resp.StatusCode == 200
			}
			lat[i] = float64(time.Since(sched)) / 1e6
			if !okv[i] {
				lat[i] = math.Inf(1)
			}
		}(i)
	}
	wg.Wait()
	el := time.Since(start)
	var r loadResult
	for i := range lat {
		if okv[i] {
			r.ok++
		} else {
			r.errors++
		}
	}
	sort.Float64s(lat)
	r.lat = lat
	r.achieved = float64(r.ok) / el.Seconds()
	return r
}

// closedLoop runs workers clients back to back for d: the route's capacity
// and its service time without queueing.
func closedLoop(ctx context.Context, base string, path func(int) string, workers int, d time.Duration) loadResult {
	tr := &http.Transport{MaxIdleConnsPerHost: workers}
	defer tr.CloseIdleConnections()
	cl := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	var mu sync.Mutex
	var r loadResult
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; time.Since(start) < d && ctx.Err() == nil; i += workers {
				t0 := time.Now()
				resp, err := cl.Get(base + path(i*7919))
				ok := false
				if err == nil {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					ok = resp.StatusCode == 200
				}
				ms := float64(time.Since(t0)) / 1e6
				mu.Lock()
				r.lat = append(r.lat, ms)
				if ok {
					r.ok++
				} else {
					r.errors++
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	sort.Float64s(r.lat)
	r.achieved = float64(r.ok) / time.Since(start).Seconds()
	return r
}
