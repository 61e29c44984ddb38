// Package search is the API's search index and leaderboard (SPEC §6, display
// rules of §3, including the safety hold across the two methods).
//
// In: Docs — one per server of a publication: the published record's
// Toolfinder score, flags, categories, the outcome of the check it was
// scored on and its safety hold (SafetyHoldOf: FORUM band D/F or an open
// strong-negative signal), plus the registry text (name, title,
// description) and tool names/descriptions from the latest checks. Out:
// ranked search results, a separate sponsored list, and the leaderboard.
//
// The full-text index is SQLite FTS5 (modernc.org/sqlite, pure Go) held in
// memory: porter stemming over name, title, description, tools, categories;
// bm25 column weights 6, 6, 2, 1, 2; query terms OR-ed. A Snapshot is
// immutable once built; Index holds the current one behind an atomic
// pointer, so a new publication is indexed beside the old one and swapped in
// without blocking a query (the old one is closed after a grace period).
//
// Serving: a query does not run FTS5 per request. bm25 of an OR query is the
// sum of its terms' single-term bm25 (bit for bit, in query order), so each
// term's postings — rows, their bm25 share, and the rows holding it in name
// or title — are read from FTS5 once per snapshot and cached (bounded; the
// PrewarmTerms most frequent words at Build), and a query sums them in Go.
// Search equals the per-request SQL ranking it replaced (searchSQL, kept as
// the reference a test compares it with).
//
// Final rank (SPEC §6): 0.5·relevance + 0.15·coverage + 0.25·ns_match +
// 0.3·score/100, then × toolfinder.RankMultiplier (flagged × 0.5, last check
// unreachable or handshake_failed × 0.85). A held server is flagged for
// display (SPEC §3 safety hold): × 0.5, off the leaderboard, never in the
// sponsored slot. relevance = this row's −bm25 over
// the best −bm25 of the query; coverage = share of query terms found in name
// or title (stemmed, through FTS5 column filters); ns_match = 1 when a query
// term equals a non-generic label of the server's namespace.
//
// Readings where the SPEC is silent (pinned by tests):
//   - "Verified reverse-DNS namespace": the registry only accepts a namespace
//     after verifying it (DNS/HTTP for domains, GitHub sign-in for
//     io.github.<login>), so every namespace with at least two dot-separated
//     labels counts; the generic labels in genericLabels never match.
//   - Candidates are the MaxCandidates best rows by bm25; the final rank
//     reorders them. Ties on the final rank go by name.
//   - The sponsored slot (toolfinder.Sponsored) is chosen among every
//     candidate, in the campaign's order, and is returned apart; the organic
//     list is computed without looking at it.
//   - "Treated as flagged" makes the safety hold the same display state as
//     a Toolfinder flag, not a second one: a server that is both is × 0.5
//     once (Doc.displayFlagged).
package search

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	_ "modernc.org/sqlite" // FTS5, pure Go

	"github.com/forum-mcp/forum/processors/toolfinder"
	"github.com/forum-mcp/forum/schema"
)

// Query bounds: anything over them is refused with ErrBadQuery.
const (
	MaxQueryBytes = 256
	MaxTerms      = 8
	MaxTermBytes  = 64
	MaxCandidates = 2000
	MaxLimit      = 100
	DefaultLimit  = 20
)

// Rank weights of SPEC §6.
const (
	WRelevance = 0.5
	WCoverage  = 0.15
	WNamespace = 0.25
	WScore     = 0.3
)

// ErrBadQuery is returned for an empty, too long or too wide query.
var ErrBadQuery = errors.New("bad query")

// ErrNotReady is returned before the first index is built.
var ErrNotReady = errors.New("search index not built yet")

// genericLabels never count as a namespace match.
var genericLabels = map[string]bool{
	"com": true, "io": true, "github": true, "org": true, "net": true, "dev": true, "ai": true, "app": true,
	"co": true, "me": true, "sh": true, "xyz": true, "cloud": true, "tech": true, "md": true, "run": true,
	"gitlab": true, "www": true, "mcp": true, "api": true, "server": true, "local": true, "so": true, "us": true, "uk": true, "de": true,
}

