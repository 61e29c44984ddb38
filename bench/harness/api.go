package harness

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
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
	"unicode"

	"github.com/danielgtaylor/huma/v2"

	"github.com/forum-mcp/forum/api"
	"github.com/forum-mcp/forum/api/pages"
	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/bench/diffbench"
	"github.com/forum-mcp/forum/processors/publish"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
	"github.com/forum-mcp/forum/sql/duckdb"
	"github.com/forum-mcp/forum/sql/store"
)

func init() { benchAPI = apiBench }

// pageRate is the offered rate of the HTML page routes (bounded below the
// JSON routes' rate: a page is several store reads and a render, and the
// question is its latency at a rate a public site of this size sees).
const pageRate = 100

// benchCategories are the categories of benchDoc that the classifier
// knows (the page refuses others).
var benchCategories = []string{"developer-tools", "productivity", "communication", "security", "ai-ml"}

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
	// A publication at registry scale (50k records), for the trust and
	// proof routes: a proof is read off the stored leaves of all 50k.
	trustN := 50_000
	g := scorer.Generate(trustN, 1, at)
	seed := sha256.Sum256([]byte("forum bench"))
	key := ed25519.NewKeyFromSeed(seed[:])
	meta := scorer.Meta{PublicationID: scorer.PublicationID(at), ComputedAt: at}
	sealed, err := scorer.Seal(scorer.Compute(g.Inputs, g.Sources, meta, nil), meta, key)
	if err != nil {
		return sec, err
	}
	if err := scorer.Publish(ctx, scorer.StoreOutput{W: st}, nil, sealed); err != nil {
		return sec, err
	}
	trustNames := make([]string, 0, len(sealed.Records))
	for _, r := range sealed.Records {
		trustNames = append(trustNames, r.Server)
	}

	// The search index over every latest entry (50k), built as the
	// Refresher does but from synthetic scores: a 50k publication takes
	// minutes to compute (benchmark 2), and ranking cost does not depend on
	// the score values.
	var docs []search.Doc
	for _, e := range ents {
		if e.Meta.IsLatest {
			docs = append(docs, benchDoc(e.Server.Name, e.Server.Title, e.Server.Description))
		}
	}
	// The decoded snapshot and the inserted rows are the harness's, not the
	// server's: drop them so the collector does not scan them under load.
	nRecs := len(recs)
	ents, recs = nil, nil
	idxStart := time.Now()
	snap, err := search.Build(ctx, "pub-bench", docs)
	if err != nil {
		return sec, err
	}
	idxTook := time.Since(idxStart)
	idx := &search.Index{}
	idx.Swap(snap)
	defer snap.Close()
	queries := searchQueries(docs, 4096)
	// Service time in process, one query at a time, before any load: the
	// first pass reads the postings of every term Build did not prewarm
	// (cold), the second finds them cached (warm).
	passes := [2]loadResult{}
	for i := range passes {
		for _, q := range queries[:1000] {
			t0 := time.Now()
			if _, err := idx.Search(ctx, q, search.DefaultLimit, nil); err != nil {
				return sec, fmt.Errorf("search %q: %w", q, err)
			}
			passes[i].lat = append(passes[i].lat, float64(time.Since(t0))/1e6)
		}
		sort.Float64s(passes[i].lat)
	}

	// Two servers on the same store: the read models (loaded before
	// serving, as a restarted process would be before its first request
	// is answered from them) and the store path they replace.
	pub := key.Public().(ed25519.PublicKey)
	servers := api.NewServerModel(st, nil)
	trustModel := api.NewTrustModel(st, nil)
	modelStart := time.Now()
	if err := servers.Refresh(ctx); err != nil {
		return sec, fmt.Errorf("server model: %w", err)
	}
	serverModelTook := time.Since(modelStart)
	modelStart = time.Now()
	if err := trustModel.Refresh(ctx); err != nil {
		return sec, fmt.Errorf("trust model: %w", err)
	}
	trustModelTook := time.Since(modelStart)
	if servers.Len() != len(names) || trustModel.Len() != len(trustNames) {
		return sec, fmt.Errorf("read models hold %d servers and %d records, want %d and %d", servers.Len(), trustModel.Len(), len(names), len(trustNames))
	}
	h, _ := api.New(api.Options{Store: st, Servers: servers, Routes: []func(huma.API){
		api.TrustRoutes(api.TrustOptions{Store: st, PublicKey: pub, Model: trustModel}),
		api.SearchRoutes(api.SearchOptions{Index: idx})}})
	hStore, _ := api.New(api.Options{Store: st, NoReadModel: true, Routes: []func(huma.API){
		api.TrustRoutes(api.TrustOptions{Store: st, PublicKey: pub, NoReadModel: true})}})
	// The pages (api/pages) in front of the API, as NewServer mounts them:
	// the same store, search index and read models.
	h = pages.New(api.PagesOptions(st, idx, servers, trustModel, nil, nil, nil)).Mount(h)
	base, stop, err := serveLoopback(h)
	if err != nil {
		return sec, err
	}
	defer stop()
	// The proof as it was answered before the leaves were stored: the
	// whole publication read and re-canonicalised per request
	// (scorer.FromStore), for the ratio.
	before := http.NewServeMux()
	before.Handle("/", hStore)
	before.HandleFunc("GET /before/proof/{name}", func(w http.ResponseWriter, r *http.Request) {
		row, err := st.GetPublication(r.Context(), sealed.Row.ID)
		if err == nil {
			var recs []store.TrustRecord
			if recs, err = st.PublicationRecords(r.Context(), row.ID); err == nil {
				var p *publish.Publication
				if p, err = scorer.FromStore(row, recs); err == nil {
					_, _, err = p.Proof(r.PathValue("name"))
				}
			}
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("{}"))
	})
	baseStore, stopStore, err := serveLoopback(before)
	if err != nil {
		return sec, err
	}
	defer stopStore()

	var b strings.Builder
	fmt.Fprintf(&b, "Store: DuckDB file in a temp dir, filled with the %d records (%d servers) of `%s` via `InsertRecords` in %s, plus a publication of %d trust records (`scorer.Generate` population: Compute, Seal, `scorer.Store`). "+
		"Read models (api.ServerModel, api.TrustModel) loaded before serving: servers in %s, trust records in %s. "+
		"Search: `search.Build` over the %d latest entries (name, title, description; synthetic score, flags, last check and categories from a hash of the name) in %s; %d queries drawn from the corpus vocabulary (single terms, 2–3 terms, namespace labels). "+
		"Server: `api.New` (Huma) with the trust and search routes, `net/http` on 127.0.0.1, in the harness process; the store-path arms run on a second listener with `NoReadModel` (the code before the read models). "+
		"Load: an open-loop generator (bench/harness/api.go): requests are scheduled at a fixed rate, each in its own goroutine, and latency is measured from the *scheduled* send time (no coordinated omission); keep-alive client. Offered rate %d req/s for %d s per route, random names. "+
		"GOMAXPROCS %d: **the load generator shares the cores with the server** (and with whatever else runs on the box), so absolute latencies include the client's CPU; compare each route with the /healthz floor of the same run.\n\n",
		nRecs, len(names), filepath.Base(oldP), fillTook.Round(time.Millisecond), trustN, serverModelTook.Round(time.Millisecond), trustModelTook.Round(time.Millisecond),
		len(docs), idxTook.Round(time.Millisecond), len(queries), c.Rate, c.Secs, runtime.GOMAXPROCS(0))
	type route struct {
		label  string
		base   string
		path   func(i int) string
		target float64 // p99 ms; 0: the floor
		id     string
		rate   int // offered req/s; 0: c.Rate
	}
	serverPath := func(i int) string { return "/v1/servers/" + url.PathEscape(names[i%len(names)]) }
	trustPath := func(i int) string { return "/v1/servers/" + url.PathEscape(trustNames[i%len(trustNames)]) + "/trust" }
	proofPath := func(i int) string { return "/v1/servers/" + url.PathEscape(trustNames[i%len(trustNames)]) + "/proof" }
	proofBefore := func(i int) string { return "/before/proof/" + url.PathEscape(trustNames[i%len(trustNames)]) }
	routes := []route{
		{"GET /healthz (floor: the HTTP stack alone)", base, func(int) string { return "/healthz" }, 0, "floor", 0},
		{"GET /v1/servers/{name}", base, serverPath, 5, "servers", 0},
		{"GET /v1/servers/{name}/trust", base, trustPath, 5, "trust", 0},
		{"GET /v1/search?q=", base, func(i int) string { return "/v1/search?q=" + url.QueryEscape(queries[i%len(queries)]) }, 20, "search", 0},
		{"GET /v1/servers/{name}/proof (50k-record publication)", base, proofPath, 20, "proof", 0},
		{"GET /v1/servers/{name}, store path (before)", baseStore, serverPath, 5, "servers-store", 0},
		{"GET /v1/servers/{name}/trust, store path (before)", baseStore, trustPath, 5, "trust-store", 0},
		{"proof by re-canonicalising the 50k publication per request (before)", baseStore, proofBefore, 20, "proof-before", 0},
		// The HTML pages: a server page reads its record, registry entry,
		// drift events, incidents and 30 days of health checks from the
		// store and renders them; the leaderboard renders the index's top
		// 50 (category filter every other request). Offered at PageRate.
		{"page GET /servers/{name} (HTML)", base, func(i int) string { return pages.ServerPath(trustNames[i%len(trustNames)]) }, 50, "page-server", pageRate},
		{"page GET / (leaderboard, HTML)", base, func(i int) string {
			if i%2 == 1 {
				return "/?category=" + benchCategories[i%len(benchCategories)]
			}
			return "/"
		}, 20, "page-leaderboard", pageRate},
	}
	type row struct {
		route
		cap, open loadResult
		rate      int           // offered req/s
		gcs       uint32        // collections during the open-loop run
		gcPause   time.Duration // their stop-the-world pauses
		heapMB    float64       // live heap after the route's GC
	}
	var rows []row
	for _, rt := range routes {
		if !c.wantRoute(rt.id) {
			continue
		}
		// Warm up and check the route answers 200.
		for i := 0; i < 8; i++ {
			resp, err := http.Get(rt.base + rt.path(i*7919))
			if err != nil {
				return sec, err
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				return sec, fmt.Errorf("%s: status %d: %s", rt.label, resp.StatusCode, body)
			}
		}
		runtime.GC()
		r := row{route: rt}
		if rt.id == "proof-before" {
			// Hundreds of 50k-record re-canonicalisations in flight would
			// need tens of GB: one client back to back is its capacity,
			// and that is all it is measured at.
			r.cap = closedLoop(ctx, rt.base, rt.path, 1, 5*time.Second)
			r.open, r.rate = r.cap, c.Rate
			rows = append(rows, r)
			continue
		}
		r.cap = closedLoop(ctx, rt.base, rt.path, 4, 3*time.Second)
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		rate := c.Rate
		if rt.rate > 0 {
			rate = min(rt.rate, c.Rate)
		}
		r.open = openLoop(ctx, rt.base, rt.path, rate, time.Duration(c.Secs)*time.Second)
		r.rate = rate
		runtime.ReadMemStats(&m1)
		r.gcs, r.gcPause, r.heapMB = m1.NumGC-m0.NumGC, time.Duration(m1.PauseTotalNs-m0.PauseTotalNs), float64(m0.HeapAlloc)/(1<<20)
		rows = append(rows, r)
	}
	floor := rows[0].open
	ratio := func(a, f float64) string {
		if math.IsInf(a, 1) {
			return "∞"
		}
		if f <= 0 || math.IsInf(f, 1) { // the floor itself failed: no ratio
			return "—"
		}
		return fmt.Sprintf("%.1f×", a/f)
	}
	b.WriteString("| route | offered req/s | served req/s | ok | errors | p50 ms | p90 ms | p99 ms | max ms | p50 / floor | p99 / floor |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		cp := r.cap
		fmt.Fprintf(&b, "| %s, closed loop (4 clients back to back, 3 s: capacity) | — | %.0f | %d | %d | %.2f | %.2f | %.2f | %.2f | | |\n", r.label, cp.achieved, cp.ok, cp.errors, cp.p(0.5), cp.p(0.9), cp.p(0.99), cp.p(1))
		o := r.open
		fmt.Fprintf(&b, "| **%s** | %d | %.0f | %d | %d | %.2f | %.2f | %.2f | %.2f | %s | %s |\n", r.label, r.rate, o.achieved, o.ok, o.errors, o.p(0.5), o.p(0.9), o.p(0.99), o.p(1),
			ratio(o.p(0.5), floor.p(0.5)), ratio(o.p(0.99), floor.p(0.99)))
		if r.id == "floor" {
			sec.Summary = append(sec.Summary, fmt.Sprintf("| 4. floor: GET /healthz at %d req/s | p50 %.2f ms, p99 %.2f ms, %.0f req/s served | | | — |", c.Rate, o.p(0.5), o.p(0.99), o.achieved))
			continue
		}
		status := "met"
		if o.p(0.99) >= r.target || o.errors > 0 {
			status = "missed"
		}
		sec.Summary = append(sec.Summary, fmt.Sprintf("| 4. %s at %d req/s offered | p50 %.2f ms, p99 %.2f ms, %.0f req/s served, %d failed or shed; capacity %.0f req/s (closed loop, p50 %.2f ms) | floor p99 %.2f ms | p99 %s the floor | p99 < %.0f ms: %s |",
			r.label, r.rate, o.p(0.5), o.p(0.99), o.achieved, o.errors, cp.achieved, cp.p(0.5), floor.p(0.99), ratio(o.p(0.99), floor.p(0.99)), r.target, status))
	}
	b.WriteString("\nGo collector during each open-loop run (the process holds the store's Go-side models, the search index and the load generator):")
	for _, r := range rows {
		fmt.Fprintf(&b, " %s: %d GCs, %.1f ms paused, heap %.0f MB at start;", r.id, r.gcs, float64(r.gcPause)/1e6, r.heapMB)
	}
	b.WriteString("\n")
	b.WriteString("\nFailed requests (timeouts after 10 s, non-200) and requests shed because 256 were already in flight count as infinite latency in the open-loop percentiles (shown as +Inf).\n")
	fmt.Fprintf(&b, "\nSearch service time in process, one query at a time before the load (api/search `Index.Search`, 1000 queries of the mix): first pass (terms outside Build's %d prewarmed words read from FTS5) p50 %.2f ms, p99 %.2f ms, max %.2f ms; second pass (cached) p50 %.2f ms, p99 %.2f ms, max %.2f ms.\n",
		search.PrewarmTerms, passes[0].p(0.5), passes[0].p(0.99), passes[0].p(1), passes[1].p(0.5), passes[1].p(0.99), passes[1].p(1))
	fmt.Fprintf(&b, "\nSample search queries: %s.\n", strings.Join(quoteAll(queries[:12]), ", "))
	sec.Body = b.String()
	return sec, nil
}

