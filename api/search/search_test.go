package search_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forum-mcp/forum/api/search"
	"github.com/forum-mcp/forum/ingest/registry"
	"github.com/forum-mcp/forum/processors/scorer"
	"github.com/forum-mcp/forum/schema"
)

var (
	realOnce sync.Once
	realDocs []search.Doc
	realRecs []scorer.Record
	realText map[string][2]string // title, description by name
	realErr  error
)

// bundledDocs computes the records of the bundled real 2025-10-09 snapshot
// with the scorer's pure Compute (no health checks, no other processors) and
// turns them into Docs with the registry text.
func bundledDocs(t *testing.T) []search.Doc {
	t.Helper()
	loadBundled(t)
	return append([]search.Doc(nil), realDocs...)
}

// bundledRecords returns bundledDocs' records (in the same order) and the
// registry text by name; the records share nothing with the cached ones
// that an edit of a top-level field could reach.
func bundledRecords(t *testing.T) ([]scorer.Record, map[string][2]string) {
	t.Helper()
	loadBundled(t)
	return append([]scorer.Record(nil), realRecs...), realText
}

func loadBundled(t *testing.T) {
	t.Helper()
	realOnce.Do(func() {
		files, err := registry.ListSnapshots("../../ingest/registry/testdata/snapshots")
		if err != nil {
			realErr = err
			return
		}
		for _, f := range files {
			if !strings.HasPrefix(f.CapturedAt.Format("2006-01-02"), "2025-10-09") {
				continue
			}
			es, _, _, err := registry.LoadSnapshotFile(f)
			if err != nil {
				realErr = err
				return
			}
			var in []scorer.ServerInput
			byName := map[string]schema.Entry{}
			for _, e := range es {
				if e.Meta.IsLatest {
					in = append(in, scorer.ServerInput{Entry: e})
					byName[e.Server.Name] = e
				}
			}
			recs := scorer.Compute(in, scorer.Sources{}, scorer.Meta{PublicationID: scorer.PublicationID(f.CapturedAt), ComputedAt: f.CapturedAt}, nil)
			realText = map[string][2]string{}
			for _, r := range recs {
				e := byName[r.Server]
				realText[r.Server] = [2]string{e.Server.Title, e.Server.Description}
				realDocs = append(realDocs, search.DocFromRecord(r, e.Server.Title, e.Server.Description, nil))
				realRecs = append(realRecs, r)
			}
		}
		if len(realDocs) == 0 {
			realErr = errors.New("no 2025-10-09 snapshot")
		}
	})
	if realErr != nil {
		t.Fatal(realErr)
	}
}