// Doc is one server as the index sees it.
type Doc struct {
	Name        string
	Title       string
	Description string
	Tools       []string // tool names and descriptions
	Categories  []string // primary first
	Score       int      // Toolfinder score
	Flags       []string
	LastOutcome string // outcome of the check the record was scored on ("" none)
	Band        string
	TrustScore  *float64
	Hold        *SafetyHold // SafetyHoldOf the record; nil when not held
	// Parts are the record's seven Toolfinder components, in the record's
	// order: the pages' one-line "why" of a score reads them.
	Parts []Part
}

// Part is one Toolfinder component of a record: what it scored of its max.
type Part struct {
	Name  string
	Score float64
	Max   float64
	Note  string // the message of its first finding that did not score in full
}

// displayFlagged is the flag state the display rules read: a Toolfinder
// flag or a safety hold, one state however many reasons.
func (d *Doc) displayFlagged() bool { return d.ranked().DisplayFlagged() }

// ranked is the doc as toolfinder's display rules see it.
func (d *Doc) ranked() toolfinder.Ranked {
	r := toolfinder.RankedFrom(toolfinder.Result{Name: d.Name, Score: d.Score, Flags: d.Flags}, d.Categories)
	r.Held = d.Hold != nil
	return r
}

// Result is one ranked match.
type Result struct {
	Doc
	Relevance  float64
	Coverage   float64
	NSMatch    float64
	Multiplier float64
	Rank       float64
}

// Response is one query's answer.
type Response struct {
	PublicationID string
	Terms         []string
	Total         int // matches considered (≤ MaxCandidates)
	Results       []Result
	Sponsored     []Result
}

// Snapshot is an immutable index of one publication.
type Snapshot struct {
	PublicationID string
	BuiltAt       time.Time
	db            *sql.DB
	pin           *sql.Conn // keeps the in-memory database alive
	docs          []Doc     // rowid-1
	byName        map[string]int
	meta          []docMeta        // rowid-1: what the rank reads, contiguous
	labelSeq      []int32          // the docs' namespace labels as ids, meta[i].labels indexes it
	labelIDs      map[string]int32 // namespace label → id
	terms         termCache
}

// docMeta is what the final rank reads of a document, precomputed: a
// query ranks up to MaxCandidates of them.
type docMeta struct {
	score  float64  // the Toolfinder score, as float64(Doc.Score)
	mult   float64  // toolfinder.RankMultiplier of the doc (flags and safety hold)
	labels [2]int32 // labelSeq[labels[0]:labels[1]] are its namespace labels
}

var memSeq atomic.Int64

