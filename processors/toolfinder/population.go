package toolfinder

import (
	"net/url"
	"sort"
	"strings"

	"github.com/forum-mcp/forum/schema"
)

// Context is what the registry-wide Population knows about one server.
type Context struct {
	NamespaceSize       int
	ClonedDescription   bool
	ClonedCount         int
	SharedEndpoint      bool
	SharedEndpointCount int
	Siblings            Siblings
}

// Siblings describes the servers sharing this server's normalized repo URL.
type Siblings struct {
	RepoKey      string
	N            int  // servers on the repo, this one included (0 when no repo)
	Canonical    bool // this server is the canonical sibling
	HasCanonical bool // some sibling is canonical
}

// PopEntry is one latest registry entry as the Population sees it.
type PopEntry struct {
	Name        string
	Description string
	RepoURL     string
	RemoteURLs  []string
}

// Population holds the registry-wide facts the penalties and the sibling rule
// need. Build it from the latest entry of every listed server (deleted ones
// excluded) once per scoring run; it is read-only afterwards.
type Population struct {
	nsSize    map[string]int
	descCount map[string]int // namespace + "\x00" + normalized description
	urlCount  map[string]int // normalized remote URL
	repo      map[string][]string
	canonical map[string]string // repo key → canonical name
	entries   map[string]PopEntry
	keys      map[string]*popKeys // name → its normalized keys, computed once
}

// popKeys are one entry's normalized description, remote URLs and repo URL
// (Context needs them again for every server; normalizing parses URLs).
type popKeys struct {
	desc string
	urls []string
	repo string
}

// Thresholds of the registry-wide flags (SPEC §3).
const (
	ClonedMin         = 5 // same normalized description on >= 5 servers of a namespace
	SharedEndpointMin = 3 // >= 3 latest entries on one normalized remote URL
	BulkPublisherOver = 100
	SiblingCap        = 3.0
)

// NewPopulationFromEntries builds a Population from registry entries, keeping
// only latest, non-deleted ones.
func NewPopulationFromEntries(entries []schema.Entry) *Population {
	var pe []PopEntry
	for i := range entries {
		e := &entries[i]
		if !e.Meta.IsLatest || e.Status() == "deleted" {
			continue
		}
		p := PopEntry{Name: e.Server.Name, Description: e.Server.Description}
		if e.Server.Repository != nil {
			p.RepoURL = e.Server.Repository.URL
		}
		for _, r := range e.Server.Remotes {
			p.RemoteURLs = append(p.RemoteURLs, r.URL)
		}
		pe = append(pe, p)
	}
	return NewPopulation(pe)
}

// NewPopulation builds a Population. A name listed twice counts once (the
// last entry wins).
func NewPopulation(entries []PopEntry) *Population {
	p := &Population{
		nsSize: map[string]int{}, descCount: map[string]int{}, urlCount: map[string]int{},
		repo: map[string][]string{}, canonical: map[string]string{}, entries: map[string]PopEntry{},
		keys: map[string]*popKeys{},
	}
	for _, e := range entries {
		p.entries[e.Name] = e
	}
	names := make([]string, 0, len(p.entries))
	for n := range p.entries {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		e := p.entries[n]
		ns := schema.Namespace(n)
		p.nsSize[ns]++
		pk := &popKeys{desc: NormalizeDescription(e.Description), repo: schema.NormalizeRepoURL(e.RepoURL)}
		p.keys[n] = pk
		if d := pk.desc; d != "" {
			p.descCount[ns+"\x00"+d]++
		}
		var seen map[string]bool
		for _, u := range e.RemoteURLs {
			k := NormalizeRemoteURL(u)
			pk.urls = append(pk.urls, k)
			if k != "" && !seen[k] {
				if seen == nil {
					seen = map[string]bool{}
				}
				seen[k] = true
				p.urlCount[k]++
			}
		}
		if k := pk.repo; k != "" {
			p.repo[k] = append(p.repo[k], n)
			if _, ok := p.canonical[k]; !ok {
				_, repoName := schema.RepoOwnerName(e.RepoURL)
				if repoName != "" && strings.EqualFold(lastSegment(n), repoName) {
					p.canonical[k] = n // names are visited in order: the first match wins
				}
			}
		}
	}
	return p
}

func lastSegment(name string) string {
	if i := strings.LastIndex(name, "/"); i >= 0 {
		return name[i+1:]
	}
	return name
}