func build(t *testing.T, docs []search.Doc) *search.Snapshot {
	t.Helper()
	s, err := search.Build(context.Background(), "pub-test", docs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func find(rs []search.Result, name string) (int, search.Result) {
	for i, r := range rs {
		if r.Name == name {
			return i, r
		}
	}
	return -1, search.Result{}
}

func TestVerifiedNamespaceFirst(t *testing.T) {
	s := build(t, bundledDocs(t))
	for _, tc := range []struct{ q, ns string }{
		{"supabase", "com.supabase"},
		{"notion", "com.notion"},
		{"figma design", "com.figma.mcp"},
		{"vercel deploy", "com.vercel"},
	} {
		resp, err := s.Search(context.Background(), tc.q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) == 0 {
			t.Fatalf("%q: no results", tc.q)
		}
		top := resp.Results[0]
		if schema.Namespace(top.Name) != tc.ns || top.NSMatch != 1 {
			t.Errorf("%q: first is %s (ns_match %v), want a %s server", tc.q, top.Name, top.NSMatch, tc.ns)
		}
		// the boost needs a term naming the namespace: other matches have none
		for _, r := range resp.Results {
			if schema.Namespace(r.Name) != tc.ns && r.NSMatch != 0 && !strings.Contains(r.Name, strings.Split(tc.q, " ")[0]) {
				t.Errorf("%q: %s has ns_match", tc.q, r.Name)
			}
		}
	}
}

func TestGenericLabelsDoNotMatch(t *testing.T) {
	for _, n := range []string{"io.github.foo/bar", "com.stripe/mcp", "ai.smithery/x", "local/x"} {
		for _, l := range search.NamespaceLabels(n) {
			if l == "io" || l == "github" || l == "com" || l == "ai" {
				t.Errorf("%s: generic label %q kept", n, l)
			}
		}
	}
	if got := search.NamespaceLabels("com.stripe/mcp"); len(got) != 1 || got[0] != "stripe" {
		t.Errorf("com.stripe labels %v", got)
	}
	if got := search.NamespaceLabels("nodots/x"); got != nil {
		t.Errorf("a one-label namespace is not reverse-DNS: %v", got)
	}
}

// twins adds two servers with the same text and same-shaped names to the
// real population, so their bm25, coverage and score are equal.
func twins(t *testing.T, mod func(*search.Doc)) (*search.Snapshot, string, string) {
	docs := bundledDocs(t)
	a := search.Doc{Name: "io.github.twinalpha/weatherglass", Description: "Weatherglass forecasts barometric pressure for any city", Score: 40, Categories: []string{"location-travel"}}
	b := a
	b.Name = "io.github.twinbravo/weatherglass"
	mod(&b)
	docs = append(docs, a, b)
	return build(t, docs), a.Name, b.Name
}

func TestFlaggedFallsBelowEqualUnflagged(t *testing.T) {
	s, plain, flagged := twins(t, func(d *search.Doc) { d.Flags = []string{"placeholder"} })
	resp, err := s.Search(context.Background(), "weatherglass barometric", 50, nil)
	if err != nil {
		t.Fatal(err)
	}
	ip, rp := find(resp.Results, plain)
	iflag, rf := find(resp.Results, flagged)
	if ip < 0 || iflag < 0 {
		t.Fatalf("twins not found: %v", resp.Results)
	}
	if ip >= iflag {
		t.Errorf("flagged at %d, unflagged at %d", iflag, ip)
	}
	if math.Abs(rf.Rank-0.5*rp.Rank) > 1e-12 || rf.Relevance != rp.Relevance {
		t.Errorf("flagged rank %v, unflagged %v: want exactly half", rf.Rank, rp.Rank)
	}
}

func TestDownServerFallsBy15Percent(t *testing.T) {
	for _, o := range []string{"unreachable", "handshake_failed"} {
		s, up, down := twins(t, func(d *search.Doc) { d.LastOutcome = o })
		resp, err := s.Search(context.Background(), "weatherglass", 50, nil)
		if err != nil {
			t.Fatal(err)
		}
		iu, ru := find(resp.Results, up)
		id, rd := find(resp.Results, down)
		if iu < 0 || id < 0 || iu >= id {
			t.Fatalf("%s: up at %d, down at %d", o, iu, id)
		}
		if math.Abs(rd.Rank-0.85*ru.Rank) > 1e-12 {
			t.Errorf("%s: rank %v vs %v, want ×0.85", o, rd.Rank, ru.Rank)
		}
	}
	// auth_required and ok are not penalised
	s, up, other := twins(t, func(d *search.Doc) { d.LastOutcome = "auth_required" })
	resp, _ := s.Search(context.Background(), "weatherglass", 50, nil)
	_, ru := find(resp.Results, up)
	_, ro := find(resp.Results, other)
	if ru.Rank != ro.Rank {
		t.Errorf("auth_required changed the rank: %v vs %v", ro.Rank, ru.Rank)
	}
}

func TestRealFlaggedServersAreHalved(t *testing.T) {
	s := build(t, bundledDocs(t))
	resp, err := s.Search(context.Background(), "test demo example server", 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range resp.Results {
		want := (search.WRelevance*r.Relevance + search.WCoverage*r.Coverage + search.WNamespace*r.NSMatch + search.WScore*float64(r.Score)/100)
		if len(r.Flags) > 0 {
			want *= 0.5
			n++
		}
		if math.Abs(r.Rank-want) > 1e-12 {
			t.Errorf("%s: rank %v, formula gives %v", r.Name, r.Rank, want)
		}
	}
	if n == 0 {
		t.Error("no flagged server among the results of a test/demo query")
	}
	if resp.Results[0].Relevance != 1 && resp.Results[0].Multiplier == 1 {
		// the best bm25 has relevance 1; it may not be first, but someone has it
		found := false
		for _, r := range resp.Results {
			found = found || r.Relevance == 1
		}
		if !found {
			t.Error("no result has relevance 1")
		}
	}
}

func TestSponsoredNeverChangesOrganicOrder(t *testing.T) {
	docs := bundledDocs(t)
	// Without health checks nobody in the snapshot reaches 50: lift a few
	// "database" servers so the slot has candidates, and keep one under 50.
	lifted := 0
	for i := range docs {
		if strings.Contains(strings.ToLower(docs[i].Description), "database") && lifted < 4 {
			docs[i].Score = 55 + lifted*5
			lifted++
		}
	}
	s := build(t, docs)
	ctx := context.Background()
	base, err := s.Search(ctx, "database sql", 30, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Sponsored) != 0 {
		t.Fatal("sponsored without a campaign")
	}
	var low, high []string
	for _, r := range base.Results {
		if r.Score >= 50 {
			high = append(high, r.Name)
		} else {
			low = append(low, r.Name)
		}
	}
	if len(high) == 0 || len(low) == 0 {
		t.Fatalf("need both kinds of candidates: %d ≥ 50, %d < 50", len(high), len(low))
	}
	for _, campaign := range [][]string{
		{high[len(high)-1]},
		{low[0], high[0]},
		{low[len(low)-1]},
		{"com.nowhere/not-a-match", high[0], high[len(high)-1]},
	} {
		got, err := s.Search(ctx, "database sql", 30, campaign)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Results) != len(base.Results) {
			t.Fatalf("campaign %v changed the organic count", campaign)
		}
		for i := range got.Results {
			if got.Results[i].Name != base.Results[i].Name || got.Results[i].Rank != base.Results[i].Rank {
				t.Fatalf("campaign %v changed organic position %d", campaign, i)
			}
		}
		if len(got.Sponsored) > 1 {
			t.Errorf("campaign %v: %d sponsored", campaign, len(got.Sponsored))
		}
		for _, sp := range got.Sponsored {
			if sp.Score < 50 {
				t.Errorf("campaign %v: sponsored %s scores %d", campaign, sp.Name, sp.Score)
			}
		}
	}
	got, _ := s.Search(ctx, "database sql", 30, []string{low[0], high[0]})
	if len(got.Sponsored) != 1 || got.Sponsored[0].Name != high[0] {
		t.Errorf("sponsored %v, want %s (the first eligible in campaign order)", got.Sponsored, high[0])
	}
	got, _ = s.Search(ctx, "database sql", 30, []string{low[len(low)-1]})
	if len(got.Sponsored) != 0 {
		t.Errorf("a server under 50 was sponsored: %v", got.Sponsored)
	}
}

func TestQueryBounds(t *testing.T) {
	for _, q := range []string{"", "   ", "!!! ---", strings.Repeat("a", search.MaxQueryBytes+1), "a b c d e f g h i",
		strings.Repeat("x", search.MaxTermBytes+1)} {
		if _, err := search.ParseQuery(q); !errors.Is(err, search.ErrBadQuery) {
			t.Errorf("%.40q: %v, want ErrBadQuery", q, err)
		}
	}
	terms, err := search.ParseQuery(`Stripe "payments" OR NEAR(x) stripe*`)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(terms, ",") != "stripe,payments,or,near,x" {
		t.Errorf("terms %v", terms)
	}
	// FTS5 syntax in the query is inert
	s := build(t, bundledDocs(t))
	if _, err := s.Search(context.Background(), `name:"x" AND ^foo NOT bar*`, 10, nil); err != nil {
		t.Errorf("FTS5 syntax reached the engine: %v", err)
	}
}

func TestLeaderboard(t *testing.T) {
	s := build(t, bundledDocs(t))
	lb := s.Leaderboard("", 0)
	if len(lb) == 0 {
		t.Fatal("empty leaderboard")
	}
	perNS := map[string]int{}
	for i, d := range lb {
		if len(d.Flags) > 0 {
			t.Errorf("flagged %s listed", d.Name)
		}
		perNS[schema.Namespace(d.Name)]++
		if perNS[schema.Namespace(d.Name)] > 2 {
			t.Errorf("more than 2 of %s", schema.Namespace(d.Name))
		}
		if i > 0 && (lb[i-1].Score < d.Score || lb[i-1].Score == d.Score && lb[i-1].Name > d.Name) {
			t.Errorf("order at %d: %s %d after %s %d", i, d.Name, d.Score, lb[i-1].Name, lb[i-1].Score)
		}
	}
	cat := lb[0].Categories[0]
	for _, d := range s.Leaderboard(cat, 5) {
		ok := false
		for _, c := range d.Categories {
			ok = ok || c == cat
		}
		if !ok {
			t.Errorf("%s is not in %s", d.Name, cat)
		}
	}
	if n := len(s.Leaderboard("", 3)); n != 3 {
		t.Errorf("limit 3 gave %d", n)
	}
}

// TestSwapDoesNotBlockQueries queries continuously while new snapshots are
// built and swapped in.
func TestSwapDoesNotBlockQueries(t *testing.T) {
	docs := bundledDocs(t)
	var x search.Index
	x.Grace = 50 * time.Millisecond
	if _, err := x.Search(context.Background(), "notion", 5, nil); !errors.Is(err, search.ErrNotReady) {
		t.Fatalf("before the first build: %v", err)
	}
	first := build(t, docs)
	x.Swap(first)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var fails, done int64
	var mu sync.Mutex
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				_, err := x.Search(context.Background(), "notion database", 5, nil)
				mu.Lock()
				done++
				if err != nil {
					fails++
				}
				mu.Unlock()
			}
		}()
	}
	for i := 0; i < 3; i++ {
		s, err := search.Build(context.Background(), "pub-"+string(rune('a'+i)), docs)
		if err != nil {
			t.Fatal(err)
		}
		x.Swap(s)
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	cancel()
	wg.Wait()
	if fails > 0 || done == 0 {
		t.Errorf("%d of %d queries failed across swaps", fails, done)
	}
	if x.Current().PublicationID != "pub-c" {
		t.Errorf("current %s", x.Current().PublicationID)
	}
	x.Current().Close()
}