// Build indexes docs. The snapshot lives until Close.
func Build(ctx context.Context, publicationID string, docs []Doc) (*Snapshot, error) {
	dsn := fmt.Sprintf("file:forum-search-%d?mode=memory&cache=shared", memSeq.Add(1))
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("search index: %w", err)
	}
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	pin, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("search index: %w", err)
	}
	s := &Snapshot{PublicationID: publicationID, BuiltAt: time.Now().UTC(), db: db, pin: pin, byName: map[string]int{}, labelIDs: map[string]int32{}}
	fail := func(err error) (*Snapshot, error) { s.Close(); return nil, fmt.Errorf("search index: %w", err) }
	if _, err := pin.ExecContext(ctx, `CREATE VIRTUAL TABLE docs USING fts5(name, title, description, tools, categories, tokenize='porter unicode61')`); err != nil {
		return fail(err)
	}
	tx, err := pin.BeginTx(ctx, nil)
	if err != nil {
		return fail(err)
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO docs(rowid, name, title, description, tools, categories) VALUES (?, ?, ?, ?, ?, ?)`)
	if err != nil {
		_ = tx.Rollback()
		return fail(err)
	}
	sorted := append([]Doc(nil), docs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, d := range sorted {
		if _, dup := s.byName[d.Name]; dup || d.Name == "" {
			continue
		}
		s.docs = append(s.docs, d)
		m := docMeta{score: float64(d.Score), mult: toolfinder.RankMultiplier(d.displayFlagged(), d.LastOutcome)}
		m.labels[0] = int32(len(s.labelSeq))
		for _, l := range NamespaceLabels(d.Name) {
			id, ok := s.labelIDs[l]
			if !ok {
				id = int32(len(s.labelIDs))
				s.labelIDs[l] = id
			}
			s.labelSeq = append(s.labelSeq, id)
		}
		m.labels[1] = int32(len(s.labelSeq))
		s.meta = append(s.meta, m)
		id := len(s.docs)
		s.byName[d.Name] = id - 1
		if _, err := stmt.ExecContext(ctx, id, d.Name, d.Title, d.Description, strings.Join(d.Tools, "\n"), strings.Join(d.Categories, " ")); err != nil {
			_ = tx.Rollback()
			return fail(err)
		}
	}
	_ = stmt.Close()
	if err := tx.Commit(); err != nil {
		return fail(err)
	}
	for _, t := range frequentWords(s.docs, PrewarmTerms) {
		if _, err := s.postings(ctx, t); err != nil {
			return fail(err)
		}
	}
	return s, nil
}

// PrewarmTerms is how many of the most frequent words Build reads the
// postings of, so that the first query naming one does not pay for it: a
// word in thousands of servers costs tens of milliseconds to read from FTS5
// (bm25 of every row holding it), a rare one almost nothing.
const PrewarmTerms = 512

// frequentWords returns up to n words (as ParseQuery splits them) held by
// the most documents, at least 50 each; ties by word.
func frequentWords(docs []Doc, n int) []string {
	df := map[string]int{}
	seen := map[string]bool{}
	split := func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }
	for _, d := range docs {
		clear(seen)
		for _, f := range []string{d.Name, d.Title, d.Description, strings.Join(d.Tools, " "), strings.Join(d.Categories, " ")} {
			for _, w := range strings.FieldsFunc(strings.ToLower(f), split) {
				if len(w) <= MaxTermBytes && !seen[w] {
					seen[w] = true
					df[w]++
				}
			}
		}
	}
	var words []string
	for w, c := range df {
		if c >= 50 {
			words = append(words, w)
		}
	}
	sort.Slice(words, func(i, j int) bool {
		if df[words[i]] != df[words[j]] {
			return df[words[i]] > df[words[j]]
		}
		return words[i] < words[j]
	})
	return words[:min(n, len(words))]
}

// Close releases the snapshot's database.
func (s *Snapshot) Close() error {
	if s.pin != nil {
		_ = s.pin.Close()
	}
	return s.db.Close()
}

// Len is the number of indexed servers.
func (s *Snapshot) Len() int { return len(s.docs) }

// Docs returns the indexed servers, by name (do not modify).
func (s *Snapshot) Docs() []Doc { return s.docs }

// ParseQuery splits q into lower-case alphanumeric terms (deduplicated, in
// order) and enforces the bounds.
func ParseQuery(q string) ([]string, error) {
	if len(q) > MaxQueryBytes {
		return nil, fmt.Errorf("%w: longer than %d bytes", ErrBadQuery, MaxQueryBytes)
	}
	fields := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var terms []string
	seen := map[string]bool{}
	for _, f := range fields {
		if len(f) > MaxTermBytes {
			return nil, fmt.Errorf("%w: a term is longer than %d bytes", ErrBadQuery, MaxTermBytes)
		}
		if !seen[f] {
			seen[f] = true
			terms = append(terms, f)
		}
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("%w: no search terms", ErrBadQuery)
	}
	if len(terms) > MaxTerms {
		return nil, fmt.Errorf("%w: more than %d terms", ErrBadQuery, MaxTerms)
	}
	return terms, nil
}

// matchExpr ORs quoted terms (terms are alphanumeric, so quoting is safe).
func matchExpr(terms []string, columns string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = `"` + t + `"`
	}
	e := strings.Join(parts, " OR ")
	if columns != "" {
		return columns + " : (" + e + ")"
	}
	return e
}

// NamespaceLabels are the labels of name's namespace that a query term can
// match: lower-case, generic labels removed; none for a namespace that is not
// a reverse-DNS name of at least two labels.
func NamespaceLabels(name string) []string {
	labels := strings.Split(strings.ToLower(schema.Namespace(name)), ".")
	if len(labels) < 2 {
		return nil
	}
	var out []string
	for _, l := range labels {
		if l != "" && !genericLabels[l] {
			out = append(out, l)
		}
	}
	return out
}

// searchSQL is Search as first written: the OR query ranked by FTS5, then
// one name/title query per term. Search must return exactly what it
// returns (a test compares them); it is kept as that reference.
func (s *Snapshot) searchSQL(ctx context.Context, q string, limit int, sponsors []string) (Response, error) {
	terms, err := ParseQuery(q)
	if err != nil {
		return Response{}, err
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		limit = MaxLimit
	}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid, bm25(docs, 6.0, 6.0, 2.0, 1.0, 2.0) AS b FROM docs WHERE docs MATCH ? ORDER BY b, rowid LIMIT ?`,
		matchExpr(terms, ""), MaxCandidates)
	if err != nil {
		return Response{}, fmt.Errorf("search: %w", err)
	}
	type cand struct {
		id   int
		bm25 float64
	}
	var cands []cand
	for rows.Next() {
		var c cand
		if err := rows.Scan(&c.id, &c.bm25); err != nil {
			rows.Close()
			return Response{}, fmt.Errorf("search: %w", err)
		}
		cands = append(cands, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Response{}, fmt.Errorf("search: %w", err)
	}
	resp := Response{PublicationID: s.PublicationID, Terms: terms, Total: len(cands), Results: []Result{}, Sponsored: []Result{}}
	if len(cands) == 0 {
		return resp, nil
	}
	// coverage: per term, the rows that hold it in name or title.
	inNameTitle := make(map[int]int, len(cands))
	for _, t := range terms {
		r, err := s.db.QueryContext(ctx, `SELECT rowid FROM docs WHERE docs MATCH ?`, matchExpr([]string{t}, "{name title}"))
		if err != nil {
			return Response{}, fmt.Errorf("search: %w", err)
		}
		for r.Next() {
			var id int
			if err := r.Scan(&id); err != nil {
				r.Close()
				return Response{}, fmt.Errorf("search: %w", err)
			}
			inNameTitle[id]++
		}
		r.Close()
		if err := r.Err(); err != nil {
			return Response{}, fmt.Errorf("search: %w", err)
		}
	}
	termSet := map[string]bool{}
	for _, t := range terms {
		termSet[t] = true
	}
	best := -cands[0].bm25
	all := make([]Result, 0, len(cands))
	for _, c := range cands {
		d := s.docs[c.id-1]
		r := Result{Doc: d}
		if best > 0 {
			r.Relevance = math.Min(1, math.Max(0, -c.bm25/best))
		}
		r.Coverage = float64(inNameTitle[c.id]) / float64(len(terms))
		for _, l := range NamespaceLabels(d.Name) {
			if termSet[l] {
				r.NSMatch = 1
				break
			}
		}
		r.Multiplier = toolfinder.RankMultiplier(d.displayFlagged(), d.LastOutcome)
		r.Rank = (WRelevance*r.Relevance + WCoverage*r.Coverage + WNamespace*r.NSMatch + WScore*float64(d.Score)/100) * r.Multiplier
		all = append(all, r)
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Rank != all[j].Rank {
			return all[i].Rank > all[j].Rank
		}
		return all[i].Name < all[j].Name
	})
	if len(all) > limit {
		resp.Results = all[:limit]
	} else {
		resp.Results = all
	}
	if len(sponsors) > 0 {
		ranked := make([]toolfinder.Ranked, len(all))
		byName := make(map[string]Result, len(all))
		for i, r := range all {
			ranked[i] = r.ranked()
			byName[r.Name] = r
		}
		for _, sp := range toolfinder.Sponsored(ranked, sponsors) {
			resp.Sponsored = append(resp.Sponsored, byName[sp.Name])
		}
	}
	return resp, nil
}