// serveLoopback serves h on 127.0.0.1; stop closes it.
func serveLoopback(h http.Handler) (string, func(), error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	return "http://" + ln.Addr().String(), func() { srv.Close() }, nil
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = "`" + s + "`"
	}
	return out
}

// benchDoc is a search document with scores derived from a hash of the name:
// deterministic, spread over 0–100, ~6 % flagged, ~10 % last seen down.
func benchDoc(name, title, desc string) search.Doc {
	h := fnv.New64a()
	h.Write([]byte(name))
	x := h.Sum64()
	cats := []string{"developer-tools", "data", "search", "productivity", "finance", "communication", "security", "ai-ml"}
	d := search.Doc{Name: name, Title: title, Description: desc, Score: int(x % 101), Categories: []string{cats[(x>>8)%uint64(len(cats))]}}
	if (x>>16)%16 == 0 {
		d.Flags = []string{"no_repo"}
	}
	switch (x >> 24) % 10 {
	case 0:
		d.LastOutcome = "unreachable"
	case 1, 2, 3, 4, 5:
		d.LastOutcome = "ok"
	}
	return d
}

// searchQueries draws n queries from the documents' vocabulary, seeded:
// 45 % one term, 25 % two, 10 % three (terms weighted by how many
// documents hold them, as people search for what exists), 20 % a namespace
// label (like "stripe"), alone or with a term.
func searchQueries(docs []search.Doc, n int) []string {
	df := map[string]int{}
	for _, d := range docs {
		seen := map[string]bool{}
		for _, w := range strings.FieldsFunc(strings.ToLower(d.Name+" "+d.Title+" "+d.Description), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if len(w) >= 3 && !seen[w] {
				seen[w] = true
				df[w]++
			}
		}
	}
	vocab := make([]string, 0, len(df))
	for w, c := range df {
		if c >= 2 {
			vocab = append(vocab, w)
		}
	}
	sort.Strings(vocab)
	cum := make([]int, len(vocab))
	total := 0
	for i, w := range vocab {
		total += df[w]
		cum[i] = total
	}
	rng := rand.New(rand.NewPCG(4, 2))
	term := func() string { return vocab[sort.SearchInts(cum, rng.IntN(total)+1)] }
	var labels []string
	for _, d := range docs {
		labels = append(labels, search.NamespaceLabels(d.Name)...)
	}
	out := make([]string, n)
	for i := range out {
		switch k := rng.IntN(100); {
		case k < 45:
			out[i] = term()
		case k < 70:
			out[i] = term() + " " + term()
		case k < 80:
			out[i] = term() + " " + term() + " " + term()
		case k < 90:
			out[i] = labels[rng.IntN(len(labels))]
		default:
			out[i] = labels[rng.IntN(len(labels))] + " " + term()
		}
	}
	return out
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