// TestSearchEqualsTheSQLRanking pins Search (cached per-term postings summed
// in Go) to the reference that asks FTS5 for the OR query's bm25 on every
// request: the same terms, totals, results and sponsored entries, float for
// float, over single terms, several terms, namespace labels, stems, terms
// matching nothing and repeated queries (cache hits). Servers under a safety
// hold (some also flagged) and a campaign of eligible, ineligible and held
// servers are among them, so both paths apply the hold alike. Answers from
// the result cache and ranked afresh are both compared.
func TestSearchEqualsTheSQLRanking(t *testing.T) {
	docs := bundledDocs(t)
	var sponsors []string
	for i := range docs {
		if i%5 == 0 {
			docs[i].Hold = &search.SafetyHold{Reason: search.HoldBandD, Band: "D", BandReason: "D: static below 40", Signals: []search.HeldSignal{}}
		}
	}
	for i := 0; i < len(docs); i += 37 {
		if i%74 == 0 { // every other one scores high enough to be sponsored
			docs[i].Score = 60
		}
		sponsors = append(sponsors, docs[i].Name)
	}
	s := build(t, docs)
	heldHits, sponsored := 0, 0
	queries := []string{"supabase", "notion", "figma design", "vercel deploy", "server", "mcp server", "database query sql",
		"servers", "searching files", "github issues pull requests", "stripe payments", "zzzznothing", "weather zzzznothing",
		"a", "the and of", "MCP Server", "ai smithery", "browser automation playwright", "email", "k8s kubernetes cluster"}
	// and words of the corpus, alone and in pairs
	for i := 0; i < len(docs); i += 23 {
		f := strings.Fields(docs[i].Description)
		if len(f) > 2 {
			queries = append(queries, f[0], f[1]+" "+f[len(f)-1])
		}
		for _, l := range search.NamespaceLabels(docs[i].Name) {
			queries = append(queries, l)
		}
	}
	ctx := context.Background()
	for round := 0; round < 2; round++ { // the second round hits the cache
		for _, q := range queries {
			for _, limit := range []int{3, 20, 100} {
				for _, sp := range [][]string{nil, sponsors} {
					want, werr := s.SearchReference(ctx, q, limit, sp)
					got, gerr := s.Search(ctx, q, limit, sp)
					if (werr == nil) != (gerr == nil) {
						t.Fatalf("%q: error %v, reference %v", q, gerr, werr)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%q limit %d sponsors %d: Search differs from the reference\ngot  %+v\nwant %+v", q, limit, len(sp), got, want)
					}
					if fresh, _ := s.SearchUncached(ctx, q, limit, sp); !reflect.DeepEqual(fresh, want) {
						t.Fatalf("%q limit %d sponsors %d: Search without the result cache differs from the reference\ngot  %+v\nwant %+v", q, limit, len(sp), fresh, want)
					}
					for _, r := range got.Results {
						if r.Hold != nil {
							heldHits++
						}
					}
					for _, r := range got.Sponsored {
						sponsored++
						if r.Hold != nil {
							t.Fatalf("%q: held %s sponsored", q, r.Name)
						}
					}
				}
			}
		}
	}
	if heldHits == 0 || sponsored == 0 {
		t.Errorf("the comparison covered %d held results and %d sponsored ones: want both", heldHits, sponsored)
	}
}