// Leaderboard applies toolfinder.Leaderboard (unflagged and unheld only,
// ≤ 2 per namespace, score descending, ties by name) to the indexed servers.
func (s *Snapshot) Leaderboard(category string, limit int) []Doc {
	ranked := make([]toolfinder.Ranked, len(s.docs))
	for i := range s.docs {
		ranked[i] = s.docs[i].ranked()
	}
	out := []Doc{}
	for _, r := range toolfinder.Leaderboard(ranked, category, limit) {
		out = append(out, s.docs[s.byName[r.Name]])
	}
	return out
}

// Index holds the current snapshot; Swap replaces it without blocking
// readers. The zero value is ready to use (and answers ErrNotReady).
type Index struct {
	cur atomic.Pointer[Snapshot]
	mu  sync.Mutex // serializes Swap
	// Grace is how long a replaced snapshot stays open for queries that
	// already hold it (default 30 s).
	Grace time.Duration
}

// Current returns the snapshot in use, or nil before the first Swap.
func (x *Index) Current() *Snapshot { return x.cur.Load() }

// Swap installs s and closes the previous snapshot after the grace period.
func (x *Index) Swap(s *Snapshot) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.cur.Swap(s)
	if old != nil && old != s {
		g := x.Grace
		if g <= 0 {
			g = 30 * time.Second
		}
		time.AfterFunc(g, func() { _ = old.Close() })
	}
}

