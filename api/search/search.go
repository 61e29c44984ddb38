// Package search is the API's search index and leaderboard (SPEC §6, display
// rules of §3).
//
// In: Docs — one per server of a publication: the published record's
// Toolfinder score, flags, categories and the outcome of the check it was
// scored on, plus the registry text (name, title, description) and tool
// names/descriptions from the latest checks. Out: ranked search results, a
// separate sponsored list, and the leaderboard.
//
// The full-text index is SQLite FTS5 (modernc.org/sqlite, pure Go) held in
// memory: porter stemming over name, title, description, tools, categories;
// bm25 column weights 6, 6, 2, 1, 2; query terms OR-ed. A Snapshot is
// immutable once built; Index holds the current one behind an atomic
// pointer, so a new publication is indexed beside the old one and swapped in
// without blocking a query (the old one is closed after a grace period).
//
// Final rank (SPEC §6): 0.5·relevance + 0.15·coverage + 0.25·ns_match +
// 0.3·score/100, then × toolfinder.RankMultiplier (flagged × 0.5, last check
// unreachable or handshake_failed × 0.85). relevance = this row's −bm25 over
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
	s := &Snapshot{PublicationID: publicationID, BuiltAt: time.Now().UTC(), db: db, pin: pin, byName: map[string]int{}}
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
	return s, nil
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

// Search ranks the matches of q; sponsors are the campaign's server names in
// its order (toolfinder.Sponsored picks at most one, score ≥ 50).
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
		r.Multiplier = toolfinder.RankMultiplier(len(d.Flags) > 0, d.LastOutcome)
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
			ranked[i] = toolfinder.RankedFrom(toolfinder.Result{Name: r.Name, Score: r.Score, Flags: r.Flags}, r.Categories)
			byName[r.Name] = r
		}
		for _, sp := range toolfinder.Sponsored(ranked, sponsors) {
			resp.Sponsored = append(resp.Sponsored, byName[sp.Name])
		}
	}
	return resp, nil
}

// Leaderboard applies toolfinder.Leaderboard (unflagged only, ≤ 2 per
// namespace, score descending, ties by name) to the indexed servers.
func (s *Snapshot) Leaderboard(category string, limit int) []Doc {
	ranked := make([]toolfinder.Ranked, len(s.docs))
	for i, d := range s.docs {
		ranked[i] = toolfinder.RankedFrom(toolfinder.Result{Name: d.Name, Score: d.Score, Flags: d.Flags}, d.Categories)
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