// crowd is a synthetic population larger than MaxCandidates many times
// over, from a small Zipf-like vocabulary, so that common words match
// thousands of servers and the candidate boundary (the MaxCandidates-th
// best bm25) cuts through them; some texts repeat word for word, so sums
// tie at the boundary and the rowid decides. Some servers are held,
// flagged or down, a third score 50 or more, and namespaces carry
// labels that are also words of the vocabulary.
func crowd(n int) []search.Doc {
	vocab := []string{"data", "files", "search", "query", "cloud", "notes", "email", "calendar", "weather", "github",
		"issues", "database", "stripe", "payments", "browser", "kubernetes", "slack", "docs", "images", "maps",
		"crm", "tasks", "postgres", "analytics", "monitor", "deploy", "secure", "fast", "agent", "memory"}
	labels := []string{"acme", "stripe", "github", "notes", "weather", "globex", "initech"}
	rng := rand.New(rand.NewPCG(7, 11))
	word := func() string { // vocab[0] most common
		return vocab[min(len(vocab)-1, int(float64(len(vocab))*math.Pow(rng.Float64(), 2.2)))]
	}
	phrase := func(k int) string {
		w := make([]string, k)
		for i := range w {
			w[i] = word()
		}
		return strings.Join(w, " ")
	}
	docs := make([]search.Doc, 0, n)
	for i := range n {
		ns := fmt.Sprintf("io.github.user%d", i)
		if i%9 == 0 {
			ns = "com." + labels[i%len(labels)] + fmt.Sprintf(".team%d", i%13)
		}
		d := search.Doc{Name: fmt.Sprintf("%s/%s-%d", ns, word(), i), Description: phrase(3 + rng.IntN(12)), Score: rng.IntN(101),
			Categories: []string{[]string{"developer-tools", "productivity", "databases"}[i%3]}}
		if i%4 == 0 {
			d.Title = phrase(1 + rng.IntN(3))
		}
		if i%3 == 0 {
			d.Tools = []string{word() + "_" + word(), phrase(5)}
		}
		if i > 0 && i%10 < 3 { // word-for-word repeats: equal bm25 where lengths match
			d.Description = docs[i/2].Description
		}
		switch i % 17 {
		case 0:
			d.Hold = &search.SafetyHold{Reason: search.HoldBandD, Band: "D", Signals: []search.HeldSignal{}}
		case 1:
			d.Flags = []string{"placeholder"}
		case 2:
			d.LastOutcome = "unreachable"
		case 3:
			d.Hold, d.Flags = &search.SafetyHold{Reason: search.HoldBandF, Band: "F", Signals: []search.HeldSignal{}}, []string{"retired"}
		}
		docs = append(docs, d)
	}
	return docs
}