// Search queries the current snapshot.
func (x *Index) Search(ctx context.Context, q string, limit int, sponsors []string) (Response, error) {
	s := x.Current()
	if s == nil {
		return Response{}, ErrNotReady
	}
	return s.Search(ctx, q, limit, sponsors)
}

// Search ranks the matches of q; sponsors are the campaign's server names in
// its order (toolfinder.Sponsored picks at most one, score ≥ 50, not held).
//
// It answers what one FTS5 query "t1 OR t2 …" ranked by bm25 would, without
// running it per request: FTS5's bm25 of an OR of phrases is, bit for bit,
// 0 + c1 + c2 + … over the phrases in query order, where ci is the bm25 of
// the single-phrase query for the row (0 when the row lacks it; IDF and
// average length do not depend on the other phrases). So each term's
// postings (rowid, ci) and its name/title rows are read from FTS5 once per
// snapshot and cached (termCache); a query sums, keeps the MaxCandidates
// best (bm25, then rowid, as ORDER BY b, rowid LIMIT did), and ranks those.
func (s *Snapshot) Search(ctx context.Context, q string, limit int, sponsors []string) (Response, error) {
	terms, err := ParseQuery(q)
	if err != nil {
		return Response{}, err
	}
	if limit <= 0 {
		limit = DefaultLimit
	}
	if limit > MaxLimit {
		limit = MaxLimit
	}
	posts := make([]*termPostings, len(terms))
	for i, t := range terms {
		if posts[i], err = s.postings(ctx, t); err != nil {
			return Response{}, err
		}
	}
	sc := scratchPool.Get().(*scratch)
	defer scratchPool.Put(sc)
	var cands []scored // the candidates and their −bm25
	var best float64   // the best −bm25: relevance is relative to it
	if len(posts) == 1 {
		// One term: its best rows, kept when its postings were read.
		cands, best = posts[0].top, posts[0].topBest
	} else {
		sc.reset(len(s.docs) + 1)
		for _, p := range posts { // query order: the sum's order is FTS5's
			for j, id := range p.ids {
				if !sc.seen[id] {
					sc.seen[id] = true
					sc.touched = append(sc.touched, id)
				}
				sc.acc[id] += p.score[j]
			}
		}
		cands, best = sc.best(MaxCandidates)
	}
	resp := Response{PublicationID: s.PublicationID, Terms: terms, Total: len(cands), Results: []Result{}, Sponsored: []Result{}}
	if len(cands) == 0 {
		return resp, nil
	}
	result := func(r rankedRow) Result {
		return Result{Doc: s.docs[r.id-1], Relevance: r.rel, Coverage: r.cov, NSMatch: r.ns, Multiplier: r.mult, Rank: r.rank}
	}
	// A one-term query's ranking depends on the term and the snapshot
	// only: its first MaxLimit rows are kept with the postings.
	if len(posts) == 1 && len(sponsors) == 0 {
		if top := posts[0].ranked.Load(); top != nil {
			resp.Results = make([]Result, min(limit, len(*top)))
			for i := range resp.Results {
				resp.Results[i] = result((*top)[i])
			}
			return resp, nil
		}
	}
	// The query's terms as namespace-label ids (-1: names no label).
	var termLabels [MaxTerms]int32
	nl := 0 // the terms that name a label: most queries name none
	for _, t := range terms {
		if id, ok := s.labelIDs[t]; ok {
			termLabels[nl] = id
			nl++
		}
	}
	ranked := sc.ranked[:0]
	for _, c := range cands {
		id := c.id
		m := &s.meta[id-1]
		r := rankedRow{id: id}
		if best > 0 {
			r.rel = math.Min(1, math.Max(0, c.s/best))
		}
		n := 0
		for _, p := range posts {
			if p.inNameTitle(id) {
				n++
			}
		}
		r.cov = float64(n) / float64(len(terms))
		if nl > 0 {
		labels:
			for _, l := range s.labelSeq[m.labels[0]:m.labels[1]] {
				for _, t := range termLabels[:nl] {
					if t == l {
						r.ns = 1
						break labels
					}
				}
			}
		}
		r.mult = m.mult
		r.rank = (WRelevance*r.rel + WCoverage*r.cov + WNamespace*r.ns + WScore*m.score/100) * r.mult
		ranked = append(ranked, r)
	}
	sc.ranked = ranked
	if len(sponsors) > 0 {
		// toolfinder.Sponsored looks matches up by name: their order does
		// not matter, so this runs before the partial sort below.
		rk := make([]toolfinder.Ranked, len(ranked))
		at := make(map[string]int, len(ranked))
		for i, r := range ranked {
			d := &s.docs[r.id-1]
			rk[i] = d.ranked()
			at[d.Name] = i
		}
		for _, sp := range toolfinder.Sponsored(rk, sponsors) {
			resp.Sponsored = append(resp.Sponsored, result(ranked[at[sp.Name]]))
		}
	}
	// Names are unique, so (rank desc, name asc) is a total order: the
	// first limit rows under it are the reference's stable sort's.
	before := func(a, b rankedRow) bool {
		if a.rank != b.rank {
			return a.rank > b.rank
		}
		return s.docs[a.id-1].Name < s.docs[b.id-1].Name
	}
	n := min(limit, len(ranked))
	if len(posts) == 1 {
		n = min(MaxLimit, len(ranked)) // kept for the term's next queries
	}
	top := ranked
	if len(top) > n {
		selectK(top, n, before)
		top = top[:n]
	}
	sort.Slice(top, func(i, j int) bool { return before(top[i], top[j]) })
	if len(posts) == 1 {
		keep := append([]rankedRow(nil), top...)
		posts[0].ranked.Store(&keep)
		top = top[:min(limit, len(top))]
	}
	resp.Results = make([]Result, len(top))
	for i := range top {
		resp.Results[i] = result(top[i])
	}
	return resp, nil
}