// Context returns the registry-wide facts for one server. A name that is not
// in the population gets only its namespace size.
func (p *Population) Context(name string) Context {
	pk := p.keys[name]
	if pk == nil { // not in the population: no description, remotes or repo
		pk = &popKeys{}
	}
	ns := schema.Namespace(name)
	c := Context{NamespaceSize: p.nsSize[ns]}
	if d := pk.desc; d != "" {
		c.ClonedCount = p.descCount[ns+"\x00"+d]
		c.ClonedDescription = c.ClonedCount >= ClonedMin
	}
	for _, u := range pk.urls {
		if n := p.urlCount[u]; n > c.SharedEndpointCount {
			c.SharedEndpointCount = n
		}
	}
	c.SharedEndpoint = c.SharedEndpointCount >= SharedEndpointMin
	if k := pk.repo; k != "" {
		canon := p.canonical[k]
		c.Siblings = Siblings{RepoKey: k, N: len(p.repo[k]), Canonical: canon == name, HasCanonical: canon != ""}
	}
	return c
}

// NormalizeRemoteURL is the key for shared_endpoint: scheme and host
// lower-cased, default port, fragment and trailing "/" dropped; path and
// query kept as they are (they are case-sensitive on most servers).
func NormalizeRemoteURL(raw string) string {
	s := strings.TrimSpace(raw)
	if s == "" {
		return ""
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return strings.TrimRight(strings.ToLower(s), "/")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (u.Scheme == "https" && port == "443") || (u.Scheme == "http" && port == "80") {
		port = ""
	}
	if port != "" {
		host += ":" + port
	}
	u.Host = host
	u.User = nil
	u.Fragment = ""
	u.RawFragment = ""
	out := u.Scheme + "://" + u.Host + strings.TrimRight(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		out += "?" + u.RawQuery
	}
	return out
}

// Ranked is a scored server as the display rules see it.
type Ranked struct {
	Name       string
	Score      int
	Flags      []string
	Categories []string // stored categories, primary first
	// Held is SPEC §3's safety hold, decided by the caller from the
	// server's FORUM record (band D/F or an open strong-negative signal):
	// the Toolfinder score has no scan term, so this is how the display
	// rules learn of a hidden instruction. Display only, like the rules.
	Held bool
}

// DisplayFlagged reports whether the display rules treat the server as
// flagged: a Toolfinder flag or a safety hold. It is one state, so a
// server that is both is not penalised twice.
func (r Ranked) DisplayFlagged() bool { return len(r.Flags) > 0 || r.Held }

// RankedFrom pairs a Result with its categories.
func RankedFrom(r Result, categories []string) Ranked {
	return Ranked{Name: r.Name, Score: r.Score, Flags: r.Flags, Categories: categories}
}

// Leaderboard lists unflagged servers by score descending, ties by name, at
// most 2 per namespace, optionally only those whose stored categories include
// category ("" = all), at most limit (<= 0 = no limit). Held servers (safety
// hold) count as flagged and are left out too. The input is not modified.
// Display rule only: it never changes a score.
func Leaderboard(rows []Ranked, category string, limit int) []Ranked {
	c := make([]Ranked, 0, len(rows))
	for _, r := range rows {
		if r.DisplayFlagged() {
			continue
		}
		if category != "" && !containsFold(r.Categories, category) {
			continue
		}
		c = append(c, r)
	}
	sort.SliceStable(c, func(i, j int) bool {
		if c[i].Score != c[j].Score {
			return c[i].Score > c[j].Score
		}
		return c[i].Name < c[j].Name
	})
	perNS := map[string]int{}
	out := []Ranked{}
	for _, r := range c {
		ns := schema.Namespace(r.Name)
		if perNS[ns] >= 2 {
			continue
		}
		perNS[ns]++
		out = append(out, r)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// SponsoredMinScore is the lowest score a sponsored server may have.
const SponsoredMinScore = 50

// Sponsored picks the sponsored slot for one query: the first candidate (in
// the campaign's order) that is among the query's matches, scores >= 50 and
// is not under a safety hold (paying must not put a held server back in
// front of users); at most one. It returns a separate list and never
// reorders or filters the organic results, which it does not receive.
func Sponsored(matches []Ranked, candidates []string) []Ranked {
	byName := make(map[string]Ranked, len(matches))
	for _, m := range matches {
		byName[m.Name] = m
	}
	for _, n := range candidates {
		if m, ok := byName[n]; ok && m.Score >= SponsoredMinScore && !m.Held {
			return []Ranked{m}
		}
	}
	return []Ranked{}
}

// RankMultiplier is the search display factor of a result (SPEC §6): flagged
// × 0.5; last check unreachable or handshake_failed × 0.85. flagged is the
// display state (Ranked.DisplayFlagged: a Toolfinder flag or a safety hold),
// so the 0.5 applies once however many reasons there are.
func RankMultiplier(flagged bool, lastOutcome string) float64 {
	m := 1.0
	if flagged {
		m *= 0.5
	}
	if lastOutcome == OutcomeUnreachable || lastOutcome == OutcomeHandshakeFailed {
		m *= 0.85
	}
	return m
}