// TestSearchEqualsTheSQLRankingPastTheCandidateBoundary is the comparison
// with the SQL reference on a population where queries have many more
// matches than MaxCandidates, so the floor that drops rows before the
// selection and the boundary that decides sponsorship are both exercised:
// cached and uncached answers equal the reference for every limit, and a
// campaign whose first servers sit just past the boundary (eligible, but
// not candidates) sponsors the first eligible server just inside it, as
// the reference does.
func TestSearchEqualsTheSQLRankingPastTheCandidateBoundary(t *testing.T) {
	docs := crowd(6000)
	for _, mode := range []int{1, 2, -1, 0} { // rows above the thresholds, best and smaller terms' rows, every posting summed, by cost
		t.Run(fmt.Sprintf("gather %d", mode), func(t *testing.T) { pastTheBoundary(t, docs, mode) })
	}
}

func pastTheBoundary(t *testing.T, docs []search.Doc, gather int) {
	s := build(t, docs)
	s.SetGather(gather)
	ctx := context.Background()
	queries := []string{"data", "files", "data files", "search query cloud", "files data", "notes email calendar weather",
		"stripe payments", "stripe", "acme data", "github issues", "memory agent", "data data files", "nothingatall data",
		"weather globex files", "initech", "cloud deploy kubernetes monitor analytics"}
	eligible := func(name string) bool {
		for _, d := range docs {
			if d.Name == name {
				return d.Score >= 50 && d.Hold == nil
			}
		}
		return false
	}
	crossed := 0
	for _, q := range queries {
		cands, err := s.CandidatesSQL(ctx, q, search.MaxCandidates+200)
		if err != nil {
			t.Fatal(err)
		}
		var campaign []string
		if len(cands) > search.MaxCandidates {
			crossed++
			// just past the boundary first, then just inside it
			for _, n := range cands[search.MaxCandidates:] {
				campaign = append(campaign, n)
			}
			for i := search.MaxCandidates - 1; i >= search.MaxCandidates-200; i-- {
				campaign = append(campaign, cands[i])
			}
		} else {
			for i := len(cands) - 1; i >= 0 && len(campaign) < 50; i-- {
				campaign = append(campaign, cands[i])
			}
		}
		for _, limit := range []int{1, 20, 100} {
			for _, sp := range [][]string{nil, campaign} {
				want, werr := s.SearchReference(ctx, q, limit, sp)
				if werr != nil {
					t.Fatal(werr)
				}
				for _, run := range []struct {
					name string
					fn   func(context.Context, string, int, []string) (search.Response, error)
				}{{"uncached", s.SearchUncached}, {"cached", s.Search}, {"cached again", s.Search}} {
					got, err := run.fn(ctx, q, limit, sp)
					if err != nil {
						t.Fatal(err)
					}
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("%q limit %d campaign %d, %s: differs from the reference\ngot  %+v\nwant %+v", q, limit, len(sp), run.name, got, want)
					}
				}
				if len(sp) > 0 && len(cands) > search.MaxCandidates {
					if len(want.Sponsored) != 1 {
						t.Fatalf("%q: no sponsored entry from a campaign of %d", q, len(sp))
					}
					at := slices.Index(cands, want.Sponsored[0].Name)
					if at >= search.MaxCandidates {
						t.Fatalf("%q: sponsored %s is past the boundary", q, want.Sponsored[0].Name)
					}
					skipped := 0
					for _, n := range cands[search.MaxCandidates:] {
						if eligible(n) {
							skipped++
						}
					}
					if skipped == 0 {
						t.Fatalf("%q: no eligible server past the boundary: the campaign does not test it", q)
					}
				}
			}
		}
	}
	if crossed < 5 {
		t.Errorf("only %d queries have more than %d matches", crossed, search.MaxCandidates)
	}
}