type rankedRow struct {
	id                       int32
	rel, cov, ns, mult, rank float64
}

// scratch is one query's working memory, pooled: dense per-rowid sums.
type scratch struct {
	acc     []float64
	seen    []bool
	touched []int32
	pairs   []scored
	ranked  []rankedRow
}

var scratchPool = sync.Pool{New: func() any { return &scratch{} }}

// reset clears what the previous query touched and sizes for n rowids.
func (sc *scratch) reset(n int) {
	if len(sc.acc) < n || len(sc.seen) < n {
		sc.acc, sc.seen = make([]float64, n), make([]bool, n)
	} else {
		for _, id := range sc.touched {
			sc.acc[id], sc.seen[id] = 0, false
		}
	}
	sc.touched = sc.touched[:0]
}

// best returns the k touched rowids of highest sum (ties: lower rowid), in
// no particular order (the final rank orders them), and the highest sum.
func (sc *scratch) best(k int) ([]scored, float64) {
	ps := sc.pairs[:0]
	for _, id := range sc.touched {
		ps = append(ps, scored{sc.acc[id], id})
	}
	sc.pairs = ps
	if len(ps) > k {
		selectScored(ps, k)
		ps = ps[:k]
	}
	var top float64
	for _, p := range ps {
		top = max(top, p.s)
	}
	return ps, top
}

// scored is a row and its sum, contiguous for the selection.
type scored struct {
	s  float64
	id int32
}

// before: a higher sum first, then the lower rowid (ORDER BY bm25, rowid).
func (a scored) before(b scored) bool {
	if a.s != b.s {
		return a.s > b.s
	}
	return a.id < b.id
}