// TestSwapInvalidatesCachedAnswers: an answer cached from one publication
// is not served from the next. The same query, asked before and after a
// swap to a snapshot where its first result is under a safety hold, gives
// the new publication's id, the hold and the halved rank; asked again on
// the old snapshot, the old answer.
func TestSwapInvalidatesCachedAnswers(t *testing.T) {
	docs := bundledDocs(t)
	var x search.Index
	x.Grace = time.Hour
	first := build(t, docs)
	x.Swap(first)
	ctx := context.Background()
	before, err := x.Search(ctx, "notion database", 10, nil)
	if err != nil || len(before.Results) == 0 {
		t.Fatalf("%v, %d results", err, len(before.Results))
	}
	top := before.Results[0]
	held := append([]search.Doc(nil), docs...)
	for i := range held {
		if held[i].Name == top.Name {
			held[i].Hold = &search.SafetyHold{Reason: search.HoldBandF, Band: "F", Signals: []search.HeldSignal{}}
		}
	}
	second, err := search.Build(ctx, "pub-next", held)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { second.Close() })
	x.Swap(second)
	after, err := x.Search(ctx, "notion database", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := second.SearchReference(ctx, "notion database", 10, nil)
	if err != nil || !reflect.DeepEqual(after, want) {
		t.Fatalf("after the swap: differs from the new snapshot's reference (%v)", err)
	}
	_, r := find(after.Results, top.Name)
	if after.PublicationID != "pub-next" || r.Hold == nil || r.Rank != 0.5*top.Rank {
		t.Errorf("after the swap: publication %s, %s hold %v rank %v (was %v): the old answer was served", after.PublicationID, top.Name, r.Hold, r.Rank, top.Rank)
	}
	again, err := first.Search(ctx, "notion database", 10, nil)
	if err != nil || !reflect.DeepEqual(again, before) {
		t.Errorf("the old snapshot's answer changed (%v)", err)
	}
}