// selectScored is selectK(c, k, scored.before) with the comparison
// inlined: it runs over every row a multi-term query touches.
func selectScored(c []scored, k int) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if c[mid].before(c[lo]) {
			c[mid], c[lo] = c[lo], c[mid]
		}
		if c[hi].before(c[lo]) {
			c[hi], c[lo] = c[lo], c[hi]
		}
		if c[hi].before(c[mid]) {
			c[hi], c[mid] = c[mid], c[hi]
		}
		ps, pid := c[mid].s, c[mid].id
		i, j := lo, hi
		for i <= j {
			for c[i].s > ps || (c[i].s == ps && c[i].id < pid) {
				i++
			}
			for ps > c[j].s || (ps == c[j].s && pid < c[j].id) {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// selectK moves the k elements that come first under less to c[:k]
// (quickselect, median of three).
func selectK[T any](c []T, k int, less func(a, b T) bool) {
	lo, hi := 0, len(c)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if less(c[mid], c[lo]) {
			c[mid], c[lo] = c[lo], c[mid]
		}
		if less(c[hi], c[lo]) {
			c[hi], c[lo] = c[lo], c[hi]
		}
		if less(c[hi], c[mid]) {
			c[hi], c[mid] = c[mid], c[hi]
		}
		pivot := c[mid]
		i, j := lo, hi
		for i <= j {
			for less(c[i], pivot) {
				i++
			}
			for less(pivot, c[j]) {
				j--
			}
			if i <= j {
				c[i], c[j] = c[j], c[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// termPostings is what FTS5 says of one query term in one snapshot.
type termPostings struct {
	ids     []int32   // rows holding the term, by rowid
	score   []float64 // per row: −bm25 of the single-term query (its share of an OR query's)
	nt      []uint64  // bitset by rowid: the term is in name or title
	top     []scored  // the MaxCandidates best rows of the term alone
	topBest float64   // the best score
	// ranked is the one-term query's final order, its first MaxLimit
	// rows, once a query computed it.
	ranked atomic.Pointer[[]rankedRow]
}

// scoreOf returns a dense by-rowid copy of the scores in buf (zero where
// the term is absent), to select the term's own best rows.
func (p *termPostings) scoreOf(buf []float64, n int) []float64 {
	if cap(buf) < n {
		buf = make([]float64, n)
	}
	buf = buf[:n]
	clear(buf)
	for j, id := range p.ids {
		buf[id] = p.score[j]
	}
	return buf
}

func (p *termPostings) inNameTitle(id int32) bool {
	w := int(id) >> 6
	return w < len(p.nt) && p.nt[w]&(1<<(uint(id)&63)) != 0
}

// termCache bounds the cached postings by their total rows: past
// maxCachedPostings it starts over (a snapshot's queries are the same
// vocabulary again and again, so a simple reset is enough).
type termCache struct {
	mu   sync.RWMutex
	m    map[string]*termPostings
	rows int
}

const maxCachedPostings = 8 << 20 // ~100 MB of (rowid, score) pairs

func (s *Snapshot) postings(ctx context.Context, term string) (*termPostings, error) {
	s.terms.mu.RLock()
	p := s.terms.m[term]
	s.terms.mu.RUnlock()
	if p != nil {
		return p, nil
	}
	p = &termPostings{nt: make([]uint64, (len(s.docs)+1+63)/64)}
	rows, err := s.db.QueryContext(ctx, `SELECT rowid, bm25(docs, 6.0, 6.0, 2.0, 1.0, 2.0) FROM docs WHERE docs MATCH ? ORDER BY rowid`, matchExpr([]string{term}, ""))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	for rows.Next() {
		var id int32
		var b float64
		if err := rows.Scan(&id, &b); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		p.ids, p.score = append(p.ids, id), append(p.score, -b)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	rows, err = s.db.QueryContext(ctx, `SELECT rowid FROM docs WHERE docs MATCH ?`, matchExpr([]string{term}, "{name title}"))
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	for rows.Next() {
		var id int32
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("search: %w", err)
		}
		if w := int(id) >> 6; w < len(p.nt) {
			p.nt[w] |= 1 << (uint(id) & 63)
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	sc := &scratch{acc: p.scoreOf(nil, len(s.docs)+1), touched: append([]int32(nil), p.ids...)}
	top, best := sc.best(MaxCandidates)
	p.top, p.topBest = append([]scored(nil), top...), best
	s.terms.mu.Lock()
	defer s.terms.mu.Unlock()
	if q := s.terms.m[term]; q != nil { // a concurrent query read it first
		return q, nil
	}
	if s.terms.m == nil || s.terms.rows+len(p.ids) > maxCachedPostings {
		s.terms.m, s.terms.rows = map[string]*termPostings{}, 0
	}
	s.terms.m[term] = p
	s.terms.rows += len(p.ids) + 1
	return p, nil
}