// BenchmarkSearch ranks a query mix drawn from the vocabulary of a
// 50,000-server crowd (one to three words, weighted by how many servers
// hold them) with the result cache (answers repeat) and without it (every
// query ranked, postings cached); bench -only api has the same through
// HTTP on the generated registry.
func BenchmarkSearch(b *testing.B) {
	docs := crowd(50_000)
	s, err := search.Build(context.Background(), "pub-bench", docs)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(4, 2))
	var words []string
	for _, d := range docs[:2000] {
		words = append(words, strings.Fields(d.Description)...)
	}
	queries := make([]string, 4096)
	for i := range queries {
		q := words[rng.IntN(len(words))]
		for k := rng.IntN(3); k > 0; k-- {
			q += " " + words[rng.IntN(len(words))]
		}
		queries[i] = q
	}
	ctx := context.Background()
	for _, arm := range []struct {
		name string
		fn   func(context.Context, string, int, []string) (search.Response, error)
	}{{"cached", s.Search}, {"uncached", s.SearchUncached}} {
		b.Run(arm.name, func(b *testing.B) {
			for _, q := range queries { // postings read, answers cached
				if _, err := arm.fn(ctx, q, search.DefaultLimit, nil); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := arm.fn(ctx, queries[i%len(queries)], search.DefaultLimit, nil); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}
